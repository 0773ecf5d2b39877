/* node: parsing the node config, hako-node(5). */
#include "oci/node.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "lib/util.h"
#include "oci/cdi.h"
#include "oci/json.h"
#include "oci/spec.h"
#include "oci/spec_internal.h"

/* "memory_pool": 268435456 or "256M" (k/m/g binary suffixes, as parse_size). */
static int
parse_pool (yajl_val v, struct oci_node *out, hk_err *err)
{
  if (YAJL_IS_STRING (v))
    {
      if (parse_size (YAJL_GET_STRING (v), &out->memory_pool) < 0)
        return json_error (err, "", "memory_pool", "\"%s\" is not a size (bytes, or a number with K, M or G)",
                           YAJL_GET_STRING (v));
    }
  else if (json_as_u64 (v, "", "memory_pool", UINT64_MAX, &out->memory_pool, err) < 0)
    return -1;
  if (out->memory_pool == 0)
    return json_error (err, "", "memory_pool", "must be more than 0");
  out->has_memory_pool = true;
  return 0;
}

/* "default_disk": the disk limit of a sandbox whose spec sets none, as
 * memory_pool; "none" or -1: no default limit (0). */
static int
parse_disk (yajl_val v, struct oci_node *out, hk_err *err)
{
  uint64_t *d = &out->default_disk;
  out->has_default_disk = true;
  if ((YAJL_IS_STRING (v) && (strcmp (v->u.string, "none") == 0 || strcmp (v->u.string, "-1") == 0))
      || (YAJL_IS_INTEGER (v) && YAJL_GET_INTEGER (v) == -1))
    return *d = 0, 0;
  bool ok = YAJL_IS_STRING (v) ? parse_size (YAJL_GET_STRING (v), d) == 0
                               : json_as_u64 (v, "", "default_disk", INT64_MAX, d, err) == 1;
  if (!ok || *d < HAKO_DISK_MIN || *d > INT64_MAX)
    return json_error (err, "", "default_disk",
                       "must be a size of at least 16M (bytes, or a number with K, M or G), or "
                       "\"none\"");
  return 0;
}

uint64_t
oci_node_default_disk (const struct oci_node *node)
{
  return node && node->has_default_disk ? node->default_disk : HAKO_DISK_DEFAULT;
}

static int
parse_overcommit (yajl_val v, struct oci_node *out, hk_err *err)
{
  if (!YAJL_IS_NUMBER (v))
    return json_error (err, "", "overcommit", "must be a number");
  double d = YAJL_GET_DOUBLE (v);
  if (YAJL_IS_INTEGER (v))
    d = (double)YAJL_GET_INTEGER (v);
  if (!isfinite (d) || d <= 0 || d > 1000)
    return json_error (err, "", "overcommit", "must be a number above 0 (and at most 1000)");
  out->overcommit = d;
  return 0;
}

/* "default_memory": bytes, "2G", or -1 (no limit). */
static int
parse_default_memory (yajl_val v, struct oci_node *out, hk_err *err)
{
  const char *str = YAJL_IS_STRING (v) ? YAJL_GET_STRING (v) : NULL;
  uint64_t size;
  if ((YAJL_IS_INTEGER (v) && YAJL_GET_INTEGER (v) == -1) || (str && strcmp (str, "-1") == 0))
    {
      out->default_memory = -1;
      return 0;
    }
  if (str)
    {
      if (parse_size (str, &size) < 0)
        return json_error (err, "", "default_memory",
                           "\"%s\" is not a size (bytes, or a number with K, M or G; -1: no limit)", str);
    }
  else if (json_as_u64 (v, "", "default_memory", UINT64_MAX, &size, err) < 0)
    return -1;
  if (size == 0 || size > (uint64_t)INT64_MAX)
    return json_error (err, "", "default_memory", "must be more than 0 (or -1: no limit)");
  out->default_memory = (int64_t)size;
  return 0;
}

/* "default_pids": a number of tasks, or -1 (no limit). */
static int
parse_default_pids (yajl_val v, struct oci_node *out, hk_err *err)
{
  if (!YAJL_IS_INTEGER (v) || YAJL_GET_INTEGER (v) == 0 || YAJL_GET_INTEGER (v) < -1)
    return json_error (err, "", "default_pids", "must be a number of tasks above 0 (or -1: no limit)");
  out->default_pids = YAJL_GET_INTEGER (v);
  return 0;
}

/* "devices": {"nvidia.com/gpu=0": {"mode": "shared", "slots": 4},
 *             "nvidia.com/gpu=1": {"mode": "exclusive"}} */
