/* netpolicy: the proxied network modes (allowlist, denylist) around a
 * sandbox — the proxy variables of its processes, and the proxy's life:
 * a listening socket made inside the sandbox's netns by its first process,
 * served by a process in the host's netns. */

/* The room runtime/proxy/ (this is the header the other rooms use): the
 * network a sandbox reaches through hako — the egress proxy of the
 * allowlist and denylist modes (its policy, its loop, TLS interception,
 * secrets, the decision log, live updates; docs/architecture.md, "The
 * egress proxy"), its life around a sandbox (netpolicy), and published
 * ports (ports, portfwd).  It may use the rooms below it: cgroup, state,
 * node (node.json's egress trust and hosts) (tests/style/layers.sh). */
#ifndef HAKO_RUNTIME_NETPOLICY_H
#define HAKO_RUNTIME_NETPOLICY_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/err.h"
#include "oci/spec.h"
#include "runtime/state/store.h"

/* Where the proxy listens inside the sandbox. */
#define NETPOLICY_PROXY_ADDR "127.0.0.1"
#define NETPOLICY_PROXY_PORT 3128

/* The allowlist and denylist modes, whose way out is the proxy. */
bool netpolicy_proxied (const struct oci_spec *spec);

/* Proxied modes: add the proxy variables to the process's environment.
 * Other modes: nothing. */
int netpolicy_prepare (struct oci_spec *spec, hk_err *err);

/* A pod's container joining the pod's network namespace in allowlist mode
 * (sandbox.net_join): the netns at path must have no interface but lo, so
 * the pod's proxy is its only way out. */
int netpolicy_check_joined (const char *path, hk_err *err);

/* A new copy of env, with HTTP_PROXY, HTTPS_PROXY, http_proxy, https_proxy,
 * ALL_PROXY and NO_PROXY set when spec is in a proxied mode (for exec).
 * NO_PROXY is "localhost,127.0.0.1,::1" (the sandbox's own lo), or empty
 * when the allow-list opens a loopback address of the host's. */
char **netpolicy_env (const struct oci_spec *spec, char *const *env);

/* Whether spec's sandbox gets a proxy of its own: a proxied mode, not a
 * pod's container (which shares its pod's). */
bool netpolicy_has_proxy (const struct oci_spec *spec);

/* In the sandbox's first process, in its new network namespace with lo up
 * and before anything of the sandbox's runs: the proxy's listening socket,
 * NETPOLICY_PROXY_ADDR:NETPOLICY_PROXY_PORT (non-blocking, close-on-exec),
 * for hako to receive over the sync socket (spawn.h).  -1 on error. */
int netpolicy_listen (hk_err *err);

/* Allowlist mode: start the sandbox's proxy.  sandbox_pidfd is the
 * sandbox's first process, set up: the proxy exits when it exits.
 * *listen_fd is the listening socket that process made in its network
 * namespace (netpolicy_listen); proxy_start takes it (the proxy keeps it,
 * hako closes its copy) and sets *listen_fd to -1, in every mode.  The
 * proxy's pid and start time go to <state>/proxy.pid, its decisions to
 * <state>/proxy.log.  Other modes: nothing.  A proxy already recorded is
 * stopped first, so a restarted sandbox (a new process in a new netns,
 * with a new socket) can call it again.  learn_fd >= 0 (`run --learn`):
 * the proxy forwards every destination, sees inside every HTTPS
 * connection, and appends its decision lines there (proxy_cfg). */
int proxy_start (const struct store_entry *e, const struct oci_spec *spec, int sandbox_pidfd, int *listen_fd,
                 int learn_fd, hk_err *err);
/* Kill the sandbox's proxy, if it has one, wait for it and forget it.
 * Never fails: a proxy already gone is fine. */
void proxy_stop (const struct store_entry *e);
/* Stop the proxy and copy its log to dest (mode 0600, replacing what was
 * there): `run --rm` keeps it past the state dir.  No log (another network
 * mode): nothing, *kept false. */
int proxy_log_keep (const struct store_entry *e, const char *dest, bool *kept, hk_err *err);

#endif
