/* test_netrule: the egress rule grammar (oci/netrule.c) and the decisions
 * the proxy makes with it (runtime/proxy/policy.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/netclass.h"
#include "oci/netrule.h"
#include "oci/spec.h"
#include "runtime/proxy/policy.h"
#include "tests/unit/tap.h"

static bool
parses (const char *text)
{
  struct net_rule r;
  hk_err err = { 0 };
  int ret = oci_net_rule_parse (text, &r, &err);
  oci_net_rule_free (&r);
  return ret == 0;
}

static void
refused_naming (const char *text)
{
  struct net_rule r;
  hk_err err = { 0 };
  int ret = oci_net_rule_parse (text, &r, &err);
  ok (ret < 0 && strstr (err.msg, text) != NULL, "\"%s\" refused, named: %s", text, err.msg);
}

static void
test_parse (void)
{
  const char *good[] = { "pypi.org",
                         "PyPI.org.",
                         "pypi.org:443",
                         "*.pythonhosted.org",
                         "*.example.com:8443",
                         "192.0.2.1",
                         "192.0.2.0/24",
                         "192.0.2.0/24:443",
                         "127.0.0.1:8080",
                         "::1",
                         "2001:db8::/32",
                         "[::1]:8080",
                         "[2001:db8::/32]:443",
                         "0.0.0.0/0",
                         "localhost",
                         "a_b.example",
                         "GET https://api.github.com/repos/*/*/releases/**",
                         "* http://a/",
                         "GET|HEAD https://a:8443/x/",
                         "POST https://[::1]/a",
                         "GET https://*.example.com/**" };
  for (size_t i = 0; i < sizeof good / sizeof *good; i++)
    ok (parses (good[i]), "\"%s\" parses", good[i]);
  const char *bad[] = { "pypi.org:0",
                        "pypi.org:65536",
                        "pypi.org:http",
                        "*.",
                        "*.*.org",
                        "a*.org",
                        "192.0.2.0/33",
                        "::1/129",
                        "[::1",
                        "[::1]x",
                        "[127.0.0.1]:80",
                        "-bad.org",
                        "bad-.org",
                        "a..b",
                        "exa mple.org",
                        "10.0.0.0/x",
                        "300.1.2.3/8",
                        "http://pypi.org/simple",
                        "GET",
                        "get https://a/",
                        "GET ftp://a/",
                        "GET https://a/x?y",
                        "GET https://a/a*b",
                        "GET https://a/**/x",
                        "GET https://a/../x",
                        "GET https://a/%2fx",
                        "GET,,HEAD https://a/",
                        "GET https:///x",
                        "https://pypi.org?x",
                        "ftp://pypi.org",
                        "http://user@pypi.org",
                        "http://",
                        "http://pypi.org:x",
                        "http://10.0.0.0/8",
                        "http://[::1",
                        "://pypi.org" };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
    refused_naming (bad[i]);
  ok (!parses (""), "an empty rule is refused");

  struct net_rule e;
  hk_err err;
  /* A URL without a path: its host, with its port or its scheme's. */
  const struct
  {
    const char *url;
    enum net_rule_kind kind;
    uint16_t port;
  } urls[] = { { "http://pypi.org", NR_NAME, 80 },
               { "https://pypi.org/", NR_NAME, 443 },
               { "HTTPS://*.pythonhosted.org", NR_SUFFIX, 443 },
               { "http://127.0.0.1:8080/", NR_NET, 8080 },
               { "http://[::1]", NR_NET, 80 },
               { "https://[::1]:8443", NR_NET, 8443 } };
  for (size_t i = 0; i < sizeof urls / sizeof *urls; i++)
    {
      int r = oci_net_rule_parse (urls[i].url, &e, &err);
      ok (r == 0 && e.kind == urls[i].kind && e.port == urls[i].port && !e.request
              && (e.kind != NR_NAME || strcmp (e.name, "pypi.org") == 0),
          "URL %s: host and port %u", urls[i].url, urls[i].port);
      oci_net_rule_free (&e);
    }
  ok (oci_net_rule_parse ("http://pypi.org/simple", &e, &err) < 0 && strstr (err.msg, "needs its methods")
          && strstr (err.msg, "GET,HEAD http://pypi.org/simple"),
      "a URL with a path and no methods: refused, saying what to write: %s", err.msg);
  ok (oci_net_rule_parse ("ftp://pypi.org", &e, &err) < 0 && strstr (err.msg, "HOST:PORT"),
      "another scheme: the message names the forms to use: %s", err.msg);
  ok (oci_net_rule_parse ("GET", &e, &err) < 0 && strstr (err.msg, "GET|HEAD"),
      "a method alone (a comma-split list): refused, not a host named get: %s", err.msg);
  oci_net_rule_parse ("192.0.2.77/24:443", &e, &err);
  ok (e.kind == NR_NET && e.prefix == 120 && e.addr[15] == 0 && e.port == 443,
      "an IPv4 CIDR is stored mapped, host bits cleared, with its port");
  oci_net_rule_free (&e);
  oci_net_rule_parse ("127.0.0.1", &e, &err);
  ok (e.special, "127.0.0.1 is a special rule");
  oci_net_rule_free (&e);
  oci_net_rule_parse ("0.0.0.0/0", &e, &err);
  ok (!e.special, "0.0.0.0/0 is not a special rule");
  oci_net_rule_free (&e);
  oci_net_rule_parse ("[fd00::/8]:80", &e, &err);
  ok (e.special && e.port == 80, "a ULA range is special");
  oci_net_rule_free (&e);
}

