#!/usr/bin/env bats
# exec --status-fd: the command's output streams through as it comes, and
# how it ended comes as JSON on a separate fd (the Python SDK's exec), so a
# program never parses the command's own output or English for it.

load helpers
bats_require_minimum_version 1.5.0

setup_file () { hako_setup_file; }
setup () { hako_setup; }
teardown () { hako_teardown; }

@test "exec --status-fd: the pid first, then the result; the streams pass through" {
  $H run -d --profile host st -- sleep 300
  run --separate-stderr -3 $H exec --status-fd 3 st sh -c 'echo out; echo err >&2; exit 3' 3>"$TEST_ROOT/status"
  [ "$output" = out ]
  [ "$stderr" = err ]
  [ "$(wc -l < "$TEST_ROOT/status")" = 2 ]
  [ "$(sed -n 1p "$TEST_ROOT/status" | jq -r '.pid | type')" = number ]
  line=$(sed -n 2p "$TEST_ROOT/status")
  [ "$(jq -r .exit_code <<<"$line")" = 3 ]
  [ "$(jq -r .reason <<<"$line")" = exited ]
  [ "$(jq -r .stdout <<<"$line")" = "" ]
}

@test "exec --status-fd: output arrives before the command ends" {
  $H run -d --profile host sa -- sleep 300
  # the first line is read while the command still waits: it ends only
  # once the test, having read it, makes /tmp/go (a held-back line fails)
  coproc S { $H exec --status-fd 3 sa sh -c 'echo early; until [ -e /tmp/go ]; do sleep 0.05; done; echo late' 3>/dev/null; }
  read -r -t 10 first <&"${S[0]}" || true
  $H exec sa touch /tmp/go
  [ "$first" = early ]
  read -r -t 10 second <&"${S[0]}"
  [ "$second" = late ]
  wait "$S_PID" || true
}

@test "exec --status-fd: timeout, truncation, not found, hako's own error" {
  $H run -d --profile host sb -- sleep 300
  run -124 $H exec --status-fd 3 --timeout 300ms --max-output 3 sb sh -c 'echo hello; sleep 30' 3>"$TEST_ROOT/s1"
  [ "$output" = hel ]
  line=$(tail -n1 "$TEST_ROOT/s1")
  [ "$(jq -r '.reason,.timed_out,.stdout_truncated' <<<"$line" | tr '\n' ' ')" = "timeout true true " ]
  run -127 $H exec --status-fd 3 sb no-such-command 3>"$TEST_ROOT/s2"
  [ "$(tail -n1 "$TEST_ROOT/s2" | jq -r .exit_code)" = 127 ]
  run -125 $H exec --status-fd 3 no-such-sandbox true 3>"$TEST_ROOT/s3"
  [ "$(jq -r .error.kind "$TEST_ROOT/s3")" = not_found ]
}

@test "exec --status-fd: refused values and combinations, and the fd is not the command's" {
  $H run -d --profile host sc -- sleep 300
  run -125 $H exec --status-fd 2 sc true
  [[ "$output" == *"--status-fd \"2\""* ]]
  run -125 $H exec --status-fd 9 sc true
  [[ "$output" == *"not an open file descriptor"* ]]
  run -125 $H exec --status-fd 3 --json sc true 3>/dev/null
  run -125 $H exec --status-fd 3 -d sc true 3>/dev/null
  # the command cannot write a forged result to its caller's fd
  run --separate-stderr -0 $H exec --status-fd 3 sc sh -c 'echo forged >&3 2>/dev/null; echo "rc:$?"' 3>"$TEST_ROOT/s4"
  [[ "$output" == rc:[12]* ]]
  ! grep -q forged "$TEST_ROOT/s4"
}
