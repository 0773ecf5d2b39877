/* exec_result: the one JSON object `hako exec --json` prints, from a plain struct.
 *
 * Written by hand rather than with yajl_gen: the two strings are a command's
 * raw output, up to the --max-output cap, and in no particular encoding.
 * yajl_gen_string takes a string whole, and with validation on refuses any
 * invalid UTF-8 (the whole object would be lost), with it off copies invalid
 * bytes through (the JSON would be invalid).  Here each string is escaped
 * as it is written, bytes that are not UTF-8 become U+FFFD, and hako's
 * memory stays at the size of the captured output.  The object is flat and
 * its keys fixed, so there is no structure to get wrong; the unit test
 * parses the output back with yajl. */
#include "oci/exec_result.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

/* Length of the valid UTF-8 sequence at s (RFC 3629: no overlong forms, no
 * surrogates, nothing above U+10FFFF), or, negated, the length of the
 * maximal invalid subpart to replace by one U+FFFD. */
static int
utf8_len (const unsigned char *s, size_t n)
{
  unsigned char c = s[0];
  int need;
  unsigned char lo = 0x80, hi = 0xbf;  /* allowed range of the second byte */
  if (c < 0x80)
    return 1;
  if (c >= 0xc2 && c <= 0xdf)
    need = 1;
  else if (c >= 0xe0 && c <= 0xef)
    {
      need = 2;
      if (c == 0xe0)
        lo = 0xa0;   /* overlong */
      else if (c == 0xed)
        hi = 0x9f;   /* surrogates */
    }
  else if (c >= 0xf0 && c <= 0xf4)
    {
      need = 3;
      if (c == 0xf0)
        lo = 0x90;   /* overlong */
      else if (c == 0xf4)
        hi = 0x8f;   /* above U+10FFFF */
    }
  else
    return -1;       /* a continuation byte, C0, C1 or F5..FF */
  for (int i = 1; i <= need; i++)
    {
      if ((size_t) i >= n)
        return -i;
      unsigned char b = s[i];
      if (i == 1 ? (b < lo || b > hi) : (b < 0x80 || b > 0xbf))
        return -i;
    }
  return need + 1;
}

static void
put_escaped (FILE *f, const char *data, size_t len)
{
  const unsigned char *s = (const unsigned char *) data;
  size_t i = 0;
  putc_unlocked ('"', f);
  while (i < len)
    {
      unsigned char c = s[i];
      if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\')
        {
          /* The common case: a run of plain ASCII, written at once. */
          size_t j = i + 1;
          while (j < len && s[j] >= 0x20 && s[j] < 0x80 && s[j] != '"' && s[j] != '\\')
            j++;
          fwrite_unlocked (s + i, 1, j - i, f);
          i = j;
          continue;
        }
      if (c < 0x80)
        {
          switch (c)
            {
            case '"': fputs_unlocked ("\\\"", f); break;
            case '\\': fputs_unlocked ("\\\\", f); break;
            case '\b': fputs_unlocked ("\\b", f); break;
            case '\f': fputs_unlocked ("\\f", f); break;
            case '\n': fputs_unlocked ("\\n", f); break;
            case '\r': fputs_unlocked ("\\r", f); break;
            case '\t': fputs_unlocked ("\\t", f); break;
            default: fprintf (f, "\\u%04x", c); break;
            }
          i++;
          continue;
        }
      int n = utf8_len (s + i, len - i);
      if (n < 0)
        {
          fputs_unlocked ("\\ufffd", f);
          i += (size_t) -n;
        }
      /* U+2028 and U+2029 are valid JSON but end a line in JavaScript. */
      else if (n == 3 && c == 0xe2 && s[i + 1] == 0x80 && (s[i + 2] == 0xa8 || s[i + 2] == 0xa9))
        {
          fputs_unlocked (s[i + 2] == 0xa8 ? "\\u2028" : "\\u2029", f);
          i += 3;
        }
      else
        {
          fwrite_unlocked (s + i, 1, (size_t) n, f);
          i += (size_t) n;
        }
    }
  putc_unlocked ('"', f);
}

static void
put_bool (FILE *f, const char *key, bool v)
{
  fprintf (f, ",\"%s\":%s", key, v ? "true" : "false");
}

int
oci_exec_result_write (const struct oci_exec_result *r, FILE *f, hk_err *err)
{
  static const char *const reasons[] = { "exited", "signaled", "timeout", "oom" };
  const char *reason = NULL;
  /* The reason is one of four words, never free text: anything else is
   * refused rather than written unescaped. */
  for (size_t i = 0; i < sizeof reasons / sizeof *reasons; i++)
    if (r->reason && strcmp (r->reason, reasons[i]) == 0)
      reason = reasons[i];
  if (reason == NULL)
    return err_set (err, EINVAL, "exec result: unknown reason \"%s\"", r->reason ? r->reason : "");
  fprintf (f, "{\"exit_code\":%d,\"signal\":", r->exit_code);
  if (r->signal > 0)
    fprintf (f, "%d", r->signal);
  else
    fputs_unlocked ("null", f);
  fprintf (f, ",\"reason\":\"%s\"", reason);
  put_bool (f, "timed_out", r->timed_out);
  fputs_unlocked (",\"stdout\":", f);
  put_escaped (f, r->out.data, r->out.len);
  fputs_unlocked (",\"stderr\":", f);
  put_escaped (f, r->err.data, r->err.len);
  put_bool (f, "stdout_truncated", r->out.truncated);
  put_bool (f, "stderr_truncated", r->err.truncated);
  fprintf (f, ",\"duration_ms\":%" PRIu64 "}\n", r->duration_ms);
  if (fflush (f) != 0 || ferror (f))
    return err_sys (err, "write the JSON result");
  return 0;
}