/* METHODS URL-PATTERN: methods, scheme, host, port, path segments. */
static void
test_request_rules (void)
{
  struct net_rule r;
  hk_err err = { 0 };
  ok (oci_net_rule_parse ("GET,HEAD https://API.github.com/repos/*/*/releases/**", &r, &err) == 0, "parses");
  ok (r.request && r.https && r.kind == NR_NAME && strcmp (r.name, "api.github.com") == 0 && r.port == 443
          && strv_len (r.methods) == 2 && r.n_segs == 4 && r.rest && strcmp (r.segs[1], "*") == 0,
      "methods, https, the host normalized, port 443, four segments and any rest");
  char *a[] = { "repos", "o", "r", "releases", NULL };
  char *b[] = { "repos", "o", "r", "releases", "latest", "x", NULL };
  char *c[] = { "repos", "o", "r", "tags", NULL };
  char *d[] = { "repos", "o", "releases", NULL };
  char *e2[] = { "repos", "", "r", "releases", NULL };
  ok (oci_net_rule_takes (&r, "GET", a, 4), "/repos/o/r/releases: \"**\" takes no further segment too");
  ok (oci_net_rule_takes (&r, "HEAD", b, 6), "... and any rest");
  ok (!oci_net_rule_takes (&r, "POST", a, 4), "not another method");
  ok (!oci_net_rule_takes (&r, "GET", c, 4), "not another literal segment");
  ok (!oci_net_rule_takes (&r, "GET", d, 3), "\"*\" is exactly one segment");
  ok (!oci_net_rule_takes (&r, "GET", e2, 4), "\"*\" is never an empty segment");
  ok (!oci_net_rule_takes (&r, "get", a, 4), "methods are case-sensitive");
  ok (oci_net_rule_names_host (&r, "api.github.com", 443)
          && !oci_net_rule_names_host (&r, "api.github.com", 80)
          && !oci_net_rule_names_host (&r, "github.com", 443),
      "it names api.github.com:443 only");
  oci_net_rule_free (&r);
  ok (oci_net_rule_parse ("* http://a.example/x", &r, &err) == 0 && r.methods == NULL && !r.https
          && r.port == 80 && r.n_segs == 1 && !r.rest,
      "\"*\": any method; http's port 80; an exact path");
  char *x[] = { "x", NULL }, *xs[] = { "x", "", NULL };
  ok (oci_net_rule_takes (&r, "DELETE", x, 1) && !oci_net_rule_takes (&r, "GET", xs, 2),
      "/x is not /x/ (a trailing slash is a segment)");
  oci_net_rule_free (&r);
  ok (oci_net_rule_parse ("GET https://h/**", &r, &err) == 0 && r.n_segs == 0 && r.rest, "/** is every path");
  char *root[] = { "", NULL };
  ok (oci_net_rule_takes (&r, "GET", root, 1), "... \"/\" too");
  oci_net_rule_free (&r);
  ok (oci_net_rule_parse ("GET https://h/a%20b", &r, &err) == 0 && strcmp (r.segs[0], "a b") == 0,
      "a pattern's segments are decoded");
  oci_net_rule_free (&r);
}

