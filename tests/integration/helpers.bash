# Shared setup for the integration tests: a private state root and data root
# per test, a busybox bundle per file, and leak checks after each test.

fixtures="${FIXTURES:-$BATS_TEST_DIRNAME/../fixtures}"

hako_setup_file () {
  # A sandbox in a user namespace (the host profile's) reaches binds and
  # rootfs dirs made here as an unprivileged host id: let it pass through
  # bats's private temporary directories.
  local d=$BATS_FILE_TMPDIR
  while [ "$d" != / ] && [ "$d" != /tmp ]; do chmod o+x "$d"; d=$(dirname "$d"); done
  export BUNDLE_DIR="$BATS_FILE_TMPDIR/bundle"
  "$fixtures/make-bundle.sh" "$BUNDLE_DIR" runc >/dev/null
}

hako_setup () {
  TEST_ROOT=$(mktemp -d /tmp/hako-it.XXXXXX)
  # Sandboxes in a user namespace pass through here as an unprivileged host id.
  chmod 711 "$TEST_ROOT"
  export TEST_ROOT
  # tests/watchdog.sh removes what is left here if it must kill the file.
  [ -z "${HAKO_IT_ROOTS:-}" ] || echo "$TEST_ROOT" >> "$HAKO_IT_ROOTS"
  export STATE="$TEST_ROOT/state" DATA="$TEST_ROOT/data"
  H="$HAKO --root $STATE --data-root $DATA"
}

# Remove every sandbox the test left, then check nothing leaked.
hako_teardown () {
  local id
  for id in $(ls "$STATE" 2>/dev/null); do
    $H delete --force "$id" >/dev/null 2>&1 || true
  done
  local leaks
  leaks=$(leak_report)
  rm -rf "$TEST_ROOT"
  if [ -n "$leaks" ]; then
    echo "leaked: $leaks" >&2
    return 1
  fi
}

