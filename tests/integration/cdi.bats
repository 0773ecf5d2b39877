#!/usr/bin/env bats
# Devices through CDI (oci/cdi.c) without a GPU: a fake vendor whose spec,
# written here, names device nodes made from host nodes' numbers, a fake
# "driver" directory to mount, env and a hook; then GPU admission with
# slots in node.json (runtime/node/admission.c).

load helpers
bats_require_minimum_version 1.5.0

setup_file () {
  hako_setup_file
  image_fixtures
}

setup () {
  hako_setup
  [ "$(id -u)" = 0 ] || skip "needs root (mknod of the fake vendor's nodes)"
  [ -c /dev/fuse ] || skip "no /dev/fuse: the fake GPU borrows its numbers (10:229, not in hako's /dev)"
  CDI="$TEST_ROOT/cdi"
  FAKE="$TEST_ROOT/fake"
  mkdir -p "$CDI" "$FAKE/nodes" "$FAKE/driver/devs"
  # The fake GPUs: /dev/fuse's numbers (open works, nothing is mounted) and
  # /dev/null's.  An unlisted node, /dev/kmsg's numbers, sits in the
  # driver dir, which is bound without nodev: only the device rules stop it.
  mknod -m 666 "$FAKE/nodes/gpu0" c 10 229
  mknod -m 666 "$FAKE/nodes/gpu1" c 1 3
  mknod -m 666 "$FAKE/driver/devs/unlisted" c 1 11
  echo "fake driver 1.0" > "$FAKE/driver/libfake.so"
  cat > "$FAKE/hook.sh" <<EOF
#!/bin/sh
# createRuntime: the state on stdin; note its id on the host.
jq -r .id >> "$FAKE/hook.log"
EOF
  chmod 755 "$FAKE/hook.sh"
  cat > "$CDI/fake.yaml" <<EOF
cdiVersion: 0.6.0
kind: example.com/fakegpu
containerEdits:
  env: [FAKE_VENDOR=1]
  mounts:
  - hostPath: $FAKE/driver
    containerPath: /opt/fake-driver
    options: [ro, nosuid, bind]
  hooks:
  - hookName: createRuntime
    path: $FAKE/hook.sh
devices:
- name: gpu0
  containerEdits:
    env: [FAKE_GPU=0]
    deviceNodes:
    - path: /dev/fakegpu0
      hostPath: $FAKE/nodes/gpu0
- name: gpu1
  containerEdits:
    env: [FAKE_GPU=1]
    deviceNodes:
    - path: /dev/fakegpu1
      hostPath: $FAKE/nodes/gpu1
      permissions: rw
EOF
  H="$H --cdi-spec-dir $CDI"
}

teardown () { hako_teardown; }

# sh_args BUNDLE SCRIPT: process.args = sh -c SCRIPT (set_args splits lines).
sh_args () {
  jq --arg s "$2" '.process.args = ["sh", "-c", $s]' "$1/config.json" > "$1/config.json.new"
  mv "$1/config.json.new" "$1/config.json"
}

# What a sandbox sees of the fake vendor: nodes, env, driver, the unlisted node.
probe='for n in /dev/fakegpu0 /dev/fakegpu1; do
  if [ -c $n ]; then echo "node $n $(stat -c %t:%T $n)"; (exec 3<>$n) && echo "open $n"; fi
done
echo "env ${FAKE_VENDOR:-} ${FAKE_GPU:-}"
cat /opt/fake-driver/libfake.so
(exec 4</opt/fake-driver/devs/unlisted) 2>&1 | sed "s/.*: /unlisted: /"
touch /opt/fake-driver/x 2>/dev/null || echo "driver read-only"'

