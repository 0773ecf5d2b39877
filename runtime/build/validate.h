/* validate: what the runtime checks in a spec before anything is built (parse
 * errors are oci/'s) — create's first step, and exec's view of a sandbox's
 * frozen config. */
#ifndef HAKO_RUNTIME_VALIDATE_H
#define HAKO_RUNTIME_VALIDATE_H

#include "lib/err.h"
#include "oci/spec.h"

/* Check spec for a sandbox and adjust it: sandbox.network.mode decides the
 * network namespace, whatever linux.namespaces says.  A refusal of the
 * config's (EINVAL) has kind invalid_config; what this host cannot do keeps
 * its errno's (ENOTSUP: unsupported). */
int sbx_validate (struct oci_spec *spec, hk_err *err);

#endif
