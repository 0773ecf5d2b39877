/* test_consent: which org.hako.* annotations need the node's consent
 * (node.json's annotations.allow), and that they get it only there. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util.h"
#include "oci/node.h"
#include "runtime/node/consent.h"
#include "tests/unit/tap.h"

#define SPEC(ns, anns)                                                                                       \
  "{'ociVersion':'1.0.0','root':{'path':'rootfs'},'process':{'args':['sh']},"                                \
  "'linux':{'namespaces':[" ns "]},'annotations':{" anns "}}"
#define POD_NET "{'type':'network','path':'/var/run/netns/cni-1'}"

static struct oci_spec *
spec (const char *q)
{
  char *json = xstrdup (q);
  for (char *p = json; *p; p++)
    if (*p == '\'')
      *p = '"';
  struct oci_spec *s = NULL;
  hk_err err = { 0 };
  if (oci_spec_parse (json, strlen (json), &s, &err) < 0)
    printf ("# %s\n", err.msg);
  free (json);
  return s;
}

static struct oci_node
node (const char *json)
{
  struct oci_node n;
  hk_err err = { 0 };
  if (oci_node_parse (json, strlen (json), "node.json", &n, &err) < 0)
    printf ("# %s\n", err.msg);
  return n;
}

/* consent_check's verdict: 0, or -1 with want in the message. */
static void
verdict (const char *q, const struct oci_node *n, const char *want, const char *what)
{
  struct oci_spec *s = spec (q);
  hk_err err = { 0 };
  int r = s ? consent_check (s, n, &err) : -2;
  if (want == NULL)
    ok (r == 0, "%s: allowed (%s)", what, r == 0 ? "ok" : err.msg);
  else
    ok (r == -1 && strstr (err.msg, want) && err.kind == ERR_INVALID_CONFIG, "%s: refused (%s)", what,
        r == -1 ? err.msg : "allowed");
  oci_spec_free (s);
}

static void
test_network (void)
{
  struct oci_node consent = node ("{\"annotations\":{\"allow\":{\"org.hako.network\":[\"host\"]}}}");
  verdict (SPEC (POD_NET, "'org.hako.network':'host'"), NULL,
           "annotation org.hako.network=\"host\": it puts the container in the node's network namespace",
           "host over the pod's netns, no node config");
  verdict (SPEC (POD_NET, "'org.hako.network':'host'"), NULL,
           "\"annotations\": {\"allow\": {\"org.hako.network\": [\"host\"]}}",
           "the error names the node setting");
  verdict (SPEC (POD_NET, "'org.hako.network':'host'"), &consent, NULL, "host with the node's consent");
  verdict (SPEC ("{'type':'pid'}", "'org.hako.network':'host'"), NULL, NULL,
           "host in a hostNetwork pod (no netns to drop)");
  verdict (SPEC (POD_NET, "'org.hako.network':'none'"), NULL, NULL, "none narrows");
  verdict (SPEC (POD_NET, "'org.hako.network':'allowlist','org.hako.allow':'pypi.org,*.example.com:443'"),
           NULL, NULL, "allowlist with public names narrows");
}

static void
test_allow (void)
{
  static const struct
  {
    const char *entry, *why;
  } refused[] = {
    { "127.0.0.1:8080", "a loopback address" },
    { "[::1]:80", "a loopback address" },
    { "0.0.0.0:80", "a loopback address" },
    { "169.254.169.254:80", "a link-local address" },
    { "[fe80::1]:80", "a link-local address" },
    { "10.0.0.1", "a private address" },
    { "172.16.0.0/12", "a private address" },
    { "192.168.1.1:443", "a private address" },
    { "100.64.0.1", "a private address" },
    { "[fd00::/8]:80", "a private address" },
    { "http://127.0.0.1:9000", "a loopback address" },
  };
  char q[512];
  for (size_t i = 0; i < sizeof refused / sizeof *refused; i++)
    {
      snprintf (q, sizeof q, SPEC (POD_NET, "'org.hako.network':'allowlist','org.hako.allow':'pypi.org, %s'"),
                refused[i].entry);
      char want[256];
      snprintf (want, sizeof want, "annotation org.hako.allow: entry \"%s\": %s", refused[i].entry,
                refused[i].why);
      verdict (q, NULL, want, refused[i].entry);
    }
  /* 0.0.0.0/0 opens no special address (al_addr_allowed): not a widening. */
  verdict (SPEC (POD_NET, "'org.hako.network':'allowlist','org.hako.allow':'0.0.0.0/0:443,192.0.2.1'"), NULL,
           NULL, "0.0.0.0/0 and a public address");
  struct oci_node n = node ("{\"annotations\":{\"allow\":{\"org.hako.allow\":[\"127.0.0.1:8080\"]}}}");
  verdict (SPEC (POD_NET, "'org.hako.network':'allowlist','org.hako.allow':'127.0.0.1:8080'"), &n, NULL,
           "the listed entry with the node's consent");
  verdict (SPEC (POD_NET, "'org.hako.network':'allowlist','org.hako.allow':'127.0.0.1:8080,127.0.0.1:8081'"),
           &n, "entry \"127.0.0.1:8081\"", "another port of the same address is not consented");
  verdict (SPEC (POD_NET, "'org.hako.network':'allowlist','org.hako.allow':'127.0.0.1'"), &n,
           "entry \"127.0.0.1\"", "the address on every port is not consented");
}