@test "cdi: host profile gets exactly the device asked for, the driver mount, env and hook" {
  run -0 $H run --rm --profile host --device example.com/fakegpu=gpu0 g0 -- sh -c "$probe"
  echo "$output"
  [[ "$output" == *"node /dev/fakegpu0 a:e5"* ]]
  [[ "$output" == *"open /dev/fakegpu0"* ]]
  [[ "$output" != *"/dev/fakegpu1"* ]]
  [[ "$output" == *"env 1 0"* ]]
  [[ "$output" == *"fake driver 1.0"* ]]
  [[ "$output" == *"unlisted: Operation not permitted"* ]]
  [[ "$output" == *"driver read-only"* ]]
  [ "$(cat "$FAKE/hook.log")" = g0 ]
}

@test "cdi: a bundle sandbox (mknod, no user namespace) gets the node and the rules" {
  b=$(new_bundle b)
  sh_args "$b" "$probe"
  run $H run --rm --bundle "$b" --device example.com/fakegpu=gpu0 b0
  echo "$output"
  [ "$status" = 0 ]
  [[ "$output" == *"node /dev/fakegpu0 a:e5"* ]]
  [[ "$output" == *"open /dev/fakegpu0"* ]]
  [[ "$output" == *"unlisted: Operation not permitted"* ]]
}

@test "cdi: an image sandbox gets the device, the driver mount and the rules" {
  import_busybox
  run $H run --rm --image busybox --device example.com/fakegpu=gpu0 im -- sh -c "$probe"
  echo "$output"
  [ "$status" = 0 ]
  [[ "$output" == *"node /dev/fakegpu0 a:e5"* ]]
  [[ "$output" == *"fake driver 1.0"* ]]
  [[ "$output" == *"env 1 0"* ]]
  [[ "$output" == *"unlisted: Operation not permitted"* ]]
}

@test "cdi: =all, JSON specs, sandbox.devices and the cdi.k8s.io annotations" {
  run -0 $H run --rm --profile host --device example.com/fakegpu=all all -- sh -c "$probe"
  [[ "$output" == *"open /dev/fakegpu0"* ]]
  [[ "$output" == *"node /dev/fakegpu1 1:3"* ]]
  # The same vendor as JSON in a second directory, which wins over the first.
  mkdir "$TEST_ROOT/cdi2"
  yq_json='{"cdiVersion":"0.8.0","kind":"example.com/fakegpu","devices":[{"name":"gpu1","containerEdits":{"env":["FAKE_GPU=json"],"deviceNodes":[{"path":"/dev/fakegpu1","type":"c","major":1,"minor":3}]}}]}'
  echo "$yq_json" > "$TEST_ROOT/cdi2/fake.json"
  b=$(new_bundle a)
  set_args "$b" sh -c 'echo "gpu=$FAKE_GPU"; ls /dev/fakegpu1'
  edit_config "$b" '.sandbox.devices = ["example.com/fakegpu=gpu1"]'
  run -0 $H --cdi-spec-dir "$TEST_ROOT/cdi2" run --rm --bundle "$b" sd
  [[ "$output" == *"gpu=json"* ]]
  edit_config "$b" 'del(.sandbox.devices) | .annotations["cdi.k8s.io/fake-plugin"] = "example.com/fakegpu=gpu0"'
  set_args "$b" sh -c 'echo "gpu=$FAKE_GPU"; ls /dev/fakegpu0'
  run -0 $H run --rm --bundle "$b" ann
  [[ "$output" == *"gpu=0"* ]]
}

@test "cdi: the frozen config says what was applied, and a restart applies nothing twice" {
  $H create --profile host --device example.com/fakegpu=gpu0 fz </dev/null >/dev/null 2>&1
  cfg="$STATE/fz/config.json"
  [ "$(jq -r '.sandbox.cdi_devices[0]' "$cfg")" = example.com/fakegpu=gpu0 ]
  [ "$(jq '[.linux.devices[] | select(.path == "/dev/fakegpu0")] | length' "$cfg")" = 1 ]
  [ "$(jq -c '[.linux.resources.devices[] | select(.major == 10)][0]' "$cfg")" = '{"allow":true,"type":"c","major":10,"minor":229,"access":"rwm"}' ]
  $H start fz
  $H stop fz
  $H start fz
  [ "$(jq '[.linux.devices[] | select(.path == "/dev/fakegpu0")] | length' "$cfg")" = 1 ]
  [ "$(jq '[.mounts[] | select(.destination == "/opt/fake-driver")] | length' "$cfg")" = 1 ]
}

