/* inroot: the in-root resolver (see inroot.h). */
#include "lib/inroot.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/syscalls.h"
#include "lib/util.h"

/* Symlinks, absolute ones and "..", resolve as if the root were "/", so a
   hostile image whose /dev links to /host/path, or a sandbox whose /work
   links to /etc, cannot point a mount, a put or a layer entry at the host;
   magic links (/proc/self/root, /proc/self/fd/N) are refused outright
   because they jump to wherever their target is, root or not. */
int
inroot_open (int rootfd, const char *path, int flags, uint64_t resolve)
{
  struct open_how how = {
    .flags = (uint64_t)flags | O_CLOEXEC,
    .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS | resolve,
  };
  while (*path == '/')
    path++;
  if (*path == '\0')
    path = ".";
  int fd, tries = 0;
  /* EAGAIN: a rename raced the ".." check; the kernel asks for a retry. */
  do
    fd = sys_openat2 (rootfd, path, &how);
  while (fd < 0 && errno == EAGAIN && ++tries < 16);
  return fd;
}

/* The kernel's walk refuses every symlink and every ".." out of dirfd, so a
   directory swapped for a link (RENAME_EXCHANGE, mid-copy) makes the lookup
   fail instead of sending a root-owned write to where the link points. */
int
inroot_beneath (int dirfd, const char *path, int flags)
{
  struct open_how how = {
    .flags = (uint64_t)flags | O_CLOEXEC,
    .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
  };
  if (*path == '\0')
    path = ".";
  int fd, tries = 0;
  do
    fd = sys_openat2 (dirfd, path, &how);
  while (fd < 0 && errno == EAGAIN && ++tries < 16);
  return fd;
}

/* One component at a time, each looked up again from the root after it is
   made, so a symlink among them (planted meanwhile or not) is followed
   inside the root too; mkdirat of one plain name on a resolved fd never
   follows anything. */
int
inroot_mkdir_p (int rootfd, const char *path, int flags, uint64_t resolve, mode_t mode, uid_t uid, gid_t gid,
                char **at)
{
  flags |= O_DIRECTORY;
  while (*path == '/')
    path++;
  cleanup_free char *prefix = xstrdup (path);
  cleanup_close int cur = -1;
  int fd = inroot_open (rootfd, path, flags, resolve);
  if (fd >= 0)
    return fd;
  if (errno != ENOENT || (cur = inroot_open (rootfd, "", flags, resolve)) < 0)
    goto fail;
  for (char *p = prefix;;)
    {
      char *slash = strchr (p, '/');
      if (slash)
        *slash = '\0';
      int next = inroot_open (rootfd, prefix, flags, resolve);
      if (next < 0 && errno == ENOENT)
        {
          struct stat st;
          /* Given away only when not already the owner's: a chown is a
             change a watch of the directory reports, and may need a
             capability the caller lacks. */
          if ((mkdirat (cur, p, mode) < 0 && errno != EEXIST)
              || (uid != (uid_t)-1 && fstatat (cur, p, &st, AT_SYMLINK_NOFOLLOW) < 0)
              || (uid != (uid_t)-1 && (st.st_uid != uid || st.st_gid != gid)
                  && fchownat (cur, p, uid, gid, AT_SYMLINK_NOFOLLOW) < 0))
            goto fail;
          next = inroot_open (rootfd, prefix, flags, resolve);
        }
      if (next < 0)
        goto fail;
      close (cur);
      cur = next;
      if (slash == NULL)
        return steal_fd (&cur);
      *slash = '/';
      p = slash + 1;
      while (*p == '/')
        p++;
      if (*p == '\0')
        return steal_fd (&cur);
    }
fail:;
  int saved = errno;
  if (at)
    *at = xstrdup (prefix);
  errno = saved;
  return -1;
}
