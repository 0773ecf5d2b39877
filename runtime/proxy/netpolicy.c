/* netpolicy: the proxied network modes (allowlist, denylist) around a
 * sandbox — the proxy variables of its processes, and the proxy's life:
 * a listening socket made inside the sandbox's netns by its first process,
 * served by a process in the host's netns.
 *
 * Why it holds against code that ignores HTTP_PROXY: the sandbox's netns has
 * only lo, no route and no resolver; its single way out is the listening
 * socket hako put there, whose other end is the proxy in the host's netns. */
#include "runtime/proxy/netpolicy.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/syscalls.h"
#include "lib/util.h"
#include "runtime/node/admission.h"
#include "runtime/proxy/egress.h"
#include "runtime/proxy/policy.h"
#include "runtime/proxy/proxy.h"
#include "runtime/proxy/proxy_ctl.h"
#include "runtime/proxy/proxy_resolve.h"
#include "runtime/proxy/tls.h"
#include "runtime/state/pidinfo.h"

#define STR2(x) #x
#define STR(x) STR2 (x)
#define PROXY_URL "http://" NETPOLICY_PROXY_ADDR ":" STR (NETPOLICY_PROXY_PORT)
#define NO_PROXY_LOOPBACK "localhost,127.0.0.1,::1"

static const char *const proxy_vars[] = {
  "HTTP_PROXY=" PROXY_URL,       "HTTPS_PROXY=" PROXY_URL,      "http_proxy=" PROXY_URL,
  "https_proxy=" PROXY_URL,      "ALL_PROXY=" PROXY_URL,        "all_proxy=" PROXY_URL,
  "NO_PROXY=" NO_PROXY_LOOPBACK, "no_proxy=" NO_PROXY_LOOPBACK,
};
#define N_PROXY_VARS (sizeof proxy_vars / sizeof *proxy_vars)

/* NO_PROXY names the sandbox's own loopback (its own servers), unless the
 * allow-list opens the host's: then "127.0.0.1" means the host's, which
 * only the proxy reaches, and a client that bypassed it would get the
 * sandbox's lo instead.  No port syntax works in every client's NO_PROXY,
 * so any loopback entry empties it. */
static bool
no_proxy_loopback (const struct oci_spec *spec)
{
  return !policy_opens_loopback (&spec->sandbox.allow_rules);
}

static char *
proxy_var (size_t j, bool keep_loopback)
{
  if (!keep_loopback && str_has_suffix (proxy_vars[j], "=" NO_PROXY_LOOPBACK))
    return xstrndup (proxy_vars[j], strcspn (proxy_vars[j], "=") + 1);
  return xstrdup (proxy_vars[j]);
}

char **
netpolicy_env (const struct oci_spec *spec, char *const *env)
{
  size_t n = strv_len (env);
  char **v = xcalloc (n + N_PROXY_VARS + 1, sizeof *v);
  size_t k = 0;
  bool on = netpolicy_proxied (spec);
  for (size_t i = 0; i < n; i++)
    {
      bool replaced = false;
      for (size_t j = 0; on && j < N_PROXY_VARS; j++)
        {
          size_t klen = strcspn (proxy_vars[j], "=") + 1;
          replaced |= strncmp (env[i], proxy_vars[j], klen) == 0;
        }
      if (!replaced)
        v[k++] = xstrdup (env[i]);
    }
  bool keep_loopback = on && no_proxy_loopback (spec);
  for (size_t j = 0; on && j < N_PROXY_VARS; j++)
    v[k++] = proxy_var (j, keep_loopback);
  v[k] = NULL;
  if (!on)
    return v;
  /* The secrets' placeholders and the trust variables. */
  char **w = egress_env (spec, v);
  strv_free (v);
  return w;
}

bool
netpolicy_proxied (const struct oci_spec *spec)
{
  return spec->sandbox.net_mode == HAKO_NET_ALLOWLIST || spec->sandbox.net_mode == HAKO_NET_DENYLIST;
}

int
netpolicy_prepare (struct oci_spec *spec, hk_err *err)
{
  if (!netpolicy_proxied (spec))
    return 0;
  if (spec->process)
    {
      char **env = netpolicy_env (spec, spec->process->env);
      strv_free (spec->process->env);
      spec->process->env = env;
    }
  return 0;
}

/* ---- a pod's shared network namespace ------------------------------------------ */

/* Joining a netns with a route out would let the container's code connect
 * past the proxy: the joined netns must have lo alone, checked from a
 * short-lived child (hako itself never changes namespaces). */
