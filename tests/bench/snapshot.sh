#!/bin/sh
# snapshot time against the size of the writable state (host profile /work:
# 10 MB and 200 MB of files, 100 files each), and branch creation time
# (create --from-snapshot of the 200 MB snapshot, then delete).
# Usage: tests/bench/snapshot.sh [HAKO]   (root; one hyperfine run each)
set -eu
HAKO=${1:-${HAKO:-./hako}}
T=$(mktemp -d /tmp/hako-bench-snap.XXXXXX)
chmod 711 "$T"
H="$HAKO --root $T/state --data-root $T/data"
trap '$H delete --force s10 >/dev/null 2>&1; $H delete --force s200 >/dev/null 2>&1; $H delete --force br >/dev/null 2>&1; rm -rf "$T"' EXIT
for mb in 10 200; do
  $H run --detach --profile host "s$mb" -- sleep 100000
  w="$T/data/sandboxes/s$mb/work"
  per=$((mb * 1024 / 100))
  for i in $(seq 100); do head -c "${per}k" /dev/urandom > "$w/f$i"; done
  chown -R --reference="$w" "$w"
done
sync
hyperfine --runs 5 --warmup 1 \
  --prepare "rm -rf $T/snap10 $T/snap200" \
  -n "snapshot 10 MB" "$H snapshot s10 $T/snap10" \
  -n "snapshot 200 MB" "$H snapshot s200 $T/snap200"
$H snapshot s200 "$T/base200"
$H snapshot s10 "$T/base10"
hyperfine --runs 5 --warmup 1 \
  -n "branch from 10 MB" "$H create --from-snapshot $T/base10 br && $H delete --force br" \
  -n "branch from 200 MB" "$H create --from-snapshot $T/base200 br && $H delete --force br" \
  -n "create+delete, host profile (baseline)" "$H create --profile host br && $H delete --force br"
