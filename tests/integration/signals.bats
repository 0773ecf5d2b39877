#!/usr/bin/env bats
# Signals and a dead client: `hako exec` and a foreground `hako run` pass the
# signals a terminal or a supervisor sends (INT, TERM, HUP, QUIT, USR1, USR2)
# on to their command; when the client itself dies by SIGKILL, what it
# started dies with it — the command's whole tree for exec, the sandbox for
# run — and nothing else of the sandbox.  `exec --detach` is meant to outlive
# its client.

load helpers
bats_require_minimum_version 1.5.0

setup_file () {
  env --default-signal=INT true 2>/dev/null || skip "env has no --default-signal (coreutils 8.31)"
  hako_setup_file
}
setup () { hako_setup; }
teardown () { hako_teardown; }

SIGNALS="INT TERM HUP QUIT USR1 USR2"

# A shell's background job starts with INT and QUIT ignored (and a suite
# started under nohup with HUP ignored too), and hako (as any program)
# passes an ignored signal on as ignored: `$DFL CMD... &` runs CMD in the
# background with every signal at its default, as from a terminal (and
# with CMD's own pid in $!).
DFL="env --default-signal"

# start_box ID: a running sandbox whose process just waits.
start_box () {
  local b
  b=$(new_bundle "$1")
  set_args "$b" sleep 1000
  $H run --detach --bundle "$b" "$1"
}

box_pid () { $H state "$1" | jq -r .pid; }

# box_cmdlines ID: the command line of every process in the sandbox's pid
# namespace, as the host sees them, one a line, each ending with a space.
box_cmdlines () {
  local ino p
  ino=$(stat -L -c %i "/proc/$(box_pid "$1")/ns/pid")
  for p in $(stat -L -c '%i %n' /proc/[0-9]*/ns/pid 2>/dev/null \
             | awk -v i="$ino" '$1 == i { split($2, a, "/"); print a[3] }'); do
    echo "$(tr '\0' ' ' < "/proc/$p/cmdline" 2>/dev/null)"
  done
}

# wait_for_line FILE TEXT: poll for up to 10 s until FILE has a line TEXT.
wait_for_line () {
  local i
  for i in $(seq 100); do
    grep -qx "$2" "$1" 2>/dev/null && return 0
    sleep 0.1
  done
  echo "no line \"$2\" in $1: $(cat "$1" 2>/dev/null)" >&2
  return 1
}

# wait_gone ID PATTERN: poll for 10 s at most until no process of the sandbox
# has a command line matching PATTERN (grep -E).
wait_gone () {
  local until=$((SECONDS + 10))
  while [ $SECONDS -le $until ]; do
    box_cmdlines "$1" | grep -qE "$2" || return 0
    sleep 0.1
  done
  echo "still running in $1:" >&2
  box_cmdlines "$1" | grep -E "$2" >&2
  return 1
}

# A shell that traps SIG, says "ready", waits, and on SIG says "got-SIG"
# and exits 0.  `wait` returns at once on a trapped signal; a signal that
# never comes ends the wait after 30 s, with "not-trapped" and status 9.
trapper () {
  echo "trap 'echo got-$1; kill \$! 2>/dev/null; exit 0' $1; echo ready; sleep 30 & wait \$!; echo not-trapped; exit 9"
}

@test "signals: exec passes INT, TERM, HUP, QUIT, USR1 and USR2 on to its command" {
  start_box es
  local s out
  for s in $SIGNALS; do
    out="$TEST_ROOT/out-$s"
    $DFL $H exec es sh -c "$(trapper "$s")" > "$out" 2>&1 & runner=$!
    wait_for_line "$out" ready
    kill -"$s" $runner
    st=0
    wait $runner || st=$?
    echo "$s: status $st, output: $(cat "$out")"
    [ "$st" -eq 0 ]
    grep -qx "got-$s" "$out"
    # hako is still the command's client: it got the signal and lives on.
    run ! grep -q "not-trapped" "$out"
  done
  [ "$($H state es | jq -r .status)" = running ]
}

@test "signals: a foreground run passes INT, TERM, HUP, QUIT, USR1 and USR2 on to its process" {
  local s out b
  for s in $SIGNALS; do
    b=$(new_bundle "fg$s")
    set_args "$b" sh -c "$(trapper "$s")"
    out="$TEST_ROOT/out-$s"
    $DFL $H run --rm --bundle "$b" "fg$s" > "$out" 2>&1 & runner=$!
    wait_for_line "$out" ready
    kill -"$s" $runner
    st=0
    wait $runner || st=$?
    echo "$s: status $st, output: $(cat "$out")"
    [ "$st" -eq 0 ]
    grep -qx "got-$s" "$out"
    [ ! -e "$STATE/fg$s" ]   # --rm ran: hako outlived the signal
  done
}

@test "signals: exec whose command does not trap TERM ends with it, 143" {
  start_box et
  out="$TEST_ROOT/out"
  $H exec et sh -c 'echo ready; sleep 1000 & wait $!' > "$out" 2>&1 & runner=$!
  wait_for_line "$out" ready
  kill -TERM $runner
  st=0
  wait $runner || st=$?
  [ "$st" -eq 143 ]
}

