#!/bin/sh
# snapshot --image time against the size of the writable layer: image
# sandboxes with 10 MB and 100 MB of random files (100 files each; random,
# so gzip's worst case), committed gzip-compressed (the default) and
# uncompressed.  Each run commits anew: the image of the run before is
# removed (its layer blob and directory with it) in --prepare.
# Usage: tests/bench/snapshot_image.sh [HAKO]   (root; one hyperfine run)
set -eu
HAKO=${1:-${HAKO:-./hako}}
here=$(cd "$(dirname "$0")" && pwd)
T=$(mktemp -d /tmp/hako-bench-snapimg.XXXXXX)
chmod 711 "$T"
H="$HAKO --root $T/state --data-root $T/data"
trap '$H delete --force s10 >/dev/null 2>&1; $H delete --force s100 >/dev/null 2>&1; rm -rf "$T"' EXIT
"$here/../fixtures/images.sh" busybox "$T/img" >/dev/null
echo '{"default": [{"type": "insecureAcceptAnything"}]}' > "$T/accept.json"
$H image import --policy "$T/accept.json" "$T/img/layout" --name busybox >/dev/null
for mb in 10 100; do
  $H run --detach --image busybox "s$mb" -- sleep 100000
  $H exec "s$mb" sh -c "mkdir -p /opt/data && for i in \$(seq 100); do head -c $((mb * 1024 / 100))k /dev/urandom > /opt/data/f\$i; done"
done
sync
hyperfine --runs 3 \
  --prepare "$H image rm c:10 >/dev/null 2>&1; $H image rm c:100 >/dev/null 2>&1; sync; true" \
  -n "snapshot --image, 10 MB layer, gzip" "$H snapshot --image c:10 s10" \
  -n "snapshot --image, 100 MB layer, gzip" "$H snapshot --image c:100 s100" \
  -n "snapshot --image, 10 MB layer, none" "$H snapshot --compression none --image c:10 s10" \
  -n "snapshot --image, 100 MB layer, none" "$H snapshot --compression none --image c:100 s100"
