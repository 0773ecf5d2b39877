/* mount_src: see mount_src.h.
 *
 * Why: a sandbox in a user namespace builds its root as the namespace's root,
 * which is an unprivileged uid on the host.  A bind source under a directory
 * only real root may enter (podman's 0700 run dir holding /etc/hosts and
 * /etc/resolv.conf, with --uidmap) cannot be reached from there.  hako, still
 * real root, opens the sources for it.  It must do so inside the child's
 * mount namespace: a bind from a mount of another namespace is refused
 * (EINVAL), and only mounts copied into the child's namespace keep the host's
 * read-only/nosuid/nodev locks, which the namespace's root cannot lift. */
#include "runtime/build/mount_src.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/fdpass.h"
#include "lib/util.h"
#include "runtime/build/mount.h"

bool
mnt_is_bind (const struct oci_mount *m)
{
  return m->is_bind || (m->type && strcmp (m->type, "bind") == 0);
}

char *
mnt_bind_source (const struct oci_mount *m, const char *bundle)
{
  if (m->source == NULL || (m->source[0] != '/' && bundle == NULL))
    return NULL;
  return m->source[0] == '/' ? xstrdup (m->source) : xasprintf ("%s/%s", bundle, m->source);
}

struct src_msg
{
  size_t index;
  int errnum; /* 0: the fd came with the message */
};

bool
mnt_src_wanted (const struct oci_spec *spec, bool userns)
{
  if (!userns || geteuid () != 0)
    return false; /* rootless: its sources are its own, and it could not setns */
  /* Opened in the namespace clone made: one the child joins later would
   * not take binds from it. */
  const struct oci_namespace *mnt = oci_spec_ns (spec, OCI_NS_MOUNT);
  if (mnt == NULL || mnt->path)
    return false;
  for (size_t i = 0; i < spec->n_mounts; i++)
    if (mnt_is_bind (&spec->mounts[i]))
      return true;
  return false;
}

/* The helper: in the child's mount namespace, open and send each source. */
static void __attribute__ ((noreturn))
helper (int pidfd, pid_t pid, const struct oci_spec *spec, const char *bundle, int sock)
{
  int ns = pidfd;
  if (setns (ns, CLONE_NEWNS) < 0)
    {
      /* Before Linux 5.8, setns takes no pidfd. */
      char path[64];
      snprintf (path, sizeof path, "/proc/%d/ns/mnt", (int)pid);
      ns = open (path, O_RDONLY | O_CLOEXEC);
      if (ns < 0 || setns (ns, CLONE_NEWNS) < 0)
        {
          struct src_msg m = { .index = SIZE_MAX, .errnum = errno };
          fd_send (sock, &m, sizeof m, -1);
          _exit (1);
        }
    }
  for (size_t i = 0; i < spec->n_mounts; i++)
    {
      if (!mnt_is_bind (&spec->mounts[i]))
        continue;
      cleanup_free char *src = mnt_bind_source (&spec->mounts[i], bundle);
      if (src == NULL)
        continue; /* the child names the mistake */
      int fd = open (src, O_PATH | O_CLOEXEC);
      struct src_msg m = { .index = i, .errnum = fd < 0 ? errno : 0 };
      if (fd_send (sock, &m, sizeof m, fd) < 0)
        _exit (1);
      if (fd >= 0)
        close (fd);
    }
  _exit (0);
}

void
mnt_src_free (int *fds, size_t n)
{
  for (size_t i = 0; fds && i < n; i++)
    if (fds[i] >= 0)
      close (fds[i]);
  free (fds);
}

int
mnt_src_open (int pidfd, pid_t pid, const struct oci_spec *spec, const char *bundle, int **out, hk_err *err)
{
  int sv[2];
  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
    return err_sys (err, "socketpair");
  /* setns(CLONE_NEWNS) would move hako itself: a process of its own does it. */
  pid_t h = fork ();
  if (h < 0)
    {
      close (sv[0]);
      close (sv[1]);
      return err_sys (err, "fork");
    }
  if (h == 0)
    {
      close (sv[0]);
      helper (pidfd, pid, spec, bundle, sv[1]);
    }
  close (sv[1]);
  int *fds = xmalloc ((spec->n_mounts ? spec->n_mounts : 1) * sizeof *fds);
  for (size_t i = 0; i < spec->n_mounts; i++)
    fds[i] = -1;
  int r = 0;
  for (;;)
    {
      struct src_msg m;
      int fd = -1;
      ssize_t n = fd_recv (sv[0], &m, sizeof m, &fd);
      if (n == 0)
        break;
      if (n != (ssize_t)sizeof m || (m.index != SIZE_MAX && m.index >= spec->n_mounts))
        {
          if (fd >= 0)
            close (fd);
          r = err_set (err, EIO, "open the bind mount sources: bad message from the helper");
          break;
        }
      if (m.index == SIZE_MAX)
        {
          r = err_code (err, m.errnum, "open the bind mount sources: join the sandbox's mount namespace");
          break;
        }
      if (m.errnum)
        {
          const struct oci_mount *mt = &spec->mounts[m.index];
          cleanup_free char *src = mnt_bind_source (mt, bundle);
          r = err_code (err, m.errnum, "mount %s on %s", src, mt->destination);
          break;
        }
      fds[m.index] = fd;
    }
  close (sv[0]);
  int ws;
  while (waitpid (h, &ws, 0) < 0 && errno == EINTR)
    ;
  if (r == 0 && !(WIFEXITED (ws) && WEXITSTATUS (ws) == 0))
    r = err_set (err, EIO, "open the bind mount sources: the helper failed");
  if (r < 0)
    {
      mnt_src_free (fds, spec->n_mounts);
      return -1;
    }
  *out = fds;
  return 0;
}
