#!/usr/bin/env bats
# Mount namespaces that are not a new one of the sandbox's own: one joined
# by path (made here with unshare), and none at all (the host's, inherited).

load helpers
bats_require_minimum_version 1.5.0

setup_file () { hako_setup_file; }
setup () { hako_setup; NS_PID=; NS_CHILD=; }
teardown () {
  # The test's own namespace: unshare and the sleep that keeps it.
  [ -n "$NS_CHILD" ] && kill -9 "$NS_CHILD" 2>/dev/null
  [ -n "$NS_PID" ] && kill -9 "$NS_PID" 2>/dev/null
  [ -n "$NS_PID" ] && wait "$NS_PID" 2>/dev/null
  hako_teardown
}

# A new mount namespace held by `unshare --fork sleep`: NS_PID is unshare,
# in the namespace once it has unshared, NS_CHILD the sleep.
start_mntns () {
  unshare --mount --fork --kill-child sleep 1000 3>&- &
  NS_PID=$!
  local i
  for i in $(seq 50); do
    # `|| true`: before unshare has forked, pgrep finds nothing and exits 1,
    # which errexit took for the test failing (seen in CI under load).
    NS_CHILD=$(pgrep -P "$NS_PID" || true)
    if [ -n "$NS_CHILD" ] && [ "$(readlink /proc/$NS_PID/ns/mnt)" != "$(readlink /proc/self/ns/mnt)" ]; then
      return 0
    fi
    sleep 0.1
  done
  echo "unshare never made its mount namespace" >&2
  return 1
}

# mount_path BUNDLE PATH: the bundle's mount namespace entry joins PATH.
mount_path () {
  jq --arg p "$2" '.linux.namespaces |= map(if .type == "mount" then .path = $p else . end)' \
    "$1/config.json" > "$1/config.json.new" && mv "$1/config.json.new" "$1/config.json"
}

@test "mount namespace by path: the sandbox runs in it" {
  start_mntns
  local b
  b=$(new_bundle joined)
  mount_path "$b" "/proc/$NS_PID/ns/mnt"
  set_args "$b" readlink /proc/self/ns/mnt
  run $H run --rm --bundle "$b" j1
  [ "$status" -eq 0 ]
  [ "$output" = "$(readlink /proc/$NS_PID/ns/mnt)" ]
  [ "$output" != "$(readlink /proc/self/ns/mnt)" ]
}

@test "mount namespace by path: exec enters it, at the sandbox's root" {
  start_mntns
  local b
  b=$(new_bundle joined)
  mount_path "$b" "/proc/$NS_CHILD/ns/mnt"
  set_args "$b" sleep 1000
  $H create --bundle "$b" j2
  $H start j2
  run $H exec j2 -- readlink /proc/self/ns/mnt
  [ "$status" -eq 0 ]
  [ "$output" = "$(readlink /proc/$NS_PID/ns/mnt)" ]
  run $H exec j2 -- sh -c 'ls /bin/busybox && cat /proc/1/cmdline | tr "\0" " "'
  [ "$status" -eq 0 ]
  [[ "$output" == *"/bin/busybox"*"sleep 1000"* ]]
  $H delete --force j2
}

@test "mount namespace by path: hako's own or the host's is refused with 125" {
  local b
  b=$(new_bundle own)
  set_args "$b" true
  mount_path "$b" /proc/self/ns/mnt
  run $H run --bundle "$b" own1
  [ "$status" -eq 125 ]
  [[ "$output" == *"mount namespace /proc/self/ns/mnt is the host's"*"pivot_root"* ]]
  mount_path "$b" "/proc/$$/ns/mnt"
  run $H create --bundle "$b" own2
  [ "$status" -eq 125 ]
  [[ "$output" == *"mount namespace /proc/$$/ns/mnt is the host's"* ]]
  [ -z "$(ls -A "$STATE")" ]
  if readlink /proc/1/ns/mnt >/dev/null 2>&1; then
    mount_path "$b" /proc/1/ns/mnt
    run $H run --bundle "$b" own3
    [ "$status" -eq 125 ]
    [[ "$output" == *"is the host's"* ]]
  fi
}

