#!/usr/bin/env bats
# Published ports (run/create -p, hako port): an HTTP server in a sandbox
# with a network namespace of its own, a client on the host, through the
# forwarder hako starts outside the sandbox.  Every byte stays on the
# host's loopback or in the sandboxes' own namespaces.

load helpers
bats_require_minimum_version 1.5.0

setup_file () {
  hako_setup_file
  # Fixed host ports for the tests that ask for one, away from other files'.
  local base=$((20000 + RANDOM % 20000))
  export HP1=$base HP2=$((base + 1)) HP3=$((base + 2)) HP_HOST=$((base + 3))
  export TOOLS="$BATS_FILE_TMPDIR/tools"
  mkdir -p "$TOOLS"
  chmod 755 "$TOOLS"
  cc -D_GNU_SOURCE -o "$TOOLS/http-serve" "$fixtures/http-serve.c"
}

setup () { hako_setup; SERVERS=""; }

teardown () {
  [ -z "$SERVERS" ] || kill $SERVERS 2>/dev/null || true
  hako_teardown
}

# fetch URL: the body, from the host, past any proxy of the environment.
fetch () {
  timeout 10 busybox wget -Y off -q -O- "$1"
}

# serve ID [OPTIONS...]: a detached host-profile sandbox whose busybox httpd
# serves "from-ID" on its own 127.0.0.1:8000.
serve () {
  local id=$1
  shift
  $H run -d --profile host "$@" "$id" -- sh -c \
    "mkdir /tmp/www && echo from-$id > /tmp/www/index.html && exec busybox httpd -f -p 127.0.0.1:8000 -h /tmp/www"
}

# host_of ID PORT: where the sandbox's PORT is on the host (hako port).
host_of () {
  $H port "$1" "$2"
}

