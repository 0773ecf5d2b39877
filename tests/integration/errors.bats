#!/usr/bin/env bats
# Bad input and interrupted work: exit 125, a message naming the problem, and
# nothing left behind (state dir, data dir, mount, process).

load helpers

setup_file () { hako_setup_file; }
setup () { hako_setup; }
teardown () { hako_teardown; }

# expect_clean_failure ID: the last `run` failed with 125 and ID left nothing.
expect_clean_failure () {
  [ "$status" -eq 125 ]
  [ ! -e "$STATE/$1" ]
  [ ! -e "$DATA/sandboxes/$1" ]
  [ -z "$(leak_report)" ]
}

@test "malformed JSON: 125, the message names the file and the problem" {
  b=$(new_bundle badjson)
  echo '{"ociVersion": "1.0.2", "process": {' > "$b/config.json"
  run $H create --bundle "$b" bj
  expect_clean_failure bj
  [[ "$output" == "hako: create bj: $b/config.json: invalid JSON"* ]]
}

@test "a config error names its JSON path" {
  b=$(new_bundle emptyargs)
  edit_config "$b" '.process.args = []'
  run $H create --bundle "$b" ea
  expect_clean_failure ea
  [[ "$output" == *".process.args: must be a non-empty array"* ]]
}

@test "missing rootfs: 125 naming the path" {
  b=$(new_bundle noroot)
  rm "$b/rootfs"
  run $H create --bundle "$b" nr
  expect_clean_failure nr
  [[ "$output" == *"root.path $b/rootfs"*"No such file"* ]]
}

@test "missing bundle and missing config.json" {
  run $H create --bundle "$TEST_ROOT/nowhere" nb
  expect_clean_failure nb
  [[ "$output" == *"nowhere"* ]]
  mkdir "$TEST_ROOT/empty"
  run $H create --bundle "$TEST_ROOT/empty" nc
  expect_clean_failure nc
  [[ "$output" == *"config.json"*"No such file"* ]]
}

@test "duplicate id: 125 'already exists', the first sandbox untouched" {
  b=$(new_bundle dup)
  $H create --bundle "$b" dup
  pid=$($H state dup | jq -r .pid)
  run $H create --bundle "$b" dup
  [ "$status" -eq 125 ]
  [[ "$output" == *"dup already exists"* ]]
  [ "$($H state dup | jq -r .status)" = created ]
  kill -0 "$pid"
}

@test "ids like ../x are refused before any path is built" {
  b=$(new_bundle ids)
  for id in ../x x/y .x '' "$(printf 'a%.0s' $(seq 65))" 'a b'; do
    run $H create --bundle "$b" "$id"
    [ "$status" -eq 125 ]
    [[ "$output" == *"invalid sandbox id"* ]]
  done
  [ ! -e "$TEST_ROOT/x" ]
  [ ! -e "$STATE/../x" ]
  [ -z "$(ls -A "$STATE")" ]
}

@test "a failing mount leaves nothing behind" {
  b=$(new_bundle badmount)
  edit_config "$b" '.mounts += [{"destination": "/mnt", "type": "bind", "source": "/no/such/dir", "options": ["rbind"]}]'
  run $H create --bundle "$b" bm
  expect_clean_failure bm
  [[ "$output" == *"/no/such/dir"* ]]
}

@test "an rlimit above the hard limit is a clear error" {
  b=$(new_bundle rl)
  hard=$(ulimit -Hn)
  edit_config "$b" ".process.rlimits = [{\"type\": \"RLIMIT_NOFILE\", \"soft\": 1024, \"hard\": $((hard * 4))}]"
  run $H run --rm --bundle "$b" rl
  if [ "$status" -eq 0 ]; then
    skip "this host lets hako raise RLIMIT_NOFILE (CAP_SYS_RESOURCE present)"
  fi
  expect_clean_failure rl
  [[ "$output" == *"RLIMIT_NOFILE"*"hard limit"* ]]
}