@test "mount namespace by path: a path that is no mount namespace fails create cleanly" {
  local b
  b=$(new_bundle bad)
  set_args "$b" true
  mount_path "$b" "/proc/$$/ns/net"
  run $H run --bundle "$b" bad1
  [ "$status" -eq 125 ]
  [[ "$output" == *"mount namespace /proc/$$/ns/net"* ]]
  mount_path "$b" "$TEST_ROOT/missing"
  run $H run --bundle "$b" bad2
  [ "$status" -eq 125 ]
  [[ "$output" == *"$TEST_ROOT/missing"* ]]
  [ -z "$(ls -A "$STATE")" ]
}

# no_mount_ns BUNDLE: drop the bundle's mount namespace entry.
no_mount_ns () {
  edit_config "$1" '.linux.namespaces |= map(select(.type != "mount"))'
}

# Mounts of this test's state root or of the shared bundle, in hako's (the
# host's) mount namespace.
host_mounts () {
  awk -v s="$TEST_ROOT" -v b="$BUNDLE_DIR" 'index($5, s) == 1 || index($5, b) == 1 { print $5 }' \
    /proc/self/mountinfo
}

@test "no mount namespace: the host's is inherited, with the bundle's root and /proc" {
  local b
  b=$(new_bundle hostns)
  no_mount_ns "$b"
  set_args "$b" sh -c 'readlink /proc/self/ns/mnt; ls /bin/busybox; cat /proc/1/comm; ls /etc/os-release 2>&1; true'
  run $H run --bundle "$b" h1
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = "$(readlink /proc/self/ns/mnt)" ]
  [ "${lines[1]}" = /bin/busybox ]
  [ "${lines[2]}" = sh ]
  [[ "${lines[3]}" == *"No such file"* ]]  # the host's /etc is not in reach
  # Its process exited: the tree stays, under its state dir only, until
  # stop or delete; the bundle never has anything mounted on it.
  [ -z "$(host_mounts | grep -v "^$STATE/h1/tree/root")" ]
  $H stop h1
  [ -z "$(host_mounts)" ]
  $H delete h1
  [ -z "$(host_mounts)" ]
}

@test "no namespaces at all: every namespace is the host's, nothing stays mounted" {
  local b ns
  b=$(new_bundle nons)
  edit_config "$b" '.linux.namespaces = [] | del(.hostname)'
  set_args "$b" sleep 1000
  $H create --bundle "$b" h2
  # While it is created, its tree is mounted under its state dir only.
  [ -n "$(host_mounts)" ]
  [ -z "$(host_mounts | grep -v "^$STATE/h2/tree/root")" ]
  $H start h2
  local pid
  pid=$($H state h2 | jq -r .pid)
  for ns in mnt pid net ipc uts cgroup; do
    [ "$(readlink /proc/$pid/ns/$ns)" = "$(readlink /proc/self/ns/$ns)" ]
  done
  [ "$(stat -L -c %d:%i /proc/$pid/root)" = "$(stat -c %d:%i "$STATE/h2/tree/root")" ]
  # Host users cannot walk into the tree (its tmpfs mounts are the sandbox's).
  [ "$(stat -c %a "$STATE/h2/tree")" = 700 ]
  run setpriv --reuid 65534 --regid 65534 --clear-groups ls "$STATE/h2/tree/root/dev"
  [ "$status" -ne 0 ]
  [[ "$output" == *"ermission denied"* ]]
  $H delete --force h2
  [ -z "$(host_mounts)" ]
  pid_gone "$pid"
}

@test "no mount namespace: exec chroots into the sandbox's root, a cwd outside it is refused" {
  local b
  b=$(new_bundle hexec)
  edit_config "$b" '.linux.namespaces = [] | del(.hostname)'
  set_args "$b" sleep 1000
  $H create --bundle "$b" h3
  $H start h3
  run $H exec h3 -- sh -c 'readlink /proc/self/ns/mnt; ls /bin/busybox; ls /etc/os-release 2>&1; true'
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = "$(readlink /proc/self/ns/mnt)" ]
  [ "${lines[1]}" = /bin/busybox ]
  [[ "${lines[2]}" == *"No such file"* ]]
  # Without a pid namespace /proc/PID/root of a host process is the host's
  # root: exec does not start a command there (CVE-2024-21626 class).
  run $H exec --cwd /proc/$$/root h3 -- ls
  [ "$status" -eq 125 ]
  [[ "$output" == *"cwd /proc/$$/root"* ]]
  echo put-get | $H put h3 /dev/shm/f
  [ "$($H get h3 /dev/shm/f)" = put-get ]
  $H delete --force h3
  [ -z "$(host_mounts)" ]
}

