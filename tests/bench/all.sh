#!/bin/bash
# tests/bench/all.sh: the whole benchmark suite (`make bench`), one table.
#
# Runs the pieces in tests/bench/ one after the other (never in parallel:
# they would time each other), each with BENCH_FORMAT=lines, and prints one
# markdown table of medians — hako beside crun, runc, bubblewrap, umoci, tar,
# nsenter or a direct download where they do the same job — with each
# tool's ratio to hako, measured in this run, under a description of the
# machine.  Rows (docs/benchmarks.md says what each measures):
#   run.sh       run /bin/true (runc spec's bundle; hako's default profile
#                beside bwrap --unshare-all); create+start+delete; create+delete with
#                --disk none, the default disk limit and --disk 1g; peak RSS
#                of `run`
#   exec.sh      exec true; exec true with the per-command accounting and
#                compiled out (HAKO_NOACCT: tests/bench/hako-noacct, which
#                `make bench` builds); peak RSS of `exec`; a detached (kept)
#                exec to its first output
#   images.sh    image import + unpack; create from a small and a large image
#   snapshot.sh  snapshot of SNAP_SIZES MB of /work
#   fork.sh      fork of FORK_SIZES MB of /work into one child, beside
#                snapshot + create --from-snapshot; the disk each child
#                costs; how long the parent is frozen
#   proxy.sh     allow-list proxy throughput (plain HTTP and CONNECT); the
#                latency of a small request, p50 and p99, proxied and direct
#   ports.sh     a published port (run -p): download throughput and a small
#                request's latency on a new connection, p50 and p99, beside a
#                direct loopback connection
#   egress.sh    the proxy over HTTPS: a download intercepted, through an
#                opaque tunnel and direct; a small request's p50 and p99,
#                intercepted and direct
#   parallel.sh  sandboxes per second, 8 concurrent run /bin/true
#   session.sh   run -d to the first exec; an idle session's PSS; put/get
#   phases.sh    (after the table) where run's and exec's time goes, from
#                hako's phase trace (HAKO_TRACE=1)
#   tails.sh     (after that) p50, p90, p99 and max of run, create+start,
#                ready to first command and exec, at 1, 8 and 32 at once,
#                beside crun and bwrap, with the phase that holds hako's p99
#   python.sh    the Python SDK beside the CLI calls it makes (docs/python.md)
# A tool that is not installed shows "n/a (not installed)"; a piece that
# fails shows "failed" in its rows and the suite goes on (exit status 1 at
# the end).  Every piece's own output goes to BENCH_LOG.
#
# Environment (defaults; QUICK=1 gives a smoke run of about a minute):
#   HAKO        the hako binary (../../hako from here, then PATH)
#   HAKO_NOACCT hako without the per-command accounting (default
#               tests/bench/hako-noacct beside HAKO's build)
#   RUN_RUNS    30   (QUICK 10)  hyperfine runs of run and create+start+delete
#   EXEC_RUNS   200  (QUICK 30)  hyperfine runs of exec
#   WARMUP      3    (QUICK 1)
#   RSS_RUNS    5    (QUICK 3)   /usr/bin/time runs per peak-RSS figure
#   IMAGE_RUNS  3    (QUICK 2)   import runs (create: 4x as many)
#   LAYER1, LAYER2               host dirs (relative to /) made into the large
#                                image's two layers (images.sh; QUICK: perl's)
#   SNAP_SIZES  "10 200" (QUICK "10 50")  MB of /work to snapshot
#   SNAP_RUNS   5    (QUICK 2)
#   FORK_SIZES  "10 1024" (QUICK "10 100")  MB of /work to fork
#   FORK_RUNS   5    (QUICK 2)
#   PROXY_SIZE  1 GiB (QUICK 128 MiB)  bytes per download through the proxy
#   PROXY_LAT_N 1000 (QUICK 200)  small requests timed for the p50/p99 rows
#   EGRESS_SIZE 1 GiB (QUICK 128 MiB)  bytes per HTTPS download (egress.sh)
#   PAR_JOBS    8                concurrent workers of parallel.sh
#   PAR_PER     10   (QUICK 3)   sandboxes per worker
#   PHASE_RUNS  30   (QUICK 10)  traced runs (and execs) of phases.sh
#   TAIL_SAMPLES 200 (QUICK 40)  samples of each tails.sh row at each concurrency
#   TAIL_CONCS  "1 8 32"         the concurrencies of tails.sh
#   SESSION_RUNS 5   (QUICK 2)   runs of each session.sh figure
#   SESSION_MB  200  (QUICK 50)  the large put/get file
#   POOL_SANDBOXES 100 (QUICK 20), POOL_COMMANDS 10 (QUICK 3)  python.sh's pool
#   POOL_TIMEOUT 900 (QUICK 120)  seconds before the pool names its unfinished sandboxes and fails
#   POOL_ACQUIRES 200 (QUICK 64)  acquires of the warm-pool row (32 acquirers)
#   PIECE_TIMEOUT 1800 (QUICK 300)  seconds before a piece counts as hung
#   BENCH_ONLY  a subset of "run exec images snapshot fork proxy egress ports parallel session phases tails python"
#   BENCH_LOG   where the pieces' output goes (default a file under /tmp,
#               kept only when a piece failed)
# Needs root, hyperfine, jq, bc, curl (else busybox wget), a C compiler, and
# runc for the shared bundle's config.json.
set -u
here=$(cd "$(dirname "$0")" && pwd)
if [ -z "${HAKO:-}" ]; then
  if [ -x "$here/../../hako" ]; then HAKO=$here/../../hako; else HAKO=$(command -v hako || true); fi
