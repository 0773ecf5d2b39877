/* test_netpolicy: the allowlist mode's process environment, and --network /
 * --allow written into the config text. */
#include <string.h>

#include "oci/spec.h"
#include "runtime/proxy/netpolicy.h"
#include "tests/unit/helpers.h"
#include "tests/unit/tap.h"

static void
test_env (void)
{
  struct oci_spec spec = { 0 };
  char *base[] = { "PATH=/bin", "HTTP_PROXY=http://elsewhere:1", "no_proxy=*", NULL };
  spec.sandbox.net_mode = HAKO_NET_NONE;
  char **v = netpolicy_env (&spec, base);
  ok (strv_len (v) == 3 && strcmp (strv_env (v, "HTTP_PROXY"), "http://elsewhere:1") == 0,
      "other modes: the environment unchanged");
  strv_free (v);
  spec.sandbox.net_mode = HAKO_NET_ALLOWLIST;
  v = netpolicy_env (&spec, base);
  is_str (strv_env (v, "PATH"), "/bin", "PATH kept");
  is_str (strv_env (v, "HTTP_PROXY"), "http://127.0.0.1:3128", "HTTP_PROXY replaced");
  is_str (strv_env (v, "https_proxy"), "http://127.0.0.1:3128", "https_proxy");
  is_str (strv_env (v, "ALL_PROXY"), "http://127.0.0.1:3128", "ALL_PROXY");
  is_str (strv_env (v, "NO_PROXY"), "localhost,127.0.0.1,::1", "NO_PROXY");
  is_str (strv_env (v, "no_proxy"), "localhost,127.0.0.1,::1", "no_proxy replaced");
  ok (strv_len (v) == 9, "one of each, nothing doubled");
  strv_free (v);
  /* The host's loopback listed: "127.0.0.1" is then the host's, reached only
   * through the proxy. */
  const char *lo[] = { "127.0.0.1:8080", "[::1]:80", "127.0.0.0/8", "::/96", "GET http://127.0.0.1:9/x" };
  for (size_t i = 0; i < sizeof lo / sizeof *lo; i++)
    {
      char *allow[] = { "pypi.org", (char *)lo[i], NULL };
      hk_err err = { 0 };
      spec.sandbox.net_allow = allow;
      if (oci_net_rules_parse (allow, &spec.sandbox.allow_rules, &err) < 0)
        printf ("# %s\n", err.msg);
      v = netpolicy_env (&spec, base);
      ok (strcmp (strv_env (v, "NO_PROXY"), "") == 0 && strcmp (strv_env (v, "no_proxy"), "") == 0
              && strcmp (strv_env (v, "HTTP_PROXY"), "http://127.0.0.1:3128") == 0,
          "%s listed: NO_PROXY empty", lo[i]);
      strv_free (v);
      oci_net_rules_free (&spec.sandbox.allow_rules);
    }
  char *public[] = { "pypi.org", "0.0.0.0/0", "10.0.0.0/8", "localhost", NULL };
  hk_err err = { 0 };
  spec.sandbox.net_allow = public;
  oci_net_rules_parse (public, &spec.sandbox.allow_rules, &err);
  v = netpolicy_env (&spec, base);
  is_str (strv_env (v, "NO_PROXY"), "localhost,127.0.0.1,::1",
          "no loopback address listed (0.0.0.0/0 does not open it): NO_PROXY keeps the sandbox's lo");
  strv_free (v);
  oci_net_rules_free (&spec.sandbox.allow_rules);
  spec.sandbox.net_mode = HAKO_NET_DENYLIST;
  v = netpolicy_env (&spec, base);
  is_str (strv_env (v, "HTTPS_PROXY"), "http://127.0.0.1:3128", "the denylist mode is proxied too");
  strv_free (v);
}

static void
test_prepare (void)
{
  const char *json
      = "{\"ociVersion\":\"1.0.2\",\"root\":{\"path\":\"r\"},\"process\":{\"args\":[\"sh\"],\"cwd\":\"/\"},"
        "\"sandbox\":{\"network\":{\"mode\":\"allowlist\",\"allow\":[\"pypi.org\",\"10.0.0.0/99\"]}}}";
  struct oci_spec *spec = NULL;
  hk_err err = { 0 };
  ok (oci_spec_parse (json, strlen (json), &spec, &err) < 0 && strstr (err.msg, ".sandbox.network.allow[1]")
          && strstr (err.msg, "\"10.0.0.0/99\""),
      "a malformed rule fails the parse, named with its path: %s", err.msg);
}

