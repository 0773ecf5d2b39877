/* fuzz_json: oci/json.c's parser, whose tree lives in an arena of its own,
 * against yajl_tree_parse, which it replaced: every text gets the same
 * verdict, the same message when refused and the same tree when read
 * (tests/unit/json_same.h).  A difference, a crash or a leak aborts. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "tests/unit/json_same.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  if (json_same ((const char *)data, size) == 0)
    abort ();
  return 0;
}
