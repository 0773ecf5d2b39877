#!/usr/bin/env bats
# A detached sandbox holds nothing of its caller's: run -d returns at once,
# its output goes to a bounded log (hako logs), and hako wait reports how
# its process ended.

load helpers
bats_require_minimum_version 1.5.0

setup_file () { hako_setup_file; }
setup () { hako_setup; }
teardown () { hako_teardown; }

@test "out=\$(hako run -d ...) and run -d | cat return while the sandbox runs" {
  # Without the log, the detached pid 1 would hold the caller's pipe until
  # it is deleted: these would block for the whole sleep.
  out=$(timeout 20 $H run -d --profile host cap1 -- sh -c 'echo to-the-log; sleep 300')
  [ -z "$out" ]
  [ "$($H state cap1 | jq -r .status)" = running ]
  timeout 20 $H run -d --profile host cap2 -- sh -c 'echo x; sleep 300' | cat
  [ "$($H state cap2 | jq -r .status)" = running ]
  # stdin is /dev/null, not the caller's
  echo secret | timeout 20 $H run -d --profile host cap3 -- sh -c 'cat; echo "eof:$?"; sleep 300'
  for i in $(seq 50); do $H logs cap3 | grep -q eof && break; sleep 0.1; done
  [ "$($H logs cap3)" = "eof:0" ]
}

@test "logs: stdout to stdout, stderr to stderr, --tail, --timestamps, -f until the process ends" {
  $H run -d --profile host lg -- sh -c 'echo one; echo err1 >&2; echo two; sleep 1; echo three; exit 3'
  run --separate-stderr -0 $H logs -f lg
  [ "$output" = "$(printf 'one\ntwo\nthree')" ]
  [ "$stderr" = err1 ]
  run -0 $H logs --tail 1 lg
  [ "$output" = three ]
  run -0 $H logs --timestamps lg
  [[ "${lines[0]}" =~ ^20[0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9:]+\.[0-9]{9}Z\ one$ ]]
  # a line written in pieces is one line
  $H run -d --profile host lp -- sh -c 'printf "a"; sleep 0.3; printf "b\n"'
  run -0 $H wait lp
  [ "$($H logs lp)" = ab ]
}

@test "wait: the exit status as run gives it, 128+N for a signal, --json with the reason; several waiters" {
  $H run -d --profile host w1 -- sh -c 'sleep 1; exit 7'
  $H wait w1 > "$TEST_ROOT/a" & a=$!
  $H wait w1 > "$TEST_ROOT/b" & b=$!
  run $H wait w1
  [ "$status" -eq 7 ]
  wait $a || [ $? -eq 7 ]
  wait $b || [ $? -eq 7 ]
  run $H wait --json w1
  [ "$status" -eq 7 ]
  echo "$output" | jq -e '.status == "stopped" and .exitStatus == 7 and .reason == "exited"'
  $H run -d --profile host w2 -- sleep 300
  $H kill w2 KILL
  run $H wait w2
  [ "$status" -eq 137 ]
  run $H wait nosuch
  [ "$status" -eq 125 ]
}

@test "the log is bounded: a flood keeps the newest output, at most --log-size" {
  $H run -d --profile host --log-size 64k fl -- sh -c 'i=0; while [ $i -lt 20000 ]; do echo "line $i"; i=$((i+1)); done'
  $H wait fl
  size=$(cat "$STATE/fl/log" "$STATE/fl/log.1" 2>/dev/null | wc -c)
  [ "$size" -le 65536 ]
  [ "$size" -ge 16384 ]
  [ "$($H logs --tail 1 fl)" = "line 19999" ]
  # the oldest went first
  ! $H logs fl | grep -qx "line 0"
}

@test "--stdio inherit keeps the caller's stdout; create keeps runc's semantics" {
  run -0 timeout 20 $H run -d --stdio inherit --profile host inh -- echo passed-through
  for i in $(seq 50); do [ "$($H state inh | jq -r .status)" = stopped ] && break; sleep 0.1; done
  [[ "$output" == *passed-through* ]]
  run -125 $H logs inh
  [[ "$output" == *"has no log"* ]]
  b=$(new_bundle cr)
  set_args "$b" echo from-create
  $H create --bundle "$b" cr > "$TEST_ROOT/cr.out"
  $H start cr >> "$TEST_ROOT/cr.out"
  for i in $(seq 50); do grep -q from-create "$TEST_ROOT/cr.out" && break; sleep 0.1; done
  grep -q from-create "$TEST_ROOT/cr.out"
  run -125 $H run -d --stdio bad --profile host x1 -- true
  [[ "$output" == *"--stdio takes log or inherit"* ]]
  run -125 $H run -d --log-size 10 --profile host x2 -- true
  [[ "$output" == *"--log-size takes a size"* ]]
  [ -z "$(ls "$STATE" | grep -x 'x[12]')" ]
}

@test "a stopped and restarted sandbox goes on logging" {
  $H run -d --profile host rs -- sh -c 'echo "run $(date +%N)"; sleep 300'
  for i in $(seq 50); do [ -n "$($H logs rs)" ] && break; sleep 0.1; done
  $H stop --time 1s rs
  $H start rs
  for i in $(seq 50); do [ "$($H logs rs | wc -l)" -ge 2 ] && break; sleep 0.1; done
  [ "$($H logs rs | grep -c '^run ')" = 2 ]
}
