/* test_seccomp: linux.seccomp compiled to BPF — errors that name the entry,
 * skipped unknown syscalls, and each filter run for real in a forked child
 * (with no_new_privs, so no privilege is needed). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <linux/sched.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/util.h"
#include "oci/spec.h"
#include "runtime/confine/seccomp.h"
#include "tests/unit/helpers.h"
#include "tests/unit/tap.h"

#define BASE "'ociVersion':'1.0.0','root':{'path':'rootfs'},'process':{'args':['sh']}"

/* Compile the seccomp object SECCOMP ("{...}", ' for "); NULL on error. */
static struct seccomp_prog *
compile (const char *seccomp, hk_err *err)
{
  cleanup_free char *text = xasprintf ("{" BASE ",'linux':{'seccomp':%s}}", seccomp);
  struct oci_spec *spec = parse_q (text, err);
  struct seccomp_prog *p = NULL;
  if (spec)
    seccomp_prepare (spec, &p, err);
  oci_spec_free (spec);
  return p;
}

static void
fails_with (const char *seccomp, const char *want)
{
  hk_err err = { 0 };
  struct seccomp_prog *p = compile (seccomp, &err);
  bool good = p == NULL && strcmp (err.msg, want) == 0;
  if (!good)
    printf ("#   got '%s'\n", p ? "(compiled)" : err.msg);
  ok (good, "refused: %s", want);
  seccomp_prog_free (p);
}

/* ---- running a filter ------------------------------------------------------ */

/* Run PROBE in a child under P; the child's wait status.  A probe reports
 * through its exit code (it may not be able to do much else). */
static int
run_under (const struct seccomp_prog *p, int (*probe) (void))
{
  fflush (stdout);
  pid_t pid = fork ();
  if (pid == 0)
    {
      hk_err err = { 0 };
      if (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || seccomp_install (p, &err) < 0)
        _exit (200);
      _exit (probe ());
    }
  int ws = 0;
  waitpid (pid, &ws, 0);
  return ws;
}

static bool
exited (int ws, int code)
{
  if (WIFEXITED (ws) && WEXITSTATUS (ws) == code)
    return true;
  printf ("#   wait status 0x%x, want exit %d\n", ws, code);
  return false;
}

static bool
killed_by_sigsys (int ws)
{
  if (WIFSIGNALED (ws) && WTERMSIG (ws) == SIGSYS)
    return true;
  printf ("#   wait status 0x%x, want SIGSYS\n", ws);
  return false;
}

/* errno of a failed call, 0 on success: the probes' exit codes. */
static int
err_of (long r)
{
  return r < 0 ? errno : 0;
}

static int
probe_getppid (void)
{
  return err_of (syscall (SYS_getppid));
}

static int
probe_getpgid_values (void)
{
  /* 0: ours.  200000, 0x1234: no such process, unless a rule says otherwise. */
  int a = err_of (syscall (SYS_getpgid, 0));
  int b = err_of (syscall (SYS_getpgid, 200000));
  int c = err_of (syscall (SYS_getpgid, 0x1234));
  int d = err_of (syscall (SYS_getpgid, 0x3434));
  return a == 0 && b == 33 && c == 36 && d == ESRCH ? 0 : 1;
}

static int
probe_same_arg_or (void)
{
  int a = err_of (syscall (SYS_getpgid, 111111));
  int b = err_of (syscall (SYS_getpgid, 222222));
  int c = err_of (syscall (SYS_getpgid, 333333));
  return a == 34 && b == 34 && c == ESRCH ? 0 : 1;
}

static int
probe_and (void)
{
  int a = err_of (syscall (SYS_getpriority, PRIO_PROCESS, 424242));
  int b = err_of (syscall (SYS_getpriority, PRIO_PGRP, 424242));
  int c = err_of (syscall (SYS_getpriority, PRIO_PROCESS, 0));
  return a == 35 && b == ESRCH && c == 0 ? 0 : 1;
}

