/* image_spec: OCI image index / manifest / config, docker-archive manifest.json
 * and hako's image name index, parsed into structs and written back. */
#include "oci/image_spec.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util.h"
#include "oci/json.h"
#include "oci/spec.h"

bool
oci_digest_valid (const char *d)
{
  if (d == NULL || strncmp (d, "sha256:", 7) != 0 || strlen (d) != 7 + 64)
    return false;
  for (const char *p = d + 7; *p; p++)
    if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
      return false;
  return true;
}

static int
parse_desc (yajl_val v, const char *path, struct oci_desc *d, hk_err *err)
{
  yajl_val plat = NULL, ann = NULL;
  if (!YAJL_IS_OBJECT (v))
    return json_error (err, path, NULL, "must be an object");
  if (json_get_string (v, path, "mediaType", &d->media_type, err) < 0
      || json_get_string (v, path, "digest", &d->digest, err) < 0
      || json_get_u64 (v, path, "size", INT64_MAX, &d->size, err) < 0
      || json_get_object (v, path, "platform", &plat, err) < 0
      || json_get_object (v, path, "annotations", &ann, err) < 0)
    return -1;
  if (d->digest == NULL || json_get (v, "size") == NULL)
    return json_error (err, path, NULL, "a descriptor needs digest and size");
  if (!oci_digest_valid (d->digest))
    return json_error (err, path, "digest", "\"%s\" is not a sha256 digest (sha256:<64 hex>)", d->digest);
  cleanup_free char *ppath = json_path (path, "platform");
  if (plat
      && (json_get_string (plat, ppath, "os", &d->os, err) < 0
          || json_get_string (plat, ppath, "architecture", &d->arch, err) < 0
          || json_get_string (plat, ppath, "variant", &d->variant, err) < 0))
    return -1;
  cleanup_free char *apath = json_path (path, "annotations");
  if (ann && json_get_string (ann, apath, "org.opencontainers.image.ref.name", &d->ref_name, err) < 0)
    return -1;
  return 0;
}

static void
desc_free (struct oci_desc *d)
{
  free (d->media_type);
  free (d->digest);
  free (d->os);
  free (d->arch);
  free (d->variant);
  free (d->ref_name);
  *d = (struct oci_desc){ 0 };
}

static int
parse_desc_array (yajl_val root, const char *key, struct oci_desc **out, size_t *n, hk_err *err)
{
  yajl_val a = NULL;
  if (json_get_array (root, "", key, &a, err) < 0)
    return -1;
  if (a == NULL)
    return json_error (err, "", key, "required");
  *n = json_len (a);
  *out = xcalloc (*n + 1, sizeof **out);
  for (size_t i = 0; i < *n; i++)
    {
      cleanup_free char *p = json_path ("", key);
      cleanup_free char *pi = json_index (p, i);
      if (parse_desc (json_at (a, i), pi, &(*out)[i], err) < 0)
        return -1;
    }
  return 0;
}

static int
schema_version_2 (yajl_val root, hk_err *err)
{
  uint64_t v = 0;
  if (json_get_u64 (root, "", "schemaVersion", 100, &v, err) < 0)
    return -1;
  if (v != 2)
    return json_error (err, "", "schemaVersion", "must be 2");
  return 0;
}

int
oci_media_type_peek (const char *text, size_t len, char **out, hk_err *err)
{
  yajl_val root = NULL;
  if (json_parse (text, len, &root, err) < 0)
    return -1;
  int r = YAJL_IS_OBJECT (root) ? json_get_string (root, "", "mediaType", out, err)
                                : json_error (err, "", NULL, "must be an object");
  json_free (root);
  return r < 0 ? -1 : 0;
}

int
oci_index_parse (const char *text, size_t len, struct oci_index *out, hk_err *err)
{
  yajl_val root = NULL;
  *out = (struct oci_index){ 0 };
  if (json_parse (text, len, &root, err) < 0)
    return -1;
  int r = schema_version_2 (root, err) < 0
                  || json_get_string (root, "", "mediaType", &out->media_type, err) < 0
                  || parse_desc_array (root, "manifests", &out->manifests, &out->n_manifests, err) < 0
              ? -1
              : 0;
  json_free (root);
  if (r < 0)
    oci_index_free (out);
  return r;
}