@test "cdi: a raw host node (--device /dev/fuse) is mirrored" {
  # The host profile's root is an unprivileged host uid: /dev/fuse (0600
  # root) is bound as it is, but not its to open; the bundle's root is root.
  run -0 --separate-stderr $H run --rm --profile host --device /dev/fuse raw -- stat -c %t:%T /dev/fuse
  [ "$output" = a:e5 ]
  b=$(new_bundle raw)
  sh_args "$b" 'stat -c %t:%T /dev/fuse; (exec 3<>/dev/fuse) && echo opened'
  run -0 $H run --rm --bundle "$b" --device /dev/fuse raw
  [[ "$output" == *"a:e5"* ]]
  [[ "$output" == *"opened"* ]]
}

@test "cdi: unknown, ambiguous and invalid: exit 125, a clear kind, nothing made" {
  run -125 $H --log-format json run --profile host --device example.com/fakegpu=gpu9 u -- true
  [ "$(echo "$output" | jq -r .kind)" = not_found ]
  [[ "$output" == *"example.com/fakegpu=gpu9"* ]]
  [ ! -e "$STATE/u" ]
  cp "$CDI/fake.yaml" "$CDI/fake-copy.yml"
  run -125 $H --log-format json run --profile host --device example.com/fakegpu=gpu0 a -- true
  [ "$(echo "$output" | jq -r .kind)" = invalid_config ]
  [[ "$output" == *ambiguous* ]]
  rm "$CDI/fake-copy.yml"
  echo '{"cdiVersion":"0.9.0","kind":"x.com/y","devices":[]}' > "$CDI/broken.json"
  run -125 $H --log-format json run --profile host --device example.com/fakegpu=gpu0 i -- true
  [ "$(echo "$output" | jq -r .kind)" = invalid_config ]
  [[ "$output" == *"broken.json"*"cdiVersion"* ]]
  rm "$CDI/broken.json"
  run -125 $H run --profile host --device 'not a name' n -- true
  [[ "$output" == *"not a CDI name"* ]]
  run -125 $H run --profile host --device /dev/hako-no-such-node n -- true
  [ -z "$(ls "$STATE" 2>/dev/null)" ]
}

# as_nobody CMD...: CMD as an unprivileged host user (the attacker).
as_nobody () { setpriv --reuid 65534 --regid 65534 --clear-groups "$@"; }

# evil_spec FILE: a spec whose createRuntime hook marks $TEST_ROOT/pwned
# (it would run as host root).
evil_spec () {
  cat > "$1" <<EOF
{"cdiVersion": "0.6.0", "kind": "example.com/evil",
 "devices": [{"name": "x", "containerEdits": {"env": ["EVIL=1"],
   "hooks": [{"hookName": "createRuntime", "path": "/bin/sh",
              "args": ["sh", "-c", "touch $TEST_ROOT/pwned"]}]}}]}
EOF
}

@test "cdi: a spec another user dropped in a world-writable dir is refused, naming the dir; its hook never runs" {
  chmod 1777 "$CDI"
  as_nobody bash -c "$(declare -f evil_spec); TEST_ROOT=$TEST_ROOT evil_spec $CDI/evil.json"
  [ "$(stat -c %u "$CDI/evil.json")" = 65534 ]
  run -125 $H --log-format json run --rm --profile host --device example.com/evil=x e -- true
  echo "$output"
  [ "$(echo "$output" | jq -r .kind)" = permission ]
  [[ "$output" == *"CDI spec dir $CDI: $CDI is writable by every user (mode 1777)"* ]]
  [ ! -e "$TEST_ROOT/pwned" ]
  [ -z "$(ls "$STATE" 2>/dev/null)" ]
}

