/* mount_src: the sources of a sandbox's bind mounts, opened for a child in a
 * new user namespace by hako (real root) inside the child's mount namespace. */
#ifndef HAKO_RUNTIME_MOUNT_SRC_H
#define HAKO_RUNTIME_MOUNT_SRC_H

#include <stdbool.h>
#include <sys/types.h>

#include "lib/err.h"
#include "oci/spec.h"

/* Whether the child's bind sources should be opened for it: it is in a new
 * user namespace made by real root, and the spec has a bind mount. */
bool mnt_src_wanted (const struct oci_spec *spec, bool userns);

/* Open every bind mount's source (relative ones against bundle) with O_PATH
 * in the mount namespace of the process pidfd/pid names, as the caller, and
 * return them in *fds: one per spec mount, -1 for the others.  A source
 * that cannot be opened fails, naming it. */
int mnt_src_open (int pidfd, pid_t pid, const struct oci_spec *spec, const char *bundle, int **fds,
                  hk_err *err);

/* Close and free what mnt_src_open returned. */
void mnt_src_free (int *fds, size_t n);

#endif
