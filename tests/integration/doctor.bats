#!/usr/bin/env bats
# hako doctor: what this host can enforce, checked against probes of our own
# (a tiny C program, the filesystems, util-linux's unshare), not against
# values written into the test.

load helpers
bats_require_minimum_version 1.5.0

setup_file () {
  hako_setup_file
  export TOOLS="$BATS_FILE_TMPDIR/tools"
  mkdir -p "$TOOLS"
  cat > "$TOOLS/llabi.c" <<'C'
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>
int main (void)
{
  long v = syscall (SYS_landlock_create_ruleset, NULL, 0, 1U);
  printf ("%ld\n", v < 0 ? 0 : v);
  return 0;
}
C
  gcc -O1 -o "$TOOLS/llabi" "$TOOLS/llabi.c"
}
setup () { hako_setup; }
teardown () { hako_teardown; }

# The cgroup mode as the filesystems say it.
host_cgroup_mode () {
  case "$(stat -f -c %T /sys/fs/cgroup 2>/dev/null)" in
    cgroup2fs) echo v2 ;;
    tmpfs)
      if [ "$(stat -f -c %T /sys/fs/cgroup/unified 2>/dev/null)" = cgroup2fs ]; then echo hybrid; else echo v1; fi ;;
    *) echo none ;;
  esac
}

@test "doctor --format json: one object that jq parses, exit 0, every check and every profile" {
  run $H doctor --format json
  [ "$status" -eq 0 ]
  echo "$output" | jq -e 'type == "object"' >/dev/null
  for k in user_namespaces landlock seccomp cgroup overlay_in_userns syscalls idmapped_mounts cap_sys_resource fork; do
    echo "$output" | jq -e --arg k "$k" '.checks[$k].available | type == "boolean"' >/dev/null
    echo "$output" | jq -e --arg k "$k" '.checks[$k].detail | length > 0' >/dev/null
  done
  for p in default host rootless; do
    echo "$output" | jq -e --arg p "$p" '.profiles[$p].works | type == "boolean"' >/dev/null
    # A profile that fails says what is missing; one that works lists nothing.
    echo "$output" | jq -e --arg p "$p" '.profiles[$p] | (.works and (.missing | length == 0)) or ((.works | not) and (.missing | length > 0))' >/dev/null
  done
  [ "$(echo "$output" | jq -r .kernel)" = "$(uname -r)" ]
}

@test "doctor: the Landlock ABI is the kernel's own answer (7 on this machine)" {
  abi=$("$TOOLS/llabi")
  run $H doctor --format json
  [ "$status" -eq 0 ]
  [ "$(echo "$output" | jq .checks.landlock.abi)" = "$abi" ]
  [ "$(echo "$output" | jq .checks.landlock.available)" = "$([ "$abi" -gt 0 ] && echo true || echo false)" ]
  # The profiles ask for scoped (ABI 6), required: below it they fail closed.
  if [ "$abi" -ge 6 ]; then
    echo "$output" | jq -e '.profiles.default.missing | map(select(test("Landlock"))) | length == 0' >/dev/null
  else
    echo "$output" | jq -e '.profiles.default.works == false' >/dev/null
    echo "$output" | jq -e '.profiles.default.missing | map(select(test("Landlock"))) | length > 0' >/dev/null
  fi
}

@test "doctor: the cgroup mode is what the filesystems say (hybrid on this machine), with the controllers" {
  mode=$(host_cgroup_mode)
  run $H doctor --format json
  [ "$status" -eq 0 ]
  [ "$(echo "$output" | jq -r .checks.cgroup.mode)" = "$mode" ]
  if [ "$mode" = hybrid ] || [ "$mode" = v1 ]; then
    for c in $(ls /sys/fs/cgroup); do
      case $c in memory|pids|freezer|devices|cpuset)
        [ "$(stat -f -c %T /sys/fs/cgroup/$c)" = cgroupfs ] || continue
        echo "$output" | jq -e --arg c "$c" '.checks.cgroup.controllers | index($c) != null' >/dev/null
        # As root, every mounted v1 controller is writable.
        echo "$output" | jq -e --arg c "$c" '.checks.cgroup.writable_controllers | index($c) != null' >/dev/null ;;
      esac
    done
  fi
}

@test "doctor: cgroup moves: favordynmods as the cgroup mounts say, and where to remount when it is not set" {
  run $H doctor --format json
  [ "$status" -eq 0 ]
  echo "$output" | jq .checks.cgroup_moves
  set=false
  # mountinfo: after the " - " field, the type and the super options.
  awk '{ for (i = 7; i < NF; i++) if ($i == "-") { if ($(i + 1) ~ /^cgroup2?$/) print $(i + 3); break } }' \
    /proc/self/mountinfo | tr , '\n' | grep -qx favordynmods && set=true
  [ "$(echo "$output" | jq .checks.cgroup_moves.favordynmods)" = "$set" ]
  [ "$(echo "$output" | jq .checks.cgroup_moves.available)" = "$set" ]
  if [ "$set" = false ]; then
    remount=$(echo "$output" | jq -r .checks.cgroup_moves.remount)
    [ "$(stat -f -c %T "$remount")" = cgroup2fs ] || [ "$(stat -f -c %T "$remount")" = cgroupfs ]
    echo "$output" | jq -e '.checks.cgroup_moves.detail | test("remount,favordynmods")' > /dev/null
  fi
  # Either way, what it costs the host.
  echo "$output" | jq -e '.checks.cgroup_moves.detail | test("fork, exit and exec")' > /dev/null
}

