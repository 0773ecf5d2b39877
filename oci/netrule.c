/* netrule: the egress rule grammar (hako-spec(5), NETWORK RULES), parsed
 * once into structs, and the pure matching of a rule against a host, a
 * method and a path. */
#include "oci/netrule.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lib/netclass.h"
#include "lib/util.h"
#include "oci/spec.h"

/* ---- destinations -------------------------------------------------------------- */

static int
parse_port (const char *entry, const char *text, uint16_t *port, hk_err *err)
{
  char *end;
  errno = 0;
  unsigned long p = strtoul (text, &end, 10);
  if (!isdigit ((unsigned char)text[0]) || *end || errno || p == 0 || p > 65535)
    return err_set (err, EINVAL, "network rule \"%s\": bad port \"%s\" (1-65535)", entry, text);
  *port = (uint16_t)p;
  return 0;
}

/* "ADDR" or "ADDR/LEN" (no port, no brackets). */
static int
parse_net (const char *entry, const char *text, struct net_rule *out, hk_err *err)
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
        return err_set (err, EINVAL, "network rule \"%s\": bad prefix length \"%s\"", entry, slash + 1);
    }
  struct in_addr a4;
  struct in6_addr a6;
  if (inet_pton (AF_INET, addr, &a4) == 1)
    {
      net_addr_from_v4 (&a4, out->addr);
      max = 32;
    }
  else if (inet_pton (AF_INET6, addr, &a6) == 1)
    memcpy (out->addr, &a6, 16);
  else
    return err_set (err, EINVAL, "network rule \"%s\": \"%s\" is not an IP address", entry, addr);
  if (len > (long)max)
    return err_set (err, EINVAL,
                    "network rule \"%s\": prefix length %ld is longer than the address (%u bits)", entry, len,
                    max);
  out->kind = NR_NET;
  out->prefix = len < 0 ? 128 : (unsigned)len + (128 - max);
  /* Bits past the prefix are cleared: 192.0.2.7/24 means 192.0.2.0/24. */
  for (unsigned b = out->prefix; b < 128; b++)
    out->addr[b / 8] &= (uint8_t) ~(0x80 >> (b % 8));
  out->special = net_range_special (out->addr, out->prefix);
  return 0;
}

/* A method name alone ("GET"), as a comma-separated list splits "GET,HEAD
 * https://..." into: refused rather than read as a host named "get". */
