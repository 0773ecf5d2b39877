/* cdi: Container Device Interface specs — reading them (JSON, or YAML
 * through libyaml turned into JSON first, so one validator reads both),
 * resolving qualified names, and writing their containerEdits into a
 * config's text, where the runtime then sees ordinary linux.devices,
 * mounts, env, hooks and device rules. */
#include "oci/cdi.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <yaml.h>

#include "lib/util.h"
#include "oci/json.h"
#include "oci/spec.h"

#define CDI_MAX_SPEC (4 << 20)
#define YAML_MAX_DEPTH 64

/* ---- YAML → JSON ---- */

static bool
all_digits (const char *s, int base)
{
  if (*s == '\0')
    return false;
  for (; *s; s++)
    if (!(*s >= '0' && *s <= (base == 8 ? '7' : '9')))
      return false;
  return true;
}

/* A plain scalar, typed as YAML 1.1 core types are; anything else is a string. */
static void
emit_scalar (struct json_out *o, const char *s, bool plain)
{
  if (!plain)
    return json_str (o, s);
  if (*s == '\0' || strcmp (s, "~") == 0 || strcmp (s, "null") == 0 || strcmp (s, "Null") == 0
      || strcmp (s, "NULL") == 0)
    return json_null (o);
  if (strcmp (s, "true") == 0 || strcmp (s, "True") == 0 || strcmp (s, "TRUE") == 0)
    return json_bool (o, true);
  if (strcmp (s, "false") == 0 || strcmp (s, "False") == 0 || strcmp (s, "FALSE") == 0)
    return json_bool (o, false);
  const char *d = s + (*s == '-' || *s == '+');
  /* 0644 (YAML 1.1) and 0o644 (YAML 1.2) are octal: file modes are written so. */
  if ((d[0] == '0' && d[1] && all_digits (d + 1, 8)) || (d[0] == '0' && d[1] == 'o' && all_digits (d + 2, 8)))
    {
      errno = 0;
      unsigned long long v = strtoull (d + (d[1] == 'o' ? 2 : 1), NULL, 8);
      if (errno == 0 && v <= INT64_MAX)
        return json_int (o, *s == '-' ? -(int64_t)v : (int64_t)v);
    }
  if (all_digits (d, 10))
    {
      errno = 0;
      long long v = strtoll (s, NULL, 10);
      if (errno == 0)
        return json_int (o, v);
    }
  return json_str (o, s);
}

int
cdi_yaml_to_json (const char *text, size_t len, char **out, size_t *out_len, hk_err *err)
{
  yaml_parser_t p;
  yaml_event_t ev;
  struct json_out o;
  /* Per open collection: a mapping (keys and values alternate) or a sequence. */
  bool is_map[YAML_MAX_DEPTH], want_key[YAML_MAX_DEPTH];
  int depth = 0, docs = 0, r = 0;
  bool done = false, any = false;
  if (!yaml_parser_initialize (&p))
    return err_set (err, ENOMEM, "invalid YAML: cannot start the parser");
  yaml_parser_set_input_string (&p, (const unsigned char *)text, len);
  json_out_init (&o, NULL);
  while (!done)
    {
      if (!yaml_parser_parse (&p, &ev))
        {
          r = err_set (err, EINVAL, "invalid YAML: line %zu: %s", p.problem_mark.line + 1,
                       p.problem ? p.problem : "syntax error");
          break;
        }
      bool key = depth > 0 && is_map[depth - 1] && want_key[depth - 1];
      switch (ev.type)
        {
        case YAML_STREAM_END_EVENT: done = true; break;
        case YAML_DOCUMENT_START_EVENT:
          if (++docs > 1)
            r = err_set (err, EINVAL, "invalid YAML: more than one document");
          break;
        case YAML_ALIAS_EVENT: r = err_set (err, EINVAL, "invalid YAML: aliases are not supported"); break;
        case YAML_SCALAR_EVENT:
          if (ev.data.scalar.anchor)
            r = err_set (err, EINVAL, "invalid YAML: anchors are not supported");
          else if (key)
            json_key (&o, (const char *)ev.data.scalar.value);
          else
            emit_scalar (&o, (const char *)ev.data.scalar.value,
                         ev.data.scalar.style == YAML_PLAIN_SCALAR_STYLE);
          any = true;
          break;
        case YAML_MAPPING_START_EVENT:
        case YAML_SEQUENCE_START_EVENT:
          if (key)
            r = err_set (err, EINVAL, "invalid YAML: line %zu: a key must be a string",
                         ev.start_mark.line + 1);
          else if (depth == YAML_MAX_DEPTH)
            r = err_set (err, EINVAL, "invalid YAML: nested more than %d deep", YAML_MAX_DEPTH);
          else
            {
              is_map[depth] = ev.type == YAML_MAPPING_START_EVENT;
              want_key[depth] = true;
              depth++;
              if (is_map[depth - 1])
                json_obj_open (&o);
              else
                json_arr_open (&o);
              any = true;
            }
          break;
        case YAML_MAPPING_END_EVENT:
        case YAML_SEQUENCE_END_EVENT:
          depth--;
          if (is_map[depth])
            json_obj_close (&o);
          else
            json_arr_close (&o);
          break;
        default: break;
        }
      /* In a mapping, a scalar or a closed collection ends a key or a value. */
      if (r == 0 && depth > 0 && is_map[depth - 1]
          && (ev.type == YAML_SCALAR_EVENT || ev.type == YAML_MAPPING_END_EVENT
              || ev.type == YAML_SEQUENCE_END_EVENT))
        want_key[depth - 1] = !want_key[depth - 1];
      yaml_event_delete (&ev);
      if (r < 0)
        break;
    }
  yaml_parser_delete (&p);
  if (r == 0 && !any)
    r = err_set (err, EINVAL, "invalid YAML: empty document");
  if (r < 0)
    {
      char *junk = NULL;
      hk_err ignored;
      json_out_finish (&o, &junk, NULL, &ignored);
      free (junk);
      return -1;
    }
  return json_out_finish (&o, out, out_len, err);
}

/* ---- names ---- */

