/* idmap: a new user namespace's uid and gid maps, written by the parent —
 * directly as root or for one id of the caller's own, else through
 * newuidmap/newgidmap. */
#ifndef HAKO_RUNTIME_IDMAP_H
#define HAKO_RUNTIME_IDMAP_H

#include <stdbool.h>
#include <sys/types.h>

#include "lib/err.h"
#include "oci/spec.h"

/* Write PID's uid_map and gid_map from spec->linux's mappings. */
int idmap_write (pid_t pid, const struct oci_spec *spec, hk_err *err);
/* Whether MAP needs newuidmap/newgidmap: an unprivileged caller mapping
 * anything but its own id (own_id), alone, one id wide. */
bool idmap_needs_helper (const struct oci_idmap *map, size_t n, unsigned own_id, bool privileged);

#endif