# served_from ID HOST:PORT: the page from that sandbox arrives there.
served_from () {
  [ "$(fetch "http://$2/")" = "from-$1" ]
}

# port_free PORT: nothing listens on the host's 127.0.0.1:PORT (a listener
# may take it; connections of the last one may linger in TIME_WAIT).
port_free () {
  python3 -c 'import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen()' "$1"
}

# forwarders: the pids of this test's forwarders (their records).
forwarders () {
  awk '$5 > 0 { print $5 }' "$STATE"/*/ports 2>/dev/null | sort -u
}

@test "-p HOSTPORT:PORT: a host client gets the page of a server in the sandbox" {
  serve web -p "$HP1:8000"
  wait_for 30 served_from web "127.0.0.1:$HP1"
  # The default host address is the loopback: not every interface.
  run -0 $H port web
  [ "$output" = "8000/tcp -> 127.0.0.1:$HP1" ]
  run -0 host_of web 8000
  [ "$output" = "127.0.0.1:$HP1" ]
  run -0 $H port --format json web
  [ "$(echo "$output" | jq -c .)" = "[{\"port\":8000,\"protocol\":\"tcp\",\"host_ip\":\"127.0.0.1\",\"host_port\":$HP1}]" ]
  # The forwarder is nobody, without capabilities, outside the sandbox.
  local f
  f=$(forwarders)
  [ -n "$f" ]
  [ "$(awk '/^Uid:/ {print $2}' "/proc/$f/status")" = 65534 ]
  [ "$(awk '/^CapEff:/ {print $2}' "/proc/$f/status")" = 0000000000000000 ]
  [ "$(readlink "/proc/$f/ns/pid")" = "$(readlink /proc/self/ns/pid)" ]
}

@test "-p PORT: an ephemeral host port; -p [::1]::PORT; several maps of one port" {
  serve eph -p 8000 -p "127.0.0.1:$HP1:8000" -p '[::1]::8000'
  local where
  where=$(host_of eph 8000 | head -1)
  [[ "$where" == 127.0.0.1:* ]]
  [ "${where#127.0.0.1:}" -gt 0 ]
  wait_for 30 served_from eph "$where"
  served_from eph "127.0.0.1:$HP1"
  run -0 host_of eph 8000
  [ "${#lines[@]}" -eq 3 ]
  [[ "${lines[2]}" == "[::1]:"* ]]
  served_from eph "${lines[2]}"
}

@test "the server sees connections from its own loopback; bytes arrive exact both ways" {
  $H run -d --profile host -v "$TOOLS:/opt/t:ro" -p 8000 big -- /opt/t/http-serve 8000
  local where n=6291463
  where=$(host_of big 8000)
  wait_for 30 fetch "http://$where/count"
  # 6 MiB and 7 bytes: past the relay's first buffer and its grown pipes.
  local down inside
  down=$(fetch "http://$where/pattern/$n" | sha256sum)
  inside=$($H exec big -- sh -c "busybox wget -Y off -q -O- http://127.0.0.1:8000/pattern/$n | sha256sum")
  [ "$down" = "$inside" ]
  run -0 python3 -c '
import sys, urllib.request
body = bytes(range(256)) * 40000 + b"tail"
op = urllib.request.build_opener(urllib.request.ProxyHandler({}))
r = op.open(urllib.request.Request(sys.argv[1], data=body, headers={"Expect": ""}), timeout=30)
print(r.read().decode())' "http://$where/sum"
  [[ "$output" == "10240004 "* ]]
  # Inside, a host client's connection (held open) comes from 127.0.0.1.
  run -0 python3 -c '
import socket, subprocess, sys
host, port = sys.argv[1].rsplit(":", 1)
c = socket.create_connection((host, int(port)), timeout=10)
c.sendall(b"GET /count HTTP/1.1\r\nHost: x\r\n\r\n")
assert b"req-1" in c.recv(4096)
sys.stdout.write(subprocess.run(sys.argv[2:], capture_output=True, text=True).stdout)' \
    "$where" $H exec big -- cat /proc/net/tcp
  echo "$output"
  [[ "$output" =~ 0100007F:1F40\ 0100007F:[0-9A-F]{4}\ 01 ]]
}

@test "port --add: a port published on a running sandbox, at once; PORT again gives the same" {
  serve add
  run -0 $H port add
  [ -z "$output" ]
  run -0 $H port --add 8000 add
  local where=$output
  [[ "$where" == 127.0.0.1:* ]]
  wait_for 30 served_from add "$where"
  # (the options after the ID, as update takes them)
  run -0 $H port add --add 8000
  [ "$output" = "$where" ]
  run -0 $H port --add "$HP2:8000" add
  [ "$output" = "127.0.0.1:$HP2" ]
  served_from add "127.0.0.1:$HP2"
  run -0 $H port add
  [ "${#lines[@]}" -eq 2 ]
  # One published before start: create, --add, start.
  $H create --profile host -p "$HP3:8000" cr
  run -0 $H port --add 8001 cr
  run -0 $H port cr
  [ "${#lines[@]}" -eq 2 ]
}

@test "a server listening on the sandbox's ::1 alone is reached too" {
  $H run -d --profile host -p "$HP1:8000" v6 -- sh -c \
    'mkdir /tmp/www && echo from-v6 > /tmp/www/index.html && exec busybox httpd -f -p "[::1]:8000" -h /tmp/www'
  wait_for 30 served_from v6 "127.0.0.1:$HP1"
}

@test "two sandboxes publish the same port of theirs on different host ports" {
  serve one -p "$HP1:8000"
  serve two -p "$HP2:8000"
  wait_for 30 served_from one "127.0.0.1:$HP1"
  wait_for 30 served_from two "127.0.0.1:$HP2"
}

@test "allowlist mode publishes too; the proxy's port is not published" {
  serve al --allow 127.0.0.1:9 -p "$HP1:8000"
  wait_for 30 served_from al "127.0.0.1:$HP1"
  run -125 $H --log-format json port --add 3128 al
  echo "$output"
  [ "$(echo "$output" | jq -r .kind)" = invalid_argument ]
  [[ "$output" == *"allow-list proxy"* ]]
}

@test "inbound only: a sandbox with a published port still reaches nothing outside" {
  mkdir "$TEST_ROOT/www"
  echo host-secret > "$TEST_ROOT/www/index.html"
  busybox httpd -f -p "127.0.0.1:$HP_HOST" -h "$TEST_ROOT/www" 3>&- &
  SERVERS=$!
  wait_for 10 fetch "http://127.0.0.1:$HP_HOST/"
  serve out -p "$HP1:8000"
  wait_for 30 served_from out "127.0.0.1:$HP1"
  # Neither the host's server nor its own published port (the host's side
  # of the forwarder) is reachable from inside: the namespace has lo alone.
  run $H exec out -- sh -c "
    timeout 3 busybox wget -Y off -q -O- http://127.0.0.1:$HP_HOST/ 2>&1; echo host=\$?
    timeout 3 busybox wget -Y off -q -O- http://127.0.0.1:$HP1/ 2>&1; echo self=\$?
    cat /proc/net/route | wc -l; ls /sys/class/net"
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *"host=1"* ]]
  [[ "$output" == *"self=1"* ]]
  [[ "$output" != *"host-secret"* ]]
  [[ "$output" != *"from-out"* ]]
  [[ "$output" == *"lo" ]]
}

@test "stop releases the ports, start publishes them again as configured; delete leaves nothing" {
  serve rs -p "$HP1:8000" -p 8000
  wait_for 30 served_from rs "127.0.0.1:$HP1"
  local before
  before=$(forwarders)
  [ -n "$before" ]
  $H stop rs
  run -0 $H port rs
  [ -z "$output" ]
  pid_gone "$before"
  # The host port is free: a server of the host's may take it.
  port_free "$HP1"
  $H start rs
  wait_for 30 served_from rs "127.0.0.1:$HP1"
  run -0 host_of rs 8000
  [ "${#lines[@]}" -eq 2 ]
  served_from rs "${lines[1]}"
  local after
  after=$(forwarders)
  $H delete --force rs
  pid_gone "$after"
  port_free "$HP1"
  # run --rm: the forwarder goes with the sandbox.
  run -0 $H run --rm --profile host -p "$HP2:8000" fg -- true
  [ ! -e "$STATE/fg" ]
  port_free "$HP2"
}

@test "a forwarder ends with the sandbox's process, however it ends" {
  $H run -d --profile host -p 8000 short -- sleep 60
  local f
  f=$(forwarders)
  [ -n "$f" ]
  $H kill short KILL
  pid_gone "$f"
  run -0 $H port short
  [ -z "$output" ]
}

@test "attack: the forwarder a sandbox's connections reach holds nothing of hako's: nobody, no capability, no_new_privs, not dumpable, its sockets and a pidfd" {
  serve fw -p 8000
  $H port fw --add 8001 > /dev/null
  local f
  for f in $(forwarders); do
    grep -qx $'Uid:\t65534\t65534\t65534\t65534' "/proc/$f/status"
    grep -qx $'Gid:\t65534\t65534\t65534\t65534' "/proc/$f/status"
    grep -qxE $'Groups:\t *' "/proc/$f/status"
    grep -qx $'CapPrm:\t0000000000000000' "/proc/$f/status"
    grep -qx $'CapEff:\t0000000000000000' "/proc/$f/status"
    grep -qx $'NoNewPrivs:\t1' "/proc/$f/status"
    # Not dumpable: its /proc files are root's, not its uid's.
    [ "$(stat -c %u "/proc/$f/mem")" = 0 ]
    [ "$(readlink "/proc/$f/cwd")" = / ]
    # In the sandbox's network namespace, with only what it serves with.
    [ "$(readlink "/proc/$f/ns/net")" = "$(readlink "/proc/$($H state fw | jq -r .pid)/ns/net")" ]
    run -0 sh -c "ls -l /proc/$f/fd | awk 'NR > 1 { print \$NF }' | sed 's/[0-9]*//g' | sort -u | paste -sd,"
    [ "$output" = "/dev/null,anon_inode:[eventpoll],anon_inode:[pidfd],socket:[]" ]
  done
  # Its listening sockets are on the host's 127.0.0.1 only, by default.
  run -0 $H port fw
  [[ "$output" == *"8000/tcp -> 127.0.0.1:"* ]]
  [[ "$output" == *"8001/tcp -> 127.0.0.1:"* ]]
  [[ "$output" != *0.0.0.0* ]]
}

@test "bad input: in use, privileged, out of range, other forms, host network; nothing half-made" {
  python3 -c 'import socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen()
open(sys.argv[2], "w").close(); time.sleep(300)' "$HP_HOST" "$TEST_ROOT/held" 3>&- &
  SERVERS=$!
  wait_for 10 test -e "$TEST_ROOT/held"
  run -125 $H --log-format json run -d --profile host -p "$HP_HOST:8000" busy -- sleep 60
  echo "$output"
  [ "$(echo "$output" | jq -r .kind)" = busy ]
  [[ "$output" == *"127.0.0.1:$HP_HOST: the host port is in use"* ]]
  [ ! -e "$STATE/busy" ]
  # One good and one busy: neither is left bound, no sandbox, no forwarder.
  run -125 $H run -d --profile host -p "$HP1:8000" -p "$HP_HOST:8001" busy2 -- sleep 60
  [ ! -e "$STATE/busy2" ]
  port_free "$HP1"
  # The same id again: it exists (its own port taken is not the news).
  $H run -d --profile host -p "$HP2:8000" dup -- sleep 60
  run -125 $H --log-format json run -d --profile host -p "$HP2:8000" dup -- sleep 60
  [ "$(echo "$output" | jq -r .kind)" = exists ]
  $H delete --force dup
  # A port below 1024 needs CAP_NET_BIND_SERVICE, which this hako lacks.
  run -125 setpriv --bounding-set=-net_bind_service -- $H --log-format json run -d --profile host -p 81:8000 priv -- sleep 60
  echo "$output"
  [ "$(echo "$output" | jq -r .kind)" = permission ]
  [[ "$output" == *"CAP_NET_BIND_SERVICE"* ]]
  [ ! -e "$STATE/priv" ]
  local bad
  for bad in 70000:80 8080:0 8080:70000 8080:80/udp 8000-8001:8000-8001 ::1:8080:80 nohost:8080:80 \
             x:80 8080: '' ':80'; do
    run -125 $H --log-format json run -d --profile host -p "$bad" b -- sleep 60
    echo "$bad: $output"
    [ "$(echo "$output" | jq -r .kind)" = invalid_argument ]
    [[ "$output" == *"published port"* ]]
  done
  run -125 $H --log-format json run --rm --profile host --network host -p 8000 hostnet -- true
  echo "$output"
  [ "$(echo "$output" | jq -r .kind)" = invalid_argument ]
  [[ "$output" == *"shares the host's network"* ]]
  [ -z "$(ls -A "$STATE" 2>/dev/null)" ]
  [ -z "$(forwarders)" ]
}

@test "hako port: unknown sandbox, unpublished port, a stopped sandbox, usage" {
  run -125 $H --log-format json port nosuch
  [ "$(echo "$output" | jq -r .kind)" = not_found ]
  serve p -p 8000
  run -125 $H --log-format json port p 9999
  echo "$output"
  [ "$(echo "$output" | jq -r .kind)" = not_found ]
  [[ "$output" == *"no public port 9999/tcp published"* ]]
  run -125 $H port p notaport
  $H stop p
  run -125 $H --log-format json port --add 8000 p
  echo "$output"
  [ "$(echo "$output" | jq -r .kind)" = not_running ]
  run -125 $H port
  run -125 $H port --add 8000 p 8000
  run -0 $H port --help
  [[ "$output" == *"--add SPEC"* ]]
}
