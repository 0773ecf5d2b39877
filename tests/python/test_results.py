"""What a command's result says when it did not end by itself (issue 36):
the sandbox's deadline, stop, the OOM killer under a shell — and that hako's
own diagnostics stay out of the command's stderr, which an agent shows its
model as the command's output."""

from __future__ import annotations

import os
import threading
import time
from typing import Any, Dict

import pytest

from hako import Sandbox


def test_command_killed_by_the_sandbox_deadline(kw: Dict[str, Any]) -> None:
    with Sandbox.create(timeout=1.5, **kw) as sb:
        r = sb.commands.run("sleep 60", timeout=None, check=False)
        assert r.reason == "sandbox_timeout", r
        assert r.exit_code == 137 and not r.timed_out
        assert r.stderr == "", r.stderr
        assert r.warning is None
        assert r.oom_kills in (0, None)


def test_command_ended_by_stop(kw: Dict[str, Any]) -> None:
    with Sandbox.create(**kw) as sb:
        threading.Timer(1.0, lambda: sb.stop(timeout=1)).start()
        r = sb.commands.run("sleep 60", timeout=None, check=False)
        assert r.reason == "stopped", r
        assert r.stderr == "", r.stderr
        time.sleep(0.5)  # stop returns after the command's end: let it finish


def _memory_controller() -> bool:
    """A v1 memory hierarchy, or memory among cgroup2's controllers."""
    if os.path.isdir("/sys/fs/cgroup/memory"):
        return True
    try:
        with open("/sys/fs/cgroup/cgroup.controllers") as f:
            return "memory" in f.read().split()
    except OSError:
        return False


def test_oom_under_a_shell(kw: Dict[str, Any]) -> None:
    if not _memory_controller():
        pytest.skip("no memory cgroup controller on this host: nothing counts OOM kills")
    with Sandbox.create(memory=32 << 20, **kw) as sb:
        # The shell's child is the one killed; the shell reports 137.
        r = sb.commands.run("head -c 200m /dev/zero | tail > /dev/null; exit $?", check=False)
        assert r.exit_code == 137, r
        assert r.reason == "oom", r
        assert r.oom_kills is not None and r.oom_kills >= 1, r


def test_oom_of_a_child_that_is_not_the_last_command(kw: Dict[str, Any]) -> None:
    """Where the memory controller is v1 each command has an OOM count of
    its own: its tree lost a process, so oom, though the shell went on and
    exited 0.  On cgroup2 the count is the sandbox's: exited."""
    if not _memory_controller():
        pytest.skip("no memory cgroup controller on this host: nothing counts OOM kills")
    with Sandbox.create(memory=32 << 20, **kw) as sb:
        r = sb.commands.run("head -c 200m /dev/zero | tail > /dev/null; true", check=False)
        assert r.exit_code == 0, r
        assert r.oom_kills is not None and r.oom_kills >= 1, r
        assert r.reason == ("oom" if _memory_v1() else "exited"), r


def _memory_v1() -> bool:
    """The memory controller is a v1 hierarchy (here a hybrid host's)."""
    with open("/proc/self/mountinfo") as f:
        for line in f:
            fields = line.split(" - ")
            if len(fields) == 2 and fields[1].split()[0] == "cgroup" and "memory" in fields[1].split()[2].split(","):
                return True
    return False
