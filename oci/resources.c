/* resources: parsing linux.resources alone, merging an update into it, and
 * writing it back into a config.json's text without touching the rest. */
#include "oci/resources.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lib/util.h"
#include "oci/knobs.h"
#include "oci/spec_internal.h"

static int
refuse_unchangeable (const struct oci_resources *r, hk_err *err)
{
  const struct oci_knob *k = oci_knobs_unchangeable (r);
  const char *what = r->n_hugepage_limits                        ? "hugepageLimits"
                     : r->n_unified                              ? "unified"
                     : r->has_blkio_weight || r->n_blkio_devices ? "blockIO"
                                                                 : NULL;
  if (what)
    return err_set (err, EINVAL,
                    ".linux.resources.%s: update cannot change it (only memory limit, "
                    "reservation and swap, pids and cpu)",
                    what);
  if (k)
    return err_set (err, EINVAL,
                    ".linux.resources.%s.%s: update cannot change it (only memory limit, "
                    "reservation and swap, pids and cpu)",
                    k->obj, k->key);
  return 0;
}

static bool
same_rule (const struct oci_device_rule *a, const struct oci_device_rule *b)
{
  char ta = a->type ? a->type : 'a', tb = b->type ? b->type : 'a';
  return a->allow == b->allow && ta == tb && a->major == b->major && a->minor == b->minor
         && strcmp (a->access ? a->access : "rwm", b->access ? b->access : "rwm") == 0;
}

int
oci_resources_check_devices (const struct oci_resources *cur, const struct oci_resources *upd, hk_err *err)
{
  bool same = upd->n_devices == cur->n_devices;
  for (size_t i = 0; same && i < upd->n_devices; i++)
    same = same_rule (&upd->devices[i], &cur->devices[i]);
  /* A device rule that update would have to drop silently: the sandbox
   * would keep devices its caller believes gone. */
  if (upd->n_devices && !same)
    return err_set (err, EINVAL,
                    ".linux.resources.devices: update cannot change it (only memory limit, "
                    "reservation and swap, pids and cpu)");
  return 0;
}

/* canon(name): the spelling of a key of obj (NULL: of linux.resources
 * itself) that name matches, ignoring case; NULL if none does. */
static const char *
canon (const char *obj, const char *name)
{
  static const char *const top[] = { "blockIO", "devices", "hugepageLimits", "unified", "network", "rdma" };
  for (size_t i = 0; i < oci_n_knobs; i++)
    {
      const char *k
          = obj ? (strcmp (oci_knobs[i].obj, obj) == 0 ? oci_knobs[i].key : NULL) : oci_knobs[i].obj;
      if (k && strcasecmp (k, name) == 0)
        return k;
    }
  for (size_t i = 0; !obj && i < sizeof top / sizeof *top; i++)
    if (strcasecmp (top[i], name) == 0)
      return top[i];
  return NULL;
}

/* Rename obj's keys (linux.resources itself when parent is NULL) to the
 * spec's spelling: runc's update decodes its -r file with Go's
 * case-insensitive field matching, so scripts written for it send
 * {"CPU": {"Cpus": "0"}}, which would otherwise be ignored as unknown keys
 * and change nothing.  Two keys that name the same field are refused. */
static int
canonical_keys (yajl_val v, const char *parent, hk_err *err)
{
  size_t n = YAJL_IS_OBJECT (v) ? v->u.object.len : 0;
  for (size_t i = 0; i < n; i++)
    {
      const char *c = canon (parent, v->u.object.keys[i]);
      if (c == NULL)
        continue;
      for (size_t j = 0; j < i; j++)
        if (strcmp (v->u.object.keys[j], c) == 0)
          return err_set (err, EINVAL, ".linux.resources%s%s: \"%s\" and \"%s\" name the same field",
                          parent ? "." : "", parent ? parent : "", v->u.object.keys[j], v->u.object.keys[i]);
      /* The tree's strings are its arena's (oci/json.c): the key is
       * pointed at the table's spelling, never freed here. */
      v->u.object.keys[i] = c;
      if (parent == NULL && canonical_keys (v->u.object.values[i], c, err) < 0)
        return -1;
    }
  return 0;
}

