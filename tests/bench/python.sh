#!/bin/bash
# tests/bench/python.sh: the Python SDK (python/hako) beside the CLI it drives.
#
#   py-exec       sb.commands.run("true") on a running host-profile sandbox
#                 (median of RUNS calls in one process) vs `hako exec ID true`
#                 (hyperfine); the goal is within 2 ms of the CLI
#   py-lifecycle  Sandbox.create() + commands.run("true") + kill() vs the same
#                 three CLI calls (run -d, exec, delete --force) in one sh
#   py-pool       100 sandboxes x 10 commands from one AsyncSandbox loop
#                 (POOL_SANDBOXES, POOL_COMMANDS): total time, and
#   py-pool-rss   the peak RSS of that Python process (ru_maxrss)
#   py-acquire-p50, py-acquire-p99
#                 AsyncSandboxPool.acquire() at steady state: POOL_ACQUIRERS
#                 (32) tasks at once, a pool of POOL_SIZE (32), POOL_ACQUIRES
#                 (200) acquires in all, each followed by one command, a
#                 release (delete) and POOL_HOLD (2) s of think time
# Environment: HAKO, RUNS (default 100), LIFE_RUNS (default 10), WARMUP
# (default 3), POOL_TIMEOUT (default 240: seconds each Python part may take
# before it names its unfinished steps and hako calls, and fails), PYTHON3 (default: a python3 that imports hako's deps, i.e. any),
# BENCH_FORMAT=lines (stdout gets `BENCH ROW TOOL VALUE UNIT [NOTE]`).
# Needs root and hyperfine.
set -eu
trap 'echo "python.sh: line $LINENO: a command failed (exit $?)" >&2' ERR
here=$(cd "$(dirname "$0")" && pwd)
HAKO=${HAKO:-$here/../../hako}
RUNS=${RUNS:-100}
LIFE_RUNS=${LIFE_RUNS:-10}
WARMUP=${WARMUP:-3}
POOL_SANDBOXES=${POOL_SANDBOXES:-100}
POOL_COMMANDS=${POOL_COMMANDS:-10}
POOL_TIMEOUT=${POOL_TIMEOUT:-240}
POOL_SIZE=${POOL_SIZE:-32}
POOL_ACQUIRERS=${POOL_ACQUIRERS:-32}
POOL_ACQUIRES=${POOL_ACQUIRES:-200}
POOL_HOLD=${POOL_HOLD:-2}
PYTHON3=${PYTHON3:-python3}
if [ "${BENCH_FORMAT:-}" = lines ]; then exec 3>&1 1>&2; else exec 3> /dev/null; fi
emit () { printf 'BENCH %s\n' "$*" >&3; }
command -v hyperfine > /dev/null || { echo "python.sh: hyperfine not installed" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}"/hako-bench-py.XXXXXX)
chmod 711 "$work"
H="$HAKO --root $work/hako --data-root $work/data"
cleanup () {
  for id in $(ls "$work/hako" 2> /dev/null); do $H delete --force "$id" > /dev/null 2>&1 || true; done
  rm -rf "$work"
}
trap cleanup EXIT
export PYTHONPATH="$here/../../python${PYTHONPATH:+:$PYTHONPATH}"

$H run -d --profile host hx -- sleep 100000
# hyperfine's --show-output keeps a failing hako's error, which is shown
# (its stats are not: the JSON holds them).
hf () { hyperfine --show-output "$@" > "$work/hf.out" 2>&1 || { grep -v '^ *$' "$work/hf.out" | tail -n 20 >&2; return 1; }; }
hf -N --warmup "$WARMUP" --runs "$RUNS" --export-json "$work/exec.json" -n hako "$H exec hx true"
hf --warmup 1 --runs "$LIFE_RUNS" --export-json "$work/life.json" \
  -n hako "$H run -d --profile host lx -- sleep 100000 && $H exec lx true && $H delete --force lx"
median () { jq -r '.results[0].median * 1000' "$1"; }
emit "py-exec hako $(median "$work/exec.json") ms"
emit "py-lifecycle hako $(median "$work/life.json") ms"

# inflight(): the hako calls under this Python process that have not ended,
# with what each waits in: what a stuck step printed before failing.  A
# module of its own in $work, imported by both Python parts below.
cat > "$work/inflight.py" <<'PY'
import os
def inflight(out):
    procs = {}
    for p in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{p}/stat") as f:
                st = f.read()
            with open(f"/proc/{p}/wchan") as f:
                wchan = f.read()
            with open(f"/proc/{p}/cmdline", "rb") as f:
                args = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        fields = st[st.rindex(")") + 2:].split()
        procs[int(p)] = (int(fields[1]), fields[0], wchan or "-", args)
    mine = {os.getpid()}
    for _ in range(4):
        mine |= {p for p, v in procs.items() if v[0] in mine}
    for p in sorted(mine - {os.getpid()}):
        ppid, state, wchan, args = procs[p]
        print(f"python.sh:   pid {p} (parent {ppid}) {state} in {wchan}: {args[:160]}", file=out)
