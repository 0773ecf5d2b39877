/* resources: parsing linux.resources alone, merging an update into it, and
 * writing it back into a config.json's text without touching the rest. */
#include "oci/resources.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util.h"
#include "oci/spec_internal.h"

static int
refuse_unchangeable (const struct oci_resources *r, hk_err *err)
{
  const char *what = r->n_hugepage_limits                                        ? "hugepageLimits"
                     : r->n_unified                                              ? "unified"
                     : r->has_blkio_weight || r->n_blkio_throttle                ? "blockIO"
                     : r->has_memory_kernel                                      ? "memory.kernel"
                     : r->has_memory_kernel_tcp                                  ? "memory.kernelTCP"
                     : r->has_memory_swappiness                                  ? "memory.swappiness"
                     : r->disable_oom_killer                                     ? "memory.disableOOMKiller"
                     : r->has_cpu_realtime_runtime || r->has_cpu_realtime_period ? "cpu.realtime*"
                                                                                 : NULL;
  if (what)
    return err_set (err, EINVAL,
                    ".linux.resources.%s: update cannot change it (only memory limit, "
                    "reservation and swap, pids and cpu)",
                    what);
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
  else if (spec_parse_resources (root, out, err) == 0 && refuse_unchangeable (out, err) == 0)
    r = 0;
  yajl_tree_free (root);
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

#define TAKE(f)                                                                                              \
  do                                                                                                         \
    if (upd->has_##f)                                                                                        \
      {                                                                                                      \
        dst->has_##f = true;                                                                                 \
        dst->f = upd->f;                                                                                     \
      }                                                                                                      \
  while (0)

void
oci_resources_merge (struct oci_resources *dst, const struct oci_resources *upd)
{
  TAKE (memory_limit);
  TAKE (memory_reservation);
  TAKE (memory_swap);
  TAKE (pids_limit);
  TAKE (cpu_shares);
  TAKE (cpu_quota);
  TAKE (cpu_period);
  if (upd->cpu_cpus)
    {
      free (dst->cpu_cpus);
      dst->cpu_cpus = xstrdup (upd->cpu_cpus);
    }
  if (upd->cpu_mems)
    {
      free (dst->cpu_mems);
      dst->cpu_mems = xstrdup (upd->cpu_mems);
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

static void
write_resources (struct json_out *o, yajl_val old, const struct oci_resources *r)
{
  static const char *const top[] = { "memory", "cpu", "pids", NULL };
  static const char *const mem[] = { "limit", "reservation", "swap", NULL };
  static const char *const cpu[] = { "shares", "quota", "period", "cpus", "mems", NULL };
  json_obj_open (o);
  copy_members_but (o, old, top);
  json_key (o, "memory");
  json_obj_open (o);
  copy_members_but (o, json_get (old, "memory"), mem);
  if (r->has_memory_limit)
    json_kint (o, "limit", r->memory_limit);
  if (r->has_memory_reservation)
    json_kint (o, "reservation", r->memory_reservation);
  if (r->has_memory_swap)
    json_kint (o, "swap", r->memory_swap);
  json_obj_close (o);
  json_key (o, "cpu");
  json_obj_open (o);
  copy_members_but (o, json_get (old, "cpu"), cpu);
  if (r->has_cpu_shares)
    json_kuint (o, "shares", r->cpu_shares);
  if (r->has_cpu_quota)
    json_kint (o, "quota", r->cpu_quota);
  if (r->has_cpu_period)
    json_kuint (o, "period", r->cpu_period);
  json_kstr (o, "cpus", r->cpu_cpus);
  json_kstr (o, "mems", r->cpu_mems);
  json_obj_close (o);
  if (r->has_pids_limit)
    {
      json_key (o, "pids");
      json_obj_open (o);
      json_kint (o, "limit", r->pids_limit);
      json_obj_close (o);
    }
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
      yajl_tree_free (root);
      return err_set (err, EINVAL, "config.json: not a JSON object");
    }
  struct json_out o;
  json_out_init (&o, NULL);
  json_obj_open (&o);
  copy_members_but (&o, root, skip);
  json_key (&o, "linux");
  write_linux (&o, json_get (root, "linux"), r);
  json_obj_close (&o);
  yajl_tree_free (root);
  return json_out_finish (&o, out, out_len, err);
}
