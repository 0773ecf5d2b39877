#!/usr/bin/env bats
# The lifecycle a user drives: create, start, state, kill, delete, run.

load helpers
bats_require_minimum_version 1.5.0

setup_file () { hako_setup_file; }
setup () { hako_setup; }
teardown () { hako_teardown; }

@test "run: output and exit status of the process come through" {
  run --separate-stderr $H run --rm b1 -- sh -c 'echo out; echo err >&2; exit 7'
  [ "$status" -eq 7 ]
  [ "$output" = "out" ]
  [ "$stderr" = "err" ]
}

@test "run: a process killed by a signal gives 128+N" {
  b=$(new_bundle sig)
  set_args "$b" sleep 30
  $H run --bundle "$b" sig & runner=$!
  wait_status sig running
  $H kill sig KILL
  wait $runner || st=$?
  [ "$st" -eq 137 ]
  [ "$($H state sig | jq -r .status)" = stopped ]
  [ "$($H state sig | jq -r .exitStatus)" = 137 ]
  [ "$($H state sig | jq -r .reason)" = signaled ]
}

@test "run: 127 for a command that does not exist, 126 for one that cannot run" {
  run $H run --rm nx -- no-such-command
  [ "$status" -eq 127 ]
  [[ "$output" == *"no-such-command"*"not found"* ]]
  run $H run --rm nx2 -- /etc/passwd
  [ "$status" -eq 126 ]
  [ ! -e "$STATE/nx" ]
  [ ! -e "$STATE/nx2" ]
}

@test "create, state created with a live pid, start, running, exit, stopped, delete" {
  b=$(new_bundle life)
  set_args "$b" sh -c 'read x < /dev/null; sleep 1'
  $H create --bundle "$b" life
  run $H state life
  [ "$status" -eq 0 ]
  [ "$(echo "$output" | jq -r .status)" = created ]
  pid=$(echo "$output" | jq -r .pid)
  [ "$pid" -gt 0 ]
  kill -0 "$pid"
  [ "$(echo "$output" | jq -r .id)" = life ]
  [ "$(echo "$output" | jq -r .bundle)" = "$b" ]
  $H start life
  [ "$($H state life | jq -r .status)" = running ]
  run $H start life
  [ "$status" -eq 125 ]
  wait_status life stopped
  $H delete life
  [ ! -e "$STATE/life" ]
  run $H state life
  [ "$status" -eq 125 ]
  [[ "$output" == *"does not exist"* ]]
}

# appender ID: a bundle whose process appends a line to $TEST_ROOT/out-ID/runs
# (a host directory bound in) and exits; runs ID: how many times it ran.
appender () {
  local b
  b=$(new_bundle "$1")
  mkdir -p "$TEST_ROOT/out-$1"
  edit_config "$b" ".mounts += [{\"destination\": \"/out\", \"type\": \"bind\",
    \"source\": \"$TEST_ROOT/out-$1\", \"options\": [\"rbind\", \"rw\"]}]"
  set_args "$b" sh -c 'echo run >> /out/runs'
  echo "$b"
}
runs () { wc -l < "$TEST_ROOT/out-$1/runs"; }

@test "start of a sandbox whose process exited by itself fails (125), runs nothing and changes nothing" {
  b=$(appender ex)
  $H create --bundle "$b" ex
  $H start ex
  wait_status ex stopped
  before=$($H state ex)
  cp "$STATE/ex/state.json" "$TEST_ROOT/state.before"
  run $H start ex
  [ "$status" -eq 125 ]
  [[ "$output" == *"start ex: cannot start sandbox ex: it is stopped, not created (its process exited with status 0)"* ]]
  [[ "$output" == *"only after hako stop ex"* ]]
  sleep 0.3
  [ "$(runs ex)" -eq 1 ]
  [ "$($H state ex)" = "$before" ]
  cmp "$STATE/ex/state.json" "$TEST_ROOT/state.before"
  [ "$(echo "$before" | jq -r .restartable)" = null ]
  # Started again at once, before anyone read its state: refused all the same
  # (running, or stopped), never run twice.
  b2=$(appender ex2)
  $H create --bundle "$b2" ex2
  $H start ex2
  run $H start ex2
  [ "$status" -eq 125 ]
  [[ "$output" == *"not created"* ]]
  wait_status ex2 stopped
  run $H start ex2
  [ "$status" -eq 125 ]
  [ "$(runs ex2)" -eq 1 ]
  # Killed from outside, it says so.
  b3=$(new_bundle sg)
  set_args "$b3" sleep 60
  $H run --detach --bundle "$b3" sg
  $H kill sg KILL
  wait_status sg stopped
  run $H start sg
  [ "$status" -eq 125 ]
  [[ "$output" == *"it is stopped, not created (signal 9 killed its process)"* ]]
}

