/* learn_check (oci): what a learned profile may hold — the destinations
 * only the CLI user may grant, --profile-file's checks of what learning
 * never writes, and the escaping of names the sandbox chose (oci/learn.h,
 * hako-learn(7)). */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lib/netclass.h"
#include "lib/util.h"
#include "oci/json.h"
#include "oci/learn.h"
#include "oci/learn_internal.h"
#include "oci/netrule.h"

/* ---- destinations that need consent ------------------------------------------ */

/* HOST of "HOST:PORT", "[HOST]:PORT" or (no port) "HOST" into buf. */
static bool
host_of (const char *hostport, char *buf, size_t size)
{
  const char *start = hostport, *end;
  if (hostport[0] == '[')
    {
      start = hostport + 1;
      end = strchr (start, ']');
    }
  else
    {
      end = strchr (hostport, ':');
      if (end && strchr (end + 1, ':'))
        end = NULL; /* a bare IPv6 address */
    }
  if (end == NULL)
    end = start + strlen (start);
  if ((size_t)(end - start) >= size)
    return false;
  memcpy (buf, start, (size_t)(end - start));
  buf[end - start] = '\0';
  return true;
}

/* The class of an address, as a word, or NULL for a public one. */
static const char *
why_not_public (const uint8_t a[16])
{
  enum net_class c = net_class (a);
  return c == NET_PUBLIC ? NULL : net_class_word (c);
}

/* Why HOSTPORT's host is one a learned or supplied profile must not grant
 * on its own, or NULL: the proxy runs in the host's network namespace, so
 * a loopback destination is the host's own services, link-local the cloud
 * metadata service (169.254.169.254) and private ranges the machines next
 * to it.  Only the CLI user names them (--allow).  Names are not looked up
 * here ("localhost" is the one name that means loopback everywhere), but
 * every spelling a resolver takes for an address is an address:
 * inet_aton's "127.1", "0x7f000001" and "2130706433" are 127.0.0.1
 * (lib/netclass.c classifies). */
const char *
oci_learn_needs_consent (const char *hostport)
{
  char host[256];
  if (!host_of (hostport, host, sizeof host))
    return "reserved"; /* longer than any name: not granted */
  size_t n = strlen (host);
  if (n && host[n - 1] == '.')
    host[--n] = '\0';
  if (strcasecmp (host, "localhost") == 0 || (n > 10 && strcasecmp (host + n - 10, ".localhost") == 0))
    return "loopback";
  struct in_addr a4;
  struct in6_addr a6;
  uint8_t a[16] = { [10] = 0xff, [11] = 0xff }; /* an IPv4 address, mapped */
  if (inet_pton (AF_INET6, host, &a6) == 1)
    memcpy (a, &a6, 16);
  else if (inet_aton (host, &a4) == 1)
    memcpy (a + 12, &a4.s_addr, 4);
  else
    return NULL;
  return why_not_public (a);
}

const char *
oci_learn_rule_needs_consent (const char *rule)
{
  if (strchr (rule, ' ') == NULL)
    return oci_learn_needs_consent (rule);
  const char *auth = strstr (rule, "://");
  if (auth == NULL)
    return "reserved"; /* not a rule learning writes: not granted */
  auth += 3;
  cleanup_free char *hostport = xstrndup (auth, strcspn (auth, "/"));
  return oci_learn_needs_consent (hostport);
}

/* A request rule as learning writes it: methods, an http(s) URL with a
 * port, one host (no suffix), a path. */
static bool
learned_request (const char *v)
{
  struct net_rule r;
  hk_err err;
  if (oci_net_rule_parse (v, &r, &err) < 0)
    return false;
  const char *auth = strstr (v, "://");
  bool port = false;
  if (auth)
    {
      auth += 3;
      size_t alen = strcspn (auth, "/");
      const char *close = auth[0] == '[' ? memchr (auth, ']', alen) : NULL;
      port = close ? close[1] == ':' : memchr (auth, ':', alen) != NULL;
    }
  bool ok = r.request && port && (r.kind == NR_NAME || (r.kind == NR_NET && r.prefix == 128));
  oci_net_rule_free (&r);
  return ok;
}

/* S with every byte a terminal could act on (controls, DEL, anything past
 * ASCII) and the backslash as \xNN: the names in the notes and in the
 * learner's report are the sandbox's choosing, and a newline or an escape
 * sequence in one would forge a line or drive the reader's terminal. */
char *
oci_learn_escape (const char *s)
{
  size_t n = 1;
  for (const unsigned char *p = (const unsigned char *)s; *p; p++)
    n += (*p < 0x20 || *p >= 0x7f || *p == '\\') ? 4 : 1;
  char *out = xmalloc (n), *o = out;
  for (const unsigned char *p = (const unsigned char *)s; *p; p++)
    if (*p < 0x20 || *p >= 0x7f || *p == '\\')
      o += sprintf (o, "\\x%02x", *p);
    else
      *o++ = (char)*p;
  *o = '\0';
  return out;
}

static int
refuse (const char *field, const char *why, hk_err *err)
{
  return err_setk (err, ERR_INVALID_CONFIG, EINVAL, "--profile-file: %s: %s", field, why);
}

/* What `run --learn` never writes is refused, not applied: a profile only
 * narrows the config it is applied to, and a file anyone handed over (or
 * the sandbox wrote into a shared directory) must not be a way to the
 * host's network, the whole filesystem or the host's own services. */