static void
test_enforced (void)
{
  hk_err err = { 0 };
  struct seccomp_prog *p;

  p = compile ("{'defaultAction':'SCMP_ACT_ALLOW','syscalls':["
               "{'names':['no_such_syscall_hako','getppid'],'action':'SCMP_ACT_ERRNO','errnoRet':42}]}",
               &err);
  ok (p && seccomp_prog_len (p) > 0, "an unknown syscall name is skipped, the rest compiles (%s)", err.msg);
  if (p)
    ok (exited (run_under (p, probe_getppid), 42), "ERRNO with errnoRet: getppid fails with 42");
  seccomp_prog_free (p);

  p = compile ("{'defaultAction':'SCMP_ACT_ALLOW','syscalls':["
               "{'names':['getppid'],'action':'SCMP_ACT_ERRNO'}]}",
               &err);
  ok (p && exited (run_under (p, probe_getppid), EPERM), "ERRNO without errnoRet is EPERM");
  seccomp_prog_free (p);

  p = compile ("{'defaultAction':'SCMP_ACT_ALLOW','syscalls':["
               "{'names':['getpgid'],'action':'SCMP_ACT_ERRNO','errnoRet':33,"
               " 'args':[{'index':0,'value':100000,'op':'SCMP_CMP_GT'}]},"
               "{'names':['getpgid'],'action':'SCMP_ACT_ERRNO','errnoRet':36,"
               " 'args':[{'index':0,'value':65280,'valueTwo':4608,'op':'SCMP_CMP_MASKED_EQ'}]}]}",
               &err);
  ok (p && exited (run_under (p, probe_getpgid_values), 0),
      "argument conditions: GT, and MASKED_EQ as (arg & value) == valueTwo (%s)", err.msg);
  seccomp_prog_free (p);

  p = compile ("{'defaultAction':'SCMP_ACT_ALLOW','syscalls':["
               "{'names':['getpgid'],'action':'SCMP_ACT_ERRNO','errnoRet':34,"
               " 'args':[{'index':0,'value':111111,'op':'SCMP_CMP_EQ'},"
               "         {'index':0,'value':222222,'op':'SCMP_CMP_EQ'}]}]}",
               &err);
  ok (p && exited (run_under (p, probe_same_arg_or), 0),
      "two conditions on one argument are ORed, as runc reads them (%s)", err.msg);
  seccomp_prog_free (p);

  p = compile ("{'defaultAction':'SCMP_ACT_ALLOW','syscalls':["
               "{'names':['getpriority'],'action':'SCMP_ACT_ERRNO','errnoRet':35,"
               " 'args':[{'index':0,'value':0,'op':'SCMP_CMP_EQ'},"
               "         {'index':1,'value':424242,'op':'SCMP_CMP_EQ'}]}]}",
               &err);
  ok (p && exited (run_under (p, probe_and), 0), "conditions on different arguments are ANDed (%s)", err.msg);
  seccomp_prog_free (p);

  p = compile (
      "{'defaultAction':'SCMP_ACT_ALLOW','syscalls':[{'names':['getppid'],'action':'SCMP_ACT_TRAP'}]}", &err);
  ok (p && killed_by_sigsys (run_under (p, probe_getppid)), "TRAP: SIGSYS");
  seccomp_prog_free (p);

  p = compile ("{'defaultAction':'SCMP_ACT_ALLOW','syscalls':[{'names':['getppid'],"
               "'action':'SCMP_ACT_KILL_PROCESS'}]}",
               &err);
  ok (p && killed_by_sigsys (run_under (p, probe_getppid)), "KILL_PROCESS: killed by SIGSYS");
  seccomp_prog_free (p);

  /* An allow-list: only what the probe needs to report (and what ASan's
   * _exit needs, in a sanitizer build). */
  p = compile (
      "{'defaultAction':'SCMP_ACT_ERRNO','defaultErrnoRet':40,'syscalls':["
      "{'names':['exit_group','exit','write','mmap','munmap','madvise','sigaltstack','gettid','getpid',"
      "'rt_sigprocmask'],'action':'SCMP_ACT_ALLOW'},"
      "{'names':['getppid'],'action':'SCMP_ACT_ERRNO','errnoRet':40}]}",
      &err);
  ok (p && exited (run_under (p, probe_getppid), 40),
      "defaultAction ERRNO with defaultErrnoRet; a rule equal to the default is dropped (%s)", err.msg);
  seccomp_prog_free (p);
}

/* ---- compile errors -------------------------------------------------------- */