PY
export PYTHONPATH="$work:$PYTHONPATH"
"$PYTHON3" - "$HAKO" "$work/hako" "$work/data" "$RUNS" "$LIFE_RUNS" "$WARMUP" "$POOL_TIMEOUT" <<'PY' > "$work/py.lines"
import signal, statistics, sys, time
import hako
from inflight import inflight
exe, root, data, runs, life, warm, limit = sys.argv[1], sys.argv[2], sys.argv[3], *map(int, sys.argv[4:8])
kw = dict(hako=exe, root=root, data_root=data)
stage = "connect"
def stuck(*_):
    print(f"python.sh: {stage}: not done within {limit} s; in flight:", file=sys.stderr)
    inflight(sys.stderr)
    sys.exit(1)
signal.signal(signal.SIGALRM, stuck)
signal.alarm(limit)
sb = hako.Sandbox.connect("hx", **kw)
t = []
for i in range(warm + runs):
    stage = f"py-exec: run {i}"
    t0 = time.perf_counter(); sb.commands.run("true"); t.append(time.perf_counter() - t0)
print(f"py-exec sdk {statistics.median(t[warm:]) * 1000:.3f} ms")
t = []
for i in range(1 + life):
    t0 = time.perf_counter()
    stage = f"py-lifecycle {i}: create"
    s = hako.Sandbox.create(**kw)
    stage = f"py-lifecycle {i}: {s.sandbox_id}: command"
    s.commands.run("true")
    stage = f"py-lifecycle {i}: {s.sandbox_id}: kill"
    s.kill()
    t.append(time.perf_counter() - t0)
print(f"py-lifecycle sdk {statistics.median(t[1:]) * 1000:.3f} ms")
PY
"$PYTHON3" - "$HAKO" "$work/hako" "$work/data" "$POOL_SANDBOXES" "$POOL_COMMANDS" "$POOL_TIMEOUT" <<'PY' >> "$work/py.lines"
import asyncio, resource, sys, time
import hako
from inflight import inflight
exe, root, data, n, m, limit = sys.argv[1], sys.argv[2], sys.argv[3], *map(int, sys.argv[4:7])
kw = dict(hako=exe, root=root, data_root=data)
# Where each sandbox's task is, so that one that never ends is named with
# its step (and hako's processes with what they wait in) instead of being
# killed silently by the piece's watchdog.
stage = {}
async def one(i):
    stage[i] = "create"
    async with await hako.AsyncSandbox.create(**kw) as sb:
        for j in range(m):
            stage[i] = f"{sb.sandbox_id}: command {j}"
            await sb.commands.run(f"echo {i}.{j}")
        stage[i] = f"{sb.sandbox_id}: kill"
    del stage[i]
async def main():
    try:
        await asyncio.wait_for(asyncio.gather(*(one(i) for i in range(n))), limit)
    except asyncio.TimeoutError:
        print(f"python.sh: the pool did not end within {limit} s; unfinished sandboxes:", file=sys.stderr)
        for i, s in sorted(stage.items()):
            print(f"python.sh:   sandbox {i}: {s}", file=sys.stderr)
        print("python.sh: the hako calls in flight:", file=sys.stderr)
        inflight(sys.stderr)
        sys.exit(1)
t0 = time.perf_counter()
asyncio.run(main())
total = time.perf_counter() - t0
print(f"py-pool sdk {total * 1000:.0f} ms {n} sandboxes x {m} commands")
print(f"py-pool-rss sdk {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.1f} MiB the Python process")
PY
# The warm pool at steady state: ACQUIRERS tasks at once on one loop, each
# acquire (timed), one command, release (a delete, in the background), then
# HOLD seconds of think time, so that the pool keeps up (the hand-out
# itself is what is timed, not a wait for a create); "found empty" counts
# the acquires that had to wait all the same.
"$PYTHON3" - "$HAKO" "$work/hako" "$work/data" "$POOL_SIZE" "$POOL_ACQUIRERS" "$POOL_ACQUIRES" "$POOL_HOLD" \
  "$POOL_TIMEOUT" <<'PY' >> "$work/py.lines"
import asyncio, sys, time
import hako
exe, root, data = sys.argv[1:4]
size, acquirers, n = map(int, sys.argv[4:7])
hold, limit = float(sys.argv[7]), float(sys.argv[8])
kw = dict(hako=exe, root=root, data_root=data)
async def main():
    async with hako.AsyncSandboxPool(size=size, timeout=None, **kw) as pool:
        await pool.wait_ready(limit)
        times, empty, left, bg = [], 0, [n], set()
        async def acquirer():
            nonlocal empty
            while left[0] > 0:
                left[0] -= 1
                empty += pool.ready == 0
                t0 = time.perf_counter()
                sb = await pool.acquire(timeout=limit)
                times.append(time.perf_counter() - t0)
                await sb.commands.run("true")
                task = asyncio.ensure_future(pool.release(sb))
                bg.add(task)
                task.add_done_callback(bg.discard)
                await asyncio.sleep(hold)
        await asyncio.wait_for(asyncio.gather(*(acquirer() for _ in range(acquirers))), limit)
        await asyncio.gather(*bg)
    times.sort()
    note = f"{acquirers} acquirers, pool of {size}; {len(times)} acquires, {empty} found it empty"
    print(f"py-acquire-p50 sdk {times[len(times) // 2] * 1000:.3f} ms {note}")
    print(f"py-acquire-p99 sdk {times[min(len(times) - 1, int(len(times) * 0.99))] * 1000:.3f} ms {note}")
asyncio.run(main())
PY
while read -r line; do emit "$line"; echo "$line"; done < "$work/py.lines"
exit 0
