/* overrides: the flags run, create and spec share — limits (--memory,
 * --memory-swap, --cpus, --pids-limit, --disk, --timeout), the process (-e,
 * --env-file, -w, -u), the filesystem (-v, --tmpfs, --read-only), the
 * hostname and the network (--network, --allow), and systemd's LISTEN_FDS.
 * Each is checked when it is parsed, then written into the config text
 * (oci_spec_override) and the config parsed again: the frozen config.json
 * says what the sandbox runs with. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "cmd/config/internal.h"
#include "lib/util.h"
#include "oci/netrule.h"
#include "runtime/confine/userdb.h"

/* The CFS period --cpus writes (docker's and the kernel's default). */
#define CPU_PERIOD 100000

static bool
valid_env_name (const char *s, size_t n)
{
  return n > 0 && memchr (s, '=', n) == NULL;
}

/* K=V into the list, replacing an earlier K (the last one given wins). */
static void
env_put (struct cmd_overrides *ov, char *kv)
{
  size_t klen = strcspn (kv, "=");
  size_t n = strv_len (ov->o.env);
  for (size_t i = 0; i < n; i++)
    if (strncmp (ov->o.env[i], kv, klen) == 0 && ov->o.env[i][klen] == '=')
      {
        free (ov->o.env[i]);
        ov->o.env[i] = kv;
        return;
      }
  ov->o.env = xrealloc (ov->o.env, (n + 2) * sizeof *ov->o.env);
  ov->o.env[n] = kv;
  ov->o.env[n + 1] = NULL;
}

/* "K=V", or "K" alone: hako's own value of K, none when it has none (as
 * docker does).  0, or -1 when arg is no such thing. */
static int
env_arg (struct cmd_overrides *ov, const char *arg, size_t len)
{
  const char *eq = memchr (arg, '=', len);
  if (!valid_env_name (arg, eq ? (size_t)(eq - arg) : len) || memchr (arg, '\0', len))
    return -1;
  if (eq)
    {
      env_put (ov, xstrndup (arg, len));
      return 0;
    }
  cleanup_free char *name = xstrndup (arg, len);
  const char *v = getenv (name);
  if (v)
    env_put (ov, xasprintf ("%s=%s", name, v));
  return 0;
}

/* docker's env file: a K=V (or K) a line; blank lines and lines starting
 * with # are skipped; no quotes are taken off. */
static int
env_file (struct cmd_overrides *ov, const char *path, const char *verb)
{
  cleanup_free char *text = NULL;
  size_t len;
  hk_err err = { 0 };
  if (file_read_all (path, 1 << 20, &text, &len, &err) < 0)
    return cmd_usage (verb, "--env-file: %s", err.msg), -1;
  if (memchr (text, '\0', len))
    return cmd_usage (verb, "--env-file %s: holds a NUL byte (expected K=V lines)", path), -1;
  unsigned line = 0;
  for (char *p = text; *p;)
    {
      char *nl = strchr (p, '\n');
      size_t n = nl ? (size_t)(nl - p) : strlen (p);
      line++;
      if (n && p[n - 1] == '\r')
        n--;
      const char *s = p;
      while (n && (*s == ' ' || *s == '\t'))
        s++, n--;
      if (n && *s != '#' && env_arg (ov, s, n) < 0)
        return cmd_usage (verb, "--env-file %s:%u: expected NAME=VALUE or NAME", path, line), -1;
      p = nl ? nl + 1 : p + strlen (p);
    }
  return 0;
}

/* Bytes, a k/m/g suffix, or -1 (none) when allow_none. */
static int
size_arg (const char *verb, const char *flag, const char *arg, bool allow_none, int64_t *out)
{
  uint64_t v;
  if (allow_none && strcmp (arg, "-1") == 0)
    {
      *out = -1;
      return 0;
    }
  if (parse_size (arg, &v) < 0 || v == 0 || v > INT64_MAX)
    return cmd_usage (verb, "%s \"%s\": expected bytes or a k/m/g suffix%s", flag, arg,
                      allow_none ? " (-1 for no limit)" : ""),
           -1;
  *out = (int64_t)v;
  return 0;
}