static void
test_errors (void)
{
  fails_with ("{'defaultAction':'SCMP_ACT_ALLOW','syscalls':["
              "{'names':['getpid'],'action':'SCMP_ACT_ERRNO'},{'names':['getuid'],'action':'SCMP_ACT_LOG'},"
              "{'names':['getppid'],'action':'SCMP_ACT_ERRNO'},{'names':['read'],'action':'SCMP_ACT_FOO'}]}",
              ".linux.seccomp.syscalls[3].action: unknown action \"SCMP_ACT_FOO\"");
  fails_with ("{'defaultAction':'ALLOW'}", ".linux.seccomp.defaultAction: unknown action \"ALLOW\"");
  fails_with (
      "{'defaultAction':'SCMP_ACT_ALLOW','syscalls':[{'names':['getpid'],'action':'SCMP_ACT_NOTIFY'}]}",
      ".linux.seccomp.syscalls[0].action: SCMP_ACT_NOTIFY needs a seccomp agent (listenerPath), "
      "which hako does not support");
  fails_with ("{'defaultAction':'SCMP_ACT_NOTIFY'}",
              ".linux.seccomp.defaultAction: SCMP_ACT_NOTIFY needs a seccomp agent (listenerPath), which "
              "hako does not support");
  fails_with ("{'defaultAction':'SCMP_ACT_ALLOW','architectures':['SCMP_ARCH_X86_64','SCMP_ARCH_VAX']}",
              ".linux.seccomp.architectures[1]: unknown architecture \"SCMP_ARCH_VAX\"");
  fails_with ("{'defaultAction':'SCMP_ACT_ALLOW','architectures':['x86_64']}",
              ".linux.seccomp.architectures[0]: unknown architecture \"x86_64\"");
  fails_with ("{'defaultAction':'SCMP_ACT_ALLOW','flags':['SECCOMP_FILTER_FLAG_LOG','FLAG_FAST']}",
              ".linux.seccomp.flags[1]: unknown flag \"FLAG_FAST\"");
  fails_with (
      "{'defaultAction':'SCMP_ACT_ALLOW','syscalls':[{'names':['getpid'],'action':'SCMP_ACT_ERRNO',"
      "'args':[{'index':0,'value':1,'op':'SCMP_CMP_EQ'},{'index':1,'value':1,'op':'SCMP_CMP_SIMILAR'}]}]}",
      ".linux.seccomp.syscalls[0].args[1].op: unknown operator \"SCMP_CMP_SIMILAR\"");
  fails_with ("{'defaultAction':'SCMP_ACT_ALLOW','syscalls':[{'names':['getpid'],'action':'SCMP_ACT_ERRNO',"
              "'errnoRet':5000}]}",
              ".linux.seccomp.syscalls[0].errnoRet: 5000 is not an errno (at most 4095)");
  fails_with ("{'defaultAction':'SCMP_ACT_ERRNO','defaultErrnoRet':70000}",
              ".linux.seccomp.defaultErrnoRet: 70000 is not an errno (at most 4095)");
}

static void
test_compiles (void)
{
  hk_err err = { 0 };
  struct seccomp_prog *p = NULL;
  cleanup_free char *none = q ("{" BASE "}");
  struct oci_spec *spec = NULL;
  ok (oci_spec_parse (none, strlen (none), &spec, &err) == 0 && seccomp_prepare (spec, &p, &err) == 0
          && p == NULL,
      "no linux.seccomp: no program");
  oci_spec_free (spec);

  /* Every action, operator and flag the runtime-spec names (but NOTIFY). */
  p = compile ("{'defaultAction':'SCMP_ACT_ERRNO','defaultErrnoRet':1,"
               "'architectures':['SCMP_ARCH_X86_64','SCMP_ARCH_X86','SCMP_ARCH_X32'],"
               "'flags':['SECCOMP_FILTER_FLAG_TSYNC','SECCOMP_FILTER_FLAG_LOG',"
               "'SECCOMP_FILTER_FLAG_SPEC_ALLOW','SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV'],"
               "'syscalls':["
               "{'names':['read','write'],'action':'SCMP_ACT_ALLOW'},"
               "{'names':['getpid'],'action':'SCMP_ACT_KILL'},"
               "{'names':['getppid'],'action':'SCMP_ACT_KILL_THREAD'},"
               "{'names':['getuid'],'action':'SCMP_ACT_KILL_PROCESS'},"
               "{'names':['getgid'],'action':'SCMP_ACT_TRAP'},"
               "{'names':['geteuid'],'action':'SCMP_ACT_TRACE','errnoRet':5},"
               "{'names':['getegid'],'action':'SCMP_ACT_LOG'},"
               "{'names':['kill'],'action':'SCMP_ACT_ERRNO','errnoRet':13,'args':["
               " {'index':1,'value':9,'op':'SCMP_CMP_EQ'},{'index':0,'value':1,'op':'SCMP_CMP_NE'},"
               " {'index':2,'value':1,'op':'SCMP_CMP_LT'},{'index':3,'value':1,'op':'SCMP_CMP_LE'},"
               " {'index':4,'value':1,'op':'SCMP_CMP_GE'},{'index':5,'value':1,'op':'SCMP_CMP_GT'}]},"
               "{'names':['socket'],'action':'SCMP_ACT_ERRNO','args':["
               " {'index':0,'value':4294967295,'valueTwo':16,'op':'SCMP_CMP_MASKED_EQ'}]},"
               "{'names':['socketcall','clock_settime64'],'action':'SCMP_ACT_ERRNO'}]}",
               &err);
  ok (p != NULL, "all actions, operators, flags and three architectures compile (%s)", p ? "" : err.msg);
  seccomp_prog_free (p);
}