int
oci_resources_parse (const char *text, size_t len, struct oci_resources *out, hk_err *err)
{
  yajl_val root = NULL;
  *out = (struct oci_resources){ 0 };
  if (json_parse (text, len, &root, err) < 0)
    return -1;
  int r = -1;
  if (!YAJL_IS_OBJECT (root))
    err_set (err, EINVAL, ".linux.resources: must be a JSON object");
  else if (canonical_keys (root, NULL, err) == 0 && spec_parse_resources (root, out, err) == 0
           && refuse_unchangeable (out, err) == 0)
    r = 0;
  json_free (root);
  if (r < 0)
    oci_resources_free (out);
  return r;
}

void
oci_resources_free (struct oci_resources *r)
{
  spec_free_resources (r);
  *r = (struct oci_resources){ 0 };
}

void
oci_resources_merge (struct oci_resources *dst, const struct oci_resources *upd)
{
  for (size_t i = 0; i < oci_n_knobs; i++)
    {
      const struct oci_knob *k = &oci_knobs[i];
      char *d = (char *)dst + k->val;
      if (!k->update || !oci_knob_is_set (k, upd))
        continue;
      switch (k->type)
        {
        case OCI_KNOB_STR:
          free (*(char **)d);
          *(char **)d = xstrdup (oci_knob_str (k, upd));
          break;
        case OCI_KNOB_BOOL: *(bool *)d = true; break;
        case OCI_KNOB_I64: *(int64_t *)d = oci_knob_i64 (k, upd); break;
        case OCI_KNOB_U64: *(uint64_t *)d = oci_knob_u64 (k, upd); break;
        }
      if (k->type == OCI_KNOB_I64 || k->type == OCI_KNOB_U64)
        *(bool *)((char *)dst + k->has) = true;
    }
}

/* ---- writing the config back ------------------------------------------------ */

static void
note (struct json_out *o, yajl_gen_status s)
{
  if (o->status == yajl_gen_status_ok)
    o->status = s;
}

/* v, as it was written (numbers keep their text). */
static void
copy_value (struct json_out *o, yajl_val v)
{
  if (YAJL_IS_STRING (v))
    json_str (o, YAJL_GET_STRING (v));
  else if (YAJL_IS_NUMBER (v))
    note (o, yajl_gen_number (o->g, v->u.number.r, strlen (v->u.number.r)));
  else if (YAJL_IS_TRUE (v) || YAJL_IS_FALSE (v))
    json_bool (o, YAJL_IS_TRUE (v));
  else if (YAJL_IS_OBJECT (v))
    {
      json_obj_open (o);
      for (size_t i = 0; i < v->u.object.len; i++)
        {
          json_key (o, v->u.object.keys[i]);
          copy_value (o, v->u.object.values[i]);
        }
      json_obj_close (o);
    }
  else if (YAJL_IS_ARRAY (v))
    {
      json_arr_open (o);
      for (size_t i = 0; i < v->u.array.len; i++)
        copy_value (o, v->u.array.values[i]);
      json_arr_close (o);
    }
  else
    note (o, yajl_gen_null (o->g));
}

/* The members of obj (may be NULL) but those named in skip. */
static void
copy_members_but (struct json_out *o, yajl_val obj, const char *const *skip)
{
  if (obj == NULL || !YAJL_IS_OBJECT (obj))
    return;
  for (size_t i = 0; i < obj->u.object.len; i++)
    {
      bool skipped = false;
      for (const char *const *s = skip; *s && !skipped; s++)
        skipped = strcmp (obj->u.object.keys[i], *s) == 0;
      if (!skipped)
        {
          json_key (o, obj->u.object.keys[i]);
          copy_value (o, obj->u.object.values[i]);
        }
    }
}

