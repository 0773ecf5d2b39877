#!/usr/bin/env bats
# Network policy: none, host and allowlist (the proxy), end to end.  Every
# byte stays on the host's loopback or in the sandboxes' own namespaces:
# two HTTP servers on 127.0.0.1 ports A and B and a UDP listener on port U,
# all in the host's netns.

load helpers
bats_require_minimum_version 1.5.0

setup_file () {
  hako_setup_file
  local base=$((20000 + RANDOM % 20000))
  export PORT_A=$base PORT_B=$((base + 1)) PORT_U=$((base + 2)) PORT_K=$((base + 3))
  export WWW_A="$BATS_FILE_TMPDIR/www-a" WWW_B="$BATS_FILE_TMPDIR/www-b"
  export UDP_GOT="$BATS_FILE_TMPDIR/udp-got"
  mkdir -p "$WWW_A" "$WWW_B"
  echo served-by-A > "$WWW_A/index.html"
  echo served-by-B > "$WWW_B/index.html"
  busybox httpd -f -p "127.0.0.1:$PORT_A" -h "$WWW_A" 3>&- &
  echo $! > "$BATS_FILE_TMPDIR/httpd-a.pid"
  busybox httpd -f -p "127.0.0.1:$PORT_B" -h "$WWW_B" 3>&- &
  echo $! > "$BATS_FILE_TMPDIR/httpd-b.pid"
  cc -o "$BATS_FILE_TMPDIR/udp-listen" "$fixtures/udp-listen.c"
  cc -D_GNU_SOURCE -o "$BATS_FILE_TMPDIR/http-serve" "$fixtures/http-serve.c"
  "$BATS_FILE_TMPDIR/http-serve" "$PORT_K" 3>&- &
  echo $! > "$BATS_FILE_TMPDIR/http-serve.pid"
  "$BATS_FILE_TMPDIR/udp-listen" "$PORT_U" "$UDP_GOT" 3>&- &
  echo $! > "$BATS_FILE_TMPDIR/udp.pid"
  local i
  for i in $(seq 50); do
    busybox wget -q -O /dev/null "http://127.0.0.1:$PORT_A/" 2>/dev/null \
      && busybox wget -q -O /dev/null "http://127.0.0.1:$PORT_B/" 2>/dev/null && break
    sleep 0.1
  done
}

teardown_file () {
  local f
  for f in httpd-a httpd-b udp http-serve; do
    kill "$(cat "$BATS_FILE_TMPDIR/$f.pid")" 2>/dev/null || true
  done
}

setup () { hako_setup; rm -f "$UDP_GOT"; }
teardown () { hako_teardown; }

# send_udp: the command that sends one datagram to the host's listener
# (bash's /dev/udp: no extra tool needed inside).
send_udp='echo leaked > /dev/udp/127.0.0.1/'

# proxy_of ID: the proxy's pid from the state dir.
proxy_of () {
  cut -d' ' -f1 "$STATE/$1/proxy.pid"
}

# serve_and_fetch PORT: what a sandbox runs to start a server on its own
# 127.0.0.1:PORT and fetch from it (polling until it answers).
serve_and_fetch () {
  echo "(busybox httpd -p 127.0.0.1:$1 -h /etc || exit 9
    $(until_listening "$1") || exit 7
    busybox wget -Y off -q -O- http://127.0.0.1:$1/group 2>/dev/null | head -1 | grep . && exit 0; exit 8)"
}

# until_listening PORT: a shell loop for inside a sandbox that returns once
# its network namespace has a TCP socket listening on 127.0.0.1:PORT (the
# kernel's table, /proc/net/tcp), or fails after 30 s: a wait on the event
# itself, not a count of retries that a loaded machine outlasts.
until_listening () {
  local hex
  hex=$(printf '%04X' "$1")
  echo "for i in \$(seq 600); do grep -q ':$hex 00000000:0000 0A' /proc/net/tcp && break; sleep 0.05; done; grep -q ':$hex 00000000:0000 0A' /proc/net/tcp"
}

