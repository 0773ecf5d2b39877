/* sbxstate: a sandbox's state as it is now, from the state store. */
#ifndef HAKO_RUNTIME_SBXSTATE_H
#define HAKO_RUNTIME_SBXSTATE_H

#include <sys/types.h>

#include "lib/err.h"
#include "oci/state.h"
#include "runtime/state/store.h"

/* The state with its status refreshed from the process (a dead pid reads as stopped). */
int sbx_state (const struct store *st, const char *id, struct oci_state **out, hk_err *err);
/* Refresh s, read from e's state.json, from the host: stopped when its
 * process is gone (with how it ended), running once a created one started. */
void sbx_refresh_status (const struct store_entry *e, struct oci_state *s);
/* The egress proxy (allowlist and denylist network modes): the process its
 * record <state dir>/proxy.pid names (written by proxy_start,
 * runtime/proxy/netpolicy.c), while it lives; 0 when none does. */
pid_t sbx_proxy_pid (const struct store_entry *e);

#endif
