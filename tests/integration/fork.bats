#!/usr/bin/env bats
# hako fork ID NEW...: children whose writable state is the parent's at one
# instant — a btrfs snapshot of the parent's data dir where the disk limit is
# a btrfs image (the default), else a copy — while the parent runs on; all
# or nothing, and a fork killed halfway leaves no child and no frozen parent.

load helpers
bats_require_minimum_version 1.5.0

setup_file () {
  hako_setup_file
  image_fixtures
}
setup () { hako_setup; }
teardown () {
  if [ -n "${SHM_ROOT:-}" ]; then
    local id HS="$HAKO --root $STATE --data-root $SHM_ROOT/data"
    for id in $(ls "$STATE" 2>/dev/null); do $HS delete --force "$id" >/dev/null 2>&1 || true; done
    umount "$SHM_ROOT" 2>/dev/null || true
  fi
  hako_teardown
}

# This host forks by snapshot (doctor says so): btrfs disk-limit images.
need_snapshot () {
  local m
  m=$($H doctor --format json | jq -r '.checks.fork.mechanism')
  [ "$m" = snapshot ] || skip "no btrfs disk-limit images here (doctor: fork $m)"
}

# KiB the host's disk holds for every sandbox's image (a family's image,
# one file under several names, counted once).
disks_kib () { du -k -s "$DATA/disks" | cut -f1; }

# sync, then: the images hold less than $1 KiB.
shrunk_below () {
  sync
  [ "$(disks_kib)" -lt "$1" ]
}

# Nothing of sandbox ID is left: state, data dir, image name, mount.
gone () {
  [ ! -e "$STATE/$1" ]
  [ ! -e "$DATA/sandboxes/$1" ]
  [ ! -e "$DATA/disks/$1.img" ]
  ! grep -qF " $DATA/sandboxes/$1 " /proc/self/mountinfo || false
}

# A host-profile parent with a file in /work.
host_parent () {
  $H run -d --profile host "$1" -- sleep 1000
  $H exec "$1" sh -c 'echo before > /work/a'
}

@test "children see the parent's /work as it was; later writes stay each one's own" {
  need_snapshot
  host_parent p
  $H exec p sh -c 'head -c 1M /dev/urandom > /work/r; mkdir -p /work/d; ln -s a /work/d/l'
  sum=$($H exec p md5sum /work/r | cut -d' ' -f1)
  run -0 $H fork --format json p c1 c2
  [ "$(echo "$output" | jq -r .mechanism)" = snapshot ]
  [ "$(echo "$output" | jq -c .children)" = '["c1","c2"]' ]
  [ "$($H state p | jq -r .status)" = running ]
  for c in c1 c2; do
    [ "$($H state $c | jq -r .status)" = running ]
    [ "$($H exec $c cat /work/a)" = before ]
    [ "$($H exec $c md5sum /work/r | cut -d' ' -f1)" = "$sum" ]
    [ "$($H exec $c readlink /work/d/l)" = a ]
  done
  # The parent's writes after the fork, in place too, are not the children's.
  $H exec p sh -c 'echo after > /work/a; echo new > /work/p; dd if=/dev/zero of=/work/r bs=4k count=1 conv=notrunc 2>/dev/null'
  [ "$($H exec c1 cat /work/a)" = before ]
  run -1 $H exec c1 cat /work/p
  [ "$($H exec c1 md5sum /work/r | cut -d' ' -f1)" = "$sum" ]
  # Nor a child's the parent's or its sibling's.
  $H exec c1 sh -c 'echo c1 > /work/a; echo mine > /work/c1'
  [ "$($H exec p cat /work/a)" = after ]
  [ "$($H exec c2 cat /work/a)" = before ]
  run -1 $H exec p cat /work/c1
  run -1 $H exec c2 cat /work/c1
  # Each child's own /work: the same owner inside as the parent's.
  [ "$($H exec c2 stat -c %u /work)" = "$($H exec p stat -c %u /work)" ]
  # The children are names of the parent's image (one file, three links).
  [ "$(stat -c %i "$DATA/disks/c1.img")" = "$(stat -c %i "$DATA/disks/p.img")" ]
  [ "$(stat -c %h "$DATA/disks/p.img")" = 3 ]
  [ "$(cat "$STATE/c1/fork")" = p ]
}