@test "none: only lo; the host's servers are unreachable by TCP and UDP; lo inside works" {
  cd "$TEST_ROOT"
  run $H run --rm --network none nn -- bash -c "
    busybox wget -q -O- http://127.0.0.1:$PORT_A/ 2>&1; echo tcp=\$?
    $send_udp$PORT_U; sleep 0.3
    $(serve_and_fetch 8000); echo lo=\$?
    if [ -x /usr/bin/python3 ]; then /usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind((\"127.0.0.1\", 8002)); s.listen(); socket.create_connection((\"127.0.0.1\", 8002)); print(\"py=ok\")'; else echo py=ok; fi"
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *"tcp=1"* ]]
  [[ "$output" != *"served-by-A"* ]]
  # Its own loopback works, Landlock or not: the netns leads nowhere else.
  [[ "$output" == *"root:x:0:"*"lo=0"*"py=ok"* ]]
  [[ "$output" != *"Permission denied"* ]]
  sleep 0.3
  [ ! -s "$UDP_GOT" ]
  [ ! -e "$STATE/nn" ]
  # A spec's port lists still apply: a server and a client on a port it grants.
  mkdir "$TEST_ROOT/lo"
  $H spec --profile host --bundle "$TEST_ROOT/lo"
  edit_config "$TEST_ROOT/lo" '.sandbox.landlock.tcp_bind = [8000] | .sandbox.landlock.tcp_connect = [8000]
    | .process.args = ["sh", "-c", "mkdir /tmp/www && echo inside > /tmp/www/index.html && busybox httpd -p 127.0.0.1:8000 -h /tmp/www && sleep 0.2 && busybox wget -q -O- http://127.0.0.1:8000/"]'
  run $H run --rm --bundle "$TEST_ROOT/lo" nl
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *"inside"* ]]
}

@test "none and allowlist, default profile (Landlock derive): a server and a client on the sandbox's own 127.0.0.1" {
  [ "$($HAKO features | jq -r '.annotations["io.hako.landlock.abi"]')" -ge 6 ] \
    || skip "the default profile needs Landlock ABI 6"
  local b="$TEST_ROOT/def"
  mkdir "$b"
  ln -s "$BUNDLE_DIR/rootfs" "$b/rootfs"
  $H spec --profile default --bundle "$b"
  [ "$(jq -r '.sandbox.landlock.derive' "$b/config.json")" = true ]
  run $H run --rm --bundle "$b" dn -- sh -c "$(serve_and_fetch 8000) || exit \$?
    echo hi | nc -l -p 9000 127.0.0.1 & $(until_listening 9000) && nc 127.0.0.1 9000 </dev/null"
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *"root:x:0:"*"hi"* ]]
  # allowlist: the same, with the proxy's port still reachable.
  run $H run --rm --bundle "$b" --allow "127.0.0.1:$PORT_A" da -- sh -c "$(serve_and_fetch 8001) || exit \$?
    printf 'GET http://127.0.0.1:$PORT_A/ HTTP/1.0\r\n\r\n' | nc 127.0.0.1 3128"
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *"root:x:0:"*"served-by-A"* ]]
}

@test "host: A and B are reachable, and UDP arrives" {
  cd "$TEST_ROOT"
  run $H run --rm --network host hh -- bash -c "
    busybox wget -q -O- http://127.0.0.1:$PORT_A/; busybox wget -q -O- http://127.0.0.1:$PORT_B/
    $send_udp$PORT_U"
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *"served-by-A"*"served-by-B"* ]]
  for i in $(seq 20); do [ -s "$UDP_GOT" ] && break; sleep 0.1; done
  grep -q leaked "$UDP_GOT"
}

