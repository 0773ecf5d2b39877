/* fuzz_state: state.json read back from the state tree.  Anyone who can
 * write the state root can already do worse, but a damaged file (a crash, a
 * full disk) must give an error, never a crash: parse, and what parses must
 * serialise and parse again to the same fields. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "oci/state.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  struct oci_state *s = NULL, *again = NULL;
  hk_err err = { 0 };
  char *json = NULL;
  size_t len;
  if (oci_state_parse ((const char *)data, size, &s, &err) < 0)
    return 0;
  if (oci_state_to_json (s, false, &json, &len, &err) < 0)
    abort ();
  if (oci_state_parse (json, len, &again, &err) < 0)
    abort (); /* hako must read back whatever it writes */
  if (again->pid != s->pid || again->status != s->status || strcmp (again->id, s->id) != 0)
    abort ();
  oci_state_free (again);
  oci_state_free (s);
  free (json);
  return 0;
}
