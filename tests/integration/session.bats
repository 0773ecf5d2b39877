#!/usr/bin/env bats
# Sessions: terminals (runc's --console-socket, hako's own relay), exec
# --process and --preserve-fds, and hako's built-in init as pid 1.

load helpers
bats_require_minimum_version 1.5.0

setup_file () { hako_setup_file; }
setup () {
  hako_setup
  RECVTTY=${HAKO_TEST_HELPERS:-$(dirname "$HAKO")/tests/helpers}/recvtty
  SOCK=$TEST_ROOT/console.sock
}
teardown () {
  [ -n "${RECV_PID:-}" ] && kill "$RECV_PID" 2>/dev/null
  hako_teardown
}

# recv_start [INPUT]: a stand-in shim listening on $SOCK; what the terminal
# says goes to $TEST_ROOT/tty.out, the message's name to $TEST_ROOT/tty.err.
recv_start () {
  [ -x "$RECVTTY" ] || skip "the test helper recvtty is not built (make check builds it)"
  "$RECVTTY" "$SOCK" "$@" > "$TEST_ROOT/tty.out" 2> "$TEST_ROOT/tty.err" &
  RECV_PID=$!
  local i
  for i in $(seq 50); do [ -S "$SOCK" ] && return 0; sleep 0.1; done
  echo "recvtty never listened" >&2
  return 1
}

recv_wait () {
  wait "$RECV_PID"
  RECV_PID=
}

# in_tty CMD: run CMD (a shell string) with a terminal as its stdin and stdout.
in_tty () {
  script -qec "$1" /dev/null
}

tty_bundle () {
  local b
  b=$(new_bundle "$1")
  shift
  edit_config "$b" '.process.terminal = true | .process.consoleSize = {"height": 30, "width": 100}'
  set_args "$b" "$@"
  echo "$b"
}

@test "terminal: create --console-socket sends the master of a pty of the sandbox's own devpts" {
  b=$(tty_bundle t1 sh -c 'test -t 0 && test -t 1 && echo TTY; tty; stty size; ls -l /dev/console')
  recv_start
  $H create --bundle "$b" --console-socket "$SOCK" t1
  $H start t1
  recv_wait
  cat "$TEST_ROOT/tty.out"
  grep -q '^TTY' "$TEST_ROOT/tty.out"
  grep -q '^/dev/pts/0' "$TEST_ROOT/tty.out"   # the sandbox's devpts numbers from 0
  grep -q '^30 100' "$TEST_ROOT/tty.out"       # consoleSize
  grep -q '136, *0 .*/dev/console' "$TEST_ROOT/tty.out"  # /dev/console is the pty
  grep -q '^name: /dev/ptmx$' "$TEST_ROOT/tty.err"      # runc's message
}

@test "terminal: run in the foreground relays hako's own terminal to the pty" {
  b=$(tty_bundle t2 sh)
  run in_tty "(sleep 0.5; echo 'echo hi-\$((40+2)); test -t 0 && echo TTY'; sleep 0.5; echo 'exit 3') | $H run --rm --bundle $b t2"
  [ "$status" -eq 3 ]
  [[ "$output" == *"hi-42"* ]]
  [[ "$output" == *"TTY"* ]]
}

@test "terminal: a detached sandbox needs --console-socket, and --console-socket needs a terminal" {
  b=$(tty_bundle t3 true)
  run $H create --bundle "$b" t3
  [ "$status" -eq 125 ]
  [[ "$output" == *"needs --console-socket"* ]]
  [ -z "$(ls "$STATE")" ]
  b2=$(new_bundle t4)
  run $H create --bundle "$b2" --console-socket "$SOCK" t4
  [ "$status" -eq 125 ]
  [[ "$output" == *"terminal is false"* ]]
  run $H create --bundle "$b" --console-socket "$TEST_ROOT/nobody-listens" t3
  [ "$status" -eq 125 ]
  [[ "$output" == *"connect to console socket"* ]]
  [ -z "$(ls "$STATE")" ]
  # The pty must come from a devpts of the sandbox's own, never the host's.
  edit_config "$b" '.mounts |= map(if .destination == "/dev/pts" then {destination: "/dev/pts",
    type: "bind", source: "/dev/pts", options: ["rbind", "nosuid", "noexec"]} else . end)'
  run in_tty "$H run --rm --bundle $b t5"
  [ "$status" -eq 125 ]
  [[ "$output" == *"is the host's devpts"* ]]
  [ -z "$(ls "$STATE")" ]
}