@test "allowlist: A through the proxy (HTTP and CONNECT), B refused with 403, no direct way out" {
  cd "$TEST_ROOT"
  $H run -d --network allowlist --allow "127.0.0.1:$PORT_A" al -- sleep 60
  run $H exec al -- bash -c "
    echo proxy=\$http_proxy
    busybox wget -q -O- http://127.0.0.1:$PORT_A/
    busybox wget -q -O- http://127.0.0.1:$PORT_B/ 2>&1; echo b=\$?
    printf 'CONNECT 127.0.0.1:$PORT_A HTTP/1.1\r\nHost: 127.0.0.1:$PORT_A\r\n\r\nGET / HTTP/1.0\r\n\r\n' \
      | busybox nc 127.0.0.1 3128
    printf 'CONNECT 127.0.0.1:$PORT_B HTTP/1.1\r\n\r\n' | busybox nc 127.0.0.1 3128
    busybox nc -w 2 127.0.0.1 $PORT_A </dev/null 2>&1; echo direct=\$?
    $send_udp$PORT_U; echo udp=\$?"
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *"proxy=http://127.0.0.1:3128"* ]]
  [[ "$output" == *"served-by-A"* ]]
  [[ "$output" == *"403 Forbidden"* ]]
  [[ "$output" == *"b=1"* ]]
  [[ "$output" == *"HTTP/1.1 200 Connection established"*"200 OK"*"served-by-A"* ]]
  [[ "$output" == *"127.0.0.1:$PORT_B is not in the sandbox's network allow-list"* ]]
  [[ "$output" != *"served-by-B"* ]]
  [[ "$output" == *"direct=1"* ]]
  sleep 0.3
  [ ! -s "$UDP_GOT" ]
  # Every decision is a JSON line in the state dir.
  jq -s -e "any(.verdict == \"allow\" and .target == \"127.0.0.1:$PORT_A\" and .time)" \
    "$STATE/al/proxy.log"
  jq -s -e "any(.verdict == \"deny\" and .target == \"127.0.0.1:$PORT_B\" and .method == \"CONNECT\")" \
    "$STATE/al/proxy.log"
}

@test "allowlist: keep-alive — sequential requests on one client connection, then another host" {
  cd "$TEST_ROOT"
  run $H run --rm --allow "127.0.0.1:$PORT_A" --allow "127.0.0.1:$PORT_K" ka -- bash -c "
    { printf 'GET http://127.0.0.1:$PORT_K/count HTTP/1.1\r\nHost: x\r\n\r\n'; sleep 0.3
      printf 'GET http://127.0.0.1:$PORT_K/count HTTP/1.1\r\nHost: x\r\n\r\n'; sleep 0.3
      printf 'GET http://127.0.0.1:$PORT_A/ HTTP/1.1\r\nHost: x\r\n\r\n'; sleep 0.3; } \
      | busybox nc 127.0.0.1 3128"
  echo "$output"
  [ "$status" -eq 0 ]
  # req-2: the second request reached the same upstream connection.
  [[ "$output" == *"req-1"*"req-2"*"served-by-A"* ]]
}

@test "allowlist: several MiB down and up, plain HTTP and CONNECT, arrive byte-exact through the splice path" {
  command -v curl > /dev/null || skip "curl not installed"
  cd "$TEST_ROOT"
  # 6 MiB and 7 bytes of a fixed pseudo-random sequence: more than one
  # grown pipe's worth, and not a multiple of a page.
  local n=6291463 url="http://127.0.0.1:$PORT_K" want_sha want_sum
  want_sha=$(curl -sf --noproxy '*' "$url/pattern/$n" | sha256sum | cut -d' ' -f1)
  want_sum=$(curl -sf --noproxy '*' "$url/pattern/$n" | curl -sf --noproxy '*' -H 'Expect:' --data-binary @- "$url/sum")
  [[ "$want_sum" == "$n "* ]]
  run $H run --rm --allow "127.0.0.1:$PORT_K" big -- bash -c "
    p () { curl --noproxy '' -x http://127.0.0.1:3128 -sf \"\$@\"; }
    p $url/pattern/$n | sha256sum | sed 's/ .*/ down-http/'
    p -p $url/pattern/$n | sha256sum | sed 's/ .*/ down-connect/'
    p -o /tmp/p $url/pattern/$n
    echo \$(p -H 'Expect:' --data-binary @/tmp/p $url/sum) up-http
    echo \$(p -p -H 'Expect:' --data-binary @/tmp/p $url/sum) up-connect"
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *"$want_sha down-http"* ]]
  [[ "$output" == *"$want_sha down-connect"* ]]
  [[ "$output" == *"$want_sum up-http"* ]]
  [[ "$output" == *"$want_sum up-connect"* ]]
}

