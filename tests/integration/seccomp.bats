#!/usr/bin/env bats
# seccomp, attacked from inside: each test is a thing untrusted code tries
# that hako's default filter (the host and default profiles) must stop; a
# control runs the same probes in the same sandbox without the filter, so an
# EPERM is known to be the filter's.  Then filters from a bundle's
# config.json: enforced as written, refused with 125 when malformed.

load helpers

# A static probe, mounted read-only at /tools: one precise syscall, and the
# errno name it got ("ok" on success).
probe_source='
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/io_uring.h>
#include <linux/perf_event.h>
#include <linux/sched.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static int report (long r)
{
  printf ("%s\n", r >= 0 ? "ok" : strerrorname_np (errno));
  return r >= 0 ? 0 : 1;
}

/* A child made by clone or clone3 leaves at once; the parent reaps it. */
static long reaped (long pid)
{
  if (pid == 0)
    _exit (0);
  if (pid > 0)
    waitpid (pid, NULL, 0);
  return pid;
}

static void *thread_main (void *arg) { return arg; }

int main (int argc, char **argv)
{
  if (argc < 2)
    return 2;
  const char *op = argv[1];
  if (!strcmp (op, "mount"))
    return report (mount ("none", "/no-such-dir", "tmpfs", 0, NULL));
  if (!strcmp (op, "umount"))
    return report (umount2 ("/no-such-dir", 0));
  if (!strcmp (op, "chroot"))
    return report (chroot ("/no-such-dir"));
  if (!strcmp (op, "fsopen"))
    return report (syscall (SYS_fsopen, "tmpfs", 0));
  if (!strcmp (op, "unshare-user"))
    return report (unshare (CLONE_NEWUSER));
  if (!strcmp (op, "setns"))
    return report (setns (-1, 0));
  if (!strcmp (op, "clone-newuser"))
    return report (reaped (syscall (SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0)));
  if (!strcmp (op, "clone3"))
    {
      struct clone_args ca = { .exit_signal = SIGCHLD };
      return report (reaped (syscall (SYS_clone3, &ca, sizeof ca)));
    }
  if (!strcmp (op, "thread"))
    {
      pthread_t t;
      errno = pthread_create (&t, NULL, thread_main, NULL);
      return report (errno ? -1 : pthread_join (t, NULL));
    }
  if (!strcmp (op, "keyctl")) /* KEYCTL_GET_KEYRING_ID of the session keyring */
    return report (syscall (SYS_keyctl, 0, -3, 1, 0, 0));
  if (!strcmp (op, "add_key"))
    return report (syscall (SYS_add_key, "user", "hako", "x", 1, -2));
  if (!strcmp (op, "bpf"))
    {
      union bpf_attr a = { .map_type = BPF_MAP_TYPE_ARRAY, .key_size = 4, .value_size = 4,
                           .max_entries = 1 };
      return report (syscall (SYS_bpf, BPF_MAP_CREATE, &a, sizeof a));
    }
  if (!strcmp (op, "io_uring"))
    {
      struct io_uring_params p = { 0 };
      return report (syscall (SYS_io_uring_setup, 4, &p));
    }
  if (!strcmp (op, "perf"))
    {
      struct perf_event_attr a = { .type = PERF_TYPE_SOFTWARE, .size = sizeof a,
                                   .config = PERF_COUNT_SW_TASK_CLOCK, .exclude_kernel = 1 };
      return report (syscall (SYS_perf_event_open, &a, 0, -1, -1, 0));
    }
  if (!strcmp (op, "userfaultfd")) /* UFFD_USER_MODE_ONLY: allowed unprivileged */
    return report (syscall (SYS_userfaultfd, 1));
  if (!strcmp (op, "handle"))
    {
      struct { struct file_handle h; char buf[128]; } fh = { .h.handle_bytes = 128 };
      int mnt;
      return report (name_to_handle_at (AT_FDCWD, "/", &fh.h, &mnt, 0));
    }
  if (!strcmp (op, "ptrace"))
    {
      pid_t pid = fork ();
      if (pid == 0)
        {
          pause ();
          _exit (0);
        }
      long r = ptrace (PTRACE_SEIZE, pid, 0, 0);
      int e = errno;
      kill (pid, SIGKILL);
      waitpid (pid, NULL, 0);
      errno = e;
      return report (r);
    }
  if (!strcmp (op, "personality") && argc == 3)
    return report (personality (strtoul (argv[2], NULL, 0)));
  if (!strcmp (op, "x32")) /* getpid through the x32 ABI */
    return report (syscall (0x40000000 | SYS_getpid));
#ifdef __x86_64__
  if (!strcmp (op, "int80")) /* getpid through the i386 ABI */
    {
      long ret;
      __asm__ volatile ("int $0x80" : "=a"(ret) : "a"(20L) : "memory");
      errno = ret < 0 ? -ret : 0;
      return report (ret < 0 ? -1 : ret);
    }
#endif
  return 2;
}
'

