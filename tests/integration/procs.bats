#!/usr/bin/env bats
# Kept processes: `hako exec --detach` (without runc's --pid-file,
# --console-socket, --process) starts a command that outlives its client,
# known by its host pid: `ps --detached` lists it with its state and exit,
# `logs --process` reads its bounded log (from the start, or -f from now on),
# `stdin` feeds and closes its stdin, `kill --process` signals it, `wait
# --process` waits for its end, `resize` sizes its terminal.  It lives and
# dies in its sandbox like any exec; its holder, outside, records how it
# ended.  hako-exec(8), KEPT PROCESSES.

load helpers
bats_require_minimum_version 1.5.0

setup_file () { hako_setup_file; }
setup () { hako_setup; }
teardown () {
  [ -z "${HOST_PROC:-}" ] || kill "$HOST_PROC" 2> /dev/null || true
  hako_teardown
}

# start_box ID: a running sandbox whose process just waits.
start_box () {
  local b
  b=$(new_bundle "$1")
  set_args "$b" sleep 1000
  $H run --detach --bundle "$b" "$1"
}

box_pid () { $H state "$1" | jq -r .pid; }

# state_of ID P: "STATE EXIT REASON" of kept process P, from ps --detached's JSON.
state_of () {
  $H ps --detached --format json "$1" | jq -r --argjson p "$2" '.[] | select(.pid == $p) | "\(.state) \(.exit_code) \(.reason)"'
}

# has_state ID P STATE: for wait_for.
has_state () { [ "$(state_of "$1" "$2" | cut -d' ' -f1)" = "$3" ]; }

# holder_of ID P: the pid of process P's holder.
holder_of () { cut -d' ' -f1 "$STATE/$1/procs/$2/holder"; }

log_has () { $H logs --process "$2" "$1" 2>&1 | grep -qx "$3"; }

@test "procs: exec --detach prints the id; ps --detached lists it running, then exited with its code; logs from the start" {
  start_box k1
  run -0 --separate-stderr $H exec --detach -i k1 sh -c 'echo out; echo err >&2; read x; exit 3'
  p=$output
  [[ "$p" =~ ^[0-9]+$ ]]
  # the id is the command's host pid, in the sandbox's pid namespace
  [ "$(readlink "/proc/$p/ns/pid")" = "$(readlink "/proc/$(box_pid k1)/ns/pid")" ]
  [ "$(state_of k1 "$p")" = "running null null" ]
  run -0 $H ps --detached k1
  [[ "${lines[1]}" == "$p "*" running "*"sh -c echo out; echo err >&2; read x; exit 3" ]]
  $H stdin --close --process "$p" k1 < /dev/null
  run -3 $H wait --process "$p" k1
  [ "$(state_of k1 "$p")" = "exited 3 exited" ]
  run -0 --separate-stderr $H logs --process "$p" k1
  [ "$output" = out ]
  [ "$stderr" = err ]
  run -3 $H wait --json --process "$p" k1
  echo "$output" | jq -e --argjson p "$p" '.pid == $p and .exit_code == 3 and .signal == null and .reason == "exited" and .command == ["sh","-c","echo out; echo err >&2; read x; exit 3"] and .tty == false and (.ended | type) == "string"'
  # without -i its stdin is /dev/null: cat ends at once
  q=$($H exec --detach k1 cat)
  run -0 $H wait --process "$q" k1
  # runc's ps is unchanged: the sandbox's own process is listed
  run -0 $H ps --format json k1
  echo "$output" | jq -e 'type == "array" and (.[0] | type) == "number"'
}

@test "procs: logs -f follows to its end; --tail 0 -f prints only what comes from now on" {
  start_box k2
  p=$($H exec --detach -i k2 sh -c 'echo first; while read l; do echo "got $l"; done; echo last')
  wait_for 10 log_has k2 "$p" first
  $H logs -f --tail 0 --process "$p" k2 > "$TEST_ROOT/now" &
  now=$!
  $H logs -f --process "$p" k2 > "$TEST_ROOT/all" &
  all=$!
  # both followers are there before the next line
  wait_for 10 grep -qx first "$TEST_ROOT/all"
  echo two | $H stdin --close --process "$p" k2
  wait $now
  wait $all
  [ "$(cat "$TEST_ROOT/all")" = "$(printf 'first\ngot two\nlast')" ]
  run -1 grep -c first "$TEST_ROOT/now"
  grep -qx last "$TEST_ROOT/now"
  run -0 $H logs --tail 1 --process "$p" k2
  [ "$output" = last ]
}