@test "signals: SIGKILL of the exec client kills the command's whole tree, and nothing else of the sandbox" {
  start_box ek
  pid=$(box_pid ek)
  start=$(cut -d' ' -f22 "/proc/$pid/stat")
  # Another process of the sandbox, started by a detached exec: untouched.
  $H exec --detach ek sleep 1001 </dev/null >/dev/null 2>&1
  out="$TEST_ROOT/out"
  # Children, a new session (setsid) and a daemon's double fork: all of it
  # is the command's tree.
  $H exec ek sh -c 'sleep 1101 & setsid sleep 1102 & sh -c "setsid sh -c \"sleep 1103 & sleep 1104\" &"
    echo ready; sleep 1105' > "$out" 2>&1 & runner=$!
  wait_for_line "$out" ready
  for i in $(seq 100); do [ "$(box_cmdlines ek | grep -c 'sleep 110')" -ge 5 ] && break; sleep 0.1; done
  [ "$(box_cmdlines ek | grep -c 'sleep 110')" -eq 5 ]
  kill -KILL $runner
  wait $runner || true
  wait_gone ek 'sleep 110|hako-exec'
  # The sandbox's own process (same pid, same start time) and the detached
  # command live on.
  [ "$(cut -d' ' -f22 "/proc/$pid/stat")" = "$start" ]
  [ "$($H state ek | jq -r .status)" = running ]
  box_cmdlines ek | grep -qx 'sleep 1001 '
  # The sandbox still takes execs.
  run $H exec ek echo still-here
  [ "$status" -eq 0 ]
  [ "$output" = still-here ]
}

@test "signals: SIGKILL of a timed exec's client kills the command's tree too" {
  start_box ekt
  out="$TEST_ROOT/out"
  $H exec --timeout 10m ekt sh -c 'sleep 1201 & setsid sleep 1202 & echo ready; sleep 1203' > "$out" 2>&1 & runner=$!
  wait_for_line "$out" ready
  kill -KILL $runner
  wait $runner || true
  wait_gone ekt 'sleep 120|hako-exec'
  [ "$($H state ekt | jq -r .status)" = running ]
}

@test "signals: exec --detach keeps its command alive after the client has gone" {
  start_box ed
  $H exec --detach --pid-file "$TEST_ROOT/pid" ed sh -c 'sleep 1301 & sleep 1302' </dev/null >/dev/null 2>&1
  cmd=$(cat "$TEST_ROOT/pid")
  [ -d "/proc/$cmd" ]
  sleep 0.5
  box_cmdlines ed | grep -qx 'sleep 1301 '
  box_cmdlines ed | grep -qx 'sleep 1302 '
  # A detached command is no one's to forward to, and killing another exec's
  # client does not touch it.
  $H exec ed sh -c 'echo ready; sleep 1303' > "$TEST_ROOT/out" 2>&1 & runner=$!
  wait_for_line "$TEST_ROOT/out" ready
  kill -KILL $runner
  wait $runner || true
  wait_gone ed 'sleep 1303'
  box_cmdlines ed | grep -qx 'sleep 1301 '
  box_cmdlines ed | grep -qx 'sleep 1302 '
}

@test "signals: SIGKILL of a foreground run's client kills the sandbox, in a user namespace too" {
  for p in bundle host; do
    out="$TEST_ROOT/out-$p"
    if [ $p = bundle ]; then
      b=$(new_bundle fk)
      set_args "$b" sh -c 'sleep 1401 & setsid sleep 1402 & echo ready; sleep 1403'
      $H run --bundle "$b" "fk$p" > "$out" 2>&1 & runner=$!
    else
      # The host profile: a user namespace, where the switch to the
      # sandbox's root once disarmed the parent-death signal.
      (cd "$TEST_ROOT" && exec $H run "fk$p" -- sh -c 'sleep 1401 & setsid sleep 1402 & echo ready; sleep 1403') \
        > "$out" 2>&1 & runner=$!
    fi
    wait_for_line "$out" ready
    pid=$(box_pid "fk$p")
    [ -d "/proc/$pid" ]
    kill -KILL $runner
    wait $runner || true
    pid_gone "$pid"
    run ! pgrep -f 'sleep 140[123]'
    wait_status "fk$p" stopped
    $H delete "fk$p"
  done
}

@test "signals: code inside that kills an exec's helper kills the command with it (137, a warning), not its client" {
  start_box eh
  out="$TEST_ROOT/out"
  $DFL $H exec eh sh -c 'echo $$ > /dev/shm/cmd; echo ready; sleep 30; echo survived' > "$out" 2>&1 & runner=$!
  wait_for_line "$out" ready
  # An exec whose tree has a cgroup of its own has no helper inside to kill
  # (runtime/exec_tree.h): its command's parent is outside the sandbox's pid
  # namespace, pid 0 from inside.  What code inside can do is kill every
  # process it may: the command dies (137), its client lives on to say so.
  if [ "$($H exec eh sh -c 'cut -d" " -f4 /proc/$(cat /dev/shm/cmd)/stat')" = 0 ]; then
    run $H exec eh sh -c 'kill -9 $(cat /dev/shm/cmd)'
    [ "$status" -eq 0 ]
    st=0
    wait $runner || st=$?
    cat "$out"
    [ "$st" -eq 137 ]
    run ! grep -q survived "$out"
    [ "$($H state eh | jq -r .status)" = running ]
    return 0
  fi
  # The helper is the command's parent, inside the sandbox's pid namespace.
  run $H exec eh sh -c 'kill -9 $(cut -d" " -f4 /proc/$(cat /dev/shm/cmd)/stat)'
  [ "$status" -eq 0 ]
  st=0
  wait $runner || st=$?
  cat "$out"
  [ "$st" -eq 137 ]
  grep -q "was killed from inside the sandbox" "$out"
  run ! grep -q survived "$out"
  [ "$($H state eh | jq -r .status)" = running ]
}