static int
cpus_arg (const char *verb, const char *arg, struct oci_overrides *o)
{
  char *end = (char *)"";
  errno = 0;
  /* A digit first keeps out "inf", "nan" and hex floats. */
  double v = (*arg >= '0' && *arg <= '9') || *arg == '.' ? strtod (arg, &end) : -1;
  /* The kernel's smallest quota is 1 ms: 0.01 of the 100 ms period. */
  if (errno || !isfinite (v) || *end != '\0' || v < 0.01 || v > 4096)
    return cmd_usage (verb, "--cpus \"%s\": expected a number of CPUs from 0.01 (\"1.5\")", arg), -1;
  o->has_cpus = true;
  o->cpu_period = CPU_PERIOD;
  o->cpu_quota = (int64_t)(v * CPU_PERIOD + 0.5);
  return 0;
}

static int
pids_arg (const char *verb, const char *arg, struct oci_overrides *o)
{
  char *end;
  errno = 0;
  long long v = strtoll (arg, &end, 10);
  if (errno || end == arg || *end != '\0' || (v < 1 && v != -1))
    return cmd_usage (verb, "--pids-limit \"%s\": expected a number of processes (-1 for no limit)", arg), -1;
  o->has_pids = true;
  o->pids = v;
  return 0;
}

/* An absolute destination, without "..": the path it is mounted on. */
static char *
destination (const char *d)
{
  bool above = false;
  if (d[0] != '/')
    return NULL;
  char *clean = path_lexical (d, &above);
  if (above || clean[0] == '\0')
    {
      free (clean);
      return NULL;
    }
  char *r = xasprintf ("/%s", clean);
  free (clean);
  return r;
}

/* A destination given twice is refused (as docker does): which of the two
 * was meant is not for hako to guess. */
static bool
taken (const struct cmd_overrides *ov, const char *dst, const char *flag, const char *arg, const char *verb)
{
  for (size_t i = 0; i < ov->o.n_mounts; i++)
    if (strcmp (ov->o.mounts[i].destination, dst) == 0)
      {
        cmd_usage (verb, "%s \"%s\": %s is the destination of an earlier -v or --tmpfs", flag, arg, dst);
        return true;
      }
  return false;
}

static struct oci_override_mount *
new_mount (struct cmd_overrides *ov)
{
  ov->o.mounts = xrealloc (ov->o.mounts, (ov->o.n_mounts + 1) * sizeof *ov->o.mounts);
  struct oci_override_mount *m = &ov->o.mounts[ov->o.n_mounts++];
  *m = (struct oci_override_mount){ 0 };
  return m;
}

/* -v's OPTS, comma-separated: ro or rw, and idmap or ridmap (podman's
 * spellings: ":ro,idmap", ":idmap").  -1 after a usage error. */
static int
volume_opts (char *opts, const char *arg, const char *verb, bool *ro, const char **idmap)
{
  static const char form[] = "expected SRC:DST[:ro|rw][,idmap|ridmap]";
  bool mode = false;
  if (opts && opts[0] == '\0')
    return cmd_usage (verb, "--volume \"%s\": nothing after the last ':' (%s)", arg, form), -1;
  char *save = NULL;
  for (char *w = opts ? strtok_r (opts, ",", &save) : NULL; w; w = strtok_r (NULL, ",", &save))
    {
      bool is_mode = strcmp (w, "ro") == 0 || strcmp (w, "rw") == 0;
      bool is_idmap = strcmp (w, "idmap") == 0 || strcmp (w, "ridmap") == 0;
      if (str_has_prefix (w, "idmap="))
        return cmd_usage (verb,
                          "--volume \"%s\": \"%s\": a mapping of its own is written in a config's mount "
                          "(uidMappings and gidMappings, hako-spec(5)); \"idmap\" alone takes the sandbox's",
                          arg, w),
               -1;
      if ((!is_mode && !is_idmap) || (is_mode && mode) || (is_idmap && *idmap))
        return cmd_usage (verb, "--volume \"%s\": %s \"%s\" (%s)", arg,
                          is_mode || is_idmap ? "a second" : "unknown option", w, form),
               -1;
      if (is_mode)
        *ro = w[1] == 'o';
      if (is_idmap)
        *idmap = w[0] == 'r' ? "ridmap" : "idmap";
      mode |= is_mode;
    }
  return 0;
}

/* SRC:DST[:ro|rw][,idmap|ridmap]: SRC must exist (nothing is made for it), as the caller
 * names it now: the config records the real path. */
