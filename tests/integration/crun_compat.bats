#!/usr/bin/env bats
# What crun's own test suite drives a runtime with (docs/conformance.md,
# "crun's test suite"), held here by hako's own tests: crun's CLI, sysctl
# checks, HOME, a missing cwd, hook env, delete --regex, preserve-fds gaps.

load helpers
bats_require_minimum_version 1.5.0

setup_file () { hako_setup_file; }
setup () { hako_setup; }
teardown () { hako_teardown; }

@test "crun compat: --cgroup-manager cgroupfs and systemd are accepted, disabled is refused" {
  run $H --cgroup-manager cgroupfs list -q
  [ "$status" -eq 0 ]
  run $H --cgroup-manager systemd list -q
  [ "$status" -eq 0 ]
  run $H --cgroup-manager disabled list -q
  [ "$status" -eq 125 ]
  [[ "$output" == *"--cgroup-manager"*"not cgroupfs or systemd"* ]]
}

@test "crun compat: create/run --config FILE reads FILE (relative to the cwd), the root stays the bundle's" {
  b=$(new_bundle cf)
  mkdir -p "$b/conf"
  jq '.process.args = ["echo", "from-conf"]' "$b/config.json" > "$b/conf/other.json"
  set_args "$b" echo from-bundle
  cd "$b"
  run $H run --config conf/other.json cf1
  [ "$status" -eq 0 ]
  [ "$output" = from-conf ]
  run $H run --config config.json cf2
  [ "$output" = from-bundle ]
  run $H run --config nosuch.json cf3
  [ "$status" -eq 125 ]
  [ ! -e "$STATE/cf3" ]
  $H create --config conf/other.json cf4
  run $H start cf4
  [ "$status" -eq 0 ]
}

@test "crun compat: a sysctl needs its own namespace; kernel.hostname and a conflicting kernel.domainname are refused" {
  b=$(new_bundle sc)
  set_args "$b" cat /proc/sys/kernel/msgmax
  edit_config "$b" '.linux.sysctl = {"kernel.msgmax": "8192"}'
  run $H run --bundle "$b" sc0
  [ "$status" -eq 0 ]
  [ "$output" = 8192 ]
  check () {
    edit_config "$b" "$1"
    run $H run --bundle "$b" "$2"
    [ "$status" -eq 125 ]
    [[ "$output" == *"$3"* ]]
    [ ! -e "$STATE/$2" ]
  }
  check '.linux.namespaces |= map(select(.type != "ipc"))' sc1 'kernel.msgmax": needs its own ipc namespace'
  check '.linux.sysctl = {"fs.mqueue.queues_max": "100"}' sc2 'needs its own ipc namespace'
  check '.linux.sysctl = {"net.ipv4.ip_forward": "1"} | .linux.namespaces |= map(select(.type != "network"))' \
    sc3 'needs its own network namespace'
  check '.linux.sysctl = {"kernel.hostname": "x"}' sc4 'set .hostname instead'
  check '.linux.sysctl = {"kernel.domainname": "a"} | .domainname = "b"' sc5 'conflicts with .domainname'
  check '.linux.sysctl = {"vm.swappiness": "1"} | del(.domainname)' sc6 'not a namespaced sysctl'
  # The host's value is untouched by all of them.
  [ "$(cat /proc/sys/vm/swappiness)" != "" ]
}

@test "crun compat: HOME comes from the sandbox's /etc/passwd when the env has none, else /" {
  b=$(new_bundle hm)
  grep -q '^root:' "$BUNDLE_DIR/rootfs/etc/passwd" || skip "the test rootfs has no root entry in /etc/passwd"
  want=$(awk -F: '$3 == 0 { print $6; exit }' "$BUNDLE_DIR/rootfs/etc/passwd")
  set_args "$b" sh -c 'echo "$HOME"'
  edit_config "$b" '.process.env |= map(select(startswith("HOME=") | not))'
  run $H run --bundle "$b" hm1
  [ "$status" -eq 0 ]
  [ "$output" = "$want" ]
  edit_config "$b" '.process.env += ["HOME=/set"]'
  run $H run --bundle "$b" hm2
  [ "$output" = /set ]
  set_args "$b" sleep 100
  edit_config "$b" '.process.env |= map(select(startswith("HOME=") | not))'
  $H run -d --bundle "$b" hm3
  run $H exec hm3 sh -c 'echo "$HOME"'
  [ "$output" = "$want" ]
  run $H exec --user 4321 hm3 sh -c 'echo "$HOME"'
  [ "$output" = / ]
}

@test "crun compat: a cwd that does not exist is made inside the root" {
  b=$(new_bundle cw)
  rm -rf "$BUNDLE_DIR/rootfs/crun-cwd"
  set_args "$b" pwd
  edit_config "$b" '.process.cwd = "/crun-cwd/a/b"'
  run $H run --bundle "$b" cw1
  rc=$status
  made=$(test -d "$BUNDLE_DIR/rootfs/crun-cwd/a/b" && echo yes || true)
  rm -rf "$BUNDLE_DIR/rootfs/crun-cwd"
  [ "$rc" -eq 0 ]
  [ "$output" = /crun-cwd/a/b ]
  [ "$made" = yes ]
}

