/* spec_sandbox: hako's "sandbox" object — root kind, network policy, Landlock,
 * limits, image, work dir and the built-in init (hako-spec(5), THE SANDBOX OBJECT). */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lib/netclass.h"
#include "lib/util.h"
#include "oci/spec_common.h"
#include "oci/spec_internal.h"

static int
parse_root_kind (yajl_val sb, struct hako_sandbox *s, hk_err *err)
{
  cleanup_free char *root = NULL;
  int r = json_get_string (sb, ".sandbox", "root", &root, err);
  if (r <= 0)
    return r;
  if (strcmp (root, "bundle") == 0)
    s->root = HAKO_ROOT_BUNDLE;
  else if (strcmp (root, "tmpfs") == 0)
    s->root = HAKO_ROOT_TMPFS;
  else
    return json_error (err, ".sandbox", "root", "must be \"bundle\" or \"tmpfs\", got \"%s\"", root);
  return 0;
}

/* The rules of .sandbox.network.KEY, as written and parsed. */
static int
parse_rules (yajl_val n, const char *key, char ***texts, struct net_rules *rules, hk_err *err)
{
  const char *path = ".sandbox.network";
  if (json_get_strv (n, path, key, texts, err) < 0)
    return -1;
  *rules = (struct net_rules){ .v = xcalloc (strv_len (*texts) + 1, sizeof *rules->v) };
  for (size_t i = 0; *texts && (*texts)[i]; i++)
    {
      cleanup_free char *base = json_path (path, key);
      cleanup_free char *p = json_index (base, i);
      if ((*texts)[i][0] == '\0')
        return json_error (err, p, NULL, "must not be empty");
      if (oci_net_rule_parse ((*texts)[i], &rules->v[i], err) < 0)
        return err_prefix (err, "%s", p);
      rules->n++;
    }
  return 0;
}

/* An environment variable's name: [A-Za-z_][A-Za-z0-9_]*. */
static bool
env_name_ok (const char *s)
{
  if (s == NULL || !(isalpha ((unsigned char)s[0]) || s[0] == '_') || strlen (s) > 128)
    return false;
  for (const char *c = s; *c; c++)
    if (!(isalnum ((unsigned char)*c) || *c == '_'))
      return false;
  return true;
}

/* A placeholder: long enough not to be met by chance, and made of
 * characters no header, query or environment treats specially. */
static bool
placeholder_ok (const char *s)
{
  size_t n = strlen (s);
  if (n < 20 || n > 200)
    return false;
  for (const char *c = s; *c; c++)
    if (!(isalnum ((unsigned char)*c) || *c == '_' || *c == '-' || *c == '.'))
      return false;
  return true;
}

int
oci_secret_check_from (const char *from, hk_err *err)
{
  if (str_has_prefix (from, "env:") && env_name_ok (from + 4))
    return 0;
  if (str_has_prefix (from, "file:") && from[5] == '/')
    return 0;
  return err_set (err, EINVAL, "\"%s\": the value comes from env:VARIABLE or file:/ABSOLUTE/PATH", from);
}

int
oci_secret_parse_host (const char *text, char **host, uint16_t *port, hk_err *err)
{
  struct net_rule r;
  if (oci_net_rule_parse (text, &r, err) < 0)
    return -1;
  bool one = r.kind == NR_NAME || (r.kind == NR_NET && r.prefix == 128);
  if (!one || r.request || strstr (text, "://"))
    {
      oci_net_rule_free (&r);
      return err_set (err, EINVAL, "\"%s\": a secret names one host (HOST or HOST:PORT)", text);
    }
  char addr[INET6_ADDRSTRLEN];
  static const uint8_t mapped[12] = { [10] = 0xff, [11] = 0xff };
  if (r.kind == NR_NET && memcmp (r.addr, mapped, 12) == 0)
    inet_ntop (AF_INET, r.addr + 12, addr, sizeof addr);
  else if (r.kind == NR_NET)
    inet_ntop (AF_INET6, r.addr, addr, sizeof addr);
  *host = xstrdup (r.kind == NR_NET ? addr : r.name);
  *port = r.port ? r.port : 443;
  oci_net_rule_free (&r);
  return 0;
}