static bool
is_alpha (char c)
{
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool
is_alnum (char c)
{
  return is_alpha (c) || (c >= '0' && c <= '9');
}

/* The CDI grammar: vendor "a.b-c_d" (a letter first, alphanumeric last),
 * class "gpu" (the same without dots), device "0", "gpu0", "a:b.c-d_e"
 * (alphanumeric first and last). */
static bool
valid_part (const char *s, size_t n, const char *extra, bool letter_first)
{
  if (n == 0 || !(letter_first ? is_alpha (s[0]) : is_alnum (s[0])) || !is_alnum (s[n - 1]))
    return false;
  for (size_t i = 0; i < n; i++)
    if (!is_alnum (s[i]) && strchr (extra, s[i]) == NULL)
      return false;
  return true;
}

static bool
valid_kind (const char *k)
{
  const char *slash = strchr (k, '/');
  return slash && valid_part (k, (size_t)(slash - k), "-_.", true)
         && valid_part (slash + 1, strlen (slash + 1), "-_", true);
}

static bool
valid_device_name (const char *n)
{
  return valid_part (n, strlen (n), "-_.:", false);
}

bool
cdi_is_qualified (const char *name, size_t *kind_len)
{
  const char *eq = strchr (name, '=');
  if (eq == NULL)
    return false;
  cleanup_free char *kind = xstrndup (name, (size_t)(eq - name));
  if (!valid_kind (kind) || !valid_device_name (eq + 1))
    return false;
  if (kind_len)
    *kind_len = (size_t)(eq - name);
  return true;
}

/* ---- parsing a spec ---- */

static void
edits_free (struct cdi_edits *e)
{
  strv_free (e->env);
  for (size_t i = 0; i < e->n_nodes; i++)
    {
      free (e->nodes[i].path);
      free (e->nodes[i].host_path);
      free (e->nodes[i].permissions);
    }
  free (e->nodes);
  for (size_t i = 0; i < e->n_mounts; i++)
    {
      free (e->mounts[i].host_path);
      free (e->mounts[i].container_path);
      free (e->mounts[i].type);
      strv_free (e->mounts[i].options);
    }
  free (e->mounts);
  for (size_t i = 0; i < e->n_hooks; i++)
    {
      free (e->hooks[i].name);
      free (e->hooks[i].path);
      strv_free (e->hooks[i].args);
      strv_free (e->hooks[i].env);
    }
  free (e->hooks);
  free (e->gids);
}

void
cdi_spec_free (struct cdi_spec *s)
{
  if (s == NULL)
    return;
  free (s->file);
  free (s->version);
  free (s->kind);
  for (size_t i = 0; i < s->n_devices; i++)
    {
      free (s->devices[i].name);
      edits_free (&s->devices[i].edits);
    }
  free (s->devices);
  edits_free (&s->edits);
  free (s);
}

static const char *const hook_names[]
    = { "prestart", "createRuntime", "createContainer", "startContainer", "poststart", "poststop", NULL };

static int
parse_node (yajl_val v, const char *p, struct cdi_node *n, hk_err *err)
{
  cleanup_free char *type = NULL;
  int64_t i;
  if (!YAJL_IS_OBJECT (v))
    return json_error (err, p, NULL, "must be an object");
  if (json_get_string (v, p, "path", &n->path, err) < 0
      || json_get_string (v, p, "hostPath", &n->host_path, err) < 0
      || json_get_string (v, p, "type", &type, err) < 0
      || json_get_string (v, p, "permissions", &n->permissions, err) < 0)
    return -1;
  if (!n->path || n->path[0] != '/')
    return json_error (err, p, "path", "required, an absolute path");
  if (n->host_path && n->host_path[0] != '/')
    return json_error (err, p, "hostPath", "must be an absolute path");
  if (type)
    {
      if (strlen (type) != 1 || strchr ("cbup", type[0]) == NULL)
        return json_error (err, p, "type", "must be c, b, u or p, got \"%s\"", type);
      n->type = type[0];
    }
  if (n->permissions)
    {
      if (n->permissions[0] == '\0' || strspn (n->permissions, "rwm") != strlen (n->permissions))
        return json_error (err, p, "permissions", "must be made of r, w and m, got \"%s\"", n->permissions);
    }
  int r;
  if ((r = json_get_i64 (v, p, "major", 0, UINT32_MAX, &i, err)) < 0)
    return -1;
  if (r)
    n->has_major = true, n->major = i;
  if ((r = json_get_i64 (v, p, "minor", 0, UINT32_MAX, &i, err)) < 0)
    return -1;
  if (r)
    n->has_minor = true, n->minor = i;
  if (n->has_major != n->has_minor)
    return json_error (err, p, n->has_major ? "minor" : "major", "required when %s is given",
                       n->has_major ? "major" : "minor");
  if (n->type == 'p' && n->has_major)
    return json_error (err, p, "major", "a fifo (type p) has no device numbers");
  if ((r = json_get_i64 (v, p, "fileMode", 0, 07777, &i, err)) < 0)
    return -1;
  if (r)
    n->has_mode = true, n->mode = (uint32_t)i;
  if ((r = json_get_i64 (v, p, "uid", 0, UINT32_MAX - 1, &i, err)) < 0)
    return -1;
  if (r)
    n->has_uid = true, n->uid = (uint32_t)i;
  if ((r = json_get_i64 (v, p, "gid", 0, UINT32_MAX - 1, &i, err)) < 0)
    return -1;
  if (r)
    n->has_gid = true, n->gid = (uint32_t)i;
  return 0;
}

static int
parse_mount (yajl_val v, const char *p, struct cdi_mount *m, hk_err *err)
{
  if (!YAJL_IS_OBJECT (v))
    return json_error (err, p, NULL, "must be an object");
  if (json_get_string (v, p, "hostPath", &m->host_path, err) < 0
      || json_get_string (v, p, "containerPath", &m->container_path, err) < 0
      || json_get_string (v, p, "type", &m->type, err) < 0
      || json_get_strv (v, p, "options", &m->options, err) < 0)
    return -1;
  if (!m->host_path || m->host_path[0] == '\0')
    return json_error (err, p, "hostPath", "required");
  if (!m->container_path || m->container_path[0] != '/')
    return json_error (err, p, "containerPath", "required, an absolute path");
  return 0;
}

static int
parse_hook (yajl_val v, const char *p, struct cdi_hook *h, hk_err *err)
{
  if (!YAJL_IS_OBJECT (v))
    return json_error (err, p, NULL, "must be an object");
  if (json_get_string (v, p, "hookName", &h->name, err) < 0
      || json_get_string (v, p, "path", &h->path, err) < 0 || json_get_strv (v, p, "args", &h->args, err) < 0
      || json_get_strv (v, p, "env", &h->env, err) < 0)
    return -1;
  if (!h->name || !strv_contains ((char **)hook_names, h->name))
    return json_error (err, p, "hookName",
                       "required, one of prestart, createRuntime, createContainer, startContainer, "
                       "poststart, poststop");
  if (!h->path || h->path[0] != '/')
    return json_error (err, p, "path", "required, an absolute path");
  int64_t t;
  int r = json_get_i64 (v, p, "timeout", 1, INT32_MAX, &t, err);
  if (r < 0)
    return -1;
  if (r)
    h->has_timeout = true, h->timeout = (int)t;
  return 0;
}

/* Each element of array key of obj, parsed by fn into a new array of size elems. */
static int
parse_list (yajl_val obj, const char *path, const char *key, size_t size, void **out, size_t *n,
            int (*fn) (yajl_val, const char *, void *, hk_err *), hk_err *err)
{
  yajl_val a = NULL;
  int r = json_get_array (obj, path, key, &a, err);
  if (r <= 0)
    return r;
  cleanup_free char *base = json_path (path, key);
  *out = xcalloc (json_len (a) + 1, size);
  for (size_t i = 0; i < json_len (a); i++)
    {
      cleanup_free char *p = json_index (base, i);
      (*n)++;
      if (fn (json_at (a, i), p, (char *)*out + i * size, err) < 0)
        return -1;
    }
  return 0;
}

static int
node_fn (yajl_val v, const char *p, void *out, hk_err *err)
{
  return parse_node (v, p, out, err);
}

static int
mount_fn (yajl_val v, const char *p, void *out, hk_err *err)
{
  return parse_mount (v, p, out, err);
}

static int
hook_fn (yajl_val v, const char *p, void *out, hk_err *err)
{
  return parse_hook (v, p, out, err);
}

static int
parse_edits (yajl_val v, const char *path, struct cdi_edits *e, hk_err *err)
{
  if (!YAJL_IS_OBJECT (v))
    return json_error (err, path, NULL, "must be an object");
  if (json_get_strv (v, path, "env", &e->env, err) < 0
      || parse_list (v, path, "deviceNodes", sizeof *e->nodes, (void **)&e->nodes, &e->n_nodes, node_fn, err)
             < 0
      || parse_list (v, path, "mounts", sizeof *e->mounts, (void **)&e->mounts, &e->n_mounts, mount_fn, err)
             < 0
      || parse_list (v, path, "hooks", sizeof *e->hooks, (void **)&e->hooks, &e->n_hooks, hook_fn, err) < 0)
    return -1;
  for (size_t i = 0; e->env && e->env[i]; i++)
    if (strchr (e->env[i], '=') == NULL || e->env[i][0] == '=')
      {
        cleanup_free char *base = json_path (path, "env");
        cleanup_free char *p = json_index (base, i);
        return json_error (err, p, NULL, "must be NAME=VALUE, got \"%s\"", e->env[i]);
      }
  yajl_val g = NULL;
  if (json_get_array (v, path, "additionalGids", &g, err) < 0)
    return -1;
  if (g)
    {
      cleanup_free char *base = json_path (path, "additionalGids");
      e->gids = xcalloc (json_len (g) + 1, sizeof *e->gids);
      for (size_t i = 0; i < json_len (g); i++)
        {
          cleanup_free char *p = json_index (base, i);
          int64_t gid;
          if (json_as_i64 (json_at (g, i), p, NULL, 0, UINT32_MAX - 1, &gid, err) < 0)
            return -1;
          e->gids[e->n_gids++] = (uint32_t)gid;
        }
    }
  /* Edits hako cannot make must not be dropped silently: the vendor meant them. */
  static const char *const unsupported[] = { "intelRdt", "netDevices", NULL };
  const char *u = json_first_set (v, unsupported);
  if (u)
    return err_setk (err, ERR_UNSUPPORTED, ENOTSUP, "%s.%s: not supported by hako", path, u);
  return 0;
}

/* cdiVersion "0.3.0" to "0.8.0" (any patch level). */
static bool
version_ok (const char *v)
{
  unsigned maj, min, patch;
  char tail;
  if (sscanf (v, "%u.%u.%u%c", &maj, &min, &patch, &tail) != 3)
    return false;
  return maj == 0 && min >= 3 && min <= 8;
}

static int
parse_spec_tree (yajl_val root, struct cdi_spec *s, hk_err *err)
{
  if (!YAJL_IS_OBJECT (root))
    return err_set (err, EINVAL, "must be an object");
  if (json_get_string (root, "", "cdiVersion", &s->version, err) < 0
      || json_get_string (root, "", "kind", &s->kind, err) < 0)
    return -1;
  if (s->version == NULL)
    return json_error (err, "", "cdiVersion", "required");
  if (!version_ok (s->version))
    return json_error (err, "", "cdiVersion", "\"%s\" is not supported (0.3.0 to 0.8.0)", s->version);
  if (s->kind == NULL || !valid_kind (s->kind))
    return json_error (err, "", "kind", "required, as vendor.com/class (got \"%s\")", s->kind ? s->kind : "");
  yajl_val devs = NULL, ce = json_get (root, "containerEdits");
  if (json_get_array (root, "", "devices", &devs, err) < 0)
    return -1;
  if (devs == NULL || json_len (devs) == 0)
    return json_error (err, "", "devices", "required, at least one device");
  if (ce && parse_edits (ce, ".containerEdits", &s->edits, err) < 0)
    return -1;
  s->devices = xcalloc (json_len (devs), sizeof *s->devices);
  for (size_t i = 0; i < json_len (devs); i++)
    {
      yajl_val d = json_at (devs, i);
      cleanup_free char *p = json_index (".devices", i);
      struct cdi_device *dev = &s->devices[s->n_devices++];
      if (!YAJL_IS_OBJECT (d))
        return json_error (err, p, NULL, "must be an object");
      if (json_get_string (d, p, "name", &dev->name, err) < 0)
        return -1;
      if (dev->name == NULL || !valid_device_name (dev->name))
        return json_error (
            err, p, "name",
            "required: letters, digits, '-', '_', '.', ':', alphanumeric first and last (got \"%s\")",
            dev->name ? dev->name : "");
      for (size_t j = 0; j < i; j++)
        if (strcmp (s->devices[j].name, dev->name) == 0)
          return json_error (err, p, "name", "\"%s\" is named twice", dev->name);
      yajl_val e = json_get (d, "containerEdits");
      cleanup_free char *ep = json_path (p, "containerEdits");
      if (e == NULL)
        return json_error (err, p, "containerEdits", "required");
      if (parse_edits (e, ep, &dev->edits, err) < 0)
        return -1;
      if (dev->edits.env == NULL && dev->edits.n_nodes == 0 && dev->edits.n_mounts == 0
          && dev->edits.n_hooks == 0 && dev->edits.n_gids == 0)
        return json_error (err, ep, NULL, "must make at least one edit");
    }
  return 0;
}

int
cdi_spec_parse (const char *text, size_t len, const char *file, bool yaml, struct cdi_spec **out, hk_err *err)
{
  cleanup_free char *json = NULL;
  size_t jlen = len;
  yajl_val root = NULL;
  struct cdi_spec *s = xcalloc (1, sizeof *s);
  s->file = xstrdup (file);
  int r = 0;
  if (yaml)
    r = cdi_yaml_to_json (text, len, &json, &jlen, err);
  if (r == 0)
    r = json_parse (yaml ? json : text, jlen, &root, err);
  if (r == 0)
    r = parse_spec_tree (root, s, err);
  if (root)
    yajl_tree_free (root);
  if (r < 0)
    {
      cdi_spec_free (s);
      err_kind_default (err, ERR_INVALID_CONFIG);
      return err_prefix (err, "CDI spec %s", file);
    }
  *out = s;
  return 0;
}

/* ---- directories ---- */

static char **cli_dirs, **node_dirs, **default_dirs;

void
cdi_add_dir (const char *dir)
{
  size_t n = strv_len (cli_dirs);
  cli_dirs = xrealloc (cli_dirs, (n + 2) * sizeof *cli_dirs);
  cli_dirs[n] = xstrdup (dir);
  cli_dirs[n + 1] = NULL;
}

void
cdi_set_node_dirs (char *const *dirs)
{
  strv_free (node_dirs);
  node_dirs = dirs ? strv_dup (dirs) : NULL;
}

char *const *
cdi_dirs (void)
{
  if (cli_dirs)
    return cli_dirs;
  if (node_dirs)
    return node_dirs;
  if (default_dirs == NULL)
    {
      default_dirs = xcalloc (3, sizeof *default_dirs);
      default_dirs[0] = xstrdup ("/etc/cdi");
      default_dirs[1] = xstrdup ("/var/run/cdi");
    }
  return default_dirs;
}

static int
cmp_str (const void *a, const void *b)
{
  return strcmp (*(char *const *)a, *(char *const *)b);
}

static bool
has_suffix (const char *s, const char *suf)
{
  size_t n = strlen (s), m = strlen (suf);
  return n > m && strcmp (s + n - m, suf) == 0;
}

static int
load_dir (const char *dir, int priority, struct cdi_registry *r, hk_err *err)
{
  DIR *d = opendir (dir);
  if (d == NULL)
    return errno == ENOENT || errno == ENOTDIR ? 0 : err_sys (err, "CDI spec dir %s", dir);
  char **names = NULL;
  size_t n = 0;
  struct dirent *e;
  while ((e = readdir (d)))
    if (e->d_name[0] != '.'
        && (has_suffix (e->d_name, ".json") || has_suffix (e->d_name, ".yaml")
            || has_suffix (e->d_name, ".yml")))
      {
        names = xrealloc (names, (n + 2) * sizeof *names);
        names[n++] = xstrdup (e->d_name);
        names[n] = NULL;
      }
  closedir (d);
  if (n)
    qsort (names, n, sizeof *names, cmp_str);
  int rc = 0;
  for (size_t i = 0; i < n && rc == 0; i++)
    {
      cleanup_free char *path = xasprintf ("%s/%s", dir, names[i]);
      cleanup_free char *text = NULL;
      size_t len;
      struct cdi_spec *s;
      if (file_read_all (path, CDI_MAX_SPEC, &text, &len, err) < 0)
        rc = err_prefix (err, "CDI spec");
      else if (cdi_spec_parse (text, len, path, !has_suffix (path, ".json"), &s, err) < 0)
        rc = -1;
      else
        {
          s->priority = priority;
          r->specs = xrealloc (r->specs, (r->n + 1) * sizeof *r->specs);
          r->specs[r->n++] = s;
        }
    }
  strv_free (names);
  return rc;
}

int
cdi_load (char *const *dirs, struct cdi_registry *out, hk_err *err)
{
  *out = (struct cdi_registry){ 0 };
  if (dirs == NULL)
    dirs = cdi_dirs ();
  for (size_t i = 0; dirs[i]; i++)
    if (load_dir (dirs[i], (int)i, out, err) < 0)
      {
        cdi_registry_free (out);
        return -1;
      }
  return 0;
}

void
cdi_registry_free (struct cdi_registry *r)
{
  for (size_t i = 0; i < r->n; i++)
    cdi_spec_free (r->specs[i]);
  free (r->specs);
  *r = (struct cdi_registry){ 0 };
}

/* ---- resolution ---- */

static void
add_ref (struct cdi_ref **refs, size_t *n, const struct cdi_spec *s, const struct cdi_device *d)
{
  for (size_t i = 0; i < *n; i++)
    if ((*refs)[i].dev == d)
      return;
  *refs = xrealloc (*refs, (*n + 1) * sizeof **refs);
  (*refs)[(*n)++] = (struct cdi_ref){ s, d };
}

static const struct cdi_device *
find_in (const struct cdi_spec *s, const char *name)
{
  for (size_t i = 0; i < s->n_devices; i++)
    if (strcmp (s->devices[i].name, name) == 0)
      return &s->devices[i];
  return NULL;
}

/* The device kind=name: from the highest-priority directory that has it;
 * two specs of that directory both defining it is ambiguous. */
static int
lookup (const struct cdi_registry *r, const char *kind, const char *name, const char *request,
        struct cdi_ref *out, hk_err *err)
{
  const struct cdi_spec *best = NULL;
  for (size_t i = 0; i < r->n; i++)
    {
      const struct cdi_spec *s = r->specs[i];
      if (strcmp (s->kind, kind) != 0 || find_in (s, name) == NULL)
        continue;
      if (best && best->priority == s->priority)
        return err_setk (err, ERR_INVALID_CONFIG, EINVAL,
                         "CDI device %s is ambiguous: defined in both %s and %s", request, best->file,
                         s->file);
      if (best == NULL || s->priority > best->priority)
        best = s;
    }
  if (best == NULL)
    return 1;
  *out = (struct cdi_ref){ best, find_in (best, name) };
  return 0;
}

static int
unknown (const struct cdi_registry *r, const char *request, hk_err *err)
{
  char *const *dirs = cdi_dirs ();
  cleanup_free char *where = xstrdup (dirs[0] ? dirs[0] : "");
  for (size_t i = 1; dirs[0] && dirs[i]; i++)
    {
      char *w = xasprintf ("%s, %s", where, dirs[i]);
      free (where);
      where = w;
    }
  return err_setk (err, ERR_NOT_FOUND, ENOENT, "CDI device %s: no such device in the %zu spec%s under %s",
                   request, r->n, r->n == 1 ? "" : "s", where);
}

int
cdi_resolve (const struct cdi_registry *r, const char *request, struct cdi_ref **refs, size_t *n, hk_err *err)
{
  size_t kind_len;
  struct cdi_ref ref;
  if (strchr (request, '=') || strchr (request, '/'))
    {
      if (!cdi_is_qualified (request, &kind_len))
        return err_setk (err, ERR_INVALID_ARGUMENT, EINVAL,
                         "device \"%s\": not a CDI name (vendor.com/class=name) nor a host path", request);
      cleanup_free char *kind = xstrndup (request, kind_len);
      const char *name = request + kind_len + 1;
      int rc = lookup (r, kind, name, request, &ref, err);
      if (rc < 0)
        return -1;
      if (rc == 0)
        return add_ref (refs, n, ref.spec, ref.dev), 0;
      if (strcmp (name, "all") != 0)
        return unknown (r, request, err);
      /* No device named all: every device of the kind, each from the spec
       * that wins it. */
      size_t before = *n;
      for (size_t i = 0; i < r->n; i++)
        if (strcmp (r->specs[i]->kind, kind) == 0)
          for (size_t j = 0; j < r->specs[i]->n_devices; j++)
            {
              if (lookup (r, kind, r->specs[i]->devices[j].name, request, &ref, err) < 0)
                return -1;
              add_ref (refs, n, ref.spec, ref.dev);
            }
      return *n > before ? 0 : unknown (r, request, err);
    }
  if (!valid_device_name (request))
    return err_setk (err, ERR_INVALID_ARGUMENT, EINVAL,
                     "device \"%s\": not a CDI name (vendor.com/class=name) nor a host path", request);
  /* A bare name: only when exactly one kind has it. */
  const struct cdi_spec *found = NULL;
  for (size_t i = 0; i < r->n; i++)
    if (find_in (r->specs[i], request))
      {
        if (found && strcmp (found->kind, r->specs[i]->kind) != 0)
          return err_setk (err, ERR_INVALID_CONFIG, EINVAL,
                           "CDI device %s is ambiguous: both %s=%s and %s=%s (give the qualified name)",
                           request, found->kind, request, r->specs[i]->kind, request);
        found = r->specs[i];
      }
  if (found == NULL)
    return unknown (r, request, err);
  if (lookup (r, found->kind, request, request, &ref, err) != 0)
    return -1;
  add_ref (refs, n, ref.spec, ref.dev);
  return 0;
}

/* ---- applying ---- */

/* The edits collected from every spec and device, nodes completed from the host. */
struct plan
{
  char **env;
  struct cdi_node *nodes;
  size_t n_nodes;
  const struct cdi_mount **mounts;
  size_t n_mounts;
  const struct cdi_hook **hooks;
  size_t n_hooks;
  uint32_t *gids;
  size_t n_gids;
  char **requests; /* new requests applied */
  char **names;    /* qualified names resolved */
};

static void
plan_free (struct plan *p)
{
  strv_free (p->env);
  for (size_t i = 0; i < p->n_nodes; i++)
    {
      free (p->nodes[i].path);
      free (p->nodes[i].host_path);
      free (p->nodes[i].permissions);
    }
  free (p->nodes);
  free (p->mounts);
  free (p->hooks);
  free (p->gids);
  strv_free (p->requests);
  strv_free (p->names);
}

static void
strv_push (char ***v, const char *s)
{
  size_t n = strv_len (*v);
  *v = xrealloc (*v, (n + 2) * sizeof **v);
  (*v)[n] = xstrdup (s);
  (*v)[n + 1] = NULL;
}

/* K=V replacing an earlier K. */
static void
env_set (char ***env, const char *kv)
{
  size_t k = (size_t)(strchr (kv, '=') - kv);
  for (size_t i = 0; *env && (*env)[i]; i++)
    if (strncmp ((*env)[i], kv, k + 1) == 0)
      {
        free ((*env)[i]);
        (*env)[i] = xstrdup (kv);
        return;
      }
  strv_push (env, kv);
}

/* A node's missing type, numbers and mode from the host's node. */
static int
complete_node (struct cdi_node *n, hk_err *err)
{
  const char *host = n->host_path ? n->host_path : n->path;
  if (n->type && (n->has_major || n->type == 'p') && n->has_mode)
    return 0;
  struct stat st;
  if (stat (host, &st) < 0)
    {
      if (n->type && (n->has_major || n->type == 'p'))
        return 0; /* fully given: the host need not have it */
      return err_code (err, errno, "device node %s: cannot read the host's node %s to complete it", n->path,
                       host);
    }
  char t = S_ISCHR (st.st_mode) ? 'c' : S_ISBLK (st.st_mode) ? 'b' : S_ISFIFO (st.st_mode) ? 'p' : 0;
  if (t == 0)
    return err_setk (err, ERR_INVALID_CONFIG, EINVAL, "device node %s: host path %s is not a device node",
                     n->path, host);
  if (n->type == 0)
    n->type = t;
  if (!n->has_major && n->type != 'p')
    {
      n->has_major = n->has_minor = true;
      n->major = major (st.st_rdev);
      n->minor = minor (st.st_rdev);
    }
  if (!n->has_mode)
    n->has_mode = true, n->mode = st.st_mode & 07777;
  return 0;
}

static int
plan_node (struct plan *p, const struct cdi_node *src, hk_err *err)
{
  for (size_t i = 0; i < p->n_nodes; i++)
    if (strcmp (p->nodes[i].path, src->path) == 0)
      return 0; /* the same node from the spec-wide edits and a device */
  struct cdi_node n = *src;
  n.path = xstrdup (src->path);
  n.host_path = src->host_path ? xstrdup (src->host_path) : NULL;
  n.permissions = src->permissions ? xstrdup (src->permissions) : NULL;
  p->nodes = xrealloc (p->nodes, (p->n_nodes + 1) * sizeof *p->nodes);
  p->nodes[p->n_nodes++] = n;
  return complete_node (&p->nodes[p->n_nodes - 1], err);
}

static int
plan_edits (struct plan *p, const struct cdi_edits *e, hk_err *err)
{
  for (size_t i = 0; e->env && e->env[i]; i++)
    env_set (&p->env, e->env[i]);
  for (size_t i = 0; i < e->n_nodes; i++)
    if (plan_node (p, &e->nodes[i], err) < 0)
      return -1;
  for (size_t i = 0; i < e->n_mounts; i++)
    {
      p->mounts = xrealloc (p->mounts, (p->n_mounts + 1) * sizeof *p->mounts);
      p->mounts[p->n_mounts++] = &e->mounts[i];
    }
  for (size_t i = 0; i < e->n_hooks; i++)
    {
      p->hooks = xrealloc (p->hooks, (p->n_hooks + 1) * sizeof *p->hooks);
      p->hooks[p->n_hooks++] = &e->hooks[i];
    }
  for (size_t i = 0; i < e->n_gids; i++)
    {
      bool dup = false;
      for (size_t j = 0; j < p->n_gids; j++)
        dup |= p->gids[j] == e->gids[i];
      if (!dup)
        {
          p->gids = xrealloc (p->gids, (p->n_gids + 1) * sizeof *p->gids);
          p->gids[p->n_gids++] = e->gids[i];
        }
    }
  return 0;
}

static void
emit_array_items (struct json_out *o, yajl_val a)
{
  for (size_t i = 0; YAJL_IS_ARRAY (a) && i < a->u.array.len; i++)
    json_value (o, a->u.array.values[i]);
}

static void
emit_mount (struct json_out *o, const struct cdi_mount *m)
{
  bool bind = m->type == NULL || strcmp (m->type, "bind") == 0;
  json_obj_open (o);
  json_kstr (o, "destination", m->container_path);
  json_kstr (o, "source", m->host_path);
  json_kstr (o, "type", m->type ? m->type : "bind");
  json_key (o, "options");
  json_arr_open (o);
  for (size_t i = 0; m->options && m->options[i]; i++)
    json_str (o, m->options[i]);
  if (bind && !strv_contains (m->options, "bind") && !strv_contains (m->options, "rbind"))
    json_str (o, "rbind");
  json_arr_close (o);
  json_obj_close (o);
}

static void
emit_hook (struct json_out *o, const struct cdi_hook *h)
{
  json_obj_open (o);
  json_kstr (o, "path", h->path);
  json_kstrv (o, "args", h->args);
  json_kstrv (o, "env", h->env);
  if (h->has_timeout)
    json_kint (o, "timeout", h->timeout);
  json_obj_close (o);
}

static void
emit_hooks (struct json_out *o, yajl_val old, const struct plan *p)
{
  json_obj_open (o);
  for (size_t k = 0; hook_names[k]; k++)
    {
      yajl_val list = json_get (old, hook_names[k]);
      bool any = list != NULL;
      for (size_t i = 0; i < p->n_hooks; i++)
        any |= strcmp (p->hooks[i]->name, hook_names[k]) == 0;
      if (!any)
        continue;
      json_key (o, hook_names[k]);
      json_arr_open (o);
      emit_array_items (o, list);
      for (size_t i = 0; i < p->n_hooks; i++)
        if (strcmp (p->hooks[i]->name, hook_names[k]) == 0)
          emit_hook (o, p->hooks[i]);
      json_arr_close (o);
    }
  json_members_but (o, old, hook_names);
  json_obj_close (o);
}

static void
emit_process (struct json_out *o, yajl_val old, const struct plan *p)
{
  static const char *const skip[] = { "env", "user", NULL };
  static const char *const skip_user[] = { "additionalGids", NULL };
  json_obj_open (o);
  json_members_but (o, old, skip);
  yajl_val env = json_get (old, "env"), user = json_get (old, "user");
  char **merged = NULL;
  for (size_t i = 0; YAJL_IS_ARRAY (env) && i < env->u.array.len; i++)
    if (YAJL_IS_STRING (env->u.array.values[i]))
      strv_push (&merged, env->u.array.values[i]->u.string);
  for (size_t i = 0; p->env && p->env[i]; i++)
    env_set (&merged, p->env[i]);
  if (merged || env)
    {
      json_key (o, "env");
      json_arr_open (o);
      for (size_t i = 0; merged && merged[i]; i++)
        json_str (o, merged[i]);
      json_arr_close (o);
    }
  strv_free (merged);
  json_key (o, "user");
  json_obj_open (o);
  if (user == NULL)
    {
      json_kint (o, "uid", 0);
      json_kint (o, "gid", 0);
    }
  json_members_but (o, user, skip_user);
  yajl_val gids = json_get (user, "additionalGids");
  if (gids || p->n_gids)
    {
      json_key (o, "additionalGids");
      json_arr_open (o);
      emit_array_items (o, gids);
      for (size_t i = 0; i < p->n_gids; i++)
        {
          bool dup = false;
          for (size_t j = 0; YAJL_IS_ARRAY (gids) && j < gids->u.array.len; j++)
            dup |= YAJL_IS_INTEGER (gids->u.array.values[j])
                   && YAJL_GET_INTEGER (gids->u.array.values[j]) == (long long)p->gids[i];
          if (!dup)
            json_uint (o, p->gids[i]);
        }
      json_arr_close (o);
    }
  json_obj_close (o);
  json_obj_close (o);
}

static void
emit_node (struct json_out *o, const struct cdi_node *n)
{
  char type[2] = { n->type, 0 };
  json_obj_open (o);
  json_kstr (o, "path", n->path);
  json_kstr (o, "type", type);
  if (n->host_path && strcmp (n->host_path, n->path) != 0)
    json_kstr (o, "hostPath", n->host_path);
  if (n->type != 'p')
    {
      json_kint (o, "major", n->major);
      json_kint (o, "minor", n->minor);
    }
  if (n->has_mode)
    json_kuint (o, "fileMode", n->mode);
  if (n->has_uid)
    json_kuint (o, "uid", n->uid);
  if (n->has_gid)
    json_kuint (o, "gid", n->gid);
  json_obj_close (o);
}

/* linux: the nodes added to linux.devices, and an allow rule for each in
 * linux.resources.devices, after the spec's own rules (its deny-all). */
static void
emit_linux (struct json_out *o, yajl_val old, const struct plan *p)
{
  static const char *const skip[] = { "devices", "resources", NULL };
  static const char *const skip_res[] = { "devices", NULL };
  json_obj_open (o);
  json_members_but (o, old, skip);
  json_key (o, "devices");
  json_arr_open (o);
  emit_array_items (o, json_get (old, "devices"));
  for (size_t i = 0; i < p->n_nodes; i++)
    emit_node (o, &p->nodes[i]);
  json_arr_close (o);
  yajl_val res = json_get (old, "resources");
  json_key (o, "resources");
  json_obj_open (o);
  json_members_but (o, res, skip_res);
  json_key (o, "devices");
  json_arr_open (o);
  emit_array_items (o, json_get (res, "devices"));
  for (size_t i = 0; i < p->n_nodes; i++)
    {
      const struct cdi_node *n = &p->nodes[i];
      if (n->type == 'p')
        continue;
      json_obj_open (o);
      json_kbool (o, "allow", true);
      json_kstr (o, "type", n->type == 'b' ? "b" : "c");
      json_kint (o, "major", n->major);
      json_kint (o, "minor", n->minor);
      json_kstr (o, "access", n->permissions ? n->permissions : "rwm");
      json_obj_close (o);
    }
  json_arr_close (o);
  json_obj_close (o);
  json_obj_close (o);
}

static void
emit_strings_plus (struct json_out *o, yajl_val old, char *const *add)
{
  json_arr_open (o);
  emit_array_items (o, old);
  for (size_t i = 0; add && add[i]; i++)
    json_str (o, add[i]);
  json_arr_close (o);
}

static void
emit_sandbox (struct json_out *o, yajl_val old, const struct plan *p)
{
  static const char *const skip[] = { "devices_applied", "cdi_devices", NULL };
  json_obj_open (o);
  json_members_but (o, old, skip);
  json_key (o, "devices_applied");
  emit_strings_plus (o, json_get (old, "devices_applied"), p->requests);
  json_key (o, "cdi_devices");
  emit_strings_plus (o, json_get (old, "cdi_devices"), p->names);
  json_obj_close (o);
}

static void
emit_config (struct json_out *o, yajl_val root, const struct plan *p)
{
  static const char *const special[] = { "process", "mounts", "hooks", "linux", "sandbox", NULL };
  yajl_val proc = json_get (root, "process");
  json_obj_open (o);
  json_members_but (o, root, special);
  if (proc)
    {
      json_key (o, "process");
      emit_process (o, proc, p);
    }
  json_key (o, "mounts");
  json_arr_open (o);
  emit_array_items (o, json_get (root, "mounts"));
  for (size_t i = 0; i < p->n_mounts; i++)
    emit_mount (o, p->mounts[i]);
  json_arr_close (o);
  if (json_get (root, "hooks") || p->n_hooks)
    {
      json_key (o, "hooks");
      emit_hooks (o, json_get (root, "hooks"), p);
    }
  json_key (o, "linux");
  emit_linux (o, json_get (root, "linux"), p);
  json_key (o, "sandbox");
  emit_sandbox (o, json_get (root, "sandbox"), p);
  json_obj_close (o);
}

/* Every request, once: extra, then .sandbox.devices, then the annotations. */
static int
collect_requests (yajl_val root, char *const *extra, char ***out, hk_err *err)
{
  yajl_val sb = json_get (root, "sandbox"), ann = json_get (root, "annotations");
  char **all = NULL, **devs = NULL, **applied = NULL;
  if (json_get_strv (sb, ".sandbox", "devices", &devs, err) < 0
      || json_get_strv (sb, ".sandbox", "devices_applied", &applied, err) < 0)
    {
      strv_free (devs);
      return -1;
    }
  for (size_t i = 0; extra && extra[i]; i++)
    strv_push (&all, extra[i]);
  for (size_t i = 0; devs && devs[i]; i++)
    strv_push (&all, devs[i]);
  /* containerd and the kubelet's device plugins: cdi.k8s.io/<plugin>: "a=b,c=d". */
  for (size_t i = 0; YAJL_IS_OBJECT (ann) && i < ann->u.object.len; i++)
    if (strncmp (ann->u.object.keys[i], "cdi.k8s.io/", 11) == 0 && YAJL_IS_STRING (ann->u.object.values[i]))
      {
        cleanup_free char *v = xstrdup (ann->u.object.values[i]->u.string);
        char *save = NULL;
        for (char *t = strtok_r (v, ",", &save); t; t = strtok_r (NULL, ",", &save))
          {
            while (*t == ' ')
              t++;
            size_t l = strlen (t);
            while (l && t[l - 1] == ' ')
              t[--l] = '\0';
            if (*t)
              strv_push (&all, t);
          }
      }
  strv_free (devs);
  for (size_t i = 0; all && all[i]; i++)
    if (all[i][0] == '\0')
      {
        strv_free (all);
        strv_free (applied);
        return err_setk (err, ERR_INVALID_CONFIG, EINVAL,
                         ".sandbox.devices: a device name must not be empty");
      }
  for (size_t i = 0; all && all[i]; i++)
    if (!strv_contains (applied, all[i]) && !strv_contains (*out, all[i]))
      strv_push (out, all[i]);
  strv_free (all);
  strv_free (applied);
  return 0;
}

/* A host device node mirrored as it is: --device /dev/fuse. */
static int
plan_host_path (struct plan *p, const char *path, hk_err *err)
{
  struct stat st;
  if (stat (path, &st) < 0)
    return err_code (err, errno, "device %s", path),
           err_kind (err, errno == ENOENT ? ERR_NOT_FOUND : ERR_INVALID_CONFIG);
  if (!S_ISCHR (st.st_mode) && !S_ISBLK (st.st_mode))
    return err_setk (err, ERR_INVALID_CONFIG, EINVAL, "device %s: not a device node", path);
  struct cdi_node n = { .path = (char *)path };
  return plan_node (p, &n, err);
}

int
cdi_apply_config (const char *json, size_t len, char *const *extra, char **out, size_t *out_len, hk_err *err)
{
  yajl_val root = NULL;
  struct plan p = { 0 };
  struct cdi_registry reg = { 0 };
  bool loaded = false;
  struct cdi_ref *refs = NULL;
  size_t n_refs = 0;
  int rc = -1;
  *out = NULL;
  if (json_parse (json, len, &root, err) < 0)
    return -1;
  if (!YAJL_IS_OBJECT (root))
    {
      yajl_tree_free (root);
      return err_setk (err, ERR_INVALID_CONFIG, EINVAL, "the config must be a JSON object");
    }
  if (collect_requests (root, extra, &p.requests, err) < 0)
    goto done;
  if (p.requests == NULL)
    {
      rc = 0;
      goto done;
    }
  for (size_t i = 0; p.requests[i]; i++)
    {
      if (p.requests[i][0] == '/')
        {
          if (plan_host_path (&p, p.requests[i], err) < 0)
            goto done;
          continue;
        }
      if (!loaded && cdi_load (NULL, &reg, err) < 0)
        goto done;
      loaded = true;
      if (cdi_resolve (&reg, p.requests[i], &refs, &n_refs, err) < 0)
        goto done;
    }
  /* The spec-wide edits once per spec, before its devices', in request order. */
  for (size_t i = 0; i < n_refs; i++)
    {
      bool seen = false;
      for (size_t j = 0; j < i; j++)
        seen |= refs[j].spec == refs[i].spec;
      if (!seen && plan_edits (&p, &refs[i].spec->edits, err) < 0)
        goto done;
      if (plan_edits (&p, &refs[i].dev->edits, err) < 0)
        goto done;
      cleanup_free char *name = xasprintf ("%s=%s", refs[i].spec->kind, refs[i].dev->name);
      if (!strv_contains (p.names, name))
        strv_push (&p.names, name);
    }
  struct json_out o;
  json_out_init (&o, "  ");
  emit_config (&o, root, &p);
  rc = json_out_finish (&o, out, out_len, err);
done:
  if (rc < 0)
    err_kind_default (err, ERR_INVALID_CONFIG);
  free (refs);
  if (loaded)
    cdi_registry_free (&reg);
  plan_free (&p);
  yajl_tree_free (root);
  return rc;
}

int
cdi_config_add_requests (const char *json, size_t len, char *const *devices, char **out, size_t *out_len,
                         hk_err *err)
{
  yajl_val root = NULL;
  if (json_parse (json, len, &root, err) < 0)
    return -1;
  if (!YAJL_IS_OBJECT (root))
    {
      yajl_tree_free (root);
      return err_setk (err, ERR_INVALID_CONFIG, EINVAL, "the config must be a JSON object");
    }
  static const char *const skip_root[] = { "sandbox", NULL };
  static const char *const skip_sb[] = { "devices", NULL };
  yajl_val sb = json_get (root, "sandbox");
  struct json_out o;
  json_out_init (&o, "  ");
  json_obj_open (&o);
  json_members_but (&o, root, skip_root);
  json_key (&o, "sandbox");
  json_obj_open (&o);
  json_members_but (&o, sb, skip_sb);
  json_key (&o, "devices");
  emit_strings_plus (&o, json_get (sb, "devices"), devices);
  json_obj_close (&o);
  json_obj_close (&o);
  yajl_tree_free (root);
  return json_out_finish (&o, out, out_len, err);
}

char **
cdi_registry_names (const struct cdi_registry *r)
{
  char **v = xcalloc (1, sizeof *v);
  for (size_t i = 0; i < r->n; i++)
    for (size_t j = 0; j < r->specs[i]->n_devices; j++)
      {
        cleanup_free char *name = xasprintf ("%s=%s", r->specs[i]->kind, r->specs[i]->devices[j].name);
        if (!strv_contains (v, name))
          strv_push (&v, name);
      }
  return v;
}
