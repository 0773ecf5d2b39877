#!/usr/bin/env bats
# The disk limit (sandbox.limits.disk, --disk, node.json default_disk): what
# a sandbox keeps under the data root — its /work, an image's writable
# layer — is a filesystem of that size, so a writer inside gets ENOSPC and
# the host's disk keeps the rest.

load helpers
bats_require_minimum_version 1.5.0

setup_file () {
  hako_setup_file
  image_fixtures
}
setup () { hako_setup; }
teardown () {
  # A test's own tmpfs data root goes before the leak check looks for mounts.
  if [ -n "${SHM_ROOT:-}" ]; then
    H="$HAKO --root $STATE --data-root $SHM_ROOT/data"
    for id in $(ls "$STATE" 2>/dev/null); do $H delete --force "$id" >/dev/null 2>&1 || true; done
    umount "$SHM_ROOT" 2>/dev/null || true
  fi
  hako_teardown
}

# This host can bound a data root on disk with a loop image (doctor says so).
need_loop () {
  local m
  m=$($H doctor --format json | jq -r '.checks.disk_limit.mechanism')
  [ "$m" = loop ] || skip "no loop-image disk limit on this host (doctor: $m)"
}

# KiB the host's disk holds for sandbox ID's image.
image_kib () { du -k "$DATA/disks/$1.img" | cut -f1; }

# Nothing of sandbox ID's disk is left: no image, no loop device, no mount.
no_disk_left () {
  [ ! -e "$DATA/disks/$1.img" ]
  loop_gone "$DATA/disks/$1.img"
  ! grep -qF " $DATA/sandboxes/$1 " /proc/self/mountinfo || false
  [ ! -e "$DATA/sandboxes/$1" ]
}

@test "host profile --disk 64M: writing 200M into /work gets ENOSPC inside; the host keeps the rest" {
  need_loop
  run -0 $H run --disk 64M --profile host w -- sh -c \
    'dd if=/dev/zero of=/work/big bs=1M count=200 2>&1; echo "dd=$?"; df -k /work | tail -1'
  [[ "$output" == *"No space left on device"* ]]
  [[ "$output" == *"dd=1"* ]]
  # What landed: at most the limit, in the image and in the file inside.
  [ "$(stat -c %s "$DATA/sandboxes/w/work/big")" -le $((64 << 20)) ]
  [ "$(image_kib w)" -le $((64 << 10)) ]
  [ "$(stat -c %s "$DATA/disks/w.img")" -eq $((64 << 20)) ]
  # The sandbox's process, not root of the host, owns its /work still.
  [ "$(stat -c %u "$DATA/sandboxes/w/work")" -ne 0 ]
  $H delete w
  no_disk_left w
}

@test "the space a sandbox frees returns to the host; more writes fit again" {
  need_loop
  $H run --detach --disk 64M --profile host f -- sleep 1000
  run $H exec f dd if=/dev/zero of=/work/a bs=1M count=100
  [[ "$output" == *"No space left on device"* ]]
  full=$(image_kib f)
  $H exec f sh -c 'rm /work/a; sync'
  # ext4's discards go out with the journal's commit and the loop device
  # punches them into the image from its own worker: on a loaded machine
  # that can take a moment after sync returns.
  local i
  for i in $(seq 100); do [ "$(image_kib f)" -lt $((full / 2)) ] && break; sleep 0.1; done
  [ "$(image_kib f)" -lt $((full / 2)) ]
  $H exec f dd if=/dev/zero of=/work/b bs=1M count=20
  $H delete --force f
  no_disk_left f
}

@test "image sandbox --disk 64M: its writable layer is bounded the same" {
  need_loop
  import_busybox
  run -0 $H run --rm --disk 64M --image busybox img -- sh -c \
    'dd if=/dev/zero of=/big bs=1M count=200 2>&1; echo "dd=$?"'
  [[ "$output" == *"No space left on device"* ]]
  [[ "$output" == *"dd=1"* ]]
  no_disk_left img
  # Without --disk the layer is on the host's disk as before.
  run -0 $H run --rm --image busybox img2 -- sh -c 'echo x > /x; cat /x'
  [ "$output" = x ]
}

