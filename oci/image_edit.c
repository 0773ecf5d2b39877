/* image_edit: OCI documents rewritten rather than regenerated — an image
 * config with one more layer (`snapshot --image`), an image layout's
 * index.json with one more reference (`image export`).  Everything the
 * original holds and hako does not model (labels, healthchecks, other
 * annotations, vendor keys) is written back unchanged. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util.h"
#include "oci/image_spec.h"
#include "oci/json.h"

/* Any yajl tree value, as it was read. */
static void
write_value (struct json_out *o, yajl_val v)
{
  if (v == NULL || YAJL_IS_NULL (v))
    json_null (o);
  else if (YAJL_IS_STRING (v))
    json_str (o, v->u.string);
  else if (YAJL_IS_NUMBER (v))
    json_number (o, v->u.number.r);
  else if (YAJL_IS_TRUE (v))
    json_bool (o, true);
  else if (YAJL_IS_FALSE (v))
    json_bool (o, false);
  else if (YAJL_IS_ARRAY (v))
    {
      json_arr_open (o);
      for (size_t i = 0; i < v->u.array.len; i++)
        write_value (o, v->u.array.values[i]);
      json_arr_close (o);
    }
  else
    {
      json_obj_open (o);
      for (size_t i = 0; i < v->u.object.len; i++)
        {
          json_key (o, v->u.object.keys[i]);
          write_value (o, v->u.object.values[i]);
        }
      json_obj_close (o);
    }
}

static void
write_history_entry (struct json_out *o, const char *created, const char *created_by, const char *comment)
{
  json_obj_open (o);
  json_kstr (o, "created", created);
  json_kstr (o, "created_by", created_by);
  json_kstr (o, "comment", comment);
  json_obj_close (o);
}

/* rootfs.diff_ids with diff_id appended, every other rootfs key kept. */
static void
write_rootfs (struct json_out *o, yajl_val rootfs, const char *diff_id)
{
  json_obj_open (o);
  for (size_t i = 0; i < rootfs->u.object.len; i++)
    {
      const char *k = rootfs->u.object.keys[i];
      yajl_val v = rootfs->u.object.values[i];
      json_key (o, k);
      if (strcmp (k, "diff_ids") != 0)
        {
          write_value (o, v);
          continue;
        }
      json_arr_open (o);
      for (size_t j = 0; YAJL_IS_ARRAY (v) && j < v->u.array.len; j++)
        write_value (o, v->u.array.values[j]);
      json_str (o, diff_id);
      json_arr_close (o);
    }
  json_obj_close (o);
}

int
oci_image_config_add_layer (const char *text, size_t len, const struct oci_layer_history *h, char **out,
                            size_t *out_len, hk_err *err)
{
  yajl_val root = NULL;
  if (json_parse (text, len, &root, err) < 0)
    return -1;
  int r = -1;
  yajl_val rootfs = YAJL_IS_OBJECT (root) ? json_get (root, "rootfs") : NULL;
  yajl_val diff_ids = rootfs && YAJL_IS_OBJECT (rootfs) ? json_get (rootfs, "diff_ids") : NULL;
  if (diff_ids == NULL || !YAJL_IS_ARRAY (diff_ids))
    {
      json_error (err, ".rootfs", "diff_ids", "required (an array)");
      goto out;
    }
  yajl_val history = json_get (root, "history");
  struct json_out o;
  json_out_init (&o, NULL);
  json_obj_open (&o);
  for (size_t i = 0; i < root->u.object.len; i++)
    {
      const char *k = root->u.object.keys[i];
      yajl_val v = root->u.object.values[i];
      if (strcmp (k, "created") == 0)
        continue; /* written below: this image is created now */
      json_key (&o, k);
      if (strcmp (k, "rootfs") == 0)
        write_rootfs (&o, rootfs, h->diff_id);
      else if (strcmp (k, "history") == 0 && YAJL_IS_ARRAY (v))
        {
          json_arr_open (&o);
          for (size_t j = 0; j < v->u.array.len; j++)
            write_value (&o, v->u.array.values[j]);
          write_history_entry (&o, h->created, h->created_by, h->comment);
          json_arr_close (&o);
        }
      else
        write_value (&o, v);
    }
  json_kstr (&o, "created", h->created);
  if (history == NULL || !YAJL_IS_ARRAY (history))
    {
      /* A history must account for every layer (tools that read it pair its
       * non-empty entries with rootfs.diff_ids): one entry per base layer. */
      json_key (&o, "history");
      json_arr_open (&o);
      for (size_t j = 0; j < diff_ids->u.array.len; j++)
        write_history_entry (&o, NULL, NULL, "base layer");
      write_history_entry (&o, h->created, h->created_by, h->comment);
      json_arr_close (&o);
    }
  json_obj_close (&o);
  r = json_out_finish (&o, out, out_len, err);
out:
  json_free (root);
  return r;
}

static bool
same_ref (yajl_val desc, const char *ref)
{
  yajl_val ann = YAJL_IS_OBJECT (desc) ? json_get (desc, "annotations") : NULL;
  yajl_val name = ann && YAJL_IS_OBJECT (ann) ? json_get (ann, "org.opencontainers.image.ref.name") : NULL;
  return name && YAJL_IS_STRING (name) && strcmp (name->u.string, ref) == 0;
}

int
oci_index_add_ref (const char *text, size_t len, const struct oci_desc *d, char **out, size_t *out_len,
                   hk_err *err)
{
  yajl_val root = NULL;
  if (text == NULL)
    {
      text = "{\"schemaVersion\":2,\"mediaType\":\"" OCI_MT_INDEX "\",\"manifests\":[]}";
      len = strlen (text);
    }
  if (json_parse (text, len, &root, err) < 0)
    return -1;
  int r = -1;
  yajl_val manifests = YAJL_IS_OBJECT (root) ? json_get (root, "manifests") : NULL;
  if (manifests == NULL || !YAJL_IS_ARRAY (manifests))
    {
      json_error (err, "", "manifests", "required (an array)");
      goto out;
    }
  struct json_out o;
  json_out_init (&o, NULL);
  json_obj_open (&o);
  for (size_t i = 0; i < root->u.object.len; i++)
    {
      const char *k = root->u.object.keys[i];
      yajl_val v = root->u.object.values[i];
      json_key (&o, k);
      if (strcmp (k, "manifests") != 0)
        {
          write_value (&o, v);
          continue;
        }
      json_arr_open (&o);
      /* A reference names one manifest: the one it named before goes. */
      for (size_t j = 0; j < v->u.array.len; j++)
        if (!same_ref (v->u.array.values[j], d->ref_name))
          write_value (&o, v->u.array.values[j]);
      json_obj_open (&o);
      json_kstr (&o, "mediaType", d->media_type);
      json_kstr (&o, "digest", d->digest);
      json_kuint (&o, "size", d->size);
      if (d->os && d->arch)
        {
          json_key (&o, "platform");
          json_obj_open (&o);
          json_kstr (&o, "architecture", d->arch);
          json_kstr (&o, "os", d->os);
          json_obj_close (&o);
        }
      json_key (&o, "annotations");
      json_obj_open (&o);
      json_kstr (&o, "org.opencontainers.image.ref.name", d->ref_name);
      json_obj_close (&o);
      json_obj_close (&o);
      json_arr_close (&o);
    }
  json_obj_close (&o);
  r = json_out_finish (&o, out, out_len, err);
out:
  json_free (root);
  return r;
}
