/* policy: a sandbox's egress policy as its proxy applies it, and the
 * decisions made with it, each naming the rule that made it. */
#include "runtime/proxy/policy.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/netclass.h"
#include "lib/util.h"

static int
copy_rules (char *const *texts, struct net_rules *out, hk_err *err)
{
  return oci_net_rules_parse (texts, out, err);
}

int
policy_from_spec (const struct oci_spec *spec, struct egress_policy *out, hk_err *err)
{
  return policy_from_sandbox (&spec->sandbox, out, err);
}

int
policy_from_sandbox (const struct hako_sandbox *sb, struct egress_policy *out, hk_err *err)
{
  *out = (struct egress_policy){ .mode = sb->net_mode };
  if (copy_rules (sb->net_allow, &out->allow, err) < 0 || copy_rules (sb->net_deny, &out->deny, err) < 0)
    {
      policy_free (out);
      return -1;
    }
  out->secrets = xcalloc (sb->n_secrets + 1, sizeof *out->secrets);
  for (size_t i = 0; i < sb->n_secrets; i++)
    {
      const struct hako_secret *s = &sb->secrets[i];
      out->secrets[i]
          = (struct egress_secret){ .name = xstrdup (s->name),
                                    .placeholder = s->placeholder ? xstrdup (s->placeholder) : NULL,
                                    .host = xstrdup (s->host),
                                    .port = s->port,
                                    .query = s->query };
      out->n_secrets++;
    }
  return 0;
}

int
policy_set_values (struct egress_policy *p, const struct oci_secret_value *v, size_t n, hk_err *err)
{
  for (size_t i = 0; i < p->n_secrets; i++)
    {
      struct egress_secret *s = &p->secrets[i];
      size_t j = 0;
      while (j < n && strcmp (v[j].name, s->name) != 0)
        j++;
      if (j == n)
        return err_set (err, ENOENT, "secret %s has no value kept for it (is it new? `hako update --secret`)",
                        s->name);
      free (s->value);
      s->value = xstrdup (v[j].value);
      s->value_len = strlen (s->value);
    }
  return 0;
}

void
policy_free (struct egress_policy *p)
{
  oci_net_rules_free (&p->allow);
  oci_net_rules_free (&p->deny);
  for (size_t i = 0; i < p->n_secrets; i++)
    {
      struct egress_secret *s = &p->secrets[i];
      free (s->name);
      free (s->placeholder);
      if (s->value)
        explicit_bzero (s->value, s->value_len);
      free (s->value);
      free (s->host);
    }
  free (p->secrets);
  *p = (struct egress_policy){ 0 };
}

static void __attribute__ ((format (printf, 4, 5)))
decide (struct pol_decision *d, enum pol_verdict v, const char *rule, const char *fmt, ...)
{
  d->v = v;
  snprintf (d->rule, sizeof d->rule, "%s", rule);
  d->reason[0] = '\0';
  if (fmt)
    {
      va_list ap;
      va_start (ap, fmt);
      vsnprintf (d->reason, sizeof d->reason, fmt, ap);
      va_end (ap);
    }
}

static void
rule_id (char *out, size_t size, const char *list, size_t i)
{
  snprintf (out, size, "%s[%zu]", list, i);
}

/* host as the rules compare it: a literal address as written (brackets
 * dropped), a name normalized; false when it is neither. */
static bool
normalize_host (const char *host, char *out, size_t size)
{
  uint8_t a[16];
  size_t n = strlen (host);
  if (net_parse_literal (host, a))
    {
      if (n >= 2 && host[0] == '[')
        snprintf (out, size, "%.*s", (int)(n - 2), host + 1);
      else
        snprintf (out, size, "%s", host);
      return true;
    }
  return net_normalize_name (host, out, size);
}

/* The first destination rule of rs that names host:port, or -1. */
static long
find_destination (const struct net_rules *rs, const char *host, uint16_t port)
{
  for (size_t i = 0; i < rs->n; i++)
    if (!rs->v[i].request && oci_net_rule_names_host (&rs->v[i], host, port))
      return (long)i;
  return -1;
}

/* The first request rule of rs, of that scheme, that names host:port (and,
 * with method set, takes the request), or -1. */
static long
find_request (const struct net_rules *rs, const char *host, uint16_t port, bool https, const char *method,
              char *const *segs, size_t n)
{
  for (size_t i = 0; i < rs->n; i++)
    {
      const struct net_rule *r = &rs->v[i];
      if (r->request && r->https == https && oci_net_rule_names_host (r, host, port)
          && (method == NULL || oci_net_rule_takes (r, method, segs, n)))
        return (long)i;
    }
  return -1;
}

