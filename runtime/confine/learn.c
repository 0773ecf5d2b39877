/* learn: the observing seccomp filter and the learner that answers it
 * (runtime/confine/learn.h says what; hako-learn(7) says why this mechanism). */
#include "runtime/confine/learn.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <poll.h>
#include <seccomp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "lib/fdpass.h"
#include "lib/syscalls.h"
#include "lib/util.h"
#include "runtime/confine/learn_probe.h"

#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif

/* ---- the records ------------------------------------------------------------ */

static uint64_t
rec_hash (char kind, const char *value)
{
  uint64_t h = 0xcbf29ce484222325ULL ^ (unsigned char)kind;
  for (const unsigned char *p = (const unsigned char *)value; *p; p++)
    h = (h ^ *p) * 0x100000001b3ULL;
  return h;
}

static void
tab_insert (struct learn_obs *obs, size_t idx)
{
  size_t m = obs->tab_cap - 1;
  size_t i = rec_hash (obs->recs[idx].kind, obs->recs[idx].value) & m;
  while (obs->tab[i] != 0)
    i = (i + 1) & m;
  obs->tab[i] = idx + 1;
}

void
learn_obs_add (struct learn_obs *obs, char kind, const char *value, const char *note)
{
  if (obs->tab_cap && obs->tab_cap > 0)
    {
      size_t m = obs->tab_cap - 1;
      for (size_t i = rec_hash (kind, value) & m; obs->tab[i] != 0; i = (i + 1) & m)
        {
          const struct learn_rec *r = &obs->recs[obs->tab[i] - 1];
          if (r->kind == kind && strcmp (r->value, value) == 0)
            return;
        }
    }
  if (obs->n == obs->cap)
    {
      obs->cap = obs->cap ? obs->cap * 2 : 64;
      obs->recs = xrealloc (obs->recs, obs->cap * sizeof *obs->recs);
    }
  obs->recs[obs->n] = (struct learn_rec){ .kind = kind, .value = xstrdup (value), .note = xstrdup (note) };
  obs->n++;
  if (obs->n * 2 > obs->tab_cap)
    {
      free (obs->tab);
      obs->tab_cap = obs->tab_cap ? obs->tab_cap * 2 : 256;
      obs->tab = xcalloc (obs->tab_cap, sizeof *obs->tab);
      for (size_t i = 0; i < obs->n; i++)
        tab_insert (obs, i);
    }
  else
    tab_insert (obs, obs->n - 1);
}

void
learn_obs_free (struct learn_obs *obs)
{
  for (size_t i = 0; i < obs->n; i++)
    {
      free (obs->recs[i].value);
      free (obs->recs[i].note);
    }
  free (obs->recs);
  free (obs->tab);
  *obs = (struct learn_obs){ 0 };
}

/* The first process's one message: which fd its listener will be, whether
 * every syscall is watched; with it, a pidfd of that process. */
struct learn_hello
{
  int target;
  bool all;
};

/* ---- the filter ---------------------------------------------------------------- */

#ifdef __x86_64__
/* The syscalls whose arguments say which file or TCP port is used. */
static const int watched[] = {
  SYS_open,    SYS_openat,    SYS_openat2,  SYS_creat,   SYS_execve,   SYS_execveat,  SYS_mkdir, SYS_mkdirat,
  SYS_rmdir,   SYS_unlink,    SYS_unlinkat, SYS_rename,  SYS_renameat, SYS_renameat2, SYS_link,  SYS_linkat,
  SYS_symlink, SYS_symlinkat, SYS_mknod,    SYS_mknodat, SYS_truncate, SYS_connect,   SYS_bind,
};
#define N_WATCHED (sizeof watched / sizeof *watched)
#endif

