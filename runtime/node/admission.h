/* admission: the node's memory pool (hako-node(5)) — whether a sandbox may be
 * admitted, and the record of what each live sandbox reserved. */

/* The room runtime/node/ (this is its main header): what the node's config
 * (node.json, hako-node(5)) grants — the memory pool and the device slots a
 * sandbox is admitted to (admission), and the consent the org.hako.*
 * annotations need (consent).  It may use the rooms below it: cgroup, state
 * (tests/style/layers.sh). */
#ifndef HAKO_RUNTIME_ADMISSION_H
#define HAKO_RUNTIME_ADMISSION_H

#include <stdbool.h>
#include <stdint.h>

#include "lib/err.h"
#include "oci/node.h"
#include "oci/spec.h"
#include "runtime/state/store.h"

#define ADMISSION_DEFAULT_CONFIG "/etc/hako/node.json"

/* The node config to use: path (the global --node-config), else
 * $HAKO_NODE_CONFIG, else /etc/hako/node.json.  NULL resets to that order. */
void admission_set_config (const char *path);

/* Read the node config.  *present is false when there is none: the default
 * path missing means no admission; a path given explicitly (option or
 * environment) must exist. */
int admission_load_node (struct oci_node *node, bool *present, hk_err *err);

/* The limits the profiles write on this machine (oci_profile_limits): the
 * node config's default_memory and default_pids, else hako's own, computed
 * from this machine's memory now. */
int admission_profile_limits (struct oci_profile_limits *out, hk_err *err);

/* What a sandbox reserves from the pool: its memory limit
 * (linux.resources.memory.limit), 0 when it has none.  The limit and not the
 * reservation: the limit is what the kernel holds it to, so the sum of the
 * limits is what the node can be asked for; a soft reservation is not. */
uint64_t admission_request (const struct oci_spec *spec, bool *has_limit);

/* The decision alone: may a sandbox asking request (with has_limit) join
 * sandboxes that reserve reserved in all?  Fails (EBUSY / EINVAL) with the
 * numbers. */
int admission_check (const struct oci_node *node, uint64_t reserved, uint64_t request, bool has_limit,
                     hk_err *err);

/* The sum of the reservations of the live sandboxes under st, but id's (NULL:
 * all).  Live: created, running or paused, or being created (no state yet,
 * its lock held); a stopped one, or the remains of a create that died,
 * counts for nothing. */
int admission_reserved (const struct store *st, const char *id, uint64_t *sum, hk_err *err);

/* Admit sandbox id (its state dir exists) with spec, or refuse it: under a
 * flock of the state root, so that two creates cannot both take the last of
 * the pool, sum the live reservations, check, and record id's in
 * <root>/<id>/reservation.  No node config: nothing is checked or recorded.
 * Called by create, and by start of a stopped sandbox (whose own earlier
 * record is replaced), and by update of the memory limit. */
int admission_reserve (const struct store *st, const char *id, const struct oci_spec *spec, hk_err *err);

/* Devices (node.json "devices"): the CDI names a sandbox holds
 * (.sandbox.cdi_devices) are recorded in <root>/<id>/devices by
 * admission_reserve, under the same lock; a live sandbox holds them, a
 * stopped one (stop, hibernate) none, a paused one keeps them. */
#define ADMISSION_DEVICES_FILE "devices"
/* The names id's record lists (NULL: none). */
char **admission_read_devices (const struct store *st, const char *id);
/* Refuse (kind admission) when one of names the node gives slots has none
 * free among the live sandboxes but id.  The caller holds the pool's lock. */
int admission_check_devices (const struct store *st, const char *id, const struct oci_node *node,
                             char *const *names, hk_err *err);

#endif
