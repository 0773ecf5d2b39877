/* spec: config.json into struct oci_spec — top level, root, process, mounts, hooks.
 * The linux object is spec_linux.c's, the sandbox object spec_sandbox.c's. */
#include "oci/spec.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>

#include "lib/util.h"
#include "oci/spec_common.h"
#include "oci/spec_internal.h"

/* ---- mount options ---- */

/* Options hako recognises but does not implement yet; they are dropped rather
 * than passed to the filesystem, which would refuse them. */
static const char *const ignored_options[] = { "tmpcopyup" };

static bool
ignored_option (const char *opt)
{
  for (size_t i = 0; i < sizeof ignored_options / sizeof *ignored_options; i++)
    if (strcmp (opt, ignored_options[i]) == 0)
      return true;
  return false;
}

/* Options into flags, clear_flags, propagation (the last one given wins) and
 * data (everything else, in order, joined with ','). */
static void
mount_decode_options (struct oci_mount *m)
{
  size_t cap = 0;
  for (size_t i = 0; m->options && m->options[i]; i++)
    cap += strlen (m->options[i]) + 1;
  cleanup_free char *data = xmalloc (cap + 1);
  size_t n = 0;
  for (size_t i = 0; m->options && m->options[i]; i++)
    {
      const char *opt = m->options[i];
      unsigned long pg;
      if (spec_mount_flag (m, opt) || ignored_option (opt))
        continue;
      /* Not for mount(2) (runtime-spec): the idmapping is made by hako. */
      if (strcmp (opt, "idmap") == 0 || strcmp (opt, "ridmap") == 0)
        {
          m->idmap = true;
          m->idmap_recursive = opt[0] == 'r';
          continue;
        }
      if (spec_propagation (opt, &pg))
        {
          m->propagation = pg;
          continue;
        }
      if (opt[0] == '\0')
        continue;
      if (n)
        data[n++] = ',';
      memcpy (data + n, opt, strlen (opt));
      n += strlen (opt);
    }
  data[n] = '\0';
  if (m->type && strcmp (m->type, "bind") == 0)
    m->flags |= MS_BIND;
  m->is_bind = (m->flags & MS_BIND) != 0;
  m->data = n ? steal_pointer (&data) : NULL;
}

/* A mount's idmapping (runtime-spec 1.1): its own uidMappings and
 * gidMappings, both or neither, which make it idmapped even without the
 * "idmap" option (as runc reads them).  Only a bind can be idmapped.  Its
 * host files would otherwise show owned by the ids the sandbox's own
 * namespace maps them to; idmapped, the id N that owns a file on disk owns
 * it inside, and a set-id program or a device node of the host's would be
 * the sandbox's own: such a bind is nosuid and nodev, whatever it asks. */
static int
parse_mount_idmap (yajl_val v, const char *path, struct oci_mount *m, hk_err *err)
{
  int u = spec_parse_idmaps (v, path, "uidMappings", &m->uid_mappings, &m->n_uid_mappings, err);
  int g = u < 0 ? -1 : spec_parse_idmaps (v, path, "gidMappings", &m->gid_mappings, &m->n_gid_mappings, err);
  if (u < 0 || g < 0)
    return -1;
  if (u != g)
    return json_error (err, path, u ? "gidMappings" : "uidMappings",
                       "required with %s (runtime-spec: both or neither)", u ? "uidMappings" : "gidMappings");
  if (u && (m->n_uid_mappings == 0 || m->n_gid_mappings == 0))
    return json_error (err, path, m->n_uid_mappings ? "gidMappings" : "uidMappings", "must not be empty");
  if (u)
    m->idmap = true;
  if (!m->idmap)
    return 0;
  if (!m->is_bind)
    return json_error (err, path, u ? "uidMappings" : "options",
                       "only a bind mount can be idmapped (\"bind\" or \"rbind\" in options, or type "
                       "\"bind\"); this one is type \"%s\"",
                       m->type);
  m->flags |= MS_NOSUID | MS_NODEV;
  m->clear_flags &= ~(unsigned long)(MS_NOSUID | MS_NODEV);
  return 0;
}

