#!/bin/sh
# tests/bench/egress.sh: the egress proxy over HTTPS — its interception (TLS
# terminated and made again, each request checked) beside its opaque tunnel
# and beside a direct connection, on loopback only.
#
#   1. One download of SIZE bytes (default 1 GiB) from an HTTPS origin on
#      127.0.0.1 (tests/fixtures/egress-origin.py, its certificates made now
#      by tests/fixtures/egress-certs.sh): direct from the host; then from
#      inside a sandbox through its proxy, intercepted (a request rule names
#      the host) and as an opaque tunnel (a host rule only).  Each the
#      median of REPEAT (default 3) downloads; the goal: intercepted at
#      least 70% of direct.
#   2. The latency LAT_N (default 1000) small requests (100 bytes) gain,
#      each on a new connection (a CONNECT, a TLS handshake with the proxy,
#      the proxy's own with the origin, the request), timed by curl itself
#      (%{time_total}, one curl for all of them): p50 and p99 direct and
#      intercepted; the goal: at most 2 ms more at p50.
# Every client trusts one CA file only (the direct one the test CA, the
# sandbox's the sandbox's CA, taken from its bundle), so a client's loading
# of a 140-certificate bundle is not what is timed.
#
# Environment: HAKO (default ../../hako from here), SIZE, REPEAT, LAT_N,
# PORT (default 18943), BENCH_FORMAT=lines (human output to stderr; stdout
# gets `BENCH ROW TOOL VALUE UNIT` lines: rows egress-intercept and
# egress-tunnel (tools hako, direct; MiB/s), egress-p50 and egress-p99
# (hako, direct; ms)).  Needs root, curl, openssl and python3.
set -u

here=$(cd "$(dirname "$0")" && pwd)
HAKO=${HAKO:-$here/../../hako}
SIZE=${SIZE:-1073741824}
REPEAT=${REPEAT:-3}
LAT_N=${LAT_N:-1000}
PORT=${PORT:-18943}
if [ "${BENCH_FORMAT:-}" = lines ]; then exec 3>&1 1>&2; else exec 3> /dev/null; fi
for t in curl openssl /usr/bin/python3; do
  command -v "$t" > /dev/null || {
    echo "egress.sh: $t not installed"
    for r in egress-intercept egress-tunnel egress-p50 egress-p99; do
      echo "BENCH $r hako - - n/a ($t not installed)" >&3
      echo "BENCH $r direct - - n/a ($t not installed)" >&3
    done
    exit 0
  }
