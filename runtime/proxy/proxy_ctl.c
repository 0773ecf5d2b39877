/* proxy_ctl: a running proxy's policy changed live.  hako makes a unix
 * socket in the sandbox's state dir (<state>/proxy.sock, 0600, the
 * caller's: root's, or a rootless user's) before it forks the proxy, which
 * keeps the listening fd after it dropped its privileges.  `hako update
 * --allow/--deny/--secret` connects, sends the sandbox's network object and
 * its secrets' values (oci/egress.h), shuts its side, and reads one line
 * back: "ok N" once the new policy rules every request from here on and the
 * N connections it no longer lets through are cut, or "error: WHY".
 *
 * Why a socket and not a file the proxy re-reads: the proxy runs as nobody
 * and could read no file of the state dir, and a file readable by nobody
 * would be readable by every other proxy too (the secrets' values are in
 * it).  Only the socket's owner can connect, and nothing inside the
 * sandbox can reach the state dir. */
#include "runtime/proxy/proxy_ctl.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "lib/util.h"
#include "oci/egress.h"
#include "runtime/proxy/proxy_internal.h"

#define CTL_NAME "proxy.sock"
#define CTL_MAX (1 << 20)
#define CTL_TIMEOUT_S 2

/* sun_path for the socket: its path, or (too long for sun_path) the same
 * through the state dir's fd. */
static int
ctl_addr (const struct store_entry *e, struct sockaddr_un *sa, int *dirfd, hk_err *err)
{
  cleanup_free char *path = store_path (e, CTL_NAME);
  *sa = (struct sockaddr_un){ .sun_family = AF_UNIX };
  *dirfd = -1;
  if (strlen (path) < sizeof sa->sun_path)
    {
      memcpy (sa->sun_path, path, strlen (path) + 1);
      return 0;
    }
  *dirfd = open (e->dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (*dirfd < 0)
    return err_sys (err, "open %s", e->dir);
  snprintf (sa->sun_path, sizeof sa->sun_path, "/proc/self/fd/%d/" CTL_NAME, *dirfd);
  return 0;
}

int
proxy_ctl_listen (const struct store_entry *e, hk_err *err)
{
  struct sockaddr_un sa;
  int dirfd;
  if (ctl_addr (e, &sa, &dirfd, err) < 0)
    return -1;
  cleanup_close int dfd = dirfd;
  cleanup_free char *path = store_path (e, CTL_NAME);
  unlink (path);
  int fd = socket (AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  /* 0600 from the start: no moment when another user could connect. */
  mode_t old = umask (0177);
  int r = fd < 0 ? -1 : bind (fd, (struct sockaddr *)&sa, sizeof sa);
  umask (old);
  if (r < 0 || listen (fd, 4) < 0)
    {
      int e2 = errno;
      if (fd >= 0)
        close (fd);
      return err_code (err, e2, "the proxy's control socket %s", path);
    }
  return fd;
}

/* ---- in the proxy ---------------------------------------------------------------- */

/* The new policy from the message; the old one stays on any error. */
static int
apply (struct proxy *p, const char *text, size_t len, size_t *cut, hk_err *err)
{
  struct hako_sandbox sb;
  struct oci_secret_value *v;
  size_t n;
  if (oci_egress_update_parse (text, len, &sb, &v, &n, err) < 0)
    return -1;
  struct egress_policy *np = xcalloc (1, sizeof *np);
  int r = policy_from_sandbox (&sb, np, err);
  oci_sandbox_free (&sb);
  if (r == 0)
    r = policy_set_values (np, v, n, err);
  oci_secret_values_free (v, n);
  if (r == 0 && np->mode != HAKO_NET_ALLOWLIST && np->mode != HAKO_NET_DENYLIST)
    r = err_set (err, EINVAL, "the update's mode is not allowlist or denylist");
  if (r == 0 && p->tls == NULL && policy_intercepts (np))
    r = err_set (err, EINVAL,
                 "the sandbox was created without interception, so its trust has no CA of its own: request "
                 "rules for https and secrets need it from create on");
  if (r < 0)
    {
      policy_free (np);
      free (np);
      return -1;
    }
  np->learn = p->pol->learn;
  struct egress_policy *old = p->pol;
  p->pol = np;
  p->pol_gen++;
  if (p->pol_owned)
    {
      policy_free (old);
      free (old);
    }
  p->pol_owned = true;
  *cut = 0;
  for (struct conn *c = p->conns, *next; c; c = next)
    {
      next = c->next;
      bool was = !c->dead;
      conn_recheck (p, c);
      *cut += was && c->dead;
    }
  return 0;
}

void
proxy_ctl_serve (struct proxy *p)
{
  int fd = accept4 (p->cfg->ctl_fd, NULL, NULL, SOCK_CLOEXEC);
  if (fd < 0)
    return;
  /* Only the socket's owner connects (0600): a short blocking read is all
   * it can hold the loop for. */
  struct timeval tv = { .tv_sec = CTL_TIMEOUT_S };
  setsockopt (fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt (fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  char *buf = xmalloc (CTL_MAX);
  size_t len = 0;
  ssize_t n = 0;
  while (len < CTL_MAX && ((n = read (fd, buf + len, CTL_MAX - len)) > 0 || (n < 0 && errno == EINTR)))
    if (n > 0)
      len += (size_t)n;
  hk_err err = { 0 };
  size_t cut = 0;
  char reply[600];
  if (n < 0 || len == CTL_MAX)
    snprintf (reply, sizeof reply, "error: the update was not read whole\n");
  else if (apply (p, buf, len, &cut, &err) < 0)
    snprintf (reply, sizeof reply, "error: %.500s\n", err.msg);
  else
    snprintf (reply, sizeof reply, "ok %zu\n", cut);
  explicit_bzero (buf, len);
  free (buf);
  fd_write_all (fd, reply, strlen (reply));
  close (fd);
}

/* ---- in hako update --------------------------------------------------------------- */

int
proxy_ctl_update (const struct store_entry *e, const char *text, size_t len, size_t *cut, hk_err *err)
{
  struct sockaddr_un sa;
  int dirfd;
  if (ctl_addr (e, &sa, &dirfd, err) < 0)
    return -1;
  cleanup_close int dfd = dirfd;
  cleanup_close int fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0 || connect (fd, (struct sockaddr *)&sa, sizeof sa) < 0)
    return err_sys (err, "reach the sandbox's proxy (%s)", CTL_NAME);
  struct timeval tv = { .tv_sec = 10 };
  setsockopt (fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  if (fd_write_all (fd, text, len) < 0 || shutdown (fd, SHUT_WR) < 0)
    return err_sys (err, "send the proxy its new policy");
  char reply[700];
  size_t got = 0;
  ssize_t n;
  while (got < sizeof reply - 1
         && ((n = read (fd, reply + got, sizeof reply - 1 - got)) > 0 || (n < 0 && errno == EINTR)))
    if (n > 0)
      got += (size_t)n;
  reply[got] = '\0';
  reply[strcspn (reply, "\n")] = '\0';
  if (strncmp (reply, "ok ", 3) == 0)
    {
      *cut = strtoul (reply + 3, NULL, 10);
      return 0;
    }
  if (strncmp (reply, "error: ", 7) == 0)
    return err_set (err, EINVAL, "the proxy refused the update: %s", reply + 7);
  return err_set (err, EIO, "the proxy did not answer the update");
}
