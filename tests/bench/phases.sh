#!/bin/sh
# tests/bench/phases.sh: where the time of `run /bin/true` and of `exec true`
# goes, from hako's phase trace (HAKO_TRACE=1, hako(8)).
#
# RUNS times each (default 30), on the busybox bundle: every phase's time is
# the time from its trace line to the next line of the same process (hako,
# the sandbox's child, the exec joiner, the command), and the table gives
# each phase's median over the runs, in ms, in the order of the first run.
# hako's own lines and the child's run at the same time between "clone" and
# "ready": their phases overlap, and the total is hako's first line to its
# last.  Environment: HAKO, RUNS, BENCH_FORMAT (`lines`: `BENCH phase-run
# PHASE MS ms` and `BENCH phase-exec ...` lines on stdout).  Needs root.
set -u
here=$(cd "$(dirname "$0")" && pwd)
RUNS=${RUNS:-30}
HAKO=${HAKO:-$here/../../hako}
if [ "${BENCH_FORMAT:-}" = lines ]; then exec 3>&1 1>&2; else exec 3> /dev/null; fi
[ "$(id -u)" = 0 ] || { echo "bench: needs root" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}"/hako-phases.XXXXXX) || exit 1
chmod 711 "$tmp"
mkdir -p "$tmp/state" && mount -t tmpfs -o size=64m,mode=700 hako-phases "$tmp/state" || exit 1
H="$HAKO --root $tmp/state/r --data-root $tmp/state/d"
cleanup () {
  $H delete --force ph-box > /dev/null 2>&1
  umount "$tmp/state" 2> /dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT INT TERM HUP PIPE
"$here/../fixtures/make-bundle.sh" "$tmp/bundle" runc > /dev/null || exit 1

# phases FILE: each "pid phase" line's duration to the next line of its pid;
# runs are separated by "--" lines.  Prints "phase<TAB>median ms" in order.
phases () {
  awk '
    $1 == "--" { run++; delete last; delete lastname; next }
    $1 != "hako-trace:" { next }
    {
      pid = $3; t = $2; name = $4; for (i = 5; i <= NF; i++) name = name " " $i
      if (run == 0 && !(name in seen)) { seen[name] = 1; order[++n] = name }
      if (pid in last) { v[lastname[pid], ++c[lastname[pid]]] = (t - last[pid]) * 1000 }
      last[pid] = t; lastname[pid] = name
      if (pid != 1 && name !~ /^(child|joiner|command):/) { if (!(run in first)) first[run] = t; final[run] = t }
    }
    END {
      for (i = 1; i <= n; i++) {
        k = order[i]; m = c[k]; if (m == 0) continue
        for (a = 1; a <= m; a++) s[a] = v[k, a]
        for (a = 1; a <= m; a++) for (b = a + 1; b <= m; b++) if (s[b] < s[a]) { x = s[a]; s[a] = s[b]; s[b] = x }
        printf "%s\t%.3f\n", k, (m % 2) ? s[(m + 1) / 2] : (s[m / 2] + s[m / 2 + 1]) / 2
      }
      m = 0; for (r in first) tot[++m] = (final[r] - first[r]) * 1000
      for (a = 1; a <= m; a++) for (b = a + 1; b <= m; b++) if (tot[b] < tot[a]) { x = tot[a]; tot[a] = tot[b]; tot[b] = x }
      if (m) printf "total (hako: main to its last line)\t%.3f\n", (m % 2) ? tot[(m + 1) / 2] : (tot[m / 2] + tot[m / 2 + 1]) / 2
    }' "$1"
}

report () { # ROW TITLE FILE
  printf '\n%s (median of %s runs, ms; a phase lasts until its process'"'"'s next line)\n\n' "$2" "$RUNS"
  printf '| phase | ms |\n|---|---:|\n'
  phases "$3" | while IFS="	" read -r name ms; do
    printf '| %s | %s |\n' "$name" "$ms"
    printf 'BENCH %s %s %s ms\n' "$1" "$(echo "$name" | tr ' :' '_.')" "$ms" >&3
  done
}

: > "$tmp/run.trace"
i=0
while [ $i -lt "$RUNS" ]; do
  HAKO_TRACE=1 $H run --rm --bundle "$tmp/bundle" ph-run 2>> "$tmp/run.trace" || exit 1
  echo -- >> "$tmp/run.trace"
  i=$((i + 1))
done
report phase-run "run --rm /bin/true" "$tmp/run.trace"

cp -r "$tmp/bundle" "$tmp/box"
jq '.process.args = ["sleep", "1000"]' "$tmp/bundle/config.json" > "$tmp/box/config.json"
$H run --detach --bundle "$tmp/box" ph-box || exit 1
: > "$tmp/exec.trace"
i=0
while [ $i -lt "$RUNS" ]; do
  HAKO_TRACE=1 $H exec ph-box true 2>> "$tmp/exec.trace" || exit 1
  echo -- >> "$tmp/exec.trace"
  i=$((i + 1))
done
report phase-exec "exec true" "$tmp/exec.trace"