@test "allowlist: after a spliced request body, the next request on the connection is parsed and a denied host refused" {
  command -v curl > /dev/null || skip "curl not installed"
  cd "$TEST_ROOT"
  local n=3145731 url="http://127.0.0.1:$PORT_K" want_sum
  want_sum=$(curl -sf --noproxy '*' "$url/pattern/$n" | curl -sf --noproxy '*' -H 'Expect:' --data-binary @- "$url/sum")
  [[ "$want_sum" == "$n "* ]]
  $H run -d --allow "127.0.0.1:$PORT_K" ka2 -- sleep 60
  # One upload and its answer; then a second upload followed at once by a
  # request to B in the same stream: the splice must stop at the body's
  # last byte, and B's head be checked.  (The second upload's answer may be
  # cut short: switching hosts closes the upstream, a limit runtime/proxy/proxy.c
  # states.)
  run $H exec ka2 -- bash -c "
    curl --noproxy '' -x http://127.0.0.1:3128 -sf -o /tmp/p $url/pattern/$n || exit 7
    post () { printf 'POST $url/sum HTTP/1.1\r\nHost: x\r\nContent-Length: $n\r\n\r\n'; cat /tmp/p; }
    { post; sleep 1; post
      printf 'GET http://127.0.0.1:$PORT_B/ HTTP/1.1\r\nHost: x\r\n\r\n'; sleep 0.5
      printf 'GET $url/count HTTP/1.1\r\nHost: x\r\n\r\n'; sleep 0.5; } \
      | busybox nc 127.0.0.1 3128"
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *"$want_sum"*"403 Forbidden"* ]]
  [[ "$output" == *"127.0.0.1:$PORT_B is not in the sandbox's network allow-list"* ]]
  [[ "$output" != *"served-by-B"* ]]
  # The refusal closes the connection: the request after it is not sent.
  [[ "$output" != *"req-"* ]]
  jq -s -e "any(.verdict == \"deny\" and .target == \"127.0.0.1:$PORT_B\" and .method == \"GET\")" \
    "$STATE/ka2/proxy.log"
}

@test "allowlist: a listed name that resolves to loopback is refused unless the address is listed" {
  cd "$TEST_ROOT"
  run $H run --rm --allow "localhost:$PORT_A" rb -- \
    busybox wget -q -O- "http://localhost:$PORT_A/"
  echo "$output"
  [ "$status" -ne 0 ]
  [[ "$output" == *"403"* ]]
  [[ "$output" != *"served-by-A"* ]]
  run $H run --rm --allow "localhost:$PORT_A" --allow "127.0.0.1:$PORT_A" rb2 -- \
    busybox wget -q -O- "http://localhost:$PORT_A/"
  [ "$status" -eq 0 ]
  [[ "$output" == *"served-by-A"* ]]
}