@test "stop of a sandbox whose process exited lets start run it again; once that run exits, start fails again" {
  b=$(appender again)
  $H create --bundle "$b" again
  $H start again
  wait_status again stopped
  $H stop again
  [ "$($H state again | jq -r '"\(.status) \(.restartable) \(.exitStatus) \(.reason)"')" = "stopped true 0 exited" ]
  $H stop again  # idempotent
  $H start again >/dev/null 2>&1
  for i in $(seq 50); do [ "$(runs again)" -eq 2 ] && break; sleep 0.1; done
  [ "$(runs again)" -eq 2 ]
  wait_status again stopped
  [ "$($H state again | jq -r .restartable)" = null ]
  run $H start again
  [ "$status" -eq 125 ]
  [[ "$output" == *"it is stopped, not created"* ]]
  sleep 0.3
  [ "$(runs again)" -eq 2 ]
}

@test "stop then start of a running sandbox: what it wrote before the stop is there after" {
  b=$(appender live)
  set_args "$b" sh -c 'echo run >> /out/runs; sleep 1000'
  $H run --detach --bundle "$b" live
  for i in $(seq 50); do [ -s "$TEST_ROOT/out-live/runs" ] && break; sleep 0.1; done
  $H stop -t 100ms live
  [ "$($H state live | jq -r '"\(.status) \(.restartable)"')" = "stopped true" ]
  $H start live >/dev/null 2>&1
  [ "$($H state live | jq -r '"\(.status) \(.restartable)"')" = "running null" ]
  for i in $(seq 50); do [ "$(runs live)" -eq 2 ] && break; sleep 0.1; done
  [ "$(runs live)" -eq 2 ]
  run $H start live
  [ "$status" -eq 125 ]
  [[ "$output" == *"it is running, not created"* ]]
}

@test "create --pid-file holds the host pid of the sandbox process" {
  b=$(new_bundle pf)
  $H create --bundle "$b" --pid-file "$TEST_ROOT/pid" pf
  [ "$(cat "$TEST_ROOT/pid")" = "$($H state pf | jq -r .pid)" ]
}

@test "a bundle made by runc spec runs unchanged" {
  b="$TEST_ROOT/runcbundle"
  mkdir -p "$b"
  ln -s "$BUNDLE_DIR/rootfs" "$b/rootfs"
  (cd "$b" && runc spec)
  edit_config "$b" '.process.terminal = false | .process.args = ["sh", "-c", "echo hi from $(hostname)"]'
  run $H run --rm --bundle "$b" rb
  [ "$status" -eq 0 ]
  [ "$output" = "hi from runc" ]
}

@test "run --detach returns while the process runs; delete refuses it without --force" {
  b=$(new_bundle det)
  set_args "$b" sleep 60
  $H run --detach --bundle "$b" det
  [ "$($H state det | jq -r .status)" = running ]
  run $H delete det
  [ "$status" -eq 125 ]
  [[ "$output" == *"running"* ]]
  pid=$($H state det | jq -r .pid)
  $H delete --force det
  [ ! -e "$STATE/det" ]
  pid_gone "$pid"
}

@test "delete of a created sandbox kills its waiting process" {
  b=$(new_bundle cr)
  $H create --bundle "$b" cr
  pid=$($H state cr | jq -r .pid)
  $H delete cr
  pid_gone "$pid"
}

