#!/usr/bin/env bats
# Load: many sandboxes at once on a 2-core machine, and concurrent verbs on
# one sandbox.  The full-size run (200 sandboxes) is tests/bench/load.sh.

load helpers

setup_file () { hako_setup_file; }
setup () { hako_setup; }
teardown () { hako_teardown; }

@test "load: 100 sandboxes, 8 at a time, each created, started, exec'd into and deleted — no failure, no leak" {
  b=$(new_bundle load)
  set_args "$b" sleep 1000
  export H b
  one () {
    local id=ld$1
    $H create --bundle "$b" "$id" && $H start "$id" \
      && [ "$($H exec "$id" -- echo "hi $1")" = "hi $1" ] && $H delete --force "$id" \
      || { echo "sandbox $id failed" >&2; return 1; }
  }
  export -f one
  start=$(date +%s%N)
  seq 100 | xargs -P 8 -I{} bash -c 'one {}'
  ms=$(( ($(date +%s%N) - start) / 1000000 ))
  echo "# 100 sandboxes in ${ms} ms: $((ms / 100)) ms per sandbox (8 in parallel)" >&3
  [ -z "$(ls -A "$STATE")" ]
  [ -z "$(leak_report)" ]
}

@test "two pauses at once: one wins, the other says it is paused; resume brings it back" {
  b=$(new_bundle pp)
  set_args "$b" sleep 1000
  $H run --detach --bundle "$b" pp
  $H pause pp 2> "$TEST_ROOT/e1" & p1=$!
  $H pause pp 2> "$TEST_ROOT/e2" & p2=$!
  r1=0; r2=0
  wait $p1 || r1=$?
  wait $p2 || r2=$?
  # Serialized by the sandbox lock: exactly one pause succeeds.
  [ $((r1 == 0)) -ne $((r2 == 0)) ]
  cat "$TEST_ROOT/e1" "$TEST_ROOT/e2" | grep -q paused
  [ "$($H state pp | jq -r .status)" = paused ]
  $H resume pp
  [ "$($H state pp | jq -r .status)" = running ]
  [ "$($H exec pp -- echo ok)" = ok ]
}

@test "delete --force while an exec runs: the exec ends, the delete succeeds, nothing is left" {
  b=$(new_bundle dx)
  set_args "$b" sleep 1000
  $H run --detach --bundle "$b" dx
  pid=$($H state dx | jq -r .pid)
  $H exec dx -- sleep 100 & execer=$!
  for i in $(seq 50); do [ "$($H exec dx -- sh -c 'ps | grep -c "[s]leep 100"')" = 1 ] && break; sleep 0.1; done
  $H delete --force dx
  r=0
  wait $execer || r=$?
  [ "$r" -ne 0 ]  # killed with its sandbox, not a success
  pid_gone "$pid"
  [ ! -e "$STATE/dx" ]
  [ -z "$(leak_report)" ]
}

@test "exec while stop: the stop wins, the exec ends (killed, or refused once stopped), state says stopped" {
  b=$(new_bundle sx)
  set_args "$b" sleep 1000
  $H run --detach --bundle "$b" sx
  pid=$($H state sx | jq -r .pid)
  $H exec sx -- sleep 100 & execer=$!
  for i in $(seq 50); do [ "$($H exec sx -- sh -c 'ps | grep -c "[s]leep 100"')" = 1 ] && break; sleep 0.1; done
  # A second exec races the stop: it either ran before it (and was killed
  # with the sandbox) or is refused with 125 naming the state; never hangs.
  ( r=0; timeout 20 $H exec sx -- sleep 50 2> "$TEST_ROOT/e2" || r=$?; echo $r > "$TEST_ROOT/r2" ) &
  racer=$!
  $H stop --time 1s sx
  r=0
  wait $execer || r=$?
  [ "$r" -ne 0 ]
  wait $racer
  r2=$(cat "$TEST_ROOT/r2")
  [ "$r2" -ne 0 ]
  [ "$r2" -ne 124 ]  # ended, and not by the timeout
  if [ "$r2" -eq 125 ]; then grep -Eq 'not running|stopped' "$TEST_ROOT/e2"; fi
  [ "$($H state sx | jq -r .status)" = stopped ]
  pid_gone "$pid"
  # And the sandbox starts again on its disk, as stop promises.
  $H start sx
  [ "$($H exec sx -- echo back)" = back ]
  $H delete --force sx
  [ -z "$(leak_report)" ]
}