@test "the data survives stop/start, and a start after a reboot mounts the image again" {
  need_loop
  $H run --detach --disk 64M --profile host s -- sleep 1000
  $H exec s sh -c 'echo kept > /work/k'
  $H stop s
  grep -qF " $DATA/sandboxes/s " /proc/self/mountinfo
  $H start s
  [ "$($H exec s cat /work/k)" = kept ]
  # A reboot unmounts it (and detaches its loop device).
  $H stop s
  umount "$DATA/sandboxes/s"
  loop_gone "$DATA/disks/s.img"
  $H start s
  [ "$($H exec s cat /work/k)" = kept ]
  run $H exec s dd if=/dev/zero of=/work/big bs=1M count=100
  [[ "$output" == *"No space left on device"* ]]
  $H delete --force s
  no_disk_left s
}

@test "snapshot and branch of a disk-limited sandbox; a branch too small for the data is refused" {
  need_loop
  $H run --detach --disk 64M --profile host src -- sleep 1000
  # Random bytes: zeros would be copied as holes, and fit anywhere.
  $H exec src sh -c 'echo mine > /work/mine; head -c 30M /dev/urandom > /work/fill'
  $H snapshot src "$TEST_ROOT/snap"
  [ "$(cat "$TEST_ROOT/snap/data/mine")" = mine ]
  jq -e '.sandbox.limits.disk == "64M"' "$TEST_ROOT/snap/config.json"
  $H create --from-snapshot "$TEST_ROOT/snap" br
  $H start br
  [ "$($H exec br cat /work/mine)" = mine ]
  # The branch has a filesystem of its own, of the snapshot's size.
  [ -e "$DATA/disks/br.img" ]
  [ "$($H exec br sh -c 'df -k /work | tail -1' | awk '{print $2}')" -le $((64 << 10)) ]
  $H exec br sh -c 'echo br > /work/br'
  run $H exec src cat /work/br
  [ "$status" -ne 0 ]
  # --disk on a branch sets its size; 16m cannot hold the 30 MiB copied in.
  run -125 $H create --disk 16m --from-snapshot "$TEST_ROOT/snap" small </dev/null
  [[ "$output" == *"from snapshot"* ]]
  [ ! -e "$STATE/small" ]
  no_disk_left small
  $H delete --force br
  $H delete --force src
  no_disk_left br
  no_disk_left src
}

@test "an image sandbox's writable layer on its disk commits as an image, and branches" {
  need_loop
  import_busybox
  $H run --detach --disk 64M --image busybox ic -- sleep 1000
  $H exec ic sh -c 'echo layer > /srv/l'
  $H snapshot --image committed ic
  run -0 $H run --rm --image committed c2 -- cat /srv/l
  [ "$output" = layer ]
  $H snapshot ic "$TEST_ROOT/snap"
  $H create --from-snapshot "$TEST_ROOT/snap" b2 </dev/null >/dev/null 2>&1
  $H start b2
  [ "$($H exec b2 cat /srv/l)" = layer ]
  [ -e "$DATA/disks/b2.img" ]
  $H delete --force b2
  $H delete --force ic
  no_disk_left b2
  no_disk_left ic
}

# The default limit needs no node.json: /etc/hako/node.json is the one
# hako would read without HAKO_NODE_CONFIG.
need_no_node_config () {
  [ ! -e /etc/hako/node.json ] || skip "this host has /etc/hako/node.json"
  unset HAKO_NODE_CONFIG
}

