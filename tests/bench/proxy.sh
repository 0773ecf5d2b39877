#!/bin/sh
# tests/bench/proxy.sh: the allowlist proxy's throughput and concurrency, on
# loopback only.
#
#   1. One download of SIZE bytes (default 1 GiB) from a tiny HTTP server on
#      127.0.0.1 (tests/fixtures/http-serve.c, body generated, no disk):
#      direct from the host, then from inside an allowlist sandbox through
#      its proxy, plain HTTP and CONNECT.  Prints each rate and the proxy's
#      ratio to direct (the goal: at least 70%); each the median of REPEAT
#      (default 3) downloads.
#   2. The latency a small request gains: LAT_N (default 1000) requests of
#      100 bytes, each on a new connection (Connection: close), timed by
#      curl itself (%{time_total}, one curl process for all of them, so no
#      process start is counted): p50 and p99 direct and through the proxy.
#      Skipped (rows n/a) without curl or with LAT_N=0.
#   3. CONNS (default 200) concurrent requests of 1 MiB each through one
#      proxy; every one must arrive whole.
#
# Client: curl when installed (it honours NO_PROXY=127.0.0.1, so the proxy
# is named explicitly), else busybox wget.  PIN (below): where the server,
# the client and the proxy run.  Environment: HAKO (the binary;
# default ../../hako from here), SIZE, CONNS (0 skips part 2), PORT (default
# 18931), BENCH_FORMAT=lines (human output to stderr; stdout gets
# `BENCH ROW TOOL VALUE UNIT` lines: rows proxy-http and proxy-connect
# (tools hako, direct; MiB/s), proxy-p50 and proxy-p99 (hako, direct; ms)).  Needs root and a C compiler.
set -u

