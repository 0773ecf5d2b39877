#!/usr/bin/env bats
# Egress by method and path, over HTTPS too (the proxy's interception), the
# secrets that never enter the sandbox, the decision log, a policy changed
# live.  Every byte stays on the host's loopback: an HTTPS origin on
# 127.0.0.1 (tests/fixtures/egress-origin.py; certificates made now by
# tests/fixtures/egress-certs.sh, whose CA is the proxy's trust through
# node.json's egress.trust, never the sandbox's), the same origin with a
# forged certificate, and a plain HTTP one.  Names resolve through
# node.json's egress.hosts (api.test, other.test, git.test, pypi.test all
# 127.0.0.1), so each sandbox also names 127.0.0.1:PORT, the loopback
# address a name may only reach when a rule opens it.

load helpers
bats_require_minimum_version 1.5.0

setup_file () {
  hako_setup_file
  local base=$((20000 + RANDOM % 20000))
  export PS=$base PF=$((base + 1)) PP=$((base + 2))
  export EG="$BATS_FILE_TMPDIR/eg"
  mkdir -p "$EG"
  chmod 755 "$EG"
  "$fixtures/egress-certs.sh" "$EG/certs"
  "$fixtures/egress-repos.sh" "$EG/repos"
  echo "127.0.0.1 api.test other.test git.test pypi.test" > "$EG/hosts"
  cat > "$EG/node.json" <<EOF
{"egress": {"trust": "$EG/certs/ca.pem", "hosts": "$EG/hosts", "head_timeout": "3s"}}
EOF
  export HAKO_NODE_CONFIG="$EG/node.json"
  local o="$fixtures/egress-origin.py"
  /usr/bin/python3 "$o" --port "$PS" --cert "$EG/certs/origin.pem" --key "$EG/certs/origin.key" \
    --log "$EG/origin.log" --git-root "$EG/repos/git" --pypi "$EG/repos/pypi" > "$EG/s.out" 3>&- 2>&1 &
  echo $! > "$EG/s.pid"
  /usr/bin/python3 "$o" --port "$PF" --cert "$EG/certs/forged.pem" --key "$EG/certs/forged.key" \
    --log "$EG/forged.log" > "$EG/f.out" 3>&- 2>&1 &
  echo $! > "$EG/f.pid"
  /usr/bin/python3 "$o" --port "$PP" --log "$EG/plain.log" > "$EG/p.out" 3>&- 2>&1 &
  echo $! > "$EG/p.pid"
  local f
  for f in s f p; do
    wait_for 10 grep -q ready "$EG/$f.out"
  done
}

teardown_file () {
  local f
  for f in s f p; do
    kill "$(cat "$EG/$f.pid")" 2>/dev/null || true
  done
}

setup () { hako_setup; }
teardown () { hako_teardown; }

# inside ID CMD: CMD in sandbox ID's shell.
inside () { local id=$1; shift; $H exec "$id" -- sh -c "$*"; }

# code: curl's options for "print the status only".
code="-s -o /dev/null -w %{http_code}"

# line ID JQ: the sandbox's decision log has a line that JQ selects.
line () {
  $H logs --network "$1" | jq -s -e "any(.[]; $2)" > /dev/null
}

# arrived LOG JQ [ARGS...]: the origin's LOG has a request that JQ selects.
arrived () {
  local log=$1 q=$2
  shift 2
  jq -s -e "$@" "any(.[]; $q)" "$log" > /dev/null
}

# The loopback address the test names resolve to, opened for the origin's port.
lo="--allow 127.0.0.1"

@test "request rules over plain HTTP: method and path decide, each decision names its rule" {
  # A request rule naming an address opens it (a destination rule would
  # open every request to it).
  run $H run --rm --allow "GET,HEAD http://127.0.0.1:$PP/pub/**" \
    --allow "POST http://127.0.0.1:$PP/pub/upload" p1 -- sh -c "
      curl $code http://127.0.0.1:$PP/pub/a/b; echo
      curl $code -X POST http://127.0.0.1:$PP/pub/a; echo
      curl $code -X POST -d x http://127.0.0.1:$PP/pub/upload; echo
      curl $code http://127.0.0.1:$PP/secret; echo
      curl $code --path-as-is http://127.0.0.1:$PP/pub/../secret; echo"
  echo "$output"
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = 200 ]
  [ "${lines[1]}" = 403 ]
  [ "${lines[2]}" = 200 ]
  [ "${lines[3]}" = 403 ]
  [ "${lines[4]}" = 400 ]
  # Only what was let through reached the origin.
  run grep -c '"/secret"\|"POST", "path": "/pub/a"' "$EG/plain.log"
  [ "$output" = 0 ]
  # One line each, naming the rule; --rm kept the log, and logs reads it.
  line p1 '.method == "GET" and .path == "/pub/a/b" and .rule == "allow[0]" and .verdict == "allow"'
  line p1 '.method == "POST" and .path == "/pub/a" and .rule == "default" and .verdict == "deny" and .status == 403'
  line p1 '.method == "POST" and .path == "/pub/upload" and .rule == "allow[1]"'
  line p1 '.verdict == "deny" and .status == 400 and (.reason | test("\\.\\."))'
}

