/* limits: a live sandbox's resources — update its limits, read its usage,
 * list its processes, and watch its events (OOM kills, periodic stats). */
#ifndef HAKO_RUNTIME_LIMITS_H
#define HAKO_RUNTIME_LIMITS_H

#include <stdint.h>

#include "lib/err.h"
#include "oci/report/stats.h"
#include "oci/spec.h"
#include "runtime/state/store.h"

/* Change the sandbox's limits to every field upd sets: in its cgroups first
 * (see cg_update), then in its frozen config.json (replaced atomically), so
 * that a restart keeps them.  A new memory limit goes through admission. */
int sbx_update (const struct store *st, const char *id, const struct oci_resources *upd, hk_err *err);

/* The sandbox's usage now.  It must be created, running or paused. */
int sbx_stats (const struct store *st, const char *id, struct oci_stats *out, hk_err *err);

/* The sandbox's processes (from its cgroup; without one, from its pid
 * namespace), sorted by pid. */
int sbx_ps (const struct store *st, const char *id, struct oci_proc **out, size_t *n, hk_err *err);

/* Called for each event: type "oom" (stats NULL) or "stats". */
typedef void (*sbx_event_fn) (const char *type, const struct oci_stats *stats, void *arg);
/* Report the sandbox's events until its process exits: every OOM kill, and
 * its stats every interval_ms (0: none). */
int sbx_events (const struct store *st, const char *id, uint64_t interval_ms, sbx_event_fn fn, void *arg,
                hk_err *err);

#endif