here=$(cd "$(dirname "$0")" && pwd)
HAKO=${HAKO:-$here/../../hako}
SIZE=${SIZE:-1073741824}
CONNS=${CONNS:-200}
REPEAT=${REPEAT:-3}
LAT_N=${LAT_N:-1000}
PORT=${PORT:-18931}
if [ "${BENCH_FORMAT:-}" = lines ]; then exec 3>&1 1>&2; else exec 3> /dev/null; fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}"/hako-bench-proxy.XXXXXX)
chmod 711 "$tmp"
H="$HAKO --root $tmp/state --data-root $tmp/data"
server=""
cleanup () {
  $H delete --force bench-proxy >/dev/null 2>&1
  [ -n "$server" ] && kill "$server" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

# PIN=1: the proxy on a CPU of its own, away from the server and the
# client, as far as the CPUs go — with 3 or more, the server on CPU 0, the
# client on 1, the proxy on 2; with 2, the server and the client share CPU
# 0 and the proxy has CPU 1 — and the direct download pinned as its client
# and server are, so the ratio is the relay's cost, not the scheduler's
# luck on a machine shared three ways.  The default: pinned with 3 CPUs or
# more; with 2 not (a client and server sharing one CPU move loopback bytes
# faster than on two, which flatters direct), PIN=1 forces it.
ncpu=$(nproc)
PIN=${PIN:-$([ "$ncpu" -ge 3 ] && echo 1 || echo 0)}
command -v taskset > /dev/null || PIN=0
[ "$ncpu" -ge 2 ] || PIN=0
on_server="" on_client="" proxy_cpu=""
if [ "$PIN" = 1 ]; then
  if [ "$ncpu" -ge 3 ]; then on_server="taskset -c 0" on_client="taskset -c 1" proxy_cpu=2
  else on_server="taskset -c 0" on_client="taskset -c 0" proxy_cpu=1; fi
fi
cc -D_GNU_SOURCE -O2 -o "$tmp/http-serve" "$here/../fixtures/http-serve.c" || exit 1
$on_server "$tmp/http-serve" "$PORT" &
server=$!
sleep 0.3
url="http://127.0.0.1:$PORT/bytes/$SIZE"

if command -v curl >/dev/null; then
  get_direct="curl -s --noproxy 127.0.0.1 -o /dev/null -w %{size_download} $url"
  get_proxy="curl -s --noproxy '' -x http://127.0.0.1:3128 -o /dev/null -w %{size_download} $url"
  get_tunnel="curl -s --noproxy '' -p -x http://127.0.0.1:3128 -o /dev/null -w %{size_download} $url"
  client=curl
else
  get_direct="busybox wget -q -O /dev/null $url"
  get_proxy="busybox wget -q -O /dev/null $url"
  get_tunnel=""
  client="busybox wget"
fi

# ms: milliseconds since the epoch.
ms () { echo $(( $(date +%s%N) / 1000000 )); }

# median: the middle of the numbers on stdin.
median () { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

times=""
i=0
while [ "$i" -lt "$REPEAT" ]; do
  i=$((i + 1))
  t0=$(ms); $on_client $get_direct >/dev/null || { echo "direct download failed"; exit 1; }; t1=$(ms)
  times="$times $((t1 - t0))"
done
direct=$(printf '%s\n' $times | median)

$H run -d --allow "127.0.0.1:$PORT" bench-proxy -- sleep 600 || exit 1
if [ -n "$proxy_cpu" ]; then
  taskset -p -c "$proxy_cpu" "$(cut -d' ' -f1 "$tmp/state/bench-proxy/proxy.pid")" > /dev/null || exit 1
fi
inside () { $on_client $H exec bench-proxy -- sh -c "$1"; }
# timed_inside CMD: REPEAT downloads inside, one time in ms per line.
timed_inside () {
  inside "for i in \$(seq $REPEAT); do s=\$(date +%s%N); $1 >/dev/null || exit 1; e=\$(date +%s%N); echo \$(( (e - s) / 1000000 )); done"
}
proxy=$(timed_inside "$get_proxy") || { echo "download through the proxy failed"; exit 1; }
proxy=$(echo "$proxy" | median)
tunnel=""
[ -n "$get_tunnel" ] && { tunnel=$(timed_inside "$get_tunnel") || { echo "CONNECT download failed"; exit 1; }; }
[ -n "$tunnel" ] && tunnel=$(echo "$tunnel" | median)

mib=$((SIZE / 1048576))
rate () { awk -v m="$mib" -v t="$1" 'BEGIN { printf "%.0f MiB/s (%d ms)", m / (t / 1000), t }'; }
ratio () { awk -v d="$direct" -v t="$1" 'BEGIN { printf "%.0f%%", 100 * d / t }'; }
pinned=""
[ -n "$proxy_cpu" ] && pinned=", proxy pinned to CPU $proxy_cpu"
echo "client: $client, $mib MiB from 127.0.0.1:$PORT, median of $REPEAT$pinned"
echo "direct:          $(rate "$direct")"
echo "proxy (HTTP):    $(rate "$proxy"), $(ratio "$proxy") of direct"
[ -n "$tunnel" ] && echo "proxy (CONNECT): $(rate "$tunnel"), $(ratio "$tunnel") of direct"
# emit ROW TOOL MS
emit () { awk -v r="$1" -v n="$2" -v m="$mib" -v t="$3" -v c="$client$pinned" \
            'BEGIN { printf "BENCH %s %s %.1f MiB/s %d MiB, %s\n", r, n, m / (t / 1000), m, c }' >&3; }
emit proxy-http direct "$direct"
emit proxy-http hako "$proxy"
emit proxy-connect direct "$direct"
if [ -n "$tunnel" ]; then emit proxy-connect hako "$tunnel"
else echo "BENCH proxy-connect hako - - n/a (busybox wget has no CONNECT mode; install curl)" >&3; fi

# Latency: LAT_N small requests, a new connection each; curl prints each
# one's total time in seconds.
# pcts: "P50 P99" in ms of the times (s) on stdin.
pcts () { sort -g | awk '{ v[NR] = $1 * 1000 } END {
  i50 = int(NR * 0.50 + 0.5); i99 = int(NR * 0.99 + 0.5); if (i50 < 1) i50 = 1; if (i99 < 1) i99 = 1
  printf "%.3f %.3f\n", v[i50], v[i99] }'; }
small="http://127.0.0.1:$PORT/bytes/100?[1-$LAT_N]"
if [ "$client" = curl ] && [ "$LAT_N" -gt 0 ]; then
  lat="-s -H 'Connection: close' -o /dev/null -w '%{time_total}\n'"
  d=$(eval "curl --noproxy 127.0.0.1 $lat '$small'" | pcts) || { echo "direct small requests failed"; exit 1; }
  h=$(inside "curl --noproxy '' -x http://127.0.0.1:3128 $lat '$small'" | pcts) \
    || { echo "small requests through the proxy failed"; exit 1; }
  set -- $d $h
  echo "small requests:  $LAT_N of 100 bytes, new connection each: direct p50 $1 ms p99 $2 ms;" \
       "proxy p50 $3 ms p99 $4 ms (+$(awk -v a="$1" -v b="$3" 'BEGIN { printf "%.3f", b - a }') ms at p50)"
  note="$LAT_N requests of 100 B, a connection each, curl"
  echo "BENCH proxy-p50 direct $1 ms $note" >&3
  echo "BENCH proxy-p50 hako $3 ms $note" >&3
  echo "BENCH proxy-p99 direct $2 ms $note" >&3
  echo "BENCH proxy-p99 hako $4 ms $note" >&3
else
  for r in proxy-p50 proxy-p99; do
    echo "BENCH $r hako - - n/a (needs curl and LAT_N > 0)" >&3
    echo "BENCH $r direct - - n/a (needs curl and LAT_N > 0)" >&3
  done
fi
[ "$CONNS" -gt 0 ] || exit 0

# Concurrency: CONNS clients at once, 1 MiB each, counted inside.
one="http://127.0.0.1:$PORT/bytes/1048576"
if [ "$client" = curl ]; then
  fetch="curl -s --noproxy '' -x http://127.0.0.1:3128 -o /dev/null -w '%{size_download}\n' $one"
else
  fetch="busybox wget -q -O - $one | wc -c"
fi
out=$(inside "i=0; while [ \$i -lt $CONNS ]; do ($fetch) > /tmp/c.\$i 2>&1 & i=\$((i + 1)); done; wait
  cat /tmp/c.* | grep -cx 1048576")
echo "concurrent:      $out of $CONNS requests of 1 MiB arrived whole"
[ "$out" = "$CONNS" ]