void
oci_index_free (struct oci_index *x)
{
  for (size_t i = 0; i < x->n_manifests; i++)
    desc_free (&x->manifests[i]);
  free (x->manifests);
  free (x->media_type);
  *x = (struct oci_index){ 0 };
}

int
oci_manifest_parse (const char *text, size_t len, struct oci_manifest *out, hk_err *err)
{
  yajl_val root = NULL, cfg = NULL;
  *out = (struct oci_manifest){ 0 };
  if (json_parse (text, len, &root, err) < 0)
    return -1;
  int r = -1;
  if (schema_version_2 (root, err) < 0 || json_get_string (root, "", "mediaType", &out->media_type, err) < 0
      || json_get_object (root, "", "config", &cfg, err) < 0)
    goto out;
  if (cfg == NULL)
    {
      json_error (err, "", "config", "required");
      goto out;
    }
  if (parse_desc (cfg, ".config", &out->config, err) < 0
      || parse_desc_array (root, "layers", &out->layers, &out->n_layers, err) < 0)
    goto out;
  r = 0;
out:
  json_free (root);
  if (r < 0)
    oci_manifest_free (out);
  return r;
}

void
oci_manifest_free (struct oci_manifest *m)
{
  desc_free (&m->config);
  for (size_t i = 0; i < m->n_layers; i++)
    desc_free (&m->layers[i]);
  free (m->layers);
  free (m->media_type);
  *m = (struct oci_manifest){ 0 };
}

int
oci_image_config_parse (const char *text, size_t len, struct oci_image_config *out, hk_err *err)
{
  yajl_val root = NULL, cfg = NULL, rootfs = NULL;
  *out = (struct oci_image_config){ 0 };
  if (json_parse (text, len, &root, err) < 0)
    return -1;
  int r = -1;
  cleanup_free char *type = NULL;
  if (!YAJL_IS_OBJECT (root))
    {
      json_error (err, "", NULL, "must be an object");
      goto out;
    }
  if (json_get_string (root, "", "os", &out->os, err) < 0
      || json_get_string (root, "", "architecture", &out->arch, err) < 0
      || json_get_object (root, "", "config", &cfg, err) < 0
      || json_get_object (root, "", "rootfs", &rootfs, err) < 0)
    goto out;
  if (cfg
      && (json_get_strv (cfg, ".config", "Env", &out->env, err) < 0
          || json_get_strv (cfg, ".config", "Entrypoint", &out->entrypoint, err) < 0
          || json_get_strv (cfg, ".config", "Cmd", &out->cmd, err) < 0
          || json_get_string (cfg, ".config", "WorkingDir", &out->working_dir, err) < 0
          || json_get_string (cfg, ".config", "User", &out->user, err) < 0))
    goto out;
  if (rootfs == NULL)
    {
      json_error (err, "", "rootfs", "required");
      goto out;
    }
  if (json_get_string (rootfs, ".rootfs", "type", &type, err) < 0
      || json_get_strv (rootfs, ".rootfs", "diff_ids", &out->diff_ids, err) < 0)
    goto out;
  if (type == NULL || strcmp (type, "layers") != 0)
    {
      json_error (err, ".rootfs", "type", "must be \"layers\"");
      goto out;
    }
  out->n_diff_ids = strv_len (out->diff_ids);
  for (size_t i = 0; i < out->n_diff_ids; i++)
    if (!oci_digest_valid (out->diff_ids[i]))
      {
        json_error (err, ".rootfs.diff_ids", NULL, "\"%s\" is not a sha256 digest", out->diff_ids[i]);
        goto out;
      }
  r = 0;
out:
  json_free (root);
  if (r < 0)
    oci_image_config_free (out);
  return r;
}

void
oci_image_config_free (struct oci_image_config *c)
{
  free (c->os);
  free (c->arch);
  strv_free (c->env);
  strv_free (c->entrypoint);
  strv_free (c->cmd);
  free (c->working_dir);
  free (c->user);
  strv_free (c->diff_ids);
  *c = (struct oci_image_config){ 0 };
}