static int
check_landlock (yajl_val pll, hk_err *err)
{
  static const char *const keys[] = { "read", "write", "exec" };
  for (size_t k = 0; pll && k < sizeof keys / sizeof *keys; k++)
    {
      yajl_val a = json_get (pll, keys[k]);
      if (a && !YAJL_IS_ARRAY (a))
        return refuse (keys[k], "must be an array of paths", err);
      for (size_t i = 0; i < json_len (a); i++)
        {
          yajl_val e = json_at (a, i);
          cleanup_free char *field = xasprintf (".sandbox.landlock.%s[%zu]", keys[k], i);
          if (!YAJL_IS_STRING (e) || e->u.string[0] != '/')
            return refuse (field, "must be an absolute path", err);
          bool above;
          cleanup_free char *lex = path_lexical (e->u.string, &above);
          /* collapse() never goes up to "/": a rule on it is every file. */
          if (lex[0] == '\0')
            return refuse (field, "\"/\" grants the whole filesystem, which learning never writes", err);
        }
    }
  return 0;
}

/* "HOST:PORT" or "[IPv6]:PORT", HOST a name or an address, the port 1 to
 * 65535: what the proxy records in learning mode.  A CIDR such as
 * 0.0.0.0/0 would cover the host's loopback without naming it. */
static bool
learned_shape (const char *v)
{
  const char *colon = v[0] == '[' ? strstr (v, "]:") : strrchr (v, ':');
  if (colon == NULL || colon == v)
    return false;
  const char *port = colon + (v[0] == '[' ? 2 : 1);
  char *end;
  errno = 0;
  unsigned long p = strtoul (port, &end, 10);
  if (port[0] < '0' || port[0] > '9' || *end || errno || p == 0 || p > 65535)
    return false;
  for (const char *c = v; c < colon; c++)
    if (strchr ("/*@ \t", *c) || (v[0] != '[' && *c == ':') || (unsigned char)*c < 0x21)
      return false;
  return true;
}

static int
check_network (yajl_val pnet, hk_err *err)
{
  if (pnet == NULL)
    return 0;
  for (size_t i = 0; i < pnet->u.object.len; i++)
    if (strcmp (pnet->u.object.keys[i], "mode") != 0 && strcmp (pnet->u.object.keys[i], "allow") != 0)
      {
        cleanup_free char *field = xasprintf (".sandbox.network.%s", pnet->u.object.keys[i]);
        return refuse (field, "not a field learning writes (only mode and allow)", err);
      }
  yajl_val mode = json_get (pnet, "mode"), allow = json_get (pnet, "allow");
  if (mode && (!YAJL_IS_STRING (mode) || strcmp (mode->u.string, "allowlist") != 0))
    return refuse (".sandbox.network.mode",
                   "only \"allowlist\" (what learning writes); host or another network is asked for on the "
                   "command line (--network)",
                   err);
  if (allow && !YAJL_IS_ARRAY (allow))
    return refuse (".sandbox.network.allow", "must be an array of HOST:PORT", err);
  for (size_t i = 0; i < json_len (allow); i++)
    {
      yajl_val e = json_at (allow, i);
      cleanup_free char *field = xasprintf (".sandbox.network.allow[%zu]", i);
      if (!YAJL_IS_STRING (e))
        return refuse (field, "must be a HOST:PORT string", err);
      if (!learned_shape (e->u.string) && !learned_request (e->u.string))
        return refuse (field,
                       "not an entry learning writes (HOST:PORT as a client named it, or METHODS "
                       "SCHEME://HOST:PORT/PATH); a CIDR, *.suffix, URL or port-less host is given on the "
                       "command line (--allow)",
                       err);
      const char *why = oci_learn_rule_needs_consent (e->u.string);
      if (why)
        {
          cleanup_free char *v = oci_learn_escape (e->u.string);
          const char *q = strchr (v, ' ') ? "'" : "";
          cleanup_free char *msg
              = xasprintf ("%s is a %s destination, which a profile never grants; name it on the command "
                           "line (--allow %s%s%s) to reach it",
                           v, why, q, v, q);
          return refuse (field, msg, err);
        }
    }
  return 0;
}

int
oci_learn_check_profile (yajl_val psb, yajl_val pll, yajl_val pnet, yajl_val psc, hk_err *err)
{
  if (!YAJL_IS_OBJECT (psb) || (pll && !YAJL_IS_OBJECT (pll)) || (pnet && !YAJL_IS_OBJECT (pnet))
      || (psc && !YAJL_IS_ARRAY (json_get (psc, "allow"))))
    return err_setk (err, ERR_INVALID_CONFIG, EINVAL,
                     "--profile-file: expected {\"sandbox\": {\"landlock\": {...}, \"network\": {...}, "
                     "\"seccomp\": {\"allow\": [...]}}} (as `run --learn` writes)");
  for (size_t i = 0; i < psb->u.object.len; i++)
    {
      const char *k = psb->u.object.keys[i];
      if (strcmp (k, "landlock") != 0 && strcmp (k, "network") != 0 && strcmp (k, "seccomp") != 0)
        {
          cleanup_free char *field = xasprintf (".sandbox.%s", k);
          return refuse (field, "not a field learning writes (only landlock, network and seccomp)", err);
        }
    }
  yajl_val names = json_get (psc, "allow");
  for (size_t i = 0; i < json_len (names); i++)
    if (!YAJL_IS_STRING (json_at (names, i)))
      {
        cleanup_free char *field = xasprintf (".sandbox.seccomp.allow[%zu]", i);
        return refuse (field, "must be a syscall name", err);
      }
  return check_landlock (pll, err) < 0 ? -1 : check_network (pnet, err);
}
