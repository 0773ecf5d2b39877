/* spec_common: what the config parser's sections share — the mount options
 * and propagations by name (for .mounts, linux.rootfsPropagation and `hako
 * features`), and id mappings (linux.uidMappings and a mount's); the path
 * check and the refusal of SELinux labels are spec_common.h's.  spec.c, spec_linux.c, spec_sandbox.c and
 * annotations.c use it; it uses none of them. */
#include "oci/spec_common.h"

#include <string.h>
#include <sys/mount.h>

#include "lib/util.h"

#ifndef MS_LAZYTIME
#define MS_LAZYTIME (1 << 25)
#endif
#ifndef MS_NOSYMFOLLOW
#define MS_NOSYMFOLLOW 256
#endif

/* The option table runc uses: each name sets or clears one MS_* flag. */
static const struct
{
  const char *name;
  bool clear;
  unsigned long flag;
} mount_flags[] = {
  { "acl", false, MS_POSIXACL },
  { "async", true, MS_SYNCHRONOUS },
  { "atime", true, MS_NOATIME },
  { "bind", false, MS_BIND },
  { "defaults", false, 0 },
  { "dev", true, MS_NODEV },
  { "diratime", true, MS_NODIRATIME },
  { "dirsync", false, MS_DIRSYNC },
  { "exec", true, MS_NOEXEC },
  { "iversion", false, MS_I_VERSION },
  { "lazytime", false, MS_LAZYTIME },
  { "loud", true, MS_SILENT },
  { "mand", false, MS_MANDLOCK },
  { "noacl", true, MS_POSIXACL },
  { "noatime", false, MS_NOATIME },
  { "nodev", false, MS_NODEV },
  { "nodiratime", false, MS_NODIRATIME },
  { "noexec", false, MS_NOEXEC },
  { "noiversion", true, MS_I_VERSION },
  { "nolazytime", true, MS_LAZYTIME },
  { "nomand", true, MS_MANDLOCK },
  { "norelatime", true, MS_RELATIME },
  { "nostrictatime", true, MS_STRICTATIME },
  { "nosuid", false, MS_NOSUID },
  { "nosymfollow", false, MS_NOSYMFOLLOW },
  { "rbind", false, MS_BIND | MS_REC },
  { "relatime", false, MS_RELATIME },
  { "remount", false, MS_REMOUNT },
  { "ro", false, MS_RDONLY },
  { "rw", true, MS_RDONLY },
  { "silent", false, MS_SILENT },
  { "strictatime", false, MS_STRICTATIME },
  { "suid", true, MS_NOSUID },
  { "symfollow", true, MS_NOSYMFOLLOW },
  { "sync", false, MS_SYNCHRONOUS },
};

static const struct
{
  const char *name;
  unsigned long flags;
} propagations[] = {
  { "private", MS_PRIVATE },       { "rprivate", MS_PRIVATE | MS_REC },
  { "shared", MS_SHARED },         { "rshared", MS_SHARED | MS_REC },
  { "slave", MS_SLAVE },           { "rslave", MS_SLAVE | MS_REC },
  { "unbindable", MS_UNBINDABLE }, { "runbindable", MS_UNBINDABLE | MS_REC },
};

bool
spec_propagation (const char *name, unsigned long *flags)
{
  for (size_t i = 0; i < sizeof propagations / sizeof *propagations; i++)
    if (strcmp (name, propagations[i].name) == 0)
      {
        *flags = propagations[i].flags;
        return true;
      }
  return false;
}

/* Options the parser takes that are neither flags nor propagations: the
 * idmapping of a bind (spec.c's parse_mount_idmap). */
static const char *const idmap_options[] = { "idmap", "ridmap" };

const char *
spec_mount_option_name (size_t i)
{
  size_t nf = sizeof mount_flags / sizeof *mount_flags;
  size_t np = sizeof propagations / sizeof *propagations;
  size_t ni = sizeof idmap_options / sizeof *idmap_options;
  if (i < nf)
    return mount_flags[i].name;
  if (i - nf < np)
    return propagations[i - nf].name;
  return i - nf - np < ni ? idmap_options[i - nf - np] : NULL;
}

bool
spec_mount_flag (struct oci_mount *m, const char *opt)
{
  for (size_t i = 0; i < sizeof mount_flags / sizeof *mount_flags; i++)
    if (strcmp (opt, mount_flags[i].name) == 0)
      {
        unsigned long f = mount_flags[i].flag;
        if (mount_flags[i].clear)
          {
            m->flags &= ~f;
            m->clear_flags |= f;
          }
        else
          {
            m->flags |= f;
            m->clear_flags &= ~f;
          }
        return true;
      }
  return false;
}

/* ---- id mappings ---- */

/* The kernel's limit on the lines of a uid_map or gid_map. */
#define MAX_ID_EXTENTS 340

static int
parse_idmap (yajl_val v, const char *path, struct oci_idmap *m, hk_err *err)
{
  int c = 0, h = 0, s = 0;
  if (!YAJL_IS_OBJECT (v))
    return json_error (err, path, NULL, "must be an object");
  if ((c = json_get_u32 (v, path, "containerID", &m->container_id, err)) < 0
      || (h = json_get_u32 (v, path, "hostID", &m->host_id, err)) < 0
      || (s = json_get_u32 (v, path, "size", &m->size, err)) < 0)
    return -1;
  if (!c)
    return json_error (err, path, "containerID", "required");
  if (!h)
    return json_error (err, path, "hostID", "required");
  if (!s || m->size == 0)
    return json_error (err, path, "size", "must be greater than 0");
  if ((uint64_t)m->container_id + m->size > (uint64_t)UINT32_MAX + 1
      || (uint64_t)m->host_id + m->size > (uint64_t)UINT32_MAX + 1)
    return json_error (err, path, "size", "the range runs past the last id (4294967295)");
  return 0;
}

static bool
ranges_overlap (uint32_t a, uint32_t b, uint32_t size_a, uint32_t size_b)
{
  return (uint64_t)a < (uint64_t)b + size_b && (uint64_t)b < (uint64_t)a + size_a;
}

/* The kernel refuses a map whose ranges overlap, on either side, with a
 * bare EINVAL when the map is written: said here, naming the entry. */
static int
check_overlap (const struct oci_idmap *m, size_t i, const char *path, hk_err *err)
{
  for (size_t j = 0; j < i; j++)
    {
      if (ranges_overlap (m[i].container_id, m[j].container_id, m[i].size, m[j].size))
        return json_error (err, path, "containerID", "the range overlaps entry %zu's", j);
      if (ranges_overlap (m[i].host_id, m[j].host_id, m[i].size, m[j].size))
        return json_error (err, path, "hostID", "the range overlaps entry %zu's", j);
    }
  return 0;
}

int
spec_parse_idmaps (yajl_val obj, const char *path, const char *key, struct oci_idmap **out, size_t *n,
                   hk_err *err)
{
  yajl_val a = NULL;
  int r = json_get_array (obj, path, key, &a, err);
  if (r <= 0)
    return r;
  cleanup_free char *base = json_path (path, key);
  if (json_len (a) > MAX_ID_EXTENTS)
    return json_error (err, base, NULL, "at most %d entries (the kernel's limit)", MAX_ID_EXTENTS);
  *out = xcalloc (json_len (a), sizeof **out);
  for (size_t i = 0; i < json_len (a); i++)
    {
      cleanup_free char *p = json_index (base, i);
      if (parse_idmap (json_at (a, i), p, &(*out)[i], err) < 0 || check_overlap (*out, i, p, err) < 0)
        return -1;
      (*n)++;
    }
  return 1;
}