static int
parse_mount (yajl_val v, const char *path, struct oci_mount *m, hk_err *err)
{
  if (!YAJL_IS_OBJECT (v))
    return json_error (err, path, NULL, "must be an object");
  if (json_get_string (v, path, "destination", &m->destination, err) < 0
      || json_get_string (v, path, "type", &m->type, err) < 0
      || json_get_string (v, path, "source", &m->source, err) < 0
      || json_get_strv (v, path, "options", &m->options, err) < 0)
    return -1;
  if (m->destination == NULL)
    return json_error (err, path, "destination", "required");
  if (!spec_is_abs (m->destination))
    return json_error (err, path, "destination", "must be an absolute path");
  mount_decode_options (m);
  if (m->type == NULL && !m->is_bind)
    return json_error (err, path, "type", "required unless the mount is a bind");
  return parse_mount_idmap (v, path, m, err);
}

static int
parse_mounts (yajl_val root, struct oci_spec *s, hk_err *err)
{
  yajl_val a = NULL;
  int r = json_get_array (root, "", "mounts", &a, err);
  if (r <= 0)
    return r;
  s->mounts = xcalloc (json_len (a), sizeof *s->mounts);
  for (size_t i = 0; i < json_len (a); i++)
    {
      cleanup_free char *path = json_index (".mounts", i);
      /* Counted before parsing so a failure frees what was read. */
      s->n_mounts++;
      if (parse_mount (json_at (a, i), path, &s->mounts[i], err) < 0)
        return -1;
    }
  return 0;
}

/* Every idmapped bind needs the sandbox in a user namespace: hako makes the
 * mapping in one made by real root and takes the sandbox's own mappings
 * when the mount gives none (runtime-spec: without either, an error).
 * Checked once linux.namespaces is read. */
static int
check_mount_idmaps (const struct oci_spec *s, hk_err *err)
{
  if (oci_spec_ns (s, OCI_NS_USER))
    return 0;
  for (size_t i = 0; i < s->n_mounts; i++)
    if (s->mounts[i].idmap)
      {
        cleanup_free char *path = json_index (".mounts", i);
        return json_error (err, path, s->mounts[i].n_uid_mappings ? "uidMappings" : "options",
                           "the idmapped bind on %s needs a user namespace (\"user\" in "
                           ".linux.namespaces)%s",
                           s->mounts[i].destination,
                           s->mounts[i].n_uid_mappings ? "" : ", whose mappings it takes");
      }
  return 0;
}

/* ---- process ---- */

static const struct
{
  const char *name;
  int resource;
} rlimit_names[] = {
  { "RLIMIT_AS", RLIMIT_AS },
  { "RLIMIT_CORE", RLIMIT_CORE },
  { "RLIMIT_CPU", RLIMIT_CPU },
  { "RLIMIT_DATA", RLIMIT_DATA },
  { "RLIMIT_FSIZE", RLIMIT_FSIZE },
  { "RLIMIT_LOCKS", RLIMIT_LOCKS },
  { "RLIMIT_MEMLOCK", RLIMIT_MEMLOCK },
  { "RLIMIT_MSGQUEUE", RLIMIT_MSGQUEUE },
  { "RLIMIT_NICE", RLIMIT_NICE },
  { "RLIMIT_NOFILE", RLIMIT_NOFILE },
  { "RLIMIT_NPROC", RLIMIT_NPROC },
  { "RLIMIT_RSS", RLIMIT_RSS },
  { "RLIMIT_RTPRIO", RLIMIT_RTPRIO },
  { "RLIMIT_RTTIME", RLIMIT_RTTIME },
  { "RLIMIT_SIGPENDING", RLIMIT_SIGPENDING },
  { "RLIMIT_STACK", RLIMIT_STACK },
};

static int
rlimit_resource (const char *name)
{
  for (size_t i = 0; i < sizeof rlimit_names / sizeof *rlimit_names; i++)
    if (strcmp (name, rlimit_names[i].name) == 0)
      return rlimit_names[i].resource;
  return -1;
}