int
oci_docker_manifest_parse (const char *text, size_t len, struct oci_docker_manifest *out, hk_err *err)
{
  yajl_val root = NULL;
  *out = (struct oci_docker_manifest){ 0 };
  if (json_parse (text, len, &root, err) < 0)
    return -1;
  int r = -1;
  if (!YAJL_IS_ARRAY (root) || json_len (root) == 0)
    {
      json_error (err, "manifest.json", NULL, "must be a non-empty array");
      goto out;
    }
  yajl_val m = json_at (root, 0);
  if (!YAJL_IS_OBJECT (m))
    {
      json_error (err, "manifest.json[0]", NULL, "must be an object");
      goto out;
    }
  if (json_get_string (m, "manifest.json[0]", "Config", &out->config, err) < 0
      || json_get_strv (m, "manifest.json[0]", "RepoTags", &out->repo_tags, err) < 0
      || json_get_strv (m, "manifest.json[0]", "Layers", &out->layers, err) < 0)
    goto out;
  if (out->config == NULL || out->layers == NULL)
    {
      json_error (err, "manifest.json[0]", NULL, "needs Config and Layers");
      goto out;
    }
  r = 0;
out:
  json_free (root);
  if (r < 0)
    oci_docker_manifest_free (out);
  return r;
}

void
oci_docker_manifest_free (struct oci_docker_manifest *m)
{
  free (m->config);
  strv_free (m->repo_tags);
  strv_free (m->layers);
  *m = (struct oci_docker_manifest){ 0 };
}

static void
write_desc (struct json_out *o, const struct oci_desc *d)
{
  json_obj_open (o);
  json_kstr (o, "mediaType", d->media_type);
  json_kstr (o, "digest", d->digest);
  json_kuint (o, "size", d->size);
  json_obj_close (o);
}

int
oci_manifest_write (const struct oci_manifest *m, char **out, size_t *len, hk_err *err)
{
  struct json_out o;
  json_out_init (&o, NULL);
  json_obj_open (&o);
  json_kint (&o, "schemaVersion", 2);
  json_kstr (&o, "mediaType", m->media_type);
  json_key (&o, "config");
  write_desc (&o, &m->config);
  json_key (&o, "layers");
  json_arr_open (&o);
  for (size_t i = 0; i < m->n_layers; i++)
    write_desc (&o, &m->layers[i]);
  json_arr_close (&o);
  json_obj_close (&o);
  return json_out_finish (&o, out, len, err);
}

/* ---- the name index ---- */

static int
parse_rec (yajl_val v, const char *path, struct oci_image_rec *r, hk_err *err)
{
  yajl_val layers = NULL;
  if (json_get_string (v, path, "name", &r->name, err) < 0
      || json_get_string (v, path, "manifest", &r->manifest_digest, err) < 0
      || json_get_string (v, path, "config", &r->config_digest, err) < 0
      || json_get_string (v, path, "created", &r->created, err) < 0
      || json_get_array (v, path, "layers", &layers, err) < 0)
    return -1;
  if (r->name == NULL || !oci_digest_valid (r->manifest_digest) || !oci_digest_valid (r->config_digest))
    return json_error (err, path, NULL, "needs name, manifest and config digests");
  r->n_layers = json_len (layers);
  r->layers = xcalloc (r->n_layers + 1, sizeof *r->layers);
  for (size_t i = 0; i < r->n_layers; i++)
    {
      yajl_val l = json_at (layers, i);
      struct oci_image_layer_rec *lr = &r->layers[i];
      cleanup_free char *lp = json_path (path, "layers");
      cleanup_free char *li = json_index (lp, i);
      if (json_get_string (l, li, "digest", &lr->digest, err) < 0
          || json_get_string (l, li, "diff_id", &lr->diff_id, err) < 0
          || json_get_string (l, li, "mediaType", &lr->media_type, err) < 0
          || json_get_u64 (l, li, "size", INT64_MAX, &lr->size, err) < 0)
        return -1;
      if (!oci_digest_valid (lr->digest) || !oci_digest_valid (lr->diff_id))
        return json_error (err, li, NULL, "needs digest and diff_id");
    }
  return 0;
}

int
oci_image_names_parse (const char *text, size_t len, struct oci_image_names *out, hk_err *err)
{
  yajl_val root = NULL, a = NULL;
  *out = (struct oci_image_names){ 0 };
  if (json_parse (text, len, &root, err) < 0)
    return -1;
  int r = -1;
  if (json_get_array (root, "", "images", &a, err) < 0)
    goto out;
  out->n = json_len (a);
  out->images = xcalloc (out->n + 1, sizeof *out->images);
  for (size_t i = 0; i < out->n; i++)
    {
      cleanup_free char *p = json_index (".images", i);
      if (parse_rec (json_at (a, i), p, &out->images[i], err) < 0)
        goto out;
    }
  r = 0;
out:
  json_free (root);
  if (r < 0)
    oci_image_names_free (out);
  return r;
}