/* ---- hako's default filter ------------------------------------------------- */

static struct seccomp_prog *
default_profile (hk_err *err)
{
  cleanup_free char *json = NULL;
  struct oci_spec *spec = spec_profile (OCI_PROFILE_DEFAULT, false, NULL, NULL, &json, err);
  struct seccomp_prog *p = NULL;
  if (spec)
    seccomp_prepare (spec, &p, err);
  oci_spec_free (spec);
  return p;
}

static int
probe_denied (void)
{
  struct clone_args ca = { .flags = 0, .exit_signal = SIGCHLD };
  int bad = 0;
#define EXPECT(call, want) bad += (err_of (call) != (want))
  EXPECT (syscall (SYS_clone3, &ca, sizeof ca), ENOSYS);
  EXPECT (syscall (SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0), EPERM);
  EXPECT (syscall (SYS_clone, CLONE_NEWNET | SIGCHLD, 0, 0, 0, 0), EPERM);
  EXPECT (unshare (CLONE_NEWUSER), EPERM);
  EXPECT (syscall (SYS_keyctl, 0, 0, 0, 0, 0), EPERM);
  EXPECT (syscall (SYS_bpf, 0, NULL, 0), EPERM);
  EXPECT (syscall (SYS_io_uring_setup, 1, NULL), EPERM);
  EXPECT (syscall (SYS_ptrace, PTRACE_TRACEME, 0, 0, 0), EPERM);
  EXPECT (syscall (SYS_mount, "none", "/nonexistent", "tmpfs", 0, NULL), EPERM);
  EXPECT (syscall (SYS_setns, -1, 0), EPERM);
  EXPECT (syscall (SYS_userfaultfd, 0), EPERM);
#undef EXPECT
  return bad;
}

static int
probe_allowed (void)
{
  /* fork is clone without namespace flags: still allowed. */
  pid_t pid = fork ();
  if (pid == 0)
    _exit (7);
  int ws = 0;
  if (pid < 0 || waitpid (pid, &ws, 0) != pid || !WIFEXITED (ws) || WEXITSTATUS (ws) != 7)
    return 1;
  if (syscall (SYS_getpid) <= 0 || write (1, "", 0) != 0)
    return 2;
  return 0;
}

/* personality: allowed for 0, 8 and 0xffffffff only.  Every value with one
 * or two bits set or clear, and random ones: 0 failures. */
static bool
personality_allowed (uint32_t v)
{
  return v == 0 || v == 8 || v == 0xffffffff;
}

static int
check_personality (uint32_t v)
{
  long r = syscall (SYS_personality, (unsigned long)v);
  bool denied = r < 0 && errno == EPERM;
  if (!denied)
    syscall (SYS_personality, 0UL);
  return denied == personality_allowed (v);
}

static int
probe_personality (void)
{
  int bad = 0;
  bad += check_personality (0) + check_personality (8) + check_personality (0xffffffff);
  for (int i = 0; i < 32; i++)
    for (int j = i; j < 32; j++)
      {
        uint32_t v = (1U << i) | (1U << j);
        bad += check_personality (v) + check_personality (~v);
      }
  uint32_t x = 2463534242U;
  for (int i = 0; i < 20000; i++)
    {
      x ^= x << 13, x ^= x >> 17, x ^= x << 5;
      bad += check_personality (x);
    }
  /* The kernel reads 32 bits: upper bits change nothing either way. */
  long r = syscall (SYS_personality, 0x100000000UL | READ_IMPLIES_EXEC);
  bad += !(r < 0 && errno == EPERM);
  return bad > 100 ? 100 : bad;
}

/* socket families and netlink protocols: what socket() says for each with
 * no filter (filled in before the fork), and which the filter must refuse. */
#define N_FAMILIES 64
#define N_NETLINK 32
static int family_errno[N_FAMILIES], netlink_errno[N_NETLINK];

static bool
family_allowed (int f)
{
  return f == AF_UNIX || f == AF_INET || f == AF_INET6 || f == AF_NETLINK || f == AF_PACKET;
}

static bool
netlink_allowed (int p)
{
  return p == NETLINK_ROUTE || p == NETLINK_USERSOCK || p == NETLINK_SOCK_DIAG || p == NETLINK_XFRM
         || p == NETLINK_FIB_LOOKUP || p == NETLINK_NETFILTER || p == NETLINK_GENERIC;
}