setup_file () {
  hako_setup_file
  export TOOLS="$BATS_FILE_TMPDIR/tools"
  mkdir -p "$TOOLS"
  printf '%s' "$probe_source" > "$TOOLS/probe.c"
  gcc -static -O1 -pthread -o "$TOOLS/probe" "$TOOLS/probe.c"
  # tests/helpers/sockfam (static, built by make check): socket families.
  local sockfam=${HAKO_TEST_HELPERS:-$(dirname "$HAKO")/tests/helpers}/sockfam
  if [ -x "$sockfam" ]; then cp "$sockfam" "$TOOLS/sockfam"; fi
}
setup () { hako_setup; }
teardown () { hako_teardown; }

# sc_bundle NAME [JQ]: the host profile as a bundle, with the probe at
# /tools, edited by JQ (e.g. 'del(.linux.seccomp)').
sc_bundle () {
  local b="$TEST_ROOT/bundle-$1"
  mkdir -p "$b"
  $HAKO spec --profile host --bundle "$b" >/dev/null
  edit_config "$b" ".mounts += [{\"destination\": \"/tools\", \"type\": \"bind\", \"source\": \"$TOOLS\",
      \"options\": [\"rbind\", \"ro\"]}] ${2:+| $2}"
  echo "$b"
}

# probe BUNDLE OP [ARG]: the probe's answer inside a sandbox from BUNDLE,
# or "status=N" when it did not get to answer (killed); stderr is left to bats.
probe () {
  local b=$1; shift
  $H run --rm --bundle "$b" "p$RANDOM" -- sh -c '/tools/probe "$@" || { s=$?; [ $s -eq 1 ] || echo status=$s; }' \
    sh "$@"
}

# ---- hako's default filter ------------------------------------------------------

@test "seccomp: spec --profile default and host carry hako's deny-list for the native architecture only" {
  for p in default host; do
    mkdir -p "$TEST_ROOT/$p"
    $H spec --profile "$p" --bundle "$TEST_ROOT/$p"
    c="$TEST_ROOT/$p/config.json"
    [ "$(jq -r .linux.seccomp.defaultAction "$c")" = SCMP_ACT_ALLOW ]
    [ "$(jq -c .linux.seccomp.architectures "$c")" = '["SCMP_ARCH_X86_64"]' ] || [ "$(uname -m)" != x86_64 ]
    for s in mount umount2 pivot_root unshare setns keyctl bpf io_uring_setup ptrace kexec_load open_by_handle_at; do
      jq -e --arg s "$s" '[.linux.seccomp.syscalls[] | select(.action == "SCMP_ACT_ERRNO" and .errnoRet == 1)
        | .names[]] | index($s) != null' "$c" >/dev/null
    done
    [ "$(jq -r '.linux.seccomp.syscalls[] | select(.names == ["clone3"]) | .errnoRet' "$c")" = 38 ]
    [ "$(jq -r '.linux.seccomp.syscalls[] | select(.names == ["socket", "socketpair"]) | .errnoRet' "$c")" = 97 ]
  done
}

@test "seccomp: a host-profile sandbox runs under a filter; programs, pipes, fork and threads still work" {
  cd "$TEST_ROOT"
  run $H run --rm plain -- sh -c 'grep "^Seccomp:" /proc/self/status; ls /usr | grep -c bin; echo a b | wc -w; cat /etc/os-release | head -1 >/dev/null && echo cat-ok'
  [ "$status" -eq 0 ]
  [[ "${lines[0]}" == "Seccomp:"*"2" ]]
  [ "${lines[2]}" = 2 ]
  [ "${lines[3]}" = cat-ok ]
  b=$(sc_bundle thr)
  # glibc's pthread_create tries clone3 first: ENOSYS makes it fall back to clone.
  [ "$(probe "$b" thread)" = ok ]
}