static int
volume_arg (struct cmd_overrides *ov, const char *arg, const char *verb)
{
  static const char form[] = "expected SRC:DST[:ro|rw][,idmap|ridmap], SRC an existing path, DST absolute";
  cleanup_free char *copy = xstrdup (arg);
  char *dst = strchr (copy, ':');
  if (dst == NULL || dst == copy)
    return cmd_usage (verb, "--volume \"%s\": %s", arg, form), -1;
  *dst++ = '\0';
  char *opts = strchr (dst, ':');
  if (opts)
    *opts++ = '\0';
  bool ro = false;
  const char *idmap = NULL;
  if (volume_opts (opts, arg, verb, &ro, &idmap) < 0)
    return -1;
  cleanup_free char *d = destination (dst);
  if (d == NULL)
    return cmd_usage (verb, "--volume \"%s\": destination \"%s\" (%s, not /, no \"..\")", arg, dst, form), -1;
  if (taken (ov, d, "--volume", arg, verb))
    return -1;
  char *src = realpath (copy, NULL);
  if (src == NULL)
    return cmd_usage (verb, "--volume \"%s\": source %s: %s (hako does not create it)", arg, copy,
                      strerror (errno)),
           -1;
  /* nosuid, nodev: a setuid program or a device node in a host directory
   * gives nothing inside (and in a user namespace they are locked on).
   * idmap: the sandbox's own mappings (hako-run(8) says what that trusts). */
  char *opt[] = { "rbind", ro ? "ro" : "rw", "nosuid", "nodev", (char *)idmap, NULL };
  struct oci_override_mount *m = new_mount (ov);
  m->destination = steal_pointer (&d);
  m->type = xstrdup ("bind");
  m->source = src;
  m->options = strv_dup (opt);
  return 0;
}

/* DST[:OPTS], OPTS of size=N, mode=OCTAL, ro, rw, exec, noexec: docker's
 * defaults (rw, noexec, nosuid, nodev, mode 1777, no size: half the RAM,
 * charged to the sandbox's memory limit). */
static int
tmpfs_arg (struct cmd_overrides *ov, const char *arg, const char *verb)
{
  static const char form[] = "expected DST[:size=N[,mode=OCTAL][,ro|rw][,exec|noexec]]";
  cleanup_free char *copy = xstrdup (arg);
  char *o = strchr (copy, ':');
  if (o)
    *o++ = '\0';
  cleanup_free char *d = destination (copy);
  if (d == NULL)
    return cmd_usage (verb, "--tmpfs \"%s\": destination \"%s\" (%s, DST absolute, not /)", arg, copy, form),
           -1;
  if (taken (ov, d, "--tmpfs", arg, verb))
    return -1;
  cleanup_free char *size = NULL, *mode = NULL;
  bool ro = false, exec = false;
  char *save = NULL;
  for (char *w = o ? strtok_r (o, ",", &save) : NULL; w; w = strtok_r (NULL, ",", &save))
    {
      uint64_t n;
      char *end;
      if (str_has_prefix (w, "size=") && parse_size (w + 5, &n) == 0 && n > 0)
        {
          free (size);
          size = xasprintf ("size=%llu", (unsigned long long)n);
        }
      else if (str_has_prefix (w, "mode=") && w[5] >= '0' && w[5] <= '7'
               && (n = strtoul (w + 5, &end, 8), *end == '\0') && n <= 07777)
        {
          free (mode);
          mode = xasprintf ("mode=%llo", (unsigned long long)n);
        }
      else if (strcmp (w, "ro") == 0 || strcmp (w, "rw") == 0)
        ro = w[1] == 'o';
      else if (strcmp (w, "exec") == 0 || strcmp (w, "noexec") == 0)
        exec = w[0] == 'e';
      else
        return cmd_usage (verb, "--tmpfs \"%s\": \"%s\" (%s)", arg, w, form), -1;
    }
  char *opts[] = {
    ro ? "ro" : "rw", exec ? "exec" : "noexec", "nosuid", "nodev", mode ? mode : "mode=1777", size, NULL
  };
  struct oci_override_mount *m = new_mount (ov);
  m->destination = steal_pointer (&d);
  m->type = xstrdup ("tmpfs");
  m->source = xstrdup ("tmpfs");
  m->options = strv_dup (opts);
  return 0;
}

