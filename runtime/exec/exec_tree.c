/* exec_tree: an attached exec's process tree held together by a cgroup2
 * directory of its own and killed as a whole (exec_tree.h).  It replaces
 * the subreaper forked into the sandbox (exec_enter.c), whose fork of
 * hako's memory was most of what an exec cost beyond nsenter's
 * (docs/benchmarks.md, "exec at nsenter's cost"). */
#include "runtime/exec/exec_tree.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/util.h"

/* The watcher shares hako's memory (no copy of it: a fork here is what the
 * tree saves) where it can run without touching any of hako's: x86_64, its
 * own stack, raw system calls (no errno, no libc), every signal blocked.
 * Sanitizer builds and other machines fork it (sanitizers track one stack
 * a thread and would see a stranger on ours). */
#if defined(__SANITIZE_ADDRESS__)
#define TREE_SHARE 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TREE_SHARE 0
#endif
#endif
#if !defined(TREE_SHARE) && defined(__x86_64__)
#define TREE_SHARE 1
#endif
#ifndef TREE_SHARE
#define TREE_SHARE 0
#endif

/* ---- the watcher ------------------------------------------------------------- */

struct watch_arg
{
  int done, kill_fd, parent_fd;
  char name[64];
};

/* One exec a process: one watcher, whose arguments and stack these are.
 * hako writes them before the clone and never after. */
static struct watch_arg watch_arg;
#if TREE_SHARE
static char watch_stack[16 << 10] __attribute__ ((aligned (16)));

