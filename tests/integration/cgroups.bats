#!/usr/bin/env bats
# cgroups: limits in force, pause and resume, and no cgroup left behind, on
# this host's layout (v2, v1, or hybrid: v1 controllers plus cgroup2 at
# /sys/fs/cgroup/unified).

load helpers
bats_require_minimum_version 1.5.0

setup_file () { hako_setup_file; }
setup () { hako_setup; }
# The loop device a test attached (blockIO weightDevice), detached even when it fails.
teardown () {
  [ -z "${LOOPDEV:-}" ] || losetup -d "$LOOPDEV" 2> /dev/null || true
  hako_teardown
}

v2_host () { [ "$(stat -f -c %T /sys/fs/cgroup)" = cgroup2fs ]; }

# cgfile WHAT ID: the file of the sandbox's cgroups that holds WHAT.
cgfile () {
  local f
  if v2_host; then
    case $1 in
      mem) f=memory.max ;; pids|pids-max) f=pids.max ;; pids-now) f=pids.current ;; pids-events) f=pids.events ;;
      freeze) f=cgroup.freeze ;; procs) f=cgroup.procs ;;
    esac
    echo "/sys/fs/cgroup/$(cgroup_parent)/$2/$f"
  else
    # Hybrid: the cgroup2 dir freezes (v1 hosts: the v1 freezer).
    case $1 in
      mem) f=memory/memory.limit_in_bytes ;; pids|pids-max) f=pids/pids.max ;; pids-now) f=pids/pids.current ;;
      pids-events) f=pids/pids.events ;;
      freeze) if [ -d /sys/fs/cgroup/unified ]; then f=unified/cgroup.freeze; else f=freezer/freezer.state; fi ;;
      procs) f=memory/cgroup.procs ;;
    esac
    echo "/sys/fs/cgroup/${f%%/*}/$(cgroup_parent)/$2/${f#*/}"
  fi
}

frozen_word () { if v2_host || [ -d /sys/fs/cgroup/unified ]; then echo 1; else echo FROZEN; fi; }

# limits BUNDLE MEMORY-BYTES PIDS
limits () {
  edit_config "$1" ".linux.resources.memory = {\"limit\": $2} | .linux.resources.pids = {\"limit\": $3}"
}

# create_refused BUNDLE ID EDIT TEXT: after the jq EDIT of its config, create
# of ID fails with 125 and a message holding TEXT.
create_refused () {
  edit_config "$1" "$3"
  run $H create --bundle "$1" "$2"
  [ "$status" -eq 125 ]
  [[ "$output" == *"$4"* ]]
}

# A bundle whose /out is TEST_ROOT/out, for files the sandbox writes.
out_bundle () {
  local b
  b=$(new_bundle "$1")
  mkdir -p "$TEST_ROOT/out"
  edit_config "$b" ".mounts += [{\"destination\": \"/out\", \"type\": \"bind\", \"source\": \"$TEST_ROOT/out\", \"options\": [\"rbind\", \"rw\"]}]"
  echo "$b"
}

