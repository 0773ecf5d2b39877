# A containerd of one's own, shared by containerd.bats, cri.bats and
# tests/conformance/critest.sh (plain bash: no bats functions here).
#
# The caller sets CT (a directory of its own, made here) and writes
# $CT/config.toml (ctrd_cri_config writes the CRI one); then:
#   ctrd_prepare             CT's directories, ADDR, the snapshotter
#   ctrd_start               containerd in a session of its own, CTRD_PID
#   ctrd_stop NS...          what containerd still holds in NS (tasks,
#                            containers) removed through ctr, containerd
#                            stopped, shims left killed
#   ctrd_cleanup ROOT NS...  mounts under ROOT, the shims' sockets of NS's
#                            tasks, /run/containerd if ctrd_prepare made it
# Each step appends what it had to clean up to CTRD_LEAKS ("kind:name ...").
# containerd keeps two things outside its root and state: the shims'
# sockets in /run/containerd/s (a fixed place in containerd 1.6) and, if
# nothing made it before, /run/containerd itself.

ctrd_here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

ctrd_prepare () {
  ADDR="$CT/ctrd.sock"
  CTRD_LEAKS=""
  CTRD_PID=""
  [ -d /run/containerd ] && CTRD_RUN_WAS_THERE=1 || CTRD_RUN_WAS_THERE=
  mkdir -p "$CT/root" "$CT/state" "$CT/fifo"
  # overlayfs cannot stack on overlayfs (a CI container's /tmp): copies then.
  CONTAINERD_SNAPSHOTTER=${CTRD_SNAPSHOTTER:-overlayfs}
  [ "$(stat -f -c %T "$CT")" = overlayfs ] && CONTAINERD_SNAPSHOTTER=native
  export CONTAINERD_SNAPSHOTTER
}

# ctrd_cri_config HAKO RUNC_ROOT [DEFAULT_HANDLER]: $CT/config.toml from
# tests/cri/containerd-test.toml (handlers hako, the default, and runc), a
# loopback-only CNI network (contrib/kubernetes) in $CT/cni, $CT/cni-bin.
ctrd_cri_config () {
  local hako=$1 runc_root=$2 handler=${3:-hako} contrib
  contrib=$(cd "$ctrd_here/../../contrib/kubernetes" && pwd)
  mkdir -p "$CT/cni" "$CT/cni-bin" "$CT/logs"
  sed -e "s|@CT@|$CT|g" -e "s|@HAKO@|$hako|g" -e "s|@RUNC_ROOT@|$runc_root|g" \
    -e "s|@SNAPSHOTTER@|$CONTAINERD_SNAPSHOTTER|g" \
    -e "s|default_runtime_name = \"hako\"|default_runtime_name = \"$handler\"|" \
    "$ctrd_here/../cri/containerd-test.toml" > "$CT/config.toml"
  cp "$contrib/10-hako-loopback.conflist" "$CT/cni/"
  ln -sf /usr/lib/cni/loopback "$CT/cni-bin/loopback"
  ln -sf "$contrib/hako-loopback" "$CT/cni-bin/hako-loopback"
}

ctrd_start () {
  # Its own session, and none of bats's fds (bats waits for fd 3's writers).
  setsid containerd --config "$CT/config.toml" </dev/null >"$CT/log" 2>&1 3>&- &
  CTRD_PID=$!
  local i
  for i in $(seq 100); do
    ctr --address "$ADDR" version >/dev/null 2>&1 && break
    kill -0 "$CTRD_PID" 2>/dev/null || break
    sleep 0.1
  done
  ctr --address "$ADDR" version >/dev/null 2>&1 || {
    echo "containerd did not start:" >&2; tail -20 "$CT/log" >&2; return 1; }
}

# Running processes (not zombies) whose command line names this containerd's
# socket: its shims.
ctrd_shim_processes () {
  local p s
  for p in $(grep -lzF -f <(printf '%s\n' "$ADDR") /proc/[0-9]*/cmdline 2>/dev/null | cut -d/ -f3); do
    s=$(awk '{print $3}' "/proc/$p/stat" 2>/dev/null) || continue
    case "$s" in Z|X|"") ;; *) echo "$p" ;; esac
  done
}

# The socket a shim for NS/ID listens on: /run/containerd/s/sha256(address/ns/id).
ctrd_shim_socket () {
  echo "/run/containerd/s/$(printf '%s' "$ADDR/$1/$2" | sha256sum | cut -d' ' -f1)"
}

# ctrd_tasks NS: the ids of the tasks containerd ran in NS (its state dir).
ctrd_tasks () { ls "$CT/state/io.containerd.runtime.v2.task/$1" 2>/dev/null; }

ctrd_stop () {
  local ns id i p c="timeout -s KILL 60 ctr --address $ADDR"
  [ -n "${CTRD_PID:-}" ] || return 0
  if kill -0 "$CTRD_PID" 2>/dev/null; then
    # containerd's own way first: kill, delete, remove every task and container.
    for ns in "$@"; do
      for id in $($c -n "$ns" task ls -q 2>/dev/null); do
        CTRD_LEAKS="$CTRD_LEAKS task:${id:0:12}"
        $c -n "$ns" task kill -s KILL "$id" >/dev/null 2>&1
        $c -n "$ns" task delete -f "$id" >/dev/null 2>&1
      done
      for id in $($c -n "$ns" container ls -q 2>/dev/null); do
        CTRD_LEAKS="$CTRD_LEAKS container:${id:0:12}"
        $c -n "$ns" container rm "$id" >/dev/null 2>&1
      done
    done
    kill "$CTRD_PID"
    for i in $(seq 50); do kill -0 "$CTRD_PID" 2>/dev/null || break; sleep 0.1; done
  fi
  kill -9 "$CTRD_PID" 2>/dev/null
  wait "$CTRD_PID" 2>/dev/null
  # Shims outlive containerd by design: any left is a leak (they exit once
  # their task is deleted), then killed.
  p=$(ctrd_shim_processes)
  if [ -n "$p" ]; then
    CTRD_LEAKS="$CTRD_LEAKS shims:$(echo $p | tr ' ' ,)"
    kill -9 $p 2>/dev/null
  fi
  return 0
}

# ctrd_cleanup ROOT NS=IDS...: mounts under ROOT (the snapshotter's, if a
# shim died holding them), the shims' sockets of each NS's task ids (as
# ctrd_tasks listed them before ctrd_stop), /run/containerd if it was made.
ctrd_cleanup () {
  local root=$1 p arg id
  shift
  for p in $(grep " $root" /proc/self/mountinfo | awk '{print $5}' | sort -r); do
    CTRD_LEAKS="$CTRD_LEAKS mount:$p"
    umount -l "$p" 2>/dev/null
  done
  for arg in "$@"; do
    for id in ${arg#*=}; do rm -f "$(ctrd_shim_socket "${arg%%=*}" "$id")"; done
  done
  if [ -z "${CTRD_RUN_WAS_THERE:-}" ]; then
    rmdir /run/containerd/s /run/containerd/fifo /run/containerd 2>/dev/null || true
  fi
  return 0
}