int
netpolicy_check_joined (const char *path, hk_err *err)
{
  int p[2];
  if (pipe2 (p, O_CLOEXEC) < 0)
    return err_sys (err, "pipe");
  pid_t child = fork ();
  if (child < 0)
    {
      close (p[0]);
      close (p[1]);
      return err_sys (err, "fork");
    }
  if (child == 0)
    {
      close (p[0]);
      int fd = open (path, O_RDONLY | O_CLOEXEC);
      if (fd < 0 || setns (fd, CLONE_NEWNET) < 0)
        {
          dprintf (p[1], "E%d", errno);
          _exit (1);
        }
      struct if_nameindex *ifs = if_nameindex ();
      if (ifs == NULL)
        {
          dprintf (p[1], "E%d", errno);
          _exit (1);
        }
      for (struct if_nameindex *i = ifs; i->if_index != 0; i++)
        if (strcmp (i->if_name, "lo") != 0)
          {
            dprintf (p[1], "I%s", i->if_name);
            _exit (1);
          }
      _exit (0);
    }
  close (p[1]);
  char buf[64] = "";
  ssize_t n = read (p[0], buf, sizeof buf - 1);
  close (p[0]);
  int st = 0;
  waitpid (child, &st, 0);
  if (n > 0)
    buf[n] = '\0';
  if (buf[0] == 'I')
    return err_set (
        err, EINVAL,
        "sandbox.network.mode allowlist: the pod's network namespace %s has interface %s besides lo, a "
        "way out past the proxy",
        path, buf + 1);
  if (buf[0] == 'E' || !WIFEXITED (st) || WEXITSTATUS (st) != 0)
    return err_code (err, buf[0] == 'E' ? atoi (buf + 1) : EIO, "join the pod's network namespace %s", path);
  return 0;
}

/* ---- the listening socket ------------------------------------------------------ */

bool
netpolicy_has_proxy (const struct oci_spec *spec)
{
  /* A pod's container: the proxy is the pod's sandbox container's. */
  return netpolicy_proxied (spec) && !spec->sandbox.net_join;
}

/* Made by the sandbox's first process, in its new network namespace, and
 * passed to hako over the sync socket: hako needs no way into that
 * namespace (a rootless hako has none — it cannot setns into the
 * sandbox's user and network namespaces — and a root one never changes
 * namespaces).  It is made before any code of the sandbox's own runs, so
 * nothing inside can have taken the port first and be where HTTP_PROXY
 * points, and the process closes its copy before exec, so the sandbox's
 * code cannot accept the connections meant for the proxy. */
