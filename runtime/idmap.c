/* idmap: a user namespace's uid/gid mappings seen from the host. */
#include "runtime/idmap.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "lib/util.h"

bool
idmap_to_host (const struct oci_idmap *m, size_t n, uint32_t id, uint32_t *host)
{
  for (size_t i = 0; i < n; i++)
    if (id >= m[i].container_id && id - m[i].container_id < m[i].size)
      {
        *host = m[i].host_id + (id - m[i].container_id);
        return true;
      }
  return false;
}

bool
idmap_has_host (const struct oci_idmap *m, size_t n, uint32_t host)
{
  for (size_t i = 0; i < n; i++)
    if (host >= m[i].host_id && host - m[i].host_id < m[i].size)
      return true;
  return false;
}

/* Can root of the namespace search dir?  Its capabilities count only on
 * inodes whose owner and group are both mapped (capable_wrt_inode_uidgid);
 * otherwise only the permission bits that apply to it do. */
static bool
searchable (const struct oci_spec *spec, const struct stat *sb, uint32_t root_uid, uint32_t root_gid)
{
  const struct oci_linux *l = &spec->linux;
  bool uid_mapped = idmap_has_host (l->uid_mappings, l->n_uid_mappings, sb->st_uid);
  bool gid_mapped = idmap_has_host (l->gid_mappings, l->n_gid_mappings, sb->st_gid);
  if ((uid_mapped && gid_mapped) || (sb->st_mode & S_IXOTH))
    return true;
  if (sb->st_uid == root_uid)
    return sb->st_mode & S_IXUSR;
  return sb->st_gid == root_gid && (sb->st_mode & S_IXGRP);
}

int
idmap_check_reachable (const struct oci_spec *spec, const char *path, hk_err *err)
{
  const struct oci_linux *l = &spec->linux;
  uint32_t uid, gid;
  if (!oci_spec_ns (spec, OCI_NS_USER)
      || !idmap_to_host (l->uid_mappings, l->n_uid_mappings, 0, &uid)
      || !idmap_to_host (l->gid_mappings, l->n_gid_mappings, 0, &gid))
    return 0;
  cleanup_free char *p = xstrdup (path);
  /* Every directory above path, from / down. */
  for (char *slash = strchr (p + 1, '/'); slash; slash = strchr (slash + 1, '/'))
    {
      *slash = '\0';
      struct stat sb;
      if (stat (p, &sb) == 0 && S_ISDIR (sb.st_mode) && !searchable (spec, &sb, uid, gid))
        return err_set (err, EACCES, "%s: the sandbox's root user is host uid %u, which cannot "
                        "enter %s (mode %03o, owner %u): make it searchable (chmod o+x %s)",
                        path, uid, p, sb.st_mode & 07777, (unsigned) sb.st_uid, p);
      *slash = '/';
    }
  return 0;
}