/* A request's path as the rules see it; ambiguous ones refused. */
static void
test_path_split (void)
{
  char **segs;
  size_t n;
  const char *why = NULL;
  const char *p = "/a/b%20c/?q=/../x";
  ok (oci_net_path_split (p, strlen (p), &segs, &n, &why) == 0 && n == 3 && strcmp (segs[1], "b c") == 0
          && segs[2][0] == '\0',
      "segments decoded, the query left out");
  strv_free (segs);
  p = "////";
  ok (oci_net_path_split (p, strlen (p), &segs, &n, &why) == 0 && n == 4 && segs[3][0] == '\0'
          && segs[4] == NULL,
      "\"////\": four empty segments (found by fuzz_netrule: one a slash, and the NULL)");
  strv_free (segs);
  const char *bad[] = { "/a/../b", "/a/./b", "/a/%2e%2E/b", "/a%2fb", "/a%5cb", "/a\\b",
                        "/a%00",   "/a%zz",  "/a%2",        "x",      "" };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
    {
      why = NULL;
      ok (oci_net_path_split (bad[i], strlen (bad[i]), &segs, &n, &why) < 0 && why, "\"%s\" refused: %s",
          bad[i], why ? why : "-");
    }
}

static void
test_special (void)
{
  const char *special[] = { "127.0.0.1",
                            "10.1.2.3",
                            "172.31.0.1",
                            "192.168.1.1",
                            "169.254.169.254",
                            "100.64.0.1",
                            "0.0.0.0",
                            "224.0.0.1",
                            "255.255.255.255",
                            "::1",
                            "::",
                            "fd00::1",
                            "fe80::1",
                            "ff02::1",
                            "::ffff:127.0.0.1",
                            "64:ff9b::7f00:1" };
  for (size_t i = 0; i < sizeof special / sizeof *special; i++)
    {
      uint8_t a[16];
      ok (net_parse_literal (special[i], a) && net_class (a) != NET_PUBLIC, "%s is special", special[i]);
    }
  const char *public[] = { "8.8.8.8", "192.0.2.1", "172.32.0.1", "2001:db8::1", "2a00::1" };
  for (size_t i = 0; i < sizeof public / sizeof *public; i++)
    {
      uint8_t a[16];
      ok (net_parse_literal (public[i], a) && !net_class (a) != NET_PUBLIC, "%s is not special", public[i]);
    }
}

/* net_class: the one classification of destinations (the allow-list,
 * the annotations' consent, learning). */
