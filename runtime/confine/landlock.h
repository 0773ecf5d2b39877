/* landlock: the sandbox.landlock rules (and those derived from the mounts),
 * checked against the kernel's ABI in the parent and enforced by the child. */
#ifndef HAKO_RUNTIME_LANDLOCK_H
#define HAKO_RUNTIME_LANDLOCK_H

#include <linux/landlock.h>
#include <stdint.h>

#include "lib/err.h"
#include "oci/spec.h"

/* Debian 12's <linux/landlock.h> (linux-libc-dev 6.1) stops at ABI 2; these
 * are the kernel UAPI's values (include/uapi/linux/landlock.h), which never
 * change once released.  Here rather than in landlock.c so tests can name them. */
#ifndef LANDLOCK_ACCESS_FS_REFER
#define LANDLOCK_ACCESS_FS_REFER (1ULL << 13) /* ABI 2 */
#endif
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14) /* ABI 3 */
#endif
#ifndef LANDLOCK_ACCESS_NET_BIND_TCP
#define LANDLOCK_ACCESS_NET_BIND_TCP (1ULL << 0)    /* ABI 4 */
#define LANDLOCK_ACCESS_NET_CONNECT_TCP (1ULL << 1) /* ABI 4 */
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV (1ULL << 15) /* ABI 5 */
#endif
#ifndef LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
#define LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0) /* ABI 6 */
#define LANDLOCK_SCOPE_SIGNAL (1ULL << 1)               /* ABI 6 */
#endif

struct landlock_plan;

/* Parent, before clone: decide the rules and check this kernel can enforce
 * them (a missing ABI is an error naming it when required).  *out is NULL
 * when the spec asks for no Landlock. */
int landlock_prepare (const struct oci_spec *spec, struct landlock_plan **out, hk_err *err);
/* Child, after pivot_root (paths are the sandbox's): create the ruleset and
 * add every rule; *ruleset_fd is -1 when p is NULL.  Errors here still fail
 * create. */
int landlock_build (const struct landlock_plan *p, int *ruleset_fd, hk_err *err);
/* Child, after the wait for start, before seccomp: set no_new_privs (the
 * kernel requires it, or CAP_SYS_ADMIN), restrict self, close the fd.  A
 * ruleset_fd of -1 does nothing. */
int landlock_enforce (int ruleset_fd, hk_err *err);
void landlock_plan_free (struct landlock_plan *p);

/* What "required": false let go because this kernel's ABI is too old, as
 * one line for state.json ("sandbox.landlock.scoped needs ABI 6 (this kernel
 * has ABI 5)"); NULL when everything asked for is enforced. */
const char *landlock_plan_skipped (const struct landlock_plan *p);

/* The highest ABI whose rights hako uses (scoping: 6); a newer kernel is
 * used at this level. */
#define LANDLOCK_ABI_USED 6
/* This kernel's Landlock ABI version; 0 when Landlock is absent or disabled. */
int landlock_abi (void);
/* landlock_prepare as if the kernel had Landlock ABI abi (0: none): for the
 * unit tests, and for `doctor` to say what a profile would need. */
int landlock_prepare_abi (const struct oci_spec *spec, int abi, struct landlock_plan **out, hk_err *err);
/* The plan's rights, for tests: the LANDLOCK_ACCESS_FS_* bits PATH gets (from
 * the rules on it and on every directory above it, as the kernel sums them),
 * the LANDLOCK_ACCESS_NET_* bits of a TCP port, and the handled sets. */
uint64_t landlock_plan_fs_access (const struct landlock_plan *p, const char *path);
uint64_t landlock_plan_port_access (const struct landlock_plan *p, uint16_t port);
void landlock_plan_handled (const struct landlock_plan *p, uint64_t *fs, uint64_t *net, uint64_t *scoped);

#endif