static int
parse_rlimit (yajl_val v, const char *path, struct oci_rlimit *rl, hk_err *err)
{
  if (!YAJL_IS_OBJECT (v))
    return json_error (err, path, NULL, "must be an object");
  int has_soft = 0, has_hard = 0;
  if (json_get_string (v, path, "type", &rl->type, err) < 0
      || (has_soft = json_get_u64 (v, path, "soft", UINT64_MAX, &rl->soft, err)) < 0
      || (has_hard = json_get_u64 (v, path, "hard", UINT64_MAX, &rl->hard, err)) < 0)
    return -1;
  if (rl->type == NULL)
    return json_error (err, path, "type", "required");
  rl->resource = rlimit_resource (rl->type);
  if (rl->resource < 0)
    return json_error (err, path, "type", "unknown rlimit \"%s\"", rl->type);
  if (!has_soft)
    return json_error (err, path, "soft", "required");
  if (!has_hard)
    return json_error (err, path, "hard", "required");
  if (rl->soft > rl->hard)
    return json_error (err, path, "soft", "must not be above the hard limit");
  return 0;
}

static int
parse_rlimits (yajl_val proc, struct oci_process *p, hk_err *err)
{
  yajl_val a = NULL;
  int r = json_get_array (proc, ".process", "rlimits", &a, err);
  if (r <= 0)
    return r;
  p->rlimits = xcalloc (json_len (a), sizeof *p->rlimits);
  for (size_t i = 0; i < json_len (a); i++)
    {
      cleanup_free char *path = json_index (".process.rlimits", i);
      p->n_rlimits++;
      if (parse_rlimit (json_at (a, i), path, &p->rlimits[i], err) < 0)
        return -1;
      for (size_t j = 0; j < i; j++)
        if (p->rlimits[j].resource == p->rlimits[i].resource)
          return json_error (err, path, "type", "duplicate rlimit \"%s\"", p->rlimits[i].type);
    }
  return 0;
}

static int
parse_user (yajl_val proc, struct oci_user *u, hk_err *err)
{
  const char *path = ".process.user";
  yajl_val o = NULL, gids = NULL;
  uint32_t umask = 0;
  int r = json_get_object (proc, ".process", "user", &o, err);
  if (r <= 0)
    return r;
  if (json_get_u32 (o, path, "uid", &u->uid, err) < 0 || json_get_u32 (o, path, "gid", &u->gid, err) < 0
      || (r = json_get_u32 (o, path, "umask", &umask, err)) < 0
      || json_get_string (o, path, "username", &u->username, err) < 0
      || json_get_array (o, path, "additionalGids", &gids, err) < 0)
    return -1;
  if (r > 0 && umask > 0777)
    return json_error (err, path, "umask", "must be between 0 and 0777");
  u->has_umask = r > 0;
  u->umask = r > 0 ? umask : 0;
  u->additional_gids = xcalloc (json_len (gids), sizeof *u->additional_gids);
  for (size_t i = 0; i < json_len (gids); i++)
    {
      uint64_t g;
      cleanup_free char *p = json_index (".process.user.additionalGids", i);
      if (json_as_u64 (json_at (gids, i), p, NULL, UINT32_MAX, &g, err) < 0)
        return -1;
      u->additional_gids[u->n_additional_gids++] = (gid_t)g;
    }
  return 0;
}

static int
parse_caps (yajl_val proc, struct oci_process *p, hk_err *err)
{
  const char *path = ".process.capabilities";
  yajl_val o = NULL;
  int r = json_get_object (proc, ".process", "capabilities", &o, err);
  if (r <= 0)
    return r;
  p->has_caps = true;
  struct oci_caps *c = &p->caps;
  if (json_get_strv (o, path, "bounding", &c->bounding, err) < 0
      || json_get_strv (o, path, "effective", &c->effective, err) < 0
      || json_get_strv (o, path, "inheritable", &c->inheritable, err) < 0
      || json_get_strv (o, path, "permitted", &c->permitted, err) < 0
      || json_get_strv (o, path, "ambient", &c->ambient, err) < 0)
    return -1;
  return 0;
}

