/* fuzz_spec: config.json as an attacker would write it — the spec parser
 * (OCI config + hako's sandbox object), the validation create runs on it, and
 * the seccomp compiler it feeds.  Any crash, leak or undefined behaviour here
 * is reachable by whoever hands hako a bundle. */
#include <stddef.h>
#include <stdint.h>

#include "oci/spec.h"
#include "runtime/build/validate.h"
#include "runtime/confine/seccomp.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  struct oci_spec *spec = NULL;
  struct seccomp_prog *prog = NULL;
  hk_err err = { 0 };
  if (oci_spec_parse ((const char *)data, size, &spec, &err) < 0)
    return 0;
  if (sbx_validate (spec, &err) == 0 && seccomp_prepare (spec, &prog, &err) == 0)
    seccomp_prog_free (prog);
  oci_spec_free (spec);
  return 0;
}
