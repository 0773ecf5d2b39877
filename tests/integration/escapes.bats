#!/usr/bin/env bats
# Known escapes, each attempted from a hostile rootfs or from inside, and
# named after the CVE or the attack it represents.  The other named escape
# tests: isolation.bats (CVE-2019-5736, CVE-2024-21626, CVE-2021-30465),
# seccomp.bats (mount, unshare -U, keyctl, bpf, io_uring, personality) and
# landlock.bats (writes, TCP ports, signals and abstract sockets outside).

load helpers
bats_require_minimum_version 1.5.0

# A static unix-socket probe: "listen PATH" serves PATH (mode 0660, as
# docker.sock), "connect PATH" prints "ok" or the errno's name.
sock_source='
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
int main (int argc, char **argv)
{
  if (argc != 3)
    return 2;
  struct sockaddr_un a = { .sun_family = AF_UNIX };
  snprintf (a.sun_path, sizeof a.sun_path, "%s", argv[2]);
  int s = socket (AF_UNIX, SOCK_STREAM, 0);
  if (strcmp (argv[1], "connect") == 0)
    {
      int r = connect (s, (struct sockaddr *) &a, sizeof a);
      printf ("%s\n", r == 0 ? "ok" : strerrorname_np (errno));
      return r == 0 ? 0 : 1;
    }
  if (bind (s, (struct sockaddr *) &a, sizeof a) < 0 || chmod (argv[2], 0660) < 0 || listen (s, 8) < 0)
    return 1;
  printf ("listening\n");
  fflush (stdout);
  for (;;)
    close (accept (s, NULL, NULL));
}
'

# A static program to make setuid-root: its effective uid, and CapEff.
ids_source='
#include <stdio.h>
#include <string.h>
#include <unistd.h>
int main (void)
{
  char line[256];
  FILE *f = fopen ("/proc/self/status", "r");
  printf ("euid=%d\n", (int) geteuid ());
  while (f && fgets (line, sizeof line, f))
    if (strncmp (line, "CapEff:", 7) == 0 || strncmp (line, "CapPrm:", 7) == 0)
      fputs (line, stdout);
  return 0;
}
'

setup_file () {
  hako_setup_file
  export TOOLS="$BATS_FILE_TMPDIR/tools"
  mkdir -p "$TOOLS"
  printf '%s' "$sock_source" > "$TOOLS/sock.c"
  gcc -static -O1 -o "$TOOLS/sock" "$TOOLS/sock.c"
  printf '%s' "$ids_source" > "$TOOLS/ids.c"
  gcc -static -O1 -o "$TOOLS/ids" "$TOOLS/ids.c"
  chmod 755 "$TOOLS" "$TOOLS/sock" "$TOOLS/ids"
}
setup () {
  hako_setup
  BG_PIDS=""
}
teardown () {
  local p
  for p in $BG_PIDS; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  hako_teardown
}

# own_rootfs_bundle NAME: a bundle with a private copy of the busybox rootfs
# (the test may plant things in it) and runc's config.
own_rootfs_bundle () {
  local b="$TEST_ROOT/$1"
  mkdir -p "$b"
  cp -a "$BUNDLE_DIR/rootfs" "$b/rootfs"
  cp "$BUNDLE_DIR/config.json" "$b/config.json"
  echo "$b"
}

# bundle_dev BUNDLE: the rootfs's own /dev instead of a tmpfs, as some
# bundles have it — so what the image put in /dev is what the sandbox gets.
bundle_dev () {
  edit_config "$1" '.mounts |= map(select(.destination != "/dev"))'
}

