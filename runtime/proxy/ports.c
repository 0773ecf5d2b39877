/* ports: published ports — parsing docker's -p, binding the host's side,
 * the forwarder process and its record in the state dir (ports.h says what
 * lives where). */
#include "runtime/proxy/ports.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/proctitle.h"
#include "lib/syscalls.h"
#include "lib/util.h"
#include "runtime/proxy/netpolicy.h"
#include "runtime/proxy/portfwd.h"
#include "runtime/state/pidinfo.h"
#include "runtime/state/sbxstate.h"

#define PORTS_FILE "ports"

/* ---- parsing --------------------------------------------------------------- */

/* A port number: digits only, 0-65535 (the caller says whether 0 is one). */
static bool
parse_number (const char *s, size_t n, unsigned *out)
{
  if (n == 0 || n > 5)
    return false;
  unsigned v = 0;
  for (size_t i = 0; i < n; i++)
    {
      if (!isdigit ((unsigned char)s[i]))
        return false;
      v = v * 10 + (unsigned)(s[i] - '0');
    }
  *out = v;
  return v <= 65535;
}

static int
bad_port (const char *text, hk_err *err, const char *why)
{
  return err_setk (err, ERR_INVALID_ARGUMENT, EINVAL,
                   "published port \"%s\": %s (expected [HOSTIP:]HOSTPORT:PORT, HOSTIP::PORT or PORT, "
                   "TCP; HOSTIP defaults to " PORTS_DEFAULT_HOST_IP ")",
                   text, why);
}

/* "HOSTIP", "[V6]" or "" (the default) into m->host_ip. */
static int
parse_host_ip (const char *text, const char *ip, size_t n, struct port_map *m, hk_err *err)
{
  char buf[INET6_ADDRSTRLEN + 2];
  if (n == 0)
    {
      snprintf (m->host_ip, sizeof m->host_ip, "%s", PORTS_DEFAULT_HOST_IP);
      return 0;
    }
  if (n >= sizeof buf)
    return bad_port (text, err, "the host address is not an IP address");
  memcpy (buf, ip, n);
  buf[n] = '\0';
  struct in_addr a4;
  struct in6_addr a6;
  bool bracketed = buf[0] == '[' && buf[n - 1] == ']';
  if (bracketed)
    buf[n - 1] = '\0';
  if (!bracketed && inet_pton (AF_INET, buf, &a4) == 1)
    inet_ntop (AF_INET, &a4, m->host_ip, sizeof m->host_ip);
  else if (bracketed && inet_pton (AF_INET6, buf + 1, &a6) == 1)
    inet_ntop (AF_INET6, &a6, m->host_ip, sizeof m->host_ip);
  else if (!bracketed && strchr (buf, ':'))
    return bad_port (text, err, "an IPv6 host address goes in brackets ([::1]:8080:80)");
  else
    return bad_port (text, err, "the host address is not an IP address");
  return 0;
}

int
port_parse (const char *text, struct port_map *out, hk_err *err)
{
  *out = (struct port_map){ 0 };
  size_t len = strlen (text);
  const char *slash = strchr (text, '/');
  if (slash)
    {
      if (strcmp (slash, "/tcp") != 0)
        return bad_port (text, err, "only TCP ports can be published");
      len = (size_t)(slash - text);
    }
  if (memchr (text, '-', len))
    return bad_port (text, err, "port ranges are not supported: give one -p for each port");
  /* The sandbox's port is after the last colon, the host port before it,
   * the address (brackets and all) before that. */
  const char *last = NULL, *prev = NULL;
  for (const char *p = text; p < text + len; p++)
    if (*p == ':' && !(memchr (text, '[', (size_t)(p - text)) && !memchr (text, ']', (size_t)(p - text))))
      {
        prev = last;
        last = p;
      }
  unsigned port, host = 0;
  const char *pstart = last ? last + 1 : text;
  if (!parse_number (pstart, (size_t)(text + len - pstart), &port) || port == 0)
    return bad_port (text, err, "the sandbox's port must be a number from 1 to 65535");
  if (last)
    {
      const char *hstart = prev ? prev + 1 : text;
      size_t hlen = (size_t)(last - hstart);
      /* "HOSTIP::PORT": any free host port on HOSTIP. */
      if (!(prev && hlen == 0) && !parse_number (hstart, hlen, &host))
        return bad_port (text, err, "the host port must be a number from 0 (any) to 65535");
    }
  if (parse_host_ip (text, text, prev ? (size_t)(prev - text) : 0, out, err) < 0)
    return -1;
  out->asked = (uint16_t)host;
  out->port = (uint16_t)port;
  return 0;
}

