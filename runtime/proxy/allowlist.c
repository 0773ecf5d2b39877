/* allowlist: the network allow-list — parsing its entries and deciding
 * whether a target (a host name or an address, and a port) may be reached. */
#include "runtime/proxy/allowlist.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lib/netclass.h"
#include "lib/util.h"
#include "oci/spec.h"

/* ---- addresses --------------------------------------------------------------- */

static const uint8_t v4_mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

static void
addr_from_v4 (const void *v4, uint8_t out[16])
{
  memcpy (out, v4_mapped, 12);
  memcpy (out + 12, v4, 4);
}

void
al_addr_from_sockaddr (const struct sockaddr *sa, uint8_t out[16])
{
  if (sa->sa_family == AF_INET)
    addr_from_v4 (&((const struct sockaddr_in *)sa)->sin_addr, out);
  else
    memcpy (out, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
}

bool
al_parse_literal (const char *text, uint8_t out[16])
{
  struct in_addr a4;
  struct in6_addr a6;
  char buf[INET6_ADDRSTRLEN + 2];
  size_t n = strlen (text);
  if (inet_pton (AF_INET, text, &a4) == 1)
    {
      addr_from_v4 (&a4, out);
      return true;
    }
  if (n >= 2 && text[0] == '[' && text[n - 1] == ']' && n - 2 < sizeof buf)
    {
      memcpy (buf, text + 1, n - 2);
      buf[n - 2] = '\0';
      text = buf;
    }
  if (inet_pton (AF_INET6, text, &a6) != 1)
    return false;
  memcpy (out, &a6, 16);
  return true;
}

/* ---- parsing ----------------------------------------------------------------- */

bool
al_normalize_name (const char *in, char *out, size_t size)
{
  size_t n = strlen (in);
  if (n > 0 && in[n - 1] == '.')
    n--;
  if (n == 0 || n > 253 || n >= size)
    return false;
  size_t label = 0;
  for (size_t i = 0; i < n; i++)
    {
      unsigned char c = (unsigned char)in[i];
      if (c == '.')
        {
          if (label == 0 || out[i - 1] == '-')
            return false;
          label = 0;
        }
      else if (isalnum (c) || c == '_' || (c == '-' && label > 0))
        {
          if (++label > 63)
            return false;
        }
      else
        return false;
      out[i] = (char)tolower (c);
    }
  out[n] = '\0';
  return out[n - 1] != '-';
}

static int
parse_port (const char *entry, const char *text, uint16_t *port, hk_err *err)
{
  char *end;
  errno = 0;
  unsigned long p = strtoul (text, &end, 10);
  if (!isdigit ((unsigned char)text[0]) || *end || errno || p == 0 || p > 65535)
    return err_set (err, EINVAL, "network allow-list entry \"%s\": bad port \"%s\" (1-65535)", entry, text);
  *port = (uint16_t)p;
  return 0;
}

/* "ADDR" or "ADDR/LEN" (no port, no brackets). */
static int
parse_net (const char *entry, const char *text, struct al_entry *out, hk_err *err)
{
  cleanup_free char *addr = xstrdup (text);
  char *slash = strchr (addr, '/');
  unsigned max = 128;
  long len = -1;
  if (slash)
    {
      char *end;
      *slash = '\0';
      errno = 0;
      len = strtol (slash + 1, &end, 10);
      if (!isdigit ((unsigned char)slash[1]) || *end || errno || len > 128)
        return err_set (err, EINVAL, "network allow-list entry \"%s\": bad prefix length \"%s\"", entry,
                        slash + 1);
    }
  struct in_addr a4;
  struct in6_addr a6;
  if (inet_pton (AF_INET, addr, &a4) == 1)
    {
      addr_from_v4 (&a4, out->addr);
      max = 32;
    }
  else if (inet_pton (AF_INET6, addr, &a6) == 1)
    memcpy (out->addr, &a6, 16);
  else
    return err_set (err, EINVAL, "network allow-list entry \"%s\": \"%s\" is not an IP address", entry, addr);
  if (len > (long)max)
    return err_set (err, EINVAL,
                    "network allow-list entry \"%s\": prefix length %ld is longer "
                    "than the address (%u bits)",
                    entry, len, max);
  out->kind = AL_NET;
  out->prefix = len < 0 ? 128 : (unsigned)len + (128 - max);
  /* Bits past the prefix are cleared: 192.0.2.7/24 means 192.0.2.0/24. */
  for (unsigned b = out->prefix; b < 128; b++)
    out->addr[b / 8] &= (uint8_t) ~(0x80 >> (b % 8));
  out->special = net_range_special (out->addr, out->prefix);
  return 0;
}

static int
parse_name (const char *entry, const char *text, struct al_entry *out, hk_err *err)
{
  char buf[256];
  bool suffix = str_has_prefix (text, "*.");
  if (!al_normalize_name (suffix ? text + 2 : text, buf, sizeof buf))
    return err_set (err, EINVAL,
                    "network allow-list entry \"%s\": not a host name, \"*.suffix\", "
                    "IP address or CIDR",
                    entry);
  if (strchr (buf, '*'))
    return err_set (err, EINVAL, "network allow-list entry \"%s\": \"*\" only as a leading \"*.\"", entry);
  out->kind = suffix ? AL_SUFFIX : AL_NAME;
  out->name = suffix ? xasprintf (".%s", buf) : xstrdup (buf);
  return 0;
}

/* HOST[:PORT] in its forms (see al_parse_entry); entry is what the user
 * wrote, for the errors. */
static int
parse_host_port (const char *entry, const char *text, struct al_entry *out, hk_err *err)
{
  cleanup_free char *host = xstrdup (text);
  if (host[0] == '\0')
    return err_set (err, EINVAL, "network allow-list entry \"%s\": empty", entry);
  if (host[0] == '[')
    {
      /* [IPv6] or [IPv6/LEN], then optionally :PORT. */
      char *close = strchr (host, ']');
      if (close == NULL || (close[1] != '\0' && close[1] != ':'))
        return err_set (err, EINVAL, "network allow-list entry \"%s\": expected [IPv6]:PORT", entry);
      if (close[1] == ':' && parse_port (entry, close + 2, &out->port, err) < 0)
        return -1;
      *close = '\0';
      if (strchr (host + 1, ':') == NULL)
        return err_set (err, EINVAL,
                        "network allow-list entry \"%s\": brackets are for IPv6 "
                        "addresses",
                        entry);
      return parse_net (entry, host + 1, out, err);
    }
  char *colon = strchr (host, ':');
  if (colon && strchr (colon + 1, ':'))
    return parse_net (entry, host, out, err); /* bare IPv6: no port possible */
  if (colon)
    {
      *colon = '\0';
      if (parse_port (entry, colon + 1, &out->port, err) < 0)
        return -1;
    }
  /* A dotted quad, possibly with /LEN; anything else that starts with a
   * digit and has a slash is a bad CIDR rather than a bad name. */
  struct in_addr a4;
  char *slash = strchr (host, '/');
  if (slash)
    return parse_net (entry, host, out, err);
  if (inet_pton (AF_INET, host, &a4) == 1)
    return parse_net (entry, host, out, err);
  return parse_name (entry, host, out, err);
}

/* "http://pypi.org", "https://pypi.org/", "http://[::1]:8080": the
 * URL's host, with the port it gives or its scheme's (http 80, https 443),
 * as *hostport (to free).  The list grants hosts and ports, never paths:
 * a URL with a path, query or user is refused rather than read as wider
 * than it looks. */
static int
url_host_port (const char *entry, char **hostport, hk_err *err)
{
  const char *sep = strstr (entry, "://");
  size_t slen = (size_t)(sep - entry);
  const char *port;
  if (slen == 4 && strncasecmp (entry, "http", 4) == 0)
    port = "80";
  else if (slen == 5 && strncasecmp (entry, "https", 5) == 0)
    port = "443";
  else
    return err_set (err, EINVAL,
                    "network allow-list entry \"%s\": only http:// and https:// URLs "
                    "are understood; give HOST, HOST:PORT, *.SUFFIX or a CIDR",
                    entry);
  const char *auth = sep + 3;
  size_t alen = strcspn (auth, "/?#");
  cleanup_free char *a = xstrndup (auth, alen);
  const char *rest = auth + alen;
  if (strcmp (rest, "") != 0 && strcmp (rest, "/") != 0)
    return err_set (err, EINVAL,
                    "network allow-list entry \"%s\": the allow-list grants hosts and "
                    "ports, not paths: give the URL without \"%s\"",
                    entry, rest);
  if (strchr (a, '@'))
    return err_set (err, EINVAL,
                    "network allow-list entry \"%s\": a URL with a user name; "
                    "give the host alone",
                    entry);
  if (a[0] == '\0')
    return err_set (err, EINVAL, "network allow-list entry \"%s\": the URL has no host", entry);
  const char *close = a[0] == '[' ? strchr (a, ']') : NULL;
  bool has_port = a[0] == '[' ? close && close[1] == ':' : strchr (a, ':') != NULL;
  *hostport = has_port ? xstrdup (a) : xasprintf ("%s:%s", a, port);
  return 0;
}

int
al_parse_entry (const char *text, struct al_entry *out, hk_err *err)
{
  *out = (struct al_entry){ 0 };
  if (strstr (text, "://") == NULL)
    return parse_host_port (text, text, out, err);
  cleanup_free char *hostport = NULL;
  if (url_host_port (text, &hostport, err) < 0)
    return -1;
  return parse_host_port (text, hostport, out, err);
}

int
al_parse (char *const *entries, struct allowlist *out, hk_err *err)
{
  size_t n = strv_len (entries);
  *out = (struct allowlist){ .e = xcalloc (n + 1, sizeof *out->e) };
  for (size_t i = 0; i < n; i++)
    {
      if (al_parse_entry (entries[i], &out->e[i], err) < 0)
        {
          al_free (out);
          return -1;
        }
      out->n++;
    }
  return 0;
}

void
al_free (struct allowlist *al)
{
  for (size_t i = 0; i < al->n; i++)
    free (al->e[i].name);
  free (al->e);
  *al = (struct allowlist){ 0 };
}

/* ---- matching ---------------------------------------------------------------- */

static bool
port_ok (const struct al_entry *e, uint16_t port)
{
  return e->port == 0 || e->port == port;
}

bool
al_name_allowed (const struct allowlist *al, const char *host, uint16_t port)
{
  char name[256];
  if (!al_normalize_name (host, name, sizeof name))
    return false;
  size_t n = strlen (name);
  for (size_t i = 0; i < al->n; i++)
    {
      const struct al_entry *e = &al->e[i];
      if (!port_ok (e, port))
        continue;
      if (e->kind == AL_NAME && strcmp (e->name, name) == 0)
        return true;
      /* ".example.com" matches "a.example.com", not "example.com" nor "badexample.com". */
      if (e->kind == AL_SUFFIX && n > strlen (e->name) && str_has_suffix (name, e->name))
        return true;
    }
  return false;
}

bool
al_addr_allowed (const struct allowlist *al, const uint8_t a[16], uint16_t port, bool name_ok)
{
  bool special = net_class (a) != NET_PUBLIC;
  if (name_ok && !special)
    return true;
  for (size_t i = 0; i < al->n; i++)
    {
      const struct al_entry *e = &al->e[i];
      if (e->kind == AL_NET && port_ok (e, port) && net_prefix_match (a, e->addr, e->prefix)
          && (!special || e->special))
        return true;
    }
  return false;
}

/* Two prefix-aligned ranges overlap when one holds the other: they agree on
 * the shorter prefix. */
static bool
ranges_overlap (const uint8_t *a, unsigned pa, const uint8_t *b, unsigned pb)
{
  return net_prefix_match (a, b, pa < pb ? pa : pb);
}

bool
al_names_loopback (const struct allowlist *al)
{
  static const uint8_t v4_loop[16] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 127 };
  static const uint8_t v6_loop[16] = { [15] = 1 };
  for (size_t i = 0; i < al->n; i++)
    {
      const struct al_entry *e = &al->e[i];
      /* Only a special entry opens a loopback address (al_addr_allowed). */
      if (e->kind == AL_NET && e->special
          && (ranges_overlap (e->addr, e->prefix, v4_loop, 104)
              || ranges_overlap (e->addr, e->prefix, v6_loop, 128)))
        return true;
    }
  return false;
}
