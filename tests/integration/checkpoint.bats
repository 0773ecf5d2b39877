#!/usr/bin/env bats
# checkpoint / restore (CRIU): refused with criu check's own reason where
# CRIU cannot work; runc's flags reach criu; a failed restore leaves nothing.

load helpers
bats_require_minimum_version 1.5.0

setup_file () {
  hako_setup_file
  image_fixtures
}
setup () {
  hako_setup
  import_busybox
}
teardown () { hako_teardown; }

# What the real criu check says: empty when it passes, else its first error
# line without criu's source position (how hako quotes it).
criu_check_reason () {
  command -v criu >/dev/null || { echo "criu is not installed"; return; }
  local out
  out=$(criu check 2>&1) && return 0
  echo "$out" | grep -m1 '^Error (' | sed 's/^Error ([^)]*): //'
}

# A stand-in criu at $TEST_ROOT/criu: `check` passes when $1 is 0, else fails
# with a reason; `dump` succeeds; `restore` fails.  Each argv goes to criu.argv.
fake_criu () {
  cat > "$TEST_ROOT/criu" <<EOF
#!/bin/sh
echo "\$*" >> "$TEST_ROOT/criu.argv"
case "\$1" in
  --version) echo "Version: 0.0-test" ;;
  check) [ "$1" = 0 ] || { echo "Error (criu/fake.c:7): fake: this kernel lacks it" >&2; exit 1; } ;;
  dump) exit 0 ;;
  restore) echo "Error (criu/cr-restore.c:9): fake: cannot restore" >&2; exit 1 ;;
esac
EOF
  chmod 755 "$TEST_ROOT/criu"
}

# A runc-spec bundle sandbox (no user namespace): what restore rebuilds.
# run_bundle ID ARG...: run it detached from $TEST_ROOT/bundle-ID.
run_bundle () {
  local id=$1 b
  b=$(new_bundle "$id")
  shift
  set_args "$b" "$@"
  $H run --detach --bundle "$b" "$id"
}

@test "checkpoint and restore refuse (125) when criu check fails, quoting criu's reason" {
  run_bundle c sleep 1000
  fake_criu 1
  run -125 env HAKO_CRIU="$TEST_ROOT/criu" $H checkpoint --image-path "$TEST_ROOT/ck" c
  [[ "$output" == *"hako: checkpoint c: CRIU cannot work on this host: criu check failed: fake: this kernel lacks it"* ]]
  run -125 env HAKO_CRIU="$TEST_ROOT/criu" $H restore --image-path "$TEST_ROOT/ck" r
  [[ "$output" == *"hako: restore r: CRIU cannot work on this host: criu check failed: fake: this kernel lacks it"* ]]
  # Nothing was dumped or made; the sandbox runs on.
  run -1 grep -q '^dump' "$TEST_ROOT/criu.argv"
  [ ! -e "$TEST_ROOT/ck" ]
  [ ! -e "$STATE/r" ]
  [ "$($H state c | jq -r .status)" = running ]
  # The verdict is cached (keyed by kernel and binary): criu check ran once.
  [ "$(grep -c '^check' "$TEST_ROOT/criu.argv")" = 1 ]
  # This host's own criu: where its check fails, hako quotes its reason.
  reason=$(criu_check_reason)
  [ -n "$reason" ] || skip "criu check passes on this host: no refusal to see"
  run -125 $H checkpoint --image-path "$TEST_ROOT/ck" c
  [[ "$output" == *"criu check failed: $reason"* ]]
}

@test "features and doctor say whether CRIU works here, with criu check's reason" {
  reason=$(criu_check_reason)
  run -0 $H features
  if [ -z "$reason" ]; then
    [ "$(echo "$output" | jq -r '.annotations["io.hako.criu"]')" = true ]
  else
    [ "$(echo "$output" | jq -r '.annotations["io.hako.criu"]')" = false ]
    [[ "$(echo "$output" | jq -r '.annotations["io.hako.criu.reason"]')" == "$reason"* ]]
  fi
  run -0 $H doctor --format json
  [ "$(echo "$output" | jq -r .checks.criu.available)" = "$([ -z "$reason" ] && echo true || echo false)" ]
  [ -z "$reason" ] || [[ "$(echo "$output" | jq -r .checks.criu.reason)" == "$reason"* ]]
  run -0 $H doctor
  [[ "$output" == *"CRIU checkpoint/restore"* ]]
  # A stand-in whose check passes: available.
  fake_criu 0
  run -0 env HAKO_CRIU="$TEST_ROOT/criu" $H --data-root "$TEST_ROOT/other" features
  [ "$(echo "$output" | jq -r '.annotations["io.hako.criu"]')" = true ]
  [ "$(echo "$output" | jq -r '.annotations["io.hako.criu.version"]')" = 0.0-test ]
  rm -rf "$TEST_ROOT/other"
}