void
port_host_string (const struct port_map *m, char *buf, size_t size)
{
  bool v6 = strchr (m->host_ip, ':') != NULL;
  snprintf (buf, size, v6 ? "[%s]:%u" : "%s:%u", m->host_ip, (unsigned)m->host_port);
}

/* ---- checks and the host's side -------------------------------------------- */

int
ports_check_spec (const struct oci_spec *spec, const struct port_map *m, size_t n, hk_err *err)
{
  if (n == 0)
    return 0;
  const struct oci_namespace *ns = oci_spec_ns (spec, OCI_NS_NETWORK);
  enum hako_net_mode mode = spec->sandbox.net_mode;
  bool own = mode == HAKO_NET_NONE || (mode == HAKO_NET_ALLOWLIST && !spec->sandbox.net_join)
             || (mode == HAKO_NET_UNSET && ns && ns->path == NULL);
  if (mode == HAKO_NET_HOST || (mode == HAKO_NET_UNSET && ns == NULL))
    return err_setk (err, ERR_INVALID_ARGUMENT, EINVAL,
                     "published ports need a network namespace of the sandbox's own (--network none or "
                     "allowlist): this one shares the host's network, where its servers listen on the "
                     "host's ports already");
  if (!own)
    return err_setk (err, ERR_INVALID_ARGUMENT, EINVAL,
                     "published ports need a network namespace of the sandbox's own: this one joins "
                     "another's (publish the ports of the sandbox that made it)");
  for (size_t i = 0; i < n; i++)
    if (mode == HAKO_NET_ALLOWLIST && m[i].port == NETPOLICY_PROXY_PORT)
      return err_setk (err, ERR_INVALID_ARGUMENT, EINVAL,
                       "port %u is the allow-list proxy's inside the sandbox: it cannot be published",
                       (unsigned)m[i].port);
  return 0;
}

void
ports_close (int *fds, size_t n)
{
  for (size_t i = 0; fds && i < n; i++)
    if (fds[i] >= 0)
      {
        close (fds[i]);
        fds[i] = -1;
      }
}

static int
bind_error (const struct port_map *m, int e, hk_err *err)
{
  char where[INET6_ADDRSTRLEN + 16];
  struct port_map shown = *m;
  shown.host_port = m->asked;
  port_host_string (&shown, where, sizeof where);
  if (e == EADDRINUSE)
    return err_setk (err, ERR_BUSY, e, "publish port %u on %s: the host port is in use", (unsigned)m->port,
                     where);
  if (e == EACCES || e == EPERM)
    return err_setk (err, ERR_PERMISSION, e,
                     "publish port %u on %s: a host port below net.ipv4.ip_unprivileged_port_start "
                     "(1024 by default) needs CAP_NET_BIND_SERVICE",
                     (unsigned)m->port, where);
  if (e == EADDRNOTAVAIL)
    return err_setk (err, ERR_INVALID_ARGUMENT, e, "publish port %u on %s: %s is not an address of this host",
                     (unsigned)m->port, where, m->host_ip);
  return err_code (err, e, "publish port %u on %s", (unsigned)m->port, where);
}

/* One listening socket, non-blocking and close-on-exec.  SO_REUSEADDR: a
 * restarted sandbox gets its port back while the last run's connections
 * linger in TIME_WAIT (two listeners on one port are still refused). */
