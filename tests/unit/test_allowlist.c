/* test_allowlist: allow-list entries and the decisions made with them. */
#include <string.h>

#include "lib/netclass.h"
#include "runtime/proxy/allowlist.h"
#include "tests/unit/tap.h"

static bool
parses (const char *text)
{
  struct al_entry e;
  hk_err err = { 0 };
  int r = al_parse_entry (text, &e, &err);
  free (e.name);
  return r == 0;
}

static void
refused_naming (const char *text)
{
  struct al_entry e;
  hk_err err = { 0 };
  int r = al_parse_entry (text, &e, &err);
  ok (r < 0 && strstr (err.msg, text) != NULL, "\"%s\" refused, named: %s", text, err.msg);
}

static struct allowlist
list (char **v)
{
  struct allowlist al;
  hk_err err = { 0 };
  if (al_parse (v, &al, &err) < 0)
    printf ("# %s\n", err.msg);
  return al;
}

static bool
addr_ok (const struct allowlist *al, const char *addr, uint16_t port, bool name_ok)
{
  uint8_t a[16];
  if (!al_parse_literal (addr, a))
    return false;
  return al_addr_allowed (al, a, port, name_ok);
}

static void
test_parse (void)
{
  const char *good[]
      = { "pypi.org",      "PyPI.org.",    "pypi.org:443",        "*.pythonhosted.org", "*.example.com:8443",
          "192.0.2.1",     "192.0.2.0/24", "192.0.2.0/24:443",    "127.0.0.1:8080",     "::1",
          "2001:db8::/32", "[::1]:8080",   "[2001:db8::/32]:443", "0.0.0.0/0",          "localhost",
          "a_b.example" };
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
  ok (!parses (""), "an empty entry is refused");

  struct al_entry e;
  hk_err err;
  /* A URL: its host, with its port or its scheme's. */
  const struct
  {
    const char *url;
    enum al_kind kind;
    uint16_t port;
  } urls[] = { { "http://pypi.org", AL_NAME, 80 },
               { "https://pypi.org/", AL_NAME, 443 },
               { "HTTPS://*.pythonhosted.org", AL_SUFFIX, 443 },
               { "http://127.0.0.1:8080/", AL_NET, 8080 },
               { "http://[::1]", AL_NET, 80 },
               { "https://[::1]:8443", AL_NET, 8443 } };
  for (size_t i = 0; i < sizeof urls / sizeof *urls; i++)
    {
      int r = al_parse_entry (urls[i].url, &e, &err);
      ok (r == 0 && e.kind == urls[i].kind && e.port == urls[i].port
              && (e.kind != AL_NAME || strcmp (e.name, "pypi.org") == 0),
          "URL %s: host and port %u", urls[i].url, urls[i].port);
      free (e.name);
    }
  ok (al_parse_entry ("http://pypi.org/simple", &e, &err) < 0 && strstr (err.msg, "not paths"),
      "a path is refused, saying so: %s", err.msg);
  ok (al_parse_entry ("ftp://pypi.org", &e, &err) < 0 && strstr (err.msg, "HOST:PORT"),
      "another scheme: the message names the forms to use: %s", err.msg);
  al_parse_entry ("192.0.2.77/24:443", &e, &err);
  ok (e.kind == AL_NET && e.prefix == 120 && e.addr[15] == 0 && e.port == 443,
      "an IPv4 CIDR is stored mapped, host bits cleared, with its port");
  al_parse_entry ("127.0.0.1", &e, &err);
  ok (e.special, "127.0.0.1 is a special entry");
  al_parse_entry ("0.0.0.0/0", &e, &err);
  ok (!e.special, "0.0.0.0/0 is not a special entry");
  al_parse_entry ("[fd00::/8]:80", &e, &err);
  ok (e.special && e.port == 80, "a ULA range is special");
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
      ok (al_parse_literal (special[i], a) && net_class (a) != NET_PUBLIC, "%s is special", special[i]);
    }
  const char *public[] = { "8.8.8.8", "192.0.2.1", "172.32.0.1", "2001:db8::1", "2a00::1" };
  for (size_t i = 0; i < sizeof public / sizeof *public; i++)
    {
      uint8_t a[16];
      ok (al_parse_literal (public[i], a) && !net_class (a) != NET_PUBLIC, "%s is not special", public[i]);
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
      enum net_class c = al_parse_literal (v[i].addr, a) ? net_class (a) : (enum net_class) - 1;
      ok (c == v[i].cls, "%s is %s (got %s)", v[i].addr, net_class_name (v[i].cls), net_class_name (c));
    }
  ok (strstr (net_class_name (NET_LINK_LOCAL), "metadata") != NULL, "the link-local class says metadata");
}

static void
test_match (void)
{
  char *v[] = { "pypi.org:443",   "*.pythonhosted.org", "localhost",  "192.0.2.0/24",
                "127.0.0.1:8080", "0.0.0.0/0:9000",     "[::1]:8081", NULL };
  struct allowlist al = list (v);
  ok (al.n == 7, "seven entries");
  ok (al_name_allowed (&al, "pypi.org", 443), "pypi.org:443");
  ok (al_name_allowed (&al, "PYPI.ORG.", 443), "names compare case-insensitively, trailing dot");
  ok (!al_name_allowed (&al, "pypi.org", 80), "pypi.org:80 is not listed");
  ok (al_name_allowed (&al, "files.pythonhosted.org", 443), "*.suffix matches a subdomain");
  ok (al_name_allowed (&al, "a.b.pythonhosted.org", 1), "... at any depth, any port");
  ok (!al_name_allowed (&al, "pythonhosted.org", 443), "*.suffix does not match the bare name");
  ok (!al_name_allowed (&al, "evilpythonhosted.org", 443), "nor a name that merely ends alike");
  ok (!al_name_allowed (&al, "example.org", 443), "an unlisted name");

  ok (addr_ok (&al, "151.101.0.223", 443, true), "a listed name's public address is allowed");
  ok (!addr_ok (&al, "127.0.0.1", 80, true), "a listed name resolving to loopback is refused");
  ok (!addr_ok (&al, "10.0.0.1", 443, true), "... or to a private address");
  ok (!addr_ok (&al, "::1", 80, true), "... or to ::1");
  ok (addr_ok (&al, "127.0.0.1", 8080, true), "unless the address and port are listed");
  ok (addr_ok (&al, "127.0.0.1", 8080, false), "a listed address as a literal");
  ok (!addr_ok (&al, "127.0.0.1", 8081, false), "not on another port");
  ok (addr_ok (&al, "::1", 8081, false), "[::1]:8081");
  ok (addr_ok (&al, "::ffff:127.0.0.1", 8080, false), "a mapped IPv4 address is the IPv4 one");
  ok (addr_ok (&al, "192.0.2.9", 1234, false), "an address in a listed CIDR");
  ok (!addr_ok (&al, "198.51.100.1", 1234, false), "an address outside every CIDR");
  ok (addr_ok (&al, "198.51.100.1", 9000, false), "0.0.0.0/0:9000 covers public addresses");
  ok (!addr_ok (&al, "127.0.0.2", 9000, false), "but not loopback");
  ok (!addr_ok (&al, "169.254.169.254", 9000, false), "nor the metadata service");
  al_free (&al);

  struct allowlist empty = list (NULL);
  ok (!al_name_allowed (&empty, "pypi.org", 443) && !addr_ok (&empty, "8.8.8.8", 53, false),
      "an empty list allows nothing");
  al_free (&empty);
}

int
main (void)
{
  test_parse ();
  test_special ();
  test_class ();
  test_match ();
  return tap_done ();
}