/* The knob's key and value in the object being written. */
static void
write_knob (struct json_out *o, const struct oci_knob *k, const struct oci_resources *r)
{
  switch (k->type)
    {
    case OCI_KNOB_I64: json_kint (o, k->key, oci_knob_i64 (k, r)); break;
    case OCI_KNOB_U64: json_kuint (o, k->key, oci_knob_u64 (k, r)); break;
    case OCI_KNOB_BOOL: json_kbool (o, k->key, true); break;
    case OCI_KNOB_STR: json_kstr (o, k->key, oci_knob_str (k, r)); break;
    }
}

/* Member obj of linux.resources with the knobs update may change taken
 * from r (those r does not set dropped), its other members as written.
 * Absent when it was and r sets none of them. */
static void
write_knob_object (struct json_out *o, yajl_val old, const char *obj, const struct oci_resources *r)
{
  const char *skip[32]; /* room for every row of the table */
  size_t n = 0;
  bool any = false;
  for (size_t i = 0; i < oci_n_knobs && n + 1 < sizeof skip / sizeof *skip; i++)
    if (oci_knobs[i].update && strcmp (oci_knobs[i].obj, obj) == 0)
      {
        skip[n++] = oci_knobs[i].key;
        any = any || oci_knob_is_set (&oci_knobs[i], r);
      }
  skip[n] = NULL;
  yajl_val was = json_get (old, obj);
  if (!any && was == NULL)
    return;
  json_key (o, obj);
  json_obj_open (o);
  copy_members_but (o, was, skip);
  for (size_t i = 0; i < oci_n_knobs; i++)
    if (oci_knobs[i].update && strcmp (oci_knobs[i].obj, obj) == 0 && oci_knob_is_set (&oci_knobs[i], r))
      write_knob (o, &oci_knobs[i], r);
  json_obj_close (o);
}

static void
write_resources (struct json_out *o, yajl_val old, const struct oci_resources *r)
{
  /* The members holding a knob update may change (oci/knobs.c). */
  const char *top[32];
  size_t n = 0;
  for (size_t i = 0; i < oci_n_knobs && n + 1 < sizeof top / sizeof *top; i++)
    {
      bool seen = !oci_knobs[i].update;
      for (size_t j = 0; j < n && !seen; j++)
        seen = strcmp (top[j], oci_knobs[i].obj) == 0;
      if (!seen)
        top[n++] = oci_knobs[i].obj;
    }
  top[n] = NULL;
  json_obj_open (o);
  copy_members_but (o, old, top);
  for (size_t i = 0; i < n; i++)
    write_knob_object (o, old, top[i], r);
  json_obj_close (o);
}

static void
write_linux (struct json_out *o, yajl_val lin, const struct oci_resources *r)
{
  static const char *const skip[] = { "resources", NULL };
  json_obj_open (o);
  copy_members_but (o, lin, skip);
  json_key (o, "resources");
  write_resources (o, json_get (lin, "resources"), r);
  json_obj_close (o);
}

int
oci_config_set_resources (const char *config, size_t len, const struct oci_resources *r, char **out,
                          size_t *out_len, hk_err *err)
{
  static const char *const skip[] = { "linux", NULL };
  yajl_val root = NULL;
  if (json_parse (config, len, &root, err) < 0)
    return -1;
  if (!YAJL_IS_OBJECT (root))
    {
      json_free (root);
      return err_set (err, EINVAL, "config.json: not a JSON object");
    }
  struct json_out o;
  json_out_init (&o, NULL);
  json_obj_open (&o);
  copy_members_but (&o, root, skip);
  json_key (&o, "linux");
  write_linux (&o, json_get (root, "linux"), r);
  json_obj_close (&o);
  json_free (root);
  return json_out_finish (&o, out, out_len, err);
}
