/* resources: linux.resources on its own — the `update -r` file, merging an
 * update into a sandbox's limits, and writing them back into its config. */
#ifndef HAKO_OCI_RESOURCES_H
#define HAKO_OCI_RESOURCES_H

#include <stddef.h>

#include "lib/err.h"
#include "oci/spec.h"

/* Parse a linux.resources object (runc's `update -r` file).  Only what
 * update can change is accepted: memory (limit, reservation, swap), pids and
 * cpu (shares, quota, period, cpus, mems); anything else fails naming it. */
int oci_resources_parse (const char *text, size_t len, struct oci_resources *out, hk_err *err);
void oci_resources_free (struct oci_resources *r);
/* devices may come with an update (containerd's CRI sends the container's
 * whole linux.resources) when they are the sandbox's own, rule for rule:
 * anything else fails. */
int oci_resources_check_devices (const struct oci_resources *cur, const struct oci_resources *upd,
                                 hk_err *err);

/* Every field upd sets, set in dst (strings copied). */
void oci_resources_merge (struct oci_resources *dst, const struct oci_resources *upd);

/* config (a config.json's text) with linux.resources' memory, cpu and pids
 * members rewritten from r (their other members, and everything else in the
 * config, kept as written).  Compact JSON in *out. */
int oci_config_set_resources (const char *config, size_t len, const struct oci_resources *r, char **out,
                              size_t *out_len, hk_err *err);

#endif