static void
test_class (void)
{
  static const struct
  {
    const char *addr;
    enum net_class cls;
  } v[] = {
    { "127.0.0.1", NET_LOOPBACK },
    { "127.255.255.254", NET_LOOPBACK },
    { "::1", NET_LOOPBACK },
    { "::ffff:127.0.0.1", NET_LOOPBACK },
    { "0.0.0.0", NET_LOOPBACK },
    { "::", NET_LOOPBACK },
    { "169.254.169.254", NET_LINK_LOCAL },
    { "fe80::1", NET_LINK_LOCAL },
    { "febf::1", NET_LINK_LOCAL },
    { "10.0.0.1", NET_PRIVATE },
    { "172.16.0.1", NET_PRIVATE },
    { "172.31.255.255", NET_PRIVATE },
    { "192.168.0.1", NET_PRIVATE },
    { "100.64.0.1", NET_PRIVATE },
    { "100.127.255.255", NET_PRIVATE },
    { "fc00::1", NET_PRIVATE },
    { "fd12:3456::1", NET_PRIVATE },
    { "224.0.0.1", NET_RESERVED },
    { "255.255.255.255", NET_RESERVED },
    { "ff02::1", NET_RESERVED },
    { "64:ff9b::a00:1", NET_RESERVED },
    { "8.8.8.8", NET_PUBLIC },
    { "172.32.0.1", NET_PUBLIC },
    { "100.128.0.1", NET_PUBLIC },
    { "169.255.0.1", NET_PUBLIC },
    { "192.0.2.1", NET_PUBLIC },
    { "2001:db8::1", NET_PUBLIC },
    { "fec0::1", NET_PRIVATE },
  };
  for (size_t i = 0; i < sizeof v / sizeof *v; i++)
    {
      uint8_t a[16];
      enum net_class c = net_parse_literal (v[i].addr, a) ? net_class (a) : (enum net_class) - 1;
      ok (c == v[i].cls, "%s is %s (got %s)", v[i].addr, net_class_name (v[i].cls), net_class_name (c));
    }
  ok (strstr (net_class_name (NET_LINK_LOCAL), "metadata") != NULL, "the link-local class says metadata");
}

static struct egress_policy
policy (enum hako_net_mode mode, char **allow, char **deny)
{
  struct egress_policy p = { .mode = mode };
  hk_err err = { 0 };
  if (oci_net_rules_parse (allow, &p.allow, &err) < 0 || oci_net_rules_parse (deny, &p.deny, &err) < 0)
    printf ("# %s\n", err.msg);
  return p;
}

static bool
addr_ok (const struct egress_policy *p, const char *addr, uint16_t port)
{
  uint8_t a[16];
  struct pol_decision d;
  if (!net_parse_literal (addr, a))
    return false;
  policy_address (p, a, port, &d);
  return d.v != POL_DENY;
}

static enum pol_verdict
dest (const struct egress_policy *p, const char *host, uint16_t port, bool https, char *rule, size_t size)
{
  struct pol_decision d;
  policy_destination (p, host, port, https, &d);
  if (rule)
    snprintf (rule, size, "%s", d.rule);
  return d.v;
}

static enum pol_verdict
req (const struct egress_policy *p, const char *host, const char *method, const char *path, char *rule)
{
  char **segs;
  size_t n;
  const char *why;
  struct pol_decision d = { .v = POL_DENY };
  if (oci_net_path_split (path, strlen (path), &segs, &n, &why) == 0)
    {
      policy_request (p, host, 443, true, method, segs, n, &d);
      strv_free (segs);
    }
  if (rule)
    strcpy (rule, d.rule);
  return d.v;
}