# hako_cgroups: every cgroup directory of this test's state root.
hako_cgroups () {
  ls -d /sys/fs/cgroup/"$(cgroup_parent)" /sys/fs/cgroup/*/"$(cgroup_parent)" 2>/dev/null || true
}

# The memory limit the profiles write on this machine: the smaller of 4 GiB
# or half the RAM, rounded down to a MiB (hako-spec(5)).
profile_memory () {
  local kb half
  kb=$(awk '/^MemTotal:/ { print $2 }' /proc/meminfo)
  half=$(( kb * 1024 / 2 / 1048576 * 1048576 ))
  if [ "$half" -lt 4294967296 ]; then echo "$half"; else echo 4294967296; fi
}

# kmsg_opens: open /dev/kmsg for reading, then for writing (nothing is read
# or written), printing the error of each open or "r-open" / "w-open".
kmsg_opens='(exec 3</dev/kmsg) 2>&1 && echo r-open; (exec 3>/dev/kmsg) 2>&1 && echo w-open; true'

@test "profiles: hako spec writes a pids and a memory limit, and runc's device deny-all, for default and host" {
  for p in default host; do
    mkdir "$TEST_ROOT/$p"
    $H spec --profile "$p" --bundle "$TEST_ROOT/$p"
    run jq -c '.linux.resources' "$TEST_ROOT/$p/config.json"
    [ "$output" = "{\"memory\":{\"limit\":$(profile_memory)},\"pids\":{\"limit\":4096},\"devices\":[{\"allow\":false,\"access\":\"rwm\"}]}" ]
  done
}

@test "host profile: the sandbox is in a pids cgroup with pids.max 4096 and a memory cgroup with the default limit, and so is an exec" {
  $H run --detach --profile host hl -- sleep 1000
  [ "$(cat "$(cgfile pids-max hl)")" = 4096 ]
  [ "$(cat "$(cgfile mem hl)")" = "$(profile_memory)" ]
  pid=$($H state hl | jq -r .pid)
  grep -qx "$pid" "$(cgfile procs hl)"
  # Inside its cgroup namespace the sandbox's own cgroup is "/": an exec
  # that had not joined the memory or pids one would see a path out of it.
  run $H exec hl -- cat /proc/self/cgroup
  [ "$status" -eq 0 ]
  if v2_host; then
    [ "$output" = "0::/" ]
  else
    [[ "$output" == *":memory:/"$'\n'* ]]
    [[ "$output" == *":pids:/"$'\n'* ]]
    [[ "$output" != *":memory:/."* ]]
    [[ "$output" != *":pids:/."* ]]
  fi
}

@test "pids: a fork bomb in a default-profile sandbox stops at the default limit of 4096; the host is fine; delete removes it all" {
  d="$TEST_ROOT/bomb"
  mkdir -p "$d"
  ln -s "$BUNDLE_DIR/rootfs" "$d/rootfs"
  $H spec --bundle "$d"
  # Each shell forks two more and sleeps: it doubles until fork fails (a
  # shell whose fork failed exits; none retries), so it is bounded by the
  # limit alone and settles there.
  set_args "$d" sh -c 'b() { b & b & sleep 1000; }; b'
  $H run --detach --bundle "$d" bomb > /dev/null 2>&1
  now=$(cgfile pids-now bomb)
  # The wait is for the count itself; 2 minutes at most, as a loaded
  # 2-core machine forks 4,000 shells slowly (30 s ran out once).
  for i in $(seq 1200); do [ "$(cat "$now")" -ge 4000 ] && break; sleep 0.1; done
  [ "$(cat "$now")" -ge 4000 ]
  for i in $(seq 10); do
    [ "$(cat "$now")" -le 4096 ]
    sleep 0.1
  done
  [ "$(cat "$(cgfile pids-max bomb)")" = 4096 ]
  run $H run --rm --profile host after -- echo fine
  [ "$output" = fine ]
  $H delete --force bomb
  [ -z "$(hako_cgroups)" ]
  [ -z "$(leak_report)" ]
}

@test "memory: the limit is in the sandbox's cgroup, which holds its process from the start" {
  b=$(new_bundle mem)
  limits "$b" 67108864 64
  set_args "$b" sleep 1000
  $H run --detach --bundle "$b" mem
  [ "$(cat "$(cgfile mem mem)")" = 67108864 ]
  [ "$(cat "$(cgfile pids mem)")" = 64 ]
  pid=$($H state mem | jq -r .pid)
  grep -qx "$pid" "$(cgfile procs mem)"
  # The cgroup2 hierarchy (the only one on v2, process tracking on hybrid) too.
  if [ -d /sys/fs/cgroup/unified ] || v2_host; then
    grep -qx "0::/$(cgroup_parent)/mem" "/proc/$pid/cgroup"
  fi
  $H delete --force mem
  [ ! -e "$(dirname "$(cgfile mem mem)")" ]
}

@test "memory: a program allocating past a 64 MiB limit is killed, and the host is fine" {
  b=$(new_bundle hog)
  limits "$b" 67108864 64
  run $H run --rm --bundle "$b" hog -- sh -c 'x=$(head -c 200000000 /dev/zero | tr "\0" a); echo survived'
  [ "$status" -eq 137 ]
  [[ "$output" != *survived* ]]
  run $H run --rm --bundle "$b" after -- echo fine
  [ "$status" -eq 0 ]
  [ "$output" = fine ]
}

@test "pids: a fork bomb stays at the limit of 64; delete --force still removes everything" {
  b=$(new_bundle bomb)
  limits "$b" 268435456 64
  set_args "$b" sh -c 'bomb() { bomb | bomb & }; bomb; sleep 1000'
  $H run --detach --bundle "$b" bomb > /dev/null
  # The bomb ran into the limit: the kernel counts every fork pids.max
  # refused in pids.events.  (Not "pids.current reached 64": the bomb's
  # shells can all end up waiting on each other a few short of it.)  Up to
  # 30 s: on a loaded two-core machine the bomb takes its time.
  local refused=0
  for i in $(seq 300); do
    refused=$(awk '$1 == "max" { print $2 }' "$(cgfile pids-events bomb)")
    [ "$refused" -gt 0 ] && break
    sleep 0.1
  done
  [ "$refused" -gt 0 ] || { echo "no fork refused; pids.current $(cat "$(cgfile pids-now bomb)")"; false; }
  # Held there: never above the limit (a shell whose fork failed exits, so
  # the count may dip for a moment before the bomb refills it).
  for i in $(seq 20); do
    [ "$(cat "$(cgfile pids-now bomb)")" -le 64 ]
    sleep 0.05
  done
  [ "$(cat "$(cgfile pids-max bomb)")" -eq 64 ]
  $H delete --force bomb
  [ -z "$(hako_cgroups)" ]
  [ -z "$(leak_report)" ]
}

@test "pause: a counter stops and state says paused; resume: it grows again" {
  b=$(out_bundle count)
  # Written through a rename, so a reader (or a freeze) never sees it half-written.
  set_args "$b" sh -c 'i=0; while :; do i=$((i+1)); echo $i > /out/n.t; mv /out/n.t /out/n; sleep 0.02; done'
  $H run --detach --bundle "$b" count
  for i in $(seq 50); do [ -s "$TEST_ROOT/out/n" ] && break; sleep 0.1; done
  $H pause count
  [ "$($H state count | jq -r .status)" = paused ]
  [ "$(cat "$(cgfile freeze count)")" = "$(frozen_word)" ]
  a=$(cat "$TEST_ROOT/out/n")
  sleep 0.5
  [ "$(cat "$TEST_ROOT/out/n")" = "$a" ]
  [ "$($H state count | jq -r .status)" = paused ]
  $H resume count
  [ "$($H state count | jq -r .status)" = running ]
  grown () { [ "$(cat "$TEST_ROOT/out/n")" -gt "$a" ]; }
  wait_for 10 grown
}

@test "pause: a signal sent while paused is delivered on resume; a paused sandbox needs --force to delete" {
  b=$(out_bundle sig)
  set_args "$b" sh -c 'trap "echo got > /out/sig; exit 3" USR1; while :; do sleep 0.05; done'
  $H run --detach --bundle "$b" sig
  wait_for 10 catches "$($H state sig | jq -r .pid)" 10  # its USR1 trap is set
  $H pause sig
  $H kill sig USR1
  sleep 0.5
  [ ! -e "$TEST_ROOT/out/sig" ]
  [ "$($H state sig | jq -r .status)" = paused ]
  run $H delete sig
  [ "$status" -eq 125 ]
  [[ "$output" == *"paused"* ]]
  $H resume sig
  wait_status sig stopped
  [ "$(cat "$TEST_ROOT/out/sig")" = got ]

  set_args "$b" sleep 1000
  $H run --detach --bundle "$b" sig2
  $H pause sig2
  $H delete --force sig2
  [ ! -e "$STATE/sig2" ]
  $H delete sig
  [ -z "$(hako_cgroups)" ]
}

@test "exec --ignore-paused waits for resume, then runs (runc's flag); without it, or when --timeout ends first, 125 and nothing started" {
  b=$(out_bundle ip)
  set_args "$b" sleep 1000
  $H run --detach --bundle "$b" ip
  $H pause ip
  run $H exec ip sh -c 'echo ran > /out/no'
  [ "$status" -eq 125 ]
  [[ "$output" == *"container not running (it is paused)"* ]]
  run $H exec --timeout 1 --ignore-paused ip sh -c 'echo ran > /out/no'
  [ "$status" -eq 125 ]
  [[ "$output" == *"still paused after --timeout"* ]]
  $H resume ip
  $H pause ip
  (sleep 1; $H resume ip) &
  run $H exec --ignore-paused ip sh -c 'cat /proc/self/cgroup > /out/cg; echo ok'
  wait
  [ "$status" -eq 0 ]
  [ "$output" = ok ]
  [ "$($H state ip | jq -r .status)" = running ]
  # It ran in the sandbox's cgroups, as every exec.
  grep -q "/ip$" "$TEST_ROOT/out/cg"
  [ ! -e "$TEST_ROOT/out/no" ]
  $H delete --force ip
}

@test "pause and resume refuse a sandbox in the wrong state: 125, container not running / not paused" {
  b=$(new_bundle st)
  $H run --bundle "$b" st -- true
  run $H pause st
  [ "$status" -eq 125 ]
  [[ "$output" == *"container not running"* ]]
  set_args "$b" sleep 1000
  $H run --detach --bundle "$b" st2
  run $H resume st2
  [ "$status" -eq 125 ]
  [[ "$output" == *"not paused"* ]]
  run $H pause nosuchbox
  [ "$status" -eq 125 ]
  [[ "$output" == *"does not exist"* ]]
}

@test "a created sandbox paused before start is created again after resume, and starts" {
  b=$(out_bundle cr)
  set_args "$b" sh -c 'echo ran > /out/ran'
  $H create --bundle "$b" cr
  $H pause cr
  [ "$($H state cr | jq -r .status)" = paused ]
  $H resume cr
  [ "$($H state cr | jq -r .status)" = created ]
  $H start cr
  wait_status cr stopped
  [ "$(cat "$TEST_ROOT/out/ran")" = ran ]
}

@test "20 sandboxes created, started and deleted leave no cgroup directory of hako's" {
  b=$(new_bundle many)
  limits "$b" 67108864 64
  set_args "$b" sleep 1000
  for i in $(seq 20); do $H create --bundle "$b" "m$i"; done
  for i in $(seq 1 2 20); do $H start "m$i"; done
  per=$(ls -d /sys/fs/cgroup/*/"$(cgroup_parent)"/m1 /sys/fs/cgroup/"$(cgroup_parent)"/m1 2>/dev/null | wc -l)
  [ "$per" -ge 1 ]
  [ "$(ls -d /sys/fs/cgroup/*/"$(cgroup_parent)"/m[0-9]* /sys/fs/cgroup/"$(cgroup_parent)"/m[0-9]* 2>/dev/null | wc -l)" -eq $((20 * per)) ]
  for i in $(seq 20); do $H delete --force "m$i"; done
  [ -z "$(hako_cgroups)" ]
}