/* errno of socket (family, type, protocol) through the raw syscall (so the
 * upper halves of the arguments reach the filter), 0 when it opened. */
static int
socket_errno (unsigned long family, int type, unsigned long protocol)
{
  long fd = syscall (SYS_socket, family, (unsigned long)(type | SOCK_CLOEXEC), protocol);
  if (fd < 0)
    return errno;
  close ((int)fd);
  return 0;
}

static void
measure_sockets (void)
{
  for (int f = 0; f < N_FAMILIES; f++)
    family_errno[f] = socket_errno ((unsigned long)f, SOCK_DGRAM, 0);
  for (int p = 0; p < N_NETLINK; p++)
    netlink_errno[p] = socket_errno (AF_NETLINK, SOCK_RAW, (unsigned long)p);
}

static int
probe_sockets (void)
{
  int bad = 0;
  for (int f = 0; f < N_FAMILIES; f++)
    {
      int want = family_allowed (f) ? family_errno[f] : EAFNOSUPPORT;
      int got = socket_errno ((unsigned long)f, SOCK_DGRAM, 0);
      if (got != want)
        printf ("#   family %d: errno %d, want %d\n", f, got, want), bad++;
    }
  for (int p = 0; p < N_NETLINK; p++)
    {
      int want = netlink_allowed (p) ? netlink_errno[p] : EAFNOSUPPORT;
      int got = socket_errno (AF_NETLINK, SOCK_RAW, (unsigned long)p);
      if (got != want)
        printf ("#   netlink protocol %d: errno %d, want %d\n", p, got, want), bad++;
    }
  /* The kernel reads 32 bits of each: the upper halves change nothing. */
  bad += socket_errno ((1UL << 32) | AF_VSOCK, SOCK_STREAM, 0) != EAFNOSUPPORT;
  bad += socket_errno ((1UL << 32) | AF_INET, SOCK_DGRAM, 0) != 0;
  bad += socket_errno (AF_NETLINK | (1UL << 40), SOCK_RAW, (1UL << 32) | NETLINK_AUDIT) != EAFNOSUPPORT;
  bad += socket_errno (AF_NETLINK, SOCK_RAW, (1UL << 32) | NETLINK_ROUTE) != 0;
  /* socketpair: the same families. */
  int sv[2];
  bad += !(socketpair (AF_VSOCK, SOCK_STREAM, 0, sv) < 0 && errno == EAFNOSUPPORT);
  bad += !(socketpair (AF_TIPC, SOCK_STREAM, 0, sv) < 0 && errno == EAFNOSUPPORT);
  if (socketpair (AF_UNIX, SOCK_STREAM, 0, sv) < 0)
    bad++;
  return bad > 100 ? 100 : bad;
}

static int
probe_x32 (void)
{
  syscall (0x40000000 | SYS_getpid);
  return 0;
}

#if defined(__x86_64__)
static void
int80_segv (int sig)
{
  (void)sig;
  _exit (3);
}

/* Without IA32 emulation, int 0x80 takes SIGSEGV.  The probe catches it and
 * exits 3, so that no crash handler (ASan's in the sanitizer build) reports
 * it as a crash of the test. */
static int
probe_int80 (void)
{
  struct sigaction sa = { .sa_handler = int80_segv };
  sigaction (SIGSEGV, &sa, NULL);
  long ret;
  __asm__ volatile("int $0x80" : "=a"(ret) : "a"(20L) : "memory"); /* i386 getpid */
  return ret > 0 ? 0 : 1;
}

/* Whether this kernel runs i386 syscalls, asked before any int 0x80: the
 * kernel registers abi.vsyscall32 only with CONFIG_IA32_EMULATION, and
 * ia32_emulation= on its command line turns that off at boot.
 * HAKO_TEST_NO_IA32=1 forces the answer to no (to test the skip). */
static bool
ia32_emulation (void)
{
  const char *force = getenv ("HAKO_TEST_NO_IA32");
  if (force != NULL && strcmp (force, "1") == 0)
    return false;
  if (access ("/proc/sys/abi/vsyscall32", F_OK) != 0)
    return false;
  char cmdline[4096] = "";
  FILE *f = fopen ("/proc/cmdline", "re");
  if (f != NULL)
    {
      if (fgets (cmdline, sizeof cmdline, f) == NULL)
        cmdline[0] = '\0';
      fclose (f);
    }
  for (const char *off = strstr (cmdline, "ia32_emulation="); off != NULL;
       off = strstr (off + 1, "ia32_emulation="))
    if (strchr ("0nNfF", off[strlen ("ia32_emulation=")]) != NULL)
      return false;
  int ws = run_under (NULL, probe_int80);
  return WIFEXITED (ws) && WEXITSTATUS (ws) == 0;
}
#endif