@test "allowlist: the reason says why, and an unlisted name is not even resolved" {
  cd "$TEST_ROOT"
  $H run -d --allow "localhost:$PORT_A" rs -- sleep 60
  run $H exec rs -- sh -c "
    printf 'GET http://localhost:$PORT_A/ HTTP/1.1\r\n\r\n' | busybox nc 127.0.0.1 3128
    printf 'GET http://unlisted.invalid/ HTTP/1.1\r\n\r\n' | busybox nc 127.0.0.1 3128"
  echo "$output"
  [[ "$output" == *"localhost resolves to 127.0.0.1: a loopback address (the host's own services), which no rule names"* ]]
  [[ "$output" == *"unlisted.invalid:80 is not in the sandbox's network allow-list"* ]]
  # Bounded and strict: a 20 KiB head, a request that is not a proxy request.
  run $H exec rs -- bash -c "
    big=\$(head -c 20000 /dev/zero | tr '\\0' a)
    printf 'GET http://localhost:$PORT_A/ HTTP/1.1\r\nX: %s\r\n\r\n' \$big | busybox nc 127.0.0.1 3128 | head -1
    printf 'GET / HTTP/1.1\r\nHost: localhost\r\n\r\n' | busybox nc 127.0.0.1 3128 | head -1"
  echo "$output"
  [[ "$output" == *"431 Request Header Fields Too Large"*"400 Bad Request"* ]]
}

@test "allowlist: run --rm keeps the proxy log in <data-root>/logs, and nothing else" {
  cd "$TEST_ROOT"
  run $H run --rm --allow "127.0.0.1:$PORT_A" pr -- sh -c "
    busybox wget -q -O /dev/null http://127.0.0.1:$PORT_A/; busybox wget -q -O /dev/null http://127.0.0.1:$PORT_B/; true"
  echo "$output"
  [ "$status" -eq 0 ]
  [ ! -e "$STATE/pr" ]
  [ ! -e "$DATA/sandboxes/pr" ]
  log="$DATA/logs/pr.proxy.log"
  [ "$(stat -c %a "$log")" = 600 ]
  jq -s -e "any(.verdict == \"allow\" and .target == \"127.0.0.1:$PORT_A\")" "$log"
  jq -s -e "any(.verdict == \"deny\" and .target == \"127.0.0.1:$PORT_B\")" "$log"
  # The next --rm run of that id replaces it; another mode keeps none.
  $H run --rm --allow "127.0.0.1:$PORT_A" pr -- true
  [ ! -s "$log" ] || ! grep -q "$PORT_B" "$log" || false
  $H run --rm --network none pn -- true
  [ ! -e "$DATA/logs/pn.proxy.log" ]
}

@test "allowlist: state shows the proxy; it is not in the sandbox; delete leaves no proxy and no socket" {
  cd "$TEST_ROOT"
  $H run -d --allow "127.0.0.1:$PORT_A" lc -- sleep 60
  pp=$(proxy_of lc)
  [ "$($H state lc | jq -r .proxy_pid)" = "$pp" ]
  # Outside the sandbox: the host's network, no sandbox cgroup, unprivileged.
  [ "$(readlink /proc/$pp/ns/net)" = "$(readlink /proc/self/ns/net)" ]
  sbx=$($H state lc | jq -r .pid)
  [ "$(readlink /proc/$pp/ns/net)" != "$(readlink /proc/$sbx/ns/net)" ]
  ! grep -q hako- /proc/$pp/cgroup || [ "$(grep hako- /proc/$pp/cgroup)" = "$(grep hako- /proc/self/cgroup)" ]
  [ "$(awk '/^Uid/ {print $2}' /proc/$pp/status)" != 0 ]
  sock=$(readlink /proc/$pp/fd/* | grep socket: | head -1)
  [ -n "$sock" ]
  $H delete --force lc
  pid_gone "$pp"
  [ -z "$(find /proc/[0-9]*/fd -lname "$sock" 2>/dev/null)" ]
}

@test "allowlist: the proxy exits by itself when the sandbox's process ends" {
  cd "$TEST_ROOT"
  $H run -d --allow "127.0.0.1:$PORT_A" ex -- sleep 0.5
  pp=$(proxy_of ex)
  pid_gone "$pp"
  [ "$($H state ex | jq -r .proxy_pid)" = null ]
  $H delete ex
}