static int
parse_secret (yajl_val v, const char *p, struct hako_secret *s, hk_err *err)
{
  cleanup_free char *host = NULL;
  if (!YAJL_IS_OBJECT (v))
    return json_error (err, p, NULL, "must be an object {\"name\", \"from\", \"host\"}");
  if (json_get_string (v, p, "name", &s->name, err) < 0 || json_get_string (v, p, "from", &s->from, err) < 0
      || json_get_string (v, p, "host", &host, err) < 0
      || json_get_string (v, p, "placeholder", &s->placeholder, err) < 0
      || json_get_bool (v, p, "query", &s->query, err) < 0)
    return -1;
  if (!env_name_ok (s->name))
    return json_error (err, p, "name", "an environment variable's name ([A-Za-z_][A-Za-z0-9_]*)");
  if (s->from == NULL)
    return json_error (err, p, "from", "required (env:VARIABLE or file:/PATH)");
  if (oci_secret_check_from (s->from, err) < 0)
    return err_prefix (err, "%s.from", p);
  if (host == NULL)
    return json_error (err, p, "host", "required (the host the value is sent to)");
  if (oci_secret_parse_host (host, &s->host, &s->port, err) < 0)
    return err_prefix (err, "%s.host", p);
  if (s->placeholder && !placeholder_ok (s->placeholder))
    return json_error (err, p, "placeholder", "20 to 200 letters, digits, '_', '-' or '.'");
  return 0;
}

static int
parse_secrets (yajl_val n, struct hako_sandbox *s, hk_err *err)
{
  yajl_val a = NULL;
  int r = json_get_array (n, ".sandbox.network", "secrets", &a, err);
  if (r <= 0)
    return r;
  s->secrets = xcalloc (json_len (a) + 1, sizeof *s->secrets);
  for (size_t i = 0; i < json_len (a); i++)
    {
      cleanup_free char *p = json_index (".sandbox.network.secrets", i);
      struct hako_secret *x = &s->secrets[s->n_secrets++];
      if (parse_secret (json_at (a, i), p, x, err) < 0)
        return -1;
      for (size_t j = 0; j < i; j++)
        if (strcmp (s->secrets[j].name, x->name) == 0
            || (x->placeholder && s->secrets[j].placeholder
                && strcmp (s->secrets[j].placeholder, x->placeholder) == 0))
          return json_error (err, p, NULL, "secret %s is given twice (or its placeholder is another's)",
                             x->name);
    }
  return 0;
}

static int
parse_network (yajl_val sb, struct hako_sandbox *s, hk_err *err)
{
  yajl_val n = NULL;
  int r = json_get_object (sb, ".sandbox", "network", &n, err);
  if (r <= 0)
    return r;
  return spec_parse_network (n, s, err);
}