static void
test_set_network (void)
{
  const char *json = "{\"ociVersion\":\"1.0.2\",\"root\":{\"path\":\"r\"},\"n\":1.50,\"z\":null,\"process\":{"
                     "\"args\":[\"sh\"],\"cwd\":\"/\"},"
                     "\"sandbox\":{\"profile\":\"host\",\"network\":{\"mode\":\"none\",\"x\":true}}}";
  char *allow[]
      = { "pypi.org:443", "127.0.0.1:8080", "GET,HEAD https://api.github.com/repos/*/*/releases/**", NULL };
  char *deny[] = { "POST https://api.github.com/**", NULL };
  char *out = NULL;
  size_t len;
  hk_err err = { 0 };
  struct oci_net_edit e = { .mode = "allowlist", .allow = allow, .deny = deny };
  ok (oci_spec_set_network (json, strlen (json), &e, &out, &len, &err) == 0, "patched");
  struct oci_spec *spec = NULL;
  ok (out && oci_spec_parse (out, len, &spec, &err) == 0, "the result parses %s", err.msg);
  ok (spec && spec->sandbox.net_mode == HAKO_NET_ALLOWLIST && strv_len (spec->sandbox.net_allow) == 3
          && strcmp (spec->sandbox.net_allow[1], "127.0.0.1:8080") == 0 && spec->sandbox.allow_rules.n == 3
          && spec->sandbox.allow_rules.v[2].request && spec->sandbox.deny_rules.n == 1,
      "mode and rules set, and parsed");
  ok (out && strstr (out, "1.50") && strstr (out, "\"profile\": \"host\"") && strstr (out, "\"x\": true")
          && strstr (out, "\"z\": null"),
      "everything else kept as written");
  if (spec)
    oci_spec_free (spec);
  spec = NULL;
  free (out);
  char *more[] = { "b.example", NULL };
  const char *with = "{\"sandbox\":{\"network\":{\"mode\":\"allowlist\",\"allow\":[\"a.example\"]}}}";
  e = (struct oci_net_edit){ .allow = more };
  ok (oci_spec_set_network (with, strlen (with), &e, &out, &len, &err) == 0 && strstr (out, "\"a.example\"")
          && strstr (out, "\"b.example\"") && strstr (out, "\"mode\": \"allowlist\""),
      "--allow appends to the spec's list, mode kept");
  free (out);
  e = (struct oci_net_edit){ .mode = "none" };
  ok (oci_spec_set_network ("[1]", 3, &e, &out, &len, &err) < 0, "not an object: refused");

  /* Secrets: each gets a fresh placeholder; one already there is kept. */
  struct oci_secret_arg a;
  ok (oci_secret_arg_parse ("GH=env:GH_TOKEN@api.github.com,query", &a, &err) == 0
          && strcmp (a.name, "GH") == 0 && strcmp (a.from, "env:GH_TOKEN") == 0
          && strcmp (a.host, "api.github.com") == 0 && a.query,
      "--secret NAME=env:VAR@HOST,query");
  const char *sec = "{\"ociVersion\":\"1.0.2\",\"process\":{\"args\":[\"sh\"],\"cwd\":\"/"
                    "\"},\"root\":{\"path\":\"r\"},\"sandbox\":{\"network\":{"
                    "\"mode\":\"denylist\",\"secrets\":[{\"name\":\"K\",\"from\":\"file:/"
                    "k\",\"host\":\"h.example:8443\"},"
                    "{\"name\":\"J\",\"from\":\"env:J\",\"host\":\"h.example\",\"placeholder\":\"keep-me-"
                    "0123456789abcdef\"}]}}}";
  e = (struct oci_net_edit){ .secrets = &a, .n_secrets = 1 };
  ok (oci_spec_set_network (sec, strlen (sec), &e, &out, &len, &err) == 0
          && oci_spec_parse (out, len, &spec, &err) == 0,
      "secrets written, the result parses %s", err.msg);
  ok (spec && spec->sandbox.n_secrets == 3
          && strncmp (spec->sandbox.secrets[0].placeholder, "hako-secret-", 12) == 0
          && strlen (spec->sandbox.secrets[0].placeholder) == 44 && spec->sandbox.secrets[0].port == 8443
          && strcmp (spec->sandbox.secrets[1].placeholder, "keep-me-0123456789abcdef") == 0
          && strcmp (spec->sandbox.secrets[2].host, "api.github.com") == 0
          && spec->sandbox.secrets[2].port == 443 && spec->sandbox.secrets[2].query
          && strcmp (spec->sandbox.secrets[0].placeholder, spec->sandbox.secrets[2].placeholder) != 0,
      "placeholders: fresh where missing, kept where given, each its own");
  if (spec)
    oci_spec_free (spec);
  free (out);
  oci_secret_arg_free (&a);
  const char *bad[] = { "GH",           "GH=env:X",     "1X=env:X@h", "GH=env:@h", "GH=file:rel@h",
                        "GH=env:X@*.h", "GH=env:X@h/x", "GH=secret@h" };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
    ok (oci_secret_arg_parse (bad[i], &a, &err) < 0 && strstr (err.msg, bad[i]), "--secret %s refused: %s",
        bad[i], err.msg);
}

static void
test_set_disk (void)
{
  const char *json = "{\"ociVersion\":\"1.0.0\",\"root\":{\"path\":\"r\"},"
                     "\"sandbox\":{\"limits\":{\"timeout\":\"5s\",\"disk\":\"1g\"},\"image\":\"x\"}}";
  char *out = NULL;
  size_t len;
  hk_err err = { 0 };
  struct oci_spec *spec = NULL;
  ok (oci_spec_set_disk (json, strlen (json), "64m", &out, &len, &err) == 0
          && oci_spec_parse (out, len, &spec, &err) == 0,
      "--disk patched in, the result parses %s", err.msg);
  ok (spec && spec->sandbox.disk == 64 << 20 && spec->sandbox.timeout_ms == 5000
          && strcmp (spec->sandbox.image, "x") == 0,
      "disk replaced, the other limits and members kept");
  if (spec)
    oci_spec_free (spec);
  free (out);
  ok (oci_spec_set_disk ("{}", 2, "-1", &out, &len, &err) == 0 && strstr (out, "\"disk\": \"-1\""),
      "a config without sandbox gets sandbox.limits.disk");
  free (out);
}

int
main (void)
{
  test_env ();
  test_prepare ();
  test_set_network ();
  test_set_disk ();
  return tap_done ();
}