@test "a fork copies nothing: the host's disk does not grow by the parent's data, for four children" {
  need_snapshot
  host_parent p
  # Random bytes (zeros could be holes), written out.
  $H exec p sh -c 'head -c 48M /dev/urandom > /work/big; sync'
  before=$(disks_kib)
  [ "$before" -ge $((48 << 10)) ]
  $H fork p c1 c2 c3 c4
  sync
  after=$(disks_kib)
  # Four copies would be 192 MiB more; the snapshots' metadata is a few.
  [ "$after" -lt $((before + (16 << 10))) ] || { echo "the images grew from $before to $after KiB" >&2; false; }
  for c in c1 c2 c3 c4; do
    [ "$($H exec $c stat -c %s /work/big)" = $((48 << 20)) ]
  done
  # What a child writes after is its own, and only that grows the image.
  $H exec c3 sh -c 'head -c 8M /dev/urandom > /work/more; sync'
  [ "$(disks_kib)" -lt $((after + (16 << 10))) ]
}

@test "two forks of one sandbox at once: both whole, one image for the five" {
  need_snapshot
  host_parent p
  $H fork p a1 a2 > "$TEST_ROOT/a.out" 2>&1 &
  local pa=$!
  $H fork p b1 b2 > "$TEST_ROOT/b.out" 2>&1 &
  local pb=$!
  wait "$pa" || { cat "$TEST_ROOT/a.out"; false; }
  wait "$pb" || { cat "$TEST_ROOT/b.out"; false; }
  for c in a1 a2 b1 b2; do
    [ "$($H exec $c cat /work/a)" = before ]
  done
  [ "$(stat -c %h "$DATA/disks/p.img")" = 5 ]
  [ "$(losetup -a | grep -cF "$DATA/disks/")" = 1 ]
}

@test "an image sandbox's children get its writable layer: new files, changed files, deletions" {
  need_snapshot
  import_busybox
  $H run -d --image busybox ip -- sleep 1000
  $H exec ip sh -c 'echo img > /etc/mark; rm /bin/vi; mkdir -p /srv/x; echo y > /srv/x/y'
  run -0 $H fork ip ic1 ic2
  [ "${lines[0]}" = ic1 ]
  [ "${lines[1]}" = ic2 ]
  for c in ic1 ic2; do
    [ "$($H exec $c cat /etc/mark)" = img ]
    [ "$($H exec $c cat /srv/x/y)" = y ]
    run -1 $H exec $c test -e /bin/vi
  done
  $H exec ic2 sh -c 'echo c2 > /etc/mark; echo back > /bin/vi'
  $H exec ip sh -c 'echo p > /etc/mark2'
  [ "$($H exec ip cat /etc/mark)" = img ]
  [ "$($H exec ic1 cat /etc/mark)" = img ]
  run -1 $H exec ic1 test -e /bin/vi
  run -1 $H exec ic1 test -e /etc/mark2
  # The image stays in use while a child stands on it.
  $H delete --force ip
  run -125 $H image rm busybox
  $H delete --force ic1
  $H delete --force ic2
  $H image rm busybox
}

@test "the children run their config's process afresh, detached, with a log of their own" {
  need_snapshot
  $H run -d --profile host p -- sh -c 'echo started >> /work/starts; echo out-$(cat /work/starts | wc -l); exec sleep 1000'
  wait_for 10 grep -q started "$DATA/sandboxes/p/work/starts"
  run -0 $H fork p c
  # The child's own process ran once more on the parent's /work: its second start.
  wait_for 10 $H exec c sh -c '[ "$(wc -l < /work/starts)" = 2 ]'
  [ "$($H exec p sh -c 'wc -l < /work/starts')" = 1 ]
  wait_for 10 sh -c "$H logs c | grep -q out-2"
  [ "$($H state c | jq .pid)" != "$($H state p | jq .pid)" ]
}