@test "cdi: a spec file owned by another user, or writable by its group, is refused, naming the file" {
  evil_spec "$CDI/evil.json"
  chown 65534 "$CDI/evil.json"
  run -125 $H run --rm --profile host --device example.com/evil=x e -- true
  echo "$output"
  [[ "$output" == *"$CDI/evil.json is owned by uid 65534, not root"* ]]
  [ ! -e "$TEST_ROOT/pwned" ]
  chown 0:0 "$CDI/evil.json"
  chmod 664 "$CDI/evil.json"
  run -125 $H run --rm --profile host --device example.com/evil=x e -- true
  [[ "$output" == *"$CDI/evil.json is writable by its group (mode 0664)"* ]]
  [ ! -e "$TEST_ROOT/pwned" ]
  [ -z "$(ls "$STATE" 2>/dev/null)" ]
}

@test "cdi: a spec dir under a directory others can write is refused; under root's sticky one it is used" {
  # In a writable parent, another user could rename the spec dir away and
  # put one of their own in its place.
  mkdir -m 0777 "$TEST_ROOT/open"
  mv "$CDI" "$TEST_ROOT/open/cdi"
  local h="$HAKO --root $STATE --data-root $DATA --cdi-spec-dir $TEST_ROOT/open/cdi"
  run -125 $h run --rm --profile host --device example.com/fakegpu=gpu0 o -- true
  echo "$output"
  [[ "$output" == *"$TEST_ROOT/open is writable by every user (mode 0777)"* ]]
  [ ! -e "$FAKE/hook.log" ]
  # Sticky and root's (as /tmp is): others cannot rename root's entries.
  chmod 1777 "$TEST_ROOT/open"
  run -0 $h run --rm --profile host --device example.com/fakegpu=gpu0 o -- true
  [ "$(cat "$FAKE/hook.log")" = o ]
}

@test "cdi: hako spec --device writes sandbox.devices and checks the name" {
  mkdir "$TEST_ROOT/s"
  run -0 $H spec --profile host --bundle "$TEST_ROOT/s" --device example.com/fakegpu=gpu1
  [ "$(jq -c .sandbox.devices "$TEST_ROOT/s/config.json")" = '["example.com/fakegpu=gpu1"]' ]
  mkdir "$TEST_ROOT/s2"
  run -125 $H spec --profile host --bundle "$TEST_ROOT/s2" --device example.com/fakegpu=nope
  [ ! -e "$TEST_ROOT/s2/config.json" ]
}

@test "admission: shared slots; refused with kind admission; pause keeps, stop releases; list shows holders" {
  echo '{"devices":{"example.com/fakegpu=gpu0":{"mode":"shared","slots":2}}}' > "$TEST_ROOT/node.json"
  N="$H --node-config $TEST_ROOT/node.json"
  run -0 $N run -d --profile host --device example.com/fakegpu=gpu0 s1 -- sleep 60
  run -0 $N run -d --profile host --device example.com/fakegpu=gpu0 s2 -- sleep 60
  run -125 $N --log-format json run -d --profile host --device example.com/fakegpu=gpu0 s3 -- sleep 60
  [ "$(echo "$output" | jq -r .kind)" = admission ]
  [[ "$output" == *"2 of 2 held by s1, s2"* ]]
  [ ! -e "$STATE/s3" ]
  run -0 $N list --format json
  [ "$(echo "$output" | jq -c '[.[] | {id, devices}]')" = '[{"id":"s1","devices":["example.com/fakegpu=gpu0"]},{"id":"s2","devices":["example.com/fakegpu=gpu0"]}]' ]
  run -0 $N pause s1
  run -125 $N run -d --profile host --device example.com/fakegpu=gpu0 s3 -- sleep 60
  run -0 $N resume s1
  run -0 $N stop s1
  run -0 $N run -d --profile host --device example.com/fakegpu=gpu0 s3 -- sleep 60
  # hibernate releases too (it stops the sandbox after its command).
  run -0 $N hibernate s2 -- true
  run -0 $N run -d --profile host --device example.com/fakegpu=gpu0 s5 -- sleep 60
  # gpu1 has no slots in node.json: not counted.
  run -0 $N run -d --profile host --device example.com/fakegpu=gpu1 s4 -- sleep 60
  # The stopped s1 cannot start again while both slots are held.
  run -125 $N start s1
  [[ "$output" == *"no free slot"* ]]
}

