/* proxy: a proxied sandbox's way out — an HTTP proxy (CONNECT and
 * absolute-URI requests) on one epoll loop, checking every destination and
 * request against the egress policy (policy.h), relaying opaque tunnels
 * with splice and intercepting the CONNECTs the rules say to see inside. */
#ifndef HAKO_RUNTIME_PROXY_H
#define HAKO_RUNTIME_PROXY_H

#include "runtime/proxy/policy.h"
#include "runtime/state/store.h"

struct tls_ctx;

/* Bounds: a client that sends no complete request head within
 * HEAD_TIMEOUT (from its connection, or from its previous request), or a
 * connection with no traffic for IDLE_TIMEOUT, is closed; at most MAX_CONNS
 * connections at once (more are closed on accept); the decision log stops
 * at LOG_MAX bytes (its last line says so), since it lives on the state
 * dir's tmpfs and a sandbox could otherwise fill the host's memory with
 * refused requests. */
#define PROXY_HEAD_TIMEOUT_MS 30000
#define PROXY_IDLE_TIMEOUT_MS 600000
#define PROXY_MAX_CONNS 1024
/* Intercepted connections at once (each holds TLS sessions and buffers:
 * proxy_mitm.h); a CONNECT past them is refused with 503. */
#define PROXY_MAX_MITM 256
#define PROXY_LOG_MAX (8 << 20)

struct proxy_cfg
{
  int listen_fd; /* listening TCP socket (in the sandbox's netns), non-blocking */
  int watch_fd;  /* pidfd of the sandbox's process: the proxy ends when it exits; -1 none */
  int log_fd;    /* decisions as JSON lines (O_APPEND); -1 none */
  /* `run --learn` (hako-learn(7)): >= 0, every destination is forwarded
   * (the rules unused but for the host's own and neighbouring addresses),
   * every HTTPS connection intercepted, and each decision line (the log's)
   * appended here too, for the learner; the run is said to be unconfined. */
  int learn_fd;
  /* The control socket (<state>/proxy.sock, root's): `hako update` sends a
   * new policy over it (proxy_ctl.c); -1 none. */
  int ctl_fd;
  const char *sandbox; /* its id, for the log */
  const struct store_entry *store;
  struct egress_policy *policy;
  struct tls_ctx *tls; /* the sandbox's CA and the origins' trust; NULL: no interception */
  uint64_t head_timeout_ms;
};

/* Serve until watch_fd reports its process gone.  Returns 0 then, -1 if the
 * loop itself cannot run (epoll). */
int proxy_run (const struct proxy_cfg *cfg);

#endif