@test "CVE-2025-31133: /dev/null planted as a symlink to a host file, or as a plain file, before masked paths: create fails closed" {
  echo secret > "$TEST_ROOT/host-secret"
  for plant in "symlink:$TEST_ROOT/host-secret" "symlink:/etc/passwd" "symlink:../etc/passwd" "file:"; do
    b=$(own_rootfs_bundle "null-${plant%%:*}-$RANDOM")
    bundle_dev "$b"
    rm -f "$b/rootfs/dev/null"
    case $plant in
      symlink:*) ln -s "${plant#symlink:}" "$b/rootfs/dev/null" ;;
      file:) echo not-null > "$b/rootfs/dev/null" ;;
    esac
    passwd_before=$(sha256sum < "$b/rootfs/etc/passwd")
    set_args "$b" sh -c 'echo RAN; cat /proc/keys | wc -c'
    run $H run --rm --bundle "$b" nullbox
    echo "$plant: $status: $output"
    [ "$status" -eq 125 ]
    [[ "$output" != *RAN* ]]
    [[ "$output" == *"masked path"* ]]
    [ ! -e "$STATE/nullbox" ]
    [ "$(cat "$TEST_ROOT/host-secret")" = secret ]
    [ "$(sha256sum < "$b/rootfs/etc/passwd")" = "$passwd_before" ]
    run ! grep -qE "host-secret|/etc/passwd" /proc/self/mountinfo
  done
  # Control: the same bundle with the real null device masks /proc/keys.
  b=$(own_rootfs_bundle null-real)
  bundle_dev "$b"
  rm -f "$b/rootfs/dev/null"
  mknod -m 666 "$b/rootfs/dev/null" c 1 3
  set_args "$b" sh -c 'cat /proc/keys | wc -c'
  run $H run --rm --bundle "$b" nullbox
  [ "$status" -eq 0 ]
  [ "$output" = 0 ]
}

@test "CVE-2025-52565: a /dev/console planted as a symlink to a host file mounts nothing on the host" {
  echo console-original > "$TEST_ROOT/host-console"
  b=$(own_rootfs_bundle console)
  bundle_dev "$b"
  rm -f "$b/rootfs/dev/null" "$b/rootfs/dev/console"
  mknod -m 666 "$b/rootfs/dev/null" c 1 3
  ln -s "$TEST_ROOT/host-console" "$b/rootfs/dev/console"
  set_args "$b" sh -c '(echo pwned > /dev/console) 2>/dev/null; awk "\$5 == \"/dev/console\"" /proc/self/mountinfo | wc -l; echo done'
  run $H run --rm --bundle "$b" console
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *done* ]]
  # Nothing was mounted at /dev/console inside, and the symlink resolved
  # inside the root: the host file is neither mounted nor written.
  [ "${lines[0]}" = 0 ]
  [ "$(cat "$TEST_ROOT/host-console")" = console-original ]
  ! grep -q host-console /proc/self/mountinfo
}

@test "CVE-2025-52881: a sysctl write redirected by a bind over its /proc file: 125, the host file untouched" {
  echo decoy > "$TEST_ROOT/decoy"
  b=$(new_bundle sysctl-bind)
  edit_config "$b" '.linux.sysctl = {"net.ipv4.ip_forward": "1"}
    | .mounts += [{"destination": "/proc/sys/net/ipv4/ip_forward", "type": "bind", "source": "'"$TEST_ROOT/decoy"'", "options": ["bind"]}]'
  run $H run --rm --bundle "$b" sysbind
  echo "$output"
  [ "$status" -eq 125 ]
  [[ "$output" == *"sysctl net.ipv4.ip_forward"*"covered by another mount"* ]]
  [ "$(cat "$TEST_ROOT/decoy")" = decoy ]
  [ ! -e "$STATE/sysbind" ]
}