static bool
looks_like_method (const char *text)
{
  static const char *const methods[]
      = { "GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "CONNECT", "TRACE", NULL };
  for (size_t i = 0; methods[i]; i++)
    if (strcmp (text, methods[i]) == 0)
      return true;
  return false;
}

static int
parse_name (const char *entry, const char *text, struct net_rule *out, hk_err *err)
{
  char buf[256];
  bool suffix = str_has_prefix (text, "*.");
  if (looks_like_method (text))
    return err_set (err, EINVAL,
                    "network rule \"%s\": a method without a URL (write \"GET,HEAD https://HOST/PATH\"; in "
                    "a one-line annotation list separate methods with \"|\": \"GET|HEAD https://...\")",
                    entry);
  if (!net_normalize_name (suffix ? text + 2 : text, buf, sizeof buf))
    return err_set (err, EINVAL,
                    "network rule \"%s\": not a host name, \"*.suffix\", IP address, CIDR or "
                    "\"METHODS URL\"",
                    entry);
  out->kind = suffix ? NR_SUFFIX : NR_NAME;
  out->name = suffix ? xasprintf (".%s", buf) : xstrdup (buf);
  return 0;
}

/* HOST[:PORT] in its forms; entry is what the user wrote, for the errors.
 * cidr: a range is allowed (destinations; a URL names one host). */
static int
parse_host_port (const char *entry, const char *text, bool cidr, struct net_rule *out, hk_err *err)
{
  cleanup_free char *host = xstrdup (text);
  if (host[0] == '\0')
    return err_set (err, EINVAL, "network rule \"%s\": empty", entry);
  if (host[0] == '[')
    {
      /* [IPv6] or [IPv6/LEN], then optionally :PORT. */
      char *close = strchr (host, ']');
      if (close == NULL || (close[1] != '\0' && close[1] != ':'))
        return err_set (err, EINVAL, "network rule \"%s\": expected [IPv6]:PORT", entry);
      if (close[1] == ':' && parse_port (entry, close + 2, &out->port, err) < 0)
        return -1;
      *close = '\0';
      if (strchr (host + 1, ':') == NULL)
        return err_set (err, EINVAL, "network rule \"%s\": brackets are for IPv6 addresses", entry);
      if (!cidr && strchr (host + 1, '/'))
        return err_set (err, EINVAL, "network rule \"%s\": a URL names one host, not a range", entry);
      return parse_net (entry, host + 1, out, err);
    }
  char *colon = strchr (host, ':');
  if (colon && strchr (colon + 1, ':'))
    {
      if (!cidr)
        return err_set (err, EINVAL, "network rule \"%s\": an IPv6 address in a URL goes in brackets", entry);
      return parse_net (entry, host, out, err); /* bare IPv6: no port possible */
    }
  if (colon)
    {
      *colon = '\0';
      if (parse_port (entry, colon + 1, &out->port, err) < 0)
        return -1;
    }
  /* A dotted quad, possibly with /LEN; anything else with a slash is a
   * bad CIDR rather than a bad name. */
  struct in_addr a4;
  if (strchr (host, '/'))
    {
      if (!cidr)
        return err_set (err, EINVAL, "network rule \"%s\": a URL names one host, not a range", entry);
      return parse_net (entry, host, out, err);
    }
  if (inet_pton (AF_INET, host, &a4) == 1)
    return parse_net (entry, host, out, err);
  return parse_name (entry, host, out, err);
}

/* "http://" or "https://" at the start of text: 80, 443; 0 when neither. */
static uint16_t
scheme_port (const char *text, bool *https)
{
  if (strncasecmp (text, "http://", 7) == 0)
    return *https = false, 80;
  if (strncasecmp (text, "https://", 8) == 0)
    return *https = true, 443;
  return 0;
}

/* "http://pypi.org", "https://pypi.org/", "http://[::1]:8080": the URL's
 * host, with the port it gives or its scheme's.  A URL with a path is a
 * request rule, which needs its methods: refused here, saying so. */
static int
parse_url_destination (const char *entry, struct net_rule *out, hk_err *err)
{
  bool https;
  uint16_t dflt = scheme_port (entry, &https);
  if (dflt == 0)
    return err_set (err, EINVAL,
                    "network rule \"%s\": only http:// and https:// URLs are understood; give HOST, "
                    "HOST:PORT, *.SUFFIX, a CIDR or \"METHODS URL\"",
                    entry);
  const char *auth = strstr (entry, "://") + 3;
  size_t alen = strcspn (auth, "/?#");
  cleanup_free char *a = xstrndup (auth, alen);
  const char *rest = auth + alen;
  if (strcmp (rest, "") != 0 && strcmp (rest, "/") != 0)
    return err_set (err, EINVAL,
                    "network rule \"%s\": a URL with a path is a request rule and needs its methods: "
                    "\"GET,HEAD %s\" (or \"* %s\" for any method), or give the URL without \"%s\" "
                    "for the whole host",
                    entry, entry, entry, rest);
  if (strchr (a, '@'))
    return err_set (err, EINVAL, "network rule \"%s\": a URL with a user name; give the host alone", entry);
  if (a[0] == '\0')
    return err_set (err, EINVAL, "network rule \"%s\": the URL has no host", entry);
  if (parse_host_port (entry, a, false, out, err) < 0)
    return -1;
  if (out->port == 0)
    out->port = dflt;
  return 0;
}

/* ---- request rules ----------------------------------------------------------------- */

static bool
is_method_char (unsigned char c)
{
  return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
}

/* "GET,HEAD", "GET|HEAD" or "*". */
static int
parse_methods (const char *entry, const char *text, size_t len, struct net_rule *out, hk_err *err)
{
  if (len == 1 && text[0] == '*')
    return 0;
  cleanup_free char *copy = xstrndup (text, len);
  char *rest = copy, *m;
  size_t n = 0;
  while ((m = strsep (&rest, ",|")) != NULL)
    {
      if (m[0] == '\0' || strlen (m) > 20)
        return err_set (err, EINVAL, "network rule \"%s\": an empty or overlong method in \"%s\"", entry,
                        copy);
      for (const char *c = m; *c; c++)
        if (!is_method_char ((unsigned char)*c))
          return err_set (err, EINVAL,
                          "network rule \"%s\": method \"%s\": methods are upper case (GET, HEAD, POST...) "
                          "or \"*\" for any",
                          entry, m);
      out->methods = xrealloc (out->methods, (n + 2) * sizeof *out->methods);
      out->methods[n++] = xstrdup (m);
      out->methods[n] = NULL;
    }
  return 0;
}

static int
hexval (int c)
{
  if (c >= '0' && c <= '9')
    return c - '0';
  c = tolower (c);
  return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* One segment percent-decoded; NULL with *why when it is ambiguous. */
static char *
decode_segment (const char *s, size_t n, const char **why)
{
  char *out = xmalloc (n + 1);
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    {
      unsigned char c = (unsigned char)s[i];
      if (c == '%')
        {
          int hi = i + 2 < n ? hexval (s[i + 1]) : -1;
          int lo = i + 2 < n ? hexval (s[i + 2]) : -1;
          if (hi < 0 || lo < 0)
            {
              *why = "a bad %-escape in the path";
              free (out);
              return NULL;
            }
          c = (unsigned char)(hi * 16 + lo);
          i += 2;
          if (c == '/' || c == '\\')
            {
              *why = "an escaped '/' or '\\' in the path";
              free (out);
              return NULL;
            }
        }
      if (c < 0x20 || c == 0x7f || c == '\\')
        {
          *why = "a control character or '\\' in the path";
          free (out);
          return NULL;
        }
      out[k++] = (char)c;
    }
  out[k] = '\0';
  if (strcmp (out, ".") == 0 || strcmp (out, "..") == 0)
    {
      *why = "a \".\" or \"..\" segment in the path";
      free (out);
      return NULL;
    }
  return out;
}

int
oci_net_path_split (const char *path, size_t len, char ***segs, size_t *n, const char **why)
{
  *segs = NULL;
  *n = 0;
  size_t end = 0;
  while (end < len && path[end] != '?' && path[end] != '#')
    end++;
  if (end == 0 || path[0] != '/')
    {
      *why = "the path does not start with '/'";
      return -1;
    }
  char **v = xcalloc (end + 2, sizeof *v); /* a segment per "/" at most, and the NULL */
  size_t k = 0;
  for (size_t i = 1; i <= end;)
    {
      size_t j = i;
      while (j < end && path[j] != '/')
        j++;
      v[k] = decode_segment (path + i, j - i, why);
      if (v[k] == NULL)
        {
          strv_free (v);
          return -1;
        }
      k++;
      i = j + 1;
    }
  *segs = v;
  *n = k;
  return 0;
}

/* The path of a URL pattern ("/", "/a/b", a "*" segment, a last "**"); a
 * query is refused (rules match paths), and "*" only as a whole segment. */
static int
parse_path_pattern (const char *entry, const char *path, struct net_rule *out, hk_err *err)
{
  if (strpbrk (path, "?#"))
    return err_set (err, EINVAL, "network rule \"%s\": rules match paths, not queries: drop \"%s\"", entry,
                    strpbrk (path, "?#"));
  const char *why = NULL;
  char **segs;
  size_t n;
  if (oci_net_path_split (path, strlen (path), &segs, &n, &why) < 0)
    return err_set (err, EINVAL, "network rule \"%s\": %s", entry, why);
  for (size_t i = 0; i < n; i++)
    {
      bool star = strcmp (segs[i], "*") == 0, stars = strcmp (segs[i], "**") == 0;
      if (stars && i + 1 < n)
        {
          strv_free (segs);
          return err_set (err, EINVAL, "network rule \"%s\": \"**\" only as the last segment", entry);
        }
      if (!star && !stars && strchr (segs[i], '*'))
        {
          strv_free (segs);
          return err_set (err, EINVAL,
                          "network rule \"%s\": \"*\" only as a whole segment (one segment), \"**\" only "
                          "as the last (any rest)",
                          entry);
        }
    }
  if (n > 0 && strcmp (segs[n - 1], "**") == 0)
    {
      free (segs[--n]);
      segs[n] = NULL;
      out->rest = true;
    }
  out->segs = segs;
  out->n_segs = n;
  return 0;
}

/* METHODS SP URL-PATTERN. */
static int
parse_request_rule (const char *entry, const char *sp, struct net_rule *out, hk_err *err)
{
  if (parse_methods (entry, entry, (size_t)(sp - entry), out, err) < 0)
    return -1;
  const char *url = sp + 1;
  while (*url == ' ')
    url++;
  bool https;
  uint16_t dflt = scheme_port (url, &https);
  if (dflt == 0)
    return err_set (err, EINVAL, "network rule \"%s\": after the methods, an http:// or https:// URL pattern",
                    entry);
  out->request = true;
  out->https = https;
  const char *auth = strstr (url, "://") + 3;
  size_t alen = strcspn (auth, "/?#");
  cleanup_free char *a = xstrndup (auth, alen);
  if (strchr (a, '@') || a[0] == '\0' || strchr (a, ' '))
    return err_set (err, EINVAL, "network rule \"%s\": the URL needs a host (and no user name)", entry);
  if (parse_host_port (entry, a, false, out, err) < 0)
    return -1;
  if (out->port == 0)
    out->port = dflt;
  const char *path = auth + alen;
  if (*path == '\0')
    path = "/";
  if (strchr (path, ' '))
    return err_set (err, EINVAL, "network rule \"%s\": a space in the URL pattern", entry);
  return parse_path_pattern (entry, path, out, err);
}

int
oci_net_rule_parse (const char *text, struct net_rule *out, hk_err *err)
{
  *out = (struct net_rule){ 0 };
  int r;
  const char *sp = strchr (text, ' ');
  if (text[0] == '\0')
    r = err_set (err, EINVAL, "network rule \"\": empty");
  else if (sp)
    r = parse_request_rule (text, sp, out, err);
  else if (strstr (text, "://"))
    r = parse_url_destination (text, out, err);
  else
    r = parse_host_port (text, text, true, out, err);
  if (r < 0)
    {
      oci_net_rule_free (out);
      return -1;
    }
  out->text = xstrdup (text);
  return 0;
}

void
oci_net_rule_free (struct net_rule *r)
{
  free (r->text);
  free (r->name);
  strv_free (r->methods);
  strv_free (r->segs);
  *r = (struct net_rule){ 0 };
}

int
oci_net_rules_parse (char *const *texts, struct net_rules *out, hk_err *err)
{
  size_t n = strv_len (texts);
  *out = (struct net_rules){ .v = xcalloc (n + 1, sizeof *out->v) };
  for (size_t i = 0; i < n; i++)
    {
      if (oci_net_rule_parse (texts[i], &out->v[i], err) < 0)
        {
          oci_net_rules_free (out);
          return -1;
        }
      out->n++;
    }
  return 0;
}

void
oci_net_rules_free (struct net_rules *rs)
{
  for (size_t i = 0; i < rs->n; i++)
    oci_net_rule_free (&rs->v[i]);
  free (rs->v);
  *rs = (struct net_rules){ 0 };
}

/* ---- matching ------------------------------------------------------------------- */

bool
oci_net_rule_names_host (const struct net_rule *r, const char *host, uint16_t port)
{
  if (port != 0 && r->port != 0 && r->port != port)
    return false;
  uint8_t a[16];
  if (net_parse_literal (host, a))
    return r->kind == NR_NET && net_prefix_match (a, r->addr, r->prefix);
  if (r->kind == NR_NAME)
    return strcmp (r->name, host) == 0;
  /* ".example.com" names "a.example.com", not "example.com" nor "badexample.com". */
  return r->kind == NR_SUFFIX && strlen (host) > strlen (r->name) && str_has_suffix (host, r->name);
}

bool
oci_net_rule_takes (const struct net_rule *r, const char *method, char *const *segs, size_t n)
{
  if (!r->request)
    return true;
  bool method_ok = r->methods == NULL;
  for (size_t i = 0; !method_ok && r->methods[i]; i++)
    method_ok = strcmp (r->methods[i], method) == 0;
  if (!method_ok || n < r->n_segs || (!r->rest && n != r->n_segs))
    return false;
  for (size_t i = 0; i < r->n_segs; i++)
    {
      /* "*" is one segment, never an empty one ("/a/" is not "/a/x"). */
      if (strcmp (r->segs[i], "*") == 0 ? segs[i][0] == '\0' : strcmp (r->segs[i], segs[i]) != 0)
        return false;
    }
  return true;
}

const char *const oci_net_metadata_names[] = {
  "metadata",
  "metadata.google.internal",
  "metadata.goog",
  "instance-data",
  "instance-data.ec2.internal",
  "metadata.azure.internal",
  "metadata.oraclecloud.com",
  NULL,
};

bool
oci_net_is_metadata_name (const char *normalized)
{
  for (size_t i = 0; oci_net_metadata_names[i]; i++)
    if (strcmp (normalized, oci_net_metadata_names[i]) == 0)
      return true;
  return false;
}