@test "an unknown capability is refused, naming it" {
  b=$(new_bundle cap)
  edit_config "$b" '.process.capabilities.bounding += ["CAP_MAGIC"]'
  run $H create --bundle "$b" cap
  expect_clean_failure cap
  [[ "$output" == *"CAP_MAGIC"* ]]
}

@test "a capability hako itself lacks (withheld by the host) is refused, naming it" {
  # The first capability of the kernel's set that hako's own bounding set lacks.
  bnd=$((16#$(awk '/^CapBnd:/ {print $2}' /proc/self/status)))
  missing=
  for n in $(seq 0 "$(cat /proc/sys/kernel/cap_last_cap)"); do
    if [ $(((bnd >> n) & 1)) -eq 0 ]; then missing=$n; break; fi
  done
  [ -n "$missing" ] || skip "hako holds every capability on this host"
  names=(CHOWN DAC_OVERRIDE DAC_READ_SEARCH FOWNER FSETID KILL SETGID SETUID SETPCAP LINUX_IMMUTABLE
    NET_BIND_SERVICE NET_BROADCAST NET_ADMIN NET_RAW IPC_LOCK IPC_OWNER SYS_MODULE SYS_RAWIO SYS_CHROOT
    SYS_PTRACE SYS_PACCT SYS_ADMIN SYS_BOOT SYS_NICE SYS_RESOURCE SYS_TIME SYS_TTY_CONFIG MKNOD LEASE
    AUDIT_WRITE AUDIT_CONTROL SETFCAP MAC_OVERRIDE MAC_ADMIN SYSLOG WAKE_ALARM BLOCK_SUSPEND AUDIT_READ
    PERFMON BPF CHECKPOINT_RESTORE)
  [ -n "${names[$missing]:-}" ] || skip "capability $missing has no name known to this test"
  name=CAP_${names[$missing]}
  b=$(new_bundle capw)
  edit_config "$b" ".process.capabilities.permitted += [\"$name\"] | .process.capabilities.bounding += [\"$name\"]"
  run $H create --bundle "$b" capw
  expect_clean_failure capw
  [[ "$output" == *"$name is not in hako's own permitted set"* ]]
}

@test "an SELinux label is refused, naming it (hako applies none)" {
  b=$(new_bundle lsm)
  for f in '.process.selinuxLabel = "system_u:system_r:container_t:s0"' \
    '.linux.mountLabel = "system_u:object_r:container_file_t:s0"'; do
    edit_config "$b" "$f"
    run $H create --bundle "$b" lsm
    expect_clean_failure lsm
    [[ "$output" == *"${f%% =*}: hako does not apply SELinux labels"* ]]
    edit_config "$b" "${f%% =*} = \"\""
  done
  # Empty strings ask for nothing; exec --process refuses a label too.
  set_args "$b" sleep 60
  $H run --detach --bundle "$b" lsm2
  echo '{"args": ["true"], "cwd": "/", "selinuxLabel": "system_u:system_r:container_t:s0"}' > "$TEST_ROOT/proc.json"
  run $H exec --process "$TEST_ROOT/proc.json" lsm2
  $H delete --force lsm2
  [ "$status" -eq 125 ]
  [[ "$output" == *".process.selinuxLabel: hako does not apply SELinux labels"* ]]
}

@test "an AppArmor profile: refused on a host without AppArmor (never run unconfined), applied where it is enabled" {
  b=$(new_bundle aa)
  set_args "$b" cat /proc/self/attr/current
  edit_config "$b" '.process.apparmorProfile = "unconfined"'
  if [ "$(cat /sys/module/apparmor/parameters/enabled 2>/dev/null)" = Y ]; then
    # "unconfined" exists wherever AppArmor does: the command runs in it.
    run -0 $H run --bundle "$b" aa
    [[ "$output" == unconfined* ]]
    return
  fi
  run $H create --bundle "$b" aa
  expect_clean_failure aa
  [[ "$output" == *'.process.apparmorProfile "unconfined": AppArmor is not enabled on this host'* ]]
  # exec --process asking for a profile: the same refusal, nothing run.
  edit_config "$b" '.process.apparmorProfile = ""'
  set_args "$b" sleep 60
  $H run --detach --bundle "$b" aa2
  echo '{"args": ["true"], "cwd": "/", "apparmorProfile": "docker-default"}' > "$TEST_ROOT/proc.json"
  run $H exec --process "$TEST_ROOT/proc.json" aa2
  $H delete --force aa2
  [ "$status" -eq 125 ]
  [[ "$output" == *'.process.apparmorProfile "docker-default": AppArmor is not enabled on this host'* ]]
}

@test "spec settings hako does not apply (personality, intelRdt, scheduler, ioPriority) are refused, naming them" {
  b=$(new_bundle unap)
  for f in '.linux.personality = {"domain": "LINUX32"}' '.linux.intelRdt = {"closID": "x"}' \
    '.process.scheduler = {"policy": "SCHED_FIFO", "priority": 1}' '.process.ioPriority = {"class": "IOPRIO_CLASS_IDLE"}'; do
    edit_config "$b" "$f"
    run $H create --bundle "$b" unap
    expect_clean_failure unap
    [[ "$output" == *"${f%% =*}: not supported by hako"* ]]
    edit_config "$b" "del(${f%% =*})"
  done
}

@test "a missing image is named" {
  b2=$(new_bundle unsup2)
  edit_config "$b2" '.sandbox = {"image": "busybox:latest"}'
  run $H create --bundle "$b2" us2
  expect_clean_failure us2
  [[ "$output" == *"image busybox:latest not found"* ]]
}

@test "two concurrent creates of one id: exactly one succeeds" {
  b=$(new_bundle race)
  for i in 1 2 3 4; do
    ( rc=0; $H create --bundle "$b" race >/dev/null 2>&1 || rc=$?; echo $rc > "$TEST_ROOT/rc.$i" ) &
  done
  wait
  [ "$(cat "$TEST_ROOT"/rc.* | grep -c '^0$')" -eq 1 ]
  [ "$(cat "$TEST_ROOT"/rc.* | grep -c '^125$')" -eq 3 ]
  [ "$($H state race | jq -r .status)" = created ]
}

@test "kill -9 of hako in the middle of create, then delete --force: nothing left" {
  b=$(new_bundle crash)
  for point in after-mkdir after-cgroups after-go after-clone after-ready; do
    HAKO_TEST_STALL=$point $H create --bundle "$b" crash & creator=$!
    for i in $(seq 50); do [ -e "$STATE/crash/stalled" ] && break; sleep 0.1; done
    [ -e "$STATE/crash/stalled" ]
    kill -9 $creator
    wait $creator || true
    $H delete --force crash
    [ -z "$(leak_report)" ]
  done
}

@test "kill -9 at random moments during create, then delete --force: nothing left" {
  b=$(new_bundle crash2)
  for delay in 0 0.002 0.005 0.01 0.02 0.03 0.05; do
    $H create --bundle "$b" crash2 2>/dev/null & creator=$!
    sleep $delay
    kill -9 $creator 2>/dev/null || true
    wait $creator || true
    if [ -e "$STATE/crash2" ]; then $H delete --force crash2; fi
    [ -z "$(leak_report)" ]
  done
}

@test "a truncated state.json is a clear error and delete --force still cleans up" {
  b=$(new_bundle trunc)
  $H create --bundle "$b" trunc
  pid=$($H state trunc | jq -r .pid)
  head -c 20 "$STATE/trunc/state.json" > "$STATE/trunc/s" && mv "$STATE/trunc/s" "$STATE/trunc/state.json"
  run $H state trunc
  [ "$status" -eq 125 ]
  [[ "$output" == *"state.json"* ]]
  run $H delete --force trunc
  [ "$status" -eq 0 ]
  [ ! -e "$STATE/trunc" ]
  pid_gone "$pid"
}

@test "unknown verb and bad options exit 125" {
  run $HAKO frobnicate
  [ "$status" -eq 125 ]
  [[ "$output" == *"unknown verb"* ]]
  run $H create
  [ "$status" -eq 125 ]
  run $H state
  [ "$status" -eq 125 ]
  run $H delete nosuch
  [ "$status" -eq 125 ]
  [[ "$output" == *"does not exist"* ]]
}

@test "run: usage errors exit 125" {
  run $H run --bogus x
  [ "$status" -eq 125 ]
  run $H run
  [ "$status" -eq 125 ]
  run $H run --rm --detach x -- true
  [ "$status" -eq 125 ]
}

@test "a state root the sandbox's user namespace cannot enter: 125 naming the directory and the fix" {
  hidden="$TEST_ROOT/hidden"
  mkdir -m 0700 "$hidden"
  run $HAKO --root "$hidden/state" --data-root "$DATA" run --profile host unreachable -- true
  [ "$status" -eq 125 ]
  [[ "$output" == *"cannot enter $hidden"*"chmod o+x $hidden"* ]]
  [ -z "$(ls -A "$hidden/state" 2>/dev/null)" ]
  rm -rf "$hidden"
}

@test "the host profile works after an image sandbox on a fresh data root; the data root keeps search for all" {
  image_fixtures
  import_busybox
  run $H run --rm --image busybox first -- true
  echo "$output"
  [ "$status" -eq 0 ]
  run $H run --rm second -- sh -c 'echo kept > /work/f && cat /work/f'
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$output" = kept ]
  [ "$(stat -c %a "$DATA")" = 711 ]
  [ "$(stat -c %a "$DATA/sandboxes")" = 711 ]
  [ "$(stat -c %a "$DATA/images")" = 700 ]
  # A data root an older hako made 0700 is given search again (ours only).
  chmod 0700 "$DATA" "$DATA/sandboxes"
  run $H run --rm third -- true
  [ "$status" -eq 0 ]
  [ "$(stat -c %a "$DATA")" = 711 ]
  [ "$(stat -c %a "$DATA/sandboxes")" = 711 ]
}

@test "a data root below a directory the sandbox's user namespace cannot enter: 125 naming it and the uid" {
  hidden="$TEST_ROOT/private"
  mkdir -m 0700 "$hidden"
  run $HAKO --root "$STATE" --data-root "$hidden/data" run --rm hw -- true
  echo "$output"
  [ "$status" -eq 125 ]
  [[ "$output" == *"work dir: $hidden/data/sandboxes/hw/work: the sandbox's root user is host uid "*", which cannot enter $hidden (mode 700"*"chmod o+x $hidden"* ]]
  [ ! -e "$STATE/hw" ]
  [ -z "$(ls -A "$hidden/data/sandboxes")" ]
  rm -rf "$hidden"
}

@test "run in a directory holding an unrelated config.json: the error says it was taken as the bundle, and why" {
  mkdir "$TEST_ROOT/app"
  echo '{"name": "my-app", "version": "1.0.0"}' > "$TEST_ROOT/app/config.json"
  cd "$TEST_ROOT/app"
  run $H run --rm cj -- true
  echo "$output"
  [ "$status" -eq 125 ]
  [[ "$output" == *".ociVersion: required (./config.json was taken as the bundle, because no --bundle, --profile or --image was given; give --profile host"* ]]
  [ ! -e "$STATE/cj" ]
  # A runtime config is a bundle: its own errors, no note.
  jq -n '{ociVersion: "1.0.2", root: {path: "rootfs"}, process: {args: ["true"], cwd: "/"}}' > config.json
  run $H run --rm cj -- true
  echo "$output"
  [ "$status" -eq 125 ]
  [[ "$output" == *"rootfs"* ]]
  [[ "$output" != *"taken as the bundle"* ]]
  [ ! -e "$STATE/cj" ]
  # What to do instead works; create keeps runc's rule without a note.
  run $H run --rm --profile host cj -- echo host
  [ "$status" -eq 0 ]
  [ "$output" = host ]
  run $H create cj
  [ "$status" -eq 125 ]
  [[ "$output" != *"taken as the bundle"* ]]
}