int
spec_parse_network (yajl_val n, struct hako_sandbox *s, hk_err *err)
{
  const char *path = ".sandbox.network";
  cleanup_free char *mode = NULL;
  if (json_get_string (n, path, "mode", &mode, err) < 0)
    return -1;
  if (mode == NULL)
    return json_error (err, path, "mode", "required (none, host, allowlist or denylist)");
  if (strcmp (mode, "none") == 0)
    s->net_mode = HAKO_NET_NONE;
  else if (strcmp (mode, "host") == 0)
    s->net_mode = HAKO_NET_HOST;
  else if (strcmp (mode, "allowlist") == 0)
    s->net_mode = HAKO_NET_ALLOWLIST;
  else if (strcmp (mode, "denylist") == 0)
    s->net_mode = HAKO_NET_DENYLIST;
  else
    return json_error (err, path, "mode", "unknown mode \"%s\" (none, host, allowlist, denylist)", mode);
  if (parse_rules (n, "allow", &s->net_allow, &s->allow_rules, err) < 0
      || parse_rules (n, "deny", &s->net_deny, &s->deny_rules, err) < 0 || parse_secrets (n, s, err) < 0)
    return -1;
  /* Rules under a mode without the proxy would be silently meaningless. */
  bool proxied = s->net_mode == HAKO_NET_ALLOWLIST || s->net_mode == HAKO_NET_DENYLIST;
  const char *key = s->allow_rules.n ? "allow" : s->deny_rules.n ? "deny" : s->n_secrets ? "secrets" : NULL;
  if (key && !proxied)
    return json_error (err, path, key, "only valid with mode \"allowlist\" or \"denylist\" (mode is \"%s\")",
                       mode);
  return 0;
}

static int
parse_paths (yajl_val ll, const char *key, char ***out, hk_err *err)
{
  if (json_get_strv (ll, ".sandbox.landlock", key, out, err) < 0)
    return -1;
  for (size_t i = 0; *out && (*out)[i]; i++)
    if (!spec_is_abs ((*out)[i]))
      {
        cleanup_free char *base = json_path (".sandbox.landlock", key);
        cleanup_free char *p = json_index (base, i);
        return json_error (err, p, NULL, "must be an absolute path");
      }
  return 0;
}

/* min 0 for tcp_bind: a rule on port 0 lets bind(2) take an ephemeral port. */
static int
parse_ports (yajl_val ll, const char *key, int64_t min, uint16_t **out, size_t *n, hk_err *err)
{
  yajl_val a = NULL;
  int r = json_get_array (ll, ".sandbox.landlock", key, &a, err);
  if (r <= 0)
    return r;
  cleanup_free char *base = json_path (".sandbox.landlock", key);
  *out = xcalloc (json_len (a), sizeof **out);
  for (size_t i = 0; i < json_len (a); i++)
    {
      int64_t port;
      cleanup_free char *p = json_index (base, i);
      if (json_as_i64 (json_at (a, i), p, NULL, min, 65535, &port, err) < 0)
        return -1;
      (*out)[(*n)++] = (uint16_t)port;
    }
  return 0;
}

static int
parse_landlock (yajl_val sb, struct hako_landlock *l, hk_err *err)
{
  const char *path = ".sandbox.landlock";
  yajl_val o = NULL;
  int r = json_get_object (sb, ".sandbox", "landlock", &o, err);
  if (r <= 0)
    return r;
  l->present = true;
  l->required = true;
  if (parse_paths (o, "read", &l->read, err) < 0 || parse_paths (o, "write", &l->write, err) < 0
      || parse_paths (o, "exec", &l->exec, err) < 0
      || parse_ports (o, "tcp_connect", 1, &l->tcp_connect, &l->n_tcp_connect, err) < 0
      || parse_ports (o, "tcp_bind", 0, &l->tcp_bind, &l->n_tcp_bind, err) < 0
      || json_get_bool (o, path, "missing_ok", &l->missing_ok, err) < 0
      || json_get_bool (o, path, "scoped", &l->scoped, err) < 0
      || json_get_bool (o, path, "required", &l->required, err) < 0
      || json_get_bool (o, path, "derive", &l->derive, err) < 0)
    return -1;
  return 0;
}

