#!/usr/bin/env bats
# What runc v1.1.5's own integration suite (tests/conformance/runc-bats.sh,
# docs/conformance.md) needs of hako, each tested here without the suite.

load helpers
bats_require_minimum_version 1.5.0

setup_file () { hako_setup_file; }
setup () { hako_setup; }
teardown () { hako_teardown; }

@test "runc_compat: spec --profile runc writes runc spec's default config, which runs" {
  mkdir "$TEST_ROOT/rs"
  run -0 $H spec --profile runc --bundle "$TEST_ROOT/rs"
  c=$TEST_ROOT/rs/config.json
  [ "$(jq -r .process.terminal "$c")" = true ]
  [ "$(jq -r .hostname "$c")" = runc ]
  [ "$(jq -r '[.linux.namespaces[].type] | join(",")' "$c")" = pid,network,ipc,uts,mount ]
  [ "$(jq -r '.linux.uidMappings // "none"' "$c")" = none ]
  [ "$(jq -r '.process.capabilities.ambient | length' "$c")" = 3 ]
  [ "$(jq -c .linux.resources "$c")" = '{"devices":[{"allow":false,"access":"rwm"}]}' ]
  [ "$(jq -r '.sandbox // "none"' "$c")" = none ]
  # It runs as it is, with the busybox rootfs and no terminal asked for.
  ln -s "$BUNDLE_DIR/rootfs" "$TEST_ROOT/rs/rootfs"
  edit_config "$TEST_ROOT/rs" '.process.terminal = false | .process.args = ["hostname"]'
  run -0 $H run --bundle "$TEST_ROOT/rs" rs
  [ "$output" = runc ]
  $H delete --force rs
  # runc spec --rootless's is not written: refused, nothing written.
  mkdir "$TEST_ROOT/rl"
  run -125 $H spec --profile runc --rootless --bundle "$TEST_ROOT/rl"
  [[ "$output" == *"runc profile"*"--rootless"* ]]
  [ ! -e "$TEST_ROOT/rl/config.json" ]
}
