#!/usr/bin/env bats
# containerd drives hako through its runc shim (containerd-shim-runc-v2):
# ctr run --rm, exit codes, run -d, task exec, ps, pause/resume, kill,
# delete, terminals.
#
# Each test starts a containerd of its own (containerd.bash): its socket, --root, --state, fifo
# dir and the runtime's --root (ctr --runc-root) under the test's TEST_ROOT,
# no CRI and nothing that needs a network, and a namespace of its own, so the
# cgroupsPath the shim passes ("/NAMESPACE/ID", cgroupfs) is the test's too.
# The shim calls hako directly (ctr --runc-binary): --root, --log
# --log-format json, create --bundle --pid-file, start, state, ps --format
# json, exec --process --detach --pid-file, pause, resume, kill [--all],
# delete [--force].  The snapshotter is overlayfs (native where the test's
# directory is on overlayfs itself; CTRD_SNAPSHOTTER overrides).  Two things
# containerd keeps outside its --state are cleaned up by the teardown: the
# shims' sockets in /run/containerd/s (a fixed place in containerd 1.6) and,
# if the test made it, /run/containerd.

load helpers
load containerd

setup_file () {
  hako_setup_file
  command -v containerd >/dev/null && command -v ctr >/dev/null \
    && command -v containerd-shim-runc-v2 >/dev/null || return 0
  "$fixtures/images.sh" busybox "$BATS_FILE_TMPDIR/img" >/dev/null
}

setup () {
  for t in containerd ctr containerd-shim-runc-v2; do
    command -v $t >/dev/null || skip "$t is not installed (Debian package containerd)"
  done
  hako_setup
  CT="$TEST_ROOT/ctrd"
  NS="hako-${TEST_ROOT##*.}"
  ctrd_prepare
  # hako's state root is the shim's --root: <runc-root>/<namespace>.
  STATE="$TEST_ROOT/runc/$NS"
  H="$HAKO --root $STATE --data-root $DATA"
  cat > "$CT/config.toml" <<EOF
version = 2
root = "$CT/root"
state = "$CT/state"
disabled_plugins = ["io.containerd.grpc.v1.cri", "io.containerd.snapshotter.v1.aufs",
  "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.devmapper",
  "io.containerd.snapshotter.v1.zfs", "io.containerd.tracing.processor.v1.otlp",
  "io.containerd.internal.v1.tracing"]
[grpc]
  address = "$ADDR"
[ttrpc]
  address = "$ADDR.ttrpc"
[plugins."io.containerd.internal.v1.opt"]
  path = "$CT/opt"
EOF
  ctrd_start
  C -n "$NS" image import --base-name hako.test/busybox "$BATS_FILE_TMPDIR/img/oci.tar" >/dev/null
  IMG=hako.test/busybox:latest
  RUNC=(--runc-binary "$HAKO" --runc-root "$TEST_ROOT/runc")
}

# ctr on this test's containerd and namespace, bounded so that a hang fails
# the test instead of the suite.
C () { timeout -s KILL 30 ctr --address "$ADDR" "$@"; }
K () { C -n "$NS" "$@"; }

shim_socket () { ctrd_shim_socket "$NS" "$1"; }
shim_processes () { ctrd_shim_processes; }

# The shim's log of hako's errors (--log BUNDLE/log.json --log-format json).
shim_log () { cat "$CT/state/io.containerd.runtime.v2.task/$NS/$1/log.json" 2>/dev/null; }

teardown () {
  [ -n "${CT:-}" ] || return 0
  local leaks="" ids id i p
  ids=$( (ctrd_tasks "$NS"; ls "$STATE" 2>/dev/null) | sort -u)
  # containerd's own way first: kill, delete, remove every task and
  # container; what a failed test left there is not counted, shims are.
  ctrd_stop "$NS"
  for p in $CTRD_LEAKS; do
    case $p in shims:*) leaks="$leaks $p" ;; esac
  done
  # What hako still holds (the hako_teardown below checks the rest).
  for id in $(ls "$STATE" 2>/dev/null); do
    leaks="$leaks state:$id"
    $H delete --force "$id" >/dev/null 2>&1
  done
  CTRD_LEAKS=""
  ctrd_cleanup "$TEST_ROOT" "$NS=$ids"
  leaks="$leaks$CTRD_LEAKS"
  # hako's cgroups below the namespace's parent, which it made as runc
  # does (and, as runc, does not remove).
  for p in /sys/fs/cgroup/*/"$NS" /sys/fs/cgroup/unified/"$NS"; do
    [ -d "$p" ] || continue
    for i in "$p"/*/; do [ -d "$i" ] && { leaks="$leaks cgroup:$i"; rmdir "$i" 2>/dev/null; }; done
    rmdir "$p" 2>/dev/null
  done
  if [ -n "$leaks" ]; then
    echo "containerd left:$leaks" >&2
    tail -20 "$CT/log" >&2
  fi
  hako_teardown || return 1
  [ -z "$leaks" ]
}

