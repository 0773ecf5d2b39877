"""A default lifetime for SDK-made sandboxes, as e2b's (issue 37, item 6): 300 s
unless told, None for none, set_timeout moves it, and an orchestrator that
crashed leaves nothing running once it has passed.  Also e2b's Sandbox()
constructor with its keywords, and Sandbox.list's paginator face."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from datetime import datetime, timedelta, timezone
from typing import Any, Dict

import pytest

import hako
from hako import Sandbox

HERE = os.path.dirname(os.path.abspath(__file__))
PYTHON_DIR = os.path.abspath(os.path.join(HERE, "..", "..", "python"))


def _state(roots: Any, sid: str) -> Dict[str, Any]:
    r = roots.hako("state", sid)
    assert r.returncode == 0, r.stderr
    obj: Dict[str, Any] = json.loads(r.stdout)
    return obj


def _near(when: Any, seconds: float, slack: float = 30) -> bool:
    want = datetime.now(timezone.utc) + timedelta(seconds=seconds)
    return isinstance(when, datetime) and abs((when - want).total_seconds()) < slack


def test_the_default_lifetime_is_300_s_and_readable_in_state(kw: Dict[str, Any], roots: Any) -> None:
    assert hako.DEFAULT_LIFETIME == 300
    with Sandbox(**kw) as sb:  # no timeout argument
        info = sb.get_info()
        assert _near(info.end_at, 300)
        assert _near(info.started_at, 0)
        # hako state says it too, and the state dir's deadline file holds it.
        state = _state(roots, sb.sandbox_id)
        assert hako._types.parse_time(state["deadline"]) == info.end_at
        with open(os.path.join(roots.root, sb.sandbox_id, "deadline")) as f:
            ms = int(f.read())
        assert abs(ms / 1000 - info.end_at.timestamp()) < 0.002  # type: ignore[union-attr]
        # hako list shows it for every sandbox.
        listed = json.loads(roots.hako("list", "--format", "json").stdout)
        assert [o.get("deadline") for o in listed] == [state["deadline"]]


def test_timeout_none_gives_no_deadline(kw: Dict[str, Any], roots: Any) -> None:
    with Sandbox.create(timeout=None, **kw) as sb:
        assert sb.get_info().end_at is None
        assert "deadline" not in _state(roots, sb.sandbox_id)
        assert not os.path.exists(os.path.join(roots.root, sb.sandbox_id, "watchdog"))


def test_set_timeout_extends_and_shortens(kw: Dict[str, Any]) -> None:
    with Sandbox.create(timeout=2, **kw) as sb:
        first = sb.get_info().end_at
        assert _near(first, 2, slack=5)
        sb.set_timeout(600)
        assert _near(sb.get_info().end_at, 600)
        # It outlives the first deadline...
        assert first is not None
        while datetime.now(timezone.utc) < first + timedelta(seconds=1):
            time.sleep(0.1)
        assert sb.is_running()
        # ... and a shorter one ends it.
        sb.set_timeout(0.5)
        for _ in range(300):
            if sb.get_info().status == "stopped":
                break
            time.sleep(0.1)
        info = sb.get_info()
        assert info.status == "stopped" and info.raw.get("reason") == "timeout"
        assert info.end_at is None


ORCHESTRATOR = """
import sys
sys.path.insert(0, sys.argv[1])
import hako
kw = dict(hako=sys.argv[2], root=sys.argv[3], data_root=sys.argv[4])
sb = hako.Sandbox(sandbox_id="orphan", timeout=float(sys.argv[5]), **kw)
h = sb.commands.run("sleep 1000", background=True, timeout=None)
print(sb.get_info().pid, h.pid, flush=True)
sys.stdin.read()  # until it is killed
"""


def _gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except OSError:
        return True


def test_a_crashed_orchestrator_leaves_nothing_running_after_the_lifetime(kw: Dict[str, Any], roots: Any) -> None:
    # A Python program makes a sandbox (and a command in it) and is killed
    # with SIGKILL: nobody deletes the sandbox, its deadline ends it.
    p = subprocess.Popen([sys.executable, "-c", ORCHESTRATOR, PYTHON_DIR, kw["hako"], kw["root"], kw["data_root"],
                          "3"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert p.stdout is not None
        first, command = (int(x) for x in p.stdout.readline().split())
        assert not _gone(first) and not _gone(command)
    finally:
        p.send_signal(signal.SIGKILL)
        p.wait()
    deadline = time.monotonic() + 60
    while not (_gone(first) and _gone(command)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _gone(first) and _gone(command)
    state = _state(roots, "orphan")
    assert state["status"] == "stopped" and state["reason"] == "timeout"
    assert Sandbox.list(hako.SandboxQuery(state=["running", "paused", "created"]), **kw) == []
    # Its files stay (unlike e2b's, which deletes): a stopped sandbox to delete.
    assert [i.sandbox_id for i in Sandbox.list(hako.SandboxQuery(state=["stopped"]), **kw)] == ["orphan"]
    assert Sandbox.connect("orphan", **kw).kill()


def test_e2b_constructor_keywords_and_list_paginator(kw: Dict[str, Any], busybox: str) -> None:
    # e2b: Sandbox(template, timeout=..., metadata=..., envs=...); template=
    # is e2b's name for the image.
    with Sandbox(busybox, timeout=60, metadata={"job": "7"}, envs={"X": "from-envs"}, **kw) as a, \
            Sandbox(template=busybox, **kw) as b:
        assert a.commands.run("echo $X").stdout == "from-envs\n"
        assert a.get_info().metadata == {"job": "7"} and _near(a.get_info().end_at, 60)
        assert b.commands.run("cat /etc/os-release 2>/dev/null; busybox --help | head -1").exit_code == 0
        # e2b's paginator: next_items() then has_next False; and a plain list.
        page = Sandbox.list(hako.SandboxQuery(metadata={"job": "7"}), **kw)
        assert page.has_next
        assert [i.sandbox_id for i in page.next_items()] == [a.sandbox_id]
        assert not page.has_next
        assert [i.state for i in Sandbox.list(hako.SandboxQuery(state=["running"]), **kw)] == ["running"] * 2
        assert Sandbox.list({"state": "running", "metadata": {"job": "8"}}, **kw) == []
        # started_after (naive: local time, as e2b's)
        recent = Sandbox.list(hako.SandboxQuery(started_after=datetime.now() - timedelta(minutes=5)), **kw)
        assert sorted(i.sandbox_id for i in recent) == sorted([a.sandbox_id, b.sandbox_id])
        assert all(_near(i.started_at, 0, slack=300) for i in recent)
        assert Sandbox.list({"started_after": datetime.now(timezone.utc) + timedelta(minutes=5)}, **kw) == []
    with pytest.raises(hako.InvalidArgumentException):
        Sandbox(busybox, template=busybox, **kw)
