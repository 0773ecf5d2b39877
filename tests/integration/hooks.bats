#!/usr/bin/env bats
# OCI hooks (config.json .hooks): when each kind runs, where, with the state
# on stdin; failures of the create/start ones fail the verb and leave
# nothing, failures of poststart/poststop are only warnings.

load helpers
bats_require_minimum_version 1.5.0

setup_file () { hako_setup_file; }
setup () { hako_setup; }
teardown () { hako_teardown; }

# host_hook NAME: a hook run in hako's namespaces that records its kind and
# its stdin under TEST_ROOT.
host_hook () {
  local f="$TEST_ROOT/hook-$1"
  printf '#!/bin/sh\necho %s >> %s/order\ncat > %s/%s.json\n' "$1" "$TEST_ROOT" "$TEST_ROOT" "$1" > "$f"
  chmod 755 "$f"
  echo "$f"
}

# sandbox_hook NAME: a hook run in the sandbox's namespaces: it can only
# write inside the sandbox, to /tmp.
sandbox_hook () {
  local f="$TEST_ROOT/hook-$1"
  printf '#!/bin/sh\ncat > /tmp/%s.json\nreadlink /proc/self/ns/mnt > /tmp/%s.mnt\n' "$1" "$1" > "$f"
  chmod 755 "$f"
  echo "$f"
}

@test "hooks: every kind runs, in order, with the state on stdin" {
  b=$(new_bundle hk)
  set_args "$b" sleep 30
  edit_config "$b" ".hooks = {
    \"prestart\": [{\"path\": \"$(host_hook prestart)\"}],
    \"createRuntime\": [{\"path\": \"$(host_hook createRuntime)\"}],
    \"createContainer\": [{\"path\": \"$(sandbox_hook createContainer)\"}],
    \"startContainer\": [{\"path\": \"/bin/sh\", \"args\": [\"sh\", \"-c\", \"cat > /tmp/startContainer.json\"]}],
    \"poststart\": [{\"path\": \"$(host_hook poststart)\"}],
    \"poststop\": [{\"path\": \"$(host_hook poststop)\", \"args\": [\"poststop\", \"x\"], \"env\": [\"A=1\"]}]}"
  # startContainer's path is looked up in the sandbox (its /bin/sh).
  edit_config "$b" '.root.readonly = false | .mounts += [{"destination": "/tmp", "type": "tmpfs", "source": "tmpfs"}]'
  $H create --bundle "$b" hk
  pid=$($H state hk | jq -r .pid)
  [ "$(cat "$TEST_ROOT/order")" = "$(printf 'prestart\ncreateRuntime')" ]
  [ "$(jq -r .id "$TEST_ROOT/createRuntime.json")" = hk ]
  [ "$(jq -r .pid "$TEST_ROOT/createRuntime.json")" = "$pid" ]
  [ "$(jq -r .status "$TEST_ROOT/prestart.json")" = created ]
  $H start hk
  # createContainer ran in the sandbox's mount namespace.
  [ "$($H exec hk cat /tmp/createContainer.mnt)" = "$(readlink /proc/$pid/ns/mnt)" ]
  [ "$($H exec hk cat /tmp/createContainer.json | jq -r .id)" = hk ]
  [ "$($H exec hk cat /tmp/startContainer.json | jq -r .status)" = created ]
  [ "$(cat "$TEST_ROOT/order")" = "$(printf 'prestart\ncreateRuntime\npoststart')" ]
  [ "$(jq -r .status "$TEST_ROOT/poststart.json")" = running ]
  $H delete --force hk
  [ "$(tail -n1 "$TEST_ROOT/order")" = poststop ]
  [ "$(jq -r .status "$TEST_ROOT/poststop.json")" = stopped ]
  [ "$(jq -r .id "$TEST_ROOT/poststop.json")" = hk ]
}

@test "hooks: a failing createRuntime hook fails create, naming it, and leaves nothing" {
  b=$(new_bundle hkf)
  printf '#!/bin/sh\nexit 3\n' > "$TEST_ROOT/fail"
  chmod 755 "$TEST_ROOT/fail"
  edit_config "$b" ".hooks = {\"createRuntime\": [{\"path\": \"$TEST_ROOT/fail\"}],
                              \"createContainer\": [{\"path\": \"$(host_hook never)\"}]}"
  run $H create --bundle "$b" hkf
  [ "$status" -eq 125 ]
  [[ "$output" == *"createRuntime hook $TEST_ROOT/fail: exited with status 3"* ]]
  [ ! -e "$STATE/hkf" ]
  [ ! -e "$TEST_ROOT/never.json" ]
}

@test "hooks: a hook past its timeout is killed and fails create" {
  b=$(new_bundle hkt)
  printf '#!/bin/sh\necho $$ > %s/slow.pid\nexec sleep 30\n' "$TEST_ROOT" > "$TEST_ROOT/slow"
  chmod 755 "$TEST_ROOT/slow"
  edit_config "$b" ".hooks = {\"prestart\": [{\"path\": \"$TEST_ROOT/slow\", \"timeout\": 1}]}"
  SECONDS=0
  run $H create --bundle "$b" hkt
  [ "$status" -eq 125 ]
  [[ "$output" == *"prestart hook $TEST_ROOT/slow: killed after its timeout of 1 s"* ]]
  [ "$SECONDS" -lt 10 ]
  pid_gone "$(cat "$TEST_ROOT/slow.pid")"
  [ ! -e "$STATE/hkt" ]
}

