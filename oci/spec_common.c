/* spec_common: what the config parser's sections share — the mount options
 * and propagations by name (for .mounts, linux.rootfsPropagation and `hako
 * features`); the path check and the refusal of SELinux labels are
 * spec_common.h's.  spec.c, spec_linux.c, spec_sandbox.c and annotations.c
 * use it; it uses none of them. */
#include "oci/spec_common.h"

#include <string.h>
#include <sys/mount.h>

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

const char *
spec_mount_option_name (size_t i)
{
  size_t nf = sizeof mount_flags / sizeof *mount_flags;
  size_t np = sizeof propagations / sizeof *propagations;
  if (i < nf)
    return mount_flags[i].name;
  return i - nf < np ? propagations[i - nf].name : NULL;
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
