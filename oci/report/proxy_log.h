/* proxy_log: one JSON line per decision of a sandbox's network proxy. */
#ifndef HAKO_OCI_PROXY_LOG_H
#define HAKO_OCI_PROXY_LOG_H

struct oci_proxy_event
{
  const char *time;    /* RFC 3339 UTC */
  const char *method;  /* "CONNECT", "GET", ...; may be NULL */
  const char *target;  /* "host:port"; may be NULL when the request was unreadable */
  const char *verdict; /* "allow", "deny" or "error" */
  const char *reason;  /* one line; may be NULL */
  const char *address; /* the address connected to; may be NULL */
};

/* The event as one line of JSON ending in "\n" (malloc'd), or NULL when a
 * string is not valid UTF-8 (the proxy passes ASCII only). */
char *oci_proxy_log_line (const struct oci_proxy_event *ev);

#endif
