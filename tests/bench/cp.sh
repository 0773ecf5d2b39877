#!/bin/sh
# hako cp throughput beside the tar pipe through exec it replaces
# (`tar -cf - DIR | hako exec ID tar -xf - -C DEST`, and the other way),
# on a tree of CP_MB MB: 200 files of CP_MB*5 KiB and 2000 small ones.
# Usage: tests/bench/cp.sh [HAKO]   (root; the median of RUNS runs, in ms)
# Environment: HAKO, CP_MB (default 100), RUNS (default 5),
# BENCH_FORMAT=lines (stdout gets `BENCH cp-<dir> TOOL VALUE ms` lines).
set -eu
HAKO=${1:-${HAKO:-./hako}}
CP_MB=${CP_MB:-100}
RUNS=${RUNS:-5}
lines=false
if [ "${BENCH_FORMAT:-}" = lines ]; then lines=true; exec 3>&1 1>&2; else exec 3> /dev/null; fi
T=$(mktemp -d "${TMPDIR:-/tmp}"/hako-bench-cp.XXXXXX)
chmod 711 "$T"
H="$HAKO --root $T/state --data-root $T/data"
cleanup () {
  $H delete --force cpb > /dev/null 2>&1 || true
  rm -rf "$T"
}
trap cleanup EXIT
mkdir -p "$T/tree/small"
i=0
while [ $i -lt 200 ]; do head -c $((CP_MB * 5 * 1024)) /dev/urandom > "$T/tree/f$i"; i=$((i + 1)); done
i=0
while [ $i -lt 2000 ]; do echo $i > "$T/tree/small/s$i"; i=$((i + 1)); done
$H run --detach --profile host cpb -- sleep 100000

now () { date +%s%N; }
# median NAME CMD: run CMD (a shell string; $R is the run's number) RUNS times
median () {
  name=$1 cmd=$2 r=0 all=""
  while [ $r -lt "$RUNS" ]; do
    R=$r
    export R
    s=$(now)
    sh -c "$cmd" > /dev/null
    all="$all $((($(now) - s) / 1000000))"
    r=$((r + 1))
  done
  echo $all | tr ' ' '\n' | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'
}
export H T
in_cp=$(median in-cp '$H cp "$T/tree" cpb:/work/c$R')
in_tar=$(median in-tar '$H exec cpb mkdir /work/t$R && tar -cf - -C "$T" tree | $H exec cpb tar -xf - -C /work/t$R')
out_cp=$(median out-cp 'rm -rf "$T/o$R"; $H cp cpb:/work/c0 "$T/o$R"')
out_tar=$(median out-tar 'rm -rf "$T/p$R"; mkdir "$T/p$R"; $H exec cpb tar -cf - -C /work c0 | tar -xf - -C "$T/p$R"')
printf '%-10s %10s %10s   (%s MB, median of %s, ms)\n' "" "hako cp" "tar|exec" "$CP_MB" "$RUNS"
printf '%-10s %10s %10s\n' "into" "$in_cp" "$in_tar" "out of" "$out_cp" "$out_tar"
if $lines; then
  echo "BENCH cp-in hako $in_cp ms" >&3
  echo "BENCH cp-in tar-exec $in_tar ms" >&3
  echo "BENCH cp-out hako $out_cp ms" >&3
  echo "BENCH cp-out tar-exec $out_tar ms" >&3
fi
