#!/usr/bin/env bats
# How a sandbox's process ended (the monitor of detached sandboxes), stop,
# and start again on the same filesystem.

load helpers
bats_require_minimum_version 1.5.0

setup_file () { hako_setup_file; }
setup () { hako_setup; }
teardown () { hako_teardown; }

# ended ID: "exitStatus signal reason" of a stopped sandbox, waiting for it.
ended () {
  wait_status "$1" stopped
  $H state "$1" | jq -r '"\(.exitStatus) \(.signal) \(.reason)"'
}

monitor_of () { cut -d' ' -f1 "$STATE/$1/monitor"; }

@test "detached: a process that exits 3 reads exitStatus 3, reason exited" {
  b=$(new_bundle ex)
  set_args "$b" sh -c 'exit 3'
  $H create --bundle "$b" ex
  # The monitor, not the sandbox's process, is hako's; it is not dumpable.
  mon=$(monitor_of ex)
  [ "$(awk '/^PPid/ {print $2}' "/proc/$($H state ex | jq -r .pid)/status")" = "$mon" ]
  [ "$(stat -c %U "/proc/$mon/mem")" = root ]
  run ! grep -q "^TracerPid:[[:space:]]*[1-9]" "/proc/$mon/status"
  $H start ex
  [ "$(ended ex)" = "3 null exited" ]
  pid_gone "$mon"
  # run --detach the same way.
  $H run --detach --bundle "$b" ex2
  [ "$(ended ex2)" = "3 null exited" ]
}

@test "detached: killed with hako kill ID KILL reads signal 9, reason signaled" {
  b=$(new_bundle sig)
  set_args "$b" sleep 1000
  $H run --detach --bundle "$b" sig
  $H kill sig KILL
  [ "$(ended sig)" = "137 9 signaled" ]
  [ "$($H list --format json | jq -r '.[0].status')" = stopped ]
}

@test "detached: killed by the OOM killer under a 64 MiB limit reads reason oom" {
  b=$(new_bundle oom)
  edit_config "$b" '.linux.resources.memory = {"limit": 67108864}'
  set_args "$b" sh -c 'x=$(head -c 268435456 /dev/zero | tr "\0" a); echo survived'
  $H run --detach --bundle "$b" oom
  for i in $(seq 100); do [ "$($H state oom | jq -r .status)" = stopped ] && break; sleep 0.2; done
  [ "$(ended oom)" = "137 9 oom" ]
  # A foreground run records the same way.
  run $H run --bundle "$b" oomfg
  [ "$status" -eq 137 ]
  [ "$(ended oomfg)" = "137 9 oom" ]
}