fi
[ -n "$HAKO" ] && [ -x "$HAKO" ] || { echo "all.sh: no hako binary (set HAKO)" >&2; exit 1; }
HAKO=$(cd "$(dirname "$HAKO")" && pwd)/$(basename "$HAKO")
[ "$(id -u)" = 0 ] || { echo "all.sh: needs root (the runtimes build rootful sandboxes)" >&2; exit 1; }

if [ "${QUICK:-0}" = 1 ]; then
  : "${RUN_RUNS:=10}" "${EXEC_RUNS:=30}" "${WARMUP:=1}" "${RSS_RUNS:=3}" "${IMAGE_RUNS:=2}"
  : "${LAYER1:=usr/share/perl}" "${LAYER2:=usr/share/perl5}"
  : "${SNAP_SIZES:=10 50}" "${SNAP_RUNS:=2}" "${FORK_SIZES:=10 100}" "${FORK_RUNS:=2}" "${PROXY_SIZE:=134217728}" "${EGRESS_SIZE:=134217728}"
  : "${PAR_PER:=3}" "${PROXY_LAT_N:=200}" "${PHASE_RUNS:=10}" "${SESSION_RUNS:=2}" "${SESSION_MB:=50}"
  : "${POOL_SANDBOXES:=20}" "${POOL_COMMANDS:=3}" "${POOL_TIMEOUT:=120}" "${PIECE_TIMEOUT:=300}"
  : "${TAIL_SAMPLES:=40}" "${POOL_ACQUIRES:=64}"
else
  : "${RUN_RUNS:=30}" "${EXEC_RUNS:=200}" "${WARMUP:=3}" "${RSS_RUNS:=5}" "${IMAGE_RUNS:=3}"
  : "${SNAP_SIZES:=10 200}" "${SNAP_RUNS:=5}" "${FORK_SIZES:=10 1024}" "${FORK_RUNS:=5}" "${PROXY_SIZE:=1073741824}" "${EGRESS_SIZE:=1073741824}"
  : "${POOL_SANDBOXES:=100}" "${POOL_COMMANDS:=10}" "${POOL_TIMEOUT:=900}" "${PIECE_TIMEOUT:=1800}"