static void
test_default_profile (void)
{
  hk_err err = { 0 };
  struct seccomp_prog *p = default_profile (&err);
  ok (p != NULL, "the default profile's filter compiles (%s)", p ? "" : err.msg);
  if (p == NULL)
    return;
  printf ("# default filter: %zu BPF instructions\n", seccomp_prog_len (p));
  ok (exited (run_under (p, probe_denied), 0),
      "default filter: clone3 ENOSYS, namespaces/keyctl/bpf/io_uring/ptrace/mount/setns/userfaultfd EPERM");
  ok (exited (run_under (p, probe_allowed), 0), "default filter: fork, getpid and write still work");
  ok (exited (run_under (p, probe_personality), 0),
      "default filter: personality only for PER_LINUX, PER_LINUX32 and the query");
  measure_sockets ();
  ok (exited (run_under (p, probe_sockets), 0),
      "default filter: socket families but unix, inet, inet6, netlink and packet, and netlink protocols "
      "that reach host state, are EAFNOSUPPORT; the rest as without it");
#if defined(__x86_64__)
  ok (killed_by_sigsys (run_under (p, probe_x32)), "default filter: an x32 syscall kills the process");
  /* int 0x80 works only with IA32 emulation in the kernel; else SIGSEGV. */
  if (ia32_emulation ())
    ok (killed_by_sigsys (run_under (p, probe_int80)),
        "default filter: an i386 syscall (int 0x80) kills the process");
  else
    skip ("no IA32 emulation in this kernel", "default filter: an i386 syscall kills the process");
#endif

  /* Compiled once per create, in the parent: how long does it take? */
  struct timespec a, b;
  clock_gettime (CLOCK_MONOTONIC, &a);
  for (int i = 0; i < 50; i++)
    seccomp_prog_free (default_profile (&err));
  clock_gettime (CLOCK_MONOTONIC, &b);
  printf ("# default profile generate+parse+compile: %.0f us each\n",
          ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / 50 / 1e3);
  seccomp_prog_free (p);
}

/* ---- the cache ---------------------------------------------------------------- */

static struct seccomp_prog *
compile_cached (const char *seccomp, const char *data_root, hk_err *err)
{
  cleanup_free char *text = xasprintf ("{" BASE ",'linux':{'seccomp':%s}}", seccomp);
  struct oci_spec *spec = parse_q (text, err);
  struct seccomp_prog *p = NULL;
  if (spec)
    seccomp_prepare_cached (spec, data_root, &p, err);
  oci_spec_free (spec);
  return p;
}

/* The one entry in DIR (NULL if none or several); *n counts them. */
static char *
cache_entry (const char *dir, int *n)
{
  char *found = NULL;
  struct dirent *de;
  DIR *d = opendir (dir);
  *n = 0;
  while (d && (de = readdir (d)) != NULL)
    if (de->d_name[0] != '.')
      {
        (*n)++;
        free (found);
        found = xasprintf ("%s/%s", dir, de->d_name);
      }
  if (d)
    closedir (d);
  return *n == 1 ? found : (free (found), NULL);
}

/* ---- a learned allow-list narrowing the default filter --------------------- */

/* hako's default filter with sandbox.seccomp.allow set to allow. */
static struct seccomp_prog *
narrowed_profile (char *const *allow, hk_err *err)
{
  cleanup_free char *json = NULL;
  struct oci_spec *spec = spec_profile (OCI_PROFILE_DEFAULT, false, NULL, NULL, &json, err);
  struct seccomp_prog *p = NULL;
  if (spec)
    {
      spec->sandbox.seccomp_allow = strv_dup (allow);
      seccomp_prepare (spec, &p, err);
    }
  oci_spec_free (spec);
  return p;
}

static int
probe_narrowed (void)
{
  struct clone_args ca = { .flags = CLONE_NEWUSER | CLONE_NEWNET, .exit_signal = SIGCHLD };
  int bad = 0;
#define EXPECT(call, want) bad += (err_of (call) != (want))
  /* Listed, and still refused by the default filter's argument rules. */
  EXPECT (syscall (SYS_socket, AF_VSOCK, SOCK_STREAM, 0), EAFNOSUPPORT);
  EXPECT (syscall (SYS_clone, CLONE_NEWUSER | CLONE_NEWNET | SIGCHLD, 0, 0, 0, 0), EPERM);
  EXPECT (unshare (CLONE_NEWUSER | CLONE_NEWNET), EPERM);
  EXPECT (syscall (SYS_keyctl, 0, 0, 0, 0, 0), EPERM);
  /* Not listed, refused outright by the default filter: its errno. */
  EXPECT (syscall (SYS_clone3, &ca, sizeof ca), ENOSYS);
  /* Not listed: EPERM. */
  EXPECT (syscall (SYS_getppid), EPERM);
  EXPECT (syscall (SYS_chdir, "/"), EPERM);
#undef EXPECT
  long fd = syscall (SYS_socket, AF_INET, SOCK_STREAM, 0);
  if (fd < 0)
    return 100;
  close ((int)fd);
  return bad;
}