@test "fork of a paused, a created and a stopped sandbox: each parent is left as it was" {
  need_snapshot
  host_parent p
  $H pause p
  $H fork p c1
  [ "$($H state p | jq -r .status)" = paused ]
  [ "$($H state c1 | jq -r .status)" = running ]
  [ "$($H exec c1 cat /work/a)" = before ]
  $H resume p
  $H stop p
  $H fork p c2
  [ "$($H state p | jq -r .status)" = stopped ]
  [ "$($H exec c2 cat /work/a)" = before ]
  $H start p
  [ "$($H exec p cat /work/a)" = before ]
  $H create --profile host q
  $H fork q c3
  [ "$($H state q | jq -r .status)" = created ]
  [ "$($H state c3 | jq -r .status)" = running ]
}

@test "delete the parent first, then the children; and the children first: nothing is left" {
  need_snapshot
  host_parent p
  $H fork p c1 c2
  $H delete --force p
  gone p
  # The family's image stays for the children, with their data.
  [ "$($H exec c1 cat /work/a)" = before ]
  [ "$(stat -c %h "$DATA/disks/c1.img")" = 2 ]
  $H delete --force c1
  gone c1
  [ "$($H exec c2 cat /work/a)" = before ]
  $H delete --force c2
  gone c2
  loop_gone "$DATA/disks/"
  host_parent q
  $H fork q d1 d2
  $H delete --force d2
  $H delete --force d1
  [ "$(stat -c %h "$DATA/disks/q.img")" = 1 ]
  [ "$($H exec q cat /work/a)" = before ]
  $H delete --force q
  gone q
  gone d1
  gone d2
  loop_gone "$DATA/disks/"
}

@test "a member's delete gives its own data back to the family's image (btrfs's cleaner: within a minute)" {
  need_snapshot
  host_parent p
  $H fork p c
  $H exec p sh -c 'head -c 32M /dev/urandom > /work/mine; sync'
  full=$(disks_kib)
  [ "$full" -ge $((32 << 10)) ]
  $H delete --force p
  # The parent's subvolume is removed; its extents are freed by the cleaner
  # after a commit, and punched out of the image (discard) at the next.
  wait_for 90 shrunk_below $((full - (24 << 10)))
  [ "$($H exec c cat /work/a)" = before ]
}

@test "btrfs subvolumes a sandbox makes in its /work: its fork is refused, its delete still clears it" {
  need_snapshot
  command -v btrfs > /dev/null || skip "no btrfs (btrfs-progs) on the host for the host profile to run"
  host_parent p
  $H exec p sh -c 'btrfs subvolume create /work/sv > /dev/null'
  run -125 --separate-stderr $H --log-format json fork p c
  [ "$(echo "$stderr" | jq -r .kind)" = unsupported ]
  [[ "$stderr" == *"btrfs subvolumes it made"* ]]
  gone c
  $H exec p rmdir /work/sv
  $H fork p c
  # A child's own nested subvolumes, files in them, go with it.
  $H exec c sh -c 'btrfs subvolume create /work/sv > /dev/null; btrfs subvolume create /work/sv/in > /dev/null; echo x > /work/sv/in/f'
  $H delete --force c
  gone c
  [ "$(stat -c %h "$DATA/disks/p.img")" = 1 ]
  [ "$($H exec p cat /work/a)" = before ]
}