@test "a limit whose controller this host lacks, a unified key off v2, a systemd path: 125, nothing left" {
  b=$(new_bundle huge)
  edit_config "$b" '.linux.resources.hugepageLimits = [{"pageSize": "2MB", "limit": 2097152}]'
  if [ -d /sys/fs/cgroup/hugetlb ] || grep -qw hugetlb /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
    skip "this host has the hugetlb controller"
  fi
  run $H create --bundle "$b" huge
  [ "$status" -eq 125 ]
  [[ "$output" == *'"hugetlb"'* ]]
  [ ! -e "$STATE/huge" ]
  if ! v2_host; then
    b=$(new_bundle uni)
    edit_config "$b" '.linux.resources.unified = {"memory.high": "100000000"}'
    run $H create --bundle "$b" uni
    [ "$status" -eq 125 ]
    [[ "$output" == *"memory.high"*"cgroup v2"* ]]
  fi
  if [ ! -d /run/systemd/system ]; then
    b=$(new_bundle sd)
    edit_config "$b" '.linux.cgroupsPath = "system.slice:hako:sd"'
    run $H create --bundle "$b" sd
    [ "$status" -eq 125 ]
    [[ "$output" == *"needs systemd, which is not running"* ]]
  fi
  [ -z "$(leak_report)" ]
}