@test "seccomp: control — without the filter the same probes get through, so the EPERMs below are the filter's" {
  b=$(sc_bundle nofilter 'del(.linux.seccomp)')
  [ "$(probe "$b" unshare-user)" = ok ]
  [ "$(probe "$b" clone-newuser)" = ok ]
  [ "$(probe "$b" clone3)" = ok ]
  [ "$(probe "$b" keyctl)" = ok ]
  [ "$(probe "$b" ptrace)" = ok ]
  [ "$(probe "$b" personality 0x0040000)" = ok ]
  [ "$(probe "$b" handle)" = ok ]
  [ "$(probe "$b" userfaultfd)" = ok ]
  [ "$(probe "$b" mount)" = ENOENT ]
  [ "$(probe "$b" chroot)" = ENOENT ]
  [ "$(probe "$b" setns)" = EBADF ]
  if [ "$(cat /proc/sys/kernel/io_uring_disabled 2>/dev/null || echo 0)" = 0 ]; then
    [ "$(probe "$b" io_uring)" = ok ]
  fi
}

@test "seccomp: mount, umount, chroot and the new mount API are EPERM (remount or reveal the host's mounts)" {
  b=$(sc_bundle mnt)
  [ "$(probe "$b" mount)" = EPERM ]
  [ "$(probe "$b" umount)" = EPERM ]
  [ "$(probe "$b" chroot)" = EPERM ]
  [ "$(probe "$b" fsopen)" = EPERM ]
  cd "$TEST_ROOT"
  run $H run --rm m -- sh -c 'mount -t tmpfs none /tmp'
  [ "$status" -ne 0 ]
}

@test "seccomp: unshare -U is EPERM (a user namespace would give root inside the capabilities the sandbox dropped)" {
  unshare -U true   # the control: here, as anywhere on this host, it works
  cd "$TEST_ROOT"
  run $H run --rm u -- unshare -U true
  [ "$status" -ne 0 ]
  [[ "$output" == *"Operation not permitted"* ]]
  b=$(sc_bundle us)
  [ "$(probe "$b" unshare-user)" = EPERM ]
  [ "$(probe "$b" setns)" = EPERM ]
}

@test "seccomp: clone(CLONE_NEWUSER) is EPERM, clone3 is ENOSYS (namespaces through clone, past an unshare rule)" {
  b=$(sc_bundle cl)
  [ "$(probe "$b" clone-newuser)" = EPERM ]
  [ "$(probe "$b" clone3)" = ENOSYS ]
}

@test "seccomp: keyctl and add_key are EPERM (the kernel keyring is not namespaced: read or plant host keys)" {
  b=$(sc_bundle key)
  [ "$(probe "$b" keyctl)" = EPERM ]
  [ "$(probe "$b" add_key)" = EPERM ]
}

@test "seccomp: bpf and perf_event_open are EPERM (kernel attack surface: verifier and perf exploits)" {
  b=$(sc_bundle bpf)
  [ "$(probe "$b" bpf)" = EPERM ]
  [ "$(probe "$b" perf)" = EPERM ]
}

@test "seccomp: a raw io_uring_setup is EPERM (io_uring runs syscalls the filter never sees)" {
  b=$(sc_bundle uring)
  [ "$(probe "$b" io_uring)" = EPERM ]
}

@test "seccomp: userfaultfd is EPERM (stalls kernel copies at will: the race half of many exploits)" {
  b=$(sc_bundle uffd)
  [ "$(probe "$b" userfaultfd)" = EPERM ]
}

@test "seccomp: name_to_handle_at is EPERM (file handles reach files past the root: the shocker escape)" {
  b=$(sc_bundle hdl)
  [ "$(probe "$b" handle)" = EPERM ]
}

@test "seccomp: ptrace of another process in the sandbox is EPERM" {
  b=$(sc_bundle pt)
  [ "$(probe "$b" ptrace)" = EPERM ]
}

@test "seccomp: personality tricks are EPERM (ADDR_NO_RANDOMIZE, READ_IMPLIES_EXEC, MMAP_PAGE_ZERO); PER_LINUX, PER_LINUX32 and the query work" {
  b=$(sc_bundle pers)
  [ "$(probe "$b" personality 0x0040000)" = EPERM ]   # ADDR_NO_RANDOMIZE
  [ "$(probe "$b" personality 0x0400000)" = EPERM ]   # READ_IMPLIES_EXEC
  [ "$(probe "$b" personality 0x0100000)" = EPERM ]   # MMAP_PAGE_ZERO
  [ "$(probe "$b" personality 0x0040008)" = EPERM ]   # PER_LINUX32 | ADDR_NO_RANDOMIZE
  [ "$(probe "$b" personality 0)" = ok ]
  [ "$(probe "$b" personality 8)" = ok ]
  [ "$(probe "$b" personality 0xffffffff)" = ok ]
  cd "$TEST_ROOT"
  run $H run --rm s -- setarch -R true
  [ "$status" -ne 0 ]
}

