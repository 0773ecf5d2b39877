/* spec_edit: run/create/spec's flags (--memory, -e, -v, -u, ...) written
 * into the config text, so the config frozen at create (and read again by
 * exec and a later start) is the one the sandbox runs with.  Everything the
 * flags do not name is emitted as it was read. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util.h"
#include "oci/json.h"
#include "oci/spec.h"

/* One value at a dotted path ("linux.resources.memory.limit"). */
enum edit_kind
{
  EDIT_INT,
  EDIT_UINT,
  EDIT_STR,
  EDIT_BOOL,
  EDIT_ENV,    /* merge K=V entries into the old array */
  EDIT_MOUNTS, /* append mounts, dropping old ones at the same destination */
  EDIT_LABELS, /* merge labels into the old annotations object */
  EDIT_DELETE, /* drop the member */
};

struct edit
{
  const char *path;
  enum edit_kind kind;
  int64_t i;
  uint64_t u;
  const char *s;
  bool b;
  bool done;
};

struct edits
{
  struct edit v[24];
  size_t n;
  const struct oci_overrides *ov;
};

static struct edit *
add (struct edits *e, const char *path, enum edit_kind kind)
{
  struct edit *x = &e->v[e->n++];
  *x = (struct edit){ .path = path, .kind = kind };
  return x;
}

/* The index in env of the entry setting the same variable as kv, or -1. */
static ssize_t
env_find (char *const *env, const char *kv)
{
  size_t klen = strcspn (kv, "=");
  for (size_t i = 0; env && env[i]; i++)
    if (strncmp (env[i], kv, klen) == 0 && env[i][klen] == '=')
      return (ssize_t)i;
  return -1;
}

/* The old environment with each new K=V replacing its K in place (every
 * entry of env sets a different K), the others appended. */
static void
emit_env (struct json_out *o, yajl_val old, char *const *env)
{
  size_t n = strv_len (env);
  bool *used = xcalloc (n + 1, sizeof *used);
  json_arr_open (o);
  for (size_t i = 0; YAJL_IS_ARRAY (old) && i < old->u.array.len; i++)
    {
      yajl_val v = old->u.array.values[i];
      ssize_t k = YAJL_IS_STRING (v) ? env_find (env, v->u.string) : -1;
      if (k < 0)
        json_value (o, v);
      else if (!used[k])
        {
          json_str (o, env[k]);
          used[k] = true;
        }
    }
  for (size_t i = 0; i < n; i++)
    if (!used[i])
      json_str (o, env[i]);
  json_arr_close (o);
  free (used);
}

/* The old annotations with each label's key set (replaced or added). */
static void
emit_labels (struct json_out *o, yajl_val old, char *const *labels)
{
  json_obj_open (o);
  for (size_t i = 0; YAJL_IS_OBJECT (old) && i < old->u.object.len; i++)
    {
      const char *k = old->u.object.keys[i];
      bool replaced = false;
      for (size_t j = 0; labels[j] && !replaced; j++)
        {
          size_t klen = strcspn (labels[j], "=");
          replaced = str_has_prefix (k, OCI_LABEL_PREFIX) && strlen (k + strlen (OCI_LABEL_PREFIX)) == klen
                     && strncmp (k + strlen (OCI_LABEL_PREFIX), labels[j], klen) == 0;
        }
      if (!replaced)
        {
          json_key (o, k);
          json_value (o, old->u.object.values[i]);
        }
    }
  for (size_t j = 0; labels[j]; j++)
    {
      size_t klen = strcspn (labels[j], "=");
      cleanup_free char *key = xasprintf ("%s%.*s", OCI_LABEL_PREFIX, (int)klen, labels[j]);
      json_kstr (o, key, labels[j] + klen + 1);
    }
  json_obj_close (o);
}

static bool
same_destination (const char *a, const char *b)
{
  bool above;
  cleanup_free char *x = path_lexical (a, &above);
  cleanup_free char *y = path_lexical (b, &above);
  return strcmp (x, y) == 0;
}

static void
emit_mounts (struct json_out *o, yajl_val old, const struct oci_overrides *ov)
{
  json_arr_open (o);
  for (size_t i = 0; YAJL_IS_ARRAY (old) && i < old->u.array.len; i++)
    {
      yajl_val v = old->u.array.values[i];
      yajl_val d = json_get (v, "destination");
      bool replaced = false;
      for (size_t j = 0; YAJL_IS_STRING (d) && j < ov->n_mounts; j++)
        replaced |= same_destination (d->u.string, ov->mounts[j].destination);
      if (!replaced)
        json_value (o, v);
    }
  for (size_t j = 0; j < ov->n_mounts; j++)
    {
      const struct oci_override_mount *m = &ov->mounts[j];
      json_obj_open (o);
      json_kstr (o, "destination", m->destination);
      json_kstr (o, "type", m->type);
      json_kstr (o, "source", m->source);
      json_kstrv (o, "options", m->options);
      json_obj_close (o);
    }
  json_arr_close (o);
}

