/* jsonstr: any bytes as a JSON string (exec --json's streams, error messages).
 *
 * Written by hand rather than with yajl_gen (which lib/ does not know): a
 * command's raw output is in no particular encoding, and yajl_gen_string
 * with validation on refuses any invalid UTF-8 (the whole document would be
 * lost), with it off copies invalid bytes through (the JSON would be
 * invalid).  Here bytes that are not UTF-8 become U+FFFD. */
#include "lib/jsonstr.h"

#include <string.h>

/* Length of the valid UTF-8 sequence at s (RFC 3629: no overlong forms, no
 * surrogates, nothing above U+10FFFF), or, negated, the length of the
 * maximal invalid subpart to replace by one U+FFFD. */
static int
utf8_len (const unsigned char *s, size_t n)
{
  unsigned char c = s[0];
  int need;
  unsigned char lo = 0x80, hi = 0xbf; /* allowed range of the second byte */
  if (c < 0x80)
    return 1;
  if (c >= 0xc2 && c <= 0xdf)
    need = 1;
  else if (c >= 0xe0 && c <= 0xef)
    {
      need = 2;
      if (c == 0xe0)
        lo = 0xa0; /* overlong */
      else if (c == 0xed)
        hi = 0x9f; /* surrogates */
    }
  else if (c >= 0xf0 && c <= 0xf4)
    {
      need = 3;
      if (c == 0xf0)
        lo = 0x90; /* overlong */
      else if (c == 0xf4)
        hi = 0x8f; /* above U+10FFFF */
    }
  else
    return -1; /* a continuation byte, C0, C1 or F5..FF */
  for (int i = 1; i <= need; i++)
    {
      if ((size_t)i >= n)
        return -i;
      unsigned char b = s[i];
      if (i == 1 ? (b < lo || b > hi) : (b < 0x80 || b > 0xbf))
        return -i;
    }
  return need + 1;
}

static int
plain (unsigned char c)
{
  return c >= 0x20 && c < 0x80 && c != '"' && c != '\\';
}

static void
put_control (unsigned char c, jsonstr_sink put, void *ctx)
{
  static const char hex[] = "0123456789abcdef";
  char u[7] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 15], 0 };
  switch (c)
    {
    case '"': put (ctx, "\\\"", 2); break;
    case '\\': put (ctx, "\\\\", 2); break;
    case '\b': put (ctx, "\\b", 2); break;
    case '\f': put (ctx, "\\f", 2); break;
    case '\n': put (ctx, "\\n", 2); break;
    case '\r': put (ctx, "\\r", 2); break;
    case '\t': put (ctx, "\\t", 2); break;
    default: put (ctx, u, 6); break;
    }
}

void
jsonstr_escape (const char *data, size_t len, jsonstr_sink put, void *ctx)
{
  const unsigned char *s = (const unsigned char *)data;
  size_t i = 0;
  while (i < len)
    {
      unsigned char c = s[i];
      if (plain (c))
        {
          /* The common case: a run of plain ASCII, passed on at once. */
          size_t j = i + 1;
          while (j < len && plain (s[j]))
            j++;
          put (ctx, (const char *)s + i, j - i);
          i = j;
          continue;
        }
      if (c < 0x80)
        {
          put_control (c, put, ctx);
          i++;
          continue;
        }
      int n = utf8_len (s + i, len - i);
      if (n < 0)
        {
          put (ctx, "\\ufffd", 6);
          i += (size_t)-n;
        }
      /* U+2028 and U+2029 are valid JSON but end a line in JavaScript. */
      else if (n == 3 && c == 0xe2 && s[i + 1] == 0x80 && (s[i + 2] == 0xa8 || s[i + 2] == 0xa9))
        {
          put (ctx, s[i + 2] == 0xa8 ? "\\u2028" : "\\u2029", 6);
          i += 3;
        }
      else
        {
          put (ctx, (const char *)s + i, (size_t)n);
          i += (size_t)n;
        }
    }
}

static void
file_sink (void *ctx, const char *piece, size_t n)
{
  fwrite_unlocked (piece, 1, n, (FILE *)ctx);
}

void
jsonstr_fput (FILE *f, const char *data, size_t len)
{
  putc_unlocked ('"', f);
  jsonstr_escape (data, len, file_sink, f);
  putc_unlocked ('"', f);
}

struct buf
{
  char *out;
  size_t room; /* bytes left for the body, the closing quote and the NUL kept aside */
  size_t *n;
  int full;
};

static void
buf_sink (void *ctx, const char *piece, size_t n)
{
  struct buf *b = ctx;
  if (b->full)
    return;
  if (n > b->room)
    {
      unsigned char c = (unsigned char)piece[0];
      if (c >= 0x80 || c == '\\')
        {
          b->full = 1; /* an escape or a character: whole or not at all */
          return;
        }
      n = b->room;
      b->full = 1;
    }
  memcpy (b->out + *b->n, piece, n);
  *b->n += n;
  b->room -= n;
}

void
jsonstr_append (char *out, size_t size, size_t *n, const char *s)
{
  if (*n + 3 > size)
    return;
  out[(*n)++] = '"';
  struct buf b = { .out = out, .room = size - *n - 2, .n = n };
  jsonstr_escape (s, strlen (s), buf_sink, &b);
  out[(*n)++] = '"';
  out[*n] = '\0';
}
