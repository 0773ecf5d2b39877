#!/bin/sh
# tests/bench/ports.sh: a published port (run -p, hako-port(8)) beside a
# direct loopback connection, on loopback only.
#
#   1. One download of SIZE bytes (default 1 GiB) from a tiny HTTP server
#      (tests/fixtures/http-serve.c, body generated, no disk): from a server
#      on the host's 127.0.0.1 (direct), and from the same server in a
#      host-profile sandbox through its published port (the forwarder's
#      splice relay between the host's namespace and the sandbox's).  Each
#      the median of REPEAT (default 3).
#   2. The latency a connection gains: LAT_N (default 1000) requests of 100
#      bytes, each on a new connection (Connection: close), timed by curl
#      itself (%{time_total}, one curl process for all of them): p50 and p99
#      direct and through the published port.  Rows n/a without curl or
#      with LAT_N=0.
#
# Environment: HAKO (default ../../hako from here), SIZE, REPEAT, LAT_N,
# PORT (the direct server's, default 18941), BENCH_FORMAT=lines (human
# output to stderr; stdout gets `BENCH ROW TOOL VALUE UNIT` lines: rows
# port-fwd (hako, direct; MiB/s), port-p50 and port-p99 (hako, direct; ms)).
# Needs root and a C compiler.
set -u

here=$(cd "$(dirname "$0")" && pwd)
HAKO=${HAKO:-$here/../../hako}
SIZE=${SIZE:-1073741824}
REPEAT=${REPEAT:-3}
LAT_N=${LAT_N:-1000}
PORT=${PORT:-18941}
if [ "${BENCH_FORMAT:-}" = lines ]; then exec 3>&1 1>&2; else exec 3> /dev/null; fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}"/hako-bench-ports.XXXXXX)
chmod 711 "$tmp"
H="$HAKO --root $tmp/state --data-root $tmp/data"
server=""
cleanup () {
  $H delete --force bench-ports >/dev/null 2>&1
  [ -n "$server" ] && kill "$server" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

mkdir "$tmp/bin"
chmod 755 "$tmp/bin"
cc -D_GNU_SOURCE -O2 -o "$tmp/bin/http-serve" "$here/../fixtures/http-serve.c" || exit 1
"$tmp/bin/http-serve" "$PORT" &
server=$!
$H run -d --profile host -v "$tmp/bin:/opt/bench:ro" -p 8000 bench-ports -- /opt/bench/http-serve 8000 || exit 1
published=$($H port bench-ports 8000) || exit 1

if command -v curl >/dev/null; then
  get () { curl -sf --noproxy '*' -o /dev/null "$1"; }
  client=curl
else
  get () { busybox wget -Y off -q -O /dev/null "$1"; }
  client="busybox wget"
fi
# Both servers answer before anything is timed (the sandbox's may still be starting).
for where in "127.0.0.1:$PORT" "$published"; do
  i=0
  until get "http://$where/bytes/1"; do
    i=$((i + 1))
    [ "$i" -lt 300 ] || { echo "no answer from $where"; exit 1; }
    sleep 0.1
  done
done

# ms: milliseconds since the epoch.
ms () { echo $(( $(date +%s%N) / 1000000 )); }
# median: the middle of the numbers on stdin.
median () { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
# timed WHERE: REPEAT downloads of SIZE bytes, the median time in ms.
timed () {
  local times="" i=0 t0 t1
  while [ "$i" -lt "$REPEAT" ]; do
    i=$((i + 1))
    t0=$(ms); get "http://$1/bytes/$SIZE" || return 1; t1=$(ms)
    times="$times $((t1 - t0))"
  done
  printf '%s\n' $times | median
}
direct=$(timed "127.0.0.1:$PORT") || { echo "direct download failed"; exit 1; }
fwd=$(timed "$published") || { echo "download through the published port failed"; exit 1; }

mib=$((SIZE / 1048576))
rate () { awk -v m="$mib" -v t="$1" 'BEGIN { printf "%.0f MiB/s (%d ms)", m / (t / 1000), t }'; }
echo "client: $client, $mib MiB, median of $REPEAT"
echo "direct:          $(rate "$direct")"
echo "published port:  $(rate "$fwd"), $(awk -v d="$direct" -v t="$fwd" 'BEGIN { printf "%.0f%%", 100 * d / t }') of direct"
# emit TOOL MS
emit () { awk -v n="$1" -v m="$mib" -v t="$2" -v c="$client" \
            'BEGIN { printf "BENCH port-fwd %s %.1f MiB/s %d MiB, %s\n", n, m / (t / 1000), m, c }' >&3; }
emit direct "$direct"
emit hako "$fwd"

# pcts: "P50 P99" in ms of the times (s) on stdin.
pcts () { sort -g | awk '{ v[NR] = $1 * 1000 } END {
  i50 = int(NR * 0.50 + 0.5); i99 = int(NR * 0.99 + 0.5); if (i50 < 1) i50 = 1; if (i99 < 1) i99 = 1
  printf "%.3f %.3f\n", v[i50], v[i99] }'; }
if [ "$client" = curl ] && [ "$LAT_N" -gt 0 ]; then
  lat () { curl -s --noproxy '*' -H 'Connection: close' -o /dev/null -w '%{time_total}\n' "http://$1/bytes/100?[1-$LAT_N]" | pcts; }
  d=$(lat "127.0.0.1:$PORT") || { echo "direct small requests failed"; exit 1; }
  h=$(lat "$published") || { echo "small requests through the published port failed"; exit 1; }
  set -- $d $h
  echo "small requests:  $LAT_N of 100 bytes, a new connection each: direct p50 $1 ms p99 $2 ms;" \
       "published p50 $3 ms p99 $4 ms (+$(awk -v a="$1" -v b="$3" 'BEGIN { printf "%.3f", b - a }') ms at p50)"
  note="$LAT_N requests of 100 B, a connection each, curl"
  echo "BENCH port-p50 direct $1 ms $note" >&3
  echo "BENCH port-p50 hako $3 ms $note" >&3
  echo "BENCH port-p99 direct $2 ms $note" >&3
  echo "BENCH port-p99 hako $4 ms $note" >&3
else
  for r in port-p50 port-p99; do
    echo "BENCH $r hako - - n/a (needs curl and LAT_N > 0)" >&3
    echo "BENCH $r direct - - n/a (needs curl and LAT_N > 0)" >&3
  done
fi
