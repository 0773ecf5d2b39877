/* fuzz_policy: the trust policy (containers-policy.json shape) and the
 * "simple signing" payload of a signature.  The payload is attacker-written
 * until its signature is checked, and the parser is strict by design
 * (unknown critical keys, duplicates): it must refuse, never crash.  The
 * first byte picks the parser. */
#include <stdint.h>

#include "oci/policy.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  if (size < 1)
    return 0;
  const char *text = (const char *)data + 1;
  size_t len = size - 1;
  hk_err err = { 0 };
  if (data[0] & 1)
    {
      struct oci_policy p = { 0 };
      if (oci_policy_parse (text, len, &p, &err) == 0)
        oci_policy_free (&p);
    }
  else
    {
      struct oci_simple_sig s = { 0 };
      if (oci_simple_sig_parse (text, len, &s, &err) == 0)
        oci_simple_sig_free (&s);
    }
  return 0;
}
