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
  const char *lo[] = { "127.0.0.1:8080", "[::1]:80", "127.0.0.0/8", "::/96" };
  for (size_t i = 0; i < sizeof lo / sizeof *lo; i++)
    {
      char *allow[] = { "pypi.org", (char *)lo[i], NULL };
      spec.sandbox.net_allow = allow;
      v = netpolicy_env (&spec, base);
      ok (strcmp (strv_env (v, "NO_PROXY"), "") == 0 && strcmp (strv_env (v, "no_proxy"), "") == 0
              && strcmp (strv_env (v, "HTTP_PROXY"), "http://127.0.0.1:3128") == 0,
          "%s listed: NO_PROXY empty", lo[i]);
      strv_free (v);
    }
  char *public[] = { "pypi.org", "0.0.0.0/0", "10.0.0.0/8", "localhost", NULL };
  spec.sandbox.net_allow = public;
  v = netpolicy_env (&spec, base);
  is_str (strv_env (v, "NO_PROXY"), "localhost,127.0.0.1,::1",
          "no loopback address listed (0.0.0.0/0 does not open it): NO_PROXY keeps the sandbox's lo");
  strv_free (v);
}

static void
test_prepare (void)
{
  const char *json
      = "{\"ociVersion\":\"1.0.2\",\"root\":{\"path\":\"r\"},\"process\":{\"args\":[\"sh\"],\"cwd\":\"/\"},"
        "\"sandbox\":{\"network\":{\"mode\":\"allowlist\",\"allow\":[\"pypi.org\",\"10.0.0.0/99\"]}}}";
  struct oci_spec *spec = spec_json (json);
  hk_err err = { 0 };
  if (!ok (spec != NULL, "spec parses"))
    return;
  ok (netpolicy_prepare (spec, &err) < 0 && strstr (err.msg, "\"10.0.0.0/99\""),
      "a malformed entry fails, named: %s", err.msg);
  oci_spec_free (spec);
}

static void
test_set_network (void)
{
  const char *json = "{\"ociVersion\":\"1.0.2\",\"root\":{\"path\":\"r\"},\"n\":1.50,\"z\":null,\"process\":{"
                     "\"args\":[\"sh\"],\"cwd\":\"/\"},"
                     "\"sandbox\":{\"profile\":\"host\",\"network\":{\"mode\":\"none\",\"x\":true}}}";
  char *allow[] = { "pypi.org:443", "127.0.0.1:8080", NULL };
  char *out = NULL;
  size_t len;
  hk_err err = { 0 };
  ok (oci_spec_set_network (json, strlen (json), "allowlist", allow, &out, &len, &err) == 0, "patched");
  struct oci_spec *spec = NULL;
  ok (out && oci_spec_parse (out, len, &spec, &err) == 0, "the result parses");
  ok (spec && spec->sandbox.net_mode == HAKO_NET_ALLOWLIST && strv_len (spec->sandbox.net_allow) == 2
          && strcmp (spec->sandbox.net_allow[1], "127.0.0.1:8080") == 0,
      "mode and entries set");
  ok (out && strstr (out, "1.50") && strstr (out, "\"profile\": \"host\"") && strstr (out, "\"x\": true")
          && strstr (out, "\"z\": null"),
      "everything else kept as written");
  if (spec)
    oci_spec_free (spec);
  free (out);
  char *more[] = { "b.example", NULL };
  const char *with = "{\"sandbox\":{\"network\":{\"mode\":\"allowlist\",\"allow\":[\"a.example\"]}}}";
  ok (oci_spec_set_network (with, strlen (with), NULL, more, &out, &len, &err) == 0
          && strstr (out, "\"a.example\"") && strstr (out, "\"b.example\"")
          && strstr (out, "\"mode\": \"allowlist\""),
      "--allow appends to the spec's list, mode kept");
  free (out);
  ok (oci_spec_set_network ("[1]", 3, "none", NULL, &out, &len, &err) < 0, "not an object: refused");
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