static void
write_rec (struct json_out *o, const struct oci_image_rec *r)
{
  json_obj_open (o);
  json_kstr (o, "name", r->name);
  json_kstr (o, "manifest", r->manifest_digest);
  json_kstr (o, "config", r->config_digest);
  json_kstr (o, "created", r->created);
  json_key (o, "layers");
  json_arr_open (o);
  for (size_t i = 0; i < r->n_layers; i++)
    {
      json_obj_open (o);
      json_kstr (o, "digest", r->layers[i].digest);
      json_kstr (o, "diff_id", r->layers[i].diff_id);
      json_kstr (o, "mediaType", r->layers[i].media_type);
      json_kuint (o, "size", r->layers[i].size);
      json_obj_close (o);
    }
  json_arr_close (o);
  json_obj_close (o);
}

int
oci_image_names_write (const struct oci_image_names *n, char **out, size_t *len, hk_err *err)
{
  struct json_out o;
  json_out_init (&o, "  ");
  json_obj_open (&o);
  json_key (&o, "images");
  json_arr_open (&o);
  for (size_t i = 0; i < n->n; i++)
    write_rec (&o, &n->images[i]);
  json_arr_close (&o);
  json_obj_close (&o);
  return json_out_finish (&o, out, len, err);
}

void
oci_image_rec_free (struct oci_image_rec *r)
{
  free (r->name);
  free (r->manifest_digest);
  free (r->config_digest);
  free (r->created);
  for (size_t i = 0; i < r->n_layers; i++)
    {
      free (r->layers[i].digest);
      free (r->layers[i].diff_id);
      free (r->layers[i].media_type);
    }
  free (r->layers);
  *r = (struct oci_image_rec){ 0 };
}

void
oci_image_names_free (struct oci_image_names *n)
{
  for (size_t i = 0; i < n->n; i++)
    oci_image_rec_free (&n->images[i]);
  free (n->images);
  *n = (struct oci_image_names){ 0 };
}

int
oci_image_list_write (const struct oci_image_names *n, char **out, hk_err *err)
{
  struct json_out o;
  json_out_init (&o, NULL);
  json_arr_open (&o);
  for (size_t i = 0; i < n->n; i++)
    {
      const struct oci_image_rec *r = &n->images[i];
      json_obj_open (&o);
      json_kstr (&o, "name", r->name);
      json_kstr (&o, "manifest", r->manifest_digest);
      json_kstr (&o, "config", r->config_digest);
      json_kstr (&o, "created", r->created);
      json_kuint (&o, "layers", r->n_layers);
      json_obj_close (&o);
    }
  json_arr_close (&o);
  return json_out_finish (&o, out, NULL, err);
}

int
oci_image_inspect_write (const struct oci_image_rec *r, const struct oci_image_config *c, char **out,
                         hk_err *err)
{
  struct json_out o;
  json_out_init (&o, "  ");
  json_obj_open (&o);
  json_kstr (&o, "name", r->name);
  json_kstr (&o, "manifest", r->manifest_digest);
  json_kstr (&o, "digest", r->manifest_digest); /* the image's digest, as docker and podman name it */
  json_kstr (&o, "config", r->config_digest);
  json_kstr (&o, "created", r->created);
  json_kstr (&o, "os", c->os);
  json_kstr (&o, "architecture", c->arch);
  json_kstrv (&o, "env", c->env);
  json_kstrv (&o, "entrypoint", c->entrypoint);
  json_kstrv (&o, "cmd", c->cmd);
  json_kstr (&o, "workingDir", c->working_dir);
  json_kstr (&o, "user", c->user);
  json_key (&o, "layers");
  json_arr_open (&o);
  for (size_t i = 0; i < r->n_layers; i++)
    {
      json_obj_open (&o);
      json_kstr (&o, "digest", r->layers[i].digest);
      json_kstr (&o, "diff_id", r->layers[i].diff_id);
      json_kstr (&o, "mediaType", r->layers[i].media_type);
      json_kuint (&o, "size", r->layers[i].size);
      json_obj_close (&o);
    }
  json_arr_close (&o);
  json_obj_close (&o);
  return json_out_finish (&o, out, NULL, err);
}