@test "\$(hako create ...) and \$(hako run --detach ...) do not wait for the sandbox" {
  b=$(new_bundle sub)
  set_args "$b" sh -c 'exec </dev/null >/dev/null 2>&1; sleep 1000'
  # The sandbox's process keeps create's stdio until it starts (runc does
  # the same); the monitor keeps no fd of the caller's.
  out=$(timeout 10 $H create --bundle "$b" sub1 3>&1 >/dev/null 2>&1; echo "rc=$?")
  [ "$out" = "rc=0" ]
  out=$(timeout 10 $H run --detach --bundle "$b" sub2; echo "rc=$?")
  [ "$out" = "rc=0" ]
  [ "$($H state sub2 | jq -r .status)" = running ]
  for fd in /proc/"$(monitor_of sub2)"/fd/*; do
    case "$(readlink "$fd")" in /dev/null) ;; *) echo "monitor holds $fd: $(readlink "$fd")"; false ;; esac
  done
}

@test "delete leaves no monitor behind" {
  b=$(new_bundle dm)
  set_args "$b" sleep 1000
  $H run --detach --bundle "$b" dm
  $H create --bundle "$b" dm2
  m1=$(monitor_of dm) m2=$(monitor_of dm2)
  kill -0 "$m1"
  kill -0 "$m2"
  $H delete --force dm
  $H delete dm2
  pid_gone "$m1"
  pid_gone "$m2"
  [ -z "$(hako_processes)" ]
}

@test "stop: a process ignoring TERM is killed after --time" {
  b=$(new_bundle ign)
  set_args "$b" sh -c 'trap "" TERM; sleep 1000'
  $H run --detach --bundle "$b" ign
  pid=$($H state ign | jq -r .pid)
  t0=$(date +%s%N)
  $H stop --time 1s ign
  ms=$(( ($(date +%s%N) - t0) / 1000000 ))
  [ "$ms" -ge 900 ]
  [ "$ms" -lt 5000 ]
  pid_gone "$pid"
  [ "$($H state ign | jq -r '"\(.status) \(.signal) \(.reason)"')" = "stopped 9 signaled" ]
  # The filesystem and state stay; stop again is a no-op.
  [ -e "$STATE/ign/config.json" ]
  $H stop ign
  # (Not `run`: the restarted process has start's stdio, as create's has create's.)
  $H start ign
  [ "$($H state ign | jq -r .status)" = running ]
  run $H start ign
  [ "$status" -eq 125 ]
}

@test "stop: a process that handles TERM ends promptly" {
  b=$(new_bundle term)
  set_args "$b" sh -c 'trap "exit 7" TERM; sleep 1000 & wait'
  $H run --detach --bundle "$b" term
  wait_for 10 catches "$($H state term | jq -r .pid)" 15
  t0=$(date +%s%N)
  $H stop term
  ms=$(( ($(date +%s%N) - t0) / 1000000 ))
  [ "$ms" -lt 3000 ]
  [ "$($H state term | jq -r '"\(.status) \(.exitStatus) \(.reason)"')" = "stopped 7 exited" ]
}

@test "stop then start: a file written in the rootfs is there, with a new pid" {
  b=$(new_bundle rs)
  mkdir "$TEST_ROOT/rootfs"
  cp -a "$BUNDLE_DIR/rootfs/." "$TEST_ROOT/rootfs/"
  rm "$b/rootfs" && ln -s "$TEST_ROOT/rootfs" "$b/rootfs"
  edit_config "$b" '.root.readonly = false'
  set_args "$b" sh -c 'echo $(cat /count 2>/dev/null)x > /count; sleep 1000'
  $H run --detach --bundle "$b" rs
  for i in $(seq 50); do [ -s "$TEST_ROOT/rootfs/count" ] && break; sleep 0.1; done
  pid1=$($H state rs | jq -r .pid)
  created=$($H state rs | jq -r .created)
  $H stop --time 200ms rs
  [ "$($H state rs | jq -r .status)" = stopped ]
  [ "$(cat "$TEST_ROOT/rootfs/count")" = x ]
  $H start rs
  for i in $(seq 50); do [ "$(cat "$TEST_ROOT/rootfs/count")" = xx ] && break; sleep 0.1; done
  [ "$(cat "$TEST_ROOT/rootfs/count")" = xx ]
  pid2=$($H state rs | jq -r .pid)
  [ "$pid2" != "$pid1" ]
  kill -0 "$pid2"
  pid_gone "$pid1"
  [ "$($H state rs | jq -r .created)" = "$created" ]
  [ "$($H state rs | jq -r .bundle)" = "$b" ]
  # Its limits' cgroups are there again, and gone with delete.
  $H delete --force rs
  [ -z "$(leak_report)" ]
}

@test "stop then start: the host profile keeps /work; a created or paused sandbox stops too" {
  $H run --detach --profile host hw -- sh -c 'echo $$ > /work/pid; date +%s%N >> /work/runs; sleep 1000'
  for i in $(seq 50); do [ -s "$DATA/sandboxes/hw/work/pid" ] && break; sleep 0.1; done
  $H stop -t 100ms hw
  [ "$(wc -l < "$DATA/sandboxes/hw/work/runs")" -eq 1 ]
  $H start hw
  for i in $(seq 50); do [ "$(wc -l < "$DATA/sandboxes/hw/work/runs")" -eq 2 ] && break; sleep 0.1; done
  [ "$(wc -l < "$DATA/sandboxes/hw/work/runs")" -eq 2 ]
  # Paused: killed and thawed.
  $H pause hw
  $H stop hw
  [ "$($H state hw | jq -r '"\(.status) \(.signal)"')" = "stopped 9" ]
  # Created: its waiting process is killed at once.
  b=$(new_bundle cr)
  $H create --bundle "$b" cr
  pid=$($H state cr | jq -r .pid)
  t0=$(date +%s%N)
  $H stop cr
  [ $(( ($(date +%s%N) - t0) / 1000000 )) -lt 3000 ]
  pid_gone "$pid"
  [ "$($H state cr | jq -r .status)" = stopped ]
  $H start cr
  [ "$(ended cr)" = "0 null exited" ]
}

@test "a failed restart leaves the sandbox stopped and deletable" {
  b=$(new_bundle fr)
  set_args "$b" sleep 1000
  $H run --detach --bundle "$b" fr
  $H stop -t 100ms fr
  # The rootfs is gone: the restart cannot build the root.
  rm "$b/rootfs"
  run $H start fr
  [ "$status" -eq 125 ]
  [[ "$output" == *"start fr"* ]]
  [ "$($H state fr | jq -r .status)" = stopped ]
  $H delete fr
  [ -z "$(leak_report)" ]
}

@test "--no-monitor: the caller's subreaper gets the process; state says stopped, no reason" {
  [ -n "${SUBREAPER:-}" ] && [ -x "$SUBREAPER" ] || skip "SUBREAPER (tests/integration/subreaper) not built"
  b=$(new_bundle nm)
  set_args "$b" sleep 1000
  run "$SUBREAPER" sh -c "
    $H create --no-monitor --bundle '$b' nm >/dev/null 2>&1 </dev/null || exit 1
    [ ! -e '$STATE/nm/monitor' ] || exit 2
    $H start nm || exit 3
    pid=\$($H state nm | jq -r .pid)
    echo \"sandbox \$pid parent \$(awk '/^PPid/ {print \$2}' /proc/\$pid/status)\"
    $H kill nm KILL"
  [ "$status" -eq 0 ]
  reaper=$(echo "$output" | awk '/^subreaper/ {print $2}')
  pid=$(echo "$output" | awk '/^sandbox/ {print $2}')
  # Once create has exited, the process belongs to the subreaper.
  [ "$(echo "$output" | awk '/^sandbox/ {print $4}')" = "$reaper" ]
  [[ "$output" == *"reaped $pid signaled 9"* ]]
  [ "$($H state nm | jq -r '"\(.status) \(.reason)"')" = "stopped null" ]
  # run --detach --no-monitor likewise, and it restarts without a monitor.
  run "$SUBREAPER" sh -c "$H run --detach --no-monitor --bundle '$b' nm2 </dev/null >/dev/null 2>&1 && $H stop -t 100ms nm2"
  [ "$status" -eq 0 ]
  [[ "$output" == *"reaped"*"signaled 9"* ]]
  [ "$($H state nm2 | jq -r .status)" = stopped ]
}

@test "create --pid-file under a subreaper parent runs no monitor: the subreaper reaps the process, as conmon does" {
  [ -n "${SUBREAPER:-}" ] && [ -x "$SUBREAPER" ] || skip "SUBREAPER (tests/integration/subreaper) not built"
  b=$(new_bundle sr)
  set_args "$b" sleep 1000
  # hako is the subreaper's own child, as it is conmon's.
  "$SUBREAPER" $H create --bundle "$b" --pid-file "$TEST_ROOT/pid" sr > "$TEST_ROOT/reaper.out" 2>&1 </dev/null &
  reaper=$!
  for i in $(seq 50); do [ -s "$TEST_ROOT/pid" ] && break; sleep 0.1; done
  pid=$(cat "$TEST_ROOT/pid")
  [ ! -e "$STATE/sr/monitor" ]
  [ -e "$STATE/sr/no-monitor" ]
  $H start sr
  [ "$(awk '/^PPid/ {print $2}' "/proc/$pid/status")" = "$reaper" ]
  $H kill sr KILL
  wait "$reaper"
  grep -q "reaped $pid signaled 9" "$TEST_ROOT/reaper.out"
  [ "$($H state sr | jq -r '"\(.status) \(.reason)"')" = "stopped null" ]
  $H delete sr
  # A parent that is not a subreaper gets a monitor.
  $H create --bundle "$b" --pid-file "$TEST_ROOT/pid2" sr2
  [ -e "$STATE/sr2/monitor" ]
  $H start sr2
  $H kill sr2 KILL
  wait_status sr2 stopped
  for i in $(seq 50); do [ "$($H state sr2 | jq -r .reason)" = signaled ] && break; sleep 0.1; done
  [ "$($H state sr2 | jq -r .reason)" = signaled ]
  $H delete sr2
}

@test "20 sandboxes created, started, stopped, started again and deleted leave no cgroup and no process" {
  b=$(new_bundle many)
  edit_config "$b" '.linux.resources.memory = {"limit": 67108864} | .linux.resources.pids = {"limit": 64}'
  set_args "$b" sleep 1000
  for i in $(seq 20); do $H create --bundle "$b" "m$i"; done
  for i in $(seq 20); do $H start "m$i"; done
  for i in $(seq 20); do $H stop -t 0 "m$i"; done
  # Stopped sandboxes keep no cgroup.
  [ -z "$(ls -d /sys/fs/cgroup/*/"$(cgroup_parent)"/m* /sys/fs/cgroup/"$(cgroup_parent)"/m* 2>/dev/null)" ]
  for i in $(seq 20); do $H start "m$i"; done
  [ "$($H list --format json | jq '[.[] | select(.status == "running")] | length')" -eq 20 ]
  for i in $(seq 20); do $H delete --force "m$i"; done
  [ -z "$(leak_report)" ]
}