@test "a systemd cgroupsPath (slice:prefix:name) is the scope's path where systemd runs" {
  # systemd is made to look running in a private mount namespace (a tmpfs
  # /run holding /run/systemd/system); the slice is the test's own.
  slice="hakotest${TEST_ROOT##*.}"
  b=$(new_bundle sd)
  limits "$b" 67108864 64
  edit_config "$b" ".linux.cgroupsPath = \"$slice.slice:hako:sd\""
  set_args "$b" cat /proc/self/cgroup
  run unshare -m sh -c 'mount -t tmpfs tmpfs /run && mkdir -p /run/systemd/system && exec "$@"' sh \
    $H --systemd-cgroup run --rm --bundle "$b" sd
  left=$(ls -d /sys/fs/cgroup/*/$slice.slice/hako-sd.scope /sys/fs/cgroup/$slice.slice/hako-sd.scope 2>/dev/null || true)
  for d in /sys/fs/cgroup/*/$slice.slice /sys/fs/cgroup/$slice.slice; do
    if [ -d "$d" ]; then rmdir "$d"; fi
  done
  [ "$status" -eq 0 ]
  [ -z "$left" ]
  [[ "$output" == *":/$slice.slice/hako-sd.scope"* ]]
  if ! v2_host; then
    [[ "$output" == *":memory:/$slice.slice/hako-sd.scope"* ]]
  fi
}

@test "blockIO: throttle rates are in the sandbox's blkio (v1) or io.max (v2); a missing device, leaf weights, net_cls: 125" {
  dev=
  for d in /sys/block/*; do
    case ${d##*/} in loop*|ram*|zram*|nbd*) continue ;; esac
    dev=$(cat "$d/dev") && break
  done
  [ -n "$dev" ] || skip "no block device on this host"
  b=$(new_bundle thr)
  edit_config "$b" ".linux.resources.blockIO = {\"throttleReadBpsDevice\": [{\"major\": ${dev%:*}, \"minor\": ${dev#*:}, \"rate\": 1048576}],
    \"throttleWriteIOPSDevice\": [{\"major\": ${dev%:*}, \"minor\": ${dev#*:}, \"rate\": 100}]}"
  set_args "$b" sleep 1000
  $H run --detach --bundle "$b" thr
  if v2_host; then
    grep -q "^$dev rbps=1048576 wbps=max riops=max wiops=100" "/sys/fs/cgroup/$(cgroup_parent)/thr/io.max"
  else
    grep -qx "$dev 1048576" "/sys/fs/cgroup/blkio/$(cgroup_parent)/thr/blkio.throttle.read_bps_device"
    grep -qx "$dev 100" "/sys/fs/cgroup/blkio/$(cgroup_parent)/thr/blkio.throttle.write_iops_device"
  fi
  $H delete --force thr
  # No block device has major 4095: the kernel refuses, create fails whole.
  edit_config "$b" '.linux.resources.blockIO = {"throttleReadBpsDevice": [{"major": 4095, "minor": 0, "rate": 1}]}'
  run $H create --bundle "$b" thr2
  [ "$status" -eq 125 ]
  [[ "$output" == *"linux.resources.blockIO"*"No such device"* ]]
  for r in '{"blockIO": {"leafWeight": 300}}' '{"network": {"classID": 1}}'; do
    create_refused "$b" thr3 ".linux.resources = $r" "not supported"
  done
  [ -z "$(leak_report)" ]
}

