/* test_exec_result: the `exec --json` object — exact bytes for the escapes,
 * and valid JSON (parsed back with yajl) whatever bytes the output holds. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util.h"
#include "oci/json.h"
#include "oci/report/exec_result.h"
#include "tests/unit/tap.h"

/* The object for a result whose stdout is (data, len); *out is malloc'ed. */
static char *
render (const char *data, size_t len)
{
  char *text = NULL;
  size_t size = 0;
  FILE *f = open_memstream (&text, &size);
  struct oci_exec_result r = { .reason = "exited", .out = { .data = data, .len = len } };
  hk_err err = { 0 };
  if (oci_exec_result_write (&r, f, &err) < 0)
    printf ("#   write failed: %s\n", err.msg);
  fclose (f);
  return text;
}

/* The stdout string as it appears in the object, between its quotes. */
static char *
stdout_field (const char *json)
{
  const char *p = strstr (json, "\"stdout\":\"");
  const char *q = p ? strstr (p, "\",\"stderr\"") : NULL;
  if (q == NULL)
    return xstrdup ("(no stdout field)");
  p += strlen ("\"stdout\":\"");
  return xstrndup (p, (size_t)(q - p));
}

static void
escapes (const char *data, size_t len, const char *want, const char *what)
{
  cleanup_free char *json = render (data, len);
  cleanup_free char *field = stdout_field (json);
  is_str (field, want, "%s", what);
}

/* Parses with yajl, and stdout decodes to want (want NULL: only parses). */
static void
parses (const char *data, size_t len, const char *want, const char *what)
{
  cleanup_free char *json = render (data, len);
  char msg[256];
  /* yajl itself: hako's own reader refuses \u0000, which is valid JSON. */
  yajl_val v = yajl_tree_parse (json, msg, sizeof msg);
  if (v == NULL)
    {
      printf ("#   %s\n#   %s\n", msg, json);
      ok (0, "%s: valid JSON", what);
      return;
    }
  const char *path[] = { "stdout", NULL };
  yajl_val s = yajl_tree_get (v, path, yajl_t_string);
  const char *got = YAJL_IS_STRING (s) ? YAJL_GET_STRING (s) : NULL;
  ok (got != NULL && (want == NULL || strcmp (got, want) == 0), "%s: valid JSON, decodes back", what);
  yajl_tree_free (v);
}

static void
test_escapes (void)
{
  escapes ("hello world", 11, "hello world", "plain ASCII is copied");
  escapes ("a\"b\\c", 5, "a\\\"b\\\\c", "quote and backslash are escaped");
  escapes ("1\n2\t3\r\b\f", 8, "1\\n2\\t3\\r\\b\\f", "the short escapes");
  escapes ("\x01\x1f", 2, "\\u0001\\u001f", "other control characters as \\u00XX");
  escapes ("a\0b", 3, "a\\u0000b", "a NUL byte is kept, escaped");
  escapes ("caf\xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x93\xa6", 14, "caf\xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x93\xa6",
           "valid UTF-8 (2, 3 and 4 bytes) is kept as is");
  escapes ("\xe2\x80\xa8\xe2\x80\xa9", 6, "\\u2028\\u2029", "U+2028 and U+2029 are escaped");
  escapes ("a\xff"
           "b",
           3, "a\\ufffdb", "an invalid byte becomes \\ufffd");
  escapes ("\x80\x80", 2, "\\ufffd\\ufffd", "each lone continuation byte is one \\ufffd");
  escapes ("\xe6\x97", 2, "\\ufffd", "a sequence cut at the end is one \\ufffd");
  escapes ("\xe6\x97x", 3, "\\ufffdx", "a truncated sequence, then ASCII");
  escapes ("\xc0\xaf", 2, "\\ufffd\\ufffd", "an overlong '/' is refused");
  escapes ("\xe0\x80\xaf", 3, "\\ufffd\\ufffd\\ufffd", "an overlong 3-byte form is refused");
  escapes ("\xed\xa0\x80", 3, "\\ufffd\\ufffd\\ufffd", "a UTF-16 surrogate is refused");
  escapes ("\xf4\x90\x80\x80", 4, "\\ufffd\\ufffd\\ufffd\\ufffd", "above U+10FFFF is refused");
  escapes ("\xf0\x9f\x93", 3, "\\ufffd", "a 4-byte sequence missing its last byte is one \\ufffd");
}