static int
parse_args_env (yajl_val proc, struct oci_process *p, hk_err *err)
{
  /* Absent or empty only for sandbox.init (checked in parse_top) or a
   * --process file (the command line gives them). */
  yajl_val args = json_get (proc, "args");
  if (args && !YAJL_IS_ARRAY (args))
    return json_error (err, ".process", "args", "must be a non-empty array");
  if (args == NULL)
    p->args = xcalloc (1, sizeof *p->args);
  else if (json_as_strv (args, ".process", "args", &p->args, err) < 0)
    return -1;
  if (p->args == NULL)
    p->args = xcalloc (1, sizeof *p->args);
  if (json_get_strv (proc, ".process", "env", &p->env, err) < 0)
    return -1;
  /* As runc: an entry without '=' or with an empty name is an error, not
   * something the process discovers later. */
  for (size_t i = 0; p->env && p->env[i]; i++)
    if (p->env[i][0] == '=' || strchr (p->env[i], '=') == NULL)
      {
        cleanup_free char *path = json_index (".process.env", i);
        return json_error (err, path, NULL, "must be NAME=VALUE, got \"%s\"", p->env[i]);
      }
  return 0;
}

static int
parse_process_misc (yajl_val proc, struct oci_process *p, hk_err *err)
{
  const char *path = ".process";
  yajl_val cs = NULL;
  uint32_t h = 0, w = 0;
  int r = 0;
  /* Settings hako does not apply: refused, not silently dropped. */
  static const char *const unapplied[] = { "scheduler", "ioPriority", "execCPUAffinity", NULL };
  static const char *const labels[] = { "selinuxLabel", NULL };
  const char *what = json_first_set (proc, unapplied);
  if (what)
    return err_set (err, ENOTSUP, ".process.%s: not supported by hako", what);
  /* A process relying on an SELinux label would run unconfined.  (An
   * AppArmor profile is applied: process.c, proc_set_apparmor.) */
  if ((what = json_first_set (proc, labels)))
    return err_set (err, ENOTSUP, ".process.%s: %s", what, SPEC_NO_LABELS);
  if (json_get_bool (proc, path, "terminal", &p->terminal, err) < 0
      || json_get_object (proc, path, "consoleSize", &cs, err) < 0
      || json_get_u32 (cs, ".process.consoleSize", "height", &h, err) < 0
      || json_get_u32 (cs, ".process.consoleSize", "width", &w, err) < 0
      || json_get_string (proc, path, "cwd", &p->cwd, err) < 0
      || json_get_bool (proc, path, "noNewPrivileges", &p->no_new_privileges, err) < 0
      || json_get_string (proc, path, "apparmorProfile", &p->apparmor_profile, err) < 0
      || json_get_string (proc, path, "selinuxLabel", &p->selinux_label, err) < 0
      || (r = json_get_int (proc, path, "oomScoreAdj", -1000, 1000, &p->oom_score_adj, err)) < 0)
    return -1;
  p->console_height = h;
  p->console_width = w;
  p->has_oom_score_adj = r > 0;
  if (p->cwd == NULL)
    p->cwd = xstrdup ("/");
  if (!spec_is_abs (p->cwd))
    return json_error (err, path, "cwd", "must be an absolute path");
  return 0;
}

static int
parse_process_object (yajl_val proc, struct oci_process *p, hk_err *err)
{
  if (parse_args_env (proc, p, err) < 0 || parse_process_misc (proc, p, err) < 0
      || parse_user (proc, &p->user, err) < 0 || parse_caps (proc, p, err) < 0
      || parse_rlimits (proc, p, err) < 0)
    return -1;
  return 0;
}

static int
parse_process (yajl_val root, struct oci_spec *s, hk_err *err)
{
  yajl_val proc = NULL;
  int r = json_get_object (root, "", "process", &proc, err);
  if (r <= 0)
    return r;
  s->process = xcalloc (1, sizeof *s->process);
  if (parse_process_object (proc, s->process, err) < 0)
    return -1;
  /* No command is fine only when hako's init is pid 1 and simply waits. */
  if (s->process->args[0] == NULL && !s->sandbox.init)
    return json_error (err, ".process", "args", "must be a non-empty array");
  return 0;
}