static void
test_narrowed (void)
{
  /* What the probes call, and what a C runtime (ASan's too) calls around
   * them; getppid and chdir are left out. */
  static char *const allow[] = { "clone",
                                 "socket",
                                 "socketpair",
                                 "unshare",
                                 "keyctl",
                                 "exit_group",
                                 "exit",
                                 "wait4",
                                 "getpid",
                                 "gettid",
                                 "write",
                                 "close",
                                 "read",
                                 "openat",
                                 "mmap",
                                 "munmap",
                                 "mprotect",
                                 "madvise",
                                 "brk",
                                 "rt_sigaction",
                                 "rt_sigprocmask",
                                 "sigaltstack",
                                 "futex",
                                 "newfstatat",
                                 "fstat",
                                 "readlink",
                                 "prctl",
                                 "prlimit64",
                                 "sched_getaffinity",
                                 "sched_yield",
                                 "set_robust_list",
                                 "rseq",
                                 "lseek",
                                 "ioctl",
                                 "tgkill",
                                 "kill",
                                 "getrandom",
                                 NULL };
  hk_err err = { 0 };
  struct seccomp_prog *p = narrowed_profile (allow, &err);
  ok (p != NULL, "the default filter narrowed by an allow-list compiles (%s)", p ? "" : err.msg);
  if (p == NULL)
    return;
  ok (exited (run_under (p, probe_narrowed), 0),
      "narrowed: AF_VSOCK, clone and unshare with namespaces still refused though listed; clone3 ENOSYS; "
      "unlisted EPERM; AF_INET opens");
  ok (exited (run_under (p, probe_allowed), 0), "narrowed: fork, getpid and write still work");
  seccomp_prog_free (p);
  /* Empty: everything refused, exit_group too, so it is only compiled here
   * (a child under it cannot even exit). */
  static char *const none[] = { NULL };
  p = narrowed_profile (none, &err);
  ok (p != NULL && seccomp_prog_len (p) > 0, "an empty allow-list compiles (%s)", p ? "" : err.msg);
  seccomp_prog_free (p);
}

static void
test_cache (void)
{
  static const char deny_getppid[] = "{'defaultAction':'SCMP_ACT_ALLOW','syscalls':[{'names':['getppid'],'"
                                     "action':'SCMP_ACT_ERRNO','errnoRet':42}]}";
  char root[] = "/tmp/hako-test-seccomp.XXXXXX";
  hk_err err = { 0 };
  int n = 0;
  if (mkdtemp (root) == NULL)
    return;
  cleanup_free char *dir = xasprintf ("%s/cache/seccomp", root);

  struct seccomp_prog *p
      = compile_cached ("{'defaultAction':'SCMP_ACT_ALLOW','syscalls':[{'names':['getppid'],"
                        "'action':'SCMP_ACT_FOO'}]}",
                        root, &err);
  cleanup_free char *none = cache_entry (dir, &n);
  ok (p == NULL && strstr (err.msg, "syscalls[0].action: unknown action") && n == 0,
      "cache: a bad profile is still an error, and nothing is cached");

  p = compile_cached (deny_getppid, root, &err);
  cleanup_free char *entry = cache_entry (dir, &n);
  ok (p && entry && n == 1, "cache: the first compile writes one entry");
  seccomp_prog_free (p);
  if (entry == NULL)
    {
      rm_rf (root, &err);
      return;
    }
  struct stat st1, st2;
  stat (entry, &st1);
  p = compile_cached (deny_getppid, root, &err);
  stat (entry, &st2);
  ok (p && st1.st_ino == st2.st_ino && exited (run_under (p, probe_getppid), 42),
      "cache: the same profile again is read from it, and enforced");
  seccomp_prog_free (p);

  /* Damage the program in the entry: refused, recompiled, rewritten. */
  int fd = open (entry, O_RDWR);
  off_t end = fd < 0 ? -1 : lseek (fd, 0, SEEK_END);
  char byte = 0;
  bool damaged = end > 20 && pread (fd, &byte, 1, end - 20) == 1 && (byte ^= 0x40, true)
                 && pwrite (fd, &byte, 1, end - 20) == 1;
  if (fd >= 0)
    close (fd);
  p = compile_cached (deny_getppid, root, &err);
  stat (entry, &st2);
  ok (damaged && p && st1.st_ino != st2.st_ino && exited (run_under (p, probe_getppid), 42),
      "cache: a damaged entry is ignored and replaced");
  seccomp_prog_free (p);

  p = compile_cached (
      "{'defaultAction':'SCMP_ACT_ALLOW','syscalls':[{'names':['getppid'],'action':'SCMP_ACT_ERRNO',"
      "'errnoRet':43}]}",
      root, &err);
  cleanup_free char *two = cache_entry (dir, &n);
  ok (p && n == 2 && exited (run_under (p, probe_getppid), 43),
      "cache: another profile gets its own entry (errnoRet is part of the key)");
  seccomp_prog_free (p);

  rm_rf (root, &err);
}

