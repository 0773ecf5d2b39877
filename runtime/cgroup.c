/* cgroup: the host's cgroup layout (v2, v1, hybrid) and where a process sits.
 * Limits, freezing and per-sandbox cgroups build on this (see the cgroups issue). */
#include "runtime/cgroup.h"

#include <stdio.h>
#include <string.h>
#include <sys/vfs.h>
#include <linux/magic.h>

#include "lib/util.h"

static bool
is_fs (const char *path, long magic)
{
  struct statfs sf;
  return statfs (path, &sf) == 0 && sf.f_type == magic;
}

enum cg_layout
cg_layout (void)
{
  static int cached = -1;
  if (cached >= 0)
    return cached;
  if (is_fs ("/sys/fs/cgroup", CGROUP2_SUPER_MAGIC))
    cached = CG_UNIFIED;
  else if (is_fs ("/sys/fs/cgroup/unified", CGROUP2_SUPER_MAGIC))
    cached = CG_HYBRID;
  else if (is_fs ("/sys/fs/cgroup", TMPFS_MAGIC))
    cached = CG_V1;
  else
    cached = CG_NONE;
  return cached;
}

const char *
cg_v2_mount (void)
{
  switch (cg_layout ())
    {
    case CG_UNIFIED: return "/sys/fs/cgroup";
    case CG_HYBRID: return "/sys/fs/cgroup/unified";
    default: return NULL;
    }
}

char *
cg_self_v2_dir (void)
{
  const char *mnt = cg_v2_mount ();
  if (mnt == NULL)
    return NULL;
  FILE *f = fopen ("/proc/self/cgroup", "re");
  if (f == NULL)
    return NULL;
  char line[4096];
  char *dir = NULL;
  while (fgets (line, sizeof line, f))
    if (str_has_prefix (line, "0::/"))
      {
        line[strcspn (line, "\n")] = '\0';
        /* "0::/" alone is the root; a path never contains "..", but a
         * mangled file must not send the bind anywhere else. */
        if (strstr (line + 3, "/..") == NULL)
          dir = strcmp (line + 3, "/") == 0 ? xstrdup (mnt) : xasprintf ("%s%s", mnt, line + 3);
        break;
      }
  fclose (f);
  return dir;
}