@test "procs: stdin -i: sent, then closed (the command sees its end); without -i or once closed: refused" {
  start_box k3
  p=$($H exec --detach -i k3 sh -c 'cat; echo "<eof>"')
  printf 'abc' | $H stdin --process "$p" k3
  printf 'def\n' | $H stdin --process "$p" k3
  [ "$(state_of k3 "$p")" = "running null null" ]
  $H stdin --close --process "$p" k3 < /dev/null
  run -0 $H wait --process "$p" k3
  run -0 $H logs --process "$p" k3
  [ "$output" = "$(printf 'abcdef\n<eof>')" ]
  q=$($H exec --detach k3 sleep 200)
  run -125 $H --log-format json stdin --process "$q" k3 < /dev/null
  [[ "$output" == *'"kind":"invalid_argument"'*"closed"* ]]
  run -125 $H stdin --process "$p" k3 < /dev/null
  [[ "$output" == *"has ended"* ]]
  run -125 $H stdin k3 < /dev/null
  [[ "$output" == *"expects --process"* ]]
}

@test "procs: kill --process signals it, --all its process group; its record says signaled and 128+N" {
  start_box k4
  p=$($H exec --detach k4 sh -c 'sleep 7301 & sleep 7302')
  wait_for 10 pgrep -f "sleep 7301"
  run -0 $H kill --process "$p" k4 TERM
  run -143 $H wait --process "$p" k4
  [ "$(state_of k4 "$p")" = "exited 143 signaled" ]
  # the background job was not in the signal: it lives on in the sandbox
  job=$(pgrep -xf "sleep 7301")
  kill "$job"
  q=$($H exec --detach k4 sh -c 'sleep 7303 & sleep 7304')
  wait_for 10 pgrep -f "sleep 7303"
  run -0 $H kill --all --process "$q" k4 KILL
  run -137 $H wait --process "$q" k4
  wait_for 10 pid_gone_pat "sleep 7303"
  run -125 $H --log-format json kill --process "$q" k4 KILL
  [[ "$output" == *'"kind":"not_running"'*"has ended"* ]]
}

pid_gone_pat () { ! pgrep -f "$1" > /dev/null; }

# holds_record PID P: process PID has kept process P's record open.
holds_record () { ls -l "/proc/$1/fd" 2> /dev/null | grep -q "/procs/$2\$"; }

@test "procs: --timeout kills its process group: reason timeout, wait exits 124" {
  start_box k5
  p=$($H exec --detach --timeout 500ms k5 sh -c 'sleep 7305 & sleep 7306')
  run -124 $H wait --process "$p" k5
  run -124 $H wait --json --process "$p" k5
  echo "$output" | jq -e '.reason == "timeout" and .timed_out == true and .exit_code == 137 and .signal == 9'
  wait_for 10 pid_gone_pat "sleep 30[56]"
}

@test "procs: the log is bounded by --log-size (the newest kept); --max-output caps each stream, said in the record" {
  start_box k6
  # 20,000 numbered lines, ~110 kB: a 64 kB log keeps between 32 and 64 kB, the end
  p=$($H exec --detach --log-size 64k k6 sh -c 'i=0; while [ $i -lt 20000 ]; do echo "line $i"; i=$((i+1)); done')
  run -0 $H wait --process "$p" k6
  size=$(cat "$STATE/k6/procs/$p/log" "$STATE/k6/procs/$p/log.1" 2>/dev/null | wc -c)
  [ "$size" -le 65536 ]
  run -0 $H logs --process "$p" k6
  [ "${lines[-1]}" = "line 19999" ]
  [ "${#lines[@]}" -lt 20000 ]
  [ "${#lines[@]}" -gt 500 ]
  q=$($H exec --detach --max-output 10 k6 sh -c 'echo 0123456789abcdef; echo ABCDEFGHIJKLMNOP >&2')
  run -0 $H wait --json --process "$q" k6
  echo "$output" | jq -e '.stdout_truncated == true and .stderr_truncated == true'
  run -0 --separate-stderr $H logs --process "$q" k6
  [ "$output" = 0123456789 ]
  [ "$stderr" = ABCDEFGHIJ ]
}