@test "blockIO: weightDevice is the sandbox's weight for that device (BFQ on a loop device); no scheduler with weights, a leafWeight, a weight out of range: 125" {
  command -v losetup > /dev/null || skip "no losetup"
  truncate -s 1M "$TEST_ROOT/disk.img"
  LOOPDEV=$(losetup --find --show "$TEST_ROOT/disk.img" 2> /dev/null) || skip "cannot attach a loop device here"
  sched=/sys/block/${LOOPDEV#/dev/}/queue/scheduler
  dev=$(cat "/sys/block/${LOOPDEV#/dev/}/dev")
  wd="{\"major\": ${dev%:*}, \"minor\": ${dev#*:}"
  b=$(new_bundle wd)
  set_args "$b" sleep 1000
  create_refused "$b" wd3 ".linux.resources.blockIO = {\"weightDevice\": [$wd, \"weight\": 444, \"leafWeight\": 10}]}" \
    "leaf weights are not supported"
  create_refused "$b" wd4 ".linux.resources.blockIO = {\"weightDevice\": [$wd, \"weight\": 5}]}" \
    "must be between 10 and 1000"
  edit_config "$b" ".linux.resources.blockIO = {\"weight\": 333, \"weightDevice\": [$wd, \"weight\": 444}]}"
  if v2_host; then
    f=/sys/fs/cgroup/$(cgroup_parent)/wd/io.bfq.weight
  else
    f=/sys/fs/cgroup/blkio/$(cgroup_parent)/wd/blkio.bfq.weight_device
  fi
  if ! grep -qw bfq "$sched"; then
    # No proportional scheduler in this kernel: no cgroup has a weight
    # file, and create says so instead of running without the weight.
    run $H create --bundle "$b" wd
    echo "$output"
    [ "$status" -eq 125 ]
    [[ "$output" == *"linux.resources.blockIO.weight"*"no proportional I/O scheduler"* ]]
    run $H state wd
    [ "$status" -ne 0 ]
    [ ! -e "${f%/wd/*}/wd" ]
    losetup -d "$LOOPDEV" && LOOPDEV=
    [ -z "$(leak_report)" ]
    return
  fi
  echo bfq > "$sched"
  $H run --detach --bundle "$b" wd
  cat "$f"
  grep -qx "default 333" "$f"
  grep -qx "$dev 444" "$f"
  $H delete --force wd
  # The kernel keeps weights only where the device's scheduler has them.
  echo none > "$sched"
  run $H create --bundle "$b" wd2
  echo "$output"
  [ "$status" -eq 125 ]
  [[ "$output" == *"linux.resources.blockIO"*"not supported"* ]]
  [ ! -e "${f%/wd/*}/wd2" ]
  losetup -d "$LOOPDEV" && LOOPDEV=
  [ -z "$(leak_report)" ]
}

@test "memory.kernel and kernelTCP: taken under a memory limit no larger; kernelTCP written on v1; otherwise 125" {
  b=$(new_bundle kmem)
  edit_config "$b" '.linux.resources.memory = {"limit": 67108864, "kernel": 67108864, "kernelTCP": 33554432}'
  set_args "$b" sleep 1000
  $H run --detach --bundle "$b" kmem
  if ! v2_host; then
    [ "$(cat "/sys/fs/cgroup/memory/$(cgroup_parent)/kmem/memory.kmem.tcp.limit_in_bytes")" = 33554432 ]
  fi
  $H delete --force kmem
  # Linux enforces no separate kernel memory limit: one the memory limit
  # does not hold is refused, naming why.
  for m in '{"kernel": 67108864}' '{"limit": 134217728, "kernel": 67108864}'; do
    create_refused "$b" kmem2 ".linux.resources.memory = $m" \
      "memory.kernel: Linux no longer enforces a separate kernel memory limit"
  done
  [ -z "$(leak_report)" ]
}

@test "linux.cgroupsPath: an absolute path is used in every hierarchy and removed by delete" {
  b=$(new_bundle abs)
  name="hako-test-abs-$$-$RANDOM"
  edit_config "$b" ".linux.cgroupsPath = \"/$name\""
  limits "$b" 67108864 64
  set_args "$b" sleep 1000
  $H run --detach --bundle "$b" abs
  pid=$($H state abs | jq -r .pid)
  if v2_host; then d=/sys/fs/cgroup/$name; else d=/sys/fs/cgroup/memory/$name; fi
  grep -qx "$pid" "$d/cgroup.procs"
  run $H create --bundle "$b" abs2
  [ "$status" -eq 125 ]
  [[ "$output" == *"already exists"* ]]
  $H delete --force abs
  [ -z "$(ls -d /sys/fs/cgroup/$name /sys/fs/cgroup/*/$name 2>/dev/null)" ]
}

@test "with a cgroup namespace the sandbox sees its own cgroup as / and only its own processes" {
  b=$(new_bundle ns)
  edit_config "$b" '.linux.namespaces += [{"type": "cgroup"}]'
  # A host with v1 hierarchies shows each (memory/ among them), as runc does.
  if v2_host; then f=/sys/fs/cgroup/cgroup.procs; else f=/sys/fs/cgroup/memory/cgroup.procs; fi
  run $H run --rm --bundle "$b" ns -- sh -c "grep '^0::' /proc/self/cgroup; cat $f"
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = "0::/" ]
  [ "${lines[1]}" = 1 ]
}

