#!/bin/bash
# Stress for exec's setup under load: N rounds (default 500) of a timed exec
# (--timeout: joiner + subreaper) and an untimed one into one sandbox at
# once, while BUSY busy loops (default 2) take the CPUs.  Prints the
# failures; exits non-zero if there was one.  Not part of `make check`
# (exec.bats runs a bounded version).
#   HAKO=path/to/hako tests/bench/exec-race.sh [N] [BUSY]
set -u
here=$(cd "$(dirname "$0")" && pwd)
HAKO=${HAKO:-$here/../../hako}
n=${1:-500} busy=${2:-2}
work=$(mktemp -d /tmp/hako-race.XXXXXX)
chmod 711 "$work"
H="$HAKO --root $work/state --data-root $work/data"
loops=()
cleanup () {
  [ ${#loops[@]} -gt 0 ] && kill "${loops[@]}" 2>/dev/null
  $H delete --force race > /dev/null 2>&1
  rm -rf "$work"
}
trap cleanup EXIT
"$here/../fixtures/make-bundle.sh" "$work/bundle" runc > /dev/null
jq '.process.args = ["sleep", "1000"]' "$work/bundle/config.json" > "$work/c" && mv "$work/c" "$work/bundle/config.json"
$H run --detach --bundle "$work/bundle" race || exit 1
for i in $(seq "$busy"); do
  ( while :; do :; done ) &
  loops+=($!)
done
fails=0
start=$(date +%s%N)
for i in $(seq "$n"); do
  $H exec --timeout 20s race sleep 0.2 & timed=$!
  out=$($H exec race sh -c 'echo ok' 2>&1) && [ "$out" = ok ] || { fails=$((fails + 1)); echo "round $i, untimed: $out"; }
  wait $timed
  st=$?
  [ $st -eq 0 ] || { fails=$((fails + 1)); echo "round $i, timed: status $st"; }
done
ms=$(( ($(date +%s%N) - start) / 1000000 ))
echo "exec race: $n rounds of 2 concurrent execs, $busy busy loops: $fails failed, ${ms} ms"
[ "$fails" -eq 0 ]
