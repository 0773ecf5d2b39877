/* spec_linux: config.json's "linux" object — namespaces, id maps, devices,
 * cgroup resources, seccomp and the rest of the Linux-only settings. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lib/util.h"
#include "oci/knobs.h"
#include "oci/spec_common.h"
#include "oci/spec_internal.h"

/* ---- namespaces and id maps ---- */

static int
parse_namespace (yajl_val v, const char *path, struct oci_linux *l, hk_err *err)
{
  cleanup_free char *type = NULL;
  if (!YAJL_IS_OBJECT (v))
    return json_error (err, path, NULL, "must be an object");
  if (json_get_string (v, path, "type", &type, err) < 0)
    return -1;
  if (type == NULL)
    return json_error (err, path, "type", "required");
  int t = oci_ns_from_name (type);
  if (t < 0)
    return json_error (err, path, "type", "unknown namespace type \"%s\"", type);
  for (size_t i = 0; i < l->n_namespaces; i++)
    if (l->namespaces[i].type == (enum oci_ns_type)t)
      return json_error (err, path, "type", "duplicate namespace type \"%s\"", type);
  struct oci_namespace *ns = &l->namespaces[l->n_namespaces++];
  ns->type = t;
  if (json_get_string (v, path, "path", &ns->path, err) < 0)
    return -1;
  if (ns->path && !spec_is_abs (ns->path))
    return json_error (err, path, "path", "must be an absolute path");
  return 0;
}

static int
parse_namespaces (yajl_val lin, struct oci_linux *l, hk_err *err)
{
  yajl_val a = NULL;
  int r = json_get_array (lin, ".linux", "namespaces", &a, err);
  if (r <= 0)
    return r;
  l->namespaces = xcalloc (json_len (a), sizeof *l->namespaces);
  for (size_t i = 0; i < json_len (a); i++)
    {
      cleanup_free char *path = json_index (".linux.namespaces", i);
      if (parse_namespace (json_at (a, i), path, l, err) < 0)
        return -1;
    }
  return 0;
}

/* ---- devices ---- */

/* A one-letter type from ALLOWED ("cbup"). */
static int
parse_dev_type (yajl_val v, const char *path, const char *allowed, char *out, hk_err *err)
{
  cleanup_free char *type = NULL;
  int r = json_get_string (v, path, "type", &type, err);
  if (r <= 0)
    return r;
  if (strlen (type) != 1 || strchr (allowed, type[0]) == NULL)
    return json_error (err, path, "type", "must be one of \"%s\" (one letter), got \"%s\"", allowed, type);
  *out = type[0];
  return 1;
}

/* The S_IF* bits of a device of one-letter type t ('u' is unbuffered 'c'). */
static mode_t
dev_type_bits (char t)
{
  return t == 'b' ? S_IFBLK : t == 'p' ? S_IFIFO : S_IFCHR;
}