# Anything under TEST_ROOT that outlived its sandbox: mounts, processes whose
# root is there, state directories, data directories.
leak_report () {
  local out=""
  if grep -q " $TEST_ROOT" /proc/self/mountinfo; then
    out="$out mounts:$(grep " $TEST_ROOT" /proc/self/mountinfo | awk '{print $5}' | tr '\n' ' ')"
  fi
  # One find, not a readlink per process: forking one for each of the
  # host's processes took seconds per test on a loaded machine.
  local p
  for p in $(find /proc/[0-9]*/root -maxdepth 0 -lname "*$TEST_ROOT*" 2>/dev/null); do
    p=${p#/proc/}
    out="$out process:${p%/root}"
  done
  # hako's own processes for this state root (a sandbox's monitor) whose
  # root is the host's: given a moment, since a monitor killed with the hako
  # that forked it (kill -9 during create) dies asynchronously.
  local i hp
  for i in $(seq 20); do
    hp=$(hako_processes)
    [ -z "$hp" ] && break
    sleep 0.1
  done
  [ -n "$hp" ] && out="$out hako-process:$(echo $hp)"
  if [ -n "$(ls -A "$STATE" 2>/dev/null)" ]; then
    out="$out state:$(ls "$STATE" | tr '\n' ' ')"
  fi
  if [ -n "$(ls -A "$DATA/sandboxes" 2>/dev/null)" ]; then
    out="$out data:$(ls "$DATA/sandboxes" | tr '\n' ' ')"
  fi
  # Disk limits (hako-spec(5), sandbox.limits.disk): images and loop devices.
  if [ -n "$(ls -A "$DATA/disks" 2>/dev/null)" ]; then
    out="$out disks:$(ls "$DATA/disks" | tr '\n' ' ')"
  fi
  # An autoclear loop device is detached by the kernel shortly after its
  # last close (the unmount), not at it: given a moment, as the monitor is.
  if ! loop_gone "$TEST_ROOT"; then
    out="$out loop:$(losetup -a | grep -F "$TEST_ROOT" | cut -d: -f1 | tr '\n' ' ')"
  fi
  local cg
  cg=$(ls -d /sys/fs/cgroup/"$(cgroup_parent)" /sys/fs/cgroup/*/"$(cgroup_parent)" 2>/dev/null)
  if [ -n "$cg" ]; then
    out="$out cgroups:$(echo $cg)"
  fi
  echo "$out"
}

# loop_gone PATH: no loop device's backing file is under PATH, within 5 s.
loop_gone () {
  local i
  for i in $(seq 50); do
    losetup -a 2>/dev/null | grep -qF "$1" || return 0
    sleep 0.1
  done
  return 1
}

# Processes with this test's state root as an argument (a zombie's command
# line is empty).  The pattern comes from a file so that grep is not one.
hako_processes () {
  grep -lzxF -f <(printf '%s\n' "$STATE") /proc/[0-9]*/cmdline 2>/dev/null | cut -d/ -f3
}

# The parent of this test's sandboxes' cgroups in every hierarchy:
# hako-HASH, HASH the FNV-1a of the state root (see hako-spec(5)).  hako
# removes it with its last sandbox, so any left is a leak.
cgroup_parent () {
  local s=$STATE h=2166136261 i c
  for ((i = 0; i < ${#s}; i++)); do
    printf -v c '%d' "'${s:i:1}"
    h=$(( ((h ^ c) * 16777619) & 0xffffffff ))
  done
  printf 'hako-%08x' "$h"
}

# A copy of the busybox bundle whose config.json the test may edit.
new_bundle () {
  local dir="$TEST_ROOT/bundle-$1"
  mkdir -p "$dir"
  ln -s "$BUNDLE_DIR/rootfs" "$dir/rootfs"
  cp "$BUNDLE_DIR/config.json" "$dir/config.json"
  echo "$dir"
}

# set_args BUNDLE ARG...: replace process.args in BUNDLE/config.json.
set_args () {
  local dir=$1; shift
  local args
  args=$(printf '%s\n' "$@" | jq -R . | jq -s -c .)
  jq --argjson a "$args" '.process.args = $a' "$dir/config.json" > "$dir/config.json.new"
  mv "$dir/config.json.new" "$dir/config.json"
}

# edit_config BUNDLE JQ-FILTER
edit_config () {
  jq "$2" "$1/config.json" > "$1/config.json.new" && mv "$1/config.json.new" "$1/config.json"
}

# wait_status ID STATUS: poll `state` for up to 5 s.
wait_status () {
  local i
  for i in $(seq 50); do
    [ "$($H state "$1" 2>/dev/null | jq -r .status)" = "$2" ] && return 0
    sleep 0.1
  done
  echo "sandbox $1 never reached $2: $($H state "$1" 2>&1)" >&2
  return 1
}

# wait_for SECONDS CMD...: run CMD every 0.05 s until it succeeds, and fail,
# saying what it waited for, after SECONDS: a wait on the event itself, not
# a sleep that guesses how long the event takes on a loaded machine.
wait_for () {
  local end=$((SECONDS + $1))
  shift
  until "$@"; do
    [ "$SECONDS" -lt "$end" ] || { echo "waited in vain for: $*" >&2; return 1; }
    sleep 0.05
  done
}

# catches PID SIGNUM: process PID has a handler for signal SIGNUM (its
# SigCgt bit), i.e. its trap is set and a test may send the signal.
catches () {
  local m
  m=$(awk '/^SigCgt:/ { print $2 }' "/proc/$1/status" 2>/dev/null)
  [ -n "$m" ] && (( (16#$m >> ($2 - 1)) & 1 ))
}

# pid_gone PID: the process is gone or a zombie nobody reaped yet (on hosts
# whose pid 1 does not reap, a killed sandbox process lingers as a zombie).
pid_gone () {
  local i state
  for i in $(seq 50); do
    state=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) || return 0
    case "$state" in Z|X|"") return 0 ;; esac
    sleep 0.1
  done
  echo "process $1 is still alive (state $state)" >&2
  return 1
}

# The busybox image fixtures (tests/fixtures/images.sh busybox) in $IMG:
# layers, layouts and archives, built once per file (setup_file).
image_fixtures () {
  export IMG="$BATS_FILE_TMPDIR/img"
  "$fixtures/images.sh" busybox "$IMG" >/dev/null
}

# A trust policy that accepts any image, in $TEST_ROOT/accept.json.
accept_policy () {
  echo '{"default": [{"type": "insecureAcceptAnything"}]}' > "$TEST_ROOT/accept.json"
}

# The fixtures' busybox layout (image_fixtures) imported as "busybox" under
# that policy.
import_busybox () {
  accept_policy
  $H image import --policy "$TEST_ROOT/accept.json" "$IMG/layout" --name busybox >/dev/null
}

# ia32_emulation: whether this kernel runs i386 syscalls (int 0x80), asked
# before any int 0x80 (which takes SIGSEGV without it): the kernel registers
# abi.vsyscall32 only with CONFIG_IA32_EMULATION, ia32_emulation= on its
# command line turns that off at boot, and HAKO_TEST_NO_IA32=1 forces "no".
# Then the probe itself (needs $TOOLS/probe, as seccomp.bats builds it).
# IA32_MISSING says why not.
ia32_emulation () {
  IA32_MISSING="no IA32 emulation in this kernel"
  if [ "$(uname -m)" != x86_64 ]; then IA32_MISSING="not x86_64"; return 1; fi
  [ "${HAKO_TEST_NO_IA32:-}" != 1 ] || { IA32_MISSING="$IA32_MISSING (HAKO_TEST_NO_IA32=1)"; return 1; }
  [ -e /proc/sys/abi/vsyscall32 ] || return 1
  if grep -Eq '(^| )ia32_emulation=[0nNfF]' /proc/cmdline; then
    IA32_MISSING="$IA32_MISSING (ia32_emulation= on the kernel command line)"; return 1
  fi
  [ "$("$TOOLS/probe" int80 2>&1)" = ok ]
}

# peak_rss_below KIB FILE: the peak RSS that /usr/bin/time -f %M wrote to
# FILE is under KIB.  A memory bound measured under a sanitizer measures the
# sanitizer (ASan's shadow and quarantine are tens of MiB), so the sanitizer
# slice (HAKO_SANITIZED=1, set by tests/run.sh) checks correctness only.
peak_rss_below () {
  echo "peak RSS $(cat "$2") KiB (bound $1 KiB${HAKO_SANITIZED:+, not checked under sanitizers})"
  [ -n "${HAKO_SANITIZED:-}" ] || [ "$(cat "$2")" -lt "$1" ]
}
