/* sbxwait: `hako wait` and `hako logs`, a sandbox watched from outside. */
#ifndef HAKO_RUNTIME_SBXWAIT_H
#define HAKO_RUNTIME_SBXWAIT_H

#include "oci/state.h"
#include "runtime/state/sbxlog.h"
#include "runtime/state/store.h"

/* Block until the sandbox's process has ended (at once when it has), then
 * its state with how it ended (status stopped; has_exit unless nobody could
 * learn it: a process without a monitor).  Any number may wait at once. */
int sbx_wait (const struct store *st, const char *id, struct oci_state **out, hk_err *err);
/* The sandbox's log (sbxlog_read), followed until its process is gone. */
int sbx_logs (const struct store *st, const char *id, long tail, bool follow, sbxlog_emit emit, void *arg,
              hk_err *err);

#endif