static int
parse_device (yajl_val v, const char *path, struct oci_device *d, hk_err *err)
{
  int r, maj = 0, min = 0, mode = 0, uid = 0, gid = 0;
  uint64_t fmode = 0;
  uint32_t id = 0;
  if (!YAJL_IS_OBJECT (v))
    return json_error (err, path, NULL, "must be an object");
  if ((r = parse_dev_type (v, path, "cbup", &d->type, err)) < 0
      || json_get_string (v, path, "path", &d->path, err) < 0
      || (maj = json_get_i64 (v, path, "major", 0, INT64_MAX, &d->major, err)) < 0
      || (min = json_get_i64 (v, path, "minor", 0, INT64_MAX, &d->minor, err)) < 0
      || (mode = json_get_u64 (v, path, "fileMode", S_IFMT | 07777, &fmode, err)) < 0)
    return -1;
  if (r == 0)
    return json_error (err, path, "type", "required");
  if (d->path == NULL)
    return json_error (err, path, "path", "required");
  if (!spec_is_abs (d->path))
    return json_error (err, path, "path", "must be an absolute path");
  if (d->type != 'p' && (!maj || !min))
    return json_error (err, path, maj ? "minor" : "major", "required for a '%c' device", d->type);
  /* podman and docker write a host node's whole st_mode; its file type must
   * be the device's own, and only the permission bits are kept. */
  if (mode > 0 && (fmode & S_IFMT) != 0 && (fmode & S_IFMT) != dev_type_bits (d->type))
    return json_error (err, path, "fileMode",
                       "%#llo: a file type other than a '%c' device's (only permission bits, "
                       "0-07777, or those with the device's type)",
                       (unsigned long long)fmode, d->type);
  d->has_file_mode = mode > 0;
  d->file_mode = fmode & 07777;
  if ((uid = json_get_u32 (v, path, "uid", &id, err)) < 0)
    return -1;
  d->has_uid = uid > 0;
  d->uid = id;
  if ((gid = json_get_u32 (v, path, "gid", &id, err)) < 0)
    return -1;
  d->has_gid = gid > 0;
  d->gid = id;
  if (json_get_string (v, path, "hostPath", &d->host_path, err) < 0)
    return -1;
  if (d->host_path && !spec_is_abs (d->host_path))
    return json_error (err, path, "hostPath", "must be an absolute path");
  return 0;
}

static int
parse_devices (yajl_val lin, struct oci_linux *l, hk_err *err)
{
  yajl_val a = NULL;
  int r = json_get_array (lin, ".linux", "devices", &a, err);
  if (r <= 0)
    return r;
  l->devices = xcalloc (json_len (a), sizeof *l->devices);
  for (size_t i = 0; i < json_len (a); i++)
    {
      cleanup_free char *path = json_index (".linux.devices", i);
      l->n_devices++;
      if (parse_device (json_at (a, i), path, &l->devices[i], err) < 0)
        return -1;
    }
  return 0;
}

/* ---- resources ---- */

static int
parse_device_rule (yajl_val v, const char *path, struct oci_device_rule *d, hk_err *err)
{
  int allow = 0;
  d->major = d->minor = -1;
  if (!YAJL_IS_OBJECT (v))
    return json_error (err, path, NULL, "must be an object");
  if ((allow = json_get_bool (v, path, "allow", &d->allow, err)) < 0
      || parse_dev_type (v, path, "acb", &d->type, err) < 0
      || json_get_i64 (v, path, "major", -1, INT64_MAX, &d->major, err) < 0
      || json_get_i64 (v, path, "minor", -1, INT64_MAX, &d->minor, err) < 0
      || json_get_string (v, path, "access", &d->access, err) < 0)
    return -1;
  if (!allow)
    return json_error (err, path, "allow", "required");
  if (d->access == NULL)
    d->access = xstrdup ("rwm");
  if (d->access[0] == '\0' || d->access[strspn (d->access, "rwm")] != '\0')
    return json_error (err, path, "access", "must be letters of \"rwm\", got \"%s\"", d->access);
  return 0;
}

static int
parse_device_rules (yajl_val res, struct oci_resources *r, hk_err *err)
{
  yajl_val a = NULL;
  int got = json_get_array (res, ".linux.resources", "devices", &a, err);
  if (got <= 0)
    return got;
  r->devices = xcalloc (json_len (a), sizeof *r->devices);
  for (size_t i = 0; i < json_len (a); i++)
    {
      cleanup_free char *path = json_index (".linux.resources.devices", i);
      r->n_devices++;
      if (parse_device_rule (json_at (a, i), path, &r->devices[i], err) < 0)
        return -1;
    }
  return 0;
}