# Inside a sandbox: the KiB of DIR's filesystem, refused (exit 9) unless it
# is the default limit's (at most 10 GiB), so that a binary without the
# default never fallocates 11 GiB of the host's disk; then 11 GiB asked of it.
fill_past_default='kb=$(df -k "$1" | awk "NR == 2 { print \$2 }"); echo "kb=$kb"
  [ "$kb" -le 10485760 ] || exit 9
  fallocate -l 11g "$1/big" 2>&1; echo "fa=$?"'

@test "the default disk limit: without node.json a host profile's /work is 10 GiB and 11 GiB gets ENOSPC inside" {
  need_loop
  need_no_node_config
  run -0 $H run --profile host d -- sh -c "$fill_past_default" sh /work
  [[ "$output" == *"No space left on device"* ]]
  [[ "$output" == *"fa=1"* ]]
  [ "$(stat -c %s "$DATA/disks/d.img")" -eq $((10 << 30)) ]
  # The space asked for is reserved in the image, not written to the host.
  [ "$(image_kib d)" -le $((64 << 10)) ]
  # A second sandbox is a copy of the same template: mkfs ran once.  A
  # btrfs one's name says so (doctor: fork by snapshot).
  local tpl="$((10 << 30)).img"
  if [ "$($H doctor --format json | jq -r .checks.fork.mechanism)" = snapshot ]; then
    tpl="$((10 << 30)).btrfs.img"
  fi
  ls "$DATA/disk-templates"
  [ "$(ls "$DATA/disk-templates")" = "$tpl" ]
  ino=$(stat -c %i "$DATA/disk-templates/$tpl")
  $H run --rm --profile host d2 -- true
  [ "$(stat -c %i "$DATA/disk-templates/$tpl")" = "$ino" ]
  $H delete d
  no_disk_left d
  no_disk_left d2
}

@test "the default disk limit bounds an image sandbox's writable layer too" {
  need_loop
  need_no_node_config
  import_busybox
  run -0 $H run --rm --image busybox img -- sh -c "$fill_past_default" sh /
  [[ "$output" == *"No space left on device"* ]]
  [[ "$output" == *"fa=1"* ]]
  no_disk_left img
}

@test "--disk none, and node.json default_disk \"none\", turn the default limit off" {
  need_loop
  need_no_node_config
  host_kb=$(df -k --output=size "$TEST_ROOT" | tail -1)
  [ "$host_kb" -gt $((12 << 20)) ] || skip "the host's disk is not larger than the default"
  run -0 $H run --disk none --profile host u -- df -k /work
  [ "$(echo "$output" | awk 'NR == 2 { print $2 }')" -eq "$host_kb" ]
  [ ! -e "$DATA/disks/u.img" ]
  $H delete u
  echo '{"default_disk": "none"}' > "$TEST_ROOT/node.json"
  export HAKO_NODE_CONFIG="$TEST_ROOT/node.json"
  run -0 $H run --profile host v -- df -k /work
  [ "$(echo "$output" | awk 'NR == 2 { print $2 }')" -eq "$host_kb" ]
  [ ! -e "$DATA/disks/v.img" ]
  $H delete v
  run -0 $H doctor --format json
  [ "$(echo "$output" | jq -r '.checks.disk_limit.default')" = 0 ]
  unset HAKO_NODE_CONFIG
  run -0 $H doctor --format json
  [ "$(echo "$output" | jq -r '.checks.disk_limit.default')" = $((10 << 30)) ]
  [ "$(echo "$output" | jq -r '.checks.disk_limit.default_from')" = hako ]
}