@test "list: table, json and ids" {
  b=$(new_bundle l)
  $H create --bundle "$b" l1
  $H create --bundle "$b" l2
  run $H list -q
  [ "$output" = "$(printf 'l1\nl2')" ]
  run $H list --format json
  [ "$(echo "$output" | jq -r 'map(.id) | join(",")')" = "l1,l2" ]
  [ "$(echo "$output" | jq -r '.[0].status')" = created ]
  [ "$(echo "$output" | jq -r '.[0] | has("pid") and has("bundle") and has("created")')" = true ]
  run $H list
  [[ "${lines[0]}" == ID*PID*STATUS*BUNDLE*CREATED ]]
  [[ "${lines[1]}" == l1*created* ]]
}

@test "kill: signal names and numbers; --all reaches every process" {
  b=$(new_bundle k)
  set_args "$b" sh -c 'trap "" USR1 TERM; sleep 30 & sleep 31; wait'
  $H run --detach --bundle "$b" k
  run $H kill k NOSUCHSIG
  [ "$status" -eq 125 ]
  [[ "$output" == *"unknown signal"* ]]
  $H kill k SIGUSR1
  $H kill k 10
  $H kill k usr1
  [ "$($H state k | jq -r .status)" = running ]
  # The sandbox's own sleeps (a host-wide pgrep would catch anyone's).
  pids=$($H ps --format json-full k | jq -r '.[] | select(.command | test("^sleep 3[01]$")) | .pid')
  [ "$(echo $pids | wc -w)" -ge 2 ]
  $H kill --all k KILL
  wait_status k stopped
  for p in $pids; do pid_gone "$p"; done
  run $H kill k TERM
  [ "$status" -eq 125 ]
  [[ "$output" == *"not running"* ]]
}

@test "kill -9 of the run command does not orphan the sandbox process" {
  b=$(new_bundle orphan)
  set_args "$b" sleep 60
  $H run --bundle "$b" orphan & runner=$!
  wait_status orphan running
  pid=$($H state orphan | jq -r .pid)
  kill -9 $runner
  wait $runner || true
  pid_gone "$pid"
  [ "$($H state orphan | jq -r .status)" = stopped ]
}

@test "state and list reattach from a fresh invocation; --version and features" {
  b=$(new_bundle re)
  $H create --bundle "$b" re
  [ "$($HAKO --root "$STATE" state re | jq -r .status)" = created ]
  run $HAKO --version
  [[ "${lines[0]}" == "hako version "* ]]
  [[ "${lines[1]}" == "spec: 1."* ]]
  run $HAKO features
  [ "$status" -eq 0 ]
  [ "$(echo "$output" | jq -r .ociVersionMax)" = 1.2.0 ]
  echo "$output" | jq -e '.linux.namespaces | index("user")'
}

@test "--log FILE --log-format json writes one JSON object per line" {
  run $H --log "$TEST_ROOT/log.json" --log-format json state nosuch
  [ "$status" -eq 125 ]
  jq -e 'select(.level == "error") | .msg | test("does not exist")' "$TEST_ROOT/log.json"
  jq -e '.time | test("^[0-9]{4}-")' "$TEST_ROOT/log.json"
}

@test "every verb has --help" {
  for v in spec create start run state list kill delete features; do
    run $HAKO $v --help
    [ "$status" -eq 0 ]
    [[ "$output" == *"Usage: hako $v"* ]]
  done
}

@test "spec: default and host profiles run; an existing config.json is kept" {
  d="$TEST_ROOT/specdir"
  mkdir -p "$d"
  ln -s "$BUNDLE_DIR/rootfs" "$d/rootfs"
  $H spec --bundle "$d"
  run $H run --rm --bundle "$d" sp -- sh -c 'echo default ok'
  [ "$status" -eq 0 ]
  [ "$output" = "default ok" ]
  echo '{"keep": true}' > "$TEST_ROOT/keep.json"
  cp "$TEST_ROOT/keep.json" "$d/config.json"
  run $H spec --bundle "$d"
  [ "$status" -eq 125 ]
  [[ "$output" == *"config.json already exists"* ]]
  cmp "$d/config.json" "$TEST_ROOT/keep.json"
  h="$TEST_ROOT/hostspec"
  mkdir -p "$h"
  $H spec --profile host --bundle "$h"
  run $H run --rm --bundle "$h" hs -- sh -c 'test -d /work && echo host ok'
  [ "$status" -eq 0 ]
  [ "$output" = "host ok" ]
}
