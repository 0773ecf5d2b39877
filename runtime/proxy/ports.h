/* ports: published ports (`run -p`, `hako port`) — a TCP port of a sandbox
 * with a network namespace of its own, reachable at an address and port of
 * the host's, through a forwarder process outside the sandbox
 * (runtime/proxy/portfwd.c).  No iptables, no route: the forwarder listens
 * in the host's namespace and connects in the sandbox's, so it works
 * rootless, and publishing a port opens nothing outbound.
 *
 * <state>/ports records them, one a line: the host address, the host port
 * asked for (0: any free one), the host port it has now (0 while stopped),
 * the sandbox's port, and the forwarder's pid and start time (0 0: none).
 * A restart (start after stop) publishes the same list again. */
#ifndef HAKO_RUNTIME_PORTS_H
#define HAKO_RUNTIME_PORTS_H

#include <arpa/inet.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/err.h"
#include "oci/spec.h"
#include "runtime/state/store.h"

/* The host address a port is published on when none is given: the host's
 * own loopback, so a sandbox's server (untrusted code's) is reachable by
 * the host's own users and programs, not by the whole network; 0.0.0.0 (or
 * [::]) is asked for by name. */
#define PORTS_DEFAULT_HOST_IP "127.0.0.1"
/* At most this many published ports per sandbox. */
#define PORTS_MAX 256

struct port_map
{
  char host_ip[INET6_ADDRSTRLEN]; /* as inet_ntop writes it */
  uint16_t asked;                 /* the host port asked for; 0: any free one */
  uint16_t host_port;             /* where it listens now; 0: not published now */
  uint16_t port;                  /* the sandbox's */
  pid_t fwd_pid;                  /* its forwarder; 0: none */
  uint64_t fwd_start;
};

/* docker's -p: "[HOSTIP:]HOSTPORT:PORT", "HOSTIP::PORT", or "PORT" (any
 * free host port), each with an optional "/tcp"; an IPv6 HOSTIP in
 * brackets.  Errors (invalid_argument) name the text and what is wrong. */
int port_parse (const char *text, struct port_map *out, hk_err *err);
/* "127.0.0.1:8080", "[::1]:8080" (the host's side). */
void port_host_string (const struct port_map *m, char *buf, size_t size);

/* Whether spec's sandbox can publish ports: a network namespace of its own
 * (network mode none or allowlist, or a new netns in linux.namespaces), and
 * no port that is the allow-list proxy's.  n == 0: always. */
int ports_check_spec (const struct oci_spec *spec, const struct port_map *m, size_t n, hk_err *err);

/* Listen on each map's host address and port (fds[i]; host_port set to the
 * port bound).  Fails (busy: in use; permission: a privileged port without
 * CAP_NET_BIND_SERVICE) with nothing left open. */
int ports_bind (struct port_map *m, size_t n, int *fds, hk_err *err);
void ports_close (int *fds, size_t n);

/* Fork a forwarder for the bound maps (it takes fds: closed here in every
 * case) into the sandbox's network namespace — netns_fd (and userns_fd, -1
 * when it has none) when given, else the namespaces of the process behind
 * sandbox_pidfd — and record them: replacing the record (create, restart)
 * or added to it.  The forwarder ends with the sandbox's process. */
int ports_start (const struct store_entry *e, struct port_map *m, int *fds, size_t n, int sandbox_pidfd,
                 int netns_fd, int userns_fd, bool replace, hk_err *err);
/* Stop every forwarder (waiting until each is gone, so its host ports are
 * free); the record keeps what is published, for a restart.  Never fails. */
void ports_stop (const struct store_entry *e);
/* The record (*m to free; none: 0 maps). */
int ports_read (const struct store_entry *e, struct port_map **m, size_t *n, hk_err *err);

/* `hako port ID`: the sandbox's ports published now (*m to free). */
int sbx_ports (const struct store *st, const char *id, struct port_map **m, size_t *n, hk_err *err);
/* `hako port ID --add`: publish want on a created, running or paused
 * sandbox; *got is the map made.  An ask for any free host port (asked 0)
 * of a port already published on that host address gives that one. */
int sbx_port_add (const struct store *st, const char *id, const struct port_map *want, struct port_map *got,
                  hk_err *err);

#endif