/* "30s", "500ms", "5m", "1h", or a number of seconds (fractions allowed). */
static int
parse_timeout (yajl_val limits, struct hako_sandbox *s, hk_err *err)
{
  yajl_val v = json_get (limits, "timeout");
  uint64_t ms = 0;
  if (v == NULL)
    return 0;
  if (YAJL_IS_STRING (v))
    {
      const char *t = v->u.string;
      /* Digits first: keeps "inf" and "nan" away from strtod. */
      bool ok = (t[0] >= '0' && t[0] <= '9') || (t[0] == '.' && t[1] >= '0' && t[1] <= '9');
      if (!ok || parse_duration_ms (t, &ms) < 0)
        ms = 0;
    }
  else if (YAJL_IS_DOUBLE (v) && isfinite (v->u.number.d) && v->u.number.d > 0 && v->u.number.d < 1e12)
    ms = (uint64_t)(v->u.number.d * 1000 + 0.5);
  if (ms == 0)
    return json_error (err, ".sandbox.limits", "timeout",
                       "must be a positive duration (\"30s\", \"500ms\", \"5m\", \"1h\") or a "
                       "number of seconds");
  s->has_timeout = true;
  s->timeout_ms = ms;
  return 0;
}

/* Bytes: an integer, or a string with an optional k/m/g suffix ("2m"). */
static int
parse_max_output (yajl_val limits, struct hako_sandbox *s, hk_err *err)
{
  yajl_val v = json_get (limits, "max_output");
  if (v == NULL)
    return 0;
  if (YAJL_IS_STRING (v))
    {
      if (parse_size (v->u.string, &s->max_output) < 0)
        return json_error (err, ".sandbox.limits", "max_output",
                           "must be a number of bytes (with an optional k, m or g suffix)");
    }
  else if (json_as_u64 (v, ".sandbox.limits", "max_output", UINT64_MAX, &s->max_output, err) < 0)
    return -1;
  s->has_max_output = true;
  return 0;
}

/* A size in bytes: a number, or a string with a k/m/g suffix ("10g").  -1
 * (number or string) is "no limit". */
static int
size_value (yajl_val v, int64_t *out)
{
  uint64_t bytes;
  if (YAJL_IS_STRING (v))
    {
      if (strcmp (v->u.string, "-1") == 0 || strcmp (v->u.string, "none") == 0)
        return *out = -1, 0;
      if (parse_size (v->u.string, &bytes) < 0)
        return -1;
    }
  else if (YAJL_IS_INTEGER (v) && YAJL_GET_INTEGER (v) >= -1)
    return *out = YAJL_GET_INTEGER (v), 0;
  else
    return -1;
  if (bytes > INT64_MAX)
    return -1;
  *out = (int64_t)bytes;
  return 0;
}

static int
parse_disk (yajl_val limits, struct hako_sandbox *s, hk_err *err)
{
  yajl_val v = json_get (limits, "disk");
  if (v == NULL)
    return 0;
  if (size_value (v, &s->disk) < 0)
    return json_error (err, ".sandbox.limits", "disk",
                       "must be a size: a number of bytes, or a string with a k, m or g suffix "
                       "(\"10g\"), or -1 or \"none\" for no limit");
  if (s->disk != -1 && (uint64_t)s->disk < HAKO_DISK_MIN)
    return json_error (err, ".sandbox.limits", "disk", "must be at least 16m, got %" PRId64 " bytes",
                       s->disk);
  s->has_disk = true;
  return 0;
}

static int
parse_limits (yajl_val sb, struct hako_sandbox *s, hk_err *err)
{
  yajl_val o = NULL;
  int r = json_get_object (sb, ".sandbox", "limits", &o, err);
  if (r <= 0)
    return r;
  return parse_timeout (o, s, err) < 0 || parse_max_output (o, s, err) < 0 || parse_disk (o, s, err) < 0 ? -1
                                                                                                         : 0;
}

static int
parse_workdir (yajl_val sb, struct hako_sandbox *s, hk_err *err)
{
  yajl_val o = NULL;
  int r = json_get_object (sb, ".sandbox", "workdir", &o, err);
  if (r <= 0)
    return r;
  if (json_get_bool (o, ".sandbox.workdir", "persist", &s->workdir_persist, err) < 0
      || json_get_string (o, ".sandbox.workdir", "path", &s->workdir_path, err) < 0)
    return -1;
  if (s->workdir_path == NULL)
    s->workdir_path = xstrdup ("/work");
  if (!spec_is_abs (s->workdir_path))
    return json_error (err, ".sandbox.workdir", "path", "must be an absolute path");
  return 0;
}

