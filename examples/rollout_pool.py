#!/usr/bin/env python3
"""An RL rollout worker pool on AsyncSandbox: N workers, one event loop, each
episode in a fresh sandbox; the "policy" proposes shell actions and the
reward comes from the sandbox's state.

    python3 examples/rollout_pool.py [--episodes N] [--workers N] [--hako PATH] [--root DIR] [--data-root DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import time
from typing import Any, Dict, List

import hako


async def episode(i: int, opts: Dict[str, Any]) -> Dict[str, Any]:
    rng = random.Random(i)
    async with await hako.AsyncSandbox.create(memory="256m", pids=128, **opts) as sb:
        await sb.files.write("/work/target", str(rng.randint(0, 9)))
        reward = 0.0
        for step in range(4):
            guess = rng.randint(0, 9)  # the policy's action
            r = await sb.commands.run(f'[ "$(cat /work/target)" = {guess} ]', timeout=10, check=False)
            if r.exit_code == 0:
                reward = 1.0 / (step + 1)
                break
        return {"episode": i, "reward": reward, "steps": step + 1}


async def pool(episodes: int, workers: int, opts: Dict[str, Any]) -> List[Dict[str, Any]]:
    queue: "asyncio.Queue[int]" = asyncio.Queue()
    for i in range(episodes):
        queue.put_nowait(i)
    results: List[Dict[str, Any]] = []

    async def worker() -> None:
        while True:
            try:
                i = queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            results.append(await episode(i, opts))

    await asyncio.gather(*(worker() for _ in range(workers)))
    return sorted(results, key=lambda r: r["episode"])


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--episodes", type=int, default=16)
    ap.add_argument("--workers", type=int, default=8)
    ap.add_argument("--hako")
    ap.add_argument("--root")
    ap.add_argument("--data-root")
    a = ap.parse_args()
    opts = {k: v for k, v in {"hako": a.hako, "root": a.root, "data_root": a.data_root}.items() if v}
    t0 = time.monotonic()
    results = asyncio.run(pool(a.episodes, a.workers, opts))
    print(json.dumps({"episodes": len(results), "mean_reward": sum(r["reward"] for r in results) / len(results),
                      "seconds": round(time.monotonic() - t0, 2)}))
    return 0 if len(results) == a.episodes else 1


if __name__ == "__main__":
    raise SystemExit(main())
