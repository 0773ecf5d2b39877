/* fuzz_exec_result: `exec --json` escapes whatever bytes a sandboxed command
 * wrote.  A command controls those bytes completely, so the object must stay
 * valid JSON (checked by parsing it back) and the text must survive: valid
 * UTF-8 comes back unchanged. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_tree.h>

#include "oci/report/exec_result.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

/* True when s[0..n) is valid UTF-8 without NUL (yajl strings are C strings). */
static int
plain_utf8 (const uint8_t *s, size_t n)
{
  size_t i = 0;
  while (i < n)
    {
      uint8_t c = s[i];
      size_t k = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
      if (c == 0 || k == 0 || i + k > n)
        return 0;
      uint32_t cp = k == 1 ? c : c & (0x7f >> k);
      for (size_t j = 1; j < k; j++)
        {
          if ((s[i + j] & 0xc0) != 0x80)
            return 0;
          cp = cp << 6 | (s[i + j] & 0x3f);
        }
      static const uint32_t min[] = { 0, 0, 0x80, 0x800, 0x10000 };
      if (cp < min[k] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
      i += k;
    }
  return 1;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  size_t half = size / 2;
  struct oci_exec_result r = {
    .exit_code = 1,
    .reason = "exited",
    .out = { .data = (const char *)data, .len = half },
    .err = { .data = (const char *)data + half, .len = size - half, .truncated = true },
  };
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream (&buf, &len);
  hk_err err = { 0 };
  if (f == NULL || oci_exec_result_write (&r, f, &err) < 0)
    abort ();
  fclose (f);
  char msg[256];
  yajl_val v = yajl_tree_parse (buf, msg, sizeof msg);
  if (v == NULL)
    abort (); /* not JSON: a command could break the caller's parser */
  const char *path[] = { "stdout", NULL };
  yajl_val out = yajl_tree_get (v, path, yajl_t_string);
  if (out == NULL)
    abort ();
  if (plain_utf8 (data, half)
      && (strlen (YAJL_GET_STRING (out)) != half || memcmp (YAJL_GET_STRING (out), data, half) != 0))
    abort (); /* valid text must come back byte for byte */
  yajl_tree_free (v);
  free (buf);
  return 0;
}