static long
rsys (long n, long a, long b, long c)
{
  long ret;
  __asm__ volatile("syscall" : "=a"(ret) : "a"(n), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
  return ret;
}
#else
static long
rsys (long n, long a, long b, long c)
{
  long r = syscall (n, a, b, c);
  return r < 0 ? -errno : r;
}
#endif

/* Every fd but the three it needs and hako's stdout and stderr, which it
 * keeps until it has killed the tree or hako says it is done: a caller
 * that reads hako's output to its end (the Python SDK, a shell's $(...))
 * then hears of a killed client only once its command's tree is gone, as
 * it did while a subreaper held them. */
static void __attribute__ ((no_sanitize ("undefined"))) watcher_close_others (int a, int b, int c)
{
  int k[5] = { 1, 2, a, b, c };
  for (int i = 0; i < 5; i++)
    for (int j = i + 1; j < 5; j++)
      if (k[j] < k[i])
        {
          int x = k[i];
          k[i] = k[j];
          k[j] = x;
        }
  long from = 0;
  for (int i = 0; i < 5; i++)
    {
      if (k[i] > from)
        rsys (SYS_close_range, from, k[i] - 1, 0);
      if (k[i] + 1 > from)
        from = k[i] + 1;
    }
  rsys (SYS_close_range, from, ~0U, 0);
}

/* Waits for hako's word on the pipe: "d" is hako done with the tree: it
 * lets go of hako's stdout and stderr, removes the cgroup if it is empty
 * (a background job of an untimed command keeps it) and exits, so that
 * hako need not wait for the rmdir (tens of microseconds a command); EOF is
 * hako gone without a word (killed): then cgroup.kill takes every process
 * of the tree, which is then removed once empty. */
static int __attribute__ ((no_sanitize ("undefined"))) watcher_main (void *arg)
{
  const struct watch_arg *w = arg;
  int done = w->done, kill_fd = w->kill_fd, parent = w->parent_fd;
  char name[sizeof w->name];
  for (size_t i = 0; i < sizeof name; i++)
    name[i] = w->name[i];
  watcher_close_others (done, kill_fd, parent);
  char c = 0;
  long r;
  do
    r = rsys (SYS_read, done, (long)&c, 1);
  while (r == -EINTR);
  if (r == 1 && c == 'd')
    {
      rsys (SYS_close, 1, 0, 0);
      rsys (SYS_close, 2, 0, 0);
      rsys (SYS_unlinkat, parent, (long)name, AT_REMOVEDIR);
      return 0;
    }
  rsys (SYS_write, kill_fd, (long)"1", 1);
  struct timespec ms = { 0, 1000000 };
  for (int i = 0; i < 5000; i++)
    {
      r = rsys (SYS_unlinkat, parent, (long)name, AT_REMOVEDIR);
      if (r != -EBUSY)
        break;
      rsys (SYS_nanosleep, (long)&ms, 0, 0);
    }
  return 0;
}

int
exec_tree_watch (struct exec_tree *t, hk_err *err)
{
  if (pipe2 (t->done, O_CLOEXEC) < 0)
    return err_sys (err, "pipe");
  watch_arg = (struct watch_arg){ .done = t->done[0], .kill_fd = t->kill_fd, .parent_fd = t->parent_fd };
  snprintf (watch_arg.name, sizeof watch_arg.name, "%s", t->name);
  /* Born with every signal blocked: no handler of hako's may run on its
   * stack, in hako's memory, meanwhile. */
  sigset_t all, old;
  sigfillset (&all);
  sigprocmask (SIG_SETMASK, &all, &old);
#if TREE_SHARE
  pid_t pid = clone (watcher_main, watch_stack + sizeof watch_stack, CLONE_VM | SIGCHLD, &watch_arg);
#else
  pid_t pid = fork ();
  if (pid == 0)
    _exit (watcher_main (&watch_arg));
#endif
  int e = errno;
  sigprocmask (SIG_SETMASK, &old, NULL);
  close (t->done[0]);
  t->done[0] = -1;
  if (pid < 0)
    return err_code (err, e, "start the exec's watcher");
  t->watcher = pid;
  return 0;
}

/* ---- the tree's cgroup ---------------------------------------------------------- */

#define TREE_PREFIX "hako-exec-"

/* Whether a tree's cgroup name (hako-exec-PID-NONCE) names a hako that
 * is still running: an exec in flight, whose empty cgroup is about to get
 * its command. */
static bool
owner_alive (const char *name)
{
  long pid = strtol (name + sizeof TREE_PREFIX - 1, NULL, 10);
  return pid > 0 && (kill ((pid_t)pid, 0) == 0 || errno == EPERM);
}

/* The cgroups of earlier execs, whose hako has ended and whose background
 * jobs have too: removed (a populated one refuses, and stays). */
static void
sweep (int parent_fd)
{
  int fd = dup (parent_fd);
  DIR *d = fd < 0 ? NULL : fdopendir (fd);
  if (d == NULL)
    {
      if (fd >= 0)
        close (fd);
      return;
    }
  struct dirent *de;
  while ((de = readdir (d)) != NULL)
    if (de->d_type == DT_DIR && strncmp (de->d_name, TREE_PREFIX, sizeof TREE_PREFIX - 1) == 0
        && !owner_alive (de->d_name))
      unlinkat (parent_fd, de->d_name, AT_REMOVEDIR);
  closedir (d);
}

int
exec_tree_open (struct exec_tree *t, int sandbox_v2_fd, hk_err *err)
{
  *t = (struct exec_tree){ .parent_fd = -1, .dir_fd = -1, .kill_fd = -1, .done = { -1, -1 }, .watcher = -1 };
  /* cgroup.kill (Linux 5.14) kills a tree in one write, racing no fork. */
  if (faccessat (sandbox_v2_fd, "cgroup.kill", W_OK, 0) < 0)
    return 0;
  sweep (sandbox_v2_fd);
  uint64_t nonce = 0;
  if (getrandom (&nonce, sizeof nonce, GRND_NONBLOCK) != (ssize_t)sizeof nonce)
    nonce = now_ms ();
  snprintf (t->name, sizeof t->name, TREE_PREFIX "%d-%016llx", (int)getpid (), (unsigned long long)nonce);
  if (mkdirat (sandbox_v2_fd, t->name, 0755) < 0)
    return errno == EACCES || errno == EPERM || errno == EROFS ? 0 : err_sys (err, "mkdir the exec's cgroup");
  t->dir_fd = openat (sandbox_v2_fd, t->name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  t->kill_fd = t->dir_fd < 0 ? -1 : openat (t->dir_fd, "cgroup.kill", O_WRONLY | O_CLOEXEC);
  if (t->kill_fd < 0)
    {
      int e = errno;
      if (t->dir_fd >= 0)
        close (t->dir_fd);
      t->dir_fd = -1;
      unlinkat (sandbox_v2_fd, t->name, AT_REMOVEDIR);
      return err_code (err, e, "open the exec's cgroup %s", t->name);
    }
  t->parent_fd = sandbox_v2_fd;
  return 0;
}

bool
exec_tree_populated (const struct exec_tree *t)
{
  char buf[256];
  cleanup_close int fd = t->dir_fd < 0 ? -1 : openat (t->dir_fd, "cgroup.events", O_RDONLY | O_CLOEXEC);
  ssize_t n = fd < 0 ? -1 : read (fd, buf, sizeof buf - 1);
  if (n <= 0)
    return false;
  buf[n] = '\0';
  const char *p = strstr (buf, "populated ");
  return p && p[10] == '1';
}

bool
exec_tree_kill (const struct exec_tree *t)
{
  if (t->kill_fd < 0)
    return true;
  uint64_t until = now_ms () + 5000;
  for (unsigned round = 0; exec_tree_populated (t); round++)
    {
      if (write (t->kill_fd, "1", 1) < 0 || now_ms () > until)
        return false;
      usleep (round < 20 ? 500 : 10000);
    }
  return true;
}

void
exec_tree_close (struct exec_tree *t)
{
  if (t->done[1] >= 0)
    {
      ssize_t r;
      do
        r = write (t->done[1], "d", 1);
      while (r < 0 && errno == EINTR);
      close (t->done[1]);
      t->done[1] = -1;
    }
  /* The watcher removes the cgroup once told; without one, hako does. */
  if (t->watcher > 0)
    waitpid (t->watcher, NULL, WNOHANG);
  else if (t->parent_fd >= 0 && t->name[0])
    unlinkat (t->parent_fd, t->name, AT_REMOVEDIR);
  t->watcher = -1;
  /* The dir_fd is the plan's (CLONE_INTO_CGROUP), closed with it. */
  if (t->kill_fd >= 0)
    close (t->kill_fd);
  if (t->parent_fd >= 0)
    close (t->parent_fd);
  t->kill_fd = t->parent_fd = -1;
}