@test "devices: runc spec's deny-all is enforced (v1 devices cgroup, or an eBPF filter on the cgroup2 dir), /dev's nodes allowed" {
  if [ ! -e /dev/kmsg ]; then skip "no /dev/kmsg on this host to bind in"; fi
  b=$(new_bundle dev)
  # A host device the rules do not allow, bound in: opening it must fail
  # (it is only opened for reading, never written).
  edit_config "$b" '.mounts += [{"destination": "/dev/kmsg", "type": "bind", "source": "/dev/kmsg", "options": ["bind"]}]'
  run $H run --rm --bundle "$b" dev -- sh -c 'dd if=/dev/kmsg of=/dev/null count=0 2>&1; echo x > /dev/null && head -c 4 /dev/urandom | wc -c'
  [ "$status" -eq 0 ]
  [[ "${lines[0]}" == *"/dev/kmsg"*"Operation not permitted"* ]]
  [ "${lines[1]}" -eq 4 ]
  if [ -d /sys/fs/cgroup/unified ] && ! v2_host; then
    # Hybrid: runc's default rules make no v1 devices cgroup (an exec would
    # have to join it).
    set_args "$b" sleep 1000
    $H run --detach --bundle "$b" dev3
    [ ! -e "/sys/fs/cgroup/devices/$(cgroup_parent)/dev3" ]
  fi
}

