/* cdi_apply: writing the containerEdits of resolved CDI devices into a
 * config's text (cdi_apply_config, cdi_config_add_requests).  Reading and
 * resolving the specs is cdi.c. */
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
#include "oci/cdi_internal.h"
#include "oci/json.h"
#include "oci/spec.h"

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
  for (size_t k = 0; cdi_hook_names[k]; k++)
    {
      yajl_val list = json_get (old, cdi_hook_names[k]);
      bool any = list != NULL;
      for (size_t i = 0; i < p->n_hooks; i++)
        any |= strcmp (p->hooks[i]->name, cdi_hook_names[k]) == 0;
      if (!any)
        continue;
      json_key (o, cdi_hook_names[k]);
      json_arr_open (o);
      emit_array_items (o, list);
      for (size_t i = 0; i < p->n_hooks; i++)
        if (strcmp (p->hooks[i]->name, cdi_hook_names[k]) == 0)
          emit_hook (o, p->hooks[i]);
      json_arr_close (o);
    }
  json_members_but (o, old, cdi_hook_names);
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
      json_free (root);
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
  json_free (root);
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
      json_free (root);
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
  json_free (root);
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
