#!/bin/sh
# snapshot time against the size of the writable state (host profile /work:
# 10 MB and 200 MB of files, 100 files each), beside a plain copy of the
# same directory (`tar -cf - . | tar -xpf -`, what hako's libarchive copy
# does without the freeze and the metadata), and branch creation time
# (create --from-snapshot, then delete).
# Usage: tests/bench/snapshot.sh [HAKO]   (root; hyperfine)
# Environment: HAKO, SNAP_SIZES (MB, default "10 200"), RUNS (default 5),
# BENCH_FORMAT=lines (human output to stderr; stdout gets
# `BENCH snapshot-<N>MB TOOL VALUE ms` lines; the branch timings are left out).
set -eu
HAKO=${1:-${HAKO:-./hako}}
SNAP_SIZES=${SNAP_SIZES:-10 200}
RUNS=${RUNS:-5}
lines=false
if [ "${BENCH_FORMAT:-}" = lines ]; then lines=true; exec 3>&1 1>&2; else exec 3> /dev/null; fi
T=$(mktemp -d "${TMPDIR:-/tmp}"/hako-bench-snap.XXXXXX)
chmod 711 "$T"
H="$HAKO --root $T/state --data-root $T/data"
cleanup () {
  for mb in $SNAP_SIZES; do $H delete --force "s$mb" > /dev/null 2>&1 || true; done
  $H delete --force br > /dev/null 2>&1 || true
  rm -rf "$T"
}
trap cleanup EXIT
set --
for mb in $SNAP_SIZES; do
  $H run --detach --profile host "s$mb" -- sleep 100000
  w="$T/data/sandboxes/s$mb/work"
  per=$((mb * 1024 / 100))
  for i in $(seq 100); do head -c "${per}k" /dev/urandom > "$w/f$i"; done
  chown -R --reference="$w" "$w"
  set -- "$@" -n "snapshot $mb MB" "$H snapshot s$mb $T/snap$mb" \
    -n "tar copy $mb MB" "mkdir $T/tar$mb && tar -C $w -cf - . | tar -C $T/tar$mb -xpf -"
done
sync
prep="rm -rf"
for mb in $SNAP_SIZES; do prep="$prep $T/snap$mb $T/tar$mb"; done
hyperfine --runs "$RUNS" --warmup 1 --prepare "$prep" --export-json "$T/snap.json" "$@"
jq -r '.results[] | .command as $c | ($c | split(" ")) as $w
       | "BENCH snapshot-\($w[-2])MB \(if $w[0] == "snapshot" then "hako" else "tar" end) \(.median * 1000) ms"' \
  "$T/snap.json" >&3
$lines && exit 0
set -- $SNAP_SIZES
small=$1
shift $(($# - 1))
large=$1
$H snapshot "s$large" "$T/base$large"
[ "$small" = "$large" ] || $H snapshot "s$small" "$T/base$small"
hyperfine --runs "$RUNS" --warmup 1 \
  -n "branch from $small MB" "$H create --from-snapshot $T/base$small br && $H delete --force br" \
  -n "branch from $large MB" "$H create --from-snapshot $T/base$large br && $H delete --force br" \
  -n "create+delete, host profile (baseline)" "$H create --profile host br && $H delete --force br"