/* ---- hooks ---- */

static const char *const hook_names[OCI_HOOK_COUNT] = {
  [OCI_HOOK_PRESTART] = "prestart",
  [OCI_HOOK_CREATE_RUNTIME] = "createRuntime",
  [OCI_HOOK_CREATE_CONTAINER] = "createContainer",
  [OCI_HOOK_START_CONTAINER] = "startContainer",
  [OCI_HOOK_POSTSTART] = "poststart",
  [OCI_HOOK_POSTSTOP] = "poststop",
};

const char *
spec_hook_name (enum oci_hook_kind k)
{
  return (unsigned)k < OCI_HOOK_COUNT ? hook_names[k] : NULL;
}

static int
parse_hook (yajl_val v, const char *path, struct oci_hook *h, hk_err *err)
{
  int64_t timeout = 0;
  int r = 0;
  if (!YAJL_IS_OBJECT (v))
    return json_error (err, path, NULL, "must be an object");
  if (json_get_string (v, path, "path", &h->path, err) < 0
      || json_get_strv (v, path, "args", &h->args, err) < 0
      || json_get_strv (v, path, "env", &h->env, err) < 0
      || (r = json_get_i64 (v, path, "timeout", INT64_MIN, INT64_MAX, &timeout, err)) < 0)
    return -1;
  if (h->path == NULL)
    return json_error (err, path, "path", "required");
  if (!spec_is_abs (h->path))
    return json_error (err, path, "path", "must be an absolute path");
  if (r > 0 && (timeout <= 0 || timeout > INT32_MAX))
    return json_error (err, path, "timeout", "must be a number of seconds greater than 0");
  h->has_timeout = r > 0;
  h->timeout = r > 0 ? (int)timeout : 0;
  return 0;
}

static int
parse_hooks (yajl_val root, struct oci_hooks *hooks, hk_err *err)
{
  yajl_val o = NULL;
  int r = json_get_object (root, "", "hooks", &o, err);
  if (r <= 0)
    return r;
  for (int k = 0; k < OCI_HOOK_COUNT; k++)
    {
      yajl_val a = NULL;
      if (json_get_array (o, ".hooks", hook_names[k], &a, err) < 0)
        return -1;
      hooks->list[k] = xcalloc (json_len (a), sizeof *hooks->list[k]);
      for (size_t i = 0; i < json_len (a); i++)
        {
          cleanup_free char *kind = json_path (".hooks", hook_names[k]);
          cleanup_free char *path = json_index (kind, i);
          hooks->n[k]++;
          if (parse_hook (json_at (a, i), path, &hooks->list[k][i], err) < 0)
            return -1;
        }
    }
  return 0;
}

/* ---- top level ---- */

static int
parse_root (yajl_val root, struct oci_spec *s, hk_err *err)
{
  yajl_val o = NULL;
  if (json_get_object (root, "", "root", &o, err) < 0
      || json_get_string (o, ".root", "path", &s->root_path, err) < 0
      || json_get_bool (o, ".root", "readonly", &s->root_readonly, err) < 0)
    return -1;
  /* The host profile's root is a fresh tmpfs: root.path is not used then. */
  if (s->sandbox.root != HAKO_ROOT_TMPFS && (s->root_path == NULL || s->root_path[0] == '\0'))
    return json_error (err, ".root", "path", "required (the bundle's root filesystem)");
  return 0;
}

static int
parse_top (yajl_val root, struct oci_spec *s, hk_err *err)
{
  if (!YAJL_IS_OBJECT (root))
    return err_set (err, EINVAL, "the config must be a JSON object");
  if (json_get_string (root, "", "ociVersion", &s->oci_version, err) < 0)
    return -1;
  if (s->oci_version == NULL || s->oci_version[0] == '\0')
    return json_error (err, "", "ociVersion", "required");
  if (spec_parse_sandbox (root, &s->sandbox, err) < 0 || parse_root (root, s, err) < 0
      || parse_process (root, s, err) < 0 || json_get_string (root, "", "hostname", &s->hostname, err) < 0
      || json_get_string (root, "", "domainname", &s->domainname, err) < 0 || parse_mounts (root, s, err) < 0
      || parse_hooks (root, &s->hooks, err) < 0
      || json_get_kv (root, "", "annotations", &s->annotations, &s->n_annotations, err) < 0
      || spec_parse_linux (root, &s->linux, err) < 0 || check_mount_idmaps (s, err) < 0
      || spec_parse_annotations (s, err) < 0)
    return -1;
  return 0;
}

