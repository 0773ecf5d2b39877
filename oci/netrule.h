/* netrule: the egress rule grammar (hako-spec(5), NETWORK RULES), parsed
 * once into structs.  A rule is a destination — a host name, *.suffix, an
 * address or a CIDR, each with an optional :port, or an http(s):// URL
 * without a path — or a request rule, METHODS URL-PATTERN:
 * "GET,HEAD https://api.github.com/repos/x/y/releases/x", where a path
 * segment "*" is any one segment and a last "**" any rest.
 * sandbox.network.allow and .deny, --allow and --deny, the SDK and the
 * org.hako.allow and org.hako.deny annotations all speak it. */
#ifndef HAKO_OCI_NETRULE_H
#define HAKO_OCI_NETRULE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/err.h"

enum net_rule_kind
{
  NR_NAME,   /* "pypi.org": that name exactly (case-insensitive, no trailing dot) */
  NR_SUFFIX, /* "*.pythonhosted.org": any name ending in ".pythonhosted.org" */
  NR_NET     /* "192.0.2.1", "192.0.2.0/24", "::1", "2001:db8::/32" */
};

struct net_rule
{
  char *text; /* as written */
  enum net_rule_kind kind;
  char *name;       /* NR_NAME: the name; NR_SUFFIX: ".suffix" (with the dot) */
  uint8_t addr[16]; /* NR_NET: IPv4 as ::ffff:a.b.c.d, so one comparison serves both */
  unsigned prefix;  /* NR_NET: prefix length over the 128 bits */
  bool special;     /* NR_NET: the whole range is loopback, private, link-local... */
  uint16_t port;    /* 0: any port (destinations only: a request rule has its scheme's) */
  /* A request rule, METHODS URL-PATTERN: */
  bool request;
  bool https;     /* its scheme: https (decided inside TLS: interception) or http */
  char **methods; /* NULL: any method ("*") */
  char **segs;    /* the path pattern's segments, percent-decoded; "*": any one */
  size_t n_segs;
  bool rest; /* the last segment was "**": any further segments, or none */
};

struct net_rules
{
  struct net_rule *v;
  size_t n;
};

/* Parse one rule; the error names the rule and what is wrong in it. */
int oci_net_rule_parse (const char *text, struct net_rule *out, hk_err *err);
void oci_net_rule_free (struct net_rule *r);
/* All rules of a NULL-terminated vector (NULL: none). */
int oci_net_rules_parse (char *const *texts, struct net_rules *out, hk_err *err);
void oci_net_rules_free (struct net_rules *rs);

/* Whether rule r names host (a normalized name, or a literal address
 * without brackets) on port (0: on some port).  A suffix rule names the
 * names below it; an address rule names the addresses in its range. */
bool oci_net_rule_names_host (const struct net_rule *r, const char *host, uint16_t port);
/* Whether request rule r takes method and the path's segments (from
 * oci_net_path_split). */
bool oci_net_rule_takes (const struct net_rule *r, const char *method, char *const *segs, size_t n);

/* A request's path (origin form, up to any '?' or '#') as its segments,
 * percent-decoded: "/a/b%20c/" is "a", "b c", "".  Refused (-1, *why set)
 * when a reader could take it for another path than the rules do: a
 * segment "." or "..", an escaped '/' or '\\', a NUL or control byte, a
 * bad escape.  Free with strv_free. */
int oci_net_path_split (const char *path, size_t len, char ***segs, size_t *n, const char **why);

/* The names of cloud metadata services ("metadata.google.internal", ...):
 * refused unless a destination rule names one exactly.  NULL-terminated. */
extern const char *const oci_net_metadata_names[];
bool oci_net_is_metadata_name (const char *normalized);

#endif
