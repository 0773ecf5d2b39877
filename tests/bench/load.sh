#!/bin/bash
# Load benchmark: N sandboxes (default 200), P at a time (default 8), each
# created, started, exec'd into once and deleted; prints the wall time, the
# time per sandbox, and checks nothing was left.
#   HAKO=path/to/hako tests/bench/load.sh [N] [P]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
HAKO=${HAKO:-$here/../../hako}
n=${1:-200} p=${2:-8}
work=$(mktemp -d /tmp/hako-load.XXXXXX)
chmod 711 "$work"
mount -t tmpfs -o mode=0711 hako-load "$work"
cleanup () { umount -l "$work" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
"$here/../fixtures/make-bundle.sh" "$work/bundle" runc > /dev/null
jq '.process.args = ["sleep", "1000"]' "$work/bundle/config.json" > "$work/c" && mv "$work/c" "$work/bundle/config.json"
H="$HAKO --root $work/state --data-root $work/data"
export H work
one () {
  id=ld$1
  $H create --bundle "$work/bundle" "$id" && $H start "$id" \
    && [ "$($H exec "$id" -- echo hi)" = hi ] && $H delete --force "$id"
}
export -f one
start=$(date +%s%N)
fails=0
seq "$n" | xargs -P "$p" -I{} bash -c "one {}" || fails=$?
ms=$(( ($(date +%s%N) - start) / 1000000 ))
left=$(ls -A "$work/state" 2>/dev/null | wc -l)
echo "load: $n sandboxes, $p in parallel: ${ms} ms in all, $((ms / n)) ms per sandbox; xargs status $fails; $left state dirs left"
[ "$fails" -eq 0 ] && [ "$left" -eq 0 ]