@test "checkpoint hands criu dump runc's flags; a failed restore leaves no sandbox, mount, cgroup or data" {
  run_bundle c sleep 1000
  pid=$($H state c | jq -r .pid)
  fake_criu 0
  HAKO_CRIU="$TEST_ROOT/criu" $H checkpoint --image-path "$TEST_ROOT/ck" --work-path "$TEST_ROOT/wk" \
    --leave-running --tcp-established --file-locks --manage-cgroups-mode full c
  dump=$(grep '^dump' "$TEST_ROOT/criu.argv")
  [[ "$dump" == "dump --tree $pid --images-dir $TEST_ROOT/ck --work-dir $TEST_ROOT/wk "* ]]
  for f in --tcp-established --file-locks --manage-cgroups=full --leave-running --freeze-cgroup; do
    [[ "$dump" == *" $f"* ]]
  done
  # The files beside criu's images: the bundle's root, the config.
  [ -x "$TEST_ROOT/ck/hako-snapshot/data/bin/busybox" ]
  cmp "$TEST_ROOT/ck/hako-snapshot/config.json" "$STATE/c/config.json"
  [ "$($H state c | jq -r .status)" = running ]
  # A second checkpoint into the same place is refused.
  run -125 env HAKO_CRIU="$TEST_ROOT/criu" $H checkpoint --image-path "$TEST_ROOT/ck" --leave-running c
  [[ "$output" == *"already holds a checkpoint"* ]]
  # A bundle sandbox's restore: criu fails; hako's root, cgroups and state
  # for r go again.
  run_bundle cb sleep 1000
  b=$TEST_ROOT/bundle-cb
  HAKO_CRIU="$TEST_ROOT/criu" $H checkpoint --image-path "$TEST_ROOT/ckb" --leave-running cb
  run -125 env HAKO_CRIU="$TEST_ROOT/criu" $H restore --bundle "$b" --image-path "$TEST_ROOT/ckb" --work-path "$TEST_ROOT/wk" r
  [[ "$output" == *"hako: restore r: criu restore failed (status 1): fake: cannot restore"* ]]
  restore=$(grep '^restore' "$TEST_ROOT/criu.argv" | tail -1)
  [[ "$restore" == *"--root "*" --restore-detached --pidfile $STATE/r/criu.pid"* ]]
  [ ! -e "$STATE/r" ]
  [ ! -e "$DATA/sandboxes/r" ]
  run -1 grep -q " $STATE/r/" /proc/self/mountinfo
  $H delete --force cb
  # Usage: runc's flags only where runc has them.
  run -125 $H restore --leave-running r
  run -125 $H checkpoint --manage-cgroups-mode hard c
  [[ "$output" == *"not soft, full, strict or ignore"* ]]
}

@test "checkpoint refuses what restore cannot rebuild (host profile, image in a user namespace) before criu runs" {
  # A stand-in criu whose check passes: any call of it would be in criu.argv.
  fake_criu 0
  $H run --detach --profile host w
  run -125 env HAKO_CRIU="$TEST_ROOT/criu" $H checkpoint --image-path "$TEST_ROOT/ckw" w
  [[ "$output" == *"hako: checkpoint w: sandbox w is a host-profile sandbox: restore cannot rebuild its root"* ]]
  $H run --detach --image busybox i -- sleep 1000
  run -125 env HAKO_CRIU="$TEST_ROOT/criu" $H checkpoint --image-path "$TEST_ROOT/cki" --leave-running i
  [[ "$output" == *"hako: checkpoint i: sandbox i is an image sandbox in a user namespace"* ]]
  # criu never ran, nothing was written, and both run on.
  [ ! -e "$TEST_ROOT/criu.argv" ]
  [ ! -e "$TEST_ROOT/ckw" ]
  [ ! -e "$TEST_ROOT/cki" ]
  [ "$($H state w | jq -r .status)" = running ]
  [ "$($H state i | jq -r .status)" = running ]
  $H delete --force w
  $H delete --force i
}

@test "a process counting in memory is checkpointed, deleted, restored and counts on (a bundle sandbox)" {
  reason=$(criu_check_reason)
  [ -z "$reason" ] || skip "criu check fails on this host: $reason"
  # It counts in a shell variable (memory) and writes each value to a host
  # directory bound in: a count that went on from where it was proves the
  # memory came back.
  mkdir -m 0777 "$TEST_ROOT/out"
  b=$(new_bundle c)
  set_args "$b" sh -c 'i=0; while :; do i=$((i+1)); echo $i > /out/count; sleep 0.1; done'
  edit_config "$b" '.mounts += [{"destination": "/out", "type": "bind", "source": "'"$TEST_ROOT/out"'", "options": ["rbind", "rw"]}]'
  $H run --detach --bundle "$b" c
  count () { cat "$TEST_ROOT/out/count" 2>/dev/null || echo 0; }
  for i in $(seq 50); do [ "$(count)" -ge 5 ] && break; sleep 0.1; done
  [ "$(count)" -ge 5 ]
  $H checkpoint --image-path "$TEST_ROOT/ck" c
  at=$(count)
  [ "$($H state c | jq -r .status)" = stopped ]
  $H delete c
  $H restore --bundle "$b" --image-path "$TEST_ROOT/ck" c
  [ "$($H state c | jq -r .status)" = running ]
  for i in $(seq 50); do [ "$(count)" -gt "$((at + 2))" ] && break; sleep 0.1; done
  # It went on from where it was: not from 1.
  [ "$(count)" -gt "$((at + 2))" ]
  $H delete --force c
}