/* The table's knobs (oci/knobs.h) in member OBJ of linux.resources. */
static int
parse_knobs (yajl_val res, const char *obj, struct oci_resources *r, hk_err *err)
{
  cleanup_free char *path = json_path (".linux.resources", obj);
  yajl_val o = NULL;
  if (json_get_object (res, ".linux.resources", obj, &o, err) < 0)
    return -1;
  for (size_t i = 0; i < oci_n_knobs; i++)
    {
      const struct oci_knob *k = &oci_knobs[i];
      void *val = (char *)r + k->val;
      bool *has = (bool *)((char *)r + k->has);
      int got = 0;
      if (strcmp (k->obj, obj) != 0)
        continue;
      switch (k->type)
        {
        case OCI_KNOB_I64: got = json_get_i64 (o, path, k->key, k->min, (int64_t)k->max, val, err); break;
        case OCI_KNOB_U64: got = json_get_u64 (o, path, k->key, k->max, val, err); break;
        case OCI_KNOB_BOOL: got = json_get_bool (o, path, k->key, val, err); break;
        case OCI_KNOB_STR: got = json_get_string (o, path, k->key, val, err); break;
        }
      if (got < 0)
        return -1;
      if (k->type == OCI_KNOB_I64 || k->type == OCI_KNOB_U64)
        *has = got > 0;
    }
  return 0;
}

static int
parse_hugepages (yajl_val res, struct oci_resources *r, hk_err *err)
{
  yajl_val a = NULL;
  int got = json_get_array (res, ".linux.resources", "hugepageLimits", &a, err);
  if (got <= 0)
    return got;
  r->hugepage_limits = xcalloc (json_len (a), sizeof *r->hugepage_limits);
  for (size_t i = 0; i < json_len (a); i++)
    {
      cleanup_free char *path = json_index (".linux.resources.hugepageLimits", i);
      yajl_val v = json_at (a, i);
      struct oci_kv *kv = &r->hugepage_limits[r->n_hugepage_limits++];
      uint64_t limit = 0;
      int got_limit = 0;
      if (!YAJL_IS_OBJECT (v))
        return json_error (err, path, NULL, "must be an object");
      if (json_get_string (v, path, "pageSize", &kv->key, err) < 0
          || (got_limit = json_get_u64 (v, path, "limit", UINT64_MAX, &limit, err)) < 0)
        return -1;
      if (kv->key == NULL || kv->key[0] == '\0')
        return json_error (err, path, "pageSize", "required");
      if (!got_limit)
        return json_error (err, path, "limit", "required");
      kv->value = xasprintf ("%" PRIu64, limit);
    }
  return 0;
}

/* One of blockIO's per-device lists: the throttles' "rate", or
 * weightDevice's "weight" (10..1000 as blockIO.weight; its leafWeight is
 * refused: no kernel since 5.0 has leaf weights). */
static int
parse_blkio_devices (yajl_val blkio, const char *key, enum oci_blkio_kind kind, struct oci_resources *r,
                     hk_err *err)
{
  const char *member = kind == OCI_BLKIO_WEIGHT ? "weight" : "rate";
  yajl_val a = NULL;
  int got = json_get_array (blkio, ".linux.resources.blockIO", key, &a, err);
  if (got <= 0)
    return got;
  r->blkio_devices
      = xrealloc (r->blkio_devices, (r->n_blkio_devices + json_len (a)) * sizeof *r->blkio_devices);
  cleanup_free char *base = json_path (".linux.resources.blockIO", key);
  for (size_t i = 0; i < json_len (a); i++)
    {
      cleanup_free char *path = json_index (base, i);
      yajl_val v = json_at (a, i);
      struct oci_blkio_device *t = &r->blkio_devices[r->n_blkio_devices++];
      int ma = 0, mi = 0, va = 0;
      t->kind = kind;
      if (!YAJL_IS_OBJECT (v))
        return json_error (err, path, NULL, "must be an object");
      if ((ma = json_get_i64 (v, path, "major", 0, INT32_MAX, &t->major, err)) < 0
          || (mi = json_get_i64 (v, path, "minor", 0, INT32_MAX, &t->minor, err)) < 0
          || (va = json_get_u64 (v, path, member, UINT64_MAX, &t->value, err)) < 0)
        return -1;
      if (!ma || !mi || !va)
        return json_error (err, path, !ma ? "major" : !mi ? "minor" : member, "required");
      if (kind != OCI_BLKIO_WEIGHT)
        continue;
      if (json_is_set (v, "leafWeight"))
        return json_error (err, path, "leafWeight",
                           "leaf weights are not supported (no kernel since 5.0 has them)");
      if (t->value < 10 || t->value > 1000)
        return json_error (err, path, "weight", "must be between 10 and 1000");
    }
  return 0;
}