@test "exec --tty: an interactive shell through hako's relay, with the command's own status" {
  b=$(new_bundle x1)
  set_args "$b" sleep 1000
  $H run --detach --bundle "$b" x1
  run in_tty "(sleep 0.5; echo 'test -t 0 && echo TTY-\$((6*7))'; sleep 0.5; echo 'exit 4') | $H exec -t x1 sh"
  [ "$status" -eq 4 ]
  [[ "$output" == *"TTY-42"* ]]
  run in_tty "$H exec --tty x1 -- sh -c 'tty; kill -9 \$\$'"
  [ "$status" -eq 137 ]
  [[ "$output" == *"/dev/pts/"* ]]
  run in_tty "$H exec --tty x1 no-such-command"
  [ "$status" -eq 127 ]
  run in_tty "$H exec --tty --timeout 1s x1 -- sh -c 'tty; sleep 30'"
  [ "$status" -eq 124 ]
  [[ "$output" == *"/dev/pts/"* ]]
  # Without a terminal on our side the relay still works, as a pipe, and
  # the end of our input is the end of the pty's.
  run $H exec -t x1 -- sh -c 'test -t 1 && echo TTY' < /dev/null
  [ "$status" -eq 0 ]
  [[ "$output" == *"TTY"* ]]
  run $H exec -t x1 -- sh -c 'cat; echo cat-ended' <<< 'piped in'
  [ "$status" -eq 0 ]
  [[ "$output" == *"piped in"*"cat-ended"* ]]
}

@test "exec --tty --console-socket: the master goes to the socket, even detached" {
  b=$(new_bundle x2)
  set_args "$b" sleep 1000
  $H run --detach --bundle "$b" x2
  recv_start
  $H exec --tty --console-socket "$SOCK" --detach x2 -- sh -c 'test -t 0 && echo TTY; exit 0'
  recv_wait
  grep -q '^TTY' "$TEST_ROOT/tty.out"
  # runc's detached exec (a --pid-file) has nowhere else to send it; a kept
  # process (procs.bats) keeps it itself
  run $H exec --tty --detach --pid-file "$TEST_ROOT/pid" x2 true
  [ "$status" -eq 125 ]
}

@test "exec --process: an OCI process JSON, with the command line overriding it" {
  b=$(new_bundle p1)
  set_args "$b" sleep 1000
  $H run --detach --bundle "$b" p1
  cat > "$TEST_ROOT/proc.json" <<'JSON'
{ "args": ["sh", "-c", "echo $FOO $(id -u) $(pwd)"], "env": ["FOO=from-file", "PATH=/bin"],
  "cwd": "/tmp", "user": {"uid": 1000, "gid": 1000}, "apparmorProfile": "" }
JSON
  run $H exec --process "$TEST_ROOT/proc.json" p1
  [ "$status" -eq 0 ]
  [ "$output" = "from-file 1000 /tmp" ]
  run $H exec --process "$TEST_ROOT/proc.json" --env FOO=flag --cwd / p1
  [ "$output" = "flag 1000 /" ]
  run $H exec --process "$TEST_ROOT/proc.json" p1 -- sh -c 'echo args from the command line'
  [ "$output" = "args from the command line" ]
  # Nothing beyond the sandbox's own bounding set.
  echo '{"args": ["true"], "capabilities": {"bounding": ["CAP_SYS_ADMIN"]}}' > "$TEST_ROOT/caps.json"
  run $H exec --process "$TEST_ROOT/caps.json" p1
  [ "$status" -eq 125 ]
  [[ "$output" == *"CAP_SYS_ADMIN is not in the bounding set"* ]]
  echo '{"args": "true"}' > "$TEST_ROOT/bad.json"
  run $H exec --process "$TEST_ROOT/bad.json" p1
  [ "$status" -eq 125 ]
  [[ "$output" == *"bad.json"*".args"* ]]
  # terminal: true in the file is --tty.
  echo '{"args": ["sh", "-c", "test -t 0 && echo TTY"], "terminal": true}' > "$TEST_ROOT/tty.json"
  run in_tty "$H exec --process $TEST_ROOT/tty.json p1"
  [ "$status" -eq 0 ]
  [[ "$output" == *"TTY"* ]]
}

@test "--preserve-fds: fds 3..3+N-1 reach exec, create and run's process, and nothing else does" {
  b=$(new_bundle f1)
  set_args "$b" sleep 1000
  $H run --detach --bundle "$b" f1
  echo first > "$TEST_ROOT/a"
  echo second > "$TEST_ROOT/b"
  run $H exec --preserve-fds 2 f1 -- sh -c 'cat <&3; cat <&4; echo "LISTEN_FDS=${LISTEN_FDS:-unset}"' \
    3<"$TEST_ROOT/a" 4<"$TEST_ROOT/b"
  [ "$status" -eq 0 ]
  [ "$output" = "$(printf 'first\nsecond\nLISTEN_FDS=unset')" ]
  run $H exec --preserve-fds 1 f1 -- sh -c 'test -e /proc/self/fd/4 && echo leaked; cat <&3' \
    3<"$TEST_ROOT/a" 4<"$TEST_ROOT/b"
  [ "$output" = first ]
  run $H exec f1 -- sh -c 'cat <&3' 3<"$TEST_ROOT/a"
  [ "$status" -ne 0 ]
  b2=$(new_bundle f2)
  set_args "$b2" sh -c 'cat <&3'
  run $H run --rm --preserve-fds 1 --bundle "$b2" f2 3<"$TEST_ROOT/a"
  [ "$status" -eq 0 ]
  [ "$output" = first ]
  $H create --preserve-fds 1 --bundle "$b2" f3 3<"$TEST_ROOT/b"
  run $H start f3
  [ "$status" -eq 0 ]
}