/* devices, devices_applied, cdi_devices: arrays of non-empty strings. */
static int
parse_devices (yajl_val sb, struct hako_sandbox *s, hk_err *err)
{
  static const char *const keys[] = { "devices", "devices_applied", "cdi_devices" };
  char ***out[] = { &s->devices, &s->devices_applied, &s->cdi_devices };
  for (size_t k = 0; k < 3; k++)
    {
      if (json_get_strv (sb, ".sandbox", keys[k], out[k], err) < 0)
        return -1;
      for (size_t i = 0; *out[k] && (*out[k])[i]; i++)
        if ((*out[k])[i][0] == '\0')
          {
            cleanup_free char *base = json_path (".sandbox", keys[k]);
            cleanup_free char *p = json_index (base, i);
            return json_error (err, p, NULL, "must not be empty");
          }
    }
  return 0;
}

/* seccomp: {"allow": [names]}, the allow-list a learned profile narrows
 * linux.seccomp with (runtime/confine/seccomp.c). */
static int
parse_seccomp_allow (yajl_val sb, struct hako_sandbox *s, hk_err *err)
{
  yajl_val o = NULL;
  int r = json_get_object (sb, ".sandbox", "seccomp", &o, err);
  if (r <= 0)
    return r;
  if (json_get_strv (o, ".sandbox.seccomp", "allow", &s->seccomp_allow, err) < 0)
    return -1;
  if (s->seccomp_allow == NULL)
    return json_error (err, ".sandbox.seccomp", "allow", "required (the syscalls allowed)");
  return 0;
}

int
spec_parse_sandbox (yajl_val root, struct hako_sandbox *s, hk_err *err)
{
  yajl_val sb = NULL;
  int r = json_get_object (root, "", "sandbox", &sb, err);
  if (r <= 0)
    return r;
  s->present = true;
  if (json_get_string (sb, ".sandbox", "profile", &s->profile, err) < 0 || parse_root_kind (sb, s, err) < 0
      || parse_network (sb, s, err) < 0 || parse_landlock (sb, &s->landlock, err) < 0
      || parse_limits (sb, s, err) < 0 || json_get_string (sb, ".sandbox", "image", &s->image, err) < 0
      || parse_workdir (sb, s, err) < 0 || json_get_bool (sb, ".sandbox", "idmap", &s->idmap, err) < 0
      || json_get_bool (sb, ".sandbox", "init", &s->init, err) < 0 || parse_devices (sb, s, err) < 0
      || parse_seccomp_allow (sb, s, err) < 0)
    return -1;
  if (s->image && s->image[0] == '\0')
    return json_error (err, ".sandbox", "image", "must not be empty");
  return 0;
}

void
spec_free_landlock (struct hako_landlock *l)
{
  strv_free (l->read);
  strv_free (l->write);
  strv_free (l->exec);
  free (l->tcp_connect);
  free (l->tcp_bind);
}

void
spec_free_sandbox (struct hako_sandbox *s)
{
  strv_free (s->net_allow);
  strv_free (s->net_deny);
  oci_net_rules_free (&s->allow_rules);
  oci_net_rules_free (&s->deny_rules);
  for (size_t i = 0; i < s->n_secrets; i++)
    {
      free (s->secrets[i].name);
      free (s->secrets[i].from);
      free (s->secrets[i].host);
      free (s->secrets[i].placeholder);
    }
  free (s->secrets);
  free (s->profile);
  spec_free_landlock (&s->landlock);
  free (s->image);
  free (s->workdir_path);
  strv_free (s->devices);
  strv_free (s->devices_applied);
  strv_free (s->cdi_devices);
  strv_free (s->seccomp_allow);
}