static void
test_disk (void)
{
  struct oci_node dflt = node ("{\"default_disk\":\"64M\"}");
  struct oci_node consent
      = node ("{\"default_disk\":\"64M\",\"annotations\":{\"allow\":{\"org.hako.disk\":[\"-1\"]}}}");
  verdict (SPEC (POD_NET, "'org.hako.disk':'-1'"), &dflt,
           "annotation org.hako.disk=\"-1\": it lifts the node's default_disk", "-1 over default_disk");
  verdict (SPEC (POD_NET, "'org.hako.disk':'1g'"), &dflt, "is more than the node's default_disk",
           "more than default_disk");
  verdict (SPEC (POD_NET, "'org.hako.disk':'32m'"), &dflt, NULL, "less than default_disk");
  verdict (SPEC (POD_NET, "'org.hako.disk':'64m'"), &dflt, NULL, "default_disk itself");
  verdict (SPEC (POD_NET, "'org.hako.disk':'-1'"), &consent, NULL, "-1 with the node's consent");
  verdict (SPEC (POD_NET, "'org.hako.disk':'1g'"), &consent, "more than the node's default_disk",
           "consent to -1 is not consent to 1g");
  /* No node.json: hako's own default (HAKO_DISK_DEFAULT) is the node's. */
  verdict (SPEC (POD_NET, "'org.hako.disk':'-1'"), NULL, "it lifts the node's default_disk",
           "-1 with no node config lifts hako's default");
  verdict (SPEC (POD_NET, "'org.hako.disk':'20g'"), NULL, "is more than the node's default_disk",
           "more than hako's default with no node config");
  verdict (SPEC (POD_NET, "'org.hako.disk':'1g'"), NULL, NULL, "less than hako's default");
  struct oci_node none = node ("{\"default_disk\":\"none\"}");
  verdict (SPEC (POD_NET, "'org.hako.disk':'-1'"), &none, NULL, "-1 where the node sets none lifts nothing");
}

static void
test_narrowing (void)
{
  struct oci_node dflt = node ("{\"default_disk\":\"64M\"}");
  verdict (SPEC (POD_NET, "'org.hako.landlock.read':'/','org.hako.landlock.write':'/tmp',"
                          "'org.hako.timeout':'30s','org.hako.max-output':'1g','other':'x'"),
           &dflt, NULL, "Landlock, a timeout and an output cap narrow");
}

static void
test_node_parse (void)
{
  struct oci_node n = node ("{\"annotations\":{\"allow\":{\"org.hako.network\":[\"host\"],"
                            "\"org.hako.allow\":[\"127.0.0.1:8080\",\"169.254.169.254:80\"]}}}");
  ok (n.n_consents == 3 && oci_node_consents (&n, "org.hako.allow", "169.254.169.254:80")
          && oci_node_consents (&n, "org.hako.network", "host")
          && !oci_node_consents (&n, "org.hako.network", "none")
          && !oci_node_consents (NULL, "org.hako.network", "host"),
      "annotations.allow: three values of two names");
  static const struct
  {
    const char *json, *want;
  } bad[] = {
    { "{\"annotations\":[]}", ".annotations: must be an object" },
    { "{\"annotations\":{\"deny\":{}}}", ".annotations.deny: unknown field (allow)" },
    { "{\"annotations\":{\"allow\":[]}}", ".annotations.allow: must be an object" },
    { "{\"annotations\":{\"allow\":{\"org.hako.netwrk\":[\"host\"]}}}",
      "[\"org.hako.netwrk\"]: not an org.hako.* annotation" },
    { "{\"annotations\":{\"allow\":{\"org.hako.network\":\"host\"}}}", "org.hako.network" },
    { "{\"annotations\":{\"allow\":{\"org.hako.network\":[\"\"]}}}", "must be a value" },
    { "{\"annotations\":{\"allow\":{\"org.hako.allow\":[\"127.0.0.1:80,10.0.0.1\"]}}}", "no commas" },
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
    {
      struct oci_node m;
      hk_err err = { 0 };
      int r = oci_node_parse (bad[i].json, strlen (bad[i].json), "node.json", &m, &err);
      ok (r < 0 && strstr (err.msg, bad[i].want), "%s refused: %s", bad[i].json, r < 0 ? err.msg : "parsed");
    }
}

int
main (void)
{
  test_network ();
  test_allow ();
  test_disk ();
  test_narrowing ();
  test_node_parse ();
  return tap_done ();
}