/* RFC 1123: letters, digits, '-' and '.', at most 64 (the kernel's limit). */
static bool
valid_hostname (const char *s)
{
  size_t n = strlen (s);
  if (n == 0 || n > 64 || s[0] == '-' || s[0] == '.')
    return false;
  for (const char *p = s; *p; p++)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '-'
          || *p == '.'))
      return false;
  return true;
}

static int
user_arg (struct cmd_overrides *ov, const char *arg, const char *verb)
{
  const char *colon = strchr (arg, ':');
  if (arg[0] == '\0' || arg[0] == ':' || (colon && (colon[1] == '\0' || strchr (colon + 1, ':'))))
    return cmd_usage (verb, "--user \"%s\": expected NAME|UID[:GROUP|GID]", arg), -1;
  ov->user = arg;
  return 0;
}

/* --label K=V: K a non-empty name of letters, digits and ._-/ (as a
 * Kubernetes label key), V any text; the same K again replaces it. */
static int
label_arg (struct oci_overrides *o, const char *arg, const char *verb)
{
  const char *eq = strchr (arg, '=');
  size_t klen = eq ? (size_t)(eq - arg) : 0;
  bool ok = eq && klen > 0 && klen <= 253;
  for (size_t i = 0; ok && i < klen; i++)
    ok = (arg[i] >= 'a' && arg[i] <= 'z') || (arg[i] >= 'A' && arg[i] <= 'Z')
         || (arg[i] >= '0' && arg[i] <= '9') || strchr ("._-/", arg[i]) != NULL;
  if (!ok)
    return cmd_usage (verb, "--label \"%s\": expected KEY=VALUE (KEY: letters, digits, '.', '_', '-', '/')",
                      arg),
           -1;
  size_t n = strv_len (o->labels), i;
  for (i = 0; i < n; i++)
    if (strncmp (o->labels[i], arg, klen + 1) == 0)
      break;
  if (i < n)
    {
      free (o->labels[i]);
      o->labels[i] = xstrdup (arg);
      return 0;
    }
  o->labels = xrealloc (o->labels, (n + 2) * sizeof *o->labels);
  o->labels[n] = xstrdup (arg);
  o->labels[n + 1] = NULL;
  return 0;
}

static void
strv_push (char ***v, const char *s)
{
  size_t k = strv_len (*v);
  *v = xrealloc (*v, (k + 2) * sizeof **v);
  (*v)[k] = xstrdup (s);
  (*v)[k + 1] = NULL;
}

/* --secret: checked now, so that a value that is not there fails before
 * anything is made (create reads it again, into the state dir). */
static int
secret_option (struct cmd_net *n, const char *arg, const char *verb)
{
  struct oci_secret_arg a;
  hk_err err = { 0 };
  if (oci_secret_arg_parse (arg, &a, &err) < 0)
    return cmd_usage (verb, "--secret %s", err.msg), -1;
  const char *missing = NULL;
  if (str_has_prefix (a.from, "env:") && getenv (a.from + 4) == NULL)
    missing = "is not set in hako's environment";
  else if (str_has_prefix (a.from, "file:") && access (a.from + 5, R_OK) < 0)
    missing = "cannot be read";
  if (missing)
    {
      cmd_usage (verb, "--secret %s: %s %s", a.name, a.from + (a.from[0] == 'e' ? 4 : 5), missing);
      oci_secret_arg_free (&a);
      return -1;
    }
  n->secrets = xrealloc (n->secrets, (n->n_secrets + 1) * sizeof *n->secrets);
  n->secrets[n->n_secrets++] = a;
  return 0;
}

int
cmd_net_option (struct cmd_net *n, int opt, const char *arg, const char *verb)
{
  if (opt == 'N')
    {
      if (strcmp (arg, "none") != 0 && strcmp (arg, "host") != 0 && strcmp (arg, "allowlist") != 0
          && strcmp (arg, "denylist") != 0)
        {
          cmd_usage (verb, "--network: unknown mode \"%s\" (none, host, allowlist, denylist)", arg);
          return -1;
        }
      n->mode = arg;
      return 0;
    }
  if (opt == CMD_OPT_SECRET)
    return secret_option (n, arg, verb);
  struct net_rule r;
  hk_err err = { 0 };
  if (oci_net_rule_parse (arg, &r, &err) < 0)
    {
      cmd_usage (verb, "--%s: %s", opt == 'A' ? "allow" : "deny", err.msg);
      return -1;
    }
  oci_net_rule_free (&r);
  strv_push (opt == 'A' ? &n->allow : &n->deny, arg);
  return 0;
}