@test "procs: it outlives its client, and a follower killed mid-follow; its holder is outside the sandbox, out of its reach" {
  start_box k7
  # the client and everything in its process group SIGKILLed right after
  setsid sh -c "$H exec --detach k7 sleep 7307 > '$TEST_ROOT/p'; kill -KILL 0" || true
  p=$(cat "$TEST_ROOT/p")
  [ "$(state_of k7 "$p")" = "running null null" ]
  $H logs -f --process "$p" k7 & follower=$!
  kill -KILL $follower
  wait $follower || true
  [ "$(state_of k7 "$p")" = "running null null" ]
  h=$(holder_of k7 "$p")
  # the holder: the command's parent, in the host's pid namespace, not dumpable
  [ "$(awk '{print $4}' "/proc/$p/stat")" = "$h" ]
  [ "$(readlink /proc/$h/ns/pid)" = "$(readlink /proc/self/ns/pid)" ]
  [ "$(readlink /proc/$h/ns/pid)" != "$(readlink "/proc/$p/ns/pid")" ]
  # from inside, root of the sandbox kills everything it can see: the
  # command, not its holder, which records the end
  $H exec k7 kill -KILL -1 || true
  wait_for 10 has_state k7 "$p" exited
  [ "$(state_of k7 "$p")" = "exited 137 signaled" ]
}

@test "procs: it dies with its sandbox: stop records stopped; delete leaves no holder; a killed holder takes it along (lost)" {
  start_box k8
  p=$($H exec --detach k8 sleep 7308)
  # counted in the sandbox's cgroups, confined as any exec
  [ "$(cat /proc/$p/cgroup)" = "$(cat /proc/$(box_pid k8)/cgroup)" ]
  confinement='^(NoNewPrivs|Seccomp|Seccomp_filters|CapEff|CapPrm|CapBnd|CapAmb):'
  [ "$(grep -E "$confinement" /proc/$p/status)" = "$($H exec k8 grep -E "$confinement" /proc/self/status)" ]
  $H stop k8
  [ "$(state_of k8 "$p")" = "exited 143 stopped" ]
  $H start k8
  q=$($H exec --detach k8 sleep 7309)
  h=$(holder_of k8 "$q")
  kill -KILL "$h"
  wait_for 10 has_state k8 "$q" lost
  run -125 $H wait --process "$q" k8
  [[ "$output" == *"holder was killed"* ]]
  pid_gone "$q"
  r=$($H exec --detach k8 sleep 7310)
  h=$(holder_of k8 "$r")
  # a waiter there before the delete learns it: 137, reason deleted
  $H wait --json --process "$r" k8 > "$TEST_ROOT/w" &
  waiter=$!
  wait_for 10 holds_record "$waiter" "$r"
  $H delete --force k8
  run -137 wait "$waiter"
  jq -e '.state == "exited" and .exit_code == 137 and .signal == 9 and .reason == "deleted"' "$TEST_ROOT/w"
  pid_gone "$r"
  pid_gone "$h"
  run -125 $H --log-format json ps --detached k8
  [[ "$output" == *'"kind":"not_found"'* ]]
}

@test "procs: unknown and odd process ids: not_found, invalid_argument, for every verb" {
  start_box k9
  for v in "logs" "kill" "wait" "stdin" "resize"; do
    extra=
    [ $v = resize ] && extra=24x80
    run -125 $H --log-format json $v --process 4000000 k9 $extra < /dev/null
    [[ "$output" == *'"kind":"not_found"'*"has no process 4000000"* ]]
    for odd in abc 0 -1 01 1.5 ../k9 4194305 "" "1 2" 99999999999999999999; do
      run -125 $H --log-format json $v --process "$odd" k9 $extra < /dev/null
      [[ "$output" == *'"kind":"invalid_argument"'*"expected a process id"* ]]
    done
  done
  run -125 $H --log-format json ps --detached nosuch
  [[ "$output" == *'"kind":"not_found"'* ]]
  run -0 $H ps --detached --format json k9
  [ "$output" = "[]" ]
}