@test "seccomp: a syscall through the x32 ABI kills the process (another syscall table, past the native rules)" {
  b=$(sc_bundle x32)
  [ "$(probe "$b" x32)" = status=159 ]   # 128 + SIGSYS
}

@test "seccomp: a syscall through the i386 ABI (int 0x80) kills the process" {
  ia32_emulation || skip "$IA32_MISSING"
  b=$(sc_bundle i386)
  [ "$(probe "$b" int80)" = status=159 ]
}

# ---- socket families -------------------------------------------------------------

# What the default filter refuses (hako-spec(5)): every family but unix, inet,
# inet6, netlink and packet, and the netlink protocols that reach host state.
REFUSED_FAMILIES="AF_VSOCK AF_KEY AF_BLUETOOTH AF_CAN AF_RDS AF_TIPC AF_ATMPVC AF_ATMSVC AF_IRDA AF_NFC AF_LLC
  AF_PPPOX AF_ISDN AF_IEEE802154 AF_CAIF AF_ALG AF_XDP AF_SMC AF_MCTP AF_QIPCRTR AF_KCM AF_RXRPC AF_AX25
  AF_IPX AF_APPLETALK AF_NETROM AF_X25 AF_ROSE AF_DECnet AF_PHONET AF_IUCV AF_IB AF_MPLS AF_BRIDGE
  AF_SECURITY AF_ASH AF_ECONET AF_SNA AF_WANPIPE AF_NETBEUI AF_UNSPEC socketpair:AF_VSOCK socketpair:AF_TIPC"
REFUSED_NETLINK="NETLINK_SELINUX NETLINK_ISCSI NETLINK_AUDIT NETLINK_CONNECTOR NETLINK_KOBJECT_UEVENT
  NETLINK_SCSITRANSPORT NETLINK_RDMA NETLINK_CRYPTO NETLINK_SMC NETLINK_FIREWALL NETLINK_NFLOG NETLINK_IP6_FW
  NETLINK_DNRTMSG NETLINK_ECRYPTFS"
ALLOWED_SOCKETS="AF_UNIX AF_INET AF_INET6 AF_NETLINK NETLINK_ROUTE NETLINK_SOCK_DIAG NETLINK_GENERIC
  socketpair:AF_UNIX"

# sockfam BUNDLE [RUN-FLAGS...] -- NAME...: the helper's "NAME RESULT" lines
# from inside a sandbox of BUNDLE.
sockfam () {
  local b=$1; shift
  local flags=()
  while [ "$1" != -- ]; do flags+=("$1"); shift; done
  shift
  $H run --rm "${flags[@]}" --bundle "$b" "s$RANDOM" -- /tools/sockfam "$@"
}

# check_refused OUTPUT: every line says EAFNOSUPPORT.
check_refused () {
  local bad
  bad=$(echo "$1" | grep -v ' EAFNOSUPPORT$' || true)
  [ -z "$bad" ] || { echo "not refused: $bad"; return 1; }
}

@test "seccomp: socket families no network namespace isolates are EAFNOSUPPORT (AF_VSOCK reaches the hypervisor)" {
  [ -x "$TOOLS/sockfam" ] || skip "tests/helpers/sockfam not built (make check builds it)"
  b=$(sc_bundle fam)
  # The control: without the filter, which of them this kernel would open.
  c=$(sc_bundle famc 'del(.linux.seccomp)')
  run sockfam "$c" -- $REFUSED_FAMILIES $REFUSED_NETLINK
  [ "$status" -eq 0 ]
  echo "without the filter: $(echo "$output" | grep -cv ' EAFNOSUPPORT$') of them get past EAFNOSUPPORT"
  echo "$output" | grep -v ' EAFNOSUPPORT$' || true
  run sockfam "$b" -- $REFUSED_FAMILIES $REFUSED_NETLINK
  [ "$status" -eq 0 ]
  [ "${#lines[@]}" -eq "$(echo $REFUSED_FAMILIES $REFUSED_NETLINK | wc -w)" ]
  check_refused "$output"
  # Sharing the host's network namespace changes nothing.
  run sockfam "$b" --network host -- $REFUSED_FAMILIES $REFUSED_NETLINK
  [ "$status" -eq 0 ]
  check_refused "$output"
}