done
tmp=$(mktemp -d "${TMPDIR:-/tmp}"/hako-bench-egress.XXXXXX)
chmod 711 "$tmp"
H="$HAKO --root $tmp/state --data-root $tmp/data"
server=""
cleanup () {
  $H delete --force bench-egress > /dev/null 2>&1
  [ -n "$server" ] && kill "$server" 2> /dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

"$here/../fixtures/egress-certs.sh" "$tmp/certs" || exit 1
echo "127.0.0.1 api.test other.test" > "$tmp/hosts"
printf '{"egress": {"trust": "%s", "hosts": "%s"}}\n' "$tmp/certs/ca.pem" "$tmp/hosts" > "$tmp/node.json"
export HAKO_NODE_CONFIG="$tmp/node.json"
/usr/bin/python3 "$here/../fixtures/egress-origin.py" --port "$PORT" --cert "$tmp/certs/origin.pem" \
  --key "$tmp/certs/origin.key" > "$tmp/origin.out" 2>&1 &
server=$!
i=0
while ! grep -q ready "$tmp/origin.out" 2> /dev/null; do
  i=$((i + 1))
  [ "$i" -lt 100 ] || { echo "egress.sh: the origin did not start"; exit 1; }
  sleep 0.1
done

ms () { echo $(($(date +%s%N) / 1000000)); }
median () { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
direct_get="curl -s --cacert $tmp/certs/ca.pem --resolve api.test:$PORT:127.0.0.1 -o /dev/null"

times=""
i=0
while [ "$i" -lt "$REPEAT" ]; do
  i=$((i + 1))
  t0=$(ms)
  $direct_get "https://api.test:$PORT/bytes/$SIZE" || { echo "direct download failed"; exit 1; }
  t1=$(ms)
  times="$times $((t1 - t0))"
done
direct=$(printf '%s\n' $times | median)

$H run -d --allow "127.0.0.1:$PORT" --allow "GET https://api.test:$PORT/**" --allow "other.test:$PORT" \
  -v "$tmp/certs:/certs:ro" bench-egress -- sleep 3600 || exit 1
inside () { $H exec bench-egress -- sh -c "$1"; }
# The sandbox's own CA: the last certificate of its bundle.
inside "awk '/BEGIN CERT/ { c = \"\" } { c = c \$0 \"\\n\" } END { printf \"%s\", c }' /etc/ssl/certs/ca-certificates.crt > /tmp/ca.pem" \
  || exit 1
timed_inside () {
  inside "for i in \$(seq $REPEAT); do s=\$(date +%s%N); $1 > /dev/null || exit 1; e=\$(date +%s%N); echo \$(( (e - s) / 1000000 )); done"
}
intercept=$(timed_inside "curl -s --cacert /tmp/ca.pem -o /dev/null https://api.test:$PORT/bytes/$SIZE") \
  || { echo "intercepted download failed"; exit 1; }
intercept=$(echo "$intercept" | median)
tunnel=$(timed_inside "curl -s --cacert /certs/ca.pem -o /dev/null https://other.test:$PORT/bytes/$SIZE") \
  || { echo "tunnelled download failed"; exit 1; }
tunnel=$(echo "$tunnel" | median)

mib=$((SIZE / 1048576))
rate () { awk -v m="$mib" -v t="$1" 'BEGIN { printf "%.0f MiB/s (%d ms)", m / (t / 1000), t }'; }
ratio () { awk -v d="$direct" -v t="$1" 'BEGIN { printf "%.0f%%", 100 * d / t }'; }
echo "$mib MiB over HTTPS from 127.0.0.1:$PORT, curl, median of $REPEAT (a shared machine: see the load average)"
echo "direct:        $(rate "$direct")"
echo "intercepted:   $(rate "$intercept"), $(ratio "$intercept") of direct"
echo "opaque tunnel: $(rate "$tunnel"), $(ratio "$tunnel") of direct"
emit () { awk -v r="$1" -v n="$2" -v m="$mib" -v t="$3" \
            'BEGIN { printf "BENCH %s %s %.1f MiB/s %d MiB over HTTPS, curl\n", r, n, m / (t / 1000), m }' >&3; }
emit egress-intercept direct "$direct"
emit egress-intercept hako "$intercept"
emit egress-tunnel direct "$direct"
emit egress-tunnel hako "$tunnel"

pcts () { sort -g | awk '{ v[NR] = $1 * 1000 } END {
  i50 = int(NR * 0.50 + 0.5); i99 = int(NR * 0.99 + 0.5); if (i50 < 1) i50 = 1; if (i99 < 1) i99 = 1
  printf "%.3f %.3f\n", v[i50], v[i99] }'; }
[ "$LAT_N" -gt 0 ] || exit 0
lat="-s -H 'Connection: close' -o /dev/null -w '%{time_total}\n'"
small="https://api.test:$PORT/bytes/100?[1-$LAT_N]"
d=$(eval "$direct_get $lat '$small'" | pcts) || { echo "direct small requests failed"; exit 1; }
h=$(inside "curl --cacert /tmp/ca.pem $lat '$small'" | pcts) || { echo "intercepted small requests failed"; exit 1; }
set -- $d $h
echo "small requests: $LAT_N of 100 bytes, a new connection each: direct p50 $1 ms p99 $2 ms;" \
  "intercepted p50 $3 ms p99 $4 ms (+$(awk -v a="$1" -v b="$3" 'BEGIN { printf "%.3f", b - a }') ms at p50)"
note="$LAT_N HTTPS requests of 100 B, a connection each, curl"
echo "BENCH egress-p50 direct $1 ms $note" >&3
echo "BENCH egress-p50 hako $3 ms $note" >&3
echo "BENCH egress-p99 direct $2 ms $note" >&3
echo "BENCH egress-p99 hako $4 ms $note" >&3
