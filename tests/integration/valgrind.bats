#!/usr/bin/env bats
# valgrind (memcheck) over the verbs it can follow: the lifecycle queries and
# the image store's (ls, inspect, verify, export, rm).  Debian 12's valgrind
# 3.19 does not know clone3, pidfd_open, openat2 or the Landlock syscalls, so
# run, exec, get, put, image import and delete of a live sandbox cannot run
# under it: those are covered by the ASan+UBSan (and LeakSanitizer) slice of
# `make check` instead.

load helpers

setup_file () {
  hako_setup_file
  image_fixtures
}
setup () {
  hako_setup
  command -v valgrind > /dev/null || skip "valgrind is not installed (Debian: valgrind)"
  V="valgrind -q --leak-check=full --errors-for-leak-kinds=definite,indirect --error-exitcode=99"
}
teardown () { hako_teardown; }

@test "valgrind: spec, features, state, list, pause and resume — no invalid access, no leak" {
  b=$(new_bundle vg)
  set_args "$b" sleep 1000
  $H run --detach --bundle "$b" vg
  mkdir "$TEST_ROOT/spec"
  for cmd in "spec --bundle $TEST_ROOT/spec" "spec --profile host --bundle $TEST_ROOT/spec/h" features \
             "state vg" "list" "list --format json" "pause vg" "resume vg" "state nosuch"; do
    mkdir -p "$TEST_ROOT/spec/h"
    run $V $H $cmd
    echo "$cmd: $status" >&2
    [ "$status" -ne 99 ]
    [[ "$output" != *"=="*"ERROR SUMMARY"* && "$output" != *"definitely lost"* ]]
  done
  # A refused config goes through the whole parser and its error paths.
  echo '{"ociVersion": "1.2.0", "root": {"path": "r"}, "process": {"args": [], "cwd": "/"}}' > "$TEST_ROOT/spec/bad.json"
  mkdir -p "$TEST_ROOT/bad" && cp "$TEST_ROOT/spec/bad.json" "$TEST_ROOT/bad/config.json"
  run $V $H create --bundle "$TEST_ROOT/bad" bad
  [ "$status" -eq 125 ]
  [[ "$output" == *"process.args"* ]]
}

@test "valgrind: image ls, inspect, verify (re-hashing every blob), export and rm — no invalid access, no leak" {
  # import itself resolves every path with openat2, which valgrind 3.19 does
  # not know: the ASan slice (faults.bats) covers it.
  accept_policy
  $H image import --policy "$TEST_ROOT/accept.json" "$IMG/layout" --name vg:layout >/dev/null
  for cmd in "image ls" "image inspect vg:layout" "image verify" "image export vg:layout $TEST_ROOT/out" \
             "image inspect nosuch" "image rm vg:layout"; do
    run $V $H $cmd
    echo "$cmd: $status" >&2
    [ "$status" -ne 99 ]
    [[ "$output" != *"=="*"ERROR SUMMARY"* && "$output" != *"definitely lost"* ]]
    [[ "$output" != *"unhandled"* ]]
  done
  [ -s "$TEST_ROOT/out/index.json" ]
  [ -z "$($H image ls -q)" ]
}