/* Members of linux.resources that hako does not apply: refused when set, as
 * a limit this host cannot enforce is (docs/architecture.md: nothing is silently
 * dropped).  Leaf weights died with CFQ (Linux 5.0); net_cls and net_prio
 * exist on v1 only; rdma is not implemented. */
static int
refuse_unapplied (yajl_val res, yajl_val blkio, hk_err *err)
{
  static const struct
  {
    const char *obj, *key, *why;
  } unapplied[] = {
    { "blockIO", "leafWeight", "leaf weights are not supported (no kernel since 5.0 has them)" },
    { "blockIO", "leafWeightDevice", "leaf weights are not supported (no kernel since 5.0 has them)" },
    { "network", "classID", "net_cls is not supported by hako" },
    { "network", "priorities", "net_prio is not supported by hako" },
  };
  for (size_t i = 0; i < sizeof unapplied / sizeof *unapplied; i++)
    {
      yajl_val o = strcmp (unapplied[i].obj, "blockIO") == 0 ? blkio : json_get (res, unapplied[i].obj);
      if (!json_is_set (o, unapplied[i].key))
        continue;
      cleanup_free char *path = json_path (".linux.resources", unapplied[i].obj);
      return err_set (err, ENOTSUP, "%s.%s: %s", path, unapplied[i].key, unapplied[i].why);
    }
  if (json_is_set (res, "rdma"))
    return err_set (err, ENOTSUP, ".linux.resources.rdma: rdma limits are not supported by hako");
  return 0;
}

int
spec_parse_resources (yajl_val res, struct oci_resources *r, hk_err *err)
{
  const char *path = ".linux.resources";
  yajl_val blkio = NULL;
  uint64_t weight = 0;
  if (parse_device_rules (res, r, err) < 0 || parse_knobs (res, "memory", r, err) < 0
      || parse_knobs (res, "cpu", r, err) < 0 || parse_hugepages (res, r, err) < 0
      || parse_knobs (res, "pids", r, err) < 0 || json_get_object (res, path, "blockIO", &blkio, err) < 0
      || json_get_u64 (blkio, ".linux.resources.blockIO", "weight", UINT16_MAX, &weight, err) < 0
      || json_get_kv (res, path, "unified", &r->unified, &r->n_unified, err) < 0
      || refuse_unapplied (res, blkio, err) < 0
      || parse_blkio_devices (blkio, "throttleReadBpsDevice", OCI_BLKIO_READ_BPS, r, err) < 0
      || parse_blkio_devices (blkio, "throttleWriteBpsDevice", OCI_BLKIO_WRITE_BPS, r, err) < 0
      || parse_blkio_devices (blkio, "throttleReadIOPSDevice", OCI_BLKIO_READ_IOPS, r, err) < 0
      || parse_blkio_devices (blkio, "throttleWriteIOPSDevice", OCI_BLKIO_WRITE_IOPS, r, err) < 0
      || parse_blkio_devices (blkio, "weightDevice", OCI_BLKIO_WEIGHT, r, err) < 0)
    return -1;
  /* As runc: a weight of 0 means "not set". */
  if (weight != 0 && (weight < 10 || weight > 1000))
    return json_error (err, ".linux.resources.blockIO", "weight", "must be between 10 and 1000");
  r->has_blkio_weight = weight != 0;
  r->blkio_weight = weight;
  return 0;
}

static int
parse_resources (yajl_val lin, struct oci_linux *l, hk_err *err)
{
  yajl_val res = NULL;
  int got = json_get_object (lin, ".linux", "resources", &res, err);
  if (got <= 0)
    return got;
  l->has_resources = true;
  return spec_parse_resources (res, &l->resources, err);
}

/* ---- seccomp ---- */