@test "attack: a kept process's pid taken by a host process once it ended: kill --process, wait and logs act on the record, never on the host process" {
  start_box k11
  p=$($H exec --detach k11 sh -c 'echo mine; exec sleep 7331')
  wait_for 10 log_has k11 "$p" mine
  $H kill --process "$p" k11 KILL
  run -137 $H wait --process "$p" k11
  # A host process gets the same pid (the kernel hands out ns_last_pid + 1).
  local q=
  for i in $(seq 200); do
    echo $((p - 1)) > /proc/sys/kernel/ns_last_pid
    sleep 7332 > /dev/null 2>&1 &
    q=$!
    HOST_PROC=$q
    [ "$q" = "$p" ] && break
    kill "$q"
    wait "$q" 2> /dev/null || true
    q=
  done
  [ -n "$q" ] || skip "pid $p went to another process each time (a busy host)"
  run -125 $H --log-format json kill --process "$p" k11 KILL
  [[ "$output" == *'"kind":"not_running"'*"has ended"* ]]
  run -137 $H wait --process "$p" k11
  run -0 $H logs --process "$p" k11
  [ "$output" = mine ]
  # The host process lives on, unsignalled.
  [ "$(awk '{print $3}' "/proc/$q/stat")" = S ]
  kill "$q"
  wait "$q" 2> /dev/null || true
}

@test "attack: a kept process's command with escape sequences and a newline is one plain line in ps --detached, whole in its JSON" {
  start_box k10
  p=$($H exec --detach k10 sh -c 'sleep 7310' "$(printf 'a\033]0;owned\007b')" "$(printf 'c\302\233%s' 2J)" "$(printf 'd\ne')")
  run -0 $H ps --detached k10
  echo "$output"
  [ "${#lines[@]}" = 2 ]
  [[ "${lines[1]}" == *" running "*" sh -c sleep 7310 a?]0;owned?b c??2J d?e" ]]
  [[ "$output" != *$'\033'* ]]
  [[ "$output" != *$'\233'* ]]
  run -0 $H ps --detached --format json k10
  echo "$output" | jq -e --arg a "$(printf 'a\033]0;owned\007b')" --arg d "$(printf 'd\ne')" '.[0].command[3] == $a and .[0].command[5] == $d'
  # The command and the process's own cmdline are the host's business only
  # through its record: its holder, not the sandbox, wrote it (0700).
  [ "$(stat -c %a "$STATE/k10/procs/$p")" = 700 ]
  [ "$(stat -c %a "$STATE/k10/procs/$p/ctl")" = 600 ]
  run -0 $H kill --process "$p" k10 KILL
}

@test "procs: a terminal: --tty-size sets it, resize changes it (stty size inside); resize of a process without one: 125" {
  start_box t1
  p=$($H exec --detach --tty --tty-size 30x100 t1 sh)
  printf 'stty size\n' | $H stdin --process "$p" t1
  wait_for 10 log_has t1 "$p" $'30 100\r'
  $H resize --process "$p" t1 40x120
  printf 'stty size; exit 4\n' | $H stdin --process "$p" t1
  run -4 $H wait --process "$p" t1
  wait_for 10 log_has t1 "$p" $'40 120\r'
  run -4 $H wait --json --process "$p" t1
  echo "$output" | jq -e '.tty == true'
  q=$($H exec --detach t1 sleep 7311)
  run -125 $H --log-format json resize --process "$q" t1 24x80
  [[ "$output" == *'"kind":"invalid_argument"'*"no terminal"* ]]
  for bad in 0x80 24x0 24 x80 24x80x1 65536x1 -1x2 "24 x80"; do
    run -125 $H resize --process "$q" t1 "$bad"
    [[ "$output" == *"ROWSxCOLS"* ]]
  done
  run -125 $H exec --tty-size 24x80 t1 true
  [[ "$output" == *"--tty-size needs --tty"* ]]
}

@test "procs: a terminal from pipes (no terminal on our side): exec -t --tty-size relays them" {
  start_box t2
  run -5 $H exec -t --tty-size 33x77 t2 sh -c 'stty size; read l; echo "got $l"; exit 5' <<< "typed"
  [[ "$output" == *"33 77"* ]]
  [[ "$output" == *"got typed"* ]]
}