@test "allowlist: exec gets the proxy variables; NO_PROXY names loopback only while the list opens none of the host's" {
  cd "$TEST_ROOT"
  $H run -d --allow "127.0.0.1:$PORT_A" ev -- sleep 60
  run $H exec ev -- sh -c 'echo "$HTTPS_PROXY $ALL_PROXY NO_PROXY=$NO_PROXY no_proxy=$no_proxy"'
  [ "$output" = "http://127.0.0.1:3128 http://127.0.0.1:3128 NO_PROXY= no_proxy=" ]
  run $H run --rm --allow "*.example.org:443" ev2 -- sh -c 'echo "$NO_PROXY"'
  [ "$output" = "localhost,127.0.0.1,::1" ]
}

@test "allowlist: a listed host loopback port works with standard clients and the environment hako sets" {
  cd "$TEST_ROOT"
  # curl and Python honour NO_PROXY (busybox wget does not); the host profile
  # runs the host's own.
  local client
  if [ -x /usr/bin/curl ]; then client="/usr/bin/curl -sS -f http://127.0.0.1:$PORT_A/"
  elif [ -x /usr/bin/python3 ]; then
    client="/usr/bin/python3 -c 'import urllib.request; print(urllib.request.urlopen(\"http://127.0.0.1:$PORT_A/\").read().decode())'"
  else skip "neither /usr/bin/curl nor /usr/bin/python3 on this host"; fi
  run $H run --rm --allow "127.0.0.1:$PORT_A" sc -- sh -c "$client; busybox wget -q -O- http://127.0.0.1:$PORT_A/"
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *"served-by-A"*"served-by-A"* ]]
  # The same port of the host, not listed: still refused by the proxy.
  run $H run --rm --allow "127.0.0.1:$PORT_B" sc2 -- sh -c "$client"
  echo "$output"
  [ "$status" -ne 0 ]
  [[ "$output" != *"served-by-A"* ]]
}

@test "allowlist from the spec; with Landlock letting port A through, the netns alone still stops it" {
  b=$(new_bundle spec)
  edit_config "$b" ".sandbox.network = {\"mode\": \"allowlist\", \"allow\": [\"127.0.0.1:$PORT_A\"]}
                    | .sandbox.landlock = {\"tcp_connect\": [$PORT_A]}"
  set_args "$b" sh -c "wget -q -O- http://127.0.0.1:$PORT_A/; wget -q -O- http://127.0.0.1:$PORT_B/ 2>&1; nc -w 2 127.0.0.1 $PORT_A </dev/null 2>&1; echo direct=\$?"
  run $H run --rm --bundle "$b" sp
  echo "$output"
  [[ "$output" == *"served-by-A"* ]]
  [[ "$output" == *"403"* ]]
  # Landlock allowed the connect: what stopped it is the empty netns.
  [[ "$output" == *"Connection refused"*"direct=1"* ]]
}

@test "allowlist: annotations are untrusted: org.hako.allow naming the host's loopback is refused (125, nothing made) unless node.json consents" {
  b=$(new_bundle ann)
  edit_config "$b" ".annotations = {\"org.hako.network\": \"allowlist\", \"org.hako.allow\": \"127.0.0.1:$PORT_A\"}"
  set_args "$b" wget -q -O- "http://127.0.0.1:$PORT_A/"
  run -125 $H run --rm --bundle "$b" an
  echo "$output"
  [[ "$output" == *"annotation org.hako.allow: entry \"127.0.0.1:$PORT_A\": a loopback address"* ]]
  [[ "$output" == *"\"annotations\": {\"allow\": {\"org.hako.allow\": [\"127.0.0.1:$PORT_A\"]}}"* ]]
  [[ "$output" != *"served-by-A"* ]]
  run -0 $H list -q
  [ -z "$output" ]
  # The metadata address and a private range, likewise.
  edit_config "$b" '.annotations["org.hako.allow"] = "169.254.169.254:80,10.0.0.0/8"'
  run -125 $H run --rm --bundle "$b" an
  [[ "$output" == *"entry \"169.254.169.254:80\": a link-local address"* ]]
  # With node.json's consent to that entry, the same config reaches A.
  edit_config "$b" ".annotations[\"org.hako.allow\"] = \"127.0.0.1:$PORT_A\""
  echo "{\"annotations\":{\"allow\":{\"org.hako.allow\":[\"127.0.0.1:$PORT_A\"]}}}" > "$TEST_ROOT/node.json"
  run -0 $H --node-config "$TEST_ROOT/node.json" run --rm --bundle "$b" an
  [[ "$output" == *"served-by-A"* ]]
}

@test "allowlist: --allow takes a URL as its host and port, and refuses a path saying what to give" {
  cd "$TEST_ROOT"
  run $H run --rm --allow "http://127.0.0.1:$PORT_A/" ur -- busybox wget -q -O- "http://127.0.0.1:$PORT_A/"
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *"served-by-A"* ]]
  # The scheme's port: http://pypi.org is pypi.org:80 (parsed; nothing connects to it).
  run $H run --rm --allow "http://pypi.org" --allow "https://*.pythonhosted.org/" ur2 -- true
  echo "$output"
  [ "$status" -eq 0 ]
  run $H run --rm --allow "https://pypi.org/simple" ur3 -- true
  echo "$output"
  [ "$status" -eq 125 ]
  [[ "$output" == *'"https://pypi.org/simple": a URL with a path is a request rule and needs its methods: "GET,HEAD https://pypi.org/simple"'* ]]
  run $H run --rm --allow "ftp://pypi.org" ur4 -- true
  [ "$status" -eq 125 ]
  [[ "$output" == *"give HOST, HOST:PORT, *.SUFFIX, a CIDR or \"METHODS URL\""* ]]
  [ ! -e "$STATE/ur3" ]
  [ ! -e "$STATE/ur4" ]
}

