#!/bin/bash
# fork against the size of the writable state: a host-profile sandbox whose
# /work holds N MB (FORK_SIZES; 100 random files), forked into one child
# (`hako fork P C`: the freeze, the snapshot, the child's create and start)
# beside what branching cost before fork (`hako snapshot P DEST; hako create
# --from-snapshot DEST C; hako start C`: a copy out and a copy in).  For
# each, the host disk the child cost (KiB the data root and DEST grew by,
# synced) and, for fork, how long the parent stayed frozen (fork --format
# json's frozen_us).
# Usage: tests/bench/fork.sh [HAKO]   (root; hyperfine, jq)
# Environment: HAKO, FORK_SIZES (MB, default "10 1024"), RUNS (default 5),
# BENCH_FORMAT=lines (human output to stderr; stdout gets `BENCH KEY TOOL
# VALUE UNIT [NOTE]` lines: fork-<N>MB, fork-disk-<N>MB, fork-frozen-<N>MB).
set -eu
HAKO=${1:-${HAKO:-./hako}}
FORK_SIZES=${FORK_SIZES:-10 1024}
RUNS=${RUNS:-5}
if [ "${BENCH_FORMAT:-}" = lines ]; then exec 3>&1 1>&2; else exec 3> /dev/null; fi
T=$(mktemp -d "${TMPDIR:-/tmp}"/hako-bench-fork.XXXXXX)
chmod 711 "$T"
H="$HAKO --root $T/state --data-root $T/data"
cleanup () {
  local id
  for id in $(ls "$T/state" 2> /dev/null); do $H delete --force "$id" > /dev/null 2>&1 || true; done
  rm -rf "$T"
}
trap cleanup EXIT
emit () { echo "BENCH $*" >&3; echo "$*"; }
mech=$($H doctor --format json | jq -r .checks.fork.mechanism)
echo "fork mechanism here: $mech"
# KiB the host's disk holds under the data root and DEST (hard links once;
# not through the data dirs' mounts, whose files are in the images).
used_kib () { sync; du -x -k -s "$T/data" "$T/dest" 2> /dev/null | awk '{ s += $1 } END { print s + 0 }'; }

for mb in $FORK_SIZES; do
  p="p$mb"
  $H run --detach --profile host "$p" -- sleep 100000
  w="$T/data/sandboxes/$p/work"
  per=$((mb * 1024 / 100))
  for i in $(seq 100); do head -c "${per}k" /dev/urandom > "$w/f$i"; done
  chown -R --reference="$w" "$w"
  sync
  reset="$H delete --force c > /dev/null 2>&1; rm -rf $T/dest; sync"
  hyperfine --runs "$RUNS" --warmup 1 --prepare "$reset" --export-json "$T/f$mb.json" \
    -n "fork $mb MB" "$H fork $p c" \
    -n "snapshot+branch $mb MB" "$H snapshot $p $T/dest && $H create --from-snapshot $T/dest c < /dev/null && $H start c"
  jq -r --arg mb "$mb" --arg mech "$mech" '.results[] |
    "fork-\($mb)MB \(if (.command | startswith("fork")) then "hako" else "snapshot+branch" end) \(.median * 1000) ms" +
    (if (.command | startswith("fork")) then " (\($mech))" else "" end)' "$T/f$mb.json" |
    while read -r line; do emit "$line"; done
  # The freeze, RUNS times (its median); then the disk a child costs.
  : > "$T/frozen"
  for i in $(seq "$RUNS"); do
    eval "$reset"
    $H fork --format json "$p" c 2> /dev/null | jq .frozen_us >> "$T/frozen"
  done
  frozen=$(sort -n "$T/frozen" | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
  emit "fork-frozen-${mb}MB hako $(awk -v u="$frozen" 'BEGIN { printf "%.3f", u / 1000 }') ms (parent frozen; median of $RUNS)"
  eval "$reset"
  before=$(used_kib)
  $H fork "$p" c > /dev/null 2>&1
  emit "fork-disk-${mb}MB hako $(awk -v k="$(( $(used_kib) - before ))" 'BEGIN { printf "%.2f", k / 1024 }') MiB"
  eval "$reset"
  before=$(used_kib)
  $H snapshot "$p" "$T/dest"
  $H create --from-snapshot "$T/dest" c < /dev/null
  $H start c
  emit "fork-disk-${mb}MB snapshot+branch $(awk -v k="$(( $(used_kib) - before ))" 'BEGIN { printf "%.2f", k / 1024 }') MiB"
  eval "$reset"
  $H delete --force "$p"
done