@test "CVE-2025-52881: /proc replaced by a bind of a fake directory or by a symlink: sysctl and oom_score_adj writes refused" {
  mkdir -p "$TEST_ROOT/fakeproc/sys/net/ipv4" "$TEST_ROOT/fakeproc/self"
  echo decoy > "$TEST_ROOT/fakeproc/sys/net/ipv4/ip_forward"
  echo decoy > "$TEST_ROOT/fakeproc/self/oom_score_adj"
  # A directory bound over the sandbox's /proc.
  b=$(new_bundle fakeproc)
  edit_config "$b" '.linux.sysctl = {"net.ipv4.ip_forward": "1"}
    | .mounts += [{"destination": "/proc", "type": "bind", "source": "'"$TEST_ROOT/fakeproc"'", "options": ["rbind"]}]'
  run $H run --rm --bundle "$b" fakeproc
  echo "$output"
  [ "$status" -eq 125 ]
  [[ "$output" == *"not the root of a procfs"* ]]
  edit_config "$b" 'del(.linux.sysctl) | .process.oomScoreAdj = 100'
  run $H run --rm --bundle "$b" fakeproc
  [ "$status" -eq 125 ]
  [[ "$output" == *"oom_score_adj"*"not the root of a procfs"* ]]
  [ "$(cat "$TEST_ROOT/fakeproc/sys/net/ipv4/ip_forward")" = decoy ]
  [ "$(cat "$TEST_ROOT/fakeproc/self/oom_score_adj")" = decoy ]
  # An image whose /proc is a symlink: procfs lands where it points (inside
  # the root), and writes through /proc are refused rather than followed.
  b=$(own_rootfs_bundle proclink)
  rmdir "$b/rootfs/proc"
  mkdir "$b/rootfs/elsewhere"
  ln -s /elsewhere "$b/rootfs/proc"
  edit_config "$b" '.linux.sysctl = {"net.ipv4.ip_forward": "1"}'
  run $H run --rm --bundle "$b" proclink
  echo "$output"
  [ "$status" -eq 125 ]
  [[ "$output" == *"sysctl net.ipv4.ip_forward"* ]]
  [ ! -e "$STATE/proclink" ]
}

@test "/sys/firmware, /proc/kcore and /proc/keys unreadable; /proc/sysrq-trigger and /proc/sys not writable (default and host profiles)" {
  # Every write below is an open for writing that writes nothing: if a
  # layer failed, the host would still be unharmed.
  script='ls -A /sys/firmware 2>/dev/null | wc -l
    cat /proc/kcore 2>/dev/null | wc -c
    cat /proc/keys 2>/dev/null | wc -c
    (: > /proc/sysrq-trigger) 2>/dev/null && echo SYSRQ-WRITABLE
    (: > /proc/sys/kernel/panic) 2>/dev/null && echo SYS-WRITABLE
    (: > /proc/sys/vm/drop_caches) 2>/dev/null && echo SYS-WRITABLE
    echo end'
  b="$TEST_ROOT/default-profile"
  mkdir -p "$b"
  ln -s "$BUNDLE_DIR/rootfs" "$b/rootfs"
  $HAKO spec --bundle "$b"
  set_args "$b" sh -c "${script//$'\n'/;}"
  run $H run --rm --bundle "$b" prof-default
  [ "$status" -eq 0 ]
  [ "$(echo "$output" | tr '\n' ' ')" = "0 0 0 end " ]
  cd "$TEST_ROOT"
  run $H run --rm prof-host -- sh -c "$script"
  [ "$status" -eq 0 ]
  [ "$(echo "$output" | tr '\n' ' ')" = "0 0 0 end " ]
  # The host has what was hidden (else the test proves little).
  [ -n "$(ls -A /sys/firmware)" ] || [ -s /proc/keys ]
}