@test "a chunked body ends where its framing says: the request after it is checked, not passed on" {
  $H run -d --allow "POST http://127.0.0.1:$PP/in" ch -- sleep 120
  run inside ch "printf 'POST http://127.0.0.1:$PP/in HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nabcd\r\n0\r\n\r\nPOST http://127.0.0.1:$PP/hidden HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n' \
    | busybox nc 127.0.0.1 3128 | grep '^HTTP/1.1'"
  echo "$output"
  # (The plain path ends the connection on the refusal: the answer to the
  # first request may be cut short, a limit hako-run(8) states.)
  [[ "$output" == *$'HTTP/1.1 403 Forbidden\r'* ]]
  run ! grep -q '"/hidden"' "$EG/plain.log"
  line ch '.path == "/hidden" and .verdict == "deny"'
}

@test "deny rules and the denylist mode; link-local, private and metadata destinations refused unless named" {
  run $H run --rm --network denylist --allow "* http://127.0.0.1:$PP/**" --deny "POST http://127.0.0.1:$PP/**" d1 -- sh -c "
      curl $code http://127.0.0.1:$PP/x; echo
      curl $code -X POST http://127.0.0.1:$PP/x; echo
      curl $code --max-time 5 http://169.254.169.254/latest/meta-data/; echo
      curl $code --max-time 5 http://metadata.google.internal/computeMetadata/v1/; echo
      curl $code --max-time 5 http://10.1.2.3/; echo"
  echo "$output"
  [ "${lines[0]}" = 200 ]
  [ "${lines[1]}" = 403 ]
  [ "${lines[2]}" = 403 ]
  [ "${lines[3]}" = 403 ]
  [ "${lines[4]}" = 403 ]
  line d1 '.method == "POST" and .rule == "deny[0]"'
  line d1 '.host == "169.254.169.254" and .rule == "default[link-local]"'
  line d1 '.host == "metadata.google.internal" and .rule == "default[metadata]"'
  line d1 '.host == "10.1.2.3" and .rule == "default[private]"'
  # --deny alone is the denylist mode; the host's loopback still needs
  # naming (NO_PROXY keeps 127.0.0.1 the sandbox's own: the proxy is named).
  run $H run --rm --deny "POST http://127.0.0.1:$PP/**" d2 -- curl $code --noproxy '' -x http://127.0.0.1:3128 http://127.0.0.1:$PP/x
  [ "$output" = 403 ]
  line d2 '.rule == "default[loopback]"'
}

@test "one grammar: a bad rule is named wherever it is written, 125, nothing made" {
  run $H run --rm --allow 'get https://api.test/x' g1 -- true
  [ "$status" -eq 125 ]
  [[ "$output" == *'--allow: network rule "get https://api.test/x": method "get": methods are upper case'* ]]
  run $H run --rm --deny 'GET https://api.test/x?y=1' g1 -- true
  [ "$status" -eq 125 ]
  [[ "$output" == *'rules match paths, not queries'* ]]
  run $H run --rm --allow GET g1 -- true
  [[ "$output" == *'a method without a URL'* ]]
  run $H run --rm --allow 'GET https://api.test/a/**/b' g1 -- true
  [[ "$output" == *'"**" only as the last segment'* ]]
  local b="$TEST_ROOT/b"
  mkdir "$b"
  $H spec --profile host --bundle "$b"
  edit_config "$b" '.sandbox.network = {"mode": "denylist", "deny": ["POST https://api.test/**", "POST ftp://x/"]}'
  run $H create --bundle "$b" g2
  [ "$status" -eq 125 ]
  [[ "$output" == *'.sandbox.network.deny[1]: network rule "POST ftp://x/"'* ]]
  [ ! -e "$STATE/g1" ]
  [ ! -e "$STATE/g2" ]
}