int
learn_check (hk_err *err)
{
#ifndef __x86_64__
  return err_setk (err, ERR_UNSUPPORTED, ENOTSUP,
                   "--learn: observing a sandbox is only implemented for x86_64 (syscall arguments are "
                   "decoded per architecture)");
#else
  struct seccomp_notif_sizes sizes;
  uint32_t action = SECCOMP_RET_USER_NOTIF;
  if (sys_seccomp (SECCOMP_GET_NOTIF_SIZES, 0, &sizes) < 0
      || sys_seccomp (SECCOMP_GET_ACTION_AVAIL, 0, &action) < 0)
    return err_setk (err, ERR_UNSUPPORTED, errno,
                     "--learn: this kernel has no seccomp user notification, which learning observes "
                     "the sandbox with");
  return 0;
#endif
}

int
learn_child_install (int sock, bool all, hk_err *err)
{
#ifndef __x86_64__
  (void)sock;
  (void)all;
  return learn_check (err);
#else
  struct sock_filter f[8 + 2 * N_WATCHED];
  size_t n = 0;
  /* A syscall of another ABI (i386 through int 0x80, x32) would have
   * arguments the learner cannot decode: it fails with ENOSYS rather than go
   * unobserved. */
  f[n++] = (struct sock_filter)BPF_STMT (BPF_LD | BPF_W | BPF_ABS, offsetof (struct seccomp_data, arch));
  f[n++] = (struct sock_filter)BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0);
  f[n++] = (struct sock_filter)BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS);
  f[n++] = (struct sock_filter)BPF_STMT (BPF_LD | BPF_W | BPF_ABS, offsetof (struct seccomp_data, nr));
  f[n++] = (struct sock_filter)BPF_JUMP (BPF_JMP | BPF_JGE | BPF_K, 0x40000000, 0, 1);
  f[n++] = (struct sock_filter)BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS);
  if (!all)
    {
      for (size_t i = 0; i < N_WATCHED; i++)
        {
          f[n++] = (struct sock_filter)BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)watched[i], 0, 1);
          f[n++] = (struct sock_filter)BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF);
        }
      f[n++] = (struct sock_filter)BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    }
  else
    f[n++] = (struct sock_filter)BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF);
  struct sock_fprog prog = { .len = (unsigned short)n, .filter = f };

  /* The learner takes the listener with pidfd_getfd: once the filter is in,
   * a message of ours would itself wait for the learner.  So first say
   * which fd it will be (the lowest free one) and hand over a pidfd. */
  cleanup_close int self = sys_pidfd_open (getpid (), 0);
  if (self < 0)
    return err_sys (err, "--learn: pidfd_open");
  int probe = dup (sock);
  if (probe < 0)
    return err_sys (err, "--learn: dup");
  close (probe);
  struct learn_hello hello = { .target = probe, .all = all };
  if (fd_send (sock, &hello, sizeof hello, self) != (ssize_t)sizeof hello)
    return err_sys (err, "--learn: reach the learner");
  int lfd = sys_seccomp (SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
  if (lfd < 0 && errno == EACCES && prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0)
    lfd = sys_seccomp (SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
  if (lfd < 0)
    return err_sys (err, "--learn: install the observing seccomp filter");
  /* The listener must not reach the program: whoever holds it could answer
   * its own notifications and hide what it does from the learner.  Closed
   * once the learner has its copy (a filter without listener fails every
   * call it watches with ENOSYS); that ack is read under the filter. */
  char ack;
  ssize_t got;
  while ((got = read (sock, &ack, 1)) < 0 && errno == EINTR)
    ;
  close (lfd);
  if (got != 1)
    return err_set (err, EPIPE, "--learn: the learner went away");
  return 0;
#endif
}

/* ---- the learner -------------------------------------------------------------- */

#ifdef __x86_64__

/* The connects and binds not decided yet (learn_probe.h). */
struct pending
{
  struct learn_sock *v;
  size_t n;
};

/* Well below the learner's 1024 open files (each a socket held). */
#define MAX_PENDING 256

struct ctx
{
  struct learn_obs *obs;
  const struct seccomp_notif *req;
  int mem;  /* /proc/PID/mem of the caller */
  int root; /* /proc/PID/root, O_PATH */
  struct learn_caller who;
  bool who_loaded;
  struct pending *pend;
  char note[PATH_MAX + 64];
};

/* The caller's credentials, read once a notification. */
static const struct learn_caller *
caller (struct ctx *c)
{
  if (!c->who_loaded)
    learn_caller_load (&c->who, (pid_t)c->req->pid);
  c->who_loaded = true;
  return &c->who;
}

/* A NUL-terminated string of the caller's at addr; NULL if unreadable. */
static char *
read_str (struct ctx *c, uint64_t addr)
{
  char *buf = xmalloc (PATH_MAX + 1);
  size_t got = 0;
  if (addr == 0)
    {
      free (buf);
      return NULL;
    }
  while (got < PATH_MAX)
    {
      size_t page = 4096 - ((addr + got) & 4095);
      size_t want = page < PATH_MAX - got ? page : PATH_MAX - got;
      ssize_t r = pread (c->mem, buf + got, want, (off_t)(addr + got));
      if (r <= 0)
        break;
      char *nul = memchr (buf + got, '\0', (size_t)r);
      if (nul)
        return buf;
      got += (size_t)r;
    }
  free (buf);
  return NULL;
}

static int
read_mem (struct ctx *c, uint64_t addr, void *buf, size_t len)
{
  return pread (c->mem, buf, len, (off_t)addr) == (ssize_t)len ? 0 : -1;
}

/* /proc/PID/WHAT (cwd, exe) or, with fd >= 0, /proc/PID/fd/FD, read as a link. */
static char *
read_link (int pid, const char *what, long fd)
{
  char proc[64], buf[PATH_MAX];
  if (fd >= 0)
    snprintf (proc, sizeof proc, "/proc/%d/fd/%ld", pid, fd);
  else
    snprintf (proc, sizeof proc, "/proc/%d/%s", pid, what);
  ssize_t r = readlink (proc, buf, sizeof buf - 1);
  if (r <= 0)
    return NULL;
  buf[r] = '\0';
  return xstrdup (buf);
}

/* PATH (relative to the caller's dirfd or cwd) as an absolute, lexically
 * clean path in the sandbox; NULL when it names no file (a memfd, a pipe). */
static char *
resolve (struct ctx *c, int dirfd, const char *path)
{
  cleanup_free char *base = NULL;
  if (path[0] != '/')
    {
      base = dirfd == AT_FDCWD ? read_link ((int)c->req->pid, "cwd", -1)
                               : read_link ((int)c->req->pid, NULL, dirfd);
      if (base == NULL || base[0] != '/' || strstr (base, " (deleted)"))
        return NULL;
    }
  cleanup_free char *joined = base ? xasprintf ("%s/%s", base, path) : xstrdup (path);
  bool above;
  cleanup_free char *lex = path_lexical (joined, &above);
  return xasprintf ("/%s", lex);
}

static int open_in (struct ctx *c, const char *path, int flags);

/* PATH with every symlink followed, as the sandbox sees it: Landlock
 * checks the file a path leads to, whose directories may not be PATH's
 * (/etc/os-release is /usr/lib/os-release).  The learner's fd is on the
 * sandbox's mounts, whose root is not ours: /proc/self/fd shows the path
 * from the sandbox's root.  For an entry that is not there (yet): its
 * directory followed, its name kept. */
static char *
canon (struct ctx *c, const char *path, bool entry)
{
  cleanup_close int fd = -1;
  cleanup_free char *dir = NULL;
  const char *name = NULL;
  if (entry)
    {
      const char *slash = strrchr (path, '/');
      dir = slash == path ? xstrdup ("/") : xstrndup (path, (size_t)(slash - path));
      name = slash + 1;
      fd = open_in (c, dir, O_PATH | O_DIRECTORY);
    }
  else
    fd = open_in (c, path, O_PATH);
  cleanup_free char *l = fd < 0 ? NULL : read_link ((int)getpid (), NULL, fd);
  if (l == NULL || l[0] != '/' || strstr (l, " (deleted)"))
    return xstrdup (path);
  if (!entry)
    return steal_pointer (&l);
  return strcmp (l, "/") == 0 ? xasprintf ("/%s", name) : xasprintf ("%s/%s", l, name);
}

/* Only what the call could do becomes a rule: a write refused by a
 * read-only mount or by the file's permissions (the observed run's
 * failures: /etc, /proc, /usr/lib) is no grant of write there.  Creating
 * or removing an entry takes write and search on its directory. */
static bool
could (struct ctx *c, char kind, const char *value)
{
  if (kind == 'c')
    {
      cleanup_free char *dir = NULL;
      const char *slash = strrchr (value, '/');
      dir = slash == value ? xstrdup ("/") : xstrndup (value, (size_t)(slash - value));
      return learn_may (caller (c), c->root, dir, W_OK | X_OK);
    }
  return learn_may (caller (c), c->root, value, kind == 'r' ? R_OK : kind == 'w' ? W_OK : X_OK);
}

static void
add (struct ctx *c, char kind, const char *value)
{
  if (kind == 'r' || kind == 'w' || kind == 'x' || kind == 'c')
    {
      if (!could (c, kind, value))
        return;
      cleanup_free char *real = canon (c, value, kind == 'c');
      learn_obs_add (c->obs, kind, real, c->note);
      return;
    }
  learn_obs_add (c->obs, kind, value, c->note);
}

/* Open PATH in the caller's root, as it would resolve it, with its
 * credentials: as host root, the learner read a root-only "#!" file the
 * sandbox could not and copied its first word into the profile. */
static int
open_in (struct ctx *c, const char *path, int flags)
{
  return learn_open_as (caller (c), c->root, path, flags);
}

/* PATH, a program the caller may execute, opened for reading its "#!"
 * line or ELF header, only when it is a regular file: opening a fifo the
 * sandbox execs blocked the learner (and with it the sandbox) for good,
 * and opening a device can act on it.  As the caller; failing that, as
 * the kernel reads it for the caller's execve (open_exec asks execute,
 * not read), which add_exec has checked first.  A file the caller may not
 * execute is never read: as host root, the learner copied a root-only
 * script's interpreter into the profile. */
static int
open_regular (struct ctx *c, const char *path)
{
  struct stat st, again;
  cleanup_close int p = open_in (c, path, O_PATH);
  if (p < 0 || fstat (p, &st) < 0 || !S_ISREG (st.st_mode))
    return -1;
  int flags = O_RDONLY | O_NONBLOCK | O_NOCTTY;
  int fd = open_in (c, path, flags);
  if (fd < 0 && errno == EACCES)
    {
      char proc[64];
      snprintf (proc, sizeof proc, "/proc/self/fd/%d", p);
      fd = open (proc, flags | O_CLOEXEC);
    }
  if (fd >= 0 && (fstat (fd, &again) < 0 || again.st_dev != st.st_dev || again.st_ino != st.st_ino))
    {
      close (fd);
      return -1;
    }
  return fd;
}

/* An execve needs execute on the program, on a script's interpreter and on
 * an ELF program's loader (the kernel opens both with open_exec). */
static void
add_exec (struct ctx *c, const char *path, int depth)
{
  if (!could (c, 'x', path))
    return; /* the execve fails: nothing to grant, nothing to read */
  add (c, 'x', path);
  if (depth > 3)
    return;
  cleanup_close int fd = open_regular (c, path);
  char head[256];
  ssize_t n = fd < 0 ? -1 : pread (fd, head, sizeof head - 1, 0);
  if (n < 4)
    return;
  head[n] = '\0';
  if (head[0] == '#' && head[1] == '!')
    {
      char *p = head + 2;
      while (*p == ' ' || *p == '\t')
        p++;
      size_t len = strcspn (p, " \t\n");
      if (len > 0 && p[0] == '/')
        {
          cleanup_free char *interp = xstrndup (p, len);
          add_exec (c, interp, depth + 1);
        }
      return;
    }
  Elf64_Ehdr eh;
  if (pread (fd, &eh, sizeof eh, 0) != (ssize_t)sizeof eh || memcmp (eh.e_ident, ELFMAG, SELFMAG) != 0
      || eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_phentsize != sizeof (Elf64_Phdr) || eh.e_phnum > 256)
    return;
  for (unsigned i = 0; i < eh.e_phnum; i++)
    {
      Elf64_Phdr ph;
      if (pread (fd, &ph, sizeof ph, (off_t)(eh.e_phoff + i * sizeof ph)) != (ssize_t)sizeof ph)
        return;
      if (ph.p_type != PT_INTERP || ph.p_filesz < 2 || ph.p_filesz > PATH_MAX)
        continue;
      cleanup_free char *interp = xmalloc (ph.p_filesz + 1);
      if (pread (fd, interp, ph.p_filesz, (off_t)ph.p_offset) != (ssize_t)ph.p_filesz)
        return;
      interp[ph.p_filesz] = '\0';
      if (interp[0] == '/')
        add (c, 'x', interp);
      return;
    }
}

static void
path_arg (struct ctx *c, char kind, int dirfd, uint64_t addr)
{
  cleanup_free char *s = read_str (c, addr);
  cleanup_free char *p = s ? resolve (c, dirfd, s) : NULL;
  if (p)
    add (c, kind, p);
}

/* mkdir, mknod, symlink, link: an entry that is there already fails with
 * EEXIST before Landlock is asked, so only a new one needs its directory. */
static void
create_arg (struct ctx *c, int dirfd, uint64_t addr)
{
  cleanup_free char *s = read_str (c, addr);
  cleanup_free char *p = s ? resolve (c, dirfd, s) : NULL;
  if (p == NULL)
    return;
  cleanup_close int fd = open_in (c, p, O_PATH | O_NOFOLLOW);
  if (fd < 0)
    add (c, 'c', p);
}

static void
open_arg (struct ctx *c, int dirfd, uint64_t addr, uint64_t flags)
{
  if (flags & O_PATH)
    return; /* Landlock checks no right on an O_PATH open */
  cleanup_free char *s = read_str (c, addr);
  cleanup_free char *p = s ? resolve (c, dirfd, s) : NULL;
  if (p == NULL)
    return;
  cleanup_close int fd = open_in (c, p, O_PATH);
  int acc = (int)(flags & O_ACCMODE);
  if ((flags & O_CREAT) && fd < 0 && errno == ENOENT)
    add (c, 'c', p);
  else if (fd < 0)
    return; /* ENOENT before Landlock is asked, or the caller cannot reach it */
  else if (acc != O_RDONLY || (flags & O_TRUNC))
    add (c, 'w', p);
  else
    add (c, 'r', p);
}

static void
exec_arg (struct ctx *c, int dirfd, uint64_t addr, uint64_t flags)
{
  cleanup_free char *s = read_str (c, addr);
  cleanup_free char *p = NULL;
  if (s && s[0] == '\0' && (flags & AT_EMPTY_PATH))
    {
      cleanup_free char *l = read_link ((int)c->req->pid, NULL, dirfd);
      if (l && l[0] == '/' && !strstr (l, " (deleted)"))
        p = xstrdup (l);
    }
  else if (s)
    p = resolve (c, dirfd, s);
  /* A PATH search tries names that are not there: they need nothing; nor
   * does what execve refuses (a directory, a fifo). */
  struct stat st;
  cleanup_close int fd = p ? open_in (c, p, O_PATH) : -1;
  if (fd >= 0 && fstat (fd, &st) == 0 && S_ISREG (st.st_mode))
    add_exec (c, p, 0);
}

/* Entry i of pd decided (final: undecided is failed): recorded if the call
 * succeeded, dropped if not; false while it is not decided. */
static bool
pending_settle (struct pending *pd, size_t i, struct learn_obs *obs, bool final)
{
  struct learn_sock *s = &pd->v[i];
  int r = learn_sock_decided (s, final);
  if (r < 0)
    return false;
  if (r > 0)
    {
      char v[16];
      snprintf (v, sizeof v, "%u", s->port);
      learn_obs_add (obs, s->kind, v, s->note);
    }
  close (s->fd);
  free (s->note);
  memmove (s, s + 1, (pd->n - i - 1) * sizeof *s);
  pd->n--;
  return true;
}

static void
pending_sweep (struct pending *pd, struct learn_obs *obs, bool final)
{
  for (size_t i = 0; i < pd->n;)
    if (!pending_settle (pd, i, obs, final))
      i++;
}

/* connect and bind: the TCP port, when the socket is TCP over IPv4 or IPv6. */
static void
sock_arg (struct ctx *c, char kind, int fd, uint64_t addr, uint64_t len)
{
  struct sockaddr_storage ss = { 0 };
  if (len < sizeof (sa_family_t) || read_mem (c, addr, &ss, len < sizeof ss ? len : sizeof ss) < 0)
    return;
  uint16_t port;
  char host[64] = "";
  if (ss.ss_family == AF_INET && len >= sizeof (struct sockaddr_in))
    {
      const struct sockaddr_in *in = (const struct sockaddr_in *)&ss;
      port = ntohs (in->sin_port);
      const unsigned char *a = (const unsigned char *)&in->sin_addr;
      snprintf (host, sizeof host, "%u.%u.%u.%u", a[0], a[1], a[2], a[3]);
    }
  else if (ss.ss_family == AF_INET6 && len >= sizeof (struct sockaddr_in6))
    {
      port = ntohs (((const struct sockaddr_in6 *)&ss)->sin6_port);
      snprintf (host, sizeof host, "[ipv6]");
    }
  else
    return;
  /* Only TCP: Landlock's port rules are TCP's.  The socket's type comes
   * from a copy of the caller's fd. */
  cleanup_close int pidfd = sys_pidfd_open ((pid_t)c->req->pid, 0);
  cleanup_close int copy = pidfd < 0 ? -1 : (int)syscall (SYS_pidfd_getfd, pidfd, fd, 0);
  int type = 0, proto = 0;
  socklen_t sl = sizeof type;
  if (copy >= 0 && getsockopt (copy, SOL_SOCKET, SO_TYPE, &type, &sl) == 0)
    {
      sl = sizeof proto;
      getsockopt (copy, SOL_SOCKET, SO_PROTOCOL, &proto, &sl);
      if (type != SOCK_STREAM || (proto != 0 && proto != IPPROTO_TCP))
        return;
    }
  else
    return; /* no copy: how the call ends cannot be seen, so nothing is granted */
  size_t nl = strlen (c->note);
  snprintf (c->note + nl, sizeof c->note - nl, " (%s %s:%u)", kind == 't' ? "to" : "on", host, port);
  /* A refused connect (22, 2375, 6443 in the run's own netns) or a bind
   * that failed is no grant: decided once the call has run. */
  struct pending *pd = c->pend;
  if (pd->n == MAX_PENDING)
    pending_settle (pd, 0, c->obs, true);
  pd->v = xrealloc (pd->v, (pd->n + 1) * sizeof *pd->v);
  struct learn_sock *ls = &pd->v[pd->n++];
  *ls = (struct learn_sock){ .fd = steal_fd (&copy), .kind = kind, .port = port, .note = xstrdup (c->note) };
  clock_gettime (CLOCK_MONOTONIC, &ls->since);
}

static void
handle (struct ctx *c, bool record_syscall)
{
  const struct seccomp_notif *r = c->req;
  const __u64 *a = r->data.args;
  cleanup_free char *exe = read_link ((int)r->pid, "exe", -1);
  snprintf (c->note, sizeof c->note, "%s", exe ? exe : "?");
  if (record_syscall)
    {
      char *name = seccomp_syscall_resolve_num_arch (SCMP_ARCH_X86_64, r->data.nr);
      if (name)
        add (c, 's', name);
      free (name);
    }
  switch (r->data.nr)
    {
    case SYS_open: open_arg (c, AT_FDCWD, a[0], a[1]); break;
    case SYS_openat: open_arg (c, (int)a[0], a[1], a[2]); break;
    case SYS_openat2:
      {
        uint64_t flags;
        if (read_mem (c, a[2], &flags, sizeof flags) == 0)
          open_arg (c, (int)a[0], a[1], flags);
        break;
      }
    case SYS_creat: open_arg (c, AT_FDCWD, a[0], O_CREAT | O_WRONLY | O_TRUNC); break;
    case SYS_execve: exec_arg (c, AT_FDCWD, a[0], 0); break;
    case SYS_execveat: exec_arg (c, (int)a[0], a[1], a[4]); break;
    case SYS_mkdir:
    case SYS_mknod: create_arg (c, AT_FDCWD, a[0]); break;
    case SYS_mkdirat:
    case SYS_mknodat: create_arg (c, (int)a[0], a[1]); break;
    case SYS_rmdir:
    case SYS_unlink: path_arg (c, 'c', AT_FDCWD, a[0]); break;
    case SYS_unlinkat: path_arg (c, 'c', (int)a[0], a[1]); break;
    case SYS_rename:
      path_arg (c, 'c', AT_FDCWD, a[0]);
      path_arg (c, 'c', AT_FDCWD, a[1]);
      break;
    case SYS_renameat:
    case SYS_renameat2:
      path_arg (c, 'c', (int)a[0], a[1]);
      path_arg (c, 'c', (int)a[2], a[3]);
      break;
    case SYS_link:
    case SYS_symlink: create_arg (c, AT_FDCWD, a[1]); break;
    case SYS_linkat: create_arg (c, (int)a[2], a[3]); break;
    case SYS_symlinkat: create_arg (c, (int)a[1], a[2]); break;
    case SYS_truncate: path_arg (c, 'w', AT_FDCWD, a[0]); break;
    case SYS_connect: sock_arg (c, 't', (int)a[0], a[1], a[2]); break;
    case SYS_bind: sock_arg (c, 'b', (int)a[0], a[1], a[2]); break;
    default: break;
    }
}

static bool
is_listener (int fd)
{
  char proc[64], buf[64];
  snprintf (proc, sizeof proc, "/proc/self/fd/%d", fd);
  ssize_t n = readlink (proc, buf, sizeof buf - 1);
  if (n <= 0)
    return false;
  buf[n] = '\0';
  return strcmp (buf, "anon_inode:seccomp notify") == 0;
}

/* The listener, once the sandbox's process has installed its filter: -1
 * when that process went away first. */
static int
take_listener (int sock, bool *all)
{
  struct learn_hello hello;
  int pidfd = -1;
  if (fd_recv (sock, &hello, sizeof hello, &pidfd) != (ssize_t)sizeof hello || pidfd < 0)
    return -1;
  int target = hello.target;
  *all = hello.all;
  cleanup_close int pf = pidfd;
  for (;;)
    {
      int fd = (int)syscall (SYS_pidfd_getfd, pf, target, 0);
      if (fd >= 0 && is_listener (fd))
        {
          if (write (sock, "", 1) != 1)
            {
              close (fd);
              return -1;
            }
          return fd;
        }
      int e = errno;
      if (fd >= 0)
        close (fd);
      else if (e == ESRCH || e == EPERM)
        return -1;
      struct pollfd p = { .fd = pf, .events = POLLIN };
      if (poll (&p, 1, 1) > 0)
        return -1; /* the process exited */
    }
}
#endif

void
learn_net_collect (int net_fd, struct learn_obs *obs)
{
  if (net_fd < 0)
    return;
  /* The proxy's decision lines (oci/report/proxy_log.h), as hako logs
   * --network prints them: what each request was (oci_learn_decision). */
  char buf[32768];
  size_t have = 0;
  off_t off = 0;
  for (;;)
    {
      ssize_t n = pread (net_fd, buf + have, sizeof buf - 1 - have, off);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        break;
      off += n;
      have += n;
      buf[have] = '\0';
      char *line = buf, *nl;
      while ((nl = memchr (line, '\n', have - (line - buf))) != NULL)
        {
          char *value = NULL;
          char kind = oci_learn_decision (line, (size_t)(nl - line), &value);
          if (kind)
            learn_obs_add (obs, kind, value,
                           kind == 'h' ? "the sandbox's client, through an opaque tunnel of the proxy"
                                       : "the sandbox's client, seen by the proxy in learning mode");
          free (value);
          line = nl + 1;
        }
      have -= line - buf;
      memmove (buf, line, have);
      if (have == sizeof buf - 1)
        have = 0; /* a line longer than any decision: not one the proxy wrote */
    }
}

#ifdef __x86_64__
/* One notification: read what the call touches, record it, let it go on. */
static void
serve_one (int lfd, struct seccomp_notif *req, struct seccomp_notif_resp *resp,
           const struct seccomp_notif_sizes *sizes, struct learn_obs *obs, struct pending *pend, bool all)
{
  memset (req, 0, sizes->seccomp_notif);
  if (ioctl (lfd, SECCOMP_IOCTL_NOTIF_RECV, req) < 0)
    return; /* the caller was killed (ENOENT), or EINTR */
  char path[64];
  snprintf (path, sizeof path, "/proc/%u/mem", req->pid);
  struct ctx c = { .obs = obs, .req = req, .pend = pend };
  c.mem = open (path, O_RDONLY | O_CLOEXEC);
  snprintf (path, sizeof path, "/proc/%u/root", req->pid);
  c.root = open (path, O_PATH | O_DIRECTORY | O_CLOEXEC);
  /* The pid could have been reused between RECV and the opens: only a
   * notification still pending vouches for what was read. */
  if (c.mem >= 0 && c.root >= 0 && ioctl (lfd, SECCOMP_IOCTL_NOTIF_ID_VALID, &req->id) == 0)
    handle (&c, all);
  if (c.mem >= 0)
    close (c.mem);
  if (c.root >= 0)
    close (c.root);
  memset (resp, 0, sizes->seccomp_notif_resp);
  resp->id = req->id;
  resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
  ioctl (lfd, SECCOMP_IOCTL_NOTIF_SEND, resp); /* ENOENT: it died meanwhile */
}
#endif

int
learn_serve (int sock, struct learn_obs *obs, hk_err *err)
{
#ifndef __x86_64__
  (void)sock;
  (void)obs;
  return learn_check (err);
#else
  bool all = false;
  cleanup_close int lfd = take_listener (sock, &all);
  if (lfd < 0)
    return 0;
  struct seccomp_notif_sizes sizes;
  if (sys_seccomp (SECCOMP_GET_NOTIF_SIZES, 0, &sizes) < 0)
    return err_sys (err, "seccomp notification sizes");
  cleanup_free struct seccomp_notif *req
      = xcalloc (1, sizes.seccomp_notif > sizeof *req ? sizes.seccomp_notif : sizeof *req);
  cleanup_free struct seccomp_notif_resp *resp
      = xcalloc (1, sizes.seccomp_notif_resp > sizeof *resp ? sizes.seccomp_notif_resp : sizeof *resp);
  struct pending pend = { 0 };
  int r = 1;
  for (;;)
    {
      /* Undecided connects and binds are looked at every 20 ms. */
      struct pollfd p = { .fd = lfd, .events = POLLIN };
      int n = poll (&p, 1, pend.n ? 20 : -1), e = errno;
      pending_sweep (&pend, obs, false);
      if (n < 0 && e == EINTR)
        continue;
      if (n < 0)
        {
          r = err_code (err, e, "poll the seccomp listener");
          break;
        }
      if (n == 0)
        continue;
      if (!(p.revents & POLLIN))
        {
          if (p.revents & (POLLHUP | POLLERR | POLLNVAL))
            break; /* no process uses the filter any more */
          continue;
        }
      serve_one (lfd, req, resp, &sizes, obs, &pend, all);
    }
  pending_sweep (&pend, obs, true);
  free (pend.v);
  return r;
#endif
}