fi
: "${PAR_JOBS:=8}" "${PAR_PER:=10}" "${PROXY_LAT_N:=1000}" "${PHASE_RUNS:=30}" "${SESSION_RUNS:=5}" "${SESSION_MB:=200}"
: "${TAIL_SAMPLES:=200}" "${TAIL_CONCS:=1 8 32}" "${POOL_ACQUIRES:=200}"
: "${BENCH_ONLY:=run exec images snapshot fork proxy egress ports parallel session phases tails python}"
keep_log=${BENCH_LOG:+true}
BENCH_LOG=${BENCH_LOG:-$(mktemp "${TMPDIR:-/tmp}"/hako-bench-all.XXXXXX.log)}
lines=$(mktemp "${TMPDIR:-/tmp}"/hako-bench-lines.XXXXXX)
rows=$(mktemp "${TMPDIR:-/tmp}"/hako-bench-rows.XXXXXX)
last_words=$(mktemp "${TMPDIR:-/tmp}"/hako-bench-failed.XXXXXX)
trap 'rm -f "$lines" "$rows" "$last_words" "${phases_md:-}" "${tails_md:-}"' EXIT
: > "$BENCH_LOG"

# ---- the machine -------------------------------------------------------------

cgroup_layout () {
  if [ "$(stat -f -c %T /sys/fs/cgroup 2> /dev/null)" = cgroup2fs ]; then
    echo "v2 (unified)"
  elif [ "$(stat -f -c %T /sys/fs/cgroup/unified 2> /dev/null)" = cgroup2fs ]; then
    echo "hybrid (v1 controllers, cgroup2 at /sys/fs/cgroup/unified)"
  else
    echo "v1"
  fi
}
version_of () {  # version_of TOOL ARGS...: first line, or "not installed"
  command -v "$1" > /dev/null || { echo "$1 not installed"; return; }
  shift; "$@" 2>&1 | head -n 1
}
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
mem=$(awk '/^MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)
started=$(date +%s)

# ---- the pieces ----------------------------------------------------------------

failed_pieces=""
# piece NAME VAR=VALUE...: run tests/bench/NAME.sh with those variables.
piece () {
  local name=$1 rc
  shift
  case " $BENCH_ONLY " in *" $name "*) ;; *) return 0 ;; esac
  printf '== %s.sh ... ' "$name" >&2
  local t0=$SECONDS
  echo "==== $name.sh $*" >> "$BENCH_LOG"
  local from=$(($(wc -l < "$BENCH_LOG") + 1))
  # A piece still running after PIECE_TIMEOUT is hung: tests/watchdog.sh
  # writes what each of its processes waits in to the log and kills it.
  bash "$here/../watchdog.sh" -o "$BENCH_LOG" "$PIECE_TIMEOUT" /dev/null \
    env HAKO="$HAKO" BENCH_FORMAT=lines "$@" bash "$here/$name.sh" \
    < /dev/null >> "$lines" 2>> "$BENCH_LOG"
  rc=$?
  [ "$rc" -eq 0 ] || failed_pieces="$failed_pieces $name"
  printf '%s s%s\n' "$((SECONDS - t0))" "$([ "$rc" -eq 0 ] || echo " (exit $rc$([ "$rc" != 124 ] || echo ": hung, killed"); see $BENCH_LOG)")" >&2
  # A failed piece's last words, where a CI log (which loses $BENCH_LOG) keeps
  # them: now, and again after the table (a CI log shows only its tail).
  [ "$rc" -eq 0 ] && return
  local words
  words=$(tail -n +"$from" "$BENCH_LOG" | tail -n 40 | sed "s/^/   $name.sh: /")
  printf '%s\n' "$words" >&2
  printf '%s\n' "$words" | tail -n 25 >> "$last_words"
}

nohf=""
if ! command -v hyperfine > /dev/null; then
  echo "all.sh: hyperfine not installed: every row is n/a (apt-get install hyperfine)" >&2
  BENCH_ONLY="" nohf=1