@test "a child takes none of its parent's kept processes, published ports or egress CA key; a child that fails leaves nothing" {
  FORK_TOKEN=fork-secret-value $H run -d --profile host --network allowlist --allow example.com \
    --secret T=env:FORK_TOKEN@example.com -p 0:8080 p -- sleep 1000
  k=$($H exec --detach p sleep 7320)
  # A child's create reads its secrets again: without the variable it fails,
  # and the fork with it, leaving no child (its snapshot, its name in the
  # family's image, its mount and loop device included).
  run -125 $H fork p c
  [[ "$output" == *"sandbox c: secret T: FORK_TOKEN is not set in hako's environment"* ]]
  gone c
  [ "$(stat -c %h "$DATA/disks/p.img")" = 1 ]
  FORK_TOKEN=fork-secret-value $H fork p c
  run -0 $H ps --detached --format json c
  [ "$output" = "[]" ]
  [ ! -e "$STATE/c/procs" ]
  run -0 $H port c
  [ "$output" = "" ]
  [ ! -e "$STATE/c/ports" ]
  # A CA of its own: the parent's key signs nothing the child trusts.
  [ -s "$STATE/c/egress-ca.key" ]
  run ! cmp -s "$STATE/p/egress-ca.key" "$STATE/c/egress-ca.key"
  [ "$(stat -c %a "$STATE/c/egress-ca.key")" = 600 ]
  # The family's secret, as a placeholder inside, its value at the proxy only.
  [ "$($H exec c sh -c 'echo $T')" = "$($H exec p sh -c 'echo $T')" ]
  run -0 $H exec c sh -c 'cat /proc/1/environ | tr "\0" "\n"; env'
  [[ "$output" != *fork-secret-value* ]]
  $H kill --process "$k" p KILL
}

@test "attack: a nested subvolume the child made read-only does not keep its delete from clearing it" {
  need_snapshot
  command -v btrfs > /dev/null || skip "no btrfs (btrfs-progs) on the host for the host profile to run"
  host_parent p
  $H fork p c
  # SUBVOL_SETFLAGS is the subvolume owner's: no capability refuses it.
  $H exec c sh -c 'btrfs subvolume create /work/sv > /dev/null; mkdir /work/sv/d; echo x > /work/sv/d/f
    btrfs property set /work/sv ro true 2> /dev/null; ! touch /work/sv/g 2> /dev/null'
  $H delete --force c
  gone c
  [ "$(stat -c %h "$DATA/disks/p.img")" = 1 ]
  [ "$($H exec p cat /work/a)" = before ]
}

@test "a child restarts after a reboot unmounted it: its family's image is found, never bound twice" {
  need_snapshot
  host_parent p
  $H fork p c
  $H exec c sh -c 'echo kept > /work/k'
  $H stop c
  umount "$DATA/sandboxes/c"
  $H start c
  [ "$($H exec c cat /work/k)" = kept ]
  # One loop device for the family, whose first name was the parent's.
  [ "$(losetup -a | grep -cF "$DATA/disks/")" = 1 ]
  # Both stopped and unmounted, as after a reboot: the first start binds it.
  $H stop c
  $H stop p
  umount "$DATA/sandboxes/c"
  umount "$DATA/sandboxes/p"
  loop_gone "$DATA/disks/"
  $H start c
  $H start p
  [ "$(losetup -a | grep -cF "$DATA/disks/")" = 1 ]
  [ "$($H exec c cat /work/k)" = kept ]
  [ "$($H exec p cat /work/a)" = before ]
}

@test "no disk limit: fork copies, says so, and the children are as independent" {
  $H run -d --disk none --profile host p -- sleep 1000
  $H exec p sh -c 'echo before > /work/a'
  run -0 --separate-stderr $H fork --format json p c1 c2
  [ "$(echo "$output" | jq -r .mechanism)" = copy ]
  echo "$output" | jq -e '.why_copy | test("no disk image")' >/dev/null
  [[ "$stderr" == *"warning: fork p: copied its writable state"* ]]
  [ "$($H exec c2 cat /work/a)" = before ]
  $H exec c1 sh -c 'echo c1 > /work/a'
  [ "$($H exec p cat /work/a)" = before ]
  [ "$($H exec c2 cat /work/a)" = before ]
  # The copy's staging directory is gone.
  [ -z "$(ls -A "$DATA/forks" 2>/dev/null)" ]
  [ ! -e "$DATA/disks/c1.img" ]
}

