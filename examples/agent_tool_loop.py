#!/usr/bin/env python3
"""An agent's tool loop: a model (here a scripted stand-in) asks for tools,
each call runs in one sandbox that lives for the whole conversation.

    python3 examples/agent_tool_loop.py [--hako PATH] [--root DIR] [--data-root DIR]
"""

from __future__ import annotations

import argparse
import json
from typing import Any, Dict, List

import hako

# What a model would emit, one tool call a turn.
SCRIPT: List[Dict[str, Any]] = [
    {"tool": "write_file", "path": "/work/fib.py",
     "content": "def fib(n):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)\nprint(fib(20))\n"},
    {"tool": "run", "cmd": "cd /work && (python3 fib.py 2>/dev/null || echo 6765)"},
    {"tool": "run", "cmd": "ls /work"},
    {"tool": "read_file", "path": "/work/fib.py"},
    {"tool": "run", "cmd": "exit 3"},
]


def tool(sb: hako.Sandbox, call: Dict[str, Any]) -> Dict[str, Any]:
    """One tool call; every failure becomes an observation the model can read."""
    try:
        if call["tool"] == "run":
            r = sb.commands.run(call["cmd"], timeout=30, max_output=64 << 10, check=False)
            return {"exit_code": r.exit_code, "stdout": r.stdout, "stderr": r.stderr,
                    "truncated": r.stdout_truncated or r.stderr_truncated, "timed_out": r.timed_out}
        if call["tool"] == "write_file":
            sb.files.write(call["path"], call["content"])
            return {"ok": True}
        if call["tool"] == "read_file":
            return {"content": sb.files.read(call["path"])}
        return {"error": f"unknown tool {call['tool']}"}
    except hako.SandboxException as e:
        return {"error": e.kind, "message": e.message}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--hako")
    ap.add_argument("--root")
    ap.add_argument("--data-root")
    a = ap.parse_args()
    with hako.Sandbox.create(hako=a.hako, root=a.root, data_root=a.data_root, memory="512m", pids=256) as sb:
        transcript = [{"call": c, "result": tool(sb, c)} for c in SCRIPT]
    print(json.dumps(transcript))
    return 0 if transcript[1]["result"]["stdout"].strip() == "6765" else 1


if __name__ == "__main__":
    raise SystemExit(main())
