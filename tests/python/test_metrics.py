"""get_metrics(): e2b's usage samples over hako events --stats (issue 37,
item 7): CPU, memory, disk and pids of a sandbox that does some work."""

from __future__ import annotations

import json
import os
import time
from datetime import datetime, timedelta, timezone
from typing import Any, Dict

import pytest

import hako
from hako import Sandbox


WORK = """
import time
b = bytearray(64 << 20)
for i in range(0, len(b), 4096):
    b[i] = 1
while time.process_time() < 1.5:
    pass
open("/tmp/ready", "w").close()
time.sleep(120)
"""


@pytest.mark.skipif(not os.access("/usr/bin/python3", os.X_OK), reason="the host profile runs the host's /usr/bin/python3")
def test_metrics_follow_what_the_sandbox_does(kw: Dict[str, Any], roots: Any) -> None:
    with Sandbox(memory="256m", cpus=1, pids=100, **kw) as sb:
        first = sb.get_metrics()
        assert len(first) == 1
        m = first[0]
        assert abs((m.timestamp - datetime.now(timezone.utc)).total_seconds()) < 10
        assert m.cpu_count == 1.0
        assert m.mem_total == 256 << 20
        assert 0 < m.mem_used < m.mem_total
        assert m.pids is not None and m.pids >= 1 and m.pids_limit == 100
        # The host profile keeps /work on its disk limit's own filesystem.
        assert m.disk_total is not None and m.disk_used is not None and 0 < m.disk_used < m.disk_total
        # Work: 32 MiB written to /work; a process that holds 64 MiB and
        # uses 1.5 s of CPU, then waits.
        sb.commands.run("head -c 33554432 /dev/zero > /work/blob && sync")
        h = sb.commands.run(["/usr/bin/python3", "-c", WORK], background=True, timeout=120)
        deadline = time.monotonic() + 60
        while not sb.files.exists("/tmp/ready") and time.monotonic() < deadline:
            time.sleep(0.1)
        later = sb.get_metrics()
        assert len(later) == 2 and later[0] == m
        n = later[1]
        assert n.cpu_time - m.cpu_time >= 1.5
        # The percentage is that CPU time over the time between the samples.
        wall = (n.timestamp - m.timestamp).total_seconds()
        assert abs(n.cpu_used_pct - 100 * (n.cpu_time - m.cpu_time) / wall) < 1
        assert 0 < n.cpu_used_pct <= 105
        assert n.disk_used is not None and n.disk_used - m.disk_used >= 30 << 20
        assert n.pids is not None and n.pids > m.pids
        assert n.mem_used - m.mem_used >= 48 << 20
        assert n.mem_cache >= 0
        # start/end select the samples (e2b's), naive times being local.
        assert sb.get_metrics(start=n.timestamp + timedelta(microseconds=1))[0].timestamp > n.timestamp
        assert sb.get_metrics(end=m.timestamp) == [m]
        assert len(sb.get_metrics(start=datetime.now() - timedelta(hours=1))) == 5  # each call took one
        # What hako events --stats gave it: hako's additions to runc's shape.
        data = json.loads(roots.hako("events", "--stats", sb.sandbox_id).stdout)["data"]
        assert data["cpu"]["limit"] == 1.0 and data["memory"]["total"] == 256 << 20
        assert set(data["disk"]) == {"usage", "limit"}
        h.kill()


def test_metrics_without_a_disk_limit_and_of_a_stopped_sandbox(kw: Dict[str, Any]) -> None:
    with Sandbox(disk="none", cpus=0.5, **kw) as sb:
        m = sb.get_metrics()[-1]
        assert m.disk_used is None and m.disk_total is None  # no filesystem of its own to measure
        assert m.cpu_count == 0.5
        sb.stop()
        # Stopped: the samples it took while it ran, nothing new.
        assert sb.get_metrics() == [m]
    with pytest.raises(hako.NotFoundException):
        Sandbox.connect("no-such-sandbox", **kw).get_metrics()