static bool
secret_names (const struct egress_policy *p, const char *host, uint16_t port)
{
  for (size_t i = 0; i < p->n_secrets; i++)
    if (policy_secret_for (&p->secrets[i], host, port))
      return true;
  return false;
}

bool
policy_has_request_rules (const struct egress_policy *p, const char *host, uint16_t port, bool https)
{
  char h[256];
  if (!normalize_host (host, h, sizeof h))
    return false;
  return find_request (&p->allow, h, port, https, NULL, NULL, 0) >= 0
         || find_request (&p->deny, h, port, https, NULL, NULL, 0) >= 0;
}

static bool
has_https_request_rules (const struct egress_policy *p)
{
  for (size_t i = 0; i < p->allow.n; i++)
    if (p->allow.v[i].request && p->allow.v[i].https)
      return true;
  for (size_t i = 0; i < p->deny.n; i++)
    if (p->deny.v[i].request && p->deny.v[i].https)
      return true;
  return false;
}

/* Only an exact name rule opens a metadata service's name. */
static bool
names_exactly (const struct net_rules *rs, const char *name)
{
  for (size_t i = 0; i < rs->n; i++)
    if (rs->v[i].kind == NR_NAME && strcmp (rs->v[i].name, name) == 0)
      return true;
  return false;
}

void
policy_destination (const struct egress_policy *p, const char *host, uint16_t port, bool https,
                    struct pol_decision *d)
{
  char h[256], id[32];
  char target[300];
  snprintf (target, sizeof target, strchr (host, ':') ? "[%s]:%u" : "%s:%u", host, (unsigned)port);
  if (!normalize_host (host, h, sizeof h))
    return decide (d, POL_DENY, "default", "%s is not a host name or address", target);
  long i = find_destination (&p->deny, h, port);
  if (i >= 0)
    {
      rule_id (id, sizeof id, "deny", (size_t)i);
      return decide (d, POL_DENY, id, "%s is denied by deny rule %zu (\"%s\")", target, (size_t)i,
                     p->deny.v[i].text);
    }
  /* A cloud's metadata service answers credentials to whoever asks: its
   * names are refused unless a rule names them exactly (an address rule
   * can open its address; a "*.internal" rule does not open it). */
  if (oci_net_is_metadata_name (h) && !names_exactly (&p->allow, h))
    return decide (d, POL_DENY, "default[metadata]",
                   "%s is a cloud metadata service, refused unless a rule names it exactly", target);
  uint8_t a[16];
  bool see
      = find_request (&p->allow, h, port, https, NULL, NULL, 0) >= 0
        || find_request (&p->deny, h, port, https, NULL, NULL, 0) >= 0
        || (https && secret_names (p, h, port))
        /* In the denylist mode an address is let through: seen, so
         * that a request for a name a deny rule names cannot go to its
         * address with that name in SNI and Host. */
        || (https && p->mode == HAKO_NET_DENYLIST && net_parse_literal (h, a) && has_https_request_rules (p))
        /* Learning sees every request, to write rules for them. */
        || (https && p->learn);
  enum pol_verdict ok = see && https ? POL_INTERCEPT : POL_ALLOW;
  if ((i = find_destination (&p->allow, h, port)) >= 0)
    {
      rule_id (id, sizeof id, "allow", (size_t)i);
      return decide (d, ok, id, NULL);
    }
  if ((i = find_request (&p->allow, h, port, https, NULL, NULL, 0)) >= 0)
    {
      rule_id (id, sizeof id, "allow", (size_t)i);
      return decide (d, ok, id, NULL);
    }
  if (p->learn)
    return decide (d, ok, "learn", "learning mode: forwarded and recorded, not checked");
  if (p->mode == HAKO_NET_DENYLIST)
    return decide (d, ok, "default", NULL);
  decide (d, POL_DENY, "default", "%s is not in the sandbox's network allow-list", target);
}

