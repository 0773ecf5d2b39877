/* volumes: what create and run say about a -v bind the sandbox will not be
 * able to use.  In a user namespace the sandbox's user is another host uid
 * (the host profile's root is host uid 1000000000): a directory of the
 * caller's, root's 0755 or a mktemp -d 0700 one, is bound but cannot be
 * written, or not even entered, and the command fails deep inside with a
 * bare "Permission denied".  Idmapped (:idmap), it acts as its own ids on
 * disk instead: its root cannot write a checkout of uid 1000's either.
 * Said once, at create, with the fixes.  Only the command line's binds: a
 * bundle's mounts are its author's (podman and containerd set up their
 * own). */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "cmd/config/internal.h"
#include "lib/log.h"
#include "lib/util.h"
#include "runtime/build/idmap.h"
#include "runtime/confine/caps.h"

/* The sandbox's process as the ids it acts as on a bind: host ids (its
 * uid, gid and groups through the sandbox's mappings) or, idmapped, the
 * on-disk ids, which are the sandbox's own. */
struct host_ids
{
  uid_t uid, in_uid;
  gid_t gid;
  gid_t groups[64];
  size_t n_groups;
  bool idmapped;
};

/* An id through the sandbox's map, or itself when idmapped (but only one
 * the map covers: another is nobody on disk too). */
static bool
id_as (const struct oci_idmap *m, size_t n, uint32_t id, bool idmapped, uint32_t *out)
{
  *out = id;
  return idmapped ? idmap_to_host (m, n, id, &(uint32_t){ 0 }) : idmap_to_host (m, n, id, out);
}

static bool
host_ids_of (const struct oci_spec *spec, bool idmapped, struct host_ids *h)
{
  const struct oci_linux *l = &spec->linux;
  const struct oci_user *u = &spec->process->user;
  uint32_t id;
  h->in_uid = u->uid;
  h->idmapped = idmapped;
  if (!id_as (l->uid_mappings, l->n_uid_mappings, u->uid, idmapped, &id))
    return false;
  h->uid = id;
  if (!id_as (l->gid_mappings, l->n_gid_mappings, u->gid, idmapped, &id))
    return false;
  h->gid = id;
  h->n_groups = 0;
  for (size_t i = 0; i < u->n_additional_gids && h->n_groups < sizeof h->groups / sizeof *h->groups; i++)
    if (id_as (l->gid_mappings, l->n_gid_mappings, u->additional_gids[i], idmapped, &id))
      h->groups[h->n_groups++] = id;
  return true;
}

/* Whether h may access fd's inode as mode (access(2)'s R_OK, W_OK, X_OK),
 * asked of the kernel by a child that takes h's ids: the mode bits, ACLs,
 * owner and groups, as the sandbox's process will be.  Only the inode: the
 * sandbox gets it bound, not the directories above it.  -1: no answer (hako
 * is not root, a kernel without faccessat2). */
static int
may_access (int fd, const struct host_ids *h, int mode)
{
  pid_t pid = fork ();
  if (pid < 0)
    return -1;
  if (pid == 0)
    {
      /* No capability either, not even as uid 0 (idmapped root): the
       * sandbox's own count only where overridden says. */
      struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
      struct __user_cap_data_struct none[2] = { 0 };
      if (setgroups (h->n_groups, h->groups) < 0 || setresgid (h->gid, h->gid, h->gid) < 0
          || setresuid (h->uid, h->uid, h->uid) < 0 || syscall (SYS_capset, &hdr, none) < 0)
        _exit (2);
      _exit (faccessat (fd, "", mode, AT_EMPTY_PATH | AT_EACCESS) == 0 ? 0 : errno == EACCES ? 1 : 2);
    }
  int ws;
  while (waitpid (pid, &ws, 0) < 0)
    if (errno != EINTR)
      return -1;
  return WIFEXITED (ws) && WEXITSTATUS (ws) < 2 ? WEXITSTATUS (ws) == 0 : -1;
}