@test "doctor: user namespaces as root and as an ordinary user agree with unshare(1)" {
  run $H doctor --format json
  [ "$status" -eq 0 ]
  root=false; unshare -U -r true 2>/dev/null && root=true
  unpriv=false; runuser -u nobody -- unshare -U -r true 2>/dev/null && unpriv=true
  [ "$(echo "$output" | jq .checks.user_namespaces.available)" = "$root" ]
  [ "$(echo "$output" | jq .checks.user_namespaces.unprivileged)" = "$unpriv" ]
  # Knobs this kernel lacks are null, the others numbers.
  [ "$(echo "$output" | jq .checks.user_namespaces.max_user_namespaces)" = "$(cat /proc/sys/user/max_user_namespaces)" ]
  if [ ! -e /proc/sys/kernel/apparmor_restrict_unprivileged_userns ]; then
    [ "$(echo "$output" | jq .checks.user_namespaces.apparmor_restrict_unprivileged_userns)" = null ]
  fi
  [ "$(echo "$output" | jq .profiles.rootless.works)" = "$unpriv" ]
}

@test "doctor: CAP_SYS_RESOURCE and the syscalls are this process's truth; the probes leave nothing behind" {
  before=$(ls -d /tmp/hako-doctor.* 2>/dev/null | wc -l)
  run $H doctor --format json
  [ "$status" -eq 0 ]
  capeff=$(awk '/^CapEff/ {print $2}' /proc/self/status)
  has=false; (( (16#$capeff >> 24) & 1 )) && has=true
  [ "$(echo "$output" | jq .checks.cap_sys_resource.available)" = "$has" ]
  for s in clone3 pidfd_open openat2 mount_setattr; do
    [ "$(echo "$output" | jq .checks.syscalls.$s)" = true ]
  done
  [ "$(ls -d /tmp/hako-doctor.* 2>/dev/null | wc -l)" = "$before" ]
  run ! grep -q hako-doctor /proc/self/mountinfo
  # As an ordinary user (overlayfs leaves a mode-000 directory behind it),
  # with no $XDG_RUNTIME_DIR: it still runs and still cleans up.
  mkdir -p "$TEST_ROOT/tmp-nobody"
  chown nobody "$TEST_ROOT/tmp-nobody"
  run runuser -u nobody -- env -u XDG_RUNTIME_DIR TMPDIR="$TEST_ROOT/tmp-nobody" $HAKO doctor --format json
  [ "$status" -eq 0 ]
  [ "$(echo "$output" | jq .euid)" = 65534 ]
  [ -z "$(ls -A "$TEST_ROOT/tmp-nobody")" ]
}

@test "doctor: the text report names every item and gives each profile a verdict" {
  run $H doctor
  [ "$status" -eq 0 ]
  for item in "user namespaces" Landlock seccomp cgroups "overlayfs in a user namespace" clone3 pidfd openat2 \
      mount_setattr "idmapped mounts" CAP_SYS_RESOURCE; do
    [[ "$output" == *"$item"* ]] || { echo "missing: $item"; return 1; }
  done
  for p in default host rootless; do
    echo "$output" | grep -Eq "^  $p +(works here|fails: .+)$"
  done
}

@test "doctor: --help, and usage errors exit 125" {
  run $H doctor --help
  [ "$status" -eq 0 ]
  [[ "$output" == *"--format"* ]]
  run $H doctor --format yaml
  [ "$status" -eq 125 ]
  run $H doctor extra
  [ "$status" -eq 125 ]
}

@test "features: the seccomp section (actions, archs, known and supported flags) and idmapped mounts, in the OCI format" {
  run $H features
  [ "$status" -eq 0 ]
  echo "$output" | jq -e '.linux.seccomp.enabled == true' >/dev/null
  for a in SCMP_ACT_ALLOW SCMP_ACT_ERRNO SCMP_ACT_KILL_PROCESS SCMP_ACT_TRAP SCMP_ACT_LOG; do
    echo "$output" | jq -e --arg a "$a" '.linux.seccomp.actions | index($a) != null' >/dev/null
  done
  # NOTIFY needs a listener hako does not have: refused, so not listed.
  echo "$output" | jq -e '.linux.seccomp.actions | index("SCMP_ACT_NOTIFY") == null' >/dev/null
  echo "$output" | jq -e '.linux.seccomp.archs | index("SCMP_ARCH_X86_64") != null and index("SCMP_ARCH_X86") != null' >/dev/null
  echo "$output" | jq -e '.linux.seccomp.knownFlags | index("SECCOMP_FILTER_FLAG_LOG") != null' >/dev/null
  # supportedFlags is a subset of knownFlags.
  echo "$output" | jq -e '(.linux.seccomp.supportedFlags - .linux.seccomp.knownFlags) == []' >/dev/null
  # Idmapped binds ("idmap", "ridmap", a mount's uidMappings): hako-spec(5).
  echo "$output" | jq -e '.linux.mountExtensions.idmap.enabled == true' >/dev/null
  echo "$output" | jq -e '.mountOptions | index("idmap") != null and index("ridmap") != null' >/dev/null
}

@test "features: the Landlock ABI of this kernel, the one hako uses and the one the profiles need, as annotations" {
  abi=$("$TOOLS/llabi")
  run $H features
  [ "$status" -eq 0 ]
  [ "$(echo "$output" | jq -r '.annotations["io.hako.landlock.abi"]')" = "$abi" ]
  [ "$(echo "$output" | jq -r '.annotations["io.hako.landlock.abi.max"]')" = 6 ]
  [ "$(echo "$output" | jq -r '.annotations["io.hako.landlock.abi.profiles"]')" = 6 ]
  [ "$(echo "$output" | jq -r '.annotations["io.hako.landlock.rules"]')" = "fs,tcp_bind,tcp_connect,scoped" ]
  # doctor and features agree.
  [ "$($H doctor --format json | jq .checks.landlock.abi)" = "$abi" ]
}

@test "doctor: per profile, which network modes work for this user and why — each verdict what a real run of the host profile does" {
  run $H doctor --format json
  [ "$status" -eq 0 ]
  report=$output
  for p in default host rootless; do
    for m in none host allowlist; do
      echo "$report" | jq -e --arg p "$p" --arg m "$m" \
        '.profiles[$p].networks[$m] | (.works | type == "boolean") and (.why | length > 0)' >/dev/null
      # A profile that fails here takes every network mode with it.
      echo "$report" | jq -e --arg p "$p" --arg m "$m" \
        '.profiles[$p] | .works or (.networks[$m].works | not)' >/dev/null
    done
  done
  netns=false; unshare -n true 2>/dev/null && netns=true
  [ "$(echo "$report" | jq .checks.network_namespaces.available)" = "$netns" ]
  # The host profile, as root, in each mode.
  for m in none host allowlist; do
    allow=(); [ "$m" = allowlist ] && allow=(--allow 127.0.0.1:9)
    want=$(echo "$report" | jq .profiles.host.networks.$m.works)
    got=false; $H run --rm --profile host --network "$m" "${allow[@]}" "n-$m" -- true && got=true
    echo "network $m: doctor $want, run $got"
    [ "$got" = "$want" ]
  done
  # The text report: one line per mode under each profile.
  run $H doctor
  [ "$status" -eq 0 ]
  for m in none host allowlist; do
    [ "$(echo "$output" | grep -Ec "^ +network $m +(yes|no)  .+")" -eq 3 ]
  done
}

@test "doctor: where no network namespace can be made (user.max_net_namespaces 0 in a user namespace), none and allowlist say no and why, host still works" {
  unshare -U -r true 2>/dev/null || skip "no user namespaces here"
  # The limit is the user namespace's own: the host's stays as it is.
  run unshare -U -r sh -c "echo 0 > /proc/sys/user/max_net_namespaces && ! unshare -n true 2>/dev/null \
    && XDG_RUNTIME_DIR=$TEST_ROOT $HAKO doctor --format json"
  [ "$status" -eq 0 ]
  echo "$output" | jq .checks.network_namespaces
  [ "$(echo "$output" | jq .checks.network_namespaces.available)" = false ]
  echo "$output" | jq -e '.checks.network_namespaces.detail | test("max_net_namespaces is 0")' >/dev/null
  [ "$(echo "$output" | jq .checks.network_namespaces.max_net_namespaces)" = 0 ]
  local p works
  for p in default host rootless; do
    works=$(echo "$output" | jq --arg p "$p" '.profiles[$p].works')
    [ "$(echo "$output" | jq --arg p "$p" '.profiles[$p].networks.host.works')" = "$works" ]
    [ "$(echo "$output" | jq --arg p "$p" '.profiles[$p].networks.none.works')" = false ]
    [ "$(echo "$output" | jq --arg p "$p" '.profiles[$p].networks.allowlist.works')" = false ]
    if [ "$works" = true ]; then
      echo "$output" | jq -e --arg p "$p" '.profiles[$p].networks.none.why | test("max_net_namespaces")' >/dev/null
      echo "$output" | jq -e --arg p "$p" '.profiles[$p].networks.allowlist.why | test("max_net_namespaces")' >/dev/null
    fi
  done
  # At least one profile works there, so the reasons above were checked.
  echo "$output" | jq -e '[.profiles[] | select(.works)] | length > 0' >/dev/null
}