@test "procs: an attached exec -t follows our terminal's size (SIGWINCH)" {
  start_box t3
  # a terminal of our own (python's pty): set to 20x60, then 50x132
  # the shell inside says its size at once, then again on SIGWINCH
  run -0 python3 - $H exec -t t3 sh -c 'trap "stty size; exit 0" WINCH; stty size; while :; do sleep 0.1; done' <<'PY'
import fcntl, os, select, struct, sys, termios, time
master, slave = os.openpty()
fcntl.ioctl(master, termios.TIOCSWINSZ, struct.pack("HHHH", 20, 60, 0, 0))
pid = os.fork()
if pid == 0:
    os.close(master)
    os.setsid()
    fcntl.ioctl(slave, termios.TIOCSCTTY, 0)
    for fd in (0, 1, 2):
        os.dup2(slave, fd)
    os.execvp(sys.argv[1], sys.argv[1:])
os.close(slave)
out, resized, end = b"", False, time.time() + 30
while time.time() < end:
    r, _, _ = select.select([master], [], [], 0.5)
    if r:
        try:
            data = os.read(master, 4096)
        except OSError:
            break
        if not data:
            break
        out += data
    if not resized and b"20 60" in out:
        # the kernel sends hako SIGWINCH; it sizes the sandbox's terminal alike
        fcntl.ioctl(master, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 132, 0, 0))
        resized = True
if os.waitpid(pid, os.WNOHANG) == (0, 0):
    os.kill(pid, 9)  # no second size came: hako exec (and its command) go
    os.waitpid(pid, 0)
sys.stdout.write(out.decode(errors="replace"))
PY
  [[ "$output" == *"20 60"* ]]
  [[ "$output" == *"50 132"* ]]
}

@test "procs: runc's detached exec is unchanged: --pid-file, the caller's stdio, nothing on stdout, no record" {
  start_box r1
  # the command writes to the caller's stdout, and hako nothing
  $H exec --detach --pid-file "$TEST_ROOT/pid" r1 sh -c 'echo to-the-caller; exec sleep 7312' \
    > "$TEST_ROOT/out" 2> "$TEST_ROOT/err" < /dev/null
  wait_for 10 grep -qx to-the-caller "$TEST_ROOT/out"
  [ "$(cat "$TEST_ROOT/out")" = to-the-caller ]
  [ ! -s "$TEST_ROOT/err" ]
  pid=$(cat "$TEST_ROOT/pid")
  [ "$(tr '\0' ' ' < "/proc/$pid/cmdline")" = "sleep 7312 " ]
  run -0 $H ps --detached --format json r1
  [ "$output" = "[]" ]
  run -125 $H exec --detach --pid-file "$TEST_ROOT/p2" --log-size 1m r1 true
  [[ "$output" == *"--log-size needs --detach"* ]]
  run -125 $H exec --detach --json r1 true
  run -125 $H exec --detach --log-size 1k r1 true
  [[ "$output" == *"64k or more"* ]]
}

@test "procs: a command that cannot be executed: 127 at once, no record" {
  start_box n1
  run -127 $H exec --detach n1 no-such-command
  [[ "$output" == *"no-such-command"* ]]
  run -0 $H ps --detached --format json n1
  [ "$output" = "[]" ]
  run -125 $H exec --detach nosuch true
  [[ "$output" == *"does not exist"* ]]
  [ "$(ls "$STATE")" = n1 ]
}

@test "procs: the records of ended processes are kept up to 100, the oldest dropped first" {
  start_box m1
  first=$($H exec --detach m1 true)
  run -0 $H wait --process "$first" m1
  for i in $(seq 101); do
    p=$($H exec --detach m1 true)
    $H wait --process "$p" m1
  done
  run -0 $H ps --detached --format json m1
  n=$(echo "$output" | jq length)
  [ "$n" -le 101 ]
  [ "$n" -ge 100 ]
  echo "$output" | jq -e --argjson f "$first" 'map(.pid) | index($f) == null'
}

@test "procs: many started at once each get their record (a holder never prunes another's that is being made)" {
  start_box c1
  for i in $(seq 40); do
    $H exec --detach c1 sleep 7313 > "$TEST_ROOT/p$i" 2> "$TEST_ROOT/e$i" &
  done
  wait
  cat "$TEST_ROOT"/e* >&2
  [ -z "$(cat "$TEST_ROOT"/e*)" ]
  run -0 $H ps --detached --format json c1
  [ "$(echo "$output" | jq 'map(select(.state == "running")) | length')" = 40 ]
}