@test "crun compat: a hook in hako's namespaces without env inherits hako's; a startContainer hook gets none" {
  b=$(new_bundle hk)
  out=$TEST_ROOT/hook-env
  jq --arg out "$out" '.hooks = {
      "prestart": [{"path": "/bin/sh", "args": ["sh", "-c", ("echo pre=$CRUN_COMPAT_VAR >> " + $out)]}],
      "startContainer": [{"path": "/bin/sh", "args": ["sh", "-c", "echo start=${CRUN_COMPAT_VAR:-none}"]}]}' \
    "$b/config.json" > "$b/c.new" && mv "$b/c.new" "$b/config.json"
  set_args "$b" true
  run env CRUN_COMPAT_VAR=seen $H run --bundle "$b" hk1
  [ "$status" -eq 0 ]
  [ "$(cat "$out")" = pre=seen ]
  [[ "$output" == *"start=none"* ]]
}

@test "crun compat: delete --regex deletes every sandbox whose id matches, and only those" {
  b=$(new_bundle rx)
  set_args "$b" sleep 100
  for id in rx-a rx-b other; do $H run -d --bundle "$b" "$id"; done
  run $H delete --regex '^rx-'
  [ "$status" -eq 125 ]   # running: without --force each is refused
  [ -e "$STATE/rx-a" ]
  $H delete --force --regex '^rx-'
  [ ! -e "$STATE/rx-a" ]
  [ ! -e "$STATE/rx-b" ]
  [ -e "$STATE/other" ]
  run $H delete --regex '('
  [ "$status" -eq 125 ]
  [[ "$output" == *"not a valid extended regular expression"* ]]
}

@test "crun compat: --preserve-fds with a gap: the open fds reach the process, the gap is /dev/null" {
  b=$(new_bundle pf)
  echo passed > "$TEST_ROOT/a"
  set_args "$b" sh -c 'cat <&5; readlink /proc/self/fd/3; readlink /proc/self/fd/4'
  run $H run --preserve-fds 3 --bundle "$b" pf1 3>&- 4>&- 5<"$TEST_ROOT/a"
  [ "$status" -eq 0 ]
  [ "$output" = "$(printf 'passed\n/dev/null\n/dev/null')" ]
}

@test "crun compat: a seccomp listenerPath is refused, not ignored" {
  b=$(new_bundle sl)
  edit_config "$b" '.linux.seccomp = {"defaultAction": "SCMP_ACT_ALLOW", "listenerPath": "/tmp/nosuch.sock"}'
  run $H run --bundle "$b" sl1
  [ "$status" -eq 125 ]
  [[ "$output" == *"listenerPath"*"not supported"* ]]
  [ ! -e "$STATE/sl1" ]
}

@test "crun compat: LISTEN_FDS in hako's environment (socket activation) passes its fds on, with LISTEN_FDS and LISTEN_PID=1" {
  b=$(new_bundle lf)
  echo activated > "$TEST_ROOT/a"
  set_args "$b" sh -c 'echo "$LISTEN_FDS $LISTEN_PID"; cat <&3'
  run env LISTEN_FDS=1 $H run --bundle "$b" lf1 3<"$TEST_ROOT/a"
  [ "$status" -eq 0 ]
  [ "$output" = "$(printf '1 1\nactivated')" ]
  # Meant for another process (LISTEN_PID not hako's): ignored.
  set_args "$b" sh -c 'echo "${LISTEN_FDS:-unset}"'
  run env LISTEN_FDS=1 LISTEN_PID=1 $H run --bundle "$b" lf2 3<"$TEST_ROOT/a"
  [ "$output" = unset ]
}

@test "crun compat: a linux.devices node the host lacks and the rules deny is made where the spec says, and cannot be opened" {
  # crun's test_mknod_device: nodes outside /dev, one in a directory that
  # does not exist.  hako gives such a node mknod alone in the device
  # cgroup; the attack — the sandbox's root reading the block device the
  # spec lists but no rule allows — fails with EPERM.
  b=$(new_bundle mk)
  edit_config "$b" '.linux.devices = [{"path": "/foo-dev", "type": "b", "major": 10, "minor": 229},
    {"path": "/subdir/foo-dev", "type": "b", "major": 10, "minor": 229}]
    | .process.capabilities.bounding += ["CAP_DAC_OVERRIDE", "CAP_MKNOD"]
    | .process.capabilities.effective += ["CAP_DAC_OVERRIDE", "CAP_MKNOD"]
    | .process.capabilities.permitted += ["CAP_DAC_OVERRIDE", "CAP_MKNOD"]'
  set_args "$b" sh -c 'stat -c "%F %t:%T" /foo-dev /subdir/foo-dev; head -c 1 /foo-dev; echo "head: $?"'
  run $H run --rm --bundle "$b" mk1
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$(grep -c '^block special file a:e5$' <<< "$output")" -eq 2 ]
  [[ "$output" == *"Operation not permitted"* ]]
  [[ "$output" == *"head: 1"* ]]
}