@test "devices: a deny-all holds for a device linux.devices lists (runc's \"device cgroup deny\"), in the sandbox and in an exec" {
  if [ ! -c /dev/kmsg ]; then skip "no /dev/kmsg on this host"; fi
  b=$(new_bundle kmsg)
  # CAP_SYSLOG: without the rules, /dev/kmsg would open.
  edit_config "$b" '.linux.resources.devices = [{"allow": false, "access": "rwm"}]
    | .linux.devices = [{"path": "/dev/kmsg", "type": "c", "major": 1, "minor": 11}]
    | .process.capabilities.bounding += ["CAP_SYSLOG"] | .process.capabilities.effective += ["CAP_SYSLOG"]
    | .process.capabilities.permitted += ["CAP_SYSLOG"]'
  run $H run --rm --bundle "$b" kmsg -- sh -c "test -c /dev/kmsg && echo node; $kmsg_opens"
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = node ]
  [[ "${lines[1]}" == *"/dev/kmsg"*"Operation not permitted"* ]]
  [[ "${lines[2]}" == *"/dev/kmsg"*"Operation not permitted"* ]]
  [[ "$output" != *-open* ]]
  set_args "$b" sleep 1000
  $H run --detach --bundle "$b" kmsg2
  run $H exec kmsg2 -- sh -c "$kmsg_opens"
  [ "$status" -eq 0 ]
  [[ "${lines[0]}" == *"Operation not permitted"* ]]
  [[ "${lines[1]}" == *"Operation not permitted"* ]]
  [[ "$output" != *-open* ]]
  # /dev's own nodes stay usable.
  run $H exec kmsg2 -- sh -c 'echo x > /dev/null && head -c 4 /dev/zero | wc -c'
  [ "$output" -eq 4 ]
}