/* The sandbox's capabilities count on an inode only when its owner and
 * group are both mapped (capable_wrt_inode_uidgid): as host ids, or,
 * idmapped, as the on-disk ids the map covers. */
static bool
overridden (const struct oci_spec *spec, const struct host_ids *h, const struct stat *st, int cap)
{
  const struct oci_linux *l = &spec->linux;
  const struct oci_process *p = spec->process;
  uint32_t u, g;
  return p->has_caps && caps_any_has (&p->caps, cap)
         && id_as (l->uid_mappings, l->n_uid_mappings, st->st_uid, h->idmapped, &u)
         && id_as (l->gid_mappings, l->n_gid_mappings, st->st_gid, h->idmapped, &g)
         && (h->idmapped
             || (idmap_has_host (l->uid_mappings, l->n_uid_mappings, st->st_uid)
                 && idmap_has_host (l->gid_mappings, l->n_gid_mappings, st->st_gid)));
}

static const char cannot_write[] = "cannot write to";

/* What h cannot do to fd's inode, or NULL. */
static const char *
refused (const struct oci_spec *spec, const struct host_ids *h, int fd, const struct stat *st, bool ro)
{
  if (S_ISDIR (st->st_mode) && !overridden (spec, h, st, CAP_DAC_READ_SEARCH)
      && may_access (fd, h, X_OK) == 0)
    return "cannot enter";
  if (ro && !overridden (spec, h, st, CAP_DAC_READ_SEARCH) && may_access (fd, h, R_OK) == 0)
    return "cannot read";
  if (!ro && !overridden (spec, h, st, CAP_DAC_OVERRIDE) && may_access (fd, h, W_OK) == 0)
    return cannot_write;
  return NULL;
}

static void
warn_one (const struct oci_spec *spec, const struct oci_override_mount *m, const struct host_ids *h)
{
  bool ro = strv_contains (m->options, "ro");
  cleanup_close int fd = open (m->source, O_PATH | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || fstat (fd, &st) < 0)
    return;
  const char *what = refused (spec, h, fd, &st, ro);
  if (what == NULL)
    return;
  cleanup_free char *who = h->in_uid == 0 ? xstrdup ("the sandbox's root")
                                          : xasprintf ("the sandbox's user %u", (unsigned)h->in_uid);
  const char *effect = what == cannot_write ? "writes there fail with \"Permission denied\""
                                            : "nothing in it can be read inside";
  cleanup_free char *fix
      = h->idmapped
            ? xasprintf ("run as a --user the host lets %s it (its owner: --user %u)", ro ? "read" : "write",
                         (unsigned)st.st_uid)
            : xasprintf ("add :idmap to see it with its host owners, as whom the sandbox then writes "
                         "(hako-run(8)), or chown %u %s on the host, or run as a --user the host lets "
                         "%s it",
                         (unsigned)h->uid, m->source, ro ? "read" : "write");
  log_warn ("-v %s:%s%s: %s (host uid %u%s) %s %s (mode %04o, owner %u, group %u): %s; %s", m->source,
            m->destination, h->idmapped ? " (idmapped)" : "", who, (unsigned)h->uid,
            h->idmapped ? " through the idmapping" : "", what, m->source, (unsigned)(st.st_mode & 07777),
            (unsigned)st.st_uid, (unsigned)st.st_gid, effect, fix);
}

void
cmd_warn_volumes (const struct oci_spec *spec, const struct cmd_overrides *ov)
{
  struct host_ids plain, idmapped;
  if (ov->o.n_mounts == 0 || spec->process == NULL || !oci_spec_ns (spec, OCI_NS_USER) || geteuid () != 0
      || !host_ids_of (spec, false, &plain) || !host_ids_of (spec, true, &idmapped))
    return;
  for (size_t i = 0; i < ov->o.n_mounts; i++)
    {
      const struct oci_override_mount *m = &ov->o.mounts[i];
      bool idmap = strv_contains (m->options, "idmap") || strv_contains (m->options, "ridmap");
      if (strcmp (m->type, "bind") == 0)
        warn_one (spec, m, idmap ? &idmapped : &plain);
    }
}