static void
emit_leaf (struct json_out *o, const struct edits *e, const struct edit *x, yajl_val old)
{
  switch (x->kind)
    {
    case EDIT_INT: json_int (o, x->i); break;
    case EDIT_UINT: json_uint (o, x->u); break;
    case EDIT_STR: json_str (o, x->s); break;
    case EDIT_BOOL: json_bool (o, x->b); break;
    case EDIT_ENV: emit_env (o, old, e->ov->env); break;
    case EDIT_MOUNTS: emit_mounts (o, old, e->ov); break;
    case EDIT_LABELS: emit_labels (o, old, e->ov->labels); break;
    case EDIT_DELETE: break;
    }
}

static char *
join (const char *prefix, const char *key)
{
  return prefix[0] ? xasprintf ("%s.%s", prefix, key) : xstrdup (key);
}

/* An edit below path (not at it). */
static bool
below (const char *path, const char *edit)
{
  size_t n = strlen (path);
  return n == 0 || (strncmp (edit, path, n) == 0 && edit[n] == '.');
}

static bool
any_below (const struct edits *e, const char *path)
{
  for (size_t i = 0; i < e->n; i++)
    if (below (path, e->v[i].path))
      return true;
  return false;
}

/* The object v (NULL: a new one) at prefix, with the edits below prefix. */
static void
emit_obj (struct json_out *o, yajl_val v, const char *prefix, struct edits *e)
{
  json_obj_open (o);
  for (size_t i = 0; YAJL_IS_OBJECT (v) && i < v->u.object.len; i++)
    {
      const char *k = v->u.object.keys[i];
      yajl_val val = v->u.object.values[i];
      /* A key with a dot in it is no path component any edit names. */
      cleanup_free char *full = strchr (k, '.') ? NULL : join (prefix, k);
      struct edit *leaf = NULL;
      for (size_t j = 0; full && j < e->n && leaf == NULL; j++)
        if (strcmp (e->v[j].path, full) == 0)
          leaf = &e->v[j];
      if (leaf)
        {
          leaf->done = true;
          if (leaf->kind == EDIT_DELETE)
            continue;
          json_key (o, k);
          emit_leaf (o, e, leaf, val);
        }
      else if (full && any_below (e, full))
        {
          json_key (o, k);
          emit_obj (o, YAJL_IS_OBJECT (val) ? val : NULL, full, e);
        }
      else
        {
          json_key (o, k);
          json_value (o, val);
        }
    }
  /* What the old object did not have. */
  size_t plen = strlen (prefix);
  for (size_t j = 0; j < e->n; j++)
    {
      struct edit *x = &e->v[j];
      if (x->done || !below (prefix, x->path))
        continue;
      if (x->kind == EDIT_DELETE)
        {
          x->done = true;
          continue;
        }
      const char *rest = x->path + plen + (plen ? 1 : 0);
      cleanup_free char *key = xstrndup (rest, strcspn (rest, "."));
      cleanup_free char *full = join (prefix, key);
      json_key (o, key);
      if (strcmp (full, x->path) == 0)
        {
          x->done = true;
          emit_leaf (o, e, x, NULL);
        }
      else
        emit_obj (o, NULL, full, e);
    }
  json_obj_close (o);
}

int
oci_spec_override (const char *json, size_t len, const struct oci_overrides *ov, char **out, size_t *out_len,
                   hk_err *err)
{
  struct edits e = { .ov = ov };
  if (ov->has_memory)
    add (&e, "linux.resources.memory.limit", EDIT_INT)->i = ov->memory;
  if (ov->has_memory_swap)
    add (&e, "linux.resources.memory.swap", EDIT_INT)->i = ov->memory_swap;
  if (ov->has_cpus)
    {
      add (&e, "linux.resources.cpu.quota", EDIT_INT)->i = ov->cpu_quota;
      add (&e, "linux.resources.cpu.period", EDIT_UINT)->u = ov->cpu_period;
    }
  if (ov->has_pids)
    add (&e, "linux.resources.pids.limit", EDIT_INT)->i = ov->pids;
  if (ov->env)
    add (&e, "process.env", EDIT_ENV);
  if (ov->n_mounts)
    add (&e, "mounts", EDIT_MOUNTS);
  if (ov->cwd)
    add (&e, "process.cwd", EDIT_STR)->s = ov->cwd;
  if (ov->has_user)
    {
      add (&e, "process.user.uid", EDIT_UINT)->u = ov->uid;
      add (&e, "process.user.gid", EDIT_UINT)->u = ov->gid;
      /* The old user's groups are not the new one's. */
      add (&e, "process.user.additionalGids", EDIT_DELETE);
      add (&e, "process.user.username", EDIT_DELETE);
    }
  if (ov->hostname)
    add (&e, "hostname", EDIT_STR)->s = ov->hostname;
  if (ov->timeout)
    add (&e, "sandbox.limits.timeout", EDIT_STR)->s = ov->timeout;
  if (ov->read_only)
    add (&e, "root.readonly", EDIT_BOOL)->b = true;
  if (ov->terminal)
    add (&e, "process.terminal", EDIT_BOOL)->b = true;
  if (ov->labels)
    add (&e, "annotations", EDIT_LABELS);
  yajl_val root;
  if (json_parse (json, len, &root, err) < 0)
    return -1;
  if (!YAJL_IS_OBJECT (root))
    {
      json_free (root);
      return err_set (err, EINVAL, "the config must be a JSON object");
    }
  struct json_out o;
  json_out_init (&o, "  ");
  emit_obj (&o, root, "", &e);
  json_free (root);
  return json_out_finish (&o, out, out_len, err);
}
