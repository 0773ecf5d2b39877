/* allowlist: the network allow-list — parsing its entries and deciding
 * whether a target (a host name or an address, and a port) may be reached. */
#ifndef HAKO_RUNTIME_ALLOWLIST_H
#define HAKO_RUNTIME_ALLOWLIST_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "lib/err.h"

enum al_kind
{
  AL_NAME,   /* "pypi.org": that name exactly (case-insensitive, no trailing dot) */
  AL_SUFFIX, /* "*.pythonhosted.org": any name ending in ".pythonhosted.org" */
  AL_NET     /* "192.0.2.1", "192.0.2.0/24", "::1", "2001:db8::/32" */
};

struct al_entry
{
  enum al_kind kind;
  char *name;       /* AL_NAME: the name; AL_SUFFIX: ".suffix" (with the dot) */
  uint8_t addr[16]; /* AL_NET: IPv4 as ::ffff:a.b.c.d, so one comparison serves both */
  unsigned prefix;  /* AL_NET: prefix length over the 128 bits */
  bool special;     /* AL_NET: the whole range is loopback, private, link-local... */
  uint16_t port;    /* 0: any port */
};

struct allowlist
{
  struct al_entry *e;
  size_t n;
};

/* Parse one entry: NAME, *.SUFFIX, IPv4, IPv4/LEN, IPv6, IPv6/LEN, each with
 * an optional :PORT (IPv6 with a port in brackets: [::1]:8080,
 * [2001:db8::/32]:443); or an http:// or https:// URL with no path, read as
 * its host and port (the scheme's when it gives none: http 80, https 443).
 * The error names the entry and what is wrong. */
int al_parse_entry (const char *text, struct al_entry *out, hk_err *err);
/* All entries of a NULL-terminated vector (may be NULL: an empty list). */
int al_parse (char *const *entries, struct allowlist *out, hk_err *err);
void al_free (struct allowlist *al);

/* An address as 16 bytes (IPv4 mapped into ::ffff:0:0/96). */
void al_addr_from_sockaddr (const struct sockaddr *sa, uint8_t out[16]);

/* Host name matched against the name entries (exact or suffix) for port. */
bool al_name_allowed (const struct allowlist *al, const char *host, uint16_t port);
/* An address the proxy is about to connect to, for port.  name_ok: the host
 * name asked for matched a name entry, so any public address it resolves to
 * is allowed.  A special address needs an address entry that is itself
 * special (listing 0.0.0.0/0 does not open the host's loopback): a name that
 * resolves into the host's own services is refused unless those are listed,
 * the DNS-rebinding defence. */
bool al_addr_allowed (const struct allowlist *al, const uint8_t a[16], uint16_t port, bool name_ok);

/* True when an entry opens some loopback address (127.0.0.0/8, ::1) of the
 * host: then such a destination is reached only through the proxy. */
bool al_names_loopback (const struct allowlist *al);

/* Parse a literal address (IPv4, or IPv6 with or without brackets); false when
 * text is a host name. */
bool al_parse_literal (const char *text, uint8_t out[16]);
/* Lower-case, strip one trailing dot, and check a host name's syntax. */
bool al_normalize_name (const char *in, char *out, size_t size);

#endif
