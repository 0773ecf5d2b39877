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
