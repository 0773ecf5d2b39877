/* learn_internal: what oci/learn.c and oci/learn_check.c share (yajl
 * trees stay inside oci/). */
#ifndef HAKO_OCI_LEARN_INTERNAL_H
#define HAKO_OCI_LEARN_INTERNAL_H

#include "lib/err.h"
#include "oci/json.h"

/* The profile's sandbox object and its landlock, network and seccomp
 * members (NULL when absent): -1 and an ERR_INVALID_CONFIG error naming
 * the field for what `run --learn` never writes. */
int oci_learn_check_profile (yajl_val psb, yajl_val pll, yajl_val pnet, yajl_val psc, hk_err *err);

#endif
