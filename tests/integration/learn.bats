#!/usr/bin/env bats
# Learning mode (hako-learn(7)): each workload is learned with
# `run --learn`, then enforced with `run --profile-file`; the enforced run
# succeeds, and the same run changed to touch one more path or port fails.
#
# Network: the host profile's network is "none", so each sandbox has a
# netns of its own whose loopback only it can reach.  The servers
# (python3 -m http.server on 127.0.0.1) are started inside the sandbox by
# the workload itself: learning sees both the bind and the connect, and
# nothing ever leaves the machine (PyPI is unreachable there).

load helpers
bats_require_minimum_version 1.5.0

# The host profile's root is host uid 1000000000 (binds are not idmapped).
SBX_UID=1000000000

setup_file () {
  # No busybox bundle: every test here runs the host profile in its own TEST_ROOT.
  command -v /usr/bin/python3 >/dev/null || skip "no /usr/bin/python3"
}
setup () {
  hako_setup
  # A host-profile bundle with host directories bound in: /in and /tools
  # read-only, /out read-write.
  mkdir -p "$TEST_ROOT/in/a" "$TEST_ROOT/in/b" "$TEST_ROOT/other" "$TEST_ROOT/out" "$TEST_ROOT/out2" \
    "$TEST_ROOT/tools"
  for i in 1 2 3 4 5; do echo "a$i" > "$TEST_ROOT/in/a/$i.txt"; done
  echo b > "$TEST_ROOT/in/b/b.txt"
  echo secret > "$TEST_ROOT/other/secret"
  chown -R $SBX_UID:$SBX_UID "$TEST_ROOT/out" "$TEST_ROOT/out2"
  B="$TEST_ROOT/bundle"
  mkdir -p "$B"
  $HAKO spec --profile host --bundle "$B" >/dev/null
  edit_config "$B" ".mounts += [
      {\"destination\": \"/in\", \"type\": \"bind\", \"source\": \"$TEST_ROOT/in\", \"options\": [\"rbind\", \"ro\"]},
      {\"destination\": \"/other\", \"type\": \"bind\", \"source\": \"$TEST_ROOT/other\", \"options\": [\"rbind\", \"ro\"]},
      {\"destination\": \"/tools\", \"type\": \"bind\", \"source\": \"$TEST_ROOT/tools\", \"options\": [\"rbind\", \"ro\"]},
      {\"destination\": \"/out\", \"type\": \"bind\", \"source\": \"$TEST_ROOT/out\", \"options\": [\"rbind\", \"rw\"]},
      {\"destination\": \"/out2\", \"type\": \"bind\", \"source\": \"$TEST_ROOT/out2\", \"options\": [\"rbind\", \"rw\"]}]"
  chmod -R a+rX "$TEST_ROOT/in" "$TEST_ROOT/other" "$TEST_ROOT/tools"
  P="$TEST_ROOT/profile.json"
}
teardown () {
  for f in "$TEST_ROOT"/srv*.pid; do [ -e "$f" ] && kill "$(cat "$f")" 2>/dev/null; done
  hako_teardown
}

# A server on 127.0.0.1:PORT serving DIR, in the background of the
# workload's shell, and a wait until it answers, cut short when the server
# died (its bind refused: else 100 tries of a python start each).
serve_snippet='serve () { /usr/bin/python3 -m http.server "$1" --bind 127.0.0.1 -d "$2" >/dev/null 2>&1 & SERVER=$!
  for i in $(seq 100); do /usr/bin/python3 -c "import socket,sys; socket.create_connection((\"127.0.0.1\", int(sys.argv[1])))" "$1" 2>/dev/null && return 0; kill -0 $SERVER 2>/dev/null || return 1; sleep 0.1; done; return 1; }'

@test "learn: a script that reads one tree, writes another and connects to a loopback server" {
  cat > "$TEST_ROOT/tools/job.sh" <<EOF
$serve_snippet
set -e
serve 18931 /in
cat /in/a/*.txt > /out/all.txt
/usr/bin/python3 -c "import urllib.request; print(urllib.request.urlopen('http://127.0.0.1:18931/b/b.txt').read().decode().strip())" > /out/fetched.txt
case "\${1:-}" in
  read) cat /other/secret ;;
  write) echo x > /out2/x ;;
  port) serve 18932 /in; /usr/bin/python3 -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:18932/b/b.txt')" ;;
esac
kill \$SERVER
echo done
EOF
  run $H run --rm --bundle "$B" --learn "$P" l1 -- sh /tools/job.sh
  [ "$status" -eq 0 ]
  [[ "$output" == *"warning: learning mode"* ]]
  [[ "$output" == *"learned"*"new rule"* ]]
  [ "$(cat "$TEST_ROOT/out/fetched.txt")" = b ]
  # The profile: the whole /in tree (5 files in /in/a: one rule), /out
  # writable, the server's port bound and connected.
  jq -e '.sandbox.landlock.write | index("/out")' "$P"
  jq -e '.sandbox.landlock.read | map(select(. == "/in" or . == "/in/a")) | length > 0' "$P"
  jq -e '.sandbox.landlock.tcp_bind == [18931] and .sandbox.landlock.tcp_connect == [18931]' "$P"
  grep -q '^landlock.tcp_connect 18931: used by .*127.0.0.1:18931' "$P.notes"
  jq -e '.sandbox.landlock.read | index("/other") | not' "$P"

  rm -f "$TEST_ROOT"/out/*
  run $H run --rm --bundle "$B" --profile-file "$P" e1 -- sh /tools/job.sh
  [ "$status" -eq 0 ]
  [ "${lines[-1]}" = done ]
  [ "$(cat "$TEST_ROOT/out/fetched.txt")" = b ]

  # One more path read, written, or one more port: refused.
  run $H run --rm --bundle "$B" --profile-file "$P" e2 -- sh /tools/job.sh read
  [ "$status" -ne 0 ]
  [[ "$output" == *"/other/secret: Permission denied"* ]]
  run $H run --rm --bundle "$B" --profile-file "$P" e3 -- sh /tools/job.sh write
  [ "$status" -ne 0 ]
  [[ "$output" == *"Permission denied"* ]]
  [ ! -e "$TEST_ROOT/out2/x" ]
  run $H run --rm --bundle "$B" --profile-file "$P" e4 -- sh /tools/job.sh port
  [ "$status" -ne 0 ]
  [ ! -e "$TEST_ROOT/out/x" ]

  # Learning the changed run again adds just what is new, and says so.
  run $H run --rm --bundle "$B" --learn "$P" l2 -- sh /tools/job.sh read
  [ "$status" -eq 0 ]
  [[ "$output" == *"+ landlock.read /other/secret"* ]]
  [ "$(grep -c '^  + ' <<<"$output")" -eq 1 ]
  run $H run --rm --bundle "$B" --profile-file "$P" e5 -- sh /tools/job.sh read
  [ "$status" -eq 0 ]
  [[ "$output" == *secret* ]]
}

# A wheel is a zip with its metadata: built here with python's zipfile (no
# wheel or setuptools needed), served as a PEP 503 simple index.
make_index () {
  local d="$TEST_ROOT/tools/index/simple/tinypkg"
  mkdir -p "$d"
  /usr/bin/python3 - "$d/tinypkg-0.1-py3-none-any.whl" <<'EOF'
import sys, zipfile
files = {
    "tinypkg/__init__.py": "VALUE = 1\n",
    "tinypkg-0.1.dist-info/METADATA": "Metadata-Version: 2.1\nName: tinypkg\nVersion: 0.1\n",
    "tinypkg-0.1.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: hand\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
}
files["tinypkg-0.1.dist-info/RECORD"] = "".join(f"{n},,\n" for n in files) + "tinypkg-0.1.dist-info/RECORD,,\n"
with zipfile.ZipFile(sys.argv[1], "w") as z:
    for n, t in files.items():
        z.writestr(n, t)
EOF
  chmod -R a+rX "$TEST_ROOT/tools"
}

@test "learn: python3 -m pip download from a wheel index on loopback" {
  /usr/bin/python3 -m pip --version >/dev/null 2>&1 || skip "no pip for /usr/bin/python3"
  make_index
  cat > "$TEST_ROOT/tools/pip.sh" <<EOF
$serve_snippet
set -e
port=\${1:-18941}
serve \$port /tools/index
/usr/bin/python3 -m pip download --disable-pip-version-check --no-cache-dir --index-url http://127.0.0.1:\$port/simple/ -d /out/dl tinypkg
kill \$SERVER
ls /out/dl
EOF
  run $H run --rm --bundle "$B" --learn "$P" p1 -- sh /tools/pip.sh
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *tinypkg-0.1-py3-none-any.whl* ]]
  jq -e '.sandbox.landlock.tcp_connect == [18941]' "$P"

  rm -rf "$TEST_ROOT"/out/dl
  run $H run --rm --bundle "$B" --profile-file "$P" p2 -- sh /tools/pip.sh
  echo "$output"
  [ "$status" -eq 0 ]
  [ "${lines[-1]}" = tinypkg-0.1-py3-none-any.whl ]

  # The same download from an index on another port: its bind is refused.
  rm -rf "$TEST_ROOT"/out/dl
  run $H run --rm --bundle "$B" --profile-file "$P" p3 -- sh /tools/pip.sh 18942
  [ "$status" -ne 0 ]
  [ ! -e "$TEST_ROOT/out/dl" ]
}

@test "learn: make of a small C project" {
  command -v make >/dev/null && command -v cc >/dev/null || skip "no make or cc"
  mkdir -p "$TEST_ROOT/out/proj"
  cat > "$TEST_ROOT/out/proj/main.c" <<'EOF'
#include <stdio.h>
#include "greet.h"
int main (void) { greet (); return 0; }
EOF
  cat > "$TEST_ROOT/out/proj/greet.c" <<'EOF'
#include <stdio.h>
#include "greet.h"
void greet (void) { puts ("hello from make"); }
EOF
  echo 'void greet (void);' > "$TEST_ROOT/out/proj/greet.h"
  printf 'hello: main.o greet.o\n\tcc -o $@ main.o greet.o\n%%.o: %%.c greet.h\n\tcc -c -o $@ $<\nclean:\n\trm -f hello *.o\n' \
    > "$TEST_ROOT/out/proj/Makefile"
  chown -R $SBX_UID:$SBX_UID "$TEST_ROOT/out/proj"
  run $H run --rm --bundle "$B" --learn "$P" m1 -- sh -c 'make -C /out/proj && /out/proj/hello && make -C /out/proj clean'
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *"hello from make"* ]]

  run $H run --rm --bundle "$B" --profile-file "$P" m2 -- sh -c 'make -C /out/proj && /out/proj/hello && make -C /out/proj clean'
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *"hello from make"* ]]

  # The same build with its output in one more directory: refused.
  run $H run --rm --bundle "$B" --profile-file "$P" m3 -- sh -c 'make -C /out/proj && cp /out/proj/hello /out2/hello'
  [ "$status" -ne 0 ]
  [[ "$output" == *"Permission denied"* ]]
  [ ! -e "$TEST_ROOT/out2/hello" ]
}

@test "learn: --learn-seccomp learns an allow-list that the enforced run passes and a new syscall fails" {
  run $H run --rm --bundle "$B" --learn "$P" --learn-seccomp s1 -- sh -c 'cat /in/b/b.txt'
  [ "$status" -eq 0 ]
  [[ "$output" == *"its seccomp filter stays"* ]]
  jq -e '.sandbox.seccomp.allow | index("execve") and index("openat") and (index("mkdir") | not)' "$P"
  run $H run --rm --bundle "$B" --profile-file "$P" s2 -- sh -c 'cat /in/b/b.txt'
  [ "$status" -eq 0 ]
  [ "$output" = b ]
  # chdir(2) was never learned: the shell's builtin cd is refused (EPERM).
  run $H run --rm --bundle "$B" --profile-file "$P" s3 -- sh -c 'cat /in/b/b.txt; cd /in/b'
  [ "$status" -eq 2 ]
  [ "${lines[0]}" = b ]
  jq -e '.sandbox.seccomp.allow | index("chdir") | not' "$P"
}

@test "learn: the state says the sandbox is unconfined in the learned dimensions" {
  # It ends with status 0 when told (TERM): a run that failed (a delete's
  # KILL, 137) merges nothing, and the profile is what this test reads.
  $H run -d --bundle "$B" --learn "$P" st -- sh -c 'trap "exit 0" TERM; sleep 30 & wait'
  run $H state st
  [ "$status" -eq 0 ]
  [[ "$(jq -r '.annotations["org.hako.learn"]' <<<"$output")" == "learning into $P: unconfined in Landlock's filesystem and TCP rules"* ]]
  $H kill st TERM
  run -0 $H wait st
  # The learner writes the profile once the sandbox's last process is gone.
  profile_written () { [ -e "$P" ]; }
  wait_for 10 profile_written
  jq -e '.sandbox.landlock.exec | length > 0' "$P"
  $H delete st
}

@test "learn: bad use is refused before anything runs" {
  run $H run --rm --bundle "$B" --learn-seccomp x1 -- true
  [ "$status" -eq 125 ]
  [[ "$output" == *"--learn-seccomp needs --learn FILE"* ]]
  echo '{"sandbox": 3}' > "$TEST_ROOT/bad.json"
  run $H run --rm --bundle "$B" --profile-file "$TEST_ROOT/bad.json" x2 -- true
  [ "$status" -eq 125 ]
  [[ "$output" == *"--profile-file"*"expected"* ]]
  run $H run --rm --bundle "$B" --profile-file "$TEST_ROOT/missing.json" x3 -- true
  [ "$status" -eq 125 ]
  [ ! -d "$STATE/x3" ]
  # A profile that is not one --learn can merge into is left alone.
  echo 'not json' > "$P"
  run $H run --rm --bundle "$B" --learn "$P" x4 -- true
  [[ "$output" == *"learn:"*"invalid JSON"* ]]
  [ "$(cat "$P")" = "not json" ]
}

@test "learn: a --profile-file another user owns or can write is refused before anything runs" {
  # The profile says what the sandbox may read: one written by another user
  # would let that user hand the sandbox /other.
  echo '{"sandbox": {"landlock": {"read": ["/usr", "/lib", "/lib64", "/bin", "/etc", "/other"],
    "exec": ["/usr", "/bin", "/lib", "/lib64"]}}}' > "$P"
  chown 65534 "$P"
  run $H run --rm --bundle "$B" --profile-file "$P" t1 -- cat /other/secret
  [ "$status" -eq 125 ]
  echo "$output"
  [[ "$output" == *"--profile-file: $P is owned by uid 65534, not root"* ]]
  [[ "$output" != *secret* ]]
  chown 0:0 "$P"
  chmod 0666 "$P"
  run $H run --rm --bundle "$B" --profile-file "$P" t2 -- cat /other/secret
  [ "$status" -eq 125 ]
  [[ "$output" == *"--profile-file: $P is writable by every user (mode 0666)"* ]]
  chmod 0644 "$P"
  mkdir -m 0777 "$TEST_ROOT/open"
  cp -p "$P" "$TEST_ROOT/open/p.json"
  run $H run --rm --bundle "$B" --profile-file "$TEST_ROOT/open/p.json" t3 -- cat /other/secret
  [ "$status" -eq 125 ]
  [[ "$output" == *"$TEST_ROOT/open is writable by every user (mode 0777)"* ]]
  [ ! -d "$STATE/t3" ]
  # Root's, in root's directories: enforced.
  run $H run --rm --bundle "$B" --profile-file "$P" t4 -- cat /other/secret
  [ "$status" -eq 0 ]
  [ "$output" = secret ]
}

# A free port on the host's 127.0.0.1.
free_port () {
  /usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

@test "learn: allowlist mode forwards and records the hosts reached, the enforced run refuses another" {
  # The servers run on the host's loopback: an allowlist sandbox reaches
  # them only through its proxy (HTTP_PROXY inside); only IP literals, so
  # no name is looked up.
  mkdir -p "$TEST_ROOT/www"
  echo hello > "$TEST_ROOT/www/hi.txt"
  P1=$(free_port) P2=$(free_port)
  /usr/bin/python3 -m http.server "$P1" --bind 127.0.0.1 -d "$TEST_ROOT/www" >/dev/null 2>&1 3>&- &
  echo $! > "$TEST_ROOT/srv1.pid"
  /usr/bin/python3 -m http.server "$P2" --bind 127.0.0.1 -d "$TEST_ROOT/www" >/dev/null 2>&1 3>&- &
  echo $! > "$TEST_ROOT/srv2.pid"
  for i in $(seq 100); do
    /usr/bin/python3 -c 'import socket, sys; [socket.create_connection(("127.0.0.1", int(p))) for p in sys.argv[1:]]' \
      "$P1" "$P2" 2>/dev/null && break
    sleep 0.1
  done
  cat > "$TEST_ROOT/tools/get.py" <<'EOF2'
import sys, urllib.request
for port in sys.argv[1:]:
    print(urllib.request.urlopen(f"http://127.0.0.1:{port}/hi.txt", timeout=10).read().decode().strip())
EOF2
  chmod a+r "$TEST_ROOT/tools/get.py"
  # Learning is no way around the loopback rule: the host's loopback is
  # reached only where the CLI user names it.
  # (NO_PROXY unset, so the request goes to the proxy, which refuses it.)
  run $H run --rm --bundle "$B" --network allowlist --learn "$P" n0 -- \
    /usr/bin/env -u NO_PROXY -u no_proxy /usr/bin/python3 /tools/get.py "$P1"
  echo "$output"
  [ "$status" -ne 0 ]
  [[ "$output" != *hello* ]]
  [[ "$output" == *"403"* ]]
  rm -f "$P" "$P.notes"
  run $H run --rm --bundle "$B" --network allowlist --allow "127.0.0.1:$P1" --learn "$P" n1 -- \
    /usr/bin/python3 /tools/get.py "$P1"
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *"the network is not confined"* ]]
  [[ "$output" == *hello* ]]
  # The host's loopback is not granted by what was learned (the request the
  # proxy saw, as its rule): the report and the notes say so and how to
  # grant it; the allow-list stays empty.
  [[ "$output" == *"! network.allow GET http://127.0.0.1:$P1/hi.txt: not granted (loopback; needs --allow 'GET http://127.0.0.1:$P1/hi.txt')"* ]]
  jq -e '.sandbox.network == {mode: "allowlist", allow: []}' "$P"
  grep -q "^# not granted: network.allow GET http://127.0.0.1:$P1/hi.txt: a loopback destination.*--allow 'GET http://127.0.0.1:$P1/hi.txt'\$" "$P.notes"

  # Enforced alone, the profile does not reach it (with no loopback in the
  # list, NO_PROXY sends the client to the sandbox's own loopback).
  run $H run --rm --bundle "$B" --profile-file "$P" n2 -- /usr/bin/python3 /tools/get.py "$P1"
  echo "$output"
  [ "$status" -ne 0 ]
  [[ "$output" != *hello* ]]
  # The CLI user names the loopback destination: that one, and no other.
  run $H run --rm --bundle "$B" --profile-file "$P" --allow "127.0.0.1:$P1" n3 -- /usr/bin/python3 /tools/get.py "$P1"
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$output" = hello ]
  run $H run --rm --bundle "$B" --profile-file "$P" --allow "127.0.0.1:$P1" n4 -- /usr/bin/python3 /tools/get.py "$P1" "$P2"
  echo "$output"
  [ "$status" -ne 0 ]
  [ "${lines[0]}" = hello ]
  [[ "$output" == *"403"* ]]
}

@test "learn: exec --learn into a running sandbox, enforced by a new one" {
  $H run -d --bundle "$B" xs -- sleep 300
  job='cat /in/a/1.txt /in/b/b.txt; echo x > /out/e.txt'
  run $H exec --learn "$P" xs -- sh -c "$job"
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *"warning: learning mode: the command runs without the sandbox's Landlock"* ]]
  [[ "$output" == *"learned"*"new rule"* ]]
  [[ "$output" == *"+ landlock.write /out"* ]]
  $H delete --force xs
  jq -e '.sandbox.landlock.read | index("/in/b/b.txt")' "$P"
  jq -e '.sandbox.landlock.read | index("/other/secret") | not' "$P"

  rm -f "$TEST_ROOT/out/e.txt"
  run $H run --rm --bundle "$B" --profile-file "$P" xe1 -- sh -c "$job"
  echo "$output"
  [ "$status" -eq 0 ]
  [ -e "$TEST_ROOT/out/e.txt" ]
  run $H run --rm --bundle "$B" --profile-file "$P" xe2 -- sh -c "$job; cat /other/secret"
  [ "$status" -ne 0 ]
  [[ "$output" == *"/other/secret: Permission denied"* ]]

  run $H exec --learn-seccomp xs -- true
  [ "$status" -eq 125 ]
  [[ "$output" == *"--learn-seccomp needs --learn FILE"* ]]
}

# What a sandboxed program could try past a learned profile: an AF_VSOCK
# socket (the hypervisor), clone3 and unshare with a user and a network
# namespace; one "NAME RESULT" line each (RESULT "ok" or strerror).
write_escape_py () {
  cat > "$TEST_ROOT/tools/escape.py" <<'EOF2'
import ctypes, os, socket, struct
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
NEWUSER_NET = 0x10000000 | 0x40000000
def res(r):
    return "ok" if r >= 0 else os.strerror(ctypes.get_errno())
try:
    socket.socket(socket.AF_VSOCK, socket.SOCK_STREAM)
    print("vsock ok")
except OSError as e:
    print("vsock", e.strerror)
args = ctypes.create_string_buffer(struct.pack("11Q", NEWUSER_NET, 0, 0, 0, 17, 0, 0, 0, 0, 0, 0), 88)
pid = libc.syscall(435, args, ctypes.c_size_t(88))
if pid == 0:
    os._exit(0)
print("clone3", res(pid))
if pid > 0:
    os.waitpid(pid, 0)
print("unshare", res(libc.unshare(NEWUSER_NET)))
EOF2
  cat > "$TEST_ROOT/tools/benign.py" <<'EOF2'
import socket, threading
socket.socket(socket.AF_INET, socket.SOCK_STREAM).close()
t = threading.Thread(target=lambda: None)
t.start()
t.join()
print("benign done")
EOF2
  chmod a+r "$TEST_ROOT/tools/escape.py" "$TEST_ROOT/tools/benign.py"
}

# The host profile's answers, which a learned profile must not weaken.
REFUSED_ESCAPES='vsock Address family not supported by protocol
clone3 Function not implemented
unshare Operation not permitted'

@test "learn: a learned seccomp allow-list only narrows hako's filter (AF_VSOCK, clone3 and unshare stay refused)" {
  write_escape_py
  run $H run --rm --bundle "$B" e0 -- /usr/bin/python3 /tools/escape.py
  [ "$status" -eq 0 ]
  [ "$output" = "$REFUSED_ESCAPES" ]
  # A benign python3 that opens one socket and starts one thread.
  run $H run --rm --bundle "$B" --learn "$P" --learn-seccomp l1 -- /usr/bin/python3 /tools/benign.py
  [ "$status" -eq 0 ]
  jq -e '.sandbox.seccomp.allow | index("socket") and index("clone")' "$P"
  run $H run --rm --bundle "$B" --profile-file "$P" e1 -- /usr/bin/python3 /tools/benign.py
  [ "$status" -eq 0 ]
  [ "$output" = "benign done" ]
  run $H run --rm --bundle "$B" --profile-file "$P" e2 -- /usr/bin/python3 /tools/escape.py
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$output" = "$REFUSED_ESCAPES" ]
  # Even a profile that lists clone3 and unshare gets hako's answer.
  jq '.sandbox.seccomp.allow += ["clone3", "unshare"]' "$P" > "$P.2"
  run $H run --rm --bundle "$B" --profile-file "$P.2" e3 -- /usr/bin/python3 /tools/escape.py
  [ "$status" -eq 0 ]
  [ "$output" = "$REFUSED_ESCAPES" ]
}

@test "learn: the observed run keeps hako's seccomp filter, run and exec --learn-seccomp alike" {
  write_escape_py
  run $H run --rm --bundle "$B" --learn "$P" --learn-seccomp l1 -- /usr/bin/python3 /tools/escape.py
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *"$REFUSED_ESCAPES"* ]]
  jq -e '.sandbox.seccomp.allow | index("clone3") | not' "$P"
  # exec --learn --learn-seccomp of a script the sandbox wrote itself.
  $H run -d --bundle "$B" xs -- sleep 300
  $H exec xs -- cp /tools/escape.py /out/job.py
  run $H exec --learn "$TEST_ROOT/p2.json" --learn-seccomp xs -- /usr/bin/python3 /out/job.py
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *"its seccomp filter stays"* ]]
  [[ "$output" == *"$REFUSED_ESCAPES"* ]]
  $H delete --force xs
}

@test "learn: exec --learn into a sandbox that enforces a learned allow-list learns what is new" {
  run $H run --rm --bundle "$B" --learn "$P" --learn-seccomp l1 -- sleep 0
  [ "$status" -eq 0 ]
  $H run -d --bundle "$B" --profile-file "$P" xs -- sleep 300
  # cat was never learned: refused under the allow-list ...
  run $H exec xs -- cat /in/b/b.txt
  [ "$status" -ne 0 ]
  # ... and learned by exec --learn, which runs under hako's filter only.
  run $H exec --learn "$TEST_ROOT/p2.json" --learn-seccomp xs -- cat /in/b/b.txt
  echo "$output"
  [ "$status" -eq 0 ]
  grep -qx b <<<"$output"
  jq -e '.sandbox.seccomp.allow | index("read") and index("openat")' "$TEST_ROOT/p2.json"
  $H delete --force xs
}

@test "learn: --profile-file refuses what learning never writes, naming the field" {
  refuse () {
    echo "$1" > "$TEST_ROOT/bad.json"
    run $H run --rm --bundle "$B" --profile-file "$TEST_ROOT/bad.json" r1 -- true
    echo "$output"
    [ "$status" -eq 125 ]
    [[ "$output" == *"--profile-file $TEST_ROOT/bad.json: --profile-file: $2"* ]]
    [ ! -d "$STATE/r1" ]
  }
  refuse '{"sandbox": {"network": {"mode": "host"}}}' '.sandbox.network.mode: only "allowlist"'
  refuse '{"sandbox": {"landlock": {"write": ["/out", "/"]}}}' '.sandbox.landlock.write[1]: "/" grants the whole filesystem'
  refuse '{"sandbox": {"landlock": {"read": ["//."]}}}' '.sandbox.landlock.read[0]: "/" grants the whole filesystem'
  refuse '{"sandbox": {"network": {"mode": "allowlist", "allow": ["169.254.169.254:80"]}}}' \
    '.sandbox.network.allow[0]: 169.254.169.254:80 is a link-local destination'
  refuse '{"sandbox": {"network": {"mode": "allowlist", "allow": ["127.0.0.1:22"]}}}' \
    '.sandbox.network.allow[0]: 127.0.0.1:22 is a loopback destination'
  refuse '{"sandbox": {"network": {"mode": "allowlist", "allow": ["0.0.0.0/0"]}}}' \
    '.sandbox.network.allow[0]: not an entry learning writes'
  refuse '{"sandbox": {"network": {"mode": "allowlist", "allow": ["2130706433:22"]}}}' \
    '.sandbox.network.allow[0]: 2130706433:22 is a loopback destination'
  refuse '{"sandbox": {"limits": {"disk": -1}}}' '.sandbox.limits: not a field learning writes'
}

@test "learn: calls that failed are not grants (EROFS, EACCES, a refused connect)" {
  echo secret > "$TEST_ROOT/tools/rootonly.txt"
  chmod 0600 "$TEST_ROOT/tools/rootonly.txt"
  cat > "$TEST_ROOT/tools/try.sh" <<'EOF2'
echo x > /etc/hako-learn-x
echo x > /in/new
echo x >> /in/b/b.txt
echo 1 > /proc/sys/kernel/ns_last_pid
cat /tools/rootonly.txt
/usr/bin/python3 -c 'import socket; socket.create_connection(("127.0.0.1", 22))'
echo ok > /out/ok.txt
cat /in/a/1.txt
true
EOF2
  chmod a+r "$TEST_ROOT/tools/try.sh"
  run $H run --rm --bundle "$B" --learn "$P" l1 -- sh /tools/try.sh
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *"Read-only file system"* ]]
  [[ "$output" == *"Permission denied"* ]]
  [[ "$output" == *"Connection refused"* ]]
  cat "$P"
  # What succeeded is granted ...
  jq -e '.sandbox.landlock.write | index("/out")' "$P"
  jq -e '.sandbox.landlock.read | index("/in/a/1.txt")' "$P"
  # ... what failed is not.
  jq -e '[.sandbox.landlock.write[] | select(. == "/etc" or startswith("/in") or startswith("/proc"))] == []' "$P"
  jq -e '.sandbox.landlock.read | index("/tools/rootonly.txt") | not' "$P"
  jq -e '.sandbox.landlock.tcp_connect | index(22) | not' "$P"
}

@test "learn: the learner reads the sandbox's files as the sandbox (a root-only #! line is not learned)" {
  # A root-only script: the sandbox (host uid 1000000000) cannot run it;
  # its interpreter line must not reach the profile.
  printf '#!/secret-interp-xyz\n' > "$TEST_ROOT/tools/rootonly"
  chmod 0700 "$TEST_ROOT/tools/rootonly"
  run $H run --rm --bundle "$B" --learn "$P" l1 -- sh -c '/tools/rootonly; echo end'
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *"/tools/rootonly: Permission denied"* ]]
  jq -e '[.sandbox.landlock.exec[] | select(test("secret-interp|rootonly"))] == []' "$P"
}

@test "learn: a fifo the sandbox executes does not block the learner" {
  # -k: a learner stuck in open(2) keeps hako (and the sandbox) waiting
  # past a plain SIGTERM.
  run timeout -k 5 60 $H run --rm --bundle "$B" --learn "$P" l1 -- sh -c \
    'mkfifo /out/f && chmod 755 /out/f && /out/f; echo end'
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *end* ]]
  jq -e '.sandbox.landlock.write | index("/out")' "$P"
  jq -e '[.sandbox.landlock.exec[] | select(startswith("/out"))] == []' "$P"
}

@test "learn: the notes escape names the sandbox chose" {
  run $H run --rm --bundle "$B" --learn "$P" l1 -- sh -c \
    'n=$(printf "/out/x\nlandlock.write EVERYTHING: forged\033[2J"); echo > "$n"; cat "$n"'
  [ "$status" -eq 0 ]
  cat -A "$P.notes"
  run ! grep -q "^landlock.write EVERYTHING: forged" "$P.notes"
  run ! grep -q $'\033' "$P.notes"
  grep -q 'first /out/x\\x0alandlock.write EVERYTHING: forged\\x1b\[2J by ' "$P.notes"
}

@test "learn: a failed observed run merges nothing unless --learn-on-failure, and says so" {
  cd "$TEST_ROOT"
  run -3 --separate-stderr $H run --rm --learn p.json f1 -- sh -c 'cat /in/b/b.txt; exit 3'
  [[ "$stderr" == *"the observed run exited 3: nothing learned into p.json"*"--learn-on-failure merges them"* ]]
  [ ! -e p.json ]
  # Detached: the learner reads the exit status from the sandbox's state.
  $H run -d --learn p.json f2 -- sh -c 'exit 4' 2> "$TEST_ROOT/f2.err"
  wait_status f2 stopped
  wait_for 10 grep -q 'the observed run exited 4' "$TEST_ROOT/f2.err"
  [ ! -e p.json ]
  $H delete f2
  # Asked for: merged, as before.
  run -3 $H run --rm --learn-on-failure --learn p.json f3 -- sh -c 'cat /etc/hostname; exit 3'
  jq -e '.sandbox.landlock.read | index("/etc/hostname") != null' p.json
  run -125 $H run --rm --learn-on-failure f4 -- true
  [[ "$output" == *"--learn-on-failure needs --learn FILE"* ]]
}

@test "learn: hako-learn(7)'s make -C /work/proj example, the project bound in with -v" {
  command -v make > /dev/null || skip "make is not installed"
  cd "$TEST_ROOT"
  mkdir proj
  printf 'all: out.txt\nout.txt: in.txt\n\tcp in.txt out.txt\n' > proj/Makefile
  echo made > proj/in.txt
  chown -R $SBX_UID:$SBX_UID proj
  # The example's two lines, as the man page has them.
  grep -qF 'hako run \-\-rm \-v "$PWD/proj:/work/proj" \-\-learn build.json b1 \-\- make \-C /work/proj' \
    "$BATS_TEST_DIRNAME/../../man/hako-learn.7"
  run -0 $H run --rm -v "$PWD/proj:/work/proj" --learn build.json b1 -- make -C /work/proj
  [ "$(cat proj/out.txt)" = made ]
  rm proj/out.txt
  run -0 $H run --rm -v "$PWD/proj:/work/proj" --profile-file build.json b2 -- make -C /work/proj
  [ "$(cat proj/out.txt)" = made ]
}

@test "learn: put and cp into a sandbox enforcing a learned profile say its Landlock rules refuse it" {
  cd "$TEST_ROOT"
  $H run -d --profile host s1
  $H exec --learn job.json s1 -- sh -c 'cat /etc/hostname > /tmp/x'
  $H delete --force s1
  $H run -d --profile host --profile-file job.json s2
  echo data > f.txt
  run -125 $H cp f.txt s2:/work/f.txt
  [[ "$output" == *"Permission denied: the sandbox's Landlock rules"*"grant write on /tmp"*"landlock.write"*"hako-learn(7)"* ]]
  run -125 $H put s2 /work/g.txt <<< hi
  [[ "$output" == *"the sandbox's Landlock rules"* ]]
  # Where the profile grants it, put works as the sandbox.
  echo hi | $H put s2 /tmp/ok.txt
  $H delete --force s2
  # The way in that hako-learn(7) gives: the files in a snapshot, the
  # profile learned from a branch of it, enforced on another branch.
  $H run -d --profile host s3
  $H cp f.txt s3:/work/f.txt
  mkdir -m 0700 snaps
  $H snapshot s3 "$TEST_ROOT/snaps/snap"
  $H delete --force s3
  $H run -d --from-snapshot "$TEST_ROOT/snaps/snap" s4
  run -0 $H exec --learn w.json s4 -- cat /work/f.txt
  $H delete --force s4
  $H run -d --from-snapshot "$TEST_ROOT/snaps/snap" --profile-file w.json s5
  run -0 $H exec s5 cat /work/f.txt
  [ "$output" = data ]
  run -1 $H exec s5 cat /etc/passwd
  $H delete --force s5
}