fi
piece run RUNS="$RUN_RUNS" WARMUP="$WARMUP" RSS_RUNS="$RSS_RUNS"
piece exec RUNS="$EXEC_RUNS" WARMUP="$WARMUP" RSS_RUNS="$RSS_RUNS"
img=(RUNS="$IMAGE_RUNS")
[ -z "${CREATE_RUNS:-}" ] || img+=(CREATE_RUNS="$CREATE_RUNS")
[ -z "${LAYER1:-}" ] || img+=(LAYER1="$LAYER1")
[ -z "${LAYER2:-}" ] || img+=(LAYER2="$LAYER2")
piece images "${img[@]}"
piece snapshot RUNS="$SNAP_RUNS" SNAP_SIZES="$SNAP_SIZES"
piece fork RUNS="$FORK_RUNS" FORK_SIZES="$FORK_SIZES"
piece proxy SIZE="$PROXY_SIZE" LAT_N="$PROXY_LAT_N" CONNS=0
piece ports SIZE="$PROXY_SIZE" LAT_N="$PROXY_LAT_N"
piece egress SIZE="$EGRESS_SIZE" LAT_N="$PROXY_LAT_N"
piece parallel JOBS="$PAR_JOBS" PER="$PAR_PER"
piece session RUNS="$SESSION_RUNS" SESSION_MB="$SESSION_MB"
# The breakdown: its own markdown (not table rows), printed after the table.
phases_md=$(mktemp "${TMPDIR:-/tmp}"/hako-bench-phases.XXXXXX)
case " $BENCH_ONLY " in
  *" phases "*)
    printf '== phases.sh ... ' >&2
    t0=$SECONDS
    if bash "$here/../watchdog.sh" -o "$BENCH_LOG" "$PIECE_TIMEOUT" /dev/null \
      env HAKO="$HAKO" RUNS="$PHASE_RUNS" bash "$here/phases.sh" < /dev/null > "$phases_md" 2>> "$BENCH_LOG"; then
      printf '%s s\n' "$((SECONDS - t0))" >&2
    else
      failed_pieces="$failed_pieces phases"
      printf 'failed (see %s)\n' "$BENCH_LOG" >&2
    fi
    ;;
esac
# The tails: their own markdown too, after the table and the breakdown.
tails_md=$(mktemp "${TMPDIR:-/tmp}"/hako-bench-tails.XXXXXX)
case " $BENCH_ONLY " in
  *" tails "*)
    printf '== tails.sh ... ' >&2
    t0=$SECONDS
    if bash "$here/../watchdog.sh" -o "$BENCH_LOG" "$PIECE_TIMEOUT" /dev/null \
      env HAKO="$HAKO" SAMPLES="$TAIL_SAMPLES" CONCS="$TAIL_CONCS" bash "$here/tails.sh" < /dev/null > "$tails_md" 2>> "$BENCH_LOG"; then
      printf '%s s\n' "$((SECONDS - t0))" >&2
    else
      failed_pieces="$failed_pieces tails"
      printf 'failed (see %s)\n' "$BENCH_LOG" >&2
    fi
    ;;
esac
piece python RUNS="$EXEC_RUNS" WARMUP="$WARMUP" POOL_SANDBOXES="$POOL_SANDBOXES" POOL_COMMANDS="$POOL_COMMANDS" \
  POOL_TIMEOUT="$POOL_TIMEOUT" POOL_ACQUIRES="$POOL_ACQUIRES"
elapsed=$(($(date +%s) - started))

# ---- the table -----------------------------------------------------------------