@test "admission: concurrent creates racing for an exclusive device: exactly one wins" {
  echo '{"devices":{"example.com/fakegpu=gpu0":{"mode":"exclusive"}}}' > "$TEST_ROOT/node.json"
  N="$H --node-config $TEST_ROOT/node.json"
  for round in 1 2 3; do
    pids=""
    for i in 1 2 3 4 5 6; do
      $N create --profile host --device example.com/fakegpu=gpu0 r$round-$i >/dev/null 2>&1 &
      pids="$pids $!"
    done
    won=0
    for p in $pids; do wait "$p" && won=$((won + 1)) || true; done
    [ "$won" = 1 ]
    [ "$($N list --format json | jq '[.[] | select(.devices)] | length')" = 1 ]
    for id in $(ls "$STATE"); do $N delete --force "$id"; done
  done
}

@test "admission: node.json devices are checked" {
  echo '{"devices":{"gpu0":{"slots":1}}}' > "$TEST_ROOT/node.json"
  run -125 $H --node-config "$TEST_ROOT/node.json" run --profile host --device example.com/fakegpu=gpu0 x -- true
  [[ "$output" == *"not a CDI device name"* ]]
  echo '{"devices":{"a.com/b=c":{"mode":"exclusive","slots":2}}}' > "$TEST_ROOT/node.json"
  run -125 $H --node-config "$TEST_ROOT/node.json" run --profile host x -- true
  [[ "$output" == *"exclusive device has one slot"* ]]
  echo '{"devices":{"a.com/b=c":{"mode":"shared"}}}' > "$TEST_ROOT/node.json"
  run -125 $H --node-config "$TEST_ROOT/node.json" run --profile host x -- true
  [[ "$output" == *"needs slots"* ]]
}

@test "cdi: doctor and features list the devices found" {
  run -0 $H doctor --format json
  [ "$(echo "$output" | jq -c .checks.cdi.devices)" = '["example.com/fakegpu=gpu0","example.com/fakegpu=gpu1"]' ]
  [ "$(echo "$output" | jq -r .checks.cdi.available)" = true ]
  run -0 $H doctor
  [[ "$output" == *"2 devices in 1 spec: example.com/fakegpu=gpu0, example.com/fakegpu=gpu1"* ]]
  run -0 $H features
  [ "$(echo "$output" | jq -r '.annotations["io.hako.cdi.devices"]')" = example.com/fakegpu=gpu0,example.com/fakegpu=gpu1 ]
  # The node config's cdi_spec_dirs, when no --cdi-spec-dir is given.
  echo "{\"cdi_spec_dirs\":[\"$CDI\"]}" > "$TEST_ROOT/node.json"
  run -0 $HAKO --root "$STATE" --data-root "$DATA" --node-config "$TEST_ROOT/node.json" doctor --format json
  [ "$(echo "$output" | jq -c .checks.cdi.spec_dirs)" = "[\"$CDI\"]" ]
  [ "$(echo "$output" | jq '.checks.cdi.devices | length')" = 2 ]
}

@test "cdi: a GPU asked for where no spec defines it names the command that makes NVIDIA's spec" {
  mkdir "$TEST_ROOT/nocdi"
  run -125 $HAKO --root "$STATE" --data-root "$DATA" --cdi-spec-dir "$TEST_ROOT/nocdi" \
    run --rm --profile host --device nvidia.com/gpu=all g -- true
  [[ "$output" == *"CDI device nvidia.com/gpu=all: no such device in the 0 specs under $TEST_ROOT/nocdi"* ]]
  [[ "$output" == *'nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml'*'docs/gpus.md'* ]]
  [ ! -e "$STATE/g" ]
}