@test "no mount namespace: stop detaches the tree, start builds it again" {
  local b
  b=$(new_bundle hstop)
  no_mount_ns "$b"
  set_args "$b" sleep 1000
  $H create --bundle "$b" h4
  $H start h4
  $H stop --time 1s h4
  [ -z "$(host_mounts)" ]
  [ ! -e "$STATE/h4/tree" ]
  $H start h4
  wait_status h4 running
  run $H exec h4 -- ls /bin/busybox
  [ "$status" -eq 0 ]
  [ -n "$(host_mounts)" ]
  $H delete --force h4
  [ -z "$(host_mounts)" ]
}

@test "no mount namespace: kill -9 of create at each point, then delete --force: nothing left" {
  local b point i
  b=$(new_bundle hcrash)
  no_mount_ns "$b"
  for point in after-mkdir after-cgroups after-go after-clone after-ready; do
    HAKO_TEST_STALL=$point $H create --bundle "$b" hcrash & creator=$!
    for i in $(seq 50); do [ -e "$STATE/hcrash/stalled" ] && break; sleep 0.1; done
    [ -e "$STATE/hcrash/stalled" ]
    kill -9 $creator
    wait $creator || true
    $H delete --force hcrash
    [ -z "$(host_mounts)" ]
    [ -z "$(leak_report)" ]
  done
}

@test "no mount namespace: a failed create leaves no mount" {
  local b
  b=$(new_bundle hfail)
  no_mount_ns "$b"
  set_args "$b" /no/such/command
  run -127 $H run --bundle "$b" h5
  [ -z "$(host_mounts)" ]
  [ -z "$(ls -A "$STATE")" ]
}

@test "no mount namespace: what needs one is refused with 125" {
  local b
  b=$(new_bundle hrefuse)
  no_mount_ns "$b"
  set_args "$b" true
  edit_config "$b" '.linux.namespaces += [{"type": "user"}]
    | .linux.uidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]
    | .linux.gidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]'
  run $H run --bundle "$b" h6
  [ "$status" -eq 125 ]
  [[ "$output" == *"a user namespace needs a mount namespace of the sandbox's own"* ]]
  b=$(new_bundle hrefuse2)
  no_mount_ns "$b"
  edit_config "$b" '.linux.rootfsPropagation = "shared"'
  run $H run --bundle "$b" h7
  [ "$status" -eq 125 ]
  [[ "$output" == *"rootfsPropagation"* ]]
  [ -z "$(ls -A "$STATE")" ]
  [ -z "$(host_mounts)" ]
}

@test "no mount namespace: createContainer and startContainer hooks run in the sandbox's root" {
  local b tag=hk$$
  b=$(new_bundle hhooks)
  no_mount_ns "$b"
  set_args "$b" sleep 1000
  printf '#!/bin/sh\nls /bin/busybox > /dev/shm/%s.cc\n' "$tag" > "$TEST_ROOT/cc-hook"
  chmod 755 "$TEST_ROOT/cc-hook"
  edit_config "$b" ".hooks = {
    \"createContainer\": [{\"path\": \"$TEST_ROOT/cc-hook\"}],
    \"startContainer\": [{\"path\": \"/bin/sh\", \"args\": [\"sh\", \"-c\", \"ls /bin/busybox > /dev/shm/$tag.sc\"]}]}"
  $H create --bundle "$b" h8
  $H start h8
  [ "$($H exec h8 cat /dev/shm/$tag.cc)" = /bin/busybox ]
  [ "$($H exec h8 cat /dev/shm/$tag.sc)" = /bin/busybox ]
  [ ! -e "/dev/shm/$tag.cc" ]
  [ ! -e "/dev/shm/$tag.sc" ]
  $H delete --force h8
  [ -z "$(host_mounts)" ]
}