@test "node.json default_disk applies to a sandbox that sets none; -1 asks for none" {
  need_loop
  echo '{"default_disk": "32M"}' > "$TEST_ROOT/node.json"
  export HAKO_NODE_CONFIG="$TEST_ROOT/node.json"
  run -0 $H run --profile host n -- sh -c 'df -k /work | tail -1'
  [ -e "$DATA/disks/n.img" ]
  [ "$(echo "$output" | awk '{print $2}')" -le $((32 << 10)) ]
  $H delete n
  no_disk_left n
  # The spec's own limit wins over the node's.
  $H run --rm --disk 64M --profile host m -- true
  run -0 $H run --disk -1 --profile host u -- true
  [ ! -e "$DATA/disks/u.img" ]
  $H delete u
  # A bundle sandbox keeps nothing under the data root: the default leaves it alone.
  run -0 $H run --rm --bundle "$BUNDLE_DIR" bb -- true
  echo '{"default_disk": "3M"}' > "$TEST_ROOT/node.json"
  run -125 $H run --rm --profile host bad -- true
  [[ "$output" == *"default_disk: must be a size of at least 16M"* ]]
  [ ! -e "$STATE/bad" ]
}

@test "bad sizes are refused with 125, naming the form; nothing is made" {
  for v in 12q "" 64m5 -5 1.5g; do
    run -125 $H run --rm --disk "$v" --profile host b -- true
    [[ "$output" == *"--disk $v: .sandbox.limits.disk: must be a size: a number of bytes, or a string with a k, m or g suffix"* ]]
    run -125 $H create --disk "$v" --profile host b
    [[ "$output" == *".sandbox.limits.disk: must be a size"* ]]
  done
  for v in 0 1k 15m; do
    run -125 $H run --rm --disk "$v" --profile host b -- true
    [[ "$output" == *".sandbox.limits.disk: must be at least 16m"* ]]
  done
  run -125 $H spec --bundle "$TEST_ROOT" --disk 10x
  [[ "$output" == *"--disk 10x: .sandbox.limits.disk: must be a size"* ]]
  [ ! -e "$TEST_ROOT/config.json" ]
  $H spec --profile host --bundle "$TEST_ROOT" --disk 1g
  jq -e '.sandbox.limits.disk == "1g"' "$TEST_ROOT/config.json"
  b=$(new_bundle lim)
  edit_config "$b" '.sandbox.limits.disk = {"size": 1}'
  run -125 $H create --bundle "$b" b
  [[ "$output" == *".sandbox.limits.disk: must be a size"* ]]
  # A bundle sandbox's writes go to its rootfs, which the limit cannot bound.
  run -125 $H run --rm --disk 64m --bundle "$BUNDLE_DIR" b -- true
  [[ "$output" == *"keeps nothing under the data root"* ]]
  [ -z "$(ls -A "$STATE")" ]
  [ ! -e "$DATA/disks" ] || [ -z "$(ls -A "$DATA/disks")" ]
}

@test "a limit that cannot be set up fails create with the reason, 125, and leaves nothing" {
  need_loop
  mkdir -p "$DATA"
  touch "$DATA/disks"   # where the images go is not a directory
  run -125 $H run --rm --disk 64m --profile host x -- true
  [[ "$output" == *"disk limit of 67108864 bytes"*"disks"* ]]
  [ ! -e "$STATE/x" ]
  [ ! -e "$DATA/sandboxes/x" ]
  loop_gone "$TEST_ROOT"
  rm "$DATA/disks"
}

@test "delete, and delete after a create killed once its disk was made, leave no loop device, mount or image" {
  need_loop
  $H create --disk 64m --profile host d
  losetup -a | grep -qF "$DATA/disks/d.img"
  grep -qF " $DATA/sandboxes/d " /proc/self/mountinfo
  $H delete d
  no_disk_left d
  HAKO_TEST_STALL=after-disk $H create --disk 64m --profile host k &
  local pid=$!
  for i in $(seq 100); do [ -e "$STATE/k/stalled" ] && break; sleep 0.1; done
  [ -e "$STATE/k/stalled" ]
  losetup -a | grep -qF "$DATA/disks/k.img"
  kill -9 "$pid"
  wait "$pid" || true
  $H delete --force k
  no_disk_left k
}

