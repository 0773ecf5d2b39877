#!/usr/bin/env bats
# The default profile in a user namespace: root inside is host uid
# 1000000000, and the bundle's rootfs is mounted idmapped, so the image's
# files (root's on the host) are root's inside as in any container.

load helpers

setup_file () { hako_setup_file; }
setup () { hako_setup; }
teardown () { hako_teardown; }

# default_bundle NAME: hako spec's default profile over a private rootfs copy.
default_bundle () {
  local b="$TEST_ROOT/$1"
  mkdir -p "$b"
  cp -a "$BUNDLE_DIR/rootfs" "$b/rootfs"
  $HAKO spec --bundle "$b"
  echo "$b"
}

@test "default profile: root inside is host uid 1000000000, yet the rootfs is root's inside (idmapped)" {
  b=$(default_bundle idm)
  jq -e '.sandbox.idmap == true and (.linux.namespaces | map(.type) | index("user") != null)' "$b/config.json"
  set_args "$b" sh -c 'id -u; cat /proc/self/uid_map | tr -s " "; stat -c %u:%g /etc/passwd /bin/busybox; ls /root >/dev/null && echo root-dir-ok; sleep 100'
  $H create --bundle "$b" idm
  pid=$($H state idm | jq .pid)
  $H start idm
  # Seen from the host, the sandbox's root is the unprivileged id.
  [ "$(stat -c %u /proc/$pid)" = 1000000000 ]
  $H kill idm KILL
  wait_status idm stopped
  $H delete idm
  set_args "$b" sh -c 'id -u; cat /proc/self/uid_map | tr -s " "; stat -c %u:%g /etc/passwd /bin/busybox; ls /root >/dev/null && echo root-dir-ok'
  run $H run --rm --bundle "$b" idm
  echo "$output"
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = 0 ]
  [ "$(echo "${lines[1]}" | xargs)" = "0 1000000000 65536" ]
  [ "${lines[2]}" = 0:0 ]
  [ "${lines[3]}" = 0:0 ]
  # /root is 0700 root's on disk: readable only because it is root's inside.
  [ "${lines[4]}" = root-dir-ok ]
}

@test "default profile: a root-only host file bound in stays unreadable (root inside is nobody outside)" {
  b=$(default_bundle secret)
  echo secret > "$TEST_ROOT/host-secret"
  chmod 600 "$TEST_ROOT/host-secret"
  edit_config "$b" '.mounts += [{"destination": "/secret", "type": "bind", "source": "'"$TEST_ROOT/host-secret"'", "options": ["bind", "ro"]}]'
  set_args "$b" sh -c 'cat /secret 2>&1; stat -c %u /secret'
  run $H run --rm --bundle "$b" secret
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "${lines[0]}" == *"ermission denied"* ]]
  [ "${lines[1]}" = 65534 ]
}

@test "idmapped rootfs: what root writes inside is owned by root on disk — the image's owners stay the image's" {
  b=$(default_bundle write)
  edit_config "$b" '.root.readonly = false | .process.capabilities |= with_entries(.value += ["CAP_CHOWN"])'
  set_args "$b" sh -c 'echo hi > /new-file; mkdir /new-dir; chown 1000:1000 /new-dir; echo done'
  run $H run --rm --bundle "$b" write
  [ "$status" -eq 0 ]
  [ "$(stat -c %u:%g "$b/rootfs/new-file")" = 0:0 ]
  [ "$(stat -c %u:%g "$b/rootfs/new-dir")" = 1000:1000 ]
}

@test "sandbox.idmap on a filesystem that cannot be idmapped (ramfs): 125 naming the rootfs, nothing left" {
  b="$TEST_ROOT/ramfs-bundle"
  mkdir -p "$b/rootfs"
  mount -t ramfs ramfs "$b/rootfs"
  "$fixtures/busybox-rootfs.sh" "$b/rootfs" >/dev/null
  $HAKO spec --bundle "$b"
  run $H run --rm --bundle "$b" ram -- true
  first_status=$status first=$output
  # Opting out is explicit: false runs with the on-disk owners (root's
  # files are nobody's inside).
  edit_config "$b" '.sandbox.idmap = false'
  run $H run --rm --bundle "$b" ram2 -- stat -c %u /etc/passwd
  umount "$b/rootfs"
  echo "$first"
  [ "$first_status" -eq 125 ]
  [[ "$first" == *"run ram: sandbox.idmap: the rootfs $b/rootfs"*"ramfs"*"cannot idmap"* ]]
  [ ! -e "$STATE/ram" ]
  [ "$status" -eq 0 ]
  [ "$output" = 65534 ]
}

@test "sandbox.idmap without a user namespace is refused: 125" {
  b=$(new_bundle noidm)
  edit_config "$b" '.sandbox.idmap = true'
  run $H run --rm --bundle "$b" noidm -- true
  echo "$output"
  [ "$status" -eq 125 ]
  [[ "$output" == *"sandbox.idmap: needs a user namespace"* ]]
  [ ! -e "$STATE/noidm" ]
}

@test "default profile: a bundle under a 0700 directory runs (cd DIR && hako spec && hako run); its bind sources too" {
  mkdir -p "$TEST_ROOT/private"
  chmod 700 "$TEST_ROOT/private"
  b=$(default_bundle private/box)
  mkdir "$TEST_ROOT/private/share" && echo shared > "$TEST_ROOT/private/share/f"
  edit_config "$b" '.mounts += [{"destination": "/mnt", "type": "bind", "source": "'"$TEST_ROOT"'/private/share", "options": ["rbind", "ro"]}]'
  # As a user meets it: the bundle is the cwd, no --bundle.
  run bash -c "cd '$b' && $H run --rm priv -- sh -c 'cat /mnt/f; id -u; stat -c %u /etc/passwd'"
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$output" = "$(printf 'shared\n0\n0')" ]
  # create/start (a monitor, a detached process) alike.
  (cd "$b" && $H create priv2 </dev/null >/dev/null 2>&1)
  $H start priv2
  for i in $(seq 50); do [ "$($H state priv2 | jq -r .status)" = stopped ] && break; sleep 0.1; done
  [ "$($H state priv2 | jq -r .exitStatus)" = 0 ]
  $H delete priv2
  # The path was never searchable by the mapped root: the check still holds
  # for a root mounted by path (no idmap), with its clear error.
  edit_config "$b" '.sandbox.idmap = false'
  run $H run --rm --bundle "$b" priv3 -- true
  echo "$output"
  [ "$status" -eq 125 ]
  [[ "$output" == *"host uid 1000000000, which cannot enter $TEST_ROOT/private"*"chmod o+x $TEST_ROOT/private"* ]]
  [ ! -e "$STATE/priv3" ]
}