@test "devices: a spec without device rules gets the default ones (deny-all, /dev's nodes allowed), in the sandbox and in an exec" {
  if [ ! -c /dev/kmsg ]; then skip "no /dev/kmsg on this host"; fi
  b=$(new_bundle nodev)
  edit_config "$b" 'del(.linux.resources)
    | .mounts += [{"destination": "/dev/kmsg", "type": "bind", "source": "/dev/kmsg", "options": ["bind"]}]'
  set_args "$b" sleep 1000
  $H run --detach --bundle "$b" nodev
  run $H exec nodev -- sh -c "$kmsg_opens"
  [ "$status" -eq 0 ]
  [[ "${lines[0]}" == *"Operation not permitted"* ]]
  [[ "${lines[1]}" == *"Operation not permitted"* ]]
  run $H exec nodev -- sh -c 'echo x > /dev/null && head -c 4 /dev/urandom | wc -c'
  [ "$output" -eq 4 ]
}

@test "devices: a rule beyond the default set opens its device, in the sandbox and in an exec; on hybrid it is in the v1 devices.list" {
  if [ ! -c /dev/net/tun ] || [ ! -e /dev/kmsg ]; then skip "no /dev/net/tun or /dev/kmsg on this host"; fi
  b=$(new_bundle devx)
  # tun (10:200) and kmsg are bound in (no linux.devices entry: the rule
  # adds to what hako's /dev holds); tun is allowed, kmsg stays denied.
  # Both are only opened, never read or written.
  edit_config "$b" '.linux.resources.devices += [{"allow": true, "type": "c", "major": 10, "minor": 200, "access": "rw"}]
    | .mounts += [{"destination": "/dev/net/tun", "type": "bind", "source": "/dev/net/tun", "options": ["bind"]},
                  {"destination": "/dev/kmsg", "type": "bind", "source": "/dev/kmsg", "options": ["bind"]}]'
  set_args "$b" sleep 1000
  $H run --detach --bundle "$b" devx
  probe='(exec 3</dev/net/tun) && echo tun-ok; (exec 3</dev/kmsg) 2>/dev/null || echo kmsg-denied'
  run $H exec devx -- sh -c "$probe"
  [ "$status" -eq 0 ]
  [ "$output" = "$(printf 'tun-ok\nkmsg-denied')" ]
  if [ -d /sys/fs/cgroup/unified ] && ! v2_host; then
    grep -qx 'c 10:200 rw' "/sys/fs/cgroup/devices/$(cgroup_parent)/devx/devices.list"
    # The exec joined the v1 devices cgroup too.
    run $H exec devx -- cat /proc/self/cgroup
    [[ "$output" == *":devices:/$(cgroup_parent)/devx"* ]]
  fi
  $H delete --force devx
  [ ! -e "/sys/fs/cgroup/devices/$(cgroup_parent)/devx" ]
}

@test "kill -9 of hako in the middle of create, then delete --force: no cgroup left" {
  b=$(new_bundle crash)
  limits "$b" 67108864 64
  for point in after-mkdir after-cgroups after-go after-clone after-ready; do
    HAKO_TEST_STALL=$point $H create --bundle "$b" crash & creator=$!
    for i in $(seq 50); do [ -e "$STATE/crash/stalled" ] && break; sleep 0.1; done
    [ -e "$STATE/crash/stalled" ]
    kill -9 $creator
    wait $creator || true
    $H delete --force crash
    [ -z "$(hako_cgroups)" ]
    [ -z "$(leak_report)" ]
  done
}