@test "seccomp: unix, inet, inet6 and netlink route sockets still open; ip reads links and routes" {
  [ -x "$TOOLS/sockfam" ] || skip "tests/helpers/sockfam not built (make check builds it)"
  b=$(sc_bundle famok)
  run sockfam "$b" -- $ALLOWED_SOCKETS
  [ "$status" -eq 0 ]
  bad=$(echo "$output" | grep -v ' ok$' || true)
  [ -z "$bad" ]
  [ "${#lines[@]}" -eq "$(echo $ALLOWED_SOCKETS | wc -w)" ]
  run $H run --rm --bundle "$b" ipr -- sh -c 'ip -o link show lo && ip -o addr show lo && ip route show table local'
  [ "$status" -eq 0 ]
  [[ "$output" == *"lo"*"127.0.0.1"* ]]
}

@test "seccomp: the default profile refuses the same families in a busybox root" {
  [ -x "$TOOLS/sockfam" ] || skip "tests/helpers/sockfam not built (make check builds it)"
  b="$TEST_ROOT/bundle-dflt"
  mkdir -p "$b"
  $H spec --profile default --bundle "$b" >/dev/null
  ln -s "$BUNDLE_DIR/rootfs" "$b/rootfs"
  edit_config "$b" ".mounts += [{\"destination\": \"/tools\", \"type\": \"bind\", \"source\": \"$TOOLS\",
      \"options\": [\"rbind\", \"ro\"]}]"
  run $H run --rm --bundle "$b" dflt -- /tools/sockfam $REFUSED_FAMILIES $REFUSED_NETLINK
  [ "$status" -eq 0 ]
  check_refused "$output"
  run $H run --rm --bundle "$b" dflt2 -- /tools/sockfam AF_UNIX AF_INET AF_INET6 NETLINK_ROUTE
  [ "$status" -eq 0 ]
  [ "$(echo "$output" | grep -c ' ok$')" -eq 4 ]
}

# ---- filters from a bundle --------------------------------------------------------

# Everything busybox's sh and a few applets use, but mkdir.
ALLOW_LIST='["access","arch_prctl","brk","chdir","clone","close","dup2","dup3","execve","exit","exit_group",
  "fcntl","fstat","futex","getcwd","getdents64","getegid","geteuid","getgid","getpgrp","getpid","getppid",
  "getrandom","getuid","ioctl","kill","lseek","madvise","mmap","mprotect","munmap","newfstatat","openat",
  "pipe","pipe2","prctl","pread64","prlimit64","read","readlink","rseq","rt_sigaction","rt_sigprocmask",
  "rt_sigreturn","sendfile","set_robust_list","set_tid_address","setpgid","stat","lstat","statx","uname",
  "vfork","wait4","write","writev","no_such_syscall_in_any_kernel"]'

@test "seccomp: a bundle's allow-list (defaultAction ERRNO) is enforced; unknown syscall names are skipped" {
  b=$(new_bundle allow)
  edit_config "$b" ".linux.seccomp = {\"defaultAction\": \"SCMP_ACT_ERRNO\", \"defaultErrnoRet\": 1,
    \"architectures\": [\"SCMP_ARCH_X86_64\"],
    \"syscalls\": [{\"names\": $ALLOW_LIST, \"action\": \"SCMP_ACT_ALLOW\"}]}"
  set_args "$b" sh -c 'echo in; mkdir /mnt/x || echo mkdir-denied'
  run $H run --rm --bundle "$b" allow
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = in ]
  [[ "$output" == *"Operation not permitted"* ]]   # not EROFS: the filter answered
  [ "${lines[-1]}" = mkdir-denied ]
}

@test "seccomp: a bundle's argument conditions, errnoRet and kill actions are enforced" {
  b=$(new_bundle args)
  edit_config "$b" '.linux.seccomp = {"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [
    {"names": ["kill"], "action": "SCMP_ACT_ERRNO", "errnoRet": 13,
     "args": [{"index": 1, "value": 15, "op": "SCMP_CMP_EQ"}]},
    {"names": ["sync"], "action": "SCMP_ACT_KILL_PROCESS"}]}'
  set_args "$b" sh -c 'kill -0 $$ && echo zero-ok; kill -TERM $$ || echo term-denied; sync; echo sync=$?'
  run $H run --rm --bundle "$b" args
  [ "$status" -eq 0 ]
  [[ "$output" == *"zero-ok"* ]]
  [[ "$output" == *"Permission denied"* ]]
  [[ "$output" == *"term-denied"* ]]
  [[ "$output" == *"sync=159"* ]]
}

