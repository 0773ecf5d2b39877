/* recvtty: a test stand-in for a shim's console socket.  Listens on the
 * unix socket SOCKET, accepts one connection, receives the terminal master
 * the runtime sends (SCM_RIGHTS), prints the message's name on stderr,
 * writes INPUT (if given) to the terminal, then copies everything the
 * terminal says to stdout until its last slave closes.  Gives up after 20 s.
 *
 *   recvtty SOCKET [INPUT] */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int
main (int argc, char **argv)
{
  if (argc < 2 || argc > 3)
    {
      fprintf (stderr, "usage: recvtty SOCKET [INPUT]\n");
      return 2;
    }
  alarm (20);
  struct sockaddr_un sa = { .sun_family = AF_UNIX };
  snprintf (sa.sun_path, sizeof sa.sun_path, "%s", argv[1]);
  int ls = socket (AF_UNIX, SOCK_STREAM, 0);
  unlink (argv[1]);
  if (ls < 0 || bind (ls, (struct sockaddr *)&sa, sizeof sa) < 0 || listen (ls, 1) < 0)
    {
      perror ("recvtty: listen");
      return 1;
    }
  int c = accept (ls, NULL, NULL);
  if (c < 0)
    {
      perror ("recvtty: accept");
      return 1;
    }
  char name[4096];
  union
  {
    char buf[CMSG_SPACE (sizeof (int))];
    struct cmsghdr align;
  } u;
  struct iovec iov = { .iov_base = name, .iov_len = sizeof name - 1 };
  struct msghdr h
      = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof u.buf };
  ssize_t n = recvmsg (c, &h, 0);
  struct cmsghdr *cm = n >= 0 ? CMSG_FIRSTHDR (&h) : NULL;
  if (cm == NULL || cm->cmsg_type != SCM_RIGHTS)
    {
      fprintf (stderr, "recvtty: no fd received\n");
      return 1;
    }
  int master;
  memcpy (&master, CMSG_DATA (cm), sizeof master);
  name[n] = '\0';
  fprintf (stderr, "name: %s\n", name);
  if (argc == 3 && write (master, argv[2], strlen (argv[2])) < 0)
    perror ("recvtty: write");
  char buf[4096];
  for (;;)
    {
      n = read (master, buf, sizeof buf);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        break; /* EIO: the last slave is closed */
      if (write (1, buf, (size_t)n) < 0)
        return 1;
    }
  return 0;
}
