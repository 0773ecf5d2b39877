/* fdpass: one message over a unix socket, optionally carrying one fd. */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lib/fdpass.h"

ssize_t
fd_send (int sock, const void *buf, size_t len, int fd)
{
  struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
  union
  {
    char buf[CMSG_SPACE (sizeof (int))];
    struct cmsghdr align;
  } u;
  struct msghdr h = { .msg_iov = &iov, .msg_iovlen = 1 };
  if (fd >= 0)
    {
      memset (&u, 0, sizeof u);
      h.msg_control = u.buf;
      h.msg_controllen = sizeof u.buf;
      struct cmsghdr *c = CMSG_FIRSTHDR (&h);
      c->cmsg_level = SOL_SOCKET;
      c->cmsg_type = SCM_RIGHTS;
      c->cmsg_len = CMSG_LEN (sizeof (int));
      memcpy (CMSG_DATA (c), &fd, sizeof (int));
    }
  ssize_t r;
  do
    r = sendmsg (sock, &h, MSG_NOSIGNAL);
  while (r < 0 && errno == EINTR);
  return r;
}

ssize_t
fd_recv (int sock, void *buf, size_t len, int *fd)
{
  struct iovec iov = { .iov_base = buf, .iov_len = len };
  /* Room for a few fds: a peer that sends more than one must not leave the
   * extras open in this process (they are closed below), nor truncate them
   * into a silent leak in the kernel's queue. */
  union
  {
    char buf[CMSG_SPACE (4 * sizeof (int))];
    struct cmsghdr align;
  } u;
  struct msghdr h
      = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof u.buf };
  if (fd)
    *fd = -1;
  ssize_t r;
  do
    r = recvmsg (sock, &h, MSG_CMSG_CLOEXEC);
  while (r < 0 && errno == EINTR);
  if (r < 0)
    return -1;
  for (struct cmsghdr *c = CMSG_FIRSTHDR (&h); c; c = CMSG_NXTHDR (&h, c))
    {
      if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
        continue;
      size_t n = (c->cmsg_len - CMSG_LEN (0)) / sizeof (int);
      for (size_t i = 0; i < n; i++)
        {
          int passed;
          memcpy (&passed, CMSG_DATA (c) + i * sizeof (int), sizeof passed);
          if (fd && *fd < 0)
            *fd = passed;
          else
            close (passed);
        }
    }
  return r;
}
