/* learn_probe: what the learner checks before a call becomes a rule
 * (runtime/confine/learn_probe.h).  The seccomp notification comes before the call
 * runs and CONTINUE does not tell how it ended, so the learner asks the
 * question the kernel will: could this caller, with its credentials, do
 * this?  A write to a read-only /etc or /usr/lib (EROFS), a root-only file
 * (EACCES) or a refused connect is then not granted by the profile. */
#include "runtime/confine/learn_probe.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lib/syscalls.h"
#include "lib/util.h"

#ifndef SYS_faccessat2
#define SYS_faccessat2 439
#endif

/* The capabilities that bypass file permissions (capabilities(7)). */
#define FS_CAPS ((1u << CAP_DAC_OVERRIDE) | (1u << CAP_DAC_READ_SEARCH) | (1u << CAP_FOWNER))

void
learn_caller_load (struct learn_caller *c, pid_t pid)
{
  *c = (struct learn_caller){ .pid = pid };
  char path[64], line[4096];
  snprintf (path, sizeof path, "/proc/%d/status", (int)pid);
  FILE *f = fopen (path, "re");
  if (f == NULL)
    return;
  int got = 0;
  while (fgets (line, sizeof line, f))
    {
      unsigned r, e, s, fs;
      unsigned long long cap;
      if (sscanf (line, "Uid:\t%u\t%u\t%u\t%u", &r, &e, &s, &fs) == 4)
        c->fsuid = fs, got |= 1;
      else if (sscanf (line, "Gid:\t%u\t%u\t%u\t%u", &r, &e, &s, &fs) == 4)
        c->fsgid = fs, got |= 2;
      else if (sscanf (line, "CapEff:\t%llx", &cap) == 1)
        c->cap_eff = cap, got |= 4;
      else if (strncmp (line, "Groups:", 7) == 0)
        {
          char *p = line + 7, *end;
          got |= 8;
          for (;;)
            {
              unsigned long g = strtoul (p, &end, 10);
              if (end == p)
                break;
              /* More groups than fit: fewer is fewer rights, never more. */
              if (c->ngroups < (int)(sizeof c->groups / sizeof *c->groups))
                c->groups[c->ngroups++] = (gid_t)g;
              p = end;
            }
        }
    }
  fclose (f);
  c->ok = got == 15;
}

/* ---- acting as the caller ------------------------------------------------- */

struct self
{
  int ngroups;
  gid_t groups[256];
  struct __user_cap_data_struct caps[2];
};

static int
caps_get (struct __user_cap_data_struct *d)
{
  struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
  return (int)syscall (SYS_capget, &h, d);
}

static int
caps_set (struct __user_cap_data_struct *d)
{
  struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
  return (int)syscall (SYS_capset, &h, d);
}

static void
unbecome (const struct self *s)
{
  setfsuid (geteuid ());
  setfsgid (getegid ());
  if (s->ngroups >= 0)
    syscall (SYS_setgroups, (size_t)s->ngroups, s->groups);
  caps_set ((struct __user_cap_data_struct *)s->caps);
}

/* Take the caller's fsuid, fsgid and groups, and none of the capabilities
 * that bypass permissions (the caller's own are weighed by learn_may, for
 * the files they apply to).  The learner is single-threaded: these are
 * its only thread's credentials, restored by unbecome.  False (nothing
 * changed) when the caller's credentials are unknown or not taken: a
 * probe as host root would grant what the caller never could. */
static bool
become (const struct learn_caller *c, struct self *s)
{
  if (!c->ok)
    return false;
  s->ngroups = getgroups ((int)(sizeof s->groups / sizeof *s->groups), s->groups);
  if (caps_get (s->caps) < 0)
    return false;
  struct __user_cap_data_struct d[2];
  memcpy (d, s->caps, sizeof d);
  d[0].effective &= ~FS_CAPS;
  bool root = geteuid () == 0;
  if ((syscall (SYS_setgroups, (size_t)c->ngroups, c->groups) < 0 && root) || caps_set (d) < 0)
    {
      unbecome (s);
      return false;
    }
  setfsgid (c->fsgid);
  setfsuid (c->fsuid);
  if ((uid_t)setfsuid ((uid_t)-1) != c->fsuid || (gid_t)setfsgid ((gid_t)-1) != c->fsgid)
    {
      unbecome (s);
      /* Not root: the learner's own ids are the sandbox owner's anyway. */
      return !root;
    }
  return true;
}