@test "a data root in memory: fork copies into each child's sized tmpfs; doctor says copy" {
  SHM_ROOT="$TEST_ROOT/shm"
  mkdir "$SHM_ROOT"
  mount -t tmpfs -o size=256m,mode=711 tmpfs "$SHM_ROOT"
  local HS="$HAKO --root $STATE --data-root $SHM_ROOT/data"
  run -0 $HS doctor --format json
  [ "$(echo "$output" | jq -r .checks.fork.mechanism)" = copy ]
  [ "$(echo "$output" | jq .checks.fork.available)" = false ]
  $HS run -d --disk 32m --profile host t -- sleep 1000
  $HS exec t sh -c 'echo shm > /work/a'
  run -0 --separate-stderr $HS fork --format json t tc
  [ "$(echo "$output" | jq -r .mechanism)" = copy ]
  echo "$output" | jq -e '.why_copy | test("no disk image")' >/dev/null
  [ "$($HS exec tc cat /work/a)" = shm ]
  run -0 $HS exec tc sh -c 'df -k /work | tail -1'
  [ "$(echo "$output" | awk '{print $2}')" -le $((32 << 10)) ]
  $HS delete --force t
  $HS delete --force tc
  umount "$SHM_ROOT"
  SHM_ROOT=
}

@test "bad input: a taken, invalid or repeated id fails the whole fork with 125 and makes no child" {
  host_parent p
  $H run -d --profile host taken -- sleep 1000
  run -125 --separate-stderr $H --log-format json fork p a taken b
  [ "$(echo "$stderr" | jq -r .kind)" = exists ]
  [[ "$(echo "$stderr" | jq -r .msg)" == *"sandbox taken already exists"* ]]
  gone a
  gone b
  for bad in 'x/y' '..' '-x' "$(printf 'a%.0s' $(seq 65))"; do
    run -125 --separate-stderr $H --log-format json fork p ok "$bad"
    [ "$(echo "$stderr" | jq -r .kind)" = invalid_argument ]
    gone ok
  done
  run -125 $H fork p a a
  [[ "$output" == *"a is given twice"* ]]
  run -125 $H fork p p
  [[ "$output" == *"p is the sandbox forked"* ]]
  run -125 --separate-stderr $H --log-format json fork nosuch a
  [ "$(echo "$stderr" | jq -r .kind)" = not_found ]
  run -125 $H fork p
  [[ "$output" == *"at least one NEW id"* ]]
  gone a
  [ -z "$(ls -A "$DATA/forks" 2>/dev/null)" ]
  [ "$($H state p | jq -r .status)" = running ]
  [ "$(ls "$STATE" | tr '\n' ' ')" = "p taken " ]
}

@test "bad input: a sandbox with no writable state of its own, or a terminal, is refused before anything is made" {
  $H run -d --bundle "$BUNDLE_DIR" b -- sleep 1000
  run -125 --separate-stderr $H --log-format json fork b c
  [ "$(echo "$stderr" | jq -r .kind)" = unsupported ]
  [[ "$stderr" == *"no writable state of its own"* ]]
  gone c
  # A host-profile sandbox whose process has a terminal, handed to recvtty.
  local recvtty=${HAKO_TEST_HELPERS:-$(dirname "$HAKO")/tests/helpers}/recvtty sock=$TEST_ROOT/console.sock
  [ -x "$recvtty" ] || skip "the test helper recvtty is not built (make check builds it)"
  mkdir "$TEST_ROOT/tb"
  $H spec --profile host --bundle "$TEST_ROOT/tb"
  edit_config "$TEST_ROOT/tb" '.process.terminal = true | .process.args = ["sleep", "1000"]'
  "$recvtty" "$sock" > /dev/null 2>&1 &
  RECV_PID=$!
  wait_for 10 test -S "$sock"
  $H create --bundle "$TEST_ROOT/tb" --console-socket "$sock" t
  run -125 --separate-stderr $H --log-format json fork t c
  [ "$(echo "$stderr" | jq -r .kind)" = unsupported ]
  [[ "$stderr" == *"process.terminal"* ]]
  gone c
  $H delete --force t
  kill "$RECV_PID" 2>/dev/null || true
}

