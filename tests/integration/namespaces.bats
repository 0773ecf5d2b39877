#!/usr/bin/env bats
# Mount namespaces that are not a new one of the sandbox's own: one joined
# by path (made here with unshare), and none at all (the host's, inherited).

load helpers

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
    NS_CHILD=$(pgrep -P "$NS_PID")
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
