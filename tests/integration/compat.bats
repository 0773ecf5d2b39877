#!/usr/bin/env bats
# runc CLI compatibility details the shims and clients rely on: --version's
# shape, the globals and options hako accepts, refuses or adds.

load helpers
bats_require_minimum_version 1.5.0

setup_file () { hako_setup_file; }
setup () { hako_setup; }
teardown () { hako_teardown; }

@test "compat: --version prints 'hako version X' then 'spec: 1.2.0', as runc" {
  run $HAKO --version
  [ "$status" -eq 0 ]
  [[ "${lines[0]}" == "hako version "* ]]
  [ "${lines[1]}" = "spec: 1.2.0" ]
}

@test "compat: --systemd-cgroup and --rootless are accepted; bad values are refused, and systemd paths where systemd does not run" {
  run $H --systemd-cgroup --rootless auto list -q
  [ "$status" -eq 0 ]
  run $H --rootless=maybe list
  [ "$status" -eq 125 ]
  [[ "$output" == *"--rootless"*"true, false or auto"* ]]
  if [ -d /run/systemd/system ]; then return; fi  # cgroups.bats runs one where systemd runs
  b=$(new_bundle sd)
  edit_config "$b" '.linux.cgroupsPath = "system.slice:hako:sd"'
  run $H --systemd-cgroup create --bundle "$b" sd
  [ "$status" -eq 125 ]
  [[ "$output" == *"needs systemd, which is not running on this host"*"--cgroup-manager cgroupfs"* ]]
  [ ! -e "$STATE/sd" ]
}

@test "compat: create --no-pivot is refused, --no-new-keyring accepted" {
  b=$(new_bundle np)
  set_args "$b" sleep 30
  run $H create --no-pivot --bundle "$b" np
  [ "$status" -eq 125 ]
  [[ "$output" == *"--no-pivot is not supported"* ]]
  [ ! -e "$STATE/np" ]
  $H create --no-new-keyring --bundle "$b" np
  $H delete --force np
}

@test "compat: kill takes TERM, SIGTERM and 15; unknown ids say 'does not exist'" {
  b=$(new_bundle kl)
  set_args "$b" sleep 30
  for sig in KILL SIGKILL 9; do
    $H run --bundle "$b" kl & runner=$!
    wait_status kl running
    $H kill kl "$sig"
    wait $runner || true
    wait_status kl stopped
    $H delete kl
  done
  run $H kill nosuch TERM
  [ "$status" -eq 125 ]
  [[ "$output" == *"does not exist"* ]]
}

@test "compat: delete --force of an id that does not exist succeeds, as runc's; without --force it fails" {
  run -0 $H delete --force nosuch
  [ -z "$output" ]
  run -125 $H delete nosuch
  [[ "$output" == *"does not exist"* ]]
  run -125 $H delete --force 'bad/id'
  [[ "$output" == *"invalid sandbox id"* ]]
}

@test "compat: exec --cap adds within the bounding set only; --additional-gids; --ignore-paused of a running sandbox runs at once" {
  b=$(new_bundle cap)
  set_args "$b" sleep 30
  edit_config "$b" '.process.capabilities.bounding += ["CAP_NET_RAW"]'
  $H run --bundle "$b" cap & runner=$!
  wait_status cap running
  without=$($H exec cap grep CapEff /proc/self/status)
  with=$($H exec --cap NET_RAW cap grep CapEff /proc/self/status)
  [ "$without" != "$with" ]
  # CAP_NET_RAW is bit 13.
  [ $(( 0x${with##*[[:space:]]} & (1 << 13) )) -ne 0 ]
  [ $(( 0x${without##*[[:space:]]} & (1 << 13) )) -eq 0 ]
  run $H exec --cap CAP_SYS_ADMIN cap true
  [ "$status" -eq 125 ]
  [[ "$output" == *"CAP_SYS_ADMIN: not in the bounding set"* ]]
  [[ " $($H exec --additional-gids 4321 -g 4322 cap id -G) " == *" 4321 4322 "* ]]
  [ "$($H exec --ignore-paused cap echo now)" = now ]
  $H kill cap KILL
  wait $runner || true
}

@test "compat: list --format json has runc's members; -q wins over --format json" {
  b=$(new_bundle ls)
  $H create --bundle "$b" ls
  run $H list --format json
  [ "$(echo "$output" | jq -r '.[0] | [.ociVersion != null, .id, .status, .bundle, (.rootfs | length > 0)] | @tsv')" = "$(printf 'true\tls\tcreated\t%s\ttrue' "$b")" ]
  run $H list --format json -q
  [ "$output" = ls ]
  $H delete --force ls
}
