/* idmap: a new user namespace's uid and gid maps — written by the parent
 * (directly as root or for one id of the caller's own, else through
 * newuidmap/newgidmap), and seen from the host: which host id a sandbox id
 * is, whether the sandbox can reach a host path. */
#ifndef HAKO_RUNTIME_IDMAP_H
#define HAKO_RUNTIME_IDMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/err.h"
#include "oci/spec.h"

/* Write PID's uid_map and gid_map from spec->linux's mappings. */
int idmap_write (pid_t pid, const struct oci_spec *spec, hk_err *err);
/* Whether MAP needs newuidmap/newgidmap: an unprivileged caller mapping
 * anything but its own id (own_id), alone, one id wide. */
bool idmap_needs_helper (const struct oci_idmap *map, size_t n, unsigned own_id, bool privileged);

/* A user namespace with these maps, held by an fd (its one process is
 * gone by the time this returns): for idmapping mounts.  Needs root. */
int idmap_userns_open (const struct oci_idmap *uid, size_t n_uid, const struct oci_idmap *gid, size_t n_gid,
                       hk_err *err);
/* sandbox.idmap: a detached clone of the mount tree at PATH (recursive),
 * idmapped to a user namespace with the spec's maps, so that what is owned
 * by id N on disk appears owned by N inside the sandbox.  *tree_fd is for
 * move_mount(2) in the child.  userns_fd: a user namespace with those maps
 * (the sandbox's own, once its maps are written), or -1 for one made here.
 * An unprivileged caller, a spec without a
 * user namespace or a filesystem that cannot be idmapped is an error
 * naming it: ownership never changes silently. */
int idmap_open_tree (const char *path, const struct oci_spec *spec, int userns_fd, int *tree_fd, hk_err *err);

/* The type of the filesystem path is on ("ext4", "tmpfs"...), or "this
 * filesystem" when it has no name here: for messages. */
const char *idmap_fs_name (const char *path);

/* The host id that sandbox id maps to; false when it is not mapped. */
bool idmap_to_host (const struct oci_idmap *m, size_t n, uint32_t id, uint32_t *host);

/* Whether host id is mapped into the namespace (it has a sandbox id). */
bool idmap_has_host (const struct oci_idmap *m, size_t n, uint32_t host);

/* In a user namespace the sandbox's root is an unprivileged host id: each
 * directory on the way to path must be searchable by it, or the sandbox's
 * setup fails deep inside with a bare EACCES.  Checked up front so the error
 * names the directory and the id.  No-op without a user namespace. */
int idmap_check_reachable (const struct oci_spec *spec, const char *path, hk_err *err);

#endif