int
cmd_override_option (struct cmd_overrides *ov, int opt, const char *arg, const char *verb)
{
  struct oci_overrides *o = &ov->o;
  uint64_t ms;
  switch (opt)
    {
    case 'N':
    case 'A':
    case CMD_OPT_DENY:
    case CMD_OPT_SECRET: return cmd_net_option (&ov->net, opt, arg, verb) < 0 ? -1 : 1;
    case 'D': ov->disk = arg; return 1;
    case CMD_OPT_DEVICE: return cmd_device_option (&ov->devices, arg, verb) < 0 ? -1 : 1;
    case CMD_OPT_MEMORY:
      o->has_memory = true;
      return size_arg (verb, "--memory", arg, true, &o->memory) < 0 ? -1 : 1;
    case CMD_OPT_MEMORY_SWAP:
      o->has_memory_swap = true;
      return size_arg (verb, "--memory-swap", arg, true, &o->memory_swap) < 0 ? -1 : 1;
    case CMD_OPT_CPUS: return cpus_arg (verb, arg, o) < 0 ? -1 : 1;
    case CMD_OPT_PIDS: return pids_arg (verb, arg, o) < 0 ? -1 : 1;
    case 'e':
      if (env_arg (ov, arg, strlen (arg)) < 0)
        return cmd_usage (verb, "--env \"%s\": expected NAME=VALUE or NAME", arg), -1;
      return 1;
    case CMD_OPT_ENV_FILE: return env_file (ov, arg, verb) < 0 ? -1 : 1;
    case 'v': return volume_arg (ov, arg, verb) < 0 ? -1 : 1;
    case CMD_OPT_TMPFS: return tmpfs_arg (ov, arg, verb) < 0 ? -1 : 1;
    case 'w':
      if (arg[0] != '/')
        return cmd_usage (verb, "--workdir \"%s\": expected an absolute path", arg), -1;
      o->cwd = arg;
      return 1;
    case 'u': return user_arg (ov, arg, verb) < 0 ? -1 : 1;
    case CMD_OPT_HOSTNAME:
      if (!valid_hostname (arg))
        return cmd_usage (verb, "--hostname \"%s\": expected 1-64 letters, digits, '-' and '.'", arg), -1;
      o->hostname = arg;
      return 1;
    case CMD_OPT_TIMEOUT:
      if (parse_duration_ms (arg, &ms) < 0 || ms == 0)
        return cmd_usage (verb,
                          "--timeout \"%s\": expected a duration (\"500ms\", \"30s\", \"5m\", \"1h\") "
                          "or a number of seconds",
                          arg),
               -1;
      o->timeout = arg;
      return 1;
    case CMD_OPT_READ_ONLY: o->read_only = true; return 1;
    case 'i': ov->interactive = true; return 1;
    case 't': o->terminal = true; return 1;
    case CMD_OPT_LABEL: return label_arg (o, arg, verb) < 0 ? -1 : 1;
    case CMD_OPT_PUBLISH: return cmd_publish_option (&ov->ports, &ov->n_ports, arg, verb) < 0 ? -1 : 1;
    default: return 0;
    }
}

/* systemd socket activation of `hako run`/`create`, as runc and crun do it:
 * LISTEN_FDS=N in hako's environment (and LISTEN_PID unset or hako's own
 * pid, as sd_listen_fds(3) asks) passes fds 3..3+N-1 on, ahead of the
 * --preserve-fds ones, with LISTEN_FDS=N and LISTEN_PID=1 in the process's
 * env.  The fds are checked as --preserve-fds checks them. */
