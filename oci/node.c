/* node: parsing the node config, hako-node(5). */
#include "oci/node.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#include "lib/util.h"
#include "oci/json.h"
#include "oci/spec.h"

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

/* "default_disk": the disk limit of a sandbox whose spec sets none, as memory_pool. */
static int
parse_disk (yajl_val v, struct oci_node *out, hk_err *err)
{
  uint64_t *d = &out->default_disk;
  bool ok = YAJL_IS_STRING (v) ? parse_size (YAJL_GET_STRING (v), d) == 0
                               : json_as_u64 (v, "", "default_disk", INT64_MAX, d, err) == 1;
  if (!ok || *d < HAKO_DISK_MIN || *d > INT64_MAX)
    return json_error (err, "", "default_disk",
                       "must be a size of at least 16M (bytes, or a number with K, M or G)");
  return 0;
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
      else
        return json_error (err, "", k,
                           "unknown field (memory_pool, overcommit, require_memory_limit, "
                           "default_memory, default_pids, default_disk)");
    }
  return 0;
}

int
oci_node_parse (const char *text, size_t len, const char *file, struct oci_node *out, hk_err *err)
{
  yajl_val root = NULL;
  *out = (struct oci_node){ .overcommit = 1 };
  int r = json_parse (text, len, &root, err);
  if (r == 0)
    r = parse_fields (root, out, err);
  if (root)
    yajl_tree_free (root);
  return r < 0 ? err_prefix (err, "%s", file) : 0;
}
