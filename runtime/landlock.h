/* landlock: the sandbox.landlock rules (and those derived from the mounts),
 * checked against the kernel's ABI in the parent and enforced by the child. */
#ifndef HAKO_RUNTIME_LANDLOCK_H
#define HAKO_RUNTIME_LANDLOCK_H

#include "lib/err.h"
#include "oci/spec.h"

struct landlock_plan;

/* Parent, before clone: decide the rules and check this kernel can enforce
 * them (a missing ABI is an error naming it when required).  *out is NULL
 * when the spec asks for no Landlock. */
int landlock_prepare (const struct oci_spec *spec, struct landlock_plan **out, hk_err *err);
/* Child, after pivot_root (paths are the sandbox's): create the ruleset and
 * add every rule; *ruleset_fd is -1 when p is NULL.  Errors here still fail
 * create. */
int landlock_build (const struct landlock_plan *p, int *ruleset_fd, hk_err *err);
/* Child, after the wait for start, before seccomp: restrict self.  A
 * ruleset_fd of -1 does nothing. */
int landlock_enforce (int ruleset_fd, hk_err *err);
void landlock_plan_free (struct landlock_plan *p);

#endif
