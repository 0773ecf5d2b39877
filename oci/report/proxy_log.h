/* proxy_log: one JSON line per decision of a sandbox's network proxy: each
 * request (plain HTTP, CONNECT, a request inside an intercepted tunnel),
 * what was decided and the rule that decided it (hako-logs(8) --network;
 * learning reads the same lines, hako-learn(7)). */
#ifndef HAKO_OCI_PROXY_LOG_H
#define HAKO_OCI_PROXY_LOG_H

#include <stdbool.h>
#include <stdint.h>

struct oci_proxy_event
{
  const char *time;    /* RFC 3339 UTC */
  const char *sandbox; /* the sandbox's id */
  const char *method;  /* "CONNECT", "GET", ...; may be NULL */
  const char *scheme;  /* "http", or "https" for a request inside an intercepted tunnel; NULL for CONNECT */
  const char *host;    /* as asked (a name, or an address without brackets); may be NULL */
  unsigned port;       /* 0: none */
  const char *path;    /* the request's path, its query left out; NULL for CONNECT */
  const char *target;  /* "host:port"; may be NULL when the request was unreadable */
  const char *verdict; /* "allow", "deny", "error", "learn" or "log-full" */
  const char *rule;    /* "allow[N]", "deny[N]", "default", "default[WHY]", "learn"; may be NULL */
  const char *reason;  /* one line; may be NULL */
  const char *address; /* the address connected to; may be NULL */
  const char *tunnel;  /* CONNECT: "opaque" or "intercepted"; NULL otherwise */
  int status;          /* the HTTP status the client got (0: none, the connection just ended) */
  bool has_bytes;      /* sent and received below are known */
  uint64_t sent;       /* bytes from the client to the origin (request bodies; a tunnel's all) */
  uint64_t received;   /* bytes from the origin to the client (responses, heads included) */
  const char *const *secrets;    /* names of the secrets put in the request (NULL-terminated) */
  const char *const *unreplaced; /* names whose placeholder went out as it was: not their host */
};

/* The event as one line of JSON ending in "\n" (malloc'd), or NULL when a
 * string is not valid UTF-8 (the proxy passes ASCII only). */
char *oci_proxy_log_line (const struct oci_proxy_event *ev);

#endif
