/* console: a sandbox process's terminal — a pty allocated inside the
 * sandbox's own devpts, its master handed over a unix socket (runc's
 * --console-socket protocol), and hako's relay between its own terminal and
 * that master when no socket was given. */
#include "runtime/build/console.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/un.h>
#include <unistd.h>

#include "lib/fdpass.h"
#include "lib/inroot.h"
#include "lib/syscalls.h"
#include "lib/util.h"

#ifndef DEVPTS_SUPER_MAGIC
#define DEVPTS_SUPER_MAGIC 0x1cd1
#endif
#ifndef TIOCGPTPEER
#define TIOCGPTPEER _IO ('T', 0x41)
#endif

/* What runc puts in the message beside the fd (the master's file name);
 * shims read it and otherwise ignore it. */
static const char master_name[] = "/dev/ptmx";

int
console_connect (const char *path, int *fd, hk_err *err)
{
  struct sockaddr_un sa = { .sun_family = AF_UNIX };
  if (strlen (path) >= sizeof sa.sun_path)
    return err_set (err, ENAMETOOLONG, "console socket %s: path too long", path);
  strcpy (sa.sun_path, path);
  *fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (*fd < 0)
    return err_sys (err, "console socket");
  if (connect (*fd, (struct sockaddr *)&sa, sizeof sa) < 0)
    {
      int e = errno;
      close (*fd);
      *fd = -1;
      return err_code (err, e, "connect to console socket %s", path);
    }
  return 0;
}

int
console_send_master (int sock, int master, hk_err *err)
{
  if (fd_send (sock, master_name, sizeof master_name - 1, master) < 0)
    return err_sys (err, "send the terminal over the console socket");
  return 0;
}

int
console_recv_master (int sock, int *master, hk_err *err)
{
  char name[4096];
  if (fd_recv (sock, name, sizeof name, master) < 0)
    return err_sys (err, "receive the terminal");
  if (*master < 0)
    return err_set (err, EPIPE, "the sandbox's process sent no terminal");
  return 0;
}

/* ---- inside the sandbox ----------------------------------------------------- */