static int
parse_seccomp_arg (yajl_val v, const char *path, struct oci_seccomp_arg *a, hk_err *err)
{
  int idx = 0, val = 0;
  uint64_t index = 0;
  if (!YAJL_IS_OBJECT (v))
    return json_error (err, path, NULL, "must be an object");
  if ((idx = json_get_u64 (v, path, "index", 5, &index, err)) < 0
      || (val = json_get_u64 (v, path, "value", UINT64_MAX, &a->value, err)) < 0
      || json_get_u64 (v, path, "valueTwo", UINT64_MAX, &a->value_two, err) < 0
      || json_get_string (v, path, "op", &a->op, err) < 0)
    return -1;
  if (!idx)
    return json_error (err, path, "index", "required");
  if (!val)
    return json_error (err, path, "value", "required");
  if (a->op == NULL)
    return json_error (err, path, "op", "required");
  a->index = index;
  return 0;
}

static int
parse_seccomp_rule (yajl_val v, const char *path, struct oci_seccomp_rule *s, hk_err *err)
{
  yajl_val args = NULL;
  uint32_t ret = 0;
  int er = 0;
  if (!YAJL_IS_OBJECT (v))
    return json_error (err, path, NULL, "must be an object");
  if (json_get_strv (v, path, "names", &s->names, err) < 0
      || json_get_string (v, path, "action", &s->action, err) < 0
      || (er = json_get_u32 (v, path, "errnoRet", &ret, err)) < 0
      || json_get_array (v, path, "args", &args, err) < 0)
    return -1;
  if (s->names == NULL || s->names[0] == NULL)
    return json_error (err, path, "names", "must be a non-empty array");
  if (s->action == NULL)
    return json_error (err, path, "action", "required");
  s->has_errno_ret = er > 0;
  s->errno_ret = ret;
  s->args = xcalloc (json_len (args), sizeof *s->args);
  for (size_t i = 0; i < json_len (args); i++)
    {
      cleanup_free char *base = json_path (path, "args");
      cleanup_free char *p = json_index (base, i);
      s->n_args++;
      if (parse_seccomp_arg (json_at (args, i), p, &s->args[i], err) < 0)
        return -1;
    }
  return 0;
}

static int
parse_seccomp (yajl_val lin, struct oci_linux *l, hk_err *err)
{
  const char *path = ".linux.seccomp";
  yajl_val o = NULL, calls = NULL;
  int got = json_get_object (lin, ".linux", "seccomp", &o, err);
  if (got <= 0)
    return got;
  struct oci_seccomp *s = l->seccomp = xcalloc (1, sizeof *s);
  uint32_t ret = 0;
  int er = 0;
  if (json_get_string (o, path, "defaultAction", &s->default_action, err) < 0
      || (er = json_get_u32 (o, path, "defaultErrnoRet", &ret, err)) < 0
      || json_get_strv (o, path, "architectures", &s->architectures, err) < 0
      || json_get_strv (o, path, "flags", &s->flags, err) < 0
      || json_get_string (o, path, "listenerPath", &s->listener_path, err) < 0
      || json_get_string (o, path, "listenerMetadata", &s->listener_metadata, err) < 0
      || json_get_array (o, path, "syscalls", &calls, err) < 0)
    return -1;
  if (s->default_action == NULL || s->default_action[0] == '\0')
    return json_error (err, path, "defaultAction", "required");
  s->has_default_errno_ret = er > 0;
  s->default_errno_ret = ret;
  s->syscalls = xcalloc (json_len (calls), sizeof *s->syscalls);
  for (size_t i = 0; i < json_len (calls); i++)
    {
      cleanup_free char *p = json_index (".linux.seccomp.syscalls", i);
      s->n_syscalls++;
      if (parse_seccomp_rule (json_at (calls, i), p, &s->syscalls[i], err) < 0)
        return -1;
    }
  return 0;
}

/* ---- the linux object ---- */

