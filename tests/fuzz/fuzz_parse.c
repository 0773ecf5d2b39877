/* fuzz_parse: the small parsers of command-line values a caller passes
 * through (durations, sizes) and sandbox ids, which become path components
 * under the state root: an id that passes validation must never be able to
 * name anything but one directory entry.  (Input is cut at a NUL, as argv is.) */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util.h"
#include "runtime/state/store.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  char *s = strndup ((const char *)data, size);
  uint64_t v;
  parse_duration_ms (s, &v);
  parse_size (s, &v);
  if (store_id_valid (s))
    {
      if (strchr (s, '/') || strcmp (s, ".") == 0 || strcmp (s, "..") == 0 || s[0] == '\0')
        abort (); /* would name something other than one entry of the state root */
    }
  free (s);
  return 0;
}