void
policy_request (const struct egress_policy *p, const char *host, uint16_t port, bool https,
                const char *method, char *const *segs, size_t n, struct pol_decision *d)
{
  char h[256], id[32];
  if (!normalize_host (host, h, sizeof h))
    return decide (d, POL_DENY, "default", "%s is not a host name or address", host);
  long i = find_destination (&p->deny, h, port);
  if (i >= 0)
    {
      rule_id (id, sizeof id, "deny", (size_t)i);
      return decide (d, POL_DENY, id, "denied by deny rule %zu (\"%s\")", (size_t)i, p->deny.v[i].text);
    }
  if ((i = find_request (&p->deny, h, port, https, method, segs, n)) >= 0)
    {
      rule_id (id, sizeof id, "deny", (size_t)i);
      return decide (d, POL_DENY, id, "%s denied by deny rule %zu (\"%s\")", method, (size_t)i,
                     p->deny.v[i].text);
    }
  if ((i = find_request (&p->allow, h, port, https, method, segs, n)) >= 0
      || (i = find_destination (&p->allow, h, port)) >= 0)
    {
      rule_id (id, sizeof id, "allow", (size_t)i);
      return decide (d, POL_ALLOW, id, NULL);
    }
  if (p->learn)
    return decide (d, POL_ALLOW, "learn", "learning mode: forwarded and recorded, not checked");
  if (p->mode == HAKO_NET_DENYLIST)
    return decide (d, POL_ALLOW, "default", NULL);
  char path[256];
  size_t k = 0;
  for (size_t j = 0; j < n && k + 2 < sizeof path; j++)
    k += (size_t)snprintf (path + k, sizeof path - k, "/%s", segs[j]);
  decide (d, POL_DENY, "default", "%s %s%s on %s is not in the sandbox's network allow-list", method,
          n ? path : "/", k + 2 >= sizeof path ? "..." : "", h);
}

void
policy_address (const struct egress_policy *p, const uint8_t a[16], uint16_t port, struct pol_decision *d)
{
  char id[32];
  for (size_t i = 0; i < p->deny.n; i++)
    {
      const struct net_rule *r = &p->deny.v[i];
      if (!r->request && r->kind == NR_NET && (r->port == 0 || r->port == port)
          && net_prefix_match (a, r->addr, r->prefix))
        {
          rule_id (id, sizeof id, "deny", i);
          return decide (d, POL_DENY, id, "the address is denied by deny rule %zu (\"%s\")", i, r->text);
        }
    }
  enum net_class c = net_class (a);
  if (c == NET_PUBLIC)
    return decide (d, POL_ALLOW, "", NULL);
  for (size_t i = 0; i < p->allow.n; i++)
    {
      const struct net_rule *r = &p->allow.v[i];
      if (r->kind == NR_NET && r->special && (r->port == 0 || r->port == port)
          && net_prefix_match (a, r->addr, r->prefix))
        {
          rule_id (id, sizeof id, "allow", i);
          return decide (d, POL_ALLOW, id, NULL);
        }
    }
  snprintf (id, sizeof id, "default[%s]", net_class_word (c));
  decide (d, POL_DENY, id, "%s, which no rule names", net_class_name (c));
}

/* Two prefix-aligned ranges overlap when one holds the other: they agree on
 * the shorter prefix. */
static bool
ranges_overlap (const uint8_t *a, unsigned pa, const uint8_t *b, unsigned pb)
{
  return net_prefix_match (a, b, pa < pb ? pa : pb);
}

bool
policy_opens_loopback (const struct net_rules *allow)
{
  static const uint8_t v4_loop[16] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 127 };
  static const uint8_t v6_loop[16] = { [15] = 1 };
  for (size_t i = 0; i < allow->n; i++)
    {
      const struct net_rule *r = &allow->v[i];
      /* Only a special rule opens a loopback address (policy_address). */
      if (r->kind == NR_NET && r->special
          && (ranges_overlap (r->addr, r->prefix, v4_loop, 104)
              || ranges_overlap (r->addr, r->prefix, v6_loop, 128)))
        return true;
    }
  return false;
}

const struct egress_secret *
policy_secret_at (const struct egress_policy *p, const char *text, size_t len)
{
  for (size_t i = 0; i < p->n_secrets; i++)
    {
      const struct egress_secret *s = &p->secrets[i];
      size_t n = s->placeholder ? strlen (s->placeholder) : 0;
      if (n && n <= len && memcmp (text, s->placeholder, n) == 0)
        return s;
    }
  return NULL;
}

bool
policy_secret_for (const struct egress_secret *s, const char *host, uint16_t port)
{
  uint8_t a[16], b[16];
  if (s->port != port)
    return false;
  if (net_parse_literal (host, a))
    return net_parse_literal (s->host, b) && memcmp (a, b, 16) == 0;
  return strcmp (s->host, host) == 0;
}

bool
policy_intercepts (const struct egress_policy *p)
{
  return p->n_secrets > 0 || has_https_request_rules (p);
}

size_t
policy_placeholders (const struct egress_policy *p, const char *text, size_t len, const char **names,
                     size_t max)
{
  size_t n = 0;
  for (size_t i = 0; p->n_secrets && i < len; i++)
    {
      const struct egress_secret *s = policy_secret_at (p, text + i, len - i);
      if (s == NULL)
        continue;
      bool seen = false;
      for (size_t j = 0; j < n; j++)
        seen |= names[j] == s->name;
      if (!seen && n < max)
        names[n++] = s->name;
      i += strlen (s->placeholder) - 1;
    }
  return n;
}