# The rows, in order: KEY|LABEL|TOOLS (hako first: the others' ratios are to it).
{
  echo "run|run /bin/true|hako crun runc bwrap unshare"
  echo "run-default|run /bin/true, hako's default profile; bwrap --unshare-all with a user namespace|hako bwrap"
  echo "lifecycle|create+start+delete|hako crun runc"
  echo "disk-create|create+delete, host profile; --disk none, default limit, --disk 1g|hako hako-default hako-disk"
  echo "exec|exec true|hako crun runc nsenter"
  echo "exec-acct|exec true, the per-command accounting on (hako) and compiled out (hako-noacct), interleaved|hako hako-noacct"
  echo "rss-run|peak RSS, run /bin/true|hako crun runc bwrap"
  echo "rss-exec|peak RSS, exec true|hako crun runc"
  echo "exec-detach|detached exec to first output (exec -d to its first log line)|hako"
  echo "import|image import + unpack|hako umoci tar gunzip"
  echo "create-small|create, small image|hako"
  echo "create-large|create, large image|hako"
  for mb in $SNAP_SIZES; do echo "snapshot-${mb}MB|snapshot, $mb MB|hako tar"; done
  for mb in $FORK_SIZES; do
    echo "fork-${mb}MB|fork, $mb MB of /work, one child (vs snapshot + create --from-snapshot + start)|hako snapshot+branch"
    echo "fork-disk-${mb}MB|host disk that child costs, $mb MB|hako snapshot+branch"
    echo "fork-frozen-${mb}MB|parent frozen during that fork, $mb MB|hako"
  done
  echo "proxy-http|proxy, plain HTTP|hako direct"
  echo "proxy-connect|proxy, CONNECT|hako direct"
  echo "proxy-p50|proxy, small request p50|hako direct"
  echo "proxy-p99|proxy, small request p99|hako direct"
  echo "port-fwd|published port, download|hako direct"
  echo "port-p50|published port, small request on a new connection p50|hako direct"
  echo "port-p99|published port, small request on a new connection p99|hako direct"
  echo "egress-intercept|egress, HTTPS download intercepted|hako direct"
  echo "egress-tunnel|egress, HTTPS download, opaque tunnel|hako direct"
  echo "egress-p50|egress, small HTTPS request intercepted, p50|hako direct"
  echo "egress-p99|egress, small HTTPS request intercepted, p99|hako direct"
  echo "parallel|concurrent run /bin/true|hako crun runc bwrap"
  echo "session-exec|session, run -d --profile host to first exec|hako"
  echo "session-pss|session, PSS of idle monitor + process|hako"
  echo "put-1k|put 1 KiB|hako cp"
  echo "get-1k|get 1 KiB|hako cp"
  echo "put-big|put $SESSION_MB MB|hako cp"
  echo "get-big|get $SESSION_MB MB|hako cp"
  echo "cp-sparse|cp out, 1 GiB sparse file (1 MiB of data)|hako cp"
  echo "py-exec|Python commands.run(\"true\") vs exec true|hako sdk"
  echo "py-lifecycle|Python create+run+kill vs run -d, exec, delete|hako sdk"
  echo "py-pool|Python $POOL_SANDBOXES sandboxes x $POOL_COMMANDS commands, one loop|sdk"
  echo "py-pool-rss|Python peak RSS of that loop|sdk"
  echo "py-acquire-p50|Python pool acquire at steady state, p50|sdk"
  echo "py-acquire-p99|Python pool acquire at steady state, p99|sdk"
} > "$rows"

echo "## hako benchmarks"
echo
echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC'); total $((elapsed / 60)) min $((elapsed % 60)) s${QUICK:+ (QUICK=$QUICK)}"
echo "- hako: $("$HAKO" --version | head -n 1)"
echo "- kernel: $(uname -r); CPU: ${cpu:-unknown}, $(nproc) cores; memory $mem; load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "- cgroups: $(cgroup_layout)"
echo "- tools: $(version_of crun crun --version); $(version_of runc runc --version);" \
     "$(version_of bwrap bwrap --version); $(version_of umoci umoci --version);" \
     "$(version_of hyperfine hyperfine --version); $(version_of curl curl --version | sed 's/^\(curl [^ ]*\) .*/\1/')"
echo "- runs: run and create+start+delete $RUN_RUNS, exec $EXEC_RUNS, peak RSS $RSS_RUNS," \
     "import $IMAGE_RUNS, snapshot $SNAP_RUNS, fork $FORK_RUNS, proxy and published port 3 downloads of $((PROXY_SIZE / 1048576)) MiB and $PROXY_LAT_N small requests;" \
     "parallel $PAR_JOBS x $PAR_PER, session $SESSION_RUNS, phases $PHASE_RUNS; warmup $WARMUP"