@test "ctr run --rm: the command's output and exit code, nothing left after" {
  run K run "${RUNC[@]}" --fifo-dir "$CT/fifo" --rm "$IMG" c1 echo hi
  [ "$status" -eq 0 ]
  [ "$output" = hi ]
  run K run "${RUNC[@]}" --fifo-dir "$CT/fifo" --rm "$IMG" c1 sh -c 'echo out; exit 3'
  [ "$status" -eq 3 ]
  [ "$output" = out ]
  # The image's environment and working directory reach the process.
  run K run "${RUNC[@]}" --fifo-dir "$CT/fifo" --rm "$IMG" c1 sh -c 'echo "$GREETING $(pwd)"'
  [ "$output" = "hi /srv" ]
  # A command that cannot be executed fails create, as runc's does, with
  # hako's message, and leaves no container.
  run K run "${RUNC[@]}" --fifo-dir "$CT/fifo" --rm "$IMG" c1 nosuchcmd
  [ "$status" -ne 0 ]
  [[ "$output" == *"OCI runtime create failed: create c1: exec nosuchcmd: executable file not found"* ]]
  [ -z "$(ls "$STATE")" ]
  [ -z "$(K container ls -q)" ]
  [ ! -e "$(shim_socket c1)" ]
}

@test "ctr run -d, task exec, ps, pause/resume, kill, delete, container rm" {
  K run "${RUNC[@]}" --fifo-dir "$CT/fifo" --memory-limit 67108864 -d "$IMG" c2 \
    sh -c 'trap "exit 0" TERM; sleep 1000 & wait'
  pid=$(K task ls | awk '$1 == "c2" {print $2}')
  [ "$(K task ls | awk '$1 == "c2" {print $3}')" = RUNNING ]
  [ "$($H state c2 | jq -r '"\(.status) \(.pid)"')" = "running $pid" ]
  # The shim's cgroupsPath /NAMESPACE/ID (cgroupfs), on cgroup2 and (hybrid
  # and legacy hosts) the v1 memory hierarchy; the shim's metrics read it.
  if [ -e /sys/fs/cgroup/cgroup.controllers ] || [ -d /sys/fs/cgroup/unified ]; then
    grep -qx "0::/$NS/c2" "/proc/$pid/cgroup"
  fi
  if [ -d /sys/fs/cgroup/memory ]; then
    grep -qx "[0-9]*:memory:/$NS/c2" "/proc/$pid/cgroup"
    [ "$(cat "/sys/fs/cgroup/memory/$NS/c2/memory.limit_in_bytes")" = 67108864 ]
    [ "$(K task metrics c2 | awk '$1 == "memory.limit_in_bytes" {print $2}')" = 67108864 ]
    # Every v1 controller has the task's own cgroup (as runc makes them), so
    # the metrics are the task's, not the host's: its processes, as ps counts them.
    grep -qx "[0-9]*:pids:/$NS/c2" "/proc/$pid/cgroup"
    grep -qx "[0-9]*:cpuacct:/$NS/c2" "/proc/$pid/cgroup"
    [ "$(K task metrics c2 | awk '$1 == "pids.current" {print $2}')" = "$($H ps --format json c2 | jq length)" ]
  else
    [ "$(cat "/sys/fs/cgroup/$NS/c2/memory.max")" = 67108864 ]
  fi
  # The pid file held the sandbox's own process, and the shim (a subreaper)
  # is its parent, as with runc: no hako process stays between the two.
  shim=$(awk '/^PPid/ {print $2}' "/proc/$pid/status")
  [[ "$(tr '\0' ' ' < "/proc/$shim/cmdline")" == *containerd-shim-runc-v2*"-id c2"* ]]
  [ -z "$(hako_processes)" ]

  run K task exec --fifo-dir "$CT/fifo" --exec-id x1 c2 sh -c 'echo "pid 1: $(cat /proc/1/comm)"; cat /etc/hako-image; exit 4'
  [ "$status" -eq 4 ]
  [ "${lines[0]}" = "pid 1: sh" ]
  [ "${lines[1]}" = "from the top layer" ]
  run K task exec --fifo-dir "$CT/fifo" --exec-id x2 c2 nosuchcmd
  [ "$status" -ne 0 ]
  [[ "$output" == *"executable file not found"* ]]
  # hako's error reached the shim as runc's do: a JSON line in its --log.
  shim_log c2 | tail -1 | jq -e '.level == "error" and (.msg | test("exec c2: .*nosuchcmd")) and .time' >/dev/null

  # ps: the shim parses `hako ps --format json` (runc's array of pids).
  run K task ps c2
  [ "$status" -eq 0 ]
  [ "$(echo "$output" | awk 'NR > 1 {print $1}' | sort -n | tr '\n' ' ')" = \
    "$($H ps --format json c2 | jq -r 'sort | map(tostring) | join(" ")') " ]
  [[ "$output" == *"$pid"* ]]

  K task pause c2
  [ "$(K task ls | awk '$1 == "c2" {print $3}')" = PAUSED ]
  [ "$($H state c2 | jq -r .status)" = paused ]
  K task resume c2
  [ "$(K task ls | awk '$1 == "c2" {print $3}')" = RUNNING ]
  [ "$($H state c2 | jq -r .status)" = running ]

  K task kill c2
  for i in $(seq 50); do [ "$(K task ls | awk '$1 == "c2" {print $3}')" = STOPPED ] && break; sleep 0.1; done
  [ "$(K task ls | awk '$1 == "c2" {print $3}')" = STOPPED ]
  [ "$($H state c2 | jq -r .status)" = stopped ]
  pid_gone "$pid"
  run K task delete c2
  [ "$status" -eq 0 ]
  [ -z "$(ls "$STATE")" ]
  K container rm c2
  [ -z "$(K container ls -q)" ]
  [ -z "$(shim_processes)" ]
  # hako's cgroups for /NAMESPACE/c2 went with the sandbox.
  [ -z "$(ls -d /sys/fs/cgroup/*/"$NS"/c2 2>/dev/null)" ]
}

