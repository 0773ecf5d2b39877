/* landlock: the sandbox.landlock rules (and those derived from the mounts),
 * checked against the kernel's ABI in the parent and enforced by the child. */
#include "runtime/landlock.h"

#include <errno.h>

int
landlock_prepare (const struct oci_spec *spec, struct landlock_plan **out, hk_err *err)
{
  *out = NULL;
  if (spec->sandbox.landlock.present)
    return err_set (err, ENOTSUP, "sandbox.landlock: not supported by this hako yet");
  return 0;
}

int
landlock_build (const struct landlock_plan *p, int *ruleset_fd, hk_err *err)
{
  *ruleset_fd = -1;
  return 0;
}

int
landlock_enforce (int ruleset_fd, hk_err *err)
{
  return 0;
}

void
landlock_plan_free (struct landlock_plan *p)
{
}