int
learn_open_as (const struct learn_caller *c, int root, const char *path, int flags)
{
  struct self s;
  if (!become (c, &s))
    {
      errno = EPERM;
      return -1;
    }
  struct open_how how = { .flags = (uint64_t)(flags | O_CLOEXEC), .resolve = RESOLVE_IN_ROOT };
  int fd = sys_openat2 (root, path[0] == '/' && path[1] ? path + 1 : path[0] == '/' ? "." : path, &how);
  int e = errno;
  unbecome (&s);
  errno = e;
  return fd;
}

/* id in /proc/PID/{uid,gid}_map's outside ranges: a capability of the
 * caller's user namespace applies to a file only when its owner and group
 * are both mapped there (capable_wrt_inode_uidgid). */
static bool
mapped (pid_t pid, const char *which, unsigned id)
{
  char path[64];
  snprintf (path, sizeof path, "/proc/%d/%s", (int)pid, which);
  FILE *f = fopen (path, "re");
  if (f == NULL)
    return false;
  unsigned in, out, n;
  bool yes = false;
  while (!yes && fscanf (f, "%u %u %u", &in, &out, &n) == 3)
    yes = id >= out && id - out < n;
  fclose (f);
  return yes;
}

/* What the caller's CAP_DAC_OVERRIDE or CAP_DAC_READ_SEARCH grants over
 * the file fd is (generic_permission's rules). */
static bool
cap_grants (const struct learn_caller *c, int fd, int mode)
{
  struct stat st;
  bool over = c->cap_eff & (1ull << CAP_DAC_OVERRIDE), search = c->cap_eff & (1ull << CAP_DAC_READ_SEARCH);
  if ((!over && !search) || fstat (fd, &st) < 0 || !mapped (c->pid, "uid_map", st.st_uid)
      || !mapped (c->pid, "gid_map", st.st_gid))
    return false;
  bool dir = S_ISDIR (st.st_mode);
  if (over && (!(mode & X_OK) || dir || (st.st_mode & 0111)))
    return true;
  return search && !(mode & W_OK) && (!(mode & X_OK) || dir);
}

bool
learn_may (const struct learn_caller *c, int root, const char *path, int mode)
{
  cleanup_close int fd = learn_open_as (c, root, path, O_PATH);
  if (fd < 0)
    return false;
  struct self s;
  if (!become (c, &s))
    return false;
  /* AT_EACCESS: the fs ids just taken, not the real ones. */
  long r = syscall (SYS_faccessat2, fd, "", mode, AT_EMPTY_PATH | AT_EACCESS);
  int e = errno;
  unbecome (&s);
  return r == 0 || (e == EACCES && cap_grants (c, fd, mode));
}

/* ---- connects and binds --------------------------------------------------- */

static double
age (const struct learn_sock *s)
{
  struct timespec now;
  clock_gettime (CLOCK_MONOTONIC, &now);
  return (double)(now.tv_sec - s->since.tv_sec) + (double)(now.tv_nsec - s->since.tv_nsec) / 1e9;
}

/* The call may not have run yet when the socket is first looked at (the
 * learner answers, then the caller's thread goes on): a socket still
 * unconnected or unbound is undecided for a second, a connect under way
 * for a minute. */
int
learn_sock_decided (const struct learn_sock *s, bool final)
{
  if (s->kind == 't')
    {
      struct tcp_info ti;
      socklen_t l = sizeof ti;
      if (getsockopt (s->fd, IPPROTO_TCP, TCP_INFO, &ti, &l) < 0)
        return 0;
      switch (ti.tcpi_state)
        {
        case TCP_ESTABLISHED:
        case TCP_FIN_WAIT1:
        case TCP_FIN_WAIT2:
        case TCP_CLOSE_WAIT:
        case TCP_LAST_ACK:
        case TCP_CLOSING:
        case TCP_TIME_WAIT: return 1;
        case TCP_SYN_SENT:
        case TCP_SYN_RECV: return final || age (s) > 60 ? 0 : -1;
        default: return final || age (s) > 1 ? 0 : -1; /* refused, reset, or not yet asked */
        }
    }
  struct sockaddr_storage ss;
  socklen_t l = sizeof ss;
  if (getsockname (s->fd, (struct sockaddr *)&ss, &l) < 0)
    return 0;
  uint16_t port = ss.ss_family == AF_INET    ? ntohs (((struct sockaddr_in *)&ss)->sin_port)
                  : ss.ss_family == AF_INET6 ? ntohs (((struct sockaddr_in6 *)&ss)->sin6_port)
                                             : 0;
  if (s->port == 0 || port == s->port)
    return 1; /* an ephemeral bind cannot be told from none: granted as before */
  if (port != 0)
    return 0;
  return final || age (s) > 1 ? 0 : -1;
}
