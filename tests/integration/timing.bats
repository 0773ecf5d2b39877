#!/usr/bin/env bats
# Timing bounds: how soon a deadline fires and how fast a cached import is.
# A loaded machine stretches every one of them, so this file runs alone
# (tests/run.sh's SERIAL_FILES) and the files that check what happens
# (exec.bats, lifetime.bats, images.bats) check it without a clock.

load helpers
bats_require_minimum_version 1.5.0

setup_file () { hako_setup_file; }
setup () { hako_setup; }
teardown () { hako_teardown; }

@test "exec --timeout 1s: the command is ended within 3 s, and exec returns within 4 s" {
  b=$(new_bundle t)
  set_args "$b" sleep 1000
  $H run --detach --bundle "$b" t
  SECONDS=0
  run -124 $H exec --json --timeout 1s t -- sh -c 'sleep 100 & setsid sleep 200 & sleep 300'
  elapsed=$SECONDS
  echo "$output" | jq -e '.duration_ms >= 1000 and .duration_ms < 3000'
  [ "$elapsed" -lt 4 ]
}

@test "update --timeout 4s: the moved deadline fires within 8 s, not at the spec's 1 s" {
  $H run -d --profile host --timeout 1s mv -- sleep 300
  $H update --timeout 4s mv
  sleep 2
  [ "$($H state mv | jq -r .status)" = running ]
  SECONDS=0
  run -124 $H wait mv
  [ "$SECONDS" -lt 8 ]
}

@test "a second import of the same layout takes under 500 ms" {
  image_fixtures
  accept_policy
  $H image import --policy "$TEST_ROOT/accept.json" "$IMG/layout" --name a
  start=$(date +%s%N)
  run -0 $H image import --policy "$TEST_ROOT/accept.json" "$IMG/layout" --name b
  took=$(( ($(date +%s%N) - start) / 1000000 ))
  echo "second import: $took ms"
  [ "$took" -lt 500 ]
}