@test "annotations: org.hako.deny one rule a line; org.hako.allow naming a metadata service needs the node's consent" {
  local b="$TEST_ROOT/b"
  mkdir "$b"
  $H spec --profile host --bundle "$b"
  edit_config "$b" 'del(.sandbox.network)'
  # Opening the host's loopback is a widening: the node consents to it.
  jq --arg r "* http://127.0.0.1:$PP/**" '.annotations.allow["org.hako.allow"] = [$r]' "$EG/node.json" > "$TEST_ROOT/node.json"
  edit_config "$b" ".annotations = {\"org.hako.network\": \"denylist\", \"org.hako.allow\": \"* http://127.0.0.1:$PP/**\",
    \"org.hako.deny\": \"GET,HEAD http://127.0.0.1:$PP/a/**\nPOST http://127.0.0.1:$PP/**\n\"}
    | .process.args = [\"sh\", \"-c\", \"curl $code http://127.0.0.1:$PP/a/1; echo; curl $code -X POST http://127.0.0.1:$PP/b; echo; curl $code http://127.0.0.1:$PP/c; echo\"]"
  run env HAKO_NODE_CONFIG="$TEST_ROOT/node.json" $H run --rm --bundle "$b" a1
  echo "$output"
  [ "${lines[0]}" = 403 ]
  [ "${lines[1]}" = 403 ]
  [ "${lines[2]}" = 200 ]
  line a1 '.path == "/a/1" and .rule == "deny[0]"'
  line a1 '.method == "POST" and .rule == "deny[1]"'
  edit_config "$b" '.annotations = {"org.hako.network": "denylist", "org.hako.allow": "metadata.google.internal"}'
  run $H create --bundle "$b" a2
  [ "$status" -eq 125 ]
  [[ "$output" == *"annotation org.hako.allow: entry \"metadata.google.internal\": a cloud metadata service's name"* ]]
  # No annotation carries a secret: one that tries is unknown, refused.
  edit_config "$b" '.annotations = {"org.hako.network": "denylist", "org.hako.secret": "T=file:/etc/shadow@evil.example"}'
  run $H create --bundle "$b" a3
  [ "$status" -eq 125 ]
  [[ "$output" == *"annotation org.hako.secret: unknown"* ]]
  # A pod's containers would share a proxy whose CA they do not trust:
  # interception for a pod is refused, saying so.
  edit_config "$b" '.annotations = {"io.kubernetes.cri.container-type": "sandbox", "org.hako.network": "allowlist",
    "org.hako.allow": "GET https://pypi.org/simple/**"}'
  run $H create --bundle "$b" a4
  [ "$status" -eq 125 ]
  [[ "$output" == *"interception) are not supported for a pod yet"* ]]
  [ ! -e "$STATE/a2" ]
  [ ! -e "$STATE/a3" ]
  [ ! -e "$STATE/a4" ]
}

@test "HTTPS: requests are decided inside TLS by method and path; other hosts keep an opaque tunnel" {
  $H run -d $lo:$PS --allow "GET,HEAD https://api.test:$PS/repos/*/*/releases/**" --allow other.test:$PS h1 -- sleep 120
  run inside h1 "curl -sS https://api.test:$PS/repos/o/r/releases/latest
    curl $code -I https://api.test:$PS/repos/o/r/releases; echo
    curl -sS -X POST https://api.test:$PS/repos/o/r/releases/x
    curl $code https://api.test:$PS/repos/o/r/tags; echo
    curl $code https://api.test:$PS/repos/o/releases/x; echo"
  echo "$output"
  [ "${lines[0]}" = "GET /repos/o/r/releases/latest" ]
  [ "${lines[1]}" = 200 ]
  [ "${lines[2]}" = "POST /repos/o/r/releases/x on api.test is not in the sandbox's network allow-list" ]
  [ "${lines[3]}" = 403 ]
  [ "${lines[4]}" = 403 ]
  line h1 '.scheme == "https" and .method == "GET" and .path == "/repos/o/r/releases/latest" and .status == 200
    and .rule == "allow[1]" and .received > 0 and .address == "127.0.0.1"'
  line h1 '.method == "HEAD" and .status == 200'
  line h1 '.method == "POST" and .verdict == "deny" and .rule == "default" and .status == 403'
  line h1 '.method == "CONNECT" and .host == "api.test" and .tunnel == "intercepted" and .sent > 0'
  # Another host only a destination rule names: opaque, the origin's own
  # certificate reaches the client (whose trust has not the test CA).
  run inside h1 "curl -sS https://other.test:$PS/x"
  [ "$status" -eq 60 ]
  line h1 '.method == "CONNECT" and .host == "other.test" and .tunnel == "opaque" and .rule == "allow[2]"'
  # The trust variables and the bundle inside hold the sandbox's own CA.
  run inside h1 'echo $SSL_CERT_FILE $REQUESTS_CA_BUNDLE $NODE_EXTRA_CA_CERTS $CURL_CA_BUNDLE $GIT_SSL_CAINFO $PIP_CERT'
  [ "$output" = "$(printf '/etc/ssl/certs/ca-certificates.crt %.0s' 1 2 3 4 5)/etc/ssl/certs/ca-certificates.crt" ]
  run inside h1 "grep -c 'BEGIN CERTIFICATE' /etc/ssl/certs/ca-certificates.crt"
  [ "$output" -eq $(($(grep -c 'BEGIN CERTIFICATE' /etc/ssl/certs/ca-certificates.crt) + 1)) ]
  # The CA's key stays in the state dir, root's alone.
  [ "$(stat -c %a "$STATE/h1/egress-ca.key")" = 600 ]
  run inside h1 "grep -rl 'PRIVATE KEY' /etc/ssl /tmp 2>/dev/null | head -1"
  [ -z "$output" ]
}

