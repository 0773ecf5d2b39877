"""What a command used, as its CommandResult says (issue 36, "a result that
says what the command used"): CPU time and peak memory of the command's own
processes, and why a command could not be executed, kept out of its stderr."""

from __future__ import annotations

from typing import Any, Dict

from hako import Sandbox

BURN = "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done"


def test_cpu_and_peak_memory_of_the_command(kw: Dict[str, Any]) -> None:
    with Sandbox.create(**kw) as sb:
        r = sb.commands.run(BURN)
        assert r.user_cpu is not None and r.system_cpu is not None, r
        # A busy loop is on a CPU for a good part of its wall time.
        assert r.user_cpu * 3 >= r.duration > 0, r
        r = sb.commands.run("dd if=/dev/zero of=/dev/null bs=50M count=1 2>/dev/null")
        assert r.peak_memory is not None and r.peak_memory >= 50 << 20, r
        r = sb.commands.run(["true"])
        assert r.peak_memory is not None and 0 < r.peak_memory < 16 << 20, r
        assert r.user_cpu is not None and r.user_cpu < 0.5, r


def test_not_found_says_its_kind_outside_stderr(kw: Dict[str, Any]) -> None:
    with Sandbox.create(**kw) as sb:
        r = sb.commands.run(["no-such-command"], check=False)
        assert r.exit_code == 127 and r.error_kind == "not_found", r
        assert r.error and "no-such-command" in r.error, r
        assert r.stderr == "", r.stderr
        r = sb.commands.run(["/etc/passwd"], check=False)
        assert r.exit_code == 126 and r.error_kind in ("permission", "not_executable"), r
        assert r.stderr == "", r.stderr
