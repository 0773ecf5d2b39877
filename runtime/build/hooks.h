/* hooks: the OCI lifecycle hooks (config.json .hooks) — each one a process
 * given the sandbox's state JSON on stdin, killed when its timeout expires. */
#ifndef HAKO_RUNTIME_HOOKS_H
#define HAKO_RUNTIME_HOOKS_H

#include <sys/types.h>

#include "lib/err.h"
#include "oci/spec.h"
#include "oci/state.h"

struct seccomp_prog;

/* Run the hooks of one kind in order; the first that fails (exits non-zero,
 * is killed, times out or cannot be run) stops the rest and fills err with
 * the hook's kind, path and how it failed.
 *
 * ns_pid < 0: the hook runs in hako's (the runtime's) namespaces.  Else it
 * runs in the namespaces of process ns_pid (the sandbox's first process)
 * wherever they differ from hako's; with path_in_runtime the hook's path is
 * opened in hako's mount namespace first (createContainer), else it is
 * looked up in the sandbox's (startContainer). */
int hooks_run (const struct oci_spec *spec, enum oci_hook_kind kind, const struct oci_state *state,
               pid_t ns_pid, bool path_in_runtime, hk_err *err);
/* startContainer: in the namespaces of ns_pid, its path looked up there, and
 * under the sandbox's seccomp filter (NULL: none), as the sandbox's own
 * process would be: a hook is the sandbox's code and gets no more than it. */
int hooks_run_start (const struct oci_spec *spec, const struct oci_state *state, pid_t ns_pid,
                     const struct seccomp_prog *filter, hk_err *err);

/* For poststart and poststop, whose failures the runtime-spec says are only
 * warnings: each failure is logged (log_warn) and the next hook still runs. */
void hooks_run_warn (const struct oci_spec *spec, enum oci_hook_kind kind, const struct oci_state *state);

/* The spec frozen in a state dir's config.json, for the hooks of start,
 * run and delete.  *spec is NULL (and 0 returned) when it has no hooks. */
int hooks_load (const char *config_path, struct oci_spec **spec, hk_err *err);

#endif