static int
parse_devices (yajl_val v, struct oci_node *out, hk_err *err)
{
  if (!YAJL_IS_OBJECT (v))
    return json_error (err, "", "devices", "must be an object of CDI device names");
  if (v->u.object.len > OCI_NODE_MAX_DEVICES)
    return json_error (err, "", "devices", "at most %d devices", OCI_NODE_MAX_DEVICES);
  for (size_t i = 0; i < v->u.object.len; i++)
    {
      const char *name = v->u.object.keys[i];
      yajl_val d = v->u.object.values[i];
      cleanup_free char *p = json_path (".devices", name);
      cleanup_free char *mode = NULL;
      struct oci_node_device *nd = &out->devices[out->n_devices];
      if (!cdi_is_qualified (name, NULL) || strlen (name) >= OCI_NODE_MAX_NAME)
        return json_error (err, ".devices", name, "not a CDI device name (vendor.com/class=name)");
      if (!YAJL_IS_OBJECT (d))
        return json_error (err, p, NULL, "must be an object (mode, slots)");
      for (size_t k = 0; k < d->u.object.len; k++)
        if (strcmp (d->u.object.keys[k], "mode") != 0 && strcmp (d->u.object.keys[k], "slots") != 0)
          return json_error (err, p, d->u.object.keys[k], "unknown field (mode, slots)");
      uint64_t slots = 0;
      int has_slots = json_get_u64 (d, p, "slots", 1024, &slots, err);
      if (has_slots < 0 || json_get_string (d, p, "mode", &mode, err) < 0)
        return -1;
      nd->exclusive = mode && strcmp (mode, "exclusive") == 0;
      if (mode && !nd->exclusive && strcmp (mode, "shared") != 0)
        return json_error (err, p, "mode", "must be shared or exclusive, got \"%s\"", mode);
      if (nd->exclusive && has_slots && slots != 1)
        return json_error (err, p, "slots", "an exclusive device has one slot");
      if (!nd->exclusive && (!has_slots || slots == 0))
        return json_error (err, p, "slots",
                           "a shared device needs slots: how many sandboxes at once (1-1024)");
      nd->slots = nd->exclusive ? 1 : (uint32_t)slots;
      snprintf (nd->name, sizeof nd->name, "%s", name);
      out->n_devices++;
    }
  return 0;
}

/* "cdi_spec_dirs": ["/etc/cdi", "/var/run/cdi"], lowest priority first. */
static int
parse_cdi_dirs (yajl_val v, struct oci_node *out, hk_err *err)
{
  char **dirs = NULL;
  if (json_as_strv (v, "", "cdi_spec_dirs", &dirs, err) < 0)
    return -1;
  size_t n = strv_len (dirs);
  int r = 0;
  if (n > OCI_NODE_MAX_CDI_DIRS)
    r = json_error (err, "", "cdi_spec_dirs", "at most %d directories", OCI_NODE_MAX_CDI_DIRS);
  for (size_t i = 0; r == 0 && i < n; i++)
    if (dirs[i][0] != '/' || strlen (dirs[i]) >= sizeof out->cdi_spec_dirs[0])
      {
        cleanup_free char *p = json_index (".cdi_spec_dirs", i);
        r = json_error (err, p, NULL, "must be an absolute path (under 256 bytes)");
      }
    else
      snprintf (out->cdi_spec_dirs[out->n_cdi_spec_dirs++], sizeof out->cdi_spec_dirs[0], "%s", dirs[i]);
  strv_free (dirs);
  return r;
}

static bool
known_annotation (const char *name)
{
  const char *n;
  for (size_t i = 0; (n = spec_annotation_name (i)) != NULL; i++)
    if (strcmp (n, name) == 0)
      return true;
  return false;
}

/* One NAME: [VALUE, ...] of annotations.allow. */
static int
parse_consent (const char *name, yajl_val v, struct oci_node *out, hk_err *err)
{
  cleanup_free char *p = json_path (".annotations.allow", name);
  if (!known_annotation (name))
    return json_error (err, ".annotations.allow", name,
                       "not an org.hako.* annotation (hako-spec(5), ANNOTATIONS)");
  char **values = NULL;
  if (json_as_strv (v, ".annotations.allow", name, &values, err) < 0)
    return -1;
  int r = 0;
  for (size_t i = 0; r == 0 && values[i]; i++)
    {
      cleanup_free char *pi = json_index (p, i);
      struct oci_node_consent *c = &out->consents[out->n_consents];
      if (out->n_consents == OCI_NODE_MAX_CONSENTS)
        r = json_error (err, ".annotations", "allow", "at most %d values in all", OCI_NODE_MAX_CONSENTS);
      else if (values[i][0] == '\0' || strlen (values[i]) >= sizeof c->value)
        r = json_error (err, pi, NULL, "must be a value of under 256 bytes");
      else if (strcmp (name, "org.hako.allow") == 0 && strchr (values[i], ','))
        r = json_error (err, pi, NULL, "one allow-list entry a value (no commas)");
      else
        {
          snprintf (c->key, sizeof c->key, "%s", name);
          snprintf (c->value, sizeof c->value, "%s", values[i]);
          out->n_consents++;
        }
    }
  strv_free (values);
  return r;
}

/* "annotations": {"allow": {"org.hako.network": ["host"], ...}}: what a
 * pod's annotations may set although it widens what the node gives a pod
 * (runtime/node/consent.c). */