static void
test_destinations (void)
{
  char *v[] = { "pypi.org:443",   "*.pythonhosted.org", "localhost",  "192.0.2.0/24",
                "127.0.0.1:8080", "0.0.0.0/0:9000",     "[::1]:8081", NULL };
  struct egress_policy p = policy (HAKO_NET_ALLOWLIST, v, NULL);
  char rule[32];
  ok (p.allow.n == 7, "seven rules");
  ok (dest (&p, "pypi.org", 443, true, rule, sizeof rule) == POL_ALLOW && strcmp (rule, "allow[0]") == 0,
      "pypi.org:443, by allow[0]");
  ok (dest (&p, "PYPI.ORG.", 443, true, NULL, 0) == POL_ALLOW,
      "names compare case-insensitively, trailing dot");
  ok (dest (&p, "pypi.org", 80, false, rule, sizeof rule) == POL_DENY && strcmp (rule, "default") == 0,
      "pypi.org:80 is not listed: denied by default");
  ok (dest (&p, "files.pythonhosted.org", 443, true, NULL, 0) == POL_ALLOW, "*.suffix names a subdomain");
  ok (dest (&p, "a.b.pythonhosted.org", 1, false, NULL, 0) == POL_ALLOW, "... at any depth, any port");
  ok (dest (&p, "pythonhosted.org", 443, true, NULL, 0) == POL_DENY, "*.suffix does not name the bare name");
  ok (dest (&p, "evilpythonhosted.org", 443, true, NULL, 0) == POL_DENY, "nor a name that merely ends alike");
  ok (dest (&p, "192.0.2.9", 1234, false, NULL, 0) == POL_ALLOW, "an address in a listed CIDR");
  ok (dest (&p, "198.51.100.1", 1234, false, NULL, 0) == POL_DENY, "an address outside every CIDR");
  ok (dest (&p, "bad name", 80, false, NULL, 0) == POL_DENY, "not a host name");

  ok (addr_ok (&p, "151.101.0.223", 443), "a public address is allowed");
  ok (!addr_ok (&p, "127.0.0.1", 80), "a name resolving to loopback is refused");
  ok (!addr_ok (&p, "10.0.0.1", 443), "... or to a private address");
  ok (!addr_ok (&p, "::1", 80), "... or to ::1");
  ok (addr_ok (&p, "127.0.0.1", 8080), "unless the address and port are listed");
  ok (!addr_ok (&p, "127.0.0.1", 8081), "not on another port");
  ok (addr_ok (&p, "::1", 8081), "[::1]:8081");
  ok (addr_ok (&p, "::ffff:127.0.0.1", 8080), "a mapped IPv4 address is the IPv4 one");
  ok (!addr_ok (&p, "127.0.0.2", 9000), "0.0.0.0/0 does not open loopback");
  ok (!addr_ok (&p, "169.254.169.254", 9000), "nor the metadata service");
  ok (policy_opens_loopback (&p.allow), "127.0.0.1:8080 opens a loopback address");
  policy_free (&p);

  struct egress_policy empty = policy (HAKO_NET_ALLOWLIST, NULL, NULL);
  ok (dest (&empty, "pypi.org", 443, true, NULL, 0) == POL_DENY && !policy_opens_loopback (&empty.allow),
      "an empty allow-list allows nothing");
  policy_free (&empty);
}