int
oci_spec_parse (const char *json, size_t len, struct oci_spec **out, hk_err *err)
{
  yajl_val root = NULL;
  if (json_parse (json, len, &root, err) < 0)
    return err_kind (err, ERR_INVALID_CONFIG);
  struct oci_spec *s = xcalloc (1, sizeof *s);
  int r = parse_top (root, s, err);
  json_free (root);
  if (r < 0)
    {
      oci_spec_free (s);
      return err_kind_default (err, ERR_INVALID_CONFIG);
    }
  *out = s;
  return 0;
}

int
oci_spec_load (const char *path, struct oci_spec **out, hk_err *err)
{
  cleanup_free char *buf = NULL;
  size_t len;
  if (file_read_all (path, 16 << 20, &buf, &len, err) < 0)
    return -1;
  if (oci_spec_parse (buf, len, out, err) < 0)
    return err_prefix (err, "%s", path);
  return 0;
}

int
oci_process_parse (const char *json, size_t len, struct oci_process **out, hk_err *err)
{
  yajl_val root = NULL;
  if (json_parse (json, len, &root, err) < 0)
    return err_kind (err, ERR_INVALID_CONFIG);
  struct oci_process *p = xcalloc (1, sizeof *p);
  int r = YAJL_IS_OBJECT (root) ? parse_process_object (root, p, err)
                                : err_set (err, EINVAL, "the process must be a JSON object");
  json_free (root);
  if (r < 0)
    {
      oci_process_free (p);
      return err_kind_default (err, ERR_INVALID_CONFIG);
    }
  *out = p;
  return 0;
}

/* ---- free ---- */

void
oci_process_free (struct oci_process *p)
{
  if (p == NULL)
    return;
  free (p->user.additional_gids);
  free (p->user.username);
  strv_free (p->args);
  strv_free (p->env);
  free (p->cwd);
  strv_free (p->caps.bounding);
  strv_free (p->caps.effective);
  strv_free (p->caps.inheritable);
  strv_free (p->caps.permitted);
  strv_free (p->caps.ambient);
  for (size_t i = 0; i < p->n_rlimits; i++)
    free (p->rlimits[i].type);
  free (p->rlimits);
  free (p->apparmor_profile);
  free (p->selinux_label);
  free (p);
}

static void
free_mounts (struct oci_mount *m, size_t n)
{
  for (size_t i = 0; i < n; i++)
    {
      free (m[i].destination);
      free (m[i].type);
      free (m[i].source);
      strv_free (m[i].options);
      free (m[i].data);
      free (m[i].uid_mappings);
      free (m[i].gid_mappings);
    }
  free (m);
}

static void
free_hooks (struct oci_hooks *h)
{
  for (int k = 0; k < OCI_HOOK_COUNT; k++)
    {
      for (size_t i = 0; i < h->n[k]; i++)
        {
          free (h->list[k][i].path);
          strv_free (h->list[k][i].args);
          strv_free (h->list[k][i].env);
        }
      free (h->list[k]);
    }
}

void
oci_spec_free (struct oci_spec *spec)
{
  if (spec == NULL)
    return;
  free (spec->oci_version);
  free (spec->root_path);
  free_mounts (spec->mounts, spec->n_mounts);
  oci_process_free (spec->process);
  free (spec->hostname);
  free (spec->domainname);
  spec_free_linux (&spec->linux);
  free_hooks (&spec->hooks);
  json_kv_free (spec->annotations, spec->n_annotations);
  spec_free_sandbox (&spec->sandbox);
  free (spec);
}