int
netpolicy_listen (hk_err *err)
{
  int fd = socket (AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  int one = 1;
  struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons (NETPOLICY_PROXY_PORT) };
  inet_pton (AF_INET, NETPOLICY_PROXY_ADDR, &sin.sin_addr);
  if (fd < 0 || setsockopt (fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0
      || bind (fd, (struct sockaddr *)&sin, sizeof sin) < 0 || listen (fd, 1024) < 0)
    {
      int e = errno;
      if (fd >= 0)
        close (fd);
      return err_code (err, e, "proxy: listen on %s:%d inside the sandbox", NETPOLICY_PROXY_ADDR,
                       NETPOLICY_PROXY_PORT);
    }
  return fd;
}

/* ---- the proxy process ------------------------------------------------------- */

/* The proxy faces the sandbox's code: it keeps nothing it does not need.
 * Not dumpable (no ptrace, no /proc/PID/mem), its own session, stdio on
 * /dev/null, only its three fds, as nobody without capabilities when hako
 * runs as root, and no way to gain privileges back. */
static void
proxy_confine (int *keep, size_t n)
{
  /* One socket and one pipe pair per direction: 5 fds a connection. */
  fd_detach_helper (keep, n);
  if (geteuid () == 0
      && (setgroups (0, NULL) < 0 || setresgid (65534, 65534, 65534) < 0
          || setresuid (65534, 65534, 65534) < 0))
    _exit (125);
  prctl (PR_SET_DUMPABLE, 0, 0, 0, 0);
  prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
}

static int
write_record (const struct store_entry *e, pid_t pid, hk_err *err)
{
  cleanup_free char *path = store_path (e, "proxy.pid");
  return pid_record_write (path, pid, 0, true, err);
}

static int
read_record (const struct store_entry *e, pid_t *pid, uint64_t *start)
{
  cleanup_free char *path = store_path (e, "proxy.pid");
  return pid_record_read (path, pid, start);
}

/* Everything the proxy is given, gathered by hako as the caller (root)
 * before the fork: the proxy, as nobody, could read none of it. */
struct proxy_boot
{
  struct egress_policy pol;
  char *ca_key, *ca_crt; /* the sandbox's CA (PEM), when it intercepts */
  char *hosts;           /* node.json's egress.hosts, read; NULL none */
  char trust[OCI_NODE_MAX_PATH];
  uint64_t head_timeout_ms;
};

static void
boot_free (struct proxy_boot *b)
{
  policy_free (&b->pol);
  if (b->ca_key)
    explicit_bzero (b->ca_key, strlen (b->ca_key));
  free (b->ca_key);
  free (b->ca_crt);
  free (b->hosts);
  *b = (struct proxy_boot){ 0 };
}

/* Each secret of the policy gets its value, kept in the state dir at create. */
static int
attach_values (const struct store_entry *e, struct egress_policy *pol, hk_err *err)
{
  struct oci_secret_value *v;
  size_t n;
  if (pol->n_secrets == 0)
    return 0;
  if (egress_load_values (e, &v, &n, err) < 0)
    return -1;
  int r = policy_set_values (pol, v, n, err);
  oci_secret_values_free (v, n);
  return r;
}

static int
boot_gather (const struct store_entry *e, const struct oci_spec *spec, bool learn, struct proxy_boot *b,
             hk_err *err)
{
  *b = (struct proxy_boot){ 0 };
  struct oci_node node;
  bool present;
  if (policy_from_spec (spec, &b->pol, err) < 0)
    return -1;
  b->pol.learn = learn;
  if (attach_values (e, &b->pol, err) < 0 || admission_load_node (&node, &present, err) < 0)
    return -1;
  if (present)
    {
      snprintf (b->trust, sizeof b->trust, "%s", node.egress_trust);
      b->head_timeout_ms = node.egress_head_timeout_ms;
      if (node.egress_hosts[0] && file_read_all (node.egress_hosts, 1 << 20, &b->hosts, NULL, err) < 0)
        return err_prefix (err, "node config egress.hosts");
    }
  if (!egress_intercepts (spec))
    return 0;
  cleanup_free char *key = store_path (e, EGRESS_CA_KEY), *crt = store_path (e, EGRESS_CA_CRT);
  if (file_read_all (key, 64 << 10, &b->ca_key, NULL, err) < 0
      || file_read_all (crt, 64 << 10, &b->ca_crt, NULL, err) < 0)
    return err_prefix (err, "the sandbox's egress CA");
  return 0;
}

/* In the proxy, before it drops its privileges: what needs root or files. */
static int
boot_child (struct proxy_boot *b, struct proxy_cfg *cfg, hk_err *err)
{
  cfg->policy = &b->pol;
  cfg->head_timeout_ms = b->head_timeout_ms ? b->head_timeout_ms : PROXY_HEAD_TIMEOUT_MS;
  if (b->hosts)
    resolver_set_hosts (b->hosts);
  if (b->ca_key && tls_ctx_new (b->ca_key, b->ca_crt, b->trust[0] ? b->trust : NULL, &cfg->tls, err) < 0)
    return -1;
  if (b->ca_key)
    explicit_bzero (b->ca_key, strlen (b->ca_key));
  return 0;
}

/* Fork the proxy: it sets itself up (boot_child), drops what it does not
 * need, then says so by closing a pipe (or writes why it could not). */
static pid_t
proxy_fork (const struct store_entry *e, struct proxy_boot *boot, int listen_fd, int watch_fd, int log_fd,
            int ctl_fd, int learn_fd, hk_err *err)
{
  int ready[2];
  if (pipe2 (ready, O_CLOEXEC) < 0)
    return err_sys (err, "proxy: pipe");
  pid_t pid = fork ();
  if (pid < 0)
    {
      close (ready[0]);
      close (ready[1]);
      return err_sys (err, "fork the proxy");
    }
  if (pid == 0)
    {
      close (ready[0]);
      struct proxy_cfg cfg = { .listen_fd = listen_fd,
                               .watch_fd = watch_fd,
                               .log_fd = log_fd,
                               .learn_fd = learn_fd,
                               .ctl_fd = ctl_fd,
                               .sandbox = e->id,
                               .store = e };
      hk_err berr = { 0 };
      if (boot_child (boot, &cfg, &berr) < 0)
        {
          fd_write_all (ready[1], berr.msg, strlen (berr.msg));
          _exit (125);
        }
      int keep[6] = { listen_fd, watch_fd, log_fd, ctl_fd, ready[1], learn_fd };
      proxy_confine (keep, learn_fd >= 0 ? 6 : 5);
      close (ready[1]);
      _exit (proxy_run (&cfg) < 0 ? 125 : 0);
    }
  close (ready[1]);
  char why[512] = "";
  ssize_t n;
  while ((n = read (ready[0], why, sizeof why - 1)) < 0 && errno == EINTR)
    ;
  close (ready[0]);
  if (n > 0)
    {
      why[n] = '\0';
      waitpid (pid, NULL, 0);
      return err_set (err, EIO, "proxy: %s", why);
    }
  return pid;
}

int
proxy_start (const struct store_entry *e, const struct oci_spec *spec, int sandbox_pidfd, int *listen_fd_in,
             int learn_fd, hk_err *err)
{
  /* Ours from here, whatever happens: the proxy gets it, hako keeps none. */
  cleanup_close int listen_fd = *listen_fd_in;
  *listen_fd_in = -1;
  if (!netpolicy_has_proxy (spec))
    return 0;
  if (listen_fd < 0)
    return err_set (err, EIO, "proxy: the sandbox's process made no listening socket");
  proxy_stop (e); /* a restart: the previous proxy served a namespace that is gone */
  struct proxy_boot boot;
  if (boot_gather (e, spec, learn_fd >= 0, &boot, err) < 0)
    {
      boot_free (&boot);
      return err_prefix (err, "proxy");
    }
  cleanup_free char *log_path = store_path (e, "proxy.log");
  cleanup_close int log_fd = open (log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  cleanup_close int watch_fd = fcntl (sandbox_pidfd, F_DUPFD_CLOEXEC, 3);
  cleanup_close int ctl_fd = -1;
  if (log_fd < 0 || watch_fd < 0)
    {
      boot_free (&boot);
      return err_sys (err, "proxy: open %s", log_path);
    }
  if ((ctl_fd = proxy_ctl_listen (e, err)) < 0)
    {
      boot_free (&boot);
      return err_prefix (err, "proxy");
    }
  pid_t pid = proxy_fork (e, &boot, listen_fd, watch_fd, log_fd, ctl_fd, learn_fd, err);
  boot_free (&boot);
  if (pid < 0)
    return -1;
  if (write_record (e, pid, err) < 0)
    {
      kill (pid, SIGKILL);
      waitpid (pid, NULL, 0);
      return err_prefix (err, "proxy");
    }
  return 0;
}

void
proxy_stop (const struct store_entry *e)
{
  pid_t pid;
  uint64_t start;
  cleanup_free char *path = store_path (e, "proxy.pid");
  if (read_record (e, &pid, &start) == 0)
    {
      cleanup_close int pidfd = pid_open (pid, start);
      if (pidfd >= 0)
        {
          sys_pidfd_send_signal (pidfd, SIGKILL, NULL, 0);
          pid_wait_exit (pidfd, 5000);
        }
      waitpid (pid, NULL, WNOHANG); /* ours when `run` started it */
    }
  unlink (path);
}

/* Copy src to a new temporary beside dest, then rename over dest: a reader
 * sees the previous run's log or this one's, never half of one. */
static int
copy_log (int src, const char *dest, hk_err *err)
{
  cleanup_free char *tmp = xasprintf ("%s.tmp", dest);
  unlink (tmp);
  cleanup_close int out = open (tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (out < 0)
    return err_sys (err, "create %s", tmp);
  char buf[65536];
  ssize_t n;
  while ((n = read (src, buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR))
    if (n > 0 && fd_write_all (out, buf, (size_t)n) < 0)
      break;
  if (n != 0 || rename (tmp, dest) < 0)
    {
      int e = errno;
      unlink (tmp);
      return err_code (err, e, "keep the proxy log as %s", dest);
    }
  return 0;
}

int
proxy_log_keep (const struct store_entry *e, const char *dest, bool *kept, hk_err *err)
{
  *kept = false;
  cleanup_free char *path = store_path (e, "proxy.log");
  cleanup_close int src = open (path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (src < 0)
    return errno == ENOENT ? 0 : err_sys (err, "open %s", path);
  proxy_stop (e); /* its last line written */
  if (copy_log (src, dest, err) < 0)
    return -1;
  *kept = true;
  return 0;
}