/* Deny rules, the deny-list mode, and the metadata services. */
static void
test_deny (void)
{
  char *allow[] = { "*.example.com", "169.254.169.254:80", NULL };
  char *deny[] = { "evil.example.com", "POST https://api.example.com/**", "203.0.113.0/24", NULL };
  struct egress_policy p = policy (HAKO_NET_ALLOWLIST, allow, deny);
  char rule[32];
  ok (dest (&p, "evil.example.com", 443, true, rule, sizeof rule) == POL_DENY
          && strcmp (rule, "deny[0]") == 0,
      "a deny rule beats an allow rule: deny[0]");
  ok (dest (&p, "api.example.com", 443, true, rule, sizeof rule) == POL_INTERCEPT
          && strcmp (rule, "allow[0]") == 0,
      "a request rule names api.example.com: its CONNECTs are intercepted");
  ok (dest (&p, "api.example.com", 80, false, NULL, 0) == POL_ALLOW,
      "... its plain HTTP is not (the rule is https)");
  ok (dest (&p, "www.example.com", 443, true, NULL, 0) == POL_ALLOW, "another host: an opaque tunnel");
  ok (req (&p, "api.example.com", "POST", "/x", rule) == POL_DENY && strcmp (rule, "deny[1]") == 0,
      "POST to it: deny[1]");
  ok (req (&p, "api.example.com", "GET", "/x", rule) == POL_ALLOW && strcmp (rule, "allow[0]") == 0,
      "GET to it: allow[0]");
  uint8_t a[16];
  struct pol_decision d;
  net_parse_literal ("203.0.113.5", a);
  policy_address (&p, a, 443, &d);
  ok (d.v == POL_DENY && strcmp (d.rule, "deny[2]") == 0, "a deny CIDR refuses a name's address: %s", d.rule);
  ok (addr_ok (&p, "169.254.169.254", 80), "a link-local address named by the CLI user is open");
  ok (!addr_ok (&p, "169.254.169.253", 80), "another is not");
  policy_free (&p);

  char *deny2[] = { "GET https://files.example.org/private/**", "10.0.0.0/8", NULL };
  struct egress_policy q = policy (HAKO_NET_DENYLIST, NULL, deny2);
  ok (dest (&q, "pypi.org", 443, true, rule, sizeof rule) == POL_ALLOW && strcmp (rule, "default") == 0,
      "denylist: an unnamed public host is let through");
  ok (dest (&q, "files.example.org", 443, true, NULL, 0) == POL_INTERCEPT,
      "a host a deny request rule names is seen");
  ok (req (&q, "files.example.org", "GET", "/private/a", rule) == POL_DENY && strcmp (rule, "deny[0]") == 0,
      "... and the request it names refused");
  ok (req (&q, "files.example.org", "GET", "/public/a", rule) == POL_ALLOW && strcmp (rule, "default") == 0,
      "... others let through");
  ok (!addr_ok (&q, "127.0.0.1", 80) && !addr_ok (&q, "169.254.169.254", 80)
          && !addr_ok (&q, "192.168.1.1", 80),
      "denylist: loopback, link-local and private addresses stay closed");
  net_parse_literal ("169.254.169.254", a);
  policy_address (&q, a, 80, &d);
  ok (strcmp (d.rule, "default[link-local]") == 0, "... each named by its class: %s", d.rule);
  ok (dest (&q, "metadata.google.internal", 80, false, rule, sizeof rule) == POL_DENY
          && strcmp (rule, "default[metadata]") == 0,
      "a metadata service's name is refused: %s", rule);
  ok (dest (&q, "Metadata.", 80, false, NULL, 0) == POL_DENY, "... however it is spelt");
  policy_free (&q);
  char *named[] = { "metadata.google.internal", NULL }, *suffix[] = { "*.google.internal", NULL };
  struct egress_policy r = policy (HAKO_NET_DENYLIST, named, NULL);
  ok (dest (&r, "metadata.google.internal", 80, false, NULL, 0) == POL_ALLOW,
      "unless a rule names it exactly");
  policy_free (&r);
  r = policy (HAKO_NET_ALLOWLIST, suffix, NULL);
  ok (dest (&r, "metadata.google.internal", 80, false, NULL, 0) == POL_DENY,
      "a suffix rule does not open it");
  policy_free (&r);
}

/* Secrets: a CONNECT to their host is seen; each goes to its host only. */
static void
test_secret_hosts (void)
{
  char *allow[] = { "api.example.com", "other.example.com", NULL };
  struct egress_policy p = policy (HAKO_NET_ALLOWLIST, allow, NULL);
  p.secrets = calloc (1, sizeof *p.secrets);
  p.secrets[0] = (struct egress_secret){ .name = strdup ("T"),
                                         .placeholder = strdup ("hako-secret-0123456789abcdef"),
                                         .host = strdup ("api.example.com"),
                                         .port = 443 };
  p.n_secrets = 1;
  ok (dest (&p, "api.example.com", 443, true, NULL, 0) == POL_INTERCEPT, "the secret's host: intercepted");
  ok (dest (&p, "other.example.com", 443, true, NULL, 0) == POL_ALLOW, "another host: an opaque tunnel");
  ok (dest (&p, "api.example.com", 80, false, NULL, 0) == POL_ALLOW,
      "plain HTTP to it: no secret goes there");
  const char *t = "hako-secret-0123456789abcdefXYZ";
  ok (policy_secret_at (&p, t, strlen (t)) == &p.secrets[0]
          && policy_secret_at (&p, t + 1, strlen (t) - 1) == NULL,
      "a placeholder is found where it starts");
  ok (policy_secret_for (&p.secrets[0], "api.example.com", 443)
          && !policy_secret_for (&p.secrets[0], "api.example.com", 8443)
          && !policy_secret_for (&p.secrets[0], "other.example.com", 443),
      "a secret is for its host and port only");
  policy_free (&p);
}

int
main (void)
{
  test_parse ();
  test_request_rules ();
  test_path_split ();
  test_special ();
  test_class ();
  test_destinations ();
  test_deny ();
  test_secret_hosts ();
  return tap_done ();
}
