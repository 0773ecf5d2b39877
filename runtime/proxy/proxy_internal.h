/* proxy_internal: what the proxy's files share — a connection, the proxy's
 * loop state, and the steps each file offers the others.  For runtime/proxy/
 * only. */
#ifndef HAKO_RUNTIME_PROXY_INTERNAL_H
#define HAKO_RUNTIME_PROXY_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "oci/report/proxy_log.h"
#include "runtime/proxy/proxy.h"
#include "runtime/proxy/proxy_dir.h"
#include "runtime/proxy/proxy_http.h"
#include "runtime/proxy/proxy_resolve.h"

#define MAX_ADDRS 8
#define LINGER_MAX (1 << 20) /* bytes read and dropped after an error response */

struct conn;
struct mitm;

struct endpoint
{
  struct conn *c;
  int fd;
  uint32_t events; /* registered with epoll */
  bool hup;        /* closed by the peer: no longer polled, read to the end */
};

enum conn_state
{
  C_HEAD,       /* reading a request head; no upstream or an idle one */
  C_RESOLVING,  /* waiting for the resolver */
  C_CONNECTING, /* waiting for the upstream connect */
  C_OPEN        /* upstream connected */
};

struct conn
{
  struct conn *next, *prev;
  struct endpoint cl, up;
  enum conn_state st;
  bool tunnel;    /* client bytes go upstream unparsed (an opaque CONNECT tunnel) */
  bool connect;   /* the pending upstream is a CONNECT's */
  bool closing;   /* an error response is queued: close once it is written */
  bool lingering; /* ... it is written: reading what the client still sends */
  size_t discarded;
  bool dead;
  char in[HTTP_MAX_HEAD]; /* client bytes not parsed yet */
  size_t in_len;
  uint64_t body_left;
  bool chunked;               /* a chunked request body is being passed on */
  struct http_chunked chunks; /* ... and where it ends */
  char target[300];           /* host:port of the upstream */
  char host[256];             /* its host as asked (name, or address without brackets) */
  char method[24];
  uint16_t port;
  char path[512]; /* the current request's path, no query (for the log) */
  char rule[32];  /* the rule that let the upstream (or tunnel) through */
  /* Secrets whose placeholders the current request carries over plain
   * HTTP, where none is put in: for its log line. */
  char left[4][64];
  size_t n_left;
  char address[64];        /* the address connected to */
  struct resolve_job *job; /* while resolving */
  struct sockaddr_storage addrs[MAX_ADDRS];
  socklen_t addr_len[MAX_ADDRS];
  int n_addrs, next_addr;
  struct dir c2u, u2c;
  uint64_t last;       /* last traffic */
  uint64_t head_since; /* accepted, or the previous head complete */
  struct mitm *m;      /* an intercepted CONNECT: its TLS sessions and requests (proxy_mitm.c) */
  bool again;          /* on the proxy's list of connections to step without an event */
  struct conn *again_next;
};

struct proxy
{
  const struct proxy_cfg *cfg;
  struct egress_policy *pol; /* replaced as a whole by a live update */
  bool pol_owned;            /* ... after which it is the proxy's to free */
  unsigned pol_gen;          /* ... counted: one more each time */
  int ep;
  struct conn *conns;
  struct conn *graveyard; /* closed during this batch of events, freed after it */
  size_t n_conns;
  size_t n_mitm;       /* intercepted connections now, at most PROXY_MAX_MITM */
  bool accept_paused;  /* out of fds: the listener waits for a connection to close */
  size_t logged;       /* bytes written to the log */
  struct conn *again;  /* connections to step once more after this batch of events */
  struct tls_ctx *tls; /* the sandbox's CA and the origins' trust; NULL without interception */
};

/* proxy.c: the loop's helpers. */
void ep_set (struct proxy *p, struct endpoint *e, uint32_t events);
void ep_add (struct proxy *p, struct endpoint *e, uint32_t events);
void up_close (struct proxy *p, struct conn *c);
void conn_close (struct proxy *p, struct conn *c);
/* One line of the decision log: ev's time and sandbox are filled in, and
 * every string the sandbox chose is made printable ASCII. */
void proxy_log (struct proxy *p, struct oci_proxy_event *ev);
/* Client text made printable ASCII (a log line cannot be forged with it). */
void proxy_sanitize (const char *in, char *out, size_t size);
void format_addr (const struct sockaddr_storage *ss, char *out, size_t size);
/* Step c again after this batch of events, though no event comes for it. */
void proxy_again (struct proxy *p, struct conn *c);

/* proxy_conn.c: plain HTTP, CONNECT, the way to an upstream. */
void conn_step (struct proxy *p, struct conn *c);
void drain_resolver (struct proxy *p);
/* Resolve c->host (or take its literal address) and connect, checking each
 * address against the policy; on failure conn_fail. */
void upstream_begin (struct proxy *p, struct conn *c);
/* An error: the plain connection answers status and closes; an intercepted
 * one answers inside its TLS. */
void conn_fail (struct proxy *p, struct conn *c, int status, const char *verdict, const char *rule,
                const char *reason);
/* Cut c if the policy no longer lets its upstream through (a live update). */
void conn_recheck (struct proxy *p, struct conn *c);

/* proxy_ctl.c: the control socket is readable: one live update. */
void proxy_ctl_serve (struct proxy *p);

/* proxy_mitm.c: an intercepted CONNECT (runtime/proxy/proxy_mitm.h). */
int mitm_begin (struct proxy *p, struct conn *c);
void mitm_step (struct proxy *p, struct conn *c);
void mitm_connected (struct proxy *p, struct conn *c);
void mitm_fail (struct proxy *p, struct conn *c, int status, const char *reason);
void mitm_free (struct proxy *p, struct conn *c);
/* The upstream is about to be closed: its TLS session goes first. */
void mitm_up_closed (struct conn *c);
bool mitm_wants_head (const struct conn *c);
/* Its head (or handshake) took longer than allowed: logged and closed. */
void mitm_expire (struct proxy *p, struct conn *c);

#endif