# ---- hako's init -----------------------------------------------------------------

@test "init: the host profile without a command is a session whose pid 1 is hako's init" {
  $H spec --profile host --bundle "$TEST_ROOT"
  [ "$(jq -r .sandbox.init "$TEST_ROOT/config.json")" = true ]
  [ "$(jq -r '.process.args' "$TEST_ROOT/config.json")" = null ]
  $H run -d --profile host s1
  $H exec s1 -- true
  pid=$($H state s1 | jq -r .pid)
  # /proc/1/exe is a sealed memfd, never the hako binary (CVE-2019-5736).
  [ "$(readlink "/proc/$pid/exe")" = "/memfd:hako-init (deleted)" ]
  run $H exec s1 -- sh -c 'readlink /proc/1/exe; cat /proc/1/comm'
  [[ "$output" != *hako/* && "$output" != *"/hako"* ]]
  [[ "$output" == *"hako-init"* ]]
  run $H exec s1 -- sh -c 'echo x > /proc/1/exe'
  [ "$status" -ne 0 ]
  run $H exec s1 -- sh -c 'exec 3>>/proc/1/exe'
  [ "$status" -ne 0 ]
  cmp -s "$HAKO" "/proc/$pid/exe" && false
  # exec, put/get and timeouts work as in any sandbox.
  echo hello | $H put s1 /work/f
  [ "$($H get s1 /work/f)" = hello ]
  run $H exec --json --timeout 500ms s1 -- sleep 10
  [ "$(echo "$output" | jq -r .reason)" = timeout ]
  run $H exec s1 -- sh -c 'exit 5'
  [ "$status" -eq 5 ]
}

@test "init: orphans are reaped, no zombie is left inside" {
  $H run -d --profile host s2
  # Each sleep outlives its parent: an orphan, re-parented to pid 1.
  $H exec s2 -- sh -c '(sleep 0.2 &); (sleep 0.3 &); true'
  # Until both are gone: a zombie keeps its "(sleep)" entry until pid 1
  # reaps it, so an init that does not reap fails the wait.
  orphans_gone () { ! $H exec s2 -- sh -c 'cat /proc/[0-9]*/stat' | grep -q '(sleep)'; }
  wait_for 10 orphans_gone
  run $H exec s2 -- sh -c 'cat /proc/[0-9]*/stat | cut -d" " -f2,3; echo end'
  echo "$output"
  [ "$status" -eq 0 ]
  [ "${lines[-1]}" = end ]  # the listing ran: an empty one would prove nothing
  [[ "$output" != *" Z"* ]]
  [[ "$output" != *"(sleep)"* ]]
}

@test "init: SIGTERM ends a waiting init with 0; with args it runs them and exits with their status" {
  $H run --profile host s3 &
  runpid=$!
  wait_status s3 running
  $H kill s3 TERM
  st=0
  wait "$runpid" || st=$?
  [ "$st" -eq 0 ]
  $H delete s3
  # sandbox.init with args: the init's child, its status, signals passed on.
  b=$(new_bundle s4)
  edit_config "$b" '.sandbox.init = true'
  set_args "$b" sh -c 'exit 7'
  run -7 $H run --rm --bundle "$b" s4
  set_args "$b" sh -c 'trap "exit 9" TERM; while :; do sleep 0.1; done'
  $H run --bundle "$b" s5 &
  runpid=$!
  wait_status s5 running
  # TERM once the command (the init's child) has its trap set
  wait_for 10 catches "$(pgrep -P "$($H state s5 | jq -r .pid)" | head -n 1)" 15
  $H kill s5 TERM
  st=0
  wait "$runpid" || st=$?
  [ "$st" -eq 9 ]
  # pid 1 is the init, the command its child.
  set_args "$b" sh -c 'echo $$ $PPID; cat /proc/1/comm'
  run -0 $H run --rm --bundle "$b" s6
  [[ "$output" == *"hako-init"* ]]
  [[ "$output" == "2 1"* ]]
}

@test "init: process.args may be absent only with sandbox.init" {
  b=$(new_bundle s7)
  edit_config "$b" 'del(.process.args)'
  run $H create --bundle "$b" s7
  [ "$status" -eq 125 ]
  [[ "$output" == *".process.args: must be a non-empty array"* ]]
  edit_config "$b" '.sandbox.init = true'
  $H create --bundle "$b" s7
  $H start s7
  $H exec s7 -- true
  [[ "$($H exec s7 cat /proc/1/comm)" == *hako-init ]]
}