@test "a full disk: fork fails with no_space and leaves no child" {
  need_snapshot
  $H run -d --disk 200m --profile host f -- sleep 1000
  run $H exec f sh -c 'head -c 300M /dev/urandom > /work/fill'
  [ "$status" -ne 0 ]
  run -125 --separate-stderr $H --log-format json fork f c1 c2
  [ "$(echo "$stderr" | jq -r .kind)" = no_space ]
  gone c1
  gone c2
  [ "$($H state f | jq -r .status)" = running ]
  [ "$(stat -c %h "$DATA/disks/f.img")" = 1 ]
}

# The parent's writer has written more than $1 bytes of ticks since.
ticked () { [ "$(stat -c %s "$DATA/sandboxes/p/work/ticks")" -gt "$1" ]; }

# kill -9 of `hako fork` at POINT (HAKO_TEST_STALL), then: the parent runs
# (thawed: its writer goes on), and the guard has removed every child.
kill_fork_at () {
  HAKO_TEST_STALL=$1 $H fork p c1 c2 > /dev/null 2>&1 &
  local pid=$!
  wait_for 20 test -e "$STATE/p/stalled"
  kill -9 "$pid"
  wait "$pid" || true
  rm -f "$STATE/p/stalled"
  wait_for 20 gone c1
  wait_for 20 gone c2
  wait_status p running
  local n
  n=$(stat -c %s "$DATA/sandboxes/p/work/ticks")
  wait_for 10 ticked "$n"
  [ "$(stat -c %h "$DATA/disks/p.img")" = 1 ] || [ ! -e "$DATA/disks/p.img" ]
  [ -z "$(ls -A "$DATA/forks" 2>/dev/null)" ]
}

@test "kill -9 of fork after the reservations, while frozen, after the first child: no child, parent thawed" {
  $H run -d --profile host p -- sh -c 'while :; do echo t >> /work/ticks; sleep 0.05; done'
  wait_for 10 test -s "$DATA/sandboxes/p/work/ticks"
  for point in fork-reserved snapshot-frozen fork-child; do
    kill_fork_at "$point"
  done
  # And a fork works after all that.
  $H fork p c1
  [ -s "$DATA/sandboxes/c1/work/ticks" ]
}

@test "SIGTERM while frozen: hako ends once the parent is thawed, and the fork is undone" {
  $H run -d --profile host p -- sh -c 'while :; do echo t >> /work/ticks; sleep 0.05; done'
  wait_for 10 test -s "$DATA/sandboxes/p/work/ticks"
  HAKO_TEST_STALL=snapshot-frozen $H fork p c1 > /dev/null 2>&1 &
  local pid=$!
  wait_for 20 test -e "$STATE/p/stalled"
  # Frozen: the writer is stopped.
  n=$(stat -c %s "$DATA/sandboxes/p/work/ticks")
  run -1 wait_for 1 ticked "$n"
  kill -TERM "$pid"
  local rc=0
  wait "$pid" || rc=$?
  # Killed by the signal once it was let through, after the thaw.
  [ "$rc" -eq 143 ]
  [ "$($H state p | jq -r .status)" = running ]
  rm -f "$STATE/p/stalled"
  wait_for 20 gone c1
  wait_for 10 ticked "$n"
}