@test "hooks: a failing poststart or poststop hook is a warning only; run --rm runs poststop" {
  b=$(new_bundle hkw)
  set_args "$b" true
  edit_config "$b" ".hooks = {\"poststart\": [{\"path\": \"/nonexistent/hook\"}],
                              \"poststop\": [{\"path\": \"/bin/false\"}, {\"path\": \"$(host_hook poststop)\"}]}"
  run $H run --rm --bundle "$b" hkw
  [ "$status" -eq 0 ]
  [[ "$output" == *"poststart hook /nonexistent/hook"* ]]
  [[ "$output" == *"poststop hook /bin/false: exited with status 1"* ]]
  [ "$(jq -r .id "$TEST_ROOT/poststop.json")" = hkw ]
  [ ! -e "$STATE/hkw" ]
}

@test "hooks: a failing startContainer hook fails start and stops the sandbox" {
  b=$(new_bundle hks)
  set_args "$b" sleep 30
  edit_config "$b" '.hooks = {"startContainer": [{"path": "/bin/sh", "args": ["sh", "-c", "exit 4"]}]}'
  $H create --bundle "$b" hks
  run $H start hks
  [ "$status" -eq 125 ]
  [[ "$output" == *"startContainer hook /bin/sh: exited with status 4"* ]]
  wait_status hks stopped
  $H delete hks
}

@test "hooks: createContainer in a user namespace runs as the sandbox's root" {
  b="$TEST_ROOT/un"
  mkdir -p "$b"
  cp -a "$BUNDLE_DIR/rootfs" "$b/rootfs"
  $HAKO spec --bundle "$b"
  set_args "$b" sleep 30
  printf '#!/bin/sh\nid -u > /tmp/cc.id\ncat > /tmp/cc.json\n' > "$TEST_ROOT/cc"
  chmod 755 "$TEST_ROOT/cc"
  edit_config "$b" ".hooks = {\"createContainer\": [{\"path\": \"$TEST_ROOT/cc\"}]}
    | .mounts += [{\"destination\": \"/tmp\", \"type\": \"tmpfs\", \"source\": \"tmpfs\"}]"
  jq -e '.linux.namespaces | map(.type) | index("user") != null' "$b/config.json"
  $H create --bundle "$b" un
  $H start un
  [ "$($H exec un cat /tmp/cc.id)" = 0 ]
  [ "$($H exec un cat /tmp/cc.json | jq -r .id)" = un ]
  $H delete --force un
}

@test "hooks: prestart and createRuntime see the sandbox's process already in its cgroups (a device hook writes there)" {
  b=$(new_bundle hc)
  set_args "$b" sleep 30
  # Each hook copies the process's /proc/PID/cgroup (the pid from its state).
  for k in prestart createRuntime; do
    printf '#!/bin/sh\ncat /proc/$(jq -r .pid)/cgroup > %s/%s.cgroup\n' "$TEST_ROOT" "$k" > "$TEST_ROOT/hook-$k"
    chmod 755 "$TEST_ROOT/hook-$k"
  done
  edit_config "$b" ".hooks = {\"prestart\": [{\"path\": \"$TEST_ROOT/hook-prestart\"}],
    \"createRuntime\": [{\"path\": \"$TEST_ROOT/hook-createRuntime\"}]}"
  $H create --bundle "$b" hc
  pid=$($H state hc | jq -r .pid)
  cat "$TEST_ROOT/prestart.cgroup"
  # Every hierarchy as the process has it for good: memory and pids are
  # hako's own cgroups for it (hako-HASH/hc), in the v1 hierarchies too.
  grep -q ":memory:/.*/hc$" "$TEST_ROOT/prestart.cgroup" || grep -q "^0::/.*/hc$" "$TEST_ROOT/prestart.cgroup"
  diff "$TEST_ROOT/prestart.cgroup" /proc/"$pid"/cgroup
  diff "$TEST_ROOT/createRuntime.cgroup" /proc/"$pid"/cgroup
  $H delete --force hc
}

@test "hooks: a poststop hook whose key is spelled with a \\u escape still runs at delete" {
  b=$(new_bundle hu)
  set_args "$b" true
  printf '#!/bin/sh\necho ran > %s/poststop.ran\n' "$TEST_ROOT" > "$TEST_ROOT/hook-pu"
  chmod 755 "$TEST_ROOT/hook-pu"
  # delete reads config.json's text for "hooks" before it parses it: the
  # same key written \u0068ooks is still the hooks.
  python3 -c 'import json, sys
c = json.load(open(sys.argv[1]))
t = json.dumps(c)[:-1] + ", \"\\u0068ooks\": {\"poststop\": [{\"path\": \"%s\"}]}}" % sys.argv[2]
open(sys.argv[1], "w").write(t)' "$b/config.json" "$TEST_ROOT/hook-pu"
  run ! grep -q '"hooks"' "$b/config.json"
  $H run --rm --bundle "$b" hu
  [ "$(cat "$TEST_ROOT/poststop.ran")" = ran ]
}