@test "a setuid-root binary gains a non-root user nothing: euid and CapEff unchanged under no_new_privs" {
  b=$(own_rootfs_bundle suid)
  cp "$TOOLS/ids" "$b/rootfs/bin/suid-ids"
  chown 0:0 "$b/rootfs/bin/suid-ids"
  chmod 4755 "$b/rootfs/bin/suid-ids"
  edit_config "$b" '.process.user = {"uid": 1000, "gid": 1000}'
  set_args "$b" sh -c '/bin/suid-ids | tr -s "\t" " "; grep NoNewPrivs /proc/self/status | tr -s "\t" " "'
  run $H run --rm --bundle "$b" suid
  echo "$output"
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = euid=1000 ]
  [[ "$output" == *"CapPrm: 0000000000000000"* ]]
  [[ "$output" == *"CapEff: 0000000000000000"* ]]
  [[ "$output" == *"NoNewPrivs: 1"* ]]
  # Control: without no_new_privs the same binary does make the user root,
  # so the bit and the mount are real and no_new_privs is what stopped it.
  edit_config "$b" '.process.noNewPrivileges = false'
  run $H run --rm --bundle "$b" suid
  echo "$output"
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = euid=0 ]
}

@test "a non-root process has CapEff, CapPrm, CapInh and CapAmb 0, and CapBnd 0 when the spec bounds nothing" {
  b=$(new_bundle nonroot)
  edit_config "$b" '.process.user = {"uid": 1000, "gid": 1000}'
  set_args "$b" sh -c 'grep -E "^Cap" /proc/self/status | tr -s "\t" " "'
  run $H run --rm --bundle "$b" nonroot
  [ "$status" -eq 0 ]
  for set in CapInh CapPrm CapEff CapAmb; do
    [[ "$output" == *"$set: 0000000000000000"* ]]
  done
  # runc's default bounding set stays as the spec says (it grants nothing to
  # a non-root process under no_new_privs) ...
  [[ "$output" == *"CapBnd: 0000000020000420"* ]]
  # ... and a spec that bounds nothing leaves nothing.
  edit_config "$b" '.process.capabilities = {"bounding": [], "effective": [], "permitted": []}'
  run $H run --rm --bundle "$b" nonroot
  [ "$status" -eq 0 ]
  for set in CapInh CapPrm CapEff CapAmb CapBnd; do
    [[ "$output" == *"$set: 0000000000000000"* ]]
  done
}

@test "host sockets under /run (docker.sock, D-Bus): the profiles bind no /run, and a bound-in root socket is refused to the user namespace" {
  # Neither profile shows any of the host's /run.
  for p in default host; do
    mkdir -p "$TEST_ROOT/spec-$p"
    $HAKO spec --profile "$p" --bundle "$TEST_ROOT/spec-$p"
    jq -e '[.mounts[] | select((.source // "" | startswith("/run")) or (.destination | startswith("/run")))] | length == 0' \
      "$TEST_ROOT/spec-$p/config.json" >/dev/null
  done
  # A root-owned 0660 socket, as docker.sock, in a host directory.
  mkdir -p "$TEST_ROOT/hostrun"
  chmod 755 "$TEST_ROOT/hostrun"
  "$TOOLS/sock" listen "$TEST_ROOT/hostrun/docker.sock" > "$TEST_ROOT/sock.out" &
  BG_PIDS="$BG_PIDS $!"
  for i in $(seq 50); do [ -S "$TEST_ROOT/hostrun/docker.sock" ] && break; sleep 0.1; done
  # Control: on the host it answers.
  [ "$("$TOOLS/sock" connect "$TEST_ROOT/hostrun/docker.sock")" = ok ]
  # The host profile with that directory bound in read-only at /run/host.
  b="$TEST_ROOT/spec-host"
  edit_config "$b" '.mounts += [{"destination": "/run/host", "type": "bind", "source": "'"$TEST_ROOT/hostrun"'", "options": ["rbind", "ro"]},
      {"destination": "/tools", "type": "bind", "source": "'"$TOOLS"'", "options": ["rbind", "ro"]}]'
  set_args "$b" sh -c 'ls /run; /tools/sock connect /run/host/docker.sock; ls /run/dbus /var/run 2>&1 | head -1'
  run $H run --rm --bundle "$b" sockbox
  echo "$output"
  [ "${lines[0]}" = host ]
  [ "${lines[1]}" = EACCES ]
  [[ "${lines[2]}" == *"No such file"* ]]
}
