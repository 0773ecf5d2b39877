#!/bin/bash
# tests/bench/exec.sh: one more command in a running sandbox, side by side.
#
# One busybox bundle (`runc spec`, process `sleep 1000`) runs under hako, crun
# and runc; hyperfine then times, in one run,
#   hako     hako exec ID true
#   crun     crun exec ID true
#   runc     runc exec ID true
#   nsenter  nsenter -a -t PID true   (namespaces only: no cgroup, no caps,
#                                      no seccomp, no Landlock — the floor)
# and prints medians and ratios to hako's; then what the per-command
# accounting costs (issue 36: what an exec result says the command used —
# wall time, CPU, peak memory, OOM kills; hako-exec(8)): `hako exec ID true`
# beside the same with HAKO_NOACCT, the same hako with that accounting
# compiled out (tests/bench/hako-noacct, built by make with
# -DHAKO_NO_EXEC_ACCOUNTING), ACCT_RUNS each interleaved run by run by
# tests/bench/lat.c, medians and their difference; then the peak RSS of
# each exec command (/usr/bin/time -f %M, median of RSS_RUNS); then a kept process's
# start: from `hako exec --detach ID echo first` to the first line in its
# log (the state tree's procs/<pid>/log, polled), median of DETACH_RUNS.  Debian 12's crun
# refuses a hybrid cgroup layout: on such a host crun runs (and is timed) in a
# private mount namespace without /sys/fs/cgroup/unified, as
# tests/bench/run.sh does.
# Environment: HAKO, HAKO_NOACCT (default tests/bench/hako-noacct beside
# HAKO's build, when there), ACCT_RUNS (default RUNS), RUNS (default
# 200), WARMUP (default 10), RUNC_RUNS
# (default 50 or RUNS if fewer: runc is slow), RSS_RUNS (default 5),
# DETACH_RUNS (default 50 or RUNS if fewer), BENCH_FORMAT=lines (human
# output to stderr; stdout gets `BENCH ROW TOOL VALUE UNIT [NOTE]` lines,
# rows exec, exec-acct, rss-exec and exec-detach).
# Needs root.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
HAKO=${HAKO:-$here/../../hako}
RUNS=${RUNS:-200}
WARMUP=${WARMUP:-10}
RUNC_RUNS=${RUNC_RUNS:-$((RUNS < 50 ? RUNS : 50))}
RSS_RUNS=${RSS_RUNS:-5}
ACCT_RUNS=${ACCT_RUNS:-$RUNS}
HAKO_NOACCT=${HAKO_NOACCT:-$(dirname "$HAKO")/tests/bench/hako-noacct}
DETACH_RUNS=${DETACH_RUNS:-$((RUNS < 50 ? RUNS : 50))}
if [ "${BENCH_FORMAT:-}" = lines ]; then exec 3>&1 1>&2; else exec 3> /dev/null; fi
emit () { printf 'BENCH %s\n' "$*" >&3; }
command -v hyperfine > /dev/null || { echo "exec.sh: hyperfine not installed" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}"/hako-bench-exec.XXXXXX)
chmod 711 "$work"
mount -t tmpfs -o mode=0711 hako-bench "$work"
"$here/../fixtures/make-bundle.sh" "$work/b" runc > /dev/null
jq '.process.args = ["sleep", "1000"]' "$work/b/config.json" > "$work/c" && mv "$work/c" "$work/b/config.json"
H="$HAKO --root $work/hako --data-root $work/data"
hybrid=false
if [ "$(stat -f -c %T /sys/fs/cgroup/unified 2>/dev/null)" = cgroup2fs ]; then hybrid=true; fi
crun_ns () { if $hybrid; then unshare -m sh -c "umount /sys/fs/cgroup/unified; $*"; else sh -c "$*"; fi; }
cleanup () {
  $H delete --force hx > /dev/null 2>&1 || true
  crun_ns "crun --root $work/crun delete --force cx" > /dev/null 2>&1 || true
  runc --root "$work/runc" delete --force rx > /dev/null 2>&1 || true
  umount -l "$work" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
$H run --detach --bundle "$work/b" hx
pid=$($H state hx | jq .pid)
out=$work/out; mkdir -p "$out"
hyperfine -N --style basic --warmup "$WARMUP" --runs "$RUNS" --export-json "$out/h.json" \
  -n hako "$H exec hx true" -n nsenter "nsenter -a -t $pid /bin/true" > /dev/null
ok_crun=false ok_runc=false why_crun="n/a (not installed)" why_runc="n/a (not installed)"
if command -v crun > /dev/null; then
  why_crun="failed (crun run -d)"
  if crun_ns "crun --root $work/crun run -d -b $work/b cx" > /dev/null 2>&1 < /dev/null; then
    why_crun="failed (hyperfine: an exec exited non-zero)"
    crun_ns "hyperfine -N --style basic --warmup $WARMUP --runs $RUNS --export-json $out/c.json \
      -n crun 'crun --root $work/crun exec cx true'" > /dev/null && ok_crun=true
  fi
fi
if command -v runc > /dev/null; then
  why_runc="failed (runc run -d)"
  if runc --root "$work/runc" run -d -b "$work/b" rx > /dev/null 2>&1 < /dev/null; then
    why_runc="failed (hyperfine: an exec exited non-zero)"
    hyperfine -N --style basic --warmup 3 --runs "$RUNC_RUNS" --export-json "$out/r.json" \
      -n runc "runc --root $work/runc exec rx true" > /dev/null && ok_runc=true
  fi
fi
div () { awk -v a="$1" -v b="$2" -v f="${3:-%f}" 'BEGIN { printf f, a / b }'; }
median () { jq -r ".results[] | select(.command == \"$2\") | .median * 1000" "$1"; }
hm=$(median "$out/h.json" hako)
printf '%-8s %8.2f ms\n' hako "$hm"
emit "exec hako $hm ms"
printf '%-8s %8.2f ms  (%.2fx hako)\n' nsenter "$(median "$out/h.json" nsenter)" \
  "$(div "$(median "$out/h.json" nsenter)" "$hm")"
emit "exec nsenter $(median "$out/h.json" nsenter) ms namespaces only"
# other NAME RESULTS OK WHY NOTE: NAME's median beside hako's when it ran
# (OK true), else why not.
other () {
  if $3; then
    printf '%-8s %8.2f ms  (%.2fx hako)\n' "$1" "$(median "$2" "$1")" "$(div "$(median "$2" "$1")" "$hm")"
    emit "exec $1 $(median "$2" "$1") ms$5"
  else
    emit "exec $1 - - $4"
  fi
}
other crun "$out/c.json" $ok_crun "$why_crun" \
  "$($hybrid && echo ' (hybrid cgroups: private mount ns without /sys/fs/cgroup/unified)')"
other runc "$out/r.json" $ok_runc "$why_runc" ""

# The accounting: the same exec with it and without, interleaved (A, B, A,
# B...) so that a busy machine's drift moves both alike; the difference of
# the medians is its cost.
accounting () {
  local why=""
  [ -x "$HAKO_NOACCT" ] || why="n/a (not built: make tests/bench/hako-noacct)"
  command -v cc > /dev/null || why="n/a (no C compiler for tests/bench/lat.c)"
  if [ -n "$why" ]; then
    emit "exec-acct hako - - $why"
    emit "exec-acct hako-noacct - - $why"
    return 0
  fi
  cc -O2 -o "$work/lat" "$here/lat.c" || return 1
  local HN="$HAKO_NOACCT --root $work/hako --data-root $work/data"
  "$work/lat" -n "$((ACCT_RUNS * 2))" -w "$WARMUP" -o "$out/acct" -- $H exec hx true :or $HN exec hx true || return 1
  local a b
  a=$(awk '$1 == 0 { print $4 }' "$out/acct" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
  b=$(awk '$1 == 1 { print $4 }' "$out/acct" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
  printf '%-12s %8.2f ms  with the per-command accounting\n' hako "$a"
  printf '%-12s %8.2f ms  without it (%+.3f ms)\n' hako-noacct "$b" "$(awk -v a="$a" -v b="$b" 'BEGIN { print a - b }')"
  emit "exec-acct hako $a ms"
  emit "exec-acct hako-noacct $b ms the accounting costs $(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.3f", a - b }') ms (medians of $ACCT_RUNS each, interleaved)"
}
accounting || emit "exec-acct hako - - failed"

# Peak RSS: GNU time's maximum resident set size of the exec command and what
# it waited for (the runtime's own processes and /bin/true).
rss () {
  local name=$1 wrap=$2 line=$3 i kb
  : > "$out/$name.rss"
  for ((i = 0; i < RSS_RUNS; i++)); do
    if [ "$wrap" = crun ]; then
      crun_ns "/usr/bin/time -o $out/$name.rss1 -f %M $line" < /dev/null > /dev/null 2>&1 || return 1
    else
      /usr/bin/time -o "$out/$name.rss1" -f %M $line < /dev/null > /dev/null 2>&1 || return 1
    fi
    tail -n 1 "$out/$name.rss1" >> "$out/$name.rss"
  done
  kb=$(sort -n "$out/$name.rss" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
  printf '%-8s %8.1f MiB peak RSS\n' "$name" "$(div "$kb" 1024)"
  emit "rss-exec $name $(div "$kb" 1024 %.1f) MiB"
}
if [ ! -x /usr/bin/time ]; then
  for n in hako crun runc; do emit "rss-exec $n - - n/a (GNU time not installed)"; done
else
  rss hako - "$H exec hx true" || emit "rss-exec hako - - failed"
  if $ok_crun; then rss crun crun "crun --root $work/crun exec cx true" || emit "rss-exec crun - - failed"
  else emit "rss-exec crun - - $why_crun"; fi
  if $ok_runc; then rss runc - "runc --root $work/runc exec rx true" || emit "rss-exec runc - - failed"
  else emit "rss-exec runc - - $why_runc"; fi
fi

# A kept process: `exec --detach` returns its id once it runs; its holder
# copies its output into procs/<pid>/log.  Timed to that file's first byte.
first_output () {
  local i t0 t1 p log end
  : > "$out/detach"
  for ((i = 0; i < DETACH_RUNS; i++)); do
    t0=$(date +%s%N)
    p=$($H exec --detach hx echo first) || return 1
    log=$work/hako/hx/procs/$p/log
    # Bounded: a hako that keeps no such log (an older build's --detach)
    # fails the row instead of spinning for ever.
    end=$((SECONDS + 10))
    until [ -s "$log" ]; do ((SECONDS < end)) || return 1; done
    t1=$(date +%s%N)
    echo "$(((t1 - t0) / 1000))" >> "$out/detach"
    $H wait --process "$p" hx > /dev/null || return 1
  done
  local us
  us=$(sort -n "$out/detach" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
  printf '%-8s %8.2f ms  detached exec to its first output\n' hako "$(div "$us" 1000)"
  emit "exec-detach hako $(div "$us" 1000 %.3f) ms"
}
first_output || emit "exec-detach hako - - failed"
exit 0