/* valgrind does not emulate seccomp(2): there, only what needs no kernel runs. */
static bool
kernel_has_seccomp (void)
{
  uint32_t action = SECCOMP_RET_ALLOW;
  return syscall (SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) == 0;
}

/* ---- no set-id files with a read-write idmapped bind -------------------------- */

static char setid_file[64];

static int
probe_setid (void)
{
  int bad = 0;
  cleanup_free char *created = xasprintf ("%s.new", setid_file);
  bad += err_of (chmod (setid_file, 04755)) != EPERM;
  bad += err_of (chmod (setid_file, 02755)) != EPERM;
  bad += err_of (open (created, O_CREAT | O_WRONLY, 04755)) != EPERM;
  bad += err_of (mknod (created, S_IFREG | 02755, 0)) != EPERM;
  bad += err_of (syscall (SYS_openat2, AT_FDCWD, created, NULL, 0)) != ENOSYS;
  bad += err_of (syscall (452 /* fchmodat2 */, AT_FDCWD, setid_file, 04755, 0)) != ENOSYS;
  bad += err_of (chmod (setid_file, 0700)) != 0;
  bad += err_of (open (setid_file, O_RDONLY, 04755)) != 0; /* no O_CREAT: the mode is not used */
  return bad;
}

/* A spec with an idmapped bind (options OPTS), no linux.seccomp. */
static struct seccomp_prog *
idmapped (const char *opts, hk_err *err)
{
  cleanup_free char *text
      = xasprintf ("{" BASE ",'linux':{'namespaces':[{'type':'user'},{'type':'mount'}],"
                   "'uidMappings':[{'containerID':0,'hostID':1000000000,'size':65536}],"
                   "'gidMappings':[{'containerID':0,'hostID':1000000000,'size':65536}]},"
                   "'mounts':[{'destination':'/w','type':'bind','source':'/tmp','options':%s}]}",
                   opts);
  struct oci_spec *spec = parse_q (text, err);
  struct seccomp_prog *p = NULL;
  if (spec)
    seccomp_prepare (spec, &p, err);
  oci_spec_free (spec);
  return p;
}

static void
test_setid (void)
{
  hk_err err = { 0 };
  struct seccomp_prog *p = idmapped ("['rbind','idmap']", &err);
  ok (p != NULL && seccomp_prog_len (p) > 0,
      "a read-write idmapped bind: a filter, without linux.seccomp (%s)", p ? "ok" : err.msg);
  snprintf (setid_file, sizeof setid_file, "/tmp/hako-test-setid.%d", (int)getpid ());
  cleanup_free char *created = xasprintf ("%s.new", setid_file);
  int fd = open (setid_file, O_CREAT | O_WRONLY | O_TRUNC, 0600);
  if (fd >= 0)
    close (fd);
  ok (fd >= 0 && exited (run_under (p, probe_setid), 0),
      "set-id modes: chmod, open(O_CREAT), mknod refused (EPERM), openat2 and fchmodat2 ENOSYS; plain modes "
      "pass");
  struct stat st;
  ok (stat (setid_file, &st) == 0 && (st.st_mode & 07777) == 0700 && access (created, F_OK) < 0,
      "nothing set-id was made");
  unlink (setid_file);
  seccomp_prog_free (p);
  p = idmapped ("['rbind','ro','idmap']", &err);
  ok (p == NULL && seccomp_prog_len (p) == 0, "a read-only one: no filter");
  seccomp_prog_free (p);
}

int
main (void)
{
  test_errors ();
  if (!kernel_has_seccomp ())
    {
      skip ("no seccomp(2) here", "compiling, caching and enforcing filters");
      return tap_done ();
    }
  test_compiles ();
  test_enforced ();
  test_default_profile ();
  test_narrowed ();
  test_cache ();
  test_setid ();
  return tap_done ();
}