static int
parse_annotations (yajl_val v, struct oci_node *out, hk_err *err)
{
  if (!YAJL_IS_OBJECT (v))
    return json_error (err, "", "annotations", "must be an object (allow)");
  for (size_t i = 0; i < v->u.object.len; i++)
    {
      const char *k = v->u.object.keys[i];
      yajl_val a = v->u.object.values[i];
      if (strcmp (k, "allow") != 0)
        return json_error (err, ".annotations", k, "unknown field (allow)");
      if (!YAJL_IS_OBJECT (a))
        return json_error (err, ".annotations", "allow",
                           "must be an object of annotation names and their values");
      for (size_t j = 0; j < a->u.object.len; j++)
        if (parse_consent (a->u.object.keys[j], a->u.object.values[j], out, err) < 0)
          return -1;
    }
  return 0;
}

bool
oci_node_consents (const struct oci_node *node, const char *name, const char *value)
{
  for (size_t i = 0; node && i < node->n_consents; i++)
    if (strcmp (node->consents[i].key, name) == 0 && strcmp (node->consents[i].value, value) == 0)
      return true;
  return false;
}

/* "egress": {"trust": FILE, "hosts": FILE, "head_timeout": DURATION}: the
 * proxies' settings (hako-node(5)). */
static int
parse_egress (yajl_val v, struct oci_node *out, hk_err *err)
{
  static const char *const keys[] = { "trust", "hosts" };
  char *dest[] = { out->egress_trust, out->egress_hosts };
  if (!YAJL_IS_OBJECT (v))
    return json_error (err, "", "egress", "must be an object");
  for (size_t i = 0; i < v->u.object.len; i++)
    {
      const char *k = v->u.object.keys[i];
      yajl_val x = v->u.object.values[i];
      size_t j = 0;
      while (j < 2 && strcmp (k, keys[j]) != 0)
        j++;
      if (j < 2)
        {
          if (!YAJL_IS_STRING (x) || x->u.string[0] != '/' || strlen (x->u.string) >= OCI_NODE_MAX_PATH)
            return json_error (err, ".egress", k, "must be an absolute path");
          snprintf (dest[j], OCI_NODE_MAX_PATH, "%s", x->u.string);
        }
      else if (strcmp (k, "head_timeout") == 0)
        {
          uint64_t ms = 0;
          if (!YAJL_IS_STRING (x) || parse_duration_ms (x->u.string, &ms) < 0 || ms == 0 || ms > 3600000)
            return json_error (err, ".egress", k, "must be a duration (\"5s\", \"30s\"), at most 1h");
          out->egress_head_timeout_ms = ms;
        }
      else
        return json_error (err, ".egress", k, "unknown field (trust, hosts, head_timeout)");
    }
  return 0;
}

static int
parse_fields (yajl_val root, struct oci_node *out, hk_err *err)
{
  if (!YAJL_IS_OBJECT (root))
    return err_set (err, EINVAL, "must be a JSON object");
  for (size_t i = 0; i < root->u.object.len; i++)
    {
      const char *k = root->u.object.keys[i];
      yajl_val v = root->u.object.values[i];
      if (YAJL_IS_NULL (v))
        continue;
      if (strcmp (k, "memory_pool") == 0)
        {
          if (parse_pool (v, out, err) < 0)
            return -1;
        }
      else if (strcmp (k, "overcommit") == 0)
        {
          if (parse_overcommit (v, out, err) < 0)
            return -1;
        }
      else if (strcmp (k, "require_memory_limit") == 0)
        {
          if (json_as_bool (v, "", k, &out->require_memory_limit, err) < 0)
            return -1;
        }
      else if (strcmp (k, "default_memory") == 0)
        {
          if (parse_default_memory (v, out, err) < 0)
            return -1;
        }
      else if (strcmp (k, "default_pids") == 0)
        {
          if (parse_default_pids (v, out, err) < 0)
            return -1;
        }
      else if (strcmp (k, "default_disk") == 0)
        {
          if (parse_disk (v, out, err) < 0)
            return -1;
        }
      else if (strcmp (k, "devices") == 0)
        {
          if (parse_devices (v, out, err) < 0)
            return -1;
        }
      else if (strcmp (k, "cdi_spec_dirs") == 0)
        {
          if (parse_cdi_dirs (v, out, err) < 0)
            return -1;
        }
      else if (strcmp (k, "annotations") == 0)
        {
          if (parse_annotations (v, out, err) < 0)
            return -1;
        }
      else if (strcmp (k, "egress") == 0)
        {
          if (parse_egress (v, out, err) < 0)
            return -1;
        }
      else
        return json_error (
            err, "", k,
            "unknown field (memory_pool, overcommit, require_memory_limit, "
            "default_memory, default_pids, default_disk, devices, cdi_spec_dirs, annotations, egress)");
    }
  return 0;
}

int
oci_node_parse (const char *text, size_t len, const char *file, struct oci_node *out, hk_err *err)
{
  yajl_val root = NULL;
  memset (out, 0, sizeof *out);
  out->overcommit = 1;
  int r = json_parse (text, len, &root, err);
  if (r == 0)
    r = parse_fields (root, out, err);
  if (root)
    json_free (root);
  return r < 0 ? err_prefix (err, "%s", file) : 0;
}