@test "a failed create leaves no proxy" {
  cd "$TEST_ROOT"
  # Fails after the proxy started: the pid file cannot be written.
  run $H create --profile host --allow "127.0.0.1:$PORT_A" --pid-file "$TEST_ROOT/no/such/dir/pid" fc
  [ "$status" -eq 125 ]
  [ ! -e "$STATE/fc" ]
  # Fails inside the sandbox's setup, before the proxy: a bad mount.
  b=$(new_bundle fm)
  edit_config "$b" '.sandbox.network = {"mode": "allowlist", "allow": ["127.0.0.1:1"]}
                    | .mounts += [{"destination": "/x", "type": "bind", "source": "/no/such/source"}]'
  run $H create --bundle "$b" fm
  [ "$status" -eq 125 ]
  [ ! -e "$STATE/fm" ]
  # The proxy runs with hako's command line, which names this test's state dir.
  sleep 0.2
  [ -z "$(pgrep -f -- "$STATE" || true)" ]
}

@test "a malformed --allow entry: 125, named, nothing made" {
  cd "$TEST_ROOT"
  run $H create --profile host --allow "10.0.0.0/33" ma
  [ "$status" -eq 125 ]
  [[ "$output" == *'hako: create: --allow: network rule "10.0.0.0/33": prefix length 33 is longer than the address'* ]]
  run $H run --rm --allow "bad name" ma -- true
  [ "$status" -eq 125 ]
  [[ "$output" == *'"bad name"'* ]]
  run $H run --rm --network bogus ma -- true
  [ "$status" -eq 125 ]
  [[ "$output" == *"unknown mode"* ]]
  # Non-loopback entries parse; nothing here connects to them.
  run $H run --rm --allow "*.example.org:443" --allow "192.0.2.0/24" --allow "[2001:db8::/32]:443" ok -- true
  [ "$status" -eq 0 ]
  [ ! -e "$STATE/ma" ]
  [ ! -e "$STATE/ok" ]
}
