/* seccomp: the spec's linux.seccomp compiled to BPF in the parent (never in
 * the child's hot path) and installed by the child as the very last step. */
#include "runtime/seccomp.h"

#include <errno.h>

int
seccomp_prepare (const struct oci_spec *spec, struct seccomp_prog **out, hk_err *err)
{
  *out = NULL;
  if (spec->linux.seccomp)
    return err_set (err, ENOTSUP, "linux.seccomp: not supported by this hako yet");
  return 0;
}

int
seccomp_install (const struct seccomp_prog *p, hk_err *err)
{
  return 0;
}

void
seccomp_prog_free (struct seccomp_prog *p)
{
}