@test "HTTPS clients: python's urllib and requests, git over https, pip from a simple index" {
  $H run -d $lo:$PS --allow "GET https://api.test:$PS/ok/**" \
    --allow "GET,POST https://git.test:$PS/git/repo.git/**" \
    --allow "GET https://pypi.test:$PS/simple/**" --allow "GET https://pypi.test:$PS/packages/**" c1 -- sleep 120
  run inside c1 "/usr/bin/python3 -c '
import urllib.request, urllib.error
print(urllib.request.urlopen(\"https://api.test:$PS/ok/u\").read().decode().strip())
try:
    urllib.request.urlopen(urllib.request.Request(\"https://api.test:$PS/ok/u\", data=b\"x\"))
except urllib.error.HTTPError as e:
    print(\"urllib\", e.code)'"
  echo "$output"
  [ "${lines[0]}" = "GET /ok/u" ]
  [ "${lines[1]}" = "urllib 403" ]
  if /usr/bin/python3 -c 'import requests' 2>/dev/null; then
    run inside c1 "/usr/bin/python3 -c 'import requests; print(requests.get(\"https://api.test:$PS/ok/r\").text.strip(), requests.delete(\"https://api.test:$PS/ok/r\").status_code)'"
    echo "$output"
    [ "$output" = "GET /ok/r 403" ]
  fi
  run inside c1 "cd /tmp && git clone -q https://git.test:$PS/git/repo.git r && cat r/README"
  echo "$output"
  [ "$output" = "hello through the egress proxy" ]
  run inside c1 "cd /tmp && git clone -q https://git.test:$PS/git/other.git o"
  [ "$status" -ne 0 ]
  [[ "$output" == *403* ]]
  run inside c1 "pip download -q --no-deps --no-cache-dir --disable-pip-version-check \
    --index-url https://pypi.test:$PS/simple/ hakotestpkg -d /tmp/dl && ls /tmp/dl"
  echo "$output"
  [ "$output" = "hakotestpkg-1.0-py3-none-any.whl" ]
  line c1 '.host == "git.test" and .method == "POST" and .path == "/git/repo.git/git-upload-pack" and .status == 200'
  line c1 '.host == "pypi.test" and .path == "/packages/hakotestpkg-1.0-py3-none-any.whl" and .status == 200'
}

@test "secrets: the value reaches its host only; the sandbox, its env and its config see the placeholder" {
  local v="tok-$RANDOM-$RANDOM-value" fv="file-$RANDOM-value"
  echo "$fv" > "$TEST_ROOT/token"
  EGRESS_TOKEN=$v $H run -d $lo:$PS $lo:$PP --allow api.test:$PS --allow "GET https://other.test:$PS/**" \
    --allow 127.0.0.1:$PP --secret GH_TOKEN=env:EGRESS_TOKEN@api.test:$PS \
    --secret Q_TOKEN="file:$TEST_ROOT/token@api.test:$PS,query" s1 -- \
    sh -c "tr '\0' '\n' < /proc/self/environ > /tmp/env1; exec sleep 120"
  run inside s1 'echo $GH_TOKEN'
  [[ "$output" == hako-secret-* ]]
  local ph=$output
  wait_for 10 inside s1 'test -s /tmp/env1'
  run inside s1 "grep -x 'GH_TOKEN=$ph' /tmp/env1"
  [ "$status" -eq 0 ]
  run inside s1 "cat /tmp/env1 /proc/self/environ | tr '\0' '\n' | grep -c -e '$v' -e '$fv'"
  [ "$output" = 0 ]
  run inside s1 'env'
  [[ "$output" != *"$v"* ]]
  : > "$EG/origin.log"
  : > "$EG/plain.log"
  run inside s1 "curl -sS -H \"Authorization: Bearer \$GH_TOKEN\" https://api.test:$PS/a
    curl -sS \"https://api.test:$PS/q?key=\$Q_TOKEN\"
    curl -sS -H \"Authorization: Bearer \$GH_TOKEN\" https://other.test:$PS/b
    curl -sS -H \"X-Token: \$GH_TOKEN\" http://127.0.0.1:$PP/c"
  echo "$output"
  [[ "$output" != *"$v"* ]]
  # At its host, the value; elsewhere the placeholder, as it was sent.
  arrived "$EG/origin.log" '.path == "/a" and .headers.Authorization == $v' --arg v "Bearer $v"
  arrived "$EG/origin.log" '.path == "/q?key=" + $v' --arg v "$fv"
  arrived "$EG/origin.log" '.path == "/b" and .headers.Authorization == $v' --arg v "Bearer $ph"
  arrived "$EG/plain.log" '.path == "/c" and .headers["X-Token"] == $v' --arg v "$ph"
  line s1 '.path == "/a" and .secrets == ["GH_TOKEN"]'
  line s1 '.path == "/q" and .secrets == ["Q_TOKEN"]'
  line s1 '.host == "other.test" and .path == "/b" and .unreplaced == ["GH_TOKEN"]'
  line s1 '.path == "/c" and .unreplaced == ["GH_TOKEN"]'
  # The value is in the state dir's secrets file alone (0600), nowhere else.
  run sh -c "grep -rl -e '$v' -e '$fv' '$STATE/s1' '$DATA' 2>/dev/null"
  [ "$output" = "$STATE/s1/egress-secrets.json" ]
  [ "$(stat -c %a "$STATE/s1/egress-secrets.json")" = 600 ]
  grep -q "$ph" "$STATE/s1/config.json"
}

@test "attack: a secret its own origin reflects (body, headers, Location, across chunks, gzip asked) comes back masked" {
  local v="refl-$RANDOM-$RANDOM-value" q="qry-$RANDOM-$RANDOM-value"
  echo "$q" > "$TEST_ROOT/qtoken"
  EGRESS_TOKEN=$v $H run -d $lo:$PS --allow api.test:$PS --secret T=env:EGRESS_TOKEN@api.test:$PS \
    --secret Q="file:$TEST_ROOT/qtoken@api.test:$PS,query" r1 -- sleep 120
  : > "$EG/origin.log"
  run inside r1 "curl -sS -H \"X-Token: \$T\" \"https://api.test:$PS/echo?how=body&key=\$Q\"
    curl -sS -D - -o /dev/null -H \"Authorization: Bearer \$T\" \"https://api.test:$PS/echo?how=header&key=\$Q\"
    curl -sS -H \"X-Token: \$T\" \"https://api.test:$PS/echo?how=chunked&size=7\"
    curl -sS --compressed -H \"X-Token: \$T\" \"https://api.test:$PS/echo?how=gzip\""
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" != *"$v"* ]]
  [[ "$output" != *"$q"* ]]
  # What the origin said is there, the values' bytes masked as *.
  local sv="${v//?/*}" sq="${q//?/*}"
  [ "$(echo "$output" | grep -c -F -x "X-Token: $sv")" = 3 ]
  [[ "$output" == *"GET /echo?how=body&key=$sq"* ]]
  [[ "$output" == *"Location: /echo?how=header&key=$sq"* ]]
  [[ "$output" == *"Authorization: Bearer $sv"* ]]
  # The origin got the values all the same, and no encoding it could hide them in.
  arrived "$EG/origin.log" '.path == "/echo?how=header&key=" + $q and .headers.Authorization == "Bearer " + $v' --arg v "$v" --arg q "$q"
  arrived "$EG/origin.log" '.path == "/echo?how=gzip" and .headers["X-Token"] == $v and .headers["Accept-Encoding"] == "identity"' --arg v "$v"
  # Everything else of a secret's host passes unchanged.
  local n=$((8 << 20))
  run inside r1 "curl -sS https://api.test:$PS/bytes/$n | sha256sum"
  [ "$output" = "$(curl -sS "http://127.0.0.1:$PP/bytes/$n" | sha256sum)" ]
}

@test "attack: the decision log takes a hostile request's path and host as text: one JSON object a line, nothing forged" {
  $H run -d --allow api.test:$PS l1 -- sleep 120
  printf '%s\n' 'import socket' \
    'reqs = [b"GET http://evil.test/a%22b\",\"verdict\":\"allow\",\"x\":\"\\\\ HTTP/1.1\r\nHost: evil.test\r\n\r\n",' \
    '        b"GET http://evil.test/esc\x1b[31m\x9b2J HTTP/1.1\r\nHost: evil.test\r\n\r\n",' \
    '        b"CONNECT evil\x1b]0;t\x07.test:443 HTTP/1.1\r\nHost: x\r\n\r\n",' \
    '        b"GET http://evil.test/nl\r\nX-Injected: 1 HTTP/1.1\r\nHost: evil.test\r\n\r\n"]' \
    'for r in reqs:' \
    '    s = socket.create_connection(("127.0.0.1", 3128)); s.sendall(r)' \
    '    print(s.recv(100).split(b"\r\n")[0].decode()); s.close()' > "$TEST_ROOT/inj.py"
  chmod 644 "$TEST_ROOT/inj.py"
  $H cp "$TEST_ROOT/inj.py" l1:/tmp/inj.py
  run -0 inside l1 "/usr/bin/python3 /tmp/inj.py"
  echo "$output"
  [ "$(echo "$output" | grep -c '^HTTP/1.1 [45]')" = 4 ]
  run -0 $H logs --network l1
  echo "$output"
  # Each line one object of its own, its text printable ASCII; no forged verdict.
  [ "$(echo "$output" | wc -l)" = "$(echo "$output" | jq -c . | wc -l)" ]
  [ "$(echo "$output" | jq -r .verdict | sort -u | paste -sd,)" = deny ]
  [ "$(echo "$output" | LC_ALL=C grep -c '[^ -~]')" = 0 ]
  echo "$output" | jq -e -s 'any(.[]; .path == "/a%22b\",\"verdict\":\"allow\",\"x\":\"\\\\")' > /dev/null
}

@test "secrets: a source that is not there, or a value no header can carry, fails create: 125, nothing made" {
  run $H run --rm --allow api.test:$PS --secret T=env:NO_SUCH_VAR_EGRESS@api.test x1 -- true
  [ "$status" -eq 125 ]
  [[ "$output" == *"--secret T: NO_SUCH_VAR_EGRESS is not set in hako's environment"* ]]
  run env EGRESS_BAD=$'a\r\nX-Evil: 1' $H run --rm --allow api.test:$PS --secret T=env:EGRESS_BAD@api.test x2 -- true
  [ "$status" -eq 125 ]
  [[ "$output" == *"secret T: its value has a control character"* ]]
  [[ "$output" != *"X-Evil"* ]]
  run env EGRESS_LONG="$(head -c 9000 /dev/zero | tr '\0' a)" $H run --rm --allow api.test:$PS --secret T=env:EGRESS_LONG@api.test x4 -- true
  [ "$status" -eq 125 ]
  [[ "$output" == *"secret T: its value is 9000 bytes, more than the 8192 a request's head may carry"* ]]
  run $H run --rm --secret T=env:HOME@api.test x3 -- true
  [ "$status" -eq 125 ]
  [[ "$output" == *"--secret: the proxy puts secrets in requests"* ]]
  [ ! -e "$STATE/x1" ]
  [ ! -e "$STATE/x2" ]
  [ ! -e "$STATE/x4" ]
}

@test "a forged origin certificate is refused by the proxy: 502, and nothing, secret or request, reaches it" {
  : > "$EG/forged.log"
  EGRESS_TOKEN=forged-secret $H run -d $lo:$PF --allow "GET https://api.test:$PF/**" \
    --secret T=env:EGRESS_TOKEN@api.test:$PF f1 -- sleep 120
  run inside f1 "curl -sS -w '%{http_code}' -H \"Authorization: \$T\" https://api.test:$PF/x"
  echo "$output"
  [[ "$output" == *"certificate"*502 ]]
  [ ! -s "$EG/forged.log" ]
  line f1 '.path == "/x" and .verdict == "error" and .status == 502 and (.reason | test("certificate"))'
}

@test "an h2-preferring client falls back to HTTP/1.1; a large download arrives byte-exact" {
  $H run -d $lo:$PS --allow "GET https://api.test:$PS/**" b1 -- sleep 120
  run inside b1 "curl -sS --http2 -o /dev/null -w '%{http_version} %{http_code}' https://api.test:$PS/h2"
  [ "$output" = "1.1 200" ]
  local n=$((64 << 20))
  want=$(/usr/bin/python3 -c "
import hashlib, sys
p = bytes(range(251)) * 4200; h = hashlib.sha256(); n = $n; off = 0
while n:
    k = min(n, len(p) - 251); s = off % 251; h.update(p[s:s + k]); off += k; n -= k
print(h.hexdigest())")
  run inside b1 "curl -sS https://api.test:$PS/bytes/$n | sha256sum"
  [ "$output" = "$want  -" ]
  line b1 ".path == \"/bytes/$n\" and .status == 200 and .received > $n"
}

@test "hostile TLS: garbage, no SNI, another SNI, another Host, smuggling: each refused and logged, others unaffected" {
  $H run -d $lo:$PS -v "$fixtures:/fx:ro" --allow "GET https://api.test:$PS/ok/**" --allow "GET https://other.test:$PS/**" t1 -- sleep 120
  run inside t1 "/usr/bin/python3 /fx/egress-client.py garbage api.test $PS"
  [ "$output" = closed ]
  line t1 '.method == "CONNECT" and .verdict == "deny" and (.reason | test("handshake failed"))'
  run inside t1 "/usr/bin/python3 /fx/egress-client.py tls api.test $PS --no-sni --path /ok/1"
  [[ "$output" == tls-error* ]]
  line t1 '.verdict == "deny" and (.reason | test("no SNI"))'
  run inside t1 "/usr/bin/python3 /fx/egress-client.py tls api.test $PS --sni other.test --path /ok/1"
  [[ "$output" == tls-error* ]]
  line t1 '.verdict == "deny" and .reason == "the ClientHello names other.test (SNI), the CONNECT api.test"'
  run inside t1 "/usr/bin/python3 /fx/egress-client.py tls api.test $PS --host other.test:$PS --path /ok/1"
  [ "$output" = "status 421" ]
  line t1 '.status == 421 and (.reason | test("Host"))'
  # Request smuggling inside the tunnel: length and chunked, two lengths,
  # and a second request hidden after a chunked body (read and refused).
  printf 'GET /ok/a HTTP/1.1\r\nHost: api.test:%s\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n' "$PS" > "$TEST_ROOT/clte"
  printf 'GET /ok/a HTTP/1.1\r\nHost: api.test:%s\r\nContent-Length: 5\r\nContent-Length: 50\r\n\r\nhello' "$PS" > "$TEST_ROOT/cl2"
  printf 'GET /ok/a HTTP/1.1\r\nHost: api.test:%s\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nDELETE /ok/b HTTP/1.1\r\nHost: api.test:%s\r\n\r\n' "$PS" "$PS" > "$TEST_ROOT/hidden"
  chmod 644 "$TEST_ROOT"/clte "$TEST_ROOT"/cl2 "$TEST_ROOT"/hidden
  $H cp "$TEST_ROOT/clte" t1:/tmp/clte
  $H cp "$TEST_ROOT/cl2" t1:/tmp/cl2
  $H cp "$TEST_ROOT/hidden" t1:/tmp/hidden
  : > "$EG/origin.log"
  run inside t1 "/usr/bin/python3 /fx/egress-client.py tls api.test $PS --raw /tmp/clte"
  [ "$output" = "status 400" ]
  run inside t1 "/usr/bin/python3 /fx/egress-client.py tls api.test $PS --raw /tmp/cl2"
  [ "$output" = "status 400" ]
  run inside t1 "/usr/bin/python3 /fx/egress-client.py tls api.test $PS --raw /tmp/hidden"
  echo "$output"
  [ "${lines[0]}" = "status 200" ]
  [ "${lines[1]}" = "status 403" ]
  run ! grep -q DELETE "$EG/origin.log"
  line t1 '.method == "DELETE" and .path == "/ok/b" and .verdict == "deny"'
  # Through all of it, the proxy serves everyone else.
  run inside t1 "curl -sS https://api.test:$PS/ok/still"
  [ "$output" = "GET /ok/still" ]
}

@test "hostile TLS: a slowloris handshake is cut at egress.head_timeout while other connections go on" {
  $H run -d $lo:$PS -v "$fixtures:/fx:ro" --allow "GET https://api.test:$PS/ok/**" sl -- sleep 120
  $H exec -d sl -- sh -c "/usr/bin/python3 /fx/egress-client.py slow api.test $PS 20 > /tmp/slow.out 2>&1"
  wait_for 10 inside sl 'grep -qx started /tmp/slow.out'
  run inside sl "for i in 1 2 3; do curl -sS https://api.test:$PS/ok/\$i; done"
  [ "${lines[2]}" = "GET /ok/3" ]
  wait_for 30 inside sl 'grep -qx closed /tmp/slow.out'
  line sl '.method == "CONNECT" and .verdict == "deny" and (.reason | test("no TLS handshake within 3000 ms"))'
}

@test "live update: a rule added rules the next request, a host denied has its open tunnel cut" {
  $H run -d $lo:$PS -v "$fixtures:/fx:ro" --allow "GET https://api.test:$PS/a/**" --allow other.test:$PS u1 -- sleep 120
  run inside u1 "curl $code https://api.test:$PS/b/1"
  [ "$output" = 403 ]
  $H update u1 --allow "GET https://api.test:$PS/b/**"
  run inside u1 "curl -sS https://api.test:$PS/b/1"
  [ "$output" = "GET /b/1" ]
  line u1 '.path == "/b/1" and .verdict == "allow" and .rule == "allow[3]"'
  # An opaque tunnel to other.test, open; then other.test is denied.
  $H exec -d u1 -- sh -c "/usr/bin/python3 /fx/egress-client.py hold other.test $PS > /tmp/hold.out 2>&1"
  wait_for 10 inside u1 'grep -qx open /tmp/hold.out'
  $H update u1 --deny other.test:$PS
  wait_for 10 inside u1 'grep -qx cut /tmp/hold.out'
  line u1 '.host == "other.test" and .verdict == "deny" and .rule == "deny[0]" and (.reason | test("cut by a policy update"))'
  run inside u1 "curl -s -o /dev/null -w '%{http_connect}' https://other.test:$PS/x"
  [ "$output" = 403 ]
  # Revoked, a rule is gone; a rule that is not there is named.
  $H update u1 --revoke "GET https://api.test:$PS/b/**"
  run inside u1 "curl $code https://api.test:$PS/b/1"
  [ "$output" = 403 ]
  run $H update u1 --revoke "GET https://nope.test/**"
  [ "$status" -eq 125 ]
  [[ "$output" == *'"GET https://nope.test/**" is not one of the sandbox'* ]]
  # A secret added: later execs hold its placeholder, its host gets the value.
  EGRESS_NEW=new-value $H update u1 --secret NEW=env:EGRESS_NEW@api.test:$PS
  : > "$EG/origin.log"
  run inside u1 "curl -sS -H \"X-New: \$NEW\" https://api.test:$PS/a/new"
  arrived "$EG/origin.log" '.path == "/a/new" and .headers["X-New"] == "new-value"'
}

@test "live update: refused for a sandbox the proxy does not serve, or one created without interception" {
  $H run -d --network none n1 -- sleep 60
  run $H update n1 --allow pypi.org
  [ "$status" -eq 125 ]
  [[ "$output" == *"not through the proxy"* ]]
  $H run -d $lo:$PP n2 -- sleep 60
  run $H update n2 --allow "GET https://api.test:$PS/**"
  [ "$status" -eq 125 ]
  [[ "$output" == *"created without interception"* ]]
  # Refused, the config is as it was.
  run jq -c .sandbox.network.allow "$STATE/n2/config.json"
  [ "$output" = "[\"127.0.0.1:$PP\"]" ]
}

@test "hako logs --network: the decision log of a running sandbox, and of a run --rm one, --tail" {
  run $H run --rm $lo:$PP --allow 127.0.0.1:$PP l1 -- sh -c "curl -s http://127.0.0.1:$PP/one >/dev/null; curl -s http://127.0.0.1:$PP/two >/dev/null"
  run $H logs --network l1
  [ "${#lines[@]}" -eq 2 ]
  echo "${lines[0]}" | jq -e '.sandbox == "l1" and .path == "/one" and .time and .method == "GET" and .rule == "allow[0]"'
  run $H logs --network --tail 1 l1
  echo "$output" | jq -e '.path == "/two"'
  $H run -d --network none l2 -- sleep 60
  run $H logs --network l2
  [ "$status" -eq 125 ]
  [[ "$output" == *"not through the proxy"* ]]
}

@test "learning: run --learn sees inside HTTPS and writes the narrowest request rules; enforced, they let those through only" {
  local P="$TEST_ROOT/p.json"
  run $H run --rm --network allowlist $lo:$PS --learn "$P" ln -- sh -c "
    for i in 1 2 3 4 5; do curl -s https://api.test:$PS/repos/o/r/releases/\$i >/dev/null; done
    curl -s -X POST -d x https://api.test:$PS/repos/o/r/issues >/dev/null
    curl -s -I https://api.test:$PS/repos/o/r/releases/1 >/dev/null
    curl -s https://other.test:$PS/x >/dev/null"
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *"sees inside every HTTPS connection"* ]]
  run jq -c .sandbox.network "$P"
  [ "$output" = "{\"mode\":\"allowlist\",\"allow\":[\"GET https://api.test:$PS/repos/o/r/releases/*\",\"GET https://other.test:$PS/x\",\"HEAD https://api.test:$PS/repos/o/r/releases/1\",\"POST https://api.test:$PS/repos/o/r/issues\"]}" ]
  grep -q "^network.allow POST https://api.test:$PS/repos/o/r/issues: used by the sandbox's client, seen by the proxy" "$P.notes"
  run $H run --rm --profile-file "$P" $lo:$PS le -- sh -c "
    curl $code https://api.test:$PS/repos/o/r/releases/9; echo
    curl $code -X POST https://api.test:$PS/repos/o/r/releases/9; echo
    curl $code https://other.test:$PS/x; echo
    curl $code https://other.test:$PS/y; echo"
  echo "$output"
  [ "${lines[0]}" = 200 ]
  [ "${lines[1]}" = 403 ]
  [ "${lines[2]}" = 200 ]
  [ "${lines[3]}" = 403 ]
  # A profile granting a request rule on the host's loopback is refused.
  echo "{\"sandbox\": {\"network\": {\"mode\": \"allowlist\", \"allow\": [\"GET http://127.0.0.1:$PP/x\"]}}}" > "$TEST_ROOT/bad.json"
  run $H run --rm --profile-file "$TEST_ROOT/bad.json" lb -- true
  [ "$status" -eq 125 ]
  [[ "$output" == *"is a loopback destination, which a profile never grants; name it on the command line (--allow 'GET http://127.0.0.1:$PP/x')"* ]]
}
