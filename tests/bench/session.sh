#!/bin/sh
# tests/bench/session.sh: what a session costs, in one run.
#   first exec    `run -d --profile host ID -- sleep` then `exec ID true`,
#                 from the run's start to the exec's end (delete untimed)
#   session PSS   the proportional set size of an idle session's monitor
#                 and its process (smaps_rollup; its init when it has one)
#   put / get     1 KiB and SESSION_MB MB into and out of the session's
#                 /work, beside cp of the same file on the host's tmpfs
#   cp sparse     `hako cp` out of a 1 GiB sparse file with 1 MiB of data,
#                 beside `cp --sparse=always` of it on the host
# Environment: HAKO, RUNS (5), SESSION_MB (200), BENCH_FORMAT (`lines`:
# `BENCH ROW TOOL VALUE UNIT` on stdout; rows session-exec, session-pss,
# put-1k, get-1k, put-big, get-big, cp-sparse).  Needs root.
set -u
here=$(cd "$(dirname "$0")" && pwd)
RUNS=${RUNS:-5}
MB=${SESSION_MB:-200}
HAKO=${HAKO:-$here/../../hako}
if [ "${BENCH_FORMAT:-}" = lines ]; then exec 3>&1 1>&2; else exec 3> /dev/null; fi
emit () { printf 'BENCH %s\n' "$*" >&3; }
[ "$(id -u)" = 0 ] || { echo "bench: needs root" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}"/hako-session.XXXXXX) || exit 1
chmod 711 "$tmp"
s=$tmp/s
mkdir -p "$s" && mount -t tmpfs -o size=$((3 * MB + 64))m,mode=711 hako-session "$s" || exit 1
H="$HAKO --root $s/root --data-root $s/data"
cleanup () {
  trap - EXIT INT TERM
  for id in $($H list -q 2> /dev/null); do $H delete --force "$id" > /dev/null 2>&1; done
  umount "$s" 2> /dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT INT TERM
now () { date +%s%N; }
ms () { echo "$1 $2" | awk '{ printf "%.3f", ($2 - $1) / 1e6 }'; }
median () { sort -n | awk '{ v[NR] = $1 } END { if (NR) printf "%.3f", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

i=0
while [ $i -lt "$RUNS" ]; do
  t0=$(now)
  $H run -d --profile host se$i -- sleep 1000 > /dev/null && $H exec se$i true || exit 1
  t1=$(now)
  ms "$t0" "$t1" >> "$tmp/first"
  $H delete --force se$i > /dev/null
  i=$((i + 1))
done
v=$(median < "$tmp/first")
echo "run -d --profile host to the first finished exec: $v ms"
emit session-exec hako "$v" ms

$H run -d --profile host sp -- sleep 1000 > /dev/null || exit 1
sleep 1
mon=$(cut -d' ' -f1 "$s/root/sp/monitor")
pid=$($H state sp | jq -r .pid)
kb=0
for p in $mon $pid; do
  k=$(awk '/^Pss:/ { print $2 }' "/proc/$p/smaps_rollup" 2> /dev/null)
  kb=$((kb + ${k:-0}))
done
v=$(echo "$kb" | awk '{ printf "%.2f", $1 / 1024 }')
echo "PSS of an idle session's monitor ($mon) and process ($pid): $v MiB"
emit session-pss hako "$v" MiB

head -c 1024 /dev/urandom > "$s/f1k"
head -c $((MB * 1048576)) /dev/urandom > "$s/fbig"
mkdir -p "$s/cp"
for size in 1k big; do
  : > "$tmp/put"; : > "$tmp/get"; : > "$tmp/cp"
  i=0
  while [ $i -lt "$RUNS" ]; do
    t0=$(now); $H put sp /work/f < "$s/f$size" || exit 1; t1=$(now)
    $H get --max-bytes $((MB + 1))m sp /work/f > "$s/out" || exit 1; t2=$(now)
    cp "$s/f$size" "$s/cp/f"; t3=$(now)
    ms "$t0" "$t1" >> "$tmp/put"; ms "$t1" "$t2" >> "$tmp/get"; ms "$t2" "$t3" >> "$tmp/cp"
    cmp -s "$s/out" "$s/f$size" || { echo "get: not what put wrote" >&2; exit 1; }
    rm -f "$s/out" "$s/cp/f"
    i=$((i + 1))
  done
  for w in put get cp; do
    v=$(median < "$tmp/$w")
    echo "$w $size: $v ms"
    [ $w = cp ] && { emit put-$size cp "$v" ms; emit get-$size cp "$v" ms; } || emit $w-$size hako "$v" ms
  done
done

# A sparse file out: its holes kept (SEEK_DATA/SEEK_HOLE), so 1 MiB of data
# crosses and lands, not 1 GiB (the tmpfs could not hold that).
$H exec sp sh -c 'truncate -s 1G /work/sparse && dd if=/dev/urandom of=/work/sparse bs=1M count=1 seek=512 conv=notrunc 2> /dev/null' || exit 1
cp --sparse=always "$s/data/sandboxes/sp/work/sparse" "$s/sparse" || exit 1
: > "$tmp/cps"; : > "$tmp/cph"
i=0
while [ $i -lt "$RUNS" ]; do
  t0=$(now); $H cp sp:/work/sparse "$s/out" || exit 1; t1=$(now)
  cp --sparse=always "$s/sparse" "$s/cp/sparse"; t2=$(now)
  ms "$t0" "$t1" >> "$tmp/cps"; ms "$t1" "$t2" >> "$tmp/cph"
  [ "$(du -k "$s/out" | cut -f1)" -lt 4096 ] || { echo "cp: the sparse file was written in full" >&2; exit 1; }
  rm -f "$s/out" "$s/cp/sparse"
  i=$((i + 1))
done
v=$(median < "$tmp/cps")
echo "cp out, 1 GiB sparse (1 MiB data): $v ms"
emit cp-sparse hako "$v" ms
v=$(median < "$tmp/cph")
echo "cp --sparse=always on the host: $v ms"
emit cp-sparse cp "$v" ms