@test "seccomp: without noNewPrivileges the filter still loads, for root and for an unprivileged user" {
  b=$(new_bundle nonnp)
  edit_config "$b" '.process.noNewPrivileges = false | .linux.seccomp = {"defaultAction": "SCMP_ACT_ALLOW",
    "syscalls": [{"names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_ERRNO", "errnoRet": 1}]}'
  set_args "$b" sh -c 'grep -E "^(NoNewPrivs|Seccomp):" /proc/self/status; mkdir /mnt/x 2>&1'
  run $H run --rm --bundle "$b" nonnp
  [[ "$output" == *"NoNewPrivs:"*"0"* ]]
  [[ "$output" == *"Seccomp:"*"2"* ]]
  [[ "$output" == *"Operation not permitted"* ]]
  edit_config "$b" '.process.user = {"uid": 1000, "gid": 1000}'
  run $H run --rm --bundle "$b" nonnp2
  [[ "$output" == *"Seccomp:"*"2"* ]]
  [[ "$output" == *"Operation not permitted"* ]]
}

@test "seccomp: a filter denying getcwd, loaded before the user switch, still runs the process (and exec)" {
  # The cwd check (CVE-2024-21626) runs before such a filter goes in; the
  # process itself then sees getcwd denied.
  b=$(new_bundle nocwd)
  edit_config "$b" '.process.noNewPrivileges = false | .process.cwd = "/tmp" | .linux.seccomp = {"defaultAction": "SCMP_ACT_ALLOW",
    "syscalls": [{"names": ["getcwd"], "action": "SCMP_ACT_ERRNO", "errnoRet": 1}]}'
  set_args "$b" sh -c '/bin/pwd -P 2>&1; echo done'
  run $H run --rm --bundle "$b" nocwd
  [ "$status" -eq 0 ]
  [[ "$output" == *"Operation not permitted"* ]]
  [ "${lines[-1]}" = done ]
  set_args "$b" sleep 60
  $H run --detach --bundle "$b" nocwd2
  run $H exec nocwd2 sh -c 'echo in-exec'
  $H delete --force nocwd2
  [ "$status" -eq 0 ]
  [ "$output" = in-exec ]
}

@test "seccomp: an architecture listed in the bundle's filter is let through (int 0x80 with SCMP_ARCH_X86)" {
  ia32_emulation || skip "$IA32_MISSING"
  b=$(sc_bundle arch '.linux.seccomp.architectures += ["SCMP_ARCH_X86"]')
  [ "$(probe "$b" int80)" = ok ]
}

@test "seccomp: a malformed filter is 125 naming the entry, and leaves nothing behind" {
  b=$(new_bundle bad)
  edit_config "$b" '.linux.seccomp = {"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [
    {"names": ["mkdir"], "action": "SCMP_ACT_ERRNO"}, {"names": ["rmdir"], "action": "SCMP_ACT_FOO"}]}'
  run $H run --rm --bundle "$b" bad
  [ "$status" -eq 125 ]
  [[ "$output" == *'.linux.seccomp.syscalls[1].action: unknown action "SCMP_ACT_FOO"'* ]]
  [ ! -e "$STATE/bad" ]
  run $H create --bundle "$b" bad2
  [ "$status" -eq 125 ]
  [ ! -e "$STATE/bad2" ]
  edit_config "$b" '.linux.seccomp.syscalls[1].action = "SCMP_ACT_NOTIFY"'
  run $H run --rm --bundle "$b" bad3
  [ "$status" -eq 125 ]
  [[ "$output" == *"SCMP_ACT_NOTIFY needs a seccomp agent (listenerPath)"* ]]
  edit_config "$b" '.linux.seccomp.syscalls[1].action = "SCMP_ACT_ERRNO" | .linux.seccomp.architectures = ["SCMP_ARCH_PDP11"]'
  run $H run --rm --bundle "$b" bad4
  [ "$status" -eq 125 ]
  [[ "$output" == *'.linux.seccomp.architectures[0]: unknown architecture "SCMP_ARCH_PDP11"'* ]]
}