static int
parse_propagation (yajl_val lin, struct oci_linux *l, hk_err *err)
{
  cleanup_free char *name = NULL;
  int r = json_get_string (lin, ".linux", "rootfsPropagation", &name, err);
  if (r <= 0 || name[0] == '\0')
    return r < 0 ? -1 : 0;
  if (!spec_propagation (name, &l->rootfs_propagation))
    return json_error (err, ".linux", "rootfsPropagation",
                       "unknown propagation \"%s\" (private, rprivate, slave, rslave, shared, "
                       "rshared, unbindable, runbindable)",
                       name);
  return 0;
}

int
spec_parse_linux (yajl_val root, struct oci_linux *l, hk_err *err)
{
  const char *path = ".linux";
  yajl_val lin = NULL;
  int r = json_get_object (root, "", "linux", &lin, err);
  if (r <= 0)
    return r;
  /* Settings hako does not apply: refused, not silently dropped. */
  static const char *const unapplied[]
      = { "intelRdt", "personality", "timeOffsets", "memoryPolicy", "netDevices", NULL };
  const char *what = json_first_set (lin, unapplied);
  if (what)
    return err_set (err, ENOTSUP, ".linux.%s: not supported by hako", what);
  if (json_is_set (lin, "mountLabel"))
    return err_set (err, ENOTSUP, ".linux.mountLabel: %s", SPEC_NO_LABELS);
  if (parse_namespaces (lin, l, err) < 0
      || spec_parse_idmaps (lin, path, "uidMappings", &l->uid_mappings, &l->n_uid_mappings, err) < 0
      || spec_parse_idmaps (lin, path, "gidMappings", &l->gid_mappings, &l->n_gid_mappings, err) < 0
      || json_get_kv (lin, path, "sysctl", &l->sysctl, &l->n_sysctl, err) < 0
      || parse_devices (lin, l, err) < 0 || parse_resources (lin, l, err) < 0
      || json_get_string (lin, path, "cgroupsPath", &l->cgroups_path, err) < 0
      || parse_propagation (lin, l, err) < 0
      || json_get_strv (lin, path, "maskedPaths", &l->masked_paths, err) < 0
      || json_get_strv (lin, path, "readonlyPaths", &l->readonly_paths, err) < 0
      || json_get_string (lin, path, "mountLabel", &l->mount_label, err) < 0
      || parse_seccomp (lin, l, err) < 0)
    return -1;
  return 0;
}

/* ---- free ---- */

static void
free_seccomp (struct oci_seccomp *s)
{
  if (s == NULL)
    return;
  free (s->default_action);
  strv_free (s->architectures);
  strv_free (s->flags);
  free (s->listener_path);
  free (s->listener_metadata);
  for (size_t i = 0; i < s->n_syscalls; i++)
    {
      struct oci_seccomp_rule *r = &s->syscalls[i];
      strv_free (r->names);
      free (r->action);
      for (size_t j = 0; j < r->n_args; j++)
        free (r->args[j].op);
      free (r->args);
    }
  free (s->syscalls);
  free (s);
}

void
spec_free_resources (struct oci_resources *r)
{
  free (r->cpu_cpus);
  free (r->cpu_mems);
  for (size_t i = 0; i < r->n_devices; i++)
    free (r->devices[i].access);
  free (r->devices);
  json_kv_free (r->hugepage_limits, r->n_hugepage_limits);
  json_kv_free (r->unified, r->n_unified);
  free (r->blkio_devices);
}

void
spec_free_linux (struct oci_linux *l)
{
  for (size_t i = 0; i < l->n_namespaces; i++)
    free (l->namespaces[i].path);
  free (l->namespaces);
  free (l->uid_mappings);
  free (l->gid_mappings);
  json_kv_free (l->sysctl, l->n_sysctl);
  for (size_t i = 0; i < l->n_devices; i++)
    {
      free (l->devices[i].path);
      free (l->devices[i].host_path);
    }
  free (l->devices);
  spec_free_resources (&l->resources);
  free (l->cgroups_path);
  strv_free (l->masked_paths);
  strv_free (l->readonly_paths);
  free (l->mount_label);
  free_seccomp (l->seccomp);
}