static int
bind_one (struct port_map *m, int *fd_out, hk_err *err)
{
  struct sockaddr_storage ss = { 0 };
  socklen_t len;
  bool v6 = strchr (m->host_ip, ':') != NULL;
  if (v6)
    {
      struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
      s6->sin6_family = AF_INET6;
      s6->sin6_port = htons (m->asked);
      inet_pton (AF_INET6, m->host_ip, &s6->sin6_addr);
      len = sizeof *s6;
    }
  else
    {
      struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
      s4->sin_family = AF_INET;
      s4->sin_port = htons (m->asked);
      inet_pton (AF_INET, m->host_ip, &s4->sin_addr);
      len = sizeof *s4;
    }
  int one = 1;
  cleanup_close int fd = socket (ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return err_sys (err, "socket");
  /* [::] means IPv6 alone, as asked: 0.0.0.0 is published by name. */
  if (setsockopt (fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0
      || (v6 && setsockopt (fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one) < 0))
    return err_sys (err, "setsockopt");
  if (bind (fd, (struct sockaddr *)&ss, len) < 0 || listen (fd, SOMAXCONN) < 0)
    return bind_error (m, errno, err);
  if (getsockname (fd, (struct sockaddr *)&ss, &len) < 0)
    return err_sys (err, "getsockname");
  m->host_port = ntohs (v6 ? ((struct sockaddr_in6 *)&ss)->sin6_port : ((struct sockaddr_in *)&ss)->sin_port);
  *fd_out = steal_fd (&fd);
  return 0;
}

int
ports_bind (struct port_map *m, size_t n, int *fds, hk_err *err)
{
  for (size_t i = 0; i < n; i++)
    fds[i] = -1;
  for (size_t i = 0; i < n; i++)
    if (bind_one (&m[i], &fds[i], err) < 0)
      {
        ports_close (fds, n);
        return -1;
      }
  return 0;
}

/* ---- the record -------------------------------------------------------------- */

static int
record_parse (const char *text, struct port_map **out, size_t *n, hk_err *err)
{
  *out = NULL;
  *n = 0;
  cleanup_free char *copy = xstrdup (text);
  char *save = NULL;
  for (char *l = strtok_r (copy, "\n", &save); l; l = strtok_r (NULL, "\n", &save))
    {
      struct port_map m = { 0 };
      unsigned asked, host, port;
      long long pid;
      unsigned long long start;
      unsigned char probe[16];
      if (sscanf (l, "%45s %u %u %u %lld %llu", m.host_ip, &asked, &host, &port, &pid, &start) != 6
          || asked > 65535 || host > 65535 || port == 0 || port > 65535 || pid < 0 || pid > INT32_MAX
          || (inet_pton (AF_INET, m.host_ip, probe) != 1 && inet_pton (AF_INET6, m.host_ip, probe) != 1)
          || *n >= PORTS_MAX)
        {
          free (*out);
          *out = NULL;
          *n = 0;
          return err_set (err, EINVAL, "damaged ports record: \"%s\"", l);
        }
      m.asked = (uint16_t)asked;
      m.host_port = (uint16_t)host;
      m.port = (uint16_t)port;
      m.fwd_pid = (pid_t)pid;
      m.fwd_start = start;
      *out = xrealloc (*out, (*n + 1) * sizeof **out);
      (*out)[(*n)++] = m;
    }
  return 0;
}

int
ports_read (const struct store_entry *e, struct port_map **m, size_t *n, hk_err *err)
{
  cleanup_free char *path = store_path (e, PORTS_FILE);
  cleanup_free char *text = NULL;
  *m = NULL;
  *n = 0;
  if (file_read_all (path, 1 << 20, &text, NULL, err) < 0)
    return err->errnum == ENOENT ? 0 : -1;
  return record_parse (text, m, n, err) < 0 ? err_prefix (err, "%s", path) : 0;
}

static int
record_write (const struct store_entry *e, const struct port_map *m, size_t n, hk_err *err)
{
  cleanup_free char *path = store_path (e, PORTS_FILE);
  size_t cap = 128 * n + 1, len = 0;
  cleanup_free char *text = xmalloc (cap);
  text[0] = '\0';
  for (size_t i = 0; i < n; i++)
    len += (size_t)snprintf (text + len, cap - len, "%s %u %u %u %lld %llu\n", m[i].host_ip,
                             (unsigned)m[i].asked, (unsigned)m[i].host_port, (unsigned)m[i].port,
                             (long long)m[i].fwd_pid, (unsigned long long)m[i].fwd_start);
  return file_write_atomic (path, text, len, 0600, err);
}

/* ---- the forwarder ------------------------------------------------------------ */

/* What the forwarder tells whoever started it, once it is in the sandbox's
 * network namespace with its privileges dropped (or why it could not). */
struct fwd_report
{
  int ok;
  pid_t pid;
  int errnum, kind;
  char msg[sizeof ((hk_err *)0)->msg];
};

static void __attribute__ ((noreturn)) fwd_fail (int report_fd, const hk_err *err)
{
  struct fwd_report r = { .errnum = err->errnum, .kind = (int)err->kind };
  snprintf (r.msg, sizeof r.msg, "%s", err->msg);
  fd_write_all (report_fd, &r, sizeof r);
  _exit (125);
}

/* Join the sandbox's network namespace: with the namespace fds from create,
 * or through the sandbox's process.  A hako that is not root of its own
 * namespace (rootless) joins the sandbox's user namespace first, in which
 * it has the capabilities setns needs.  *in_userns: that happened. */
static int
fwd_enter (int netns_fd, int userns_fd, int pidfd, bool *in_userns, hk_err *err)
{
  *in_userns = false;
  int r = netns_fd >= 0 ? setns (netns_fd, CLONE_NEWNET) : setns (pidfd, CLONE_NEWNET);
  if (r == 0)
    return 0;
  if (errno != EPERM)
    return err_sys (err, "join the sandbox's network namespace");
  if (netns_fd >= 0)
    r = userns_fd >= 0 && setns (userns_fd, CLONE_NEWUSER) == 0 ? setns (netns_fd, CLONE_NEWNET) : -1;
  else
    r = setns (pidfd, CLONE_NEWUSER | CLONE_NEWNET);
  if (r < 0)
    return err_sys (err, "join the sandbox's network namespace (its process may not be started yet: a "
                         "rootless sandbox's port can be added once it runs)");
  *in_userns = true;
  return 0;
}

/* The forwarder faces the sandbox's server: it keeps nothing it does not
 * need.  Not dumpable (no ptrace, no /proc/PID/mem), its own session, stdio
 * on /dev/null, only its own fds; then, in the sandbox's namespace, nobody
 * without capabilities when hako is root (every capability dropped in the
 * sandbox's user namespace otherwise) and no way to gain privileges back. */
static void
fwd_confine (int *keep, size_t n)
{
  prctl (PR_SET_DUMPABLE, 0, 0, 0, 0);
  signal (SIGCHLD, SIG_DFL);
  fd_detach_helper (keep, n);
  if (chdir ("/") < 0)
    _exit (125);
}

static int
fwd_drop (bool in_userns, hk_err *err)
{
  if (!in_userns && geteuid () == 0
      && (setgroups (0, NULL) < 0 || setresgid (65534, 65534, 65534) < 0
          || setresuid (65534, 65534, 65534) < 0))
    return err_sys (err, "forwarder: become nobody");
  cap_t none = cap_init ();
  int r = none ? cap_set_proc (none) : -1;
  if (none)
    cap_free (none);
  if (r < 0 || prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
    return err_sys (err, "forwarder: drop capabilities");
  return 0;
}

struct fwd_args
{
  const char *state_dir;
  const struct port_map *m;
  const int *fds;
  size_t n;
  int pidfd, netns_fd, userns_fd, report_fd;
};

static void __attribute__ ((noreturn)) fwd_main (const struct fwd_args *a)
{
  hk_err err = { 0 };
  int *keep = xcalloc (a->n + 4, sizeof *keep);
  struct portfwd_listener *l = xcalloc (a->n + 1, sizeof *l);
  for (size_t i = 0; i < a->n; i++)
    {
      keep[i] = a->fds[i];
      l[i] = (struct portfwd_listener){ .fd = a->fds[i], .port = a->m[i].port };
    }
  keep[a->n] = a->pidfd;
  keep[a->n + 1] = a->netns_fd;
  keep[a->n + 2] = a->userns_fd;
  keep[a->n + 3] = a->report_fd;
  fwd_confine (keep, a->n + 4);
  bool in_userns;
  if (fwd_enter (a->netns_fd, a->userns_fd, a->pidfd, &in_userns, &err) < 0 || fwd_drop (in_userns, &err) < 0)
    fwd_fail (a->report_fd, &err);
  if (a->netns_fd >= 0)
    close (a->netns_fd);
  if (a->userns_fd >= 0)
    close (a->userns_fd);
  /* "hako ports ID --root ROOT" in ps (and for the tests' leak checks). */
  proctitle_sandbox ("ports", a->state_dir);
  struct fwd_report r = { .ok = 1, .pid = getpid () };
  fd_write_all (a->report_fd, &r, sizeof r);
  close (a->report_fd);
  struct portfwd_cfg cfg = { .l = l, .n = a->n, .watch_fd = a->pidfd };
  _exit (portfwd_run (&cfg) < 0 ? 125 : 0);
}

/* Fork the forwarder, orphaned at once (no caller, a monitor or a
 * foreground run, has to reap it), and wait for its report. */
static int
fwd_fork (const struct fwd_args *a, int report_rd, pid_t *pid, hk_err *err)
{
  pid_t mid = fork ();
  if (mid < 0)
    return err_sys (err, "fork the port forwarder");
  if (mid == 0)
    {
      close (report_rd);
      pid_t f = fork ();
      if (f == 0)
        fwd_main (a);
      _exit (f < 0 ? 1 : 0);
    }
  close (a->report_fd);
  int ws = 0;
  while (waitpid (mid, &ws, 0) < 0)
    if (errno != EINTR)
      return err_sys (err, "wait for the port forwarder");
  if (!WIFEXITED (ws) || WEXITSTATUS (ws) != 0)
    return err_set (err, EAGAIN, "could not start the port forwarder");
  struct fwd_report r = { 0 };
  ssize_t got;
  do
    got = read (report_rd, &r, sizeof r);
  while (got < 0 && errno == EINTR);
  if (got != (ssize_t)sizeof r)
    return err_set (err, EIO, "the port forwarder ended before it was ready");
  if (!r.ok)
    return err_setk (err, (enum err_kind)r.kind, r.errnum, "%s", r.msg);
  *pid = r.pid;
  return 0;
}

static void
fwd_kill (pid_t pid, uint64_t start)
{
  cleanup_close int fd = pid_open (pid, start);
  if (fd >= 0 && sys_pidfd_send_signal (fd, SIGKILL, NULL, 0) == 0)
    pid_wait_exit (fd, 5000);
}

int
ports_start (const struct store_entry *e, struct port_map *m, int *fds, size_t n, int sandbox_pidfd,
             int netns_fd, int userns_fd, bool replace, hk_err *err)
{
  if (n == 0)
    return 0;
  int rp[2];
  if (pipe2 (rp, O_CLOEXEC) < 0)
    {
      ports_close (fds, n);
      return err_sys (err, "pipe");
    }
  struct fwd_args a = { .state_dir = e->dir,
                        .m = m,
                        .fds = fds,
                        .n = n,
                        .pidfd = sandbox_pidfd,
                        .netns_fd = netns_fd,
                        .userns_fd = userns_fd,
                        .report_fd = rp[1] };
  pid_t pid = 0;
  int r = fwd_fork (&a, rp[0], &pid, err);
  close (rp[0]);
  ports_close (fds, n); /* the forwarder's now */
  if (r < 0)
    return err_prefix (err, "publish ports");
  uint64_t start = 0;
  pid_stat (pid, &start, NULL);
  cleanup_free struct port_map *all = NULL;
  size_t n_old = 0;
  if (!replace && ports_read (e, &all, &n_old, err) < 0)
    {
      fwd_kill (pid, start);
      return -1;
    }
  all = xrealloc (all, (n_old + n) * sizeof *all);
  for (size_t i = 0; i < n; i++)
    {
      m[i].fwd_pid = pid;
      m[i].fwd_start = start;
      all[n_old + i] = m[i];
    }
  if (record_write (e, all, n_old + n, err) < 0)
    {
      fwd_kill (pid, start);
      return -1;
    }
  return 0;
}

void
ports_stop (const struct store_entry *e)
{
  cleanup_free struct port_map *m = NULL;
  size_t n;
  hk_err ignored;
  if (ports_read (e, &m, &n, &ignored) < 0 || n == 0)
    return;
  for (size_t i = 0; i < n; i++)
    {
      if (m[i].fwd_pid > 0)
        fwd_kill (m[i].fwd_pid, m[i].fwd_start);
      m[i].fwd_pid = 0;
      m[i].fwd_start = 0;
      m[i].host_port = 0;
    }
  record_write (e, m, n, &ignored);
}

/* ---- the verbs ----------------------------------------------------------------- */

static bool
published (const struct port_map *m)
{
  return m->fwd_pid > 0 && m->host_port > 0 && pid_alive (m->fwd_pid, m->fwd_start);
}

/* Only the maps published now. */
static size_t
keep_published (struct port_map *m, size_t n)
{
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    if (published (&m[i]))
      m[k++] = m[i];
  return k;
}

int
sbx_ports (const struct store *st, const char *id, struct port_map **m, size_t *n, hk_err *err)
{
  struct store_entry e;
  if (store_open (st, id, false, &e, err) < 0)
    return -1;
  int r = ports_read (&e, m, n, err);
  store_close (&e);
  if (r == 0)
    *n = keep_published (*m, *n);
  return r;
}

/* The sandbox as config.json says it was made: whether it can publish. */
static int
check_config (const struct store_entry *e, const struct port_map *want, hk_err *err)
{
  cleanup_free char *path = store_path (e, "config.json");
  struct oci_spec *spec = NULL;
  if (oci_spec_load (path, &spec, err) < 0)
    return -1;
  int r = ports_check_spec (spec, want, 1, err);
  oci_spec_free (spec);
  return r;
}

/* Publish want on the locked sandbox, whose state is s. */
static int
add_locked (const struct store_entry *e, const struct oci_state *s, const struct port_map *want,
            struct port_map *got, hk_err *err)
{
  if (s->status == OCI_STATUS_STOPPED || s->status == OCI_STATUS_CREATING)
    return err_setk (err, ERR_NOT_RUNNING, ESRCH,
                     "sandbox %s is %s: ports are added to a created, running or paused sandbox", e->id,
                     oci_status_name (s->status));
  if (check_config (e, want, err) < 0)
    return -1;
  cleanup_free struct port_map *old = NULL;
  size_t n;
  if (ports_read (e, &old, &n, err) < 0)
    return -1;
  for (size_t i = 0; want->asked == 0 && i < n; i++)
    if (old[i].port == want->port && strcmp (old[i].host_ip, want->host_ip) == 0 && published (&old[i]))
      {
        *got = old[i];
        return 0;
      }
  if (n >= PORTS_MAX)
    return err_setk (err, ERR_INVALID_ARGUMENT, E2BIG, "sandbox %s has %d published ports already", e->id,
                     PORTS_MAX);
  cleanup_close int pidfd = pid_open (s->pid, s->pid_start_time);
  if (pidfd < 0)
    return err_setk (err, ERR_NOT_RUNNING, ESRCH, "sandbox %s: container not running", e->id);
  struct port_map m = *want;
  int fd;
  if (ports_bind (&m, 1, &fd, err) < 0 || ports_start (e, &m, &fd, 1, pidfd, -1, -1, false, err) < 0)
    return -1;
  *got = m;
  return 0;
}

int
sbx_port_add (const struct store *st, const char *id, const struct port_map *want, struct port_map *got,
              hk_err *err)
{
  struct store_entry e;
  struct oci_state *s = NULL;
  if (store_open (st, id, true, &e, err) < 0)
    return -1;
  int r = store_read_state (&e, &s, err);
  if (r == 0)
    {
      sbx_refresh_status (&e, s);
      r = add_locked (&e, s, want, got, err);
    }
  oci_state_free (s);
  store_close (&e);
  return r;
}
