/* cdi: Container Device Interface specs — reading them (JSON, or YAML
 * through libyaml turned into JSON first, so one validator reads both),
 * resolving qualified names, and writing their containerEdits into a
 * config's text, where the runtime then sees ordinary linux.devices,
 * mounts, env, hooks and device rules. */
#include "oci/cdi.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <yaml.h>

#include "lib/trust.h"
#include "lib/util.h"
#include "oci/cdi_internal.h"
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

/* A mapping or sequence starts: one level deeper, its JSON opened. */
static int
open_collection (struct json_out *o, const yaml_event_t *ev, bool key, bool *is_map, bool *want_key,
                 int *depth, hk_err *err)
{
  if (key)
    return err_set (err, EINVAL, "invalid YAML: line %zu: a key must be a string", ev->start_mark.line + 1);
  else if (*depth == YAML_MAX_DEPTH)
    return err_set (err, EINVAL, "invalid YAML: nested more than %d deep", YAML_MAX_DEPTH);
  else
    {
      is_map[*depth] = ev->type == YAML_MAPPING_START_EVENT;
      want_key[*depth] = true;
      (*depth)++;
      if (is_map[*depth - 1])
        json_obj_open (o);
      else
        json_arr_open (o);
    }
  return 0;
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
          r = open_collection (&o, &ev, key, is_map, want_key, &depth, err);
          any = true;
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

/* The hook lists of a config, in their order (cdi_internal.h). */
const char *const cdi_hook_names[]
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
  if (!h->name || !strv_contains ((char **)cdi_hook_names, h->name))
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
    json_free (root);
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

/* The spec files of dir, sorted: dir must be one root trusts (lib/trust.h). */
static int
list_dir (const char *dir, int *dirfd, char ***out, size_t *n, hk_err *err)
{
  *dirfd = trust_open (dir, O_RDONLY | O_DIRECTORY, err);
  if (*dirfd < 0)
    {
      if (err->errnum == ENOENT || err->errnum == ENOTDIR)
        {
          err_clear (err);
          return 1;
        }
      return err_prefix (err, "CDI spec dir %s", dir);
    }
  DIR *d = fdopendir (dup (*dirfd));
  if (d == NULL)
    return err_sys (err, "CDI spec dir %s", dir);
  char **names = NULL;
  struct dirent *e;
  while ((e = readdir (d)))
    if (e->d_name[0] != '.'
        && (has_suffix (e->d_name, ".json") || has_suffix (e->d_name, ".yaml")
            || has_suffix (e->d_name, ".yml")))
      {
        names = xrealloc (names, (*n + 2) * sizeof *names);
        names[(*n)++] = xstrdup (e->d_name);
        names[*n] = NULL;
      }
  closedir (d);
  if (*n)
    qsort (names, *n, sizeof *names, cmp_str);
  *out = names;
  return 0;
}

/* A spec's hooks run as host root: a spec file, or a directory above it,
 * that another user can write or owns would let that user run anything as
 * root, so it fails the load as an invalid spec does, naming the file. */
static int
load_dir (const char *dir, int priority, struct cdi_registry *r, hk_err *err)
{
  cleanup_close int dirfd = -1;
  char **names = NULL;
  size_t n = 0;
  int rc = list_dir (dir, &dirfd, &names, &n, err);
  if (rc != 0)
    return rc < 0 ? -1 : 0;
  for (size_t i = 0; i < n && rc == 0; i++)
    {
      cleanup_free char *path = xasprintf ("%s/%s", dir, names[i]);
      cleanup_free char *text = NULL;
      cleanup_close int fd = trust_openat (dirfd, names[i], path, O_RDONLY, err);
      size_t len;
      struct cdi_spec *s;
      if (fd < 0 || fd_read_all (fd, CDI_MAX_SPEC, &text, &len, err) < 0)
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
  /* The usual first meeting with CDI: a GPU asked for, no spec made yet. */
  const char *hint = str_has_prefix (request, "nvidia.com/")
                         ? " (NVIDIA's spec is made by `nvidia-ctk cdi generate "
                           "--output=/etc/cdi/nvidia.yaml`; docs/gpus.md)"
                         : "";
  return err_setk (err, ERR_NOT_FOUND, ENOENT, "CDI device %s: no such device in the %zu spec%s under %s%s",
                   request, r->n, r->n == 1 ? "" : "s", where, hint);
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