int
cmd_listen_fds (const char *verb, unsigned int *preserve, struct cmd_overrides *ov)
{
  const char *n = getenv ("LISTEN_FDS"), *pid = getenv ("LISTEN_PID");
  char *end;
  if (n == NULL || *n < '0' || *n > '9')
    return 0;
  unsigned long v = strtoul (n, &end, 10);
  if (*end != '\0' || v == 0 || v > 4096)
    return 0;
  if (pid && *pid && strtol (pid, NULL, 10) != (long)getpid ())
    return 0; /* meant for another process */
  char count[32], env[48];
  snprintf (count, sizeof count, "%lu", v + *preserve);
  snprintf (env, sizeof env, "LISTEN_FDS=%lu", v);
  if (cmd_preserve_fds (verb, count, preserve) < 0 || cmd_override_option (ov, 'e', env, verb) < 0
      || cmd_override_option (ov, 'e', "LISTEN_PID=1", verb) < 0)
    return -1;
  return 0;
}

/* Any flag oci_spec_override writes. */
static bool
any_edit (const struct cmd_overrides *ov)
{
  const struct oci_overrides *o = &ov->o;
  return ov->user || o->has_memory || o->has_memory_swap || o->has_cpus || o->has_pids || o->env
         || o->n_mounts || o->cwd || o->hostname || o->timeout || o->read_only || o->terminal || o->labels;
}

/* The directory whose etc/passwd the sandbox will see: an image's layer
 * that has one, the bundle's root, or for a root built from mounts (the
 * host profile, whose /etc is the host's, bound) the host's /. */