static void
test_valid_json (void)
{
  parses ("caf\xc3\xa9\n\"q\"\\", 10, "caf\xc3\xa9\n\"q\"\\", "text with escapes");
  parses ("\xe2\x80\xa8", 3, "\xe2\x80\xa8", "U+2028");
  parses ("x\xffy\xc3", 4, "x\xef\xbf\xbdy\xef\xbf\xbd", "invalid bytes decode to U+FFFD");
  /* Every byte value, and random garbage: the object must always parse. */
  char all[512];
  for (int i = 0; i < 512; i++)
    all[i] = (char)(i & 0xff);
  parses (all, sizeof all, NULL, "all 256 byte values");
  srand (42);
  bool good = true;
  for (int round = 0; round < 200 && good; round++)
    {
      char buf[64];
      for (size_t i = 0; i < sizeof buf; i++)
        buf[i] = (char)(rand () & 0xff);
      cleanup_free char *json = render (buf, sizeof buf);
      char msg[256];
      yajl_val v = yajl_tree_parse (json, msg, sizeof msg);
      good = v != NULL;
      if (!good)
        printf ("#   %s\n", msg);
      yajl_tree_free (v);
    }
  ok (good, "200 random byte strings all give valid JSON");
}

static void
test_object (void)
{
  char *text = NULL;
  size_t size = 0;
  FILE *f = open_memstream (&text, &size);
  struct oci_exec_result r = { .exit_code = 137,
                               .signal = 9,
                               .reason = "timeout",
                               .timed_out = true,
                               .out = { .data = "o", .len = 1, .truncated = true },
                               .err = { .data = "e", .len = 1 },
                               .duration_ms = 1003,
                               .has_oom_kills = true,
                               .oom_kills = 2,
                               .warning = "w\"",
                               .has_usage = true,
                               .user_cpu_us = 1500,
                               .system_cpu_us = 900,
                               .peak_rss_bytes = 4096 };
  hk_err err = { 0 };
  ok (oci_exec_result_write (&r, f, &err) == 0, "a timeout result is written");
  fclose (f);
  is_str (text,
          "{\"exit_code\":137,\"signal\":9,\"reason\":\"timeout\",\"timed_out\":true,"
          "\"stdout\":\"o\",\"stderr\":\"e\",\"stdout_truncated\":true,"
          "\"stderr_truncated\":false,\"duration_ms\":1003,\"oom_kills\":2,\"warning\":\"w\\\"\","
          "\"user_cpu_us\":1500,\"system_cpu_us\":900,\"peak_rss_bytes\":4096,\"error\":null}\n",
          "every field, in order, one line");
  free (text);

  cleanup_free char *exited = render ("", 0);
  ok (strstr (exited, "\"exit_code\":0,\"signal\":null,\"reason\":\"exited\"") != NULL,
      "an exit gives signal null");
  ok (strstr (exited, "\"user_cpu_us\":null,\"system_cpu_us\":null,\"peak_rss_bytes\":null") != NULL,
      "usage not reported is null");
  f = open_memstream (&text, &size);
  struct oci_exec_result nf = {
    .exit_code = 127, .reason = "exited", .error_kind = "not_found", .error_message = "exec \"x\": not found"
  };
  ok (oci_exec_result_write (&nf, f, &err) == 0, "a 127 result is written");
  fclose (f);
  ok (strstr (text, ",\"error\":{\"kind\":\"not_found\",\"message\":\"exec \\\"x\\\": not found\"}}") != NULL,
      "127's error: its kind and message, escaped");
  free (text);
  f = open_memstream (&text, &size);
  nf.error_kind = "bad\"";
  ok (oci_exec_result_write (&nf, f, &err) < 0 && strstr (err.msg, "unknown error kind"),
      "an unknown error kind is refused, not written");
  fclose (f);
  ok (size == 0, "nothing of a refused result is written");
  free (text);
  f = open_memstream (&text, &size);
  r.reason = "weird\"";
  ok (oci_exec_result_write (&r, f, &err) < 0 && strstr (err.msg, "unknown reason"),
      "an unknown reason is refused, not written");
  fclose (f);
  free (text);
}

int
main (void)
{
  test_escapes ();
  test_valid_json ();
  test_object ();
  return tap_done ();
}
