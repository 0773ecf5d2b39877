/* caps: the process's five capability sets (libcap), applied in the child. */
#ifndef HAKO_RUNTIME_CAPS_H
#define HAKO_RUNTIME_CAPS_H

#include <stdbool.h>

#include "lib/err.h"
#include "oci/spec.h"

/* Resolve every name in the spec's sets; an unknown name is an error naming it
 * (checked in the parent, before anything is built). */
int caps_validate (const struct oci_caps *caps, hk_err *err);
/* Whether any of the five sets names capability cap (CAP_*). */
bool caps_any_has (const struct oci_caps *caps, int cap);
/* Drop the bounding set to caps->bounding.  Needs CAP_SETPCAP: call before
 * switching user. */
int caps_drop_bounding (const struct oci_caps *caps, hk_err *err);
/* Set effective, permitted and inheritable, then the ambient set.  Call after
 * switching user (with PR_SET_KEEPCAPS set across the switch). */
int caps_apply (const struct oci_caps *caps, hk_err *err);

#endif