echo
echo "| measurement | tool | median | ÷ hako | note |"
echo "|---|---|---:|---:|---|"
awk -F'|' -v only=" $BENCH_ONLY " -v failed=" $failed_pieces " -v logf="$BENCH_LOG" -v nohf="$nohf" '
  function piece_of(key) {
    if (key ~ /^(run|run-default|lifecycle|rss-run|disk-create)$/) return "run"
    if (key ~ /^(exec|exec-acct|rss-exec|exec-detach)$/) return "exec"
    if (key ~ /^(import|create-)/) return "images"
    if (key ~ /^snapshot-/) return "snapshot"
    if (key ~ /^fork-/) return "fork"
    if (key == "parallel") return "parallel"
    if (key ~ /^(session-|put-|get-)/) return "session"
    if (key ~ /^py-/) return "python"
    if (key ~ /^port-/) return "ports"
    return "proxy"
  }
  function installed(tool,   rc) {
    if (tool ~ /^(hako|hako-default|hako-disk|hako-noacct|direct|tar|gunzip|cp|sdk|snapshot\+branch)$/) return 1
    if (!(tool in have)) have[tool] = (system("command -v " tool " > /dev/null") == 0)
    return have[tool]
  }
  function fmt(v, unit) {
    if (unit == "ms" && v >= 1000) return sprintf("%.2f s", v / 1000)
    if (unit == "ms") return sprintf(v >= 100 ? "%.0f ms" : v >= 10 ? "%.1f ms" : "%.2f ms", v)
    if (unit == "MiB/s") return sprintf("%.0f MiB/s", v)
    if (unit == "sbx/s") return sprintf("%.1f sbx/s", v)
    return sprintf(v < 1 ? "%.2f %s" : "%.1f %s", v, unit)
  }
  FNR == NR {   # the BENCH lines
    if ($0 !~ /^BENCH /) next
    n = split($0, w, " ")
    k = w[2] SUBSEP w[3]
    val[k] = w[4]; unit[k] = w[5]; note[k] = ""
    for (i = 6; i <= n; i++) note[k] = note[k] (i > 6 ? " " : "") w[i]
    next
  }
  {             # the rows
    key = $1; label = $2; nt = split($3, tools, " ")
    p = piece_of(key)
    for (t = 1; t <= nt; t++) {
      tool = tools[t]; k = key SUBSEP tool
      med = "-"; ratio = ""; n = ""
      if (k in val && val[k] != "-") {
        med = fmt(val[k], unit[k]); n = note[k]
        hk = key SUBSEP "hako"
        if (tool != "hako" && (hk in val) && val[hk] != "-" && val[hk] > 0)
          ratio = sprintf("%.2fx", val[k] / val[hk])
        else if (tool == "hako" && nt > 1) ratio = "1.00x"
        # Creating should cost the same whatever the size of the image.
        sk = "create-small" SUBSEP "hako"
        if (key == "create-large" && (sk in val) && val[sk] != "-" && val[sk] > 0)
          n = n (n != "" ? "; " : "") sprintf("%.2fx the small one", val[k] / val[sk])
      } else if (nohf) {
        n = "n/a (hyperfine not installed)"
      } else if (!installed(tool)) {
        n = "n/a (not installed)"
      } else if (index(only, " " p " ") == 0) {
        n = "not run (BENCH_ONLY)"
      } else if (k in val) {
        n = note[k]
      } else {
        n = "failed: see " logf
      }
      printf "| %s | %s | %s | %s | %s |\n", (t == 1 ? label : ""), tool, med, ratio, n
    }
  }' "$lines" "$rows"
echo
echo "Medians; \"÷ hako\" is the tool's median over hako's: above 1 means hako is faster for"
echo "times and sizes, slower for throughput (MiB/s, sbx/s)."
if [ -s "$phases_md" ]; then
  echo
  echo "### Where the time goes (hako's phase trace)"
  cat "$phases_md"
fi
if [ -s "$tails_md" ]; then
  echo
  echo "### Tails: p50, p90, p99 and max, alone and at once"
  cat "$tails_md"
fi
if [ -n "$failed_pieces" ]; then
  echo "all.sh: the failed pieces' last words (each at most 25 lines):" >&2
  cat "$last_words" >&2
  echo "all.sh: failed:$failed_pieces (see $BENCH_LOG)" >&2
  exit 1
fi
if [ -n "$keep_log" ]; then echo "all.sh: the pieces' output is in $BENCH_LOG" >&2; else rm -f "$BENCH_LOG"; fi
exit 0