static int
open_beneath_root (const char *path, int flags, uint64_t resolve)
{
  cleanup_close int root = open ("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (root < 0)
    return -1;
  return inroot_open (root, path, flags, resolve);
}

dev_t
console_host_devpts (void)
{
  struct stat sb;
  struct statfs fs;
  if (statfs ("/dev/pts", &fs) < 0 || fs.f_type != DEVPTS_SUPER_MAGIC || stat ("/dev/pts", &sb) < 0)
    return 0;
  return sb.st_dev;
}

/* The sandbox's own pty: /dev/pts/ptmx opened without following any link
 * and checked to be a devpts other than the host's, so the pty belongs to
 * the instance mounted for the sandbox (a devpts mount is a new instance)
 * and never shows up among the host's, where a bind of the host's /dev/pts
 * would put it; the slave is opened through the master (TIOCGPTPEER), with
 * no path lookup at all. */
static int
open_pty (const struct winsize *ws, dev_t host_devpts, int *master, int *slave, hk_err *err)
{
  struct statfs fs;
  struct stat sb;
  int unlock = 0;
  *master = open_beneath_root ("dev/pts/ptmx", O_RDWR | O_NOCTTY, RESOLVE_NO_SYMLINKS);
  if (*master < 0)
    return err_sys (err, "open /dev/pts/ptmx in the sandbox (a terminal needs a devpts mount "
                         "at /dev/pts)");
  if (fstatfs (*master, &fs) < 0 || fs.f_type != DEVPTS_SUPER_MAGIC || fstat (*master, &sb) < 0)
    return err_set (err, ENOTTY, "/dev/pts/ptmx in the sandbox is not on a devpts");
  if (host_devpts != 0 && sb.st_dev == host_devpts)
    return err_set (err, EPERM,
                    "/dev/pts in the sandbox is the host's devpts; a terminal needs a "
                    "devpts mount of its own there");
  if (ioctl (*master, TIOCSPTLCK, &unlock) < 0)
    return err_sys (err, "unlock the pty");
  *slave = ioctl (*master, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (*slave < 0)
    return err_sys (err, "open the pty's slave");
  if (ws && ws->ws_row && ws->ws_col && ioctl (*master, TIOCSWINSZ, ws) < 0)
    return err_sys (err, "set the terminal size");
  return 0;
}

/* /dev/console becomes the slave, as runc makes it.  CVE-2025-52565: runc
 * bound the slave by path, and a /dev/console (or /dev/pts/N) that the
 * sandbox's rootfs turned into a symlink redirected that bind onto a host
 * file of its choosing.  Here neither end is a path: the source is the
 * slave fd itself (open_tree on the fd), the target is /dev/console opened
 * with openat2 RESOLVE_IN_ROOT and no symlinks, checked to be a file or a
 * device, and the two are joined by move_mount between the two fds. */
static int
bind_dev_console (int slave, hk_err *err)
{
  const uint64_t strict = RESOLVE_NO_SYMLINKS; /* besides inroot_open's own */
  cleanup_close int dev = open_beneath_root ("dev", O_PATH | O_DIRECTORY, strict);
  if (dev < 0)
    return err_sys (err, "open /dev in the sandbox");
  int made = openat (dev, "console", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (made >= 0)
    close (made);
  else if (errno != EEXIST)
    return err_sys (err, "create /dev/console");
  cleanup_close int target = inroot_open (dev, "console", O_PATH | O_NOFOLLOW, strict);
  struct stat sb;
  if (target < 0 || fstat (target, &sb) < 0)
    return err_sys (err, "open /dev/console");
  if (!S_ISREG (sb.st_mode) && !S_ISCHR (sb.st_mode))
    return err_set (err, EPERM,
                    "/dev/console in the sandbox is neither a file nor a device; "
                    "refusing to mount the terminal on it");
  cleanup_close int tree = sys_open_tree (slave, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
  if (tree < 0)
    return err_sys (err, "open_tree of the terminal");
  if (sys_move_mount (tree, "", target, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
    return err_sys (err, "mount the terminal on /dev/console");
  return 0;
}

int
console_setup (int sock, const struct winsize *ws, bool dev_console, dev_t host_devpts, hk_err *err)
{
  cleanup_close int master = -1;
  cleanup_close int slave = -1;
  if (open_pty (ws, host_devpts, &master, &slave, err) < 0)
    return -1;
  if (dev_console && bind_dev_console (slave, err) < 0)
    return -1;
  if (console_send_master (sock, master, err) < 0)
    return -1;
  for (int fd = 0; fd < 3; fd++)
    if (dup2 (slave, fd) < 0)
      return err_sys (err, "terminal as fd %d", fd);
  if (ioctl (0, TIOCSCTTY, 0) < 0)
    return err_sys (err, "make the pty the controlling terminal");
  return 0;
}

/* ---- hako's relay ------------------------------------------------------------ */

void
console_relay_begin (struct console_relay *r, int master)
{
  struct winsize ws;
  r->master = master;
  r->in_open = true;
  r->raw = false;
  fcntl (master, F_SETFL, fcntl (master, F_GETFL) | O_NONBLOCK);
  if (isatty (0) && tcgetattr (0, &r->saved) == 0)
    {
      struct termios raw = r->saved;
      cfmakeraw (&raw); /* the pty inside does the line discipline */
      r->raw = tcsetattr (0, TCSANOW, &raw) == 0;
    }
  if (ioctl (0, TIOCGWINSZ, &ws) == 0 && ws.ws_row && ws.ws_col)
    ioctl (master, TIOCSWINSZ, &ws);
}

void
console_relay_fds (const struct console_relay *r, struct pollfd pf[2])
{
  pf[0] = (struct pollfd){ .fd = r->master >= 0 && r->in_open ? 0 : -1, .events = POLLIN };
  pf[1] = (struct pollfd){ .fd = r->master, .events = POLLIN };
}

/* Copy what is there from master to stdout; false once the pty is closed. */
static bool
relay_out (struct console_relay *r)
{
  char buf[16384];
  for (;;)
    {
      ssize_t n = read (r->master, buf, sizeof buf);
      if (n > 0)
        {
          /* Nobody reading our stdout is no reason to stop draining the pty. */
          if (fd_write_all (1, buf, (size_t)n) < 0)
            errno = 0;
          continue;
        }
      if (n < 0 && errno == EINTR)
        continue;
      /* EAGAIN: nothing more now; EIO: every slave fd is closed. */
      return n < 0 && errno == EAGAIN;
    }
}

void
console_relay_io (struct console_relay *r, const struct pollfd pf[2])
{
  if (r->master < 0)
    return;
  if (pf[0].fd >= 0 && pf[0].revents)
    {
      char buf[4096];
      ssize_t n = read (0, buf, sizeof buf);
      if (n > 0)
        {
          /* The master is non-blocking: wait for room rather than drop keys. */
          for (ssize_t off = 0; off < n;)
            {
              ssize_t w = write (r->master, buf + off, (size_t)(n - off));
              if (w > 0)
                off += w;
              else if (w < 0 && errno == EAGAIN)
                poll (&(struct pollfd){ .fd = r->master, .events = POLLOUT }, 1, 100);
              else if (!(w < 0 && errno == EINTR))
                break;
            }
        }
      else if (n == 0 || (errno != EINTR && errno != EAGAIN))
        {
          /* Our input ended (a pipe or a file): the end-of-file character
           * tells a reader of the pty the same, as a ^D typed on an empty
           * line would. */
          struct termios t;
          if (tcgetattr (r->master, &t) == 0 && (t.c_lflag & ICANON))
            {
              char eof = (char)t.c_cc[VEOF];
              if (write (r->master, &eof, 1) < 0)
                errno = 0;
            }
          r->in_open = false;
        }
    }
  if (pf[1].revents && !relay_out (r))
    {
      /* Every slave fd is closed; the process's exit comes through its pidfd. */
      close (r->master);
      r->master = -1;
    }
}

void
console_relay_winch (struct console_relay *r)
{
  struct winsize ws;
  if (r->master >= 0 && ioctl (0, TIOCGWINSZ, &ws) == 0)
    ioctl (r->master, TIOCSWINSZ, &ws);
}

void
console_relay_end (struct console_relay *r)
{
  if (r->master >= 0)
    {
      relay_out (r);
      close (r->master);
      r->master = -1;
    }
  if (r->raw)
    tcsetattr (0, TCSANOW, &r->saved);
  r->raw = false;
}
