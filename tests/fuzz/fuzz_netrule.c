/* fuzz_netrule: network rules come from a spec, `--allow`/`--deny` or a
 * pod's annotations, and decide what a sandbox may reach.  Each line of the
 * input is parsed as an allow rule; the last is also used as a host, a
 * request path and an address to decide on.  Properties: a rule of a
 * special range (loopback, private...) is the only way a special address
 * gets through; a path is split without reading past its end; whatever
 * parses is freed whole. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/netclass.h"
#include "oci/netrule.h"
#include "oci/spec.h"
#include "runtime/proxy/policy.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  char *text = strndup ((const char *)data, size);
  char *entries[9] = { NULL };
  size_t n = 0;
  for (char *save = NULL, *tok = strtok_r (text, "\n", &save); tok && n < 8;
       tok = strtok_r (NULL, "\n", &save))
    entries[n++] = tok;
  struct egress_policy p = { .mode = HAKO_NET_ALLOWLIST };
  hk_err err = { 0 };
  if (n >= 2 && oci_net_rules_parse (entries, &p.allow, &err) == 0)
    {
      const char *target = entries[n - 1];
      struct pol_decision d;
      char norm[256];
      if (net_normalize_name (target, norm, sizeof norm))
        policy_destination (&p, norm, 443, true, &d);
      char **segs;
      size_t k;
      const char *why;
      if (oci_net_path_split (target, strlen (target), &segs, &k, &why) == 0)
        {
          policy_request (&p, "example.com", 443, true, "GET", segs, k, &d);
          strv_free (segs);
        }
      uint8_t a[16];
      if (net_parse_literal (target, a))
        {
          policy_address (&p, a, 80, &d);
          /* A special address is allowed only by a rule that is special. */
          if (d.v != POL_DENY && net_class (a) != NET_PUBLIC)
            {
              bool listed = false;
              for (size_t i = 0; i < p.allow.n; i++)
                if (p.allow.v[i].kind == NR_NET && p.allow.v[i].special)
                  listed = true;
              if (!listed)
                abort ();
            }
        }
      policy_free (&p);
    }
  else if (n == 1)
    {
      struct net_rule r;
      if (oci_net_rule_parse (entries[0], &r, &err) == 0)
        oci_net_rule_free (&r);
    }
  free (text);
  return 0;
}
