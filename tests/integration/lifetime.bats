#!/usr/bin/env bats
# The lifetime limit (sandbox.limits.timeout): at the deadline every process
# of the sandbox is killed and the sandbox stays, stopped, with reason
# "timeout"; `update --timeout` moves it; sandbox.limits.max_output is the
# default cap of every exec.

load helpers
bats_require_minimum_version 1.5.0

setup_file () { hako_setup_file; }
setup () { hako_setup; }
teardown () { hako_teardown; }

# limited NAME TIMEOUT [CMD...]: a host-profile bundle whose config has
# sandbox.limits.timeout = TIMEOUT (a JSON value) and runs CMD (sleep 300).
limited () {
  local dir="$TEST_ROOT/b-$1" t=$2
  shift 2
  mkdir -p "$dir"
  $H spec --profile host --bundle "$dir" >/dev/null
  [ $# -gt 0 ] || set -- sleep 300
  local args
  args=$(printf '%s\n' "$@" | jq -R . | jq -s -c .)
  jq --argjson t "$t" --argjson a "$args" '.sandbox.limits.timeout = $t | .process.args = $a' \
    "$dir/config.json" > "$dir/c" && mv "$dir/c" "$dir/config.json"
  echo "$dir"
}

reason () { $H state "$1" | jq -r '"\(.status) \(.exitStatus) \(.reason)"'; }

@test "run in the foreground: killed at the deadline, exits 124, stays stopped with reason timeout" {
  b=$(limited fg '"1s"')
  SECONDS=0
  run -124 $H run --bundle "$b" fg
  [ "$SECONDS" -lt 10 ]
  [ "$(reason fg)" = "stopped 137 timeout" ]
  # a process that ends before its deadline is not a timeout
  b=$(limited quick '"30s"' sh -c 'exit 3')
  run -3 $H run --bundle "$b" quick
  [ "$(reason quick)" = "stopped 3 exited" ]
}

@test "run -d: the deadline outlives the CLI; every process dies; wait --json says timeout, wait exits 124" {
  b=$(limited det '1.5')
  $H run -d --bundle "$b" det
  [ "$($H state det | jq -r .status)" = running ]
  # a second process, which the first's death alone would not reach without a pid namespace
  $H exec --detach --pid-file "$TEST_ROOT/pid" det sleep 301 </dev/null >/dev/null 2>&1
  other=$(cat "$TEST_ROOT/pid")
  kill -0 "$other"
  run -124 $H wait --json det
  echo "$output" | jq -e '.status == "stopped" and .reason == "timeout" and .exitStatus == 137'
  pid_gone "$other"
  [ "$(reason det)" = "stopped 137 timeout" ]
  run -124 $H wait det
}

@test "create + start, and create --no-monitor: the deadline holds without any CLI" {
  b=$(limited cs '"1s"')
  $H create --bundle "$b" cs
  $H start cs
  run -124 $H wait cs
  [ "$(reason cs)" = "stopped 137 timeout" ]
  b=$(limited nm '"1s"')
  $H create --no-monitor --bundle "$b" nm
  $H start nm
  # no monitor: nobody reaps it, but the deadline said what it did
  for i in $(seq 100); do [ "$($H state nm | jq -r .status)" = stopped ] && break; sleep 0.1; done
  [ "$(reason nm)" = "stopped 137 timeout" ]
  run -124 $H wait nm
}

@test "update --timeout moves the deadline; 0 and none remove it; a later one arms it again" {
  b=$(limited mv '"1s"')
  $H run -d --bundle "$b" mv
  $H update --timeout 60s mv
  # none: past the spec's deadline it still runs
  b=$(limited rm '"1s"')
  $H run -d --bundle "$b" rm
  $H update --timeout none rm
  # Past both spec deadlines: a sandbox started after them with the same
  # "1s" has reached its own (a wait on that event, not a sleep).
  b=$(limited ref '"1s"')
  $H run -d --bundle "$b" ref
  run -124 $H wait ref
  [ "$($H state mv | jq -r .status)" = running ]
  [ "$($H state rm | jq -r .status)" = running ]
  # the moved deadline fires (how soon after: timing.bats)
  $H update --timeout 300ms mv
  run -124 $H wait mv
  [ "$(reason mv)" = "stopped 137 timeout" ]
  $H update --timeout 0 rm
  # a sandbox created without a limit gets one
  $H update --timeout 300ms rm
  run -124 $H wait rm
  [ "$(reason rm)" = "stopped 137 timeout" ]
}

@test "update --timeout: a stopped sandbox is not_running, a bad value is refused, both with 125" {
  b=$(limited st '"30s"' true)
  $H run -d --bundle "$b" st
  run -0 $H wait st
  run -125 --separate-stderr $H --log-format json update --timeout 5s st
  echo "$stderr" | jq -e '.kind == "not_running" and .verb == "update" and .id == "st"'
  for bad in 5x -1s abc ""; do
    run -125 $H update --timeout "$bad" st
    [[ "$output" == *'--timeout'*'expected a duration'* ]]
  done
  run -125 --separate-stderr $H --log-format json update --timeout 1s nosuch
  echo "$stderr" | jq -e '.kind == "not_found"'
}

@test "a paused sandbox is killed at its deadline too; a restart after stop gets a fresh deadline" {
  b=$(limited ps '"1s"')
  $H run -d --bundle "$b" ps
  $H pause ps
  run -124 $H wait ps
  [ "$(reason ps)" = "stopped 137 timeout" ]
  # stop marks it restartable; start runs it again with sandbox.limits.timeout from now
  $H stop ps
  $H start ps
  [ "$($H state ps | jq -r .status)" = running ]
  run -124 $H wait ps
  [ "$(reason ps)" = "stopped 137 timeout" ]
}

@test "sandbox.limits.max_output is the default cap of every exec; --max-output overrides it" {
  b=$(limited mo '"60s"')
  jq '.sandbox.limits.max_output = 10' "$b/config.json" > "$b/c" && mv "$b/c" "$b/config.json"
  $H run -d --bundle "$b" mo
  run -0 --separate-stderr $H exec mo sh -c 'echo 0123456789abcdef; echo E0123456789abc >&2'
  [ "$output" = 0123456789 ]
  [[ "$stderr" == E012345678* ]]
  [[ "$stderr" == *"stdout truncated after 10 bytes"* ]]
  run -0 $H exec --max-output 100 mo echo 0123456789abcdef
  [ "$output" = 0123456789abcdef ]
  run -0 --separate-stderr $H exec --max-output 4 mo echo 0123456789abcdef
  [ "$output" = 0123 ]
  run -0 $H exec --json mo echo 0123456789abcdef
  echo "$output" | jq -e '.stdout == "0123456789" and .stdout_truncated == true'
  # hibernate's checkpoint command writes to hibernate's own output, uncapped
  run -0 $H hibernate mo -- echo 0123456789abcdef
  [ "$output" = 0123456789abcdef ]
  [ "$($H state mo | jq -r .hibernated)" = true ]
}

@test "state and list say when the deadline falls; update moves it; none and a stopped sandbox have none" {
  $H run -d --profile host --timeout 1h dl -- sleep 300
  local now at
  now=$(date +%s)
  at=$($H state dl | jq -r .deadline)
  [[ "$at" =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z$ ]]
  at=$(date -d "$at" +%s)
  [ "$at" -ge $((now + 3590)) ]
  [ "$at" -le $((now + 3610)) ]
  [ "$($H list --format json | jq -r '.[] | select(.id == "dl") | .deadline')" = "$($H state dl | jq -r .deadline)" ]
  $H update --timeout 2h dl
  at=$(date -d "$($H state dl | jq -r .deadline)" +%s)
  [ "$at" -ge $((now + 7190)) ]
  $H update --timeout none dl
  [ "$($H state dl | jq 'has("deadline")')" = false ]
  $H update --timeout 1h dl
  $H stop dl
  [ "$($H state dl | jq 'has("deadline")')" = false ]
  $H run -d --profile host nodl -- sleep 300
  [ "$($H list --format json | jq -r '.[] | select(.id == "nodl") | has("deadline")')" = false ]
}