static int
user_root (const struct config_src *cfg, hk_err *err)
{
  const struct oci_spec *s = cfg->spec;
  int fd;
  cleanup_free char *dir = NULL;
  if (cfg->layers && cfg->layers[0])
    {
      fd = cmd_image_user_root (cfg->layers);
      if (fd >= 0)
        return fd;
      dir = xstrdup (cfg->layers[0]);
    }
  else if (s->sandbox.root == HAKO_ROOT_TMPFS || s->root_path == NULL)
    dir = xstrdup ("/");
  else if (s->root_path[0] == '/')
    dir = xstrdup (s->root_path);
  else
    dir = xasprintf ("%s/%s", cfg->bundle ? cfg->bundle : ".", s->root_path);
  fd = open (dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return err_sys (err, "the sandbox's root %s", dir);
  return fd;
}

/* -u: numbers as they are, names from the sandbox's own /etc/passwd and
 * /etc/group (read inside its root: a symlink there cannot reach the
 * host's); HOME from /etc/passwd unless the environment sets it. */
static int
resolve_user (const struct config_src *cfg, const char *user, struct oci_overrides *o, char ***env,
              hk_err *err)
{
  cleanup_close int fd = user_root (cfg, err);
  struct userdb_user u;
  if (fd < 0 || userdb_resolve (fd, user, 0, &u, err) < 0)
    return err_kind_default (err, ERR_INVALID_ARGUMENT), err_prefix (err, "--user %s", user);
  o->has_user = true;
  o->uid = u.uid;
  o->gid = u.gid;
  char *const *old = cfg->spec->process ? cfg->spec->process->env : NULL;
  if (u.home && !strv_env (old, "HOME") && !strv_env (o->env, "HOME"))
    {
      size_t n = strv_len (o->env);
      char **v = xcalloc (n + 2, sizeof *v);
      for (size_t i = 0; i < n; i++)
        v[i] = xstrdup (o->env[i]);
      v[n] = xasprintf ("HOME=%s", u.home);
      *env = v;
      o->env = v;
    }
  userdb_user_free (&u);
  return 0;
}

/* Whether the config has a secret that still needs its placeholder. */
static bool
needs_placeholders (const struct oci_spec *spec)
{
  for (size_t i = 0; spec && i < spec->sandbox.n_secrets; i++)
    if (spec->sandbox.secrets[i].placeholder == NULL)
      return true;
  return false;
}

int
cmd_apply_network (struct config_src *cfg, const struct cmd_net *n, char *const *args, hk_err *err)
{
  if (n->mode == NULL && n->allow == NULL && n->deny == NULL && n->n_secrets == 0
      && !needs_placeholders (cfg->spec))
    return 0;
  /* --allow alone means the allowlist mode, --deny alone the denylist
   * mode; a config already in one keeps it. */
  enum hako_net_mode now = cfg->spec ? cfg->spec->sandbox.net_mode : HAKO_NET_UNSET;
  bool proxied = now == HAKO_NET_ALLOWLIST || now == HAKO_NET_DENYLIST;
  const char *mode = n->mode;
  if (mode == NULL && !proxied)
    mode = n->allow ? "allowlist" : n->deny ? "denylist" : NULL;
  bool will = mode ? strcmp (mode, "allowlist") == 0 || strcmp (mode, "denylist") == 0 : proxied;
  if (n->n_secrets && !will)
    return err_setk (err, ERR_INVALID_ARGUMENT, EINVAL,
                     "--secret: the proxy puts secrets in requests: give --allow or --deny (or --network "
                     "allowlist or denylist)");
  struct oci_net_edit e = {
    .mode = mode, .allow = n->allow, .deny = n->deny, .secrets = n->secrets, .n_secrets = n->n_secrets
  };
  char *json;
  size_t len;
  if (oci_spec_set_network (cfg->json, cfg->len, &e, &json, &len, err) < 0)
    return err_prefix (err, "--network");
  if (cmd_replace_config (cfg, json, len, args, err) < 0)
    return err_prefix (err, "--network/--allow/--deny/--secret");
  return 0;
}

int
cmd_apply_disk (struct config_src *cfg, const char *disk, char *const *args, hk_err *err)
{
  char *json;
  size_t len;
  if (disk == NULL)
    return 0;
  if (oci_spec_set_disk (cfg->json, cfg->len, disk, &json, &len, err) < 0
      || cmd_replace_config (cfg, json, len, args, err) < 0)
    return err_prefix (err, "--disk %s", disk);
  return 0;
}

void
cmd_net_free (struct cmd_net *n)
{
  strv_free (n->allow);
  strv_free (n->deny);
  for (size_t i = 0; i < n->n_secrets; i++)
    oci_secret_arg_free (&n->secrets[i]);
  free (n->secrets);
  *n = (struct cmd_net){ 0 };
}

int
cmd_apply_overrides (struct config_src *cfg, const struct cmd_overrides *ov, char *const *args, hk_err *err)
{
  /* Devices before the rest: a -e of the caller's wins over a CDI spec's env. */
  if (cmd_apply_network (cfg, &ov->net, args, err) < 0 || cmd_apply_disk (cfg, ov->disk, args, err) < 0
      || cmd_apply_devices (cfg, ov->devices, args, err) < 0)
    return -1;
  if (!any_edit (ov))
    return 0;
  struct oci_overrides o = ov->o;
  if (o.has_memory_swap && o.memory_swap != -1)
    {
      /* As docker: the swap limit is memory + swap, so never below memory. */
      const struct oci_resources *r = &cfg->spec->linux.resources;
      int64_t mem = o.has_memory ? o.memory : r->has_memory_limit ? r->memory_limit : -1;
      if (mem == -1)
        return err_setk (err, ERR_INVALID_ARGUMENT, EINVAL,
                         "--memory-swap: the limit of memory + swap needs a memory limit (--memory)");
      if (o.memory_swap < mem)
        return err_setk (err, ERR_INVALID_ARGUMENT, EINVAL,
                         "--memory-swap %" PRId64 ": below the memory limit (%" PRId64
                         "): it is the limit of memory + swap",
                         o.memory_swap, mem);
    }
  cleanup_free char *json = NULL;
  char **env = NULL;
  size_t len;
  int r = -1;
  if (ov->user && resolve_user (cfg, ov->user, &o, &env, err) < 0)
    goto out;
  if (oci_spec_override (cfg->json, cfg->len, &o, &json, &len, err) < 0
      || cmd_replace_config (cfg, steal_pointer (&json), len, args, err) < 0)
    {
      err_kind_default (err, ERR_INVALID_ARGUMENT);
      goto out;
    }
  r = 0;
out:
  strv_free (env);
  return r;
}

void
cmd_overrides_free (struct cmd_overrides *ov)
{
  cmd_net_free (&ov->net);
  strv_free (ov->devices);
  strv_free (ov->o.env);
  strv_free (ov->o.labels);
  for (size_t i = 0; i < ov->o.n_mounts; i++)
    {
      struct oci_override_mount *m = &ov->o.mounts[i];
      free (m->destination);
      free (m->type);
      free (m->source);
      strv_free (m->options);
    }
  free (ov->o.mounts);
  free (ov->ports);
  *ov = (struct cmd_overrides){ 0 };
}