@test "ctr task kill --all reaches exec'd processes; delete -f of a paused task" {
  K run "${RUNC[@]}" --fifo-dir "$CT/fifo" -d "$IMG" c3 sleep 1000
  pid=$(K task ls | awk '$1 == "c3" {print $2}')
  K task exec --fifo-dir "$CT/fifo" -d --exec-id bg c3 sleep 999
  for i in $(seq 50); do [ "$($H ps --format json c3 | jq length)" -ge 2 ] && break; sleep 0.1; done
  pids=$($H ps --format json c3 | jq -r '.[]')
  [ "$(echo $pids | wc -w)" -eq 2 ]
  # sleep is pid 1 of its namespace: TERM is ignored; KILL to all.
  K task kill --all -s KILL c3
  for p in $pids; do pid_gone "$p"; done
  for i in $(seq 50); do [ "$(K task ls | awk '$1 == "c3" {print $3}')" = STOPPED ] && break; sleep 0.1; done
  [ "$(K task ls | awk '$1 == "c3" {print $3}')" = STOPPED ]
  K task delete c3
  K container rm c3

  # A paused task: kill -9 reaches it (the freezer is thawed for it), and a
  # forced delete removes it.
  K run "${RUNC[@]}" --fifo-dir "$CT/fifo" -d "$IMG" c4 sleep 1000
  pid=$(K task ls | awk '$1 == "c4" {print $2}')
  K task pause c4
  [ "$($H state c4 | jq -r .status)" = paused ]
  run K task delete -f c4
  [ "$status" -eq 0 ]
  pid_gone "$pid"
  [ -z "$(ls "$STATE")" ]
  K container rm c4
  [ -z "$(shim_processes)" ]
}

@test "ctr run -t and task exec -t: a terminal through --console-socket" {
  command -v script >/dev/null || skip "script(1) is not installed (util-linux)"
  # ctr wants a terminal of its own for -t: script gives it one.
  run script -qec "ctr --address '$ADDR' -n '$NS' run --runc-binary '$HAKO' --runc-root '$TEST_ROOT/runc' --fifo-dir '$CT/fifo' --rm -t '$IMG' c5 sh -c 'tty; echo ok'" /dev/null </dev/null
  [ "$status" -eq 0 ]
  [[ "$output" == *"/dev/pts/0"* ]]
  [[ "$output" == *ok* ]]
  K run "${RUNC[@]}" --fifo-dir "$CT/fifo" -d "$IMG" c6 sleep 1000
  run script -qec "ctr --address '$ADDR' -n '$NS' task exec --fifo-dir '$CT/fifo' -t --exec-id t1 c6 sh -c 'tty; exit 5'" /dev/null </dev/null
  [ "$status" -eq 5 ]
  [[ "$output" == *"/dev/pts/"* ]]
  K task kill -s KILL c6
  for i in $(seq 50); do [ "$(K task ls | awk '$1 == "c6" {print $3}')" = STOPPED ] && break; sleep 0.1; done
  K task delete c6
  K container rm c6
  [ -z "$(ls "$STATE")" ]
}
