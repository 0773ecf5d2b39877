"""The adapters (hako.session, hako.slime.HakoSandbox) and every example in examples/."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from typing import Any, Dict

import pytest

import hako
import hako.slime

EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples")


def test_session_adapter(kw: Dict[str, Any]) -> None:
    async def main() -> None:
        async with hako.session(**kw) as s:
            await s.put_bytes("/tmp/in", b"\x01\x02data")
            r = await s.run("wc -c < /tmp/in; exit 2")
            assert (r.exit_code, r.stdout.strip()) == (2, "6")
            assert await s.get_bytes("/tmp/in") == b"\x01\x02data"
        assert await hako.AsyncSandbox.list(**kw) == []

    asyncio.run(main())


def test_slime_adapter(kw: Dict[str, Any]) -> None:
    async def main() -> None:
        async with hako.slime.HakoSandbox(**kw) as sb:
            await sb.write_file("/tmp/prog.sh", "echo out; echo err >&2; exit 1")
            assert await sb.exec("sh /tmp/prog.sh") == (1, "out\n", "err\n")
            assert await sb.read_file("/tmp/prog.sh") == "echo out; echo err >&2; exit 1"
            code, out, err = await sb.exec("sleep 10", timeout=0.3)
            assert code == 124
        assert await hako.AsyncSandbox.list(**kw) == []

    asyncio.run(main())


def _example(name: str, kw: Dict[str, Any], *extra: str) -> Any:
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(hako.__file__)))
    r = subprocess.run([sys.executable, os.path.join(EXAMPLES, name), "--hako", kw["hako"], "--root", kw["root"],
                        "--data-root", kw["data_root"], *extra], capture_output=True, env=env, timeout=600)
    assert r.returncode == 0, (r.stdout.decode()[-2000:], r.stderr.decode()[-2000:])
    assert hako.Sandbox.list(**kw) == []
    return json.loads(r.stdout)


def test_example_agent_tool_loop(kw: Dict[str, Any]) -> None:
    t = _example("agent_tool_loop.py", kw)
    assert t[4]["result"]["exit_code"] == 3 and "fib.py" in t[2]["result"]["stdout"]


def test_example_grader(kw: Dict[str, Any]) -> None:
    res = {r["submission"]: r for r in _example("grader.py", kw)}
    assert res["sleeper"]["verdicts"] == ["timeout"] * 3
    assert res["correct"]["score"] == 3


def test_example_rollout_pool(kw: Dict[str, Any]) -> None:
    out = _example("rollout_pool.py", kw, "--episodes", "8", "--workers", "4")
    assert out["episodes"] == 8
