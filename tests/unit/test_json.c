/* test_json: oci/json.c's parser, whose tree lives in one arena, reads every
 * text as yajl_tree_parse did (verdict, message, tree), for hand-picked
 * texts and for the configs of tests/fuzz/corpus; and the path strings of
 * its errors. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util.h"
#include "oci/json.h"
#include "tests/unit/json_same.h"
#include "tests/unit/tap.h"

static void
test_texts (void)
{
  static const char *const texts[] = {
    "{}",
    "[]",
    "5",
    "-0",
    "\"s\"",
    "null",
    "true",
    "false",
    "[[], {}, [[]], {\"a\": {}}]",
    "{\"a\": 1, \"a\": 2, \"b\": [1, 2, 3]}",
    "{\"k\": \"\\u00e9\\n\\\\\\\"\"}",
    /* Numbers: each kind of text, the bounds of 64 bits, past them. */
    "[0, 1, -1, 123456789012345, 1234567890123456, 9007199254740993, 9223372036854775807, "
    "-9223372036854775807, -9223372036854775808, 9223372036854775808, 9223372036854775870, "
    "99999999999999999999, 0.5, -0.0, 1e5, 1E+5, -1.5e-3, 1e400, -1e400, 1e-400, 100000000000000000000000]",
    "/* a comment */ {\"a\": // another\n 1}",
    "  {\"deep\": [[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]}  ",
    /* Failures: yajl's message for each. */
    "{",
    "[1,",
    "{\"a\" 1}",
    "{\"a\": }",
    "[1] [2]",
    "tru",
    "\"unterminated",
    "{\"a\": 01}",
    "[1.]",
    "[-]",
    "\"\\x\"",
    "\"\xff\"",
    "{1: 2}",
    "[1,]",
    "/* open comment",
    "\"\\ud800\"",
  };
  for (size_t i = 0; i < sizeof texts / sizeof *texts; i++)
    {
      char shown[41];
      snprintf (shown, sizeof shown, "%s", texts[i]);
      shown[strcspn (shown, "\n")] = '\0';
      ok (json_same (texts[i], strlen (texts[i])) == 1, "read as yajl_tree_parse reads it: %s", shown);
    }
  ok (json_same ("  \n", 3) == -1, "blank text is refused before yajl");
  ok (json_same ("[\"\\u0000\"]", 10) == -1, "a \\u0000 is refused before yajl");
}

/* A tree far larger than the first block: many blocks, freed alike. */
static void
test_large (void)
{
  size_t n = 200000, len = 0;
  char *t = xmalloc (n * 16 + 16);
  t[len++] = '[';
  for (size_t i = 0; i < n; i++)
    len += (size_t)sprintf (t + len, "%s{\"k%zu\":[%zu]}", i ? "," : "", i % 7, i);
  t[len++] = ']';
  ok (json_same (t, len) == 1, "200000 small objects (a dense text, many arena blocks)");
  free (t);
}

static void
test_corpus (void)
{
  static const char *const dirs[] = { "tests/fuzz/corpus/fuzz_spec", "tests/fuzz/corpus/fuzz_state",
                                      "tests/fuzz/corpus/fuzz_image_json", "tests/fuzz/corpus/fuzz_policy" };
  const char *src = getenv ("HAKO_SRC");
  size_t seen = 0;
  for (size_t d = 0; d < sizeof dirs / sizeof *dirs; d++)
    {
      cleanup_free char *dir = xasprintf ("%s/%s", src ? src : ".", dirs[d]);
      DIR *dp = opendir (dir);
      struct dirent *de;
      while (dp && (de = readdir (dp)) != NULL)
        {
          if (de->d_name[0] == '.')
            continue;
          cleanup_free char *path = xasprintf ("%s/%s", dir, de->d_name);
          cleanup_free char *text = NULL;
          size_t len = 0;
          hk_err err = { 0 };
          if (file_read_all (path, 1 << 20, &text, &len, &err) < 0)
            continue;
          int r = json_same (text, len);
          ok (r != 0, "%s/%s read as yajl_tree_parse reads it", dirs[d], de->d_name);
          seen++;
        }
      if (dp)
        closedir (dp);
    }
  if (seen == 0)
    skip ("no corpus found (run from the source tree, or set HAKO_SRC)", "the fuzz corpus's texts");
}

static void
test_paths (void)
{
  cleanup_free char *a = json_path (".linux", "seccomp");
  cleanup_free char *b = json_path (".sandbox.env", "NOT-AN-ID");
  cleanup_free char *c = json_index (".linux.seccomp.syscalls", 12);
  cleanup_free char *d = json_path (".x", NULL);
  cleanup_free char *e = json_index ("", 0);
  is_str (a, ".linux.seccomp", "an identifier key: .KEY");
  is_str (b, ".sandbox.env[\"NOT-AN-ID\"]", "another key: [\"KEY\"]");
  is_str (c, ".linux.seccomp.syscalls[12]", "an index: [I]");
  is_str (d, ".x", "no key: the path");
  is_str (e, "[0]", "index 0 at the top");
}

int
main (void)
{
  test_texts ();
  test_large ();
  test_corpus ();
  test_paths ();
  return tap_done ();
}