@test "the image is btrfs where mkfs.btrfs and the kernel allow (doctor says which), its data dir a subvolume" {
  need_loop
  local fs
  fs=$($H doctor --format json | jq -r '.checks.fork.mechanism')
  run -0 $H run --disk 64m --profile host b -- sh -c 'stat -f -c %T /work'
  [ "$($H doctor --format json | jq -r .checks.disk_limit.filesystem)" = "$([ "$fs" = snapshot ] && echo btrfs || echo ext4)" ]
  if [ "$fs" = snapshot ]; then
    [ "$output" = btrfs ]
    # The data dir is the subvolume named after the sandbox (inode 256).
    [ "$(stat -c %i "$DATA/sandboxes/b")" = 256 ]
    grep -F " $DATA/sandboxes/b " /proc/self/mountinfo | grep -qF "subvol=/b"
    [ "$(od -An -c -j 65600 -N 8 "$DATA/disks/b.img" | tr -d ' ')" = _BHRfS_M ]
  else
    [ "$output" = ext2/ext3 ]
  fi
  $H delete b
  no_disk_left b
}

@test "doctor names the mechanism: a loop image on disk, a sized tmpfs for a data root in memory" {
  run -0 $H doctor --format json
  m=$(echo "$output" | jq -r '.checks.disk_limit.mechanism')
  # The test's data root is under /tmp: on disk on Debian, a tmpfs elsewhere.
  if [ "$(stat -f -c %T "$TEST_ROOT")" = tmpfs ]; then
    [ "$m" = tmpfs ]
  else
    [[ "$m" == loop || "$m" == none ]]
    [ "$(echo "$output" | jq -r '.checks.disk_limit.available')" = "$([ "$m" = loop ] && echo true || echo false)" ]
  fi
  run -0 $H doctor
  [[ "$output" == *"disk limit (sandbox.limits.disk)"* ]]
  SHM_ROOT="$TEST_ROOT/shm"
  mkdir "$SHM_ROOT"
  mount -t tmpfs -o size=256m,mode=711 tmpfs "$SHM_ROOT"
  local HS="$HAKO --root $STATE --data-root $SHM_ROOT/data"
  [ "$($HS doctor --format json | jq -r '.checks.disk_limit.mechanism')" = tmpfs ]
  run -0 $HS run --disk 32m --profile host t -- sh -c \
    'dd if=/dev/zero of=/work/big bs=1M count=100 2>&1; echo "dd=$?"'
  [[ "$output" == *"No space left on device"* ]]
  [ "$(stat -c %s "$SHM_ROOT/data/sandboxes/t/work/big")" -le $((32 << 20)) ]
  $HS delete t
  ! grep -qF " $SHM_ROOT/data/sandboxes/t " /proc/self/mountinfo || false
  umount "$SHM_ROOT"
  SHM_ROOT=
}

@test "the default disk limit: sixty-four sandboxes created at once each get one (no loop device taken twice)" {
  need_loop
  local i
  for i in $(seq 64); do
    ( $H run -d --profile host "c$i" > "$TEST_ROOT/c$i.out" 2>&1; echo $? > "$TEST_ROOT/c$i.rc" ) &
  done
  wait
  for i in $(seq 64); do
    [ "$(cat "$TEST_ROOT/c$i.rc")" = 0 ] || { cat "$TEST_ROOT/c$i.out"; false; }
  done
  # Sixty-four images, each on a loop device of its own, mounted as its /work.
  [ "$(losetup -a | grep -cF "$DATA/disks/")" = 64 ]
  [ "$(losetup -a | grep -F "$DATA/disks/" | cut -d: -f1 | sort -u | wc -l)" = 64 ]
  run -0 $H exec c17 df -k /work
  [ "$(echo "$output" | awk 'NR == 2 { print int($2 / 1048576) }')" -ge 9 ]
  for i in $(seq 64); do $H delete --force "c$i" & done
  wait
  loop_gone "$DATA/disks/"
}
