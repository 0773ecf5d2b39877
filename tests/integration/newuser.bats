#!/usr/bin/env bats
# What a new user met (issue 36), each as they met it: docker's idioms with
# the host profile, why a command ended, what its result says, the tour's
# traces and the errors that named hako's insides instead of the fix.

load helpers
bats_require_minimum_version 1.5.0

setup_file () { hako_setup_file; }
setup () { hako_setup; }
teardown () { hako_teardown; }

# A host directory the host profile's unprivileged root may write.
shared_dir () {
  local d="$TEST_ROOT/$1"
  mkdir -p "$d"
  chmod 777 "$d"
  echo "$d"
}

# ---- mounts at and under /work (item 1) ----

@test "docker's -v \"\$dir:/work\" -w /work: the command's writes reach \$dir" {
  d=$(shared_dir src)
  echo from-host > "$d/in"
  run -0 $H run --rm -v "$d:/work" -w /work vw -- sh -c 'cat in; echo made > out; pwd'
  [ "${lines[0]}" = from-host ]
  [ "${lines[1]}" = /work ]
  [ "$(cat "$d/out")" = made ]
}

@test "-v \$dir:/work/x and --tmpfs /work/t sit on top of the work dir" {
  d=$(shared_dir x)
  run -0 $H run -v "$d:/work/x" --tmpfs /work/t vx -- sh -c \
    'echo a > /work/x/f && echo b > /work/t/f && echo c > /work/kept && cat /work/t/f'
  [ "$output" = b ]
  [ "$(cat "$d/f")" = a ]
  # The rest of /work is the persistent work dir, and a stopped sandbox's
  # /work/x is the bind's source.
  run -0 $H get vx /work/kept
  [ "$output" = c ]
  run -0 $H get vx /work/x/f
  [ "$output" = a ]
  $H delete vx
}

# ---- a command that died with its sandbox (item 2) ----

@test "exec killed by the sandbox's deadline: reason sandbox_timeout, no false warning" {
  $H run -d --timeout 1s dl -- sleep 100
  run -137 --separate-stderr $H exec --json dl -- sh -c 'sleep 60'
  [ "$(echo "$output" | jq -r .reason)" = sandbox_timeout ]
  [ "$(echo "$output" | jq -r .stderr)" = "" ]
  [ "$(echo "$output" | jq -r .warning)" = null ]
  [ "$stderr" = "" ]
  [ "$($H state dl | jq -r .reason)" = timeout ]
}

@test "exec ended by hako stop: reason stopped; by hako delete: reason deleted" {
  $H run -d st -- sleep 100
  (sleep 1; $H stop --time 1 st) 3>&- &
  run --separate-stderr $H exec --json st -- sleep 60
  wait
  [ "$(echo "$output" | jq -r .reason)" = stopped ]
  [ "$stderr" = "" ]
  $H delete st
  $H run -d de -- sleep 100
  (sleep 1; $H delete --force de) 3>&- &
  # The SDK's way: the result on --status-fd, stderr only the command's.
  run -137 --separate-stderr $H exec --status-fd 4 de -- sh -c 'sleep 60' 4> "$TEST_ROOT/status"
  wait
  [ "$(tail -1 "$TEST_ROOT/status" | jq -r .reason)" = deleted ]
  [ "$(tail -1 "$TEST_ROOT/status" | jq -r .warning)" = null ]
  [ "$stderr" = "" ]
}

# ---- the OOM killer under a shell (item 3) ----

@test "an OOM-killed child under sh -c: exec and wait say oom and count oom_kills" {
  $H run -d --memory 32m om -- sleep 100
  run -0 $H exec --json om -- true
  [ "$(echo "$output" | jq -r .oom_kills)" = 0 ]
  # sh's child is the one the OOM killer takes; sh exits 137.
  run -137 $H exec --json om -- sh -c 'head -c 200m /dev/zero | tail > /dev/null; exit $?'
  [ "$(echo "$output" | jq -r .reason)" = oom ]
  [ "$(echo "$output" | jq -r .oom_kills)" -ge 1 ]
  # Not the last command: it exits 0, and the count still says what happened.
  run -0 $H exec --json om -- sh -c 'head -c 200m /dev/zero | tail > /dev/null; true'
  [ "$(echo "$output" | jq -r .reason)" = exited ]
  [ "$(echo "$output" | jq -r .oom_kills)" -ge 1 ]
  $H delete --force om
  # The sandbox's own process, a shell whose child was OOM-killed.
  $H run -d --memory 32m wo -- sh -c 'head -c 200m /dev/zero | tail > /dev/null; exit $?'
  run -137 $H wait --json wo
  [ "$(echo "$output" | jq -r .reason)" = oom ]
  [ "$(echo "$output" | jq -r .oomKills)" -ge 1 ]
}
