/* decisions: reading a sandbox's decision log (hako logs --network): the
 * proxy's JSON lines (oci/report/proxy_log.h), from the state dir, or kept
 * in <data-root>/logs by `run --rm`. */
#ifndef HAKO_RUNTIME_DECISIONS_H
#define HAKO_RUNTIME_DECISIONS_H

#include <stdbool.h>
#include <stddef.h>

#include "lib/err.h"
#include "runtime/state/store.h"

/* One line, without its newline: 0 goes on, 1 stops quietly (the reader
 * went away), -1 fails. */
typedef int (*decision_fn) (void *arg, const char *line, size_t len);

/* Each line of id's decision log (tail >= 0: the last tail only); follow:
 * then the new ones as they come, until the sandbox's proxy has ended. */
int sbx_network_log (const struct store *st, const char *id, long tail, bool follow, decision_fn fn,
                     void *arg, hk_err *err);

#endif
