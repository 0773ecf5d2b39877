#!/usr/bin/env python3
"""A grader: each untrusted submission runs in a fresh sandbox with memory,
process and time limits, no network, and is scored against test cases.

    python3 examples/grader.py [--hako PATH] [--root DIR] [--data-root DIR]
"""

from __future__ import annotations

import argparse
import json
from typing import Dict, List, Tuple

import hako

CASES: List[Tuple[str, str]] = [("1 2\n", "3"), ("20 22\n", "42"), ("-5 5\n", "0")]

SUBMISSIONS: Dict[str, str] = {
    "correct": 'read a b; echo $((a + b))',
    "wrong": 'read a b; echo $((a * b))',
    "forkbomb": 'f() { f | f & }; f; sleep 30',
    "sleeper": 'sleep 600',
    "escapee": 'setsid sh -c "sleep 600" & read a b; echo $((a + b))',
}


def grade(name: str, source: str, opts: Dict[str, str]) -> Dict[str, object]:
    passed = 0
    verdicts = []
    with hako.Sandbox.create(network="none", memory="128m", pids=64, **opts) as sb:
        sb.files.write("/work/solution.sh", source, mode=0o755)
        for given, want in CASES:
            r = sb.commands.run(["sh", "/work/solution.sh"], stdin=given, timeout=2, max_output=4096,
                                check=False)
            if r.timed_out:
                verdicts.append("timeout")
            elif r.exit_code != 0:
                verdicts.append(f"exit {r.exit_code}")
            elif r.stdout.strip() == want:
                verdicts.append("ok")
                passed += 1
            else:
                verdicts.append("wrong")
    return {"submission": name, "score": passed, "of": len(CASES), "verdicts": verdicts}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--hako")
    ap.add_argument("--root")
    ap.add_argument("--data-root")
    a = ap.parse_args()
    opts = {k: v for k, v in {"hako": a.hako, "root": a.root, "data_root": a.data_root}.items() if v}
    results = [grade(n, s, opts) for n, s in SUBMISSIONS.items()]
    print(json.dumps(results))
    scores = {str(r["submission"]): r["score"] for r in results}
    ok = scores == {"correct": 3, "wrong": 0, "forkbomb": 0, "sleeper": 0, "escapee": 3}
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
