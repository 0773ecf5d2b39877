/* json: reading yajl trees with typed, path-named errors, and writing JSON. */
#include "oci/json.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_parse.h>

#include "lib/util.h"
#include "oci/spec.h"

/* ---- parsing ---- */

/* Does the text hold a \u0000 escape?  Outside strings a backslash is a syntax
 * error anyway, so counting the backslashes in front is enough: an odd run
 * ends in an escaping one. */
static bool
has_nul_escape (const char *text, size_t len)
{
  for (size_t i = 0; i + 6 <= len; i++)
    {
      if (text[i] != '\\')
        continue;
      size_t run = 0;
      while (i + run < len && text[i + run] == '\\')
        run++;
      i += run - 1;
      if (run % 2 == 1 && i + 6 <= len && memcmp (text + i + 1, "u0000", 5) == 0)
        return true;
    }
  return false;
}

static int
json_invalid (hk_err *err, const char *msg)
{
  err_set (err, 0, "invalid JSON: %s", msg);
  err->errnum = EINVAL;
  return -1;
}

/* ---- the tree, in one arena ----
 *
 * yajl_tree_parse made every node, string, key and number a malloc of its
 * own and grew each object's and array's arrays one realloc per member:
 * for hako's default profile (15 KB, mostly its seccomp names) that was
 * two thirds of a config's parse, and its yajl_tree_free a tenth more,
 * paid by every run, create and exec (docs/benchmarks.md, issue 39).  The
 * same yajl parser (same options, same errors) now calls back into a
 * builder that puts the tree in a few large blocks: a container's members
 * wait on a stack and are copied out once, sized, at its end; json_free
 * frees the blocks.  The nodes are yajl's own type, read as before. */

struct arena
{
  struct arena *next;
  size_t used, cap;
};

/* The blocks' headers keep the nodes after them 16-aligned. */
#define ARENA_HDR ((sizeof (struct arena) + 15) & ~(size_t)15)

struct frame
{
  yajl_val node;
  size_t start;    /* its members' first slot on the stack */
  const char *key; /* an object's key waiting for its value */
};

struct builder
{
  struct arena *first, *cur;
  yajl_val root;
  struct frame *frames;
  size_t depth, frames_cap;
  yajl_val *vals; /* the open containers' members, innermost last */
  const char **keys;
  size_t top, cap;
};

static struct arena *
arena_block (size_t cap)
{
  struct arena *a = xmalloc (ARENA_HDR + cap);
  *a = (struct arena){ .cap = cap };
  return a;
}

static void *
arena_alloc (struct builder *b, size_t n)
{
  n = (n + 7) & ~(size_t)7;
  if (b->cur->cap - b->cur->used < n)
    {
      size_t cap = b->cur->cap > n ? b->cur->cap : n;
      struct arena *a = arena_block (cap);
      b->cur->next = a;
      b->cur = a;
    }
  void *p = (char *)b->cur + ARENA_HDR + b->cur->used;
  b->cur->used += n;
  return p;
}

static char *
arena_str (struct builder *b, const void *s, size_t len)
{
  char *p = arena_alloc (b, len + 1);
  memcpy (p, s, len);
  p[len] = '\0';
  return p;
}

static yajl_val
node (struct builder *b, yajl_type type)
{
  yajl_val v = arena_alloc (b, sizeof *v);
  memset (v, 0, sizeof *v);
  v->type = type;
  return v;
}

/* V into the innermost open container (with its pending key), or the root. */
static int
add (struct builder *b, yajl_val v)
{
  if (b->depth == 0)
    {
      b->root = v;
      return 1;
    }
  if (b->top == b->cap)
    {
      b->cap = b->cap ? 2 * b->cap : 64;
      b->vals = xrealloc (b->vals, b->cap * sizeof *b->vals);
      b->keys = xrealloc (b->keys, b->cap * sizeof *b->keys);
    }
  struct frame *f = &b->frames[b->depth - 1];
  b->keys[b->top] = f->key;
  b->vals[b->top++] = v;
  f->key = NULL;
  return 1;
}

static int
open_container (struct builder *b, yajl_type type)
{
  yajl_val v = node (b, type);
  add (b, v);
  if (b->depth == b->frames_cap)
    {
      b->frames_cap = b->frames_cap ? 2 * b->frames_cap : 16;
      b->frames = xrealloc (b->frames, b->frames_cap * sizeof *b->frames);
    }
  b->frames[b->depth++] = (struct frame){ .node = v, .start = b->top };
  return 1;
}

static int
close_container (struct builder *b)
{
  struct frame *f = &b->frames[--b->depth];
  size_t n = b->top - f->start;
  yajl_val *vals = NULL;
  if (n)
    {
      vals = arena_alloc (b, n * sizeof *vals);
      memcpy (vals, b->vals + f->start, n * sizeof *vals);
    }
  if (YAJL_IS_OBJECT (f->node))
    {
      const char **keys = NULL;
      if (n)
        {
          keys = arena_alloc (b, n * sizeof *keys);
          memcpy (keys, b->keys + f->start, n * sizeof *keys);
        }
      f->node->u.object.keys = keys;
      f->node->u.object.values = vals;
      f->node->u.object.len = n;
    }
  else
    {
      f->node->u.array.values = vals;
      f->node->u.array.len = n;
    }
  b->top = f->start;
  return 1;
}

static int
on_null (void *ctx)
{
  return add (ctx, node (ctx, yajl_t_null));
}

static int
on_bool (void *ctx, int val)
{
  return add (ctx, node (ctx, val ? yajl_t_true : yajl_t_false));
}

/* What yajl's own integer reader gives: ERANGE past 64 bits or on a
 * character that is not a digit (a fraction, an exponent). */
static long long
parse_integer (const char *s, int *range)
{
  long long ret = 0, sign = 1;
  *range = 0;
  if (*s == '-')
    sign = -1, s++;
  else if (*s == '+')
    s++;
  for (; *s; s++)
    {
      if (*s < '0' || *s > '9' || ret > (LLONG_MAX - (*s - '0')) / 10)
        {
          *range = 1;
          return sign == 1 ? LLONG_MAX : LLONG_MIN;
        }
      ret = ret * 10 + (*s - '0');
    }
  return sign * ret;
}

/* A number as yajl_tree made it: its text, its integer value when that is
 * one of 64 bits, and its double when strtod takes all of it.  Up to 15
 * digits without a fraction or exponent (every number in a config but a
 * few) the double is the integer itself, exact, without strtod. */
static int
on_number (void *ctx, const char *s, size_t len)
{
  yajl_val v = node (ctx, yajl_t_number);
  char *r = v->u.number.r = arena_str (ctx, s, len);
  size_t neg = r[0] == '-', digits = len - neg;
  if (digits >= 1 && digits <= 15 && strspn (r + neg, "0123456789") == digits)
    {
      long long i = 0;
      for (size_t k = neg; k < len; k++)
        i = i * 10 + (r[k] - '0');
      v->u.number.i = neg ? -i : i;
      v->u.number.d = neg && i == 0 ? -0.0 : (double)v->u.number.i;
      v->u.number.flags = YAJL_NUMBER_INT_VALID | YAJL_NUMBER_DOUBLE_VALID;
      return add (ctx, v);
    }
  int range;
  v->u.number.i = parse_integer (r, &range);
  if (!range)
    v->u.number.flags |= YAJL_NUMBER_INT_VALID;
  char *end = NULL;
  errno = 0;
  v->u.number.d = strtod (r, &end);
  if (errno == 0 && end && *end == '\0')
    v->u.number.flags |= YAJL_NUMBER_DOUBLE_VALID;
  return add (ctx, v);
}

static int
on_string (void *ctx, const unsigned char *s, size_t len)
{
  yajl_val v = node (ctx, yajl_t_string);
  v->u.string = arena_str (ctx, s, len);
  return add (ctx, v);
}

static int
on_key (void *ctx, const unsigned char *s, size_t len)
{
  struct builder *b = ctx;
  b->frames[b->depth - 1].key = arena_str (b, s, len);
  return 1;
}

static int
on_start_map (void *ctx)
{
  return open_container (ctx, yajl_t_object);
}

static int
on_start_array (void *ctx)
{
  return open_container (ctx, yajl_t_array);
}

static int
on_end (void *ctx)
{
  return close_container (ctx);
}

static const yajl_callbacks builder_callbacks = {
  .yajl_null = on_null,
  .yajl_boolean = on_bool,
  .yajl_number = on_number,
  .yajl_string = on_string,
  .yajl_start_map = on_start_map,
  .yajl_map_key = on_key,
  .yajl_end_map = on_end,
  .yajl_start_array = on_start_array,
  .yajl_end_array = on_end,
};

static void
arena_free (struct arena *a)
{
  while (a)
    {
      struct arena *next = a->next;
      free (a);
      a = next;
    }
}

void
json_free (yajl_val root)
{
  /* The root is the first node of the first block: the header precedes it. */
  if (root)
    arena_free ((struct arena *)(void *)((char *)root - ARENA_HDR));
}

int
json_parse (const char *text, size_t len, yajl_val *out, hk_err *err)
{
  size_t blank = 0;
  while (blank < len && strchr (" \t\r\n", text[blank]) && text[blank] != '\0')
    blank++;
  if (blank == len)
    return json_invalid (err, "the text is empty");
  if (memchr (text, '\0', len))
    return json_invalid (err, "the text holds a NUL byte");
  if (has_nul_escape (text, len))
    return json_invalid (err, "strings must not hold NUL characters (\\u0000)");
  /* A node, its text and its slot in a parent take about 4 bytes of tree
   * per byte of a config; a denser text grows more blocks. */
  struct builder b = { 0 };
  b.first = b.cur = arena_block (len < 4096 ? 16384 : 4 * len);
  yajl_handle h = yajl_alloc (&builder_callbacks, NULL, &b);
  if (h == NULL)
    {
      fputs ("hako: out of memory\n", stderr);
      abort ();
    }
  /* As yajl_tree_parse: comments allowed, everything else strict. */
  yajl_config (h, yajl_allow_comments, 1);
  yajl_status st = yajl_parse (h, (const unsigned char *)text, len);
  if (st == yajl_status_ok)
    st = yajl_complete_parse (h);
  free (b.frames);
  free (b.vals);
  free (b.keys);
  if (st != yajl_status_ok || b.root == NULL)
    {
      unsigned char *e = yajl_get_error (h, 1, (const unsigned char *)text, len);
      char msg[1024];
      /* yajl draws a caret under the text on further lines: keep the first. */
      snprintf (msg, sizeof msg, "%s", e ? (const char *)e : "");
      msg[strcspn (msg, "\n")] = '\0';
      if (e)
        yajl_free_error (h, e);
      yajl_free (h);
      arena_free (b.first);
      return json_invalid (err, msg[0] ? msg : "parse error");
    }
  yajl_free (h);
  *out = b.root;
  return 0;
}

yajl_val
json_get (yajl_val obj, const char *key)
{
  if (!YAJL_IS_OBJECT (obj))
    return NULL;
  for (size_t i = obj->u.object.len; i-- > 0;)
    if (strcmp (obj->u.object.keys[i], key) == 0)
      {
        yajl_val v = obj->u.object.values[i];
        return YAJL_IS_NULL (v) ? NULL : v;
      }
  return NULL;
}

bool
json_is_set (yajl_val obj, const char *key)
{
  yajl_val v = YAJL_IS_OBJECT (obj) ? json_get (obj, key) : NULL;
  if (v == NULL || YAJL_IS_NULL (v))
    return false;
  if (YAJL_IS_ARRAY (v))
    return v->u.array.len > 0;
  if (YAJL_IS_OBJECT (v))
    return v->u.object.len > 0;
  if (YAJL_IS_STRING (v))
    return v->u.string[0] != '\0';
  return true;
}

const char *
json_first_set (yajl_val obj, const char *const *keys)
{
  for (size_t i = 0; keys[i]; i++)
    if (json_is_set (obj, keys[i]))
      return keys[i];
  return NULL;
}

size_t
json_len (yajl_val v)
{
  return YAJL_IS_ARRAY (v) ? v->u.array.len : 0;
}

yajl_val
json_at (yajl_val v, size_t i)
{
  return YAJL_IS_ARRAY (v) && i < v->u.array.len ? v->u.array.values[i] : NULL;
}

/* ---- paths and errors ---- */

static bool
is_identifier (const char *s)
{
  if (!(isalpha ((unsigned char)s[0]) || s[0] == '_'))
    return false;
  for (; *s; s++)
    if (!(isalnum ((unsigned char)*s) || *s == '_'))
      return false;
  return true;
}

/* The paths name a field in an error, but are made for every array element
 * a config has (hundreds in the default profile): by hand, not vasprintf. */
static char *
concat (const char *a, const char *b, size_t blen, const char *c)
{
  size_t alen = strlen (a), clen = strlen (c);
  char *out = xmalloc (alen + blen + clen + 1);
  memcpy (out, a, alen);
  memcpy (out + alen, b, blen);
  memcpy (out + alen + blen, c, clen + 1);
  return out;
}

char *
json_path (const char *path, const char *key)
{
  if (key == NULL)
    return xstrdup (path);
  if (is_identifier (key))
    return concat (path, ".", 1, key);
  cleanup_free char *quoted = concat ("[\"", key, strlen (key), "\"]");
  return concat (path, quoted, strlen (quoted), "");
}

char *
json_index (const char *path, size_t i)
{
  char digits[24];
  size_t n = sizeof digits;
  do
    digits[--n] = (char)('0' + i % 10);
  while ((i /= 10) != 0);
  digits[--n] = '[';
  return concat (path, digits + n, sizeof digits - n, "]");
}

int
json_error (hk_err *err, const char *path, const char *key, const char *fmt, ...)
{
  char msg[1024];
  va_list ap;
  va_start (ap, fmt);
  vsnprintf (msg, sizeof msg, fmt, ap);
  va_end (ap);
  cleanup_free char *where = json_path (path, key);
  err_set (err, 0, "%s: %s", where, msg);
  err->errnum = EINVAL;
  return -1;
}

/* ---- typed values ---- */

int
json_as_object (yajl_val v, const char *path, const char *key, yajl_val *out, hk_err *err)
{
  if (v == NULL)
    return 0;
  if (!YAJL_IS_OBJECT (v))
    return json_error (err, path, key, "must be an object");
  *out = v;
  return 1;
}

int
json_as_array (yajl_val v, const char *path, const char *key, yajl_val *out, hk_err *err)
{
  if (v == NULL)
    return 0;
  if (!YAJL_IS_ARRAY (v))
    return json_error (err, path, key, "must be an array");
  *out = v;
  return 1;
}

int
json_as_string (yajl_val v, const char *path, const char *key, char **out, hk_err *err)
{
  if (v == NULL)
    return 0;
  if (!YAJL_IS_STRING (v))
    return json_error (err, path, key, "must be a string");
  free (*out);
  *out = xstrdup (v->u.string);
  return 1;
}

int
json_as_bool (yajl_val v, const char *path, const char *key, bool *out, hk_err *err)
{
  if (v == NULL)
    return 0;
  if (!YAJL_IS_TRUE (v) && !YAJL_IS_FALSE (v))
    return json_error (err, path, key, "must be true or false");
  *out = YAJL_IS_TRUE (v);
  return 1;
}

/* Split an integer's text into sign and magnitude.  -1: not an integer
 * (a fraction or an exponent); -2: beyond 64 bits. */
static int
int_parts (yajl_val v, bool *neg, uint64_t *mag)
{
  if (!YAJL_IS_NUMBER (v) || v->u.number.r == NULL)
    return -1;
  const char *s = v->u.number.r;
  *neg = s[0] == '-';
  if (*neg)
    s++;
  if (*s == '\0' || s[strspn (s, "0123456789")] != '\0')
    return -1;
  errno = 0;
  unsigned long long m = strtoull (s, NULL, 10);
  if (errno == ERANGE)
    return -2;
  *mag = m;
  return 0;
}

int
json_as_u64 (yajl_val v, const char *path, const char *key, uint64_t max, uint64_t *out, hk_err *err)
{
  bool neg;
  uint64_t mag;
  if (v == NULL)
    return 0;
  int r = int_parts (v, &neg, &mag);
  if (r == -1)
    return json_error (err, path, key, "must be an integer");
  if (r < 0 || (neg && mag != 0) || mag > max)
    return json_error (err, path, key, "must be an integer between 0 and %" PRIu64, max);
  *out = mag;
  return 1;
}

int
json_as_i64 (yajl_val v, const char *path, const char *key, int64_t min, int64_t max, int64_t *out,
             hk_err *err)
{
  bool neg;
  uint64_t mag;
  if (v == NULL)
    return 0;
  int r = int_parts (v, &neg, &mag);
  if (r == -1)
    return json_error (err, path, key, "must be an integer");
  bool fits = r == 0 && mag <= (uint64_t)INT64_MAX + (neg ? 1 : 0);
  int64_t val = 0;
  if (fits)
    val = !neg ? (int64_t)mag : mag == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)mag;
  if (!fits || val < min || val > max)
    return json_error (err, path, key, "must be an integer between %" PRId64 " and %" PRId64, min, max);
  *out = val;
  return 1;
}

int
json_get_u32 (yajl_val obj, const char *path, const char *key, uint32_t *out, hk_err *err)
{
  uint64_t v = 0;
  int r = json_get_u64 (obj, path, key, UINT32_MAX, &v, err);
  if (r > 0)
    *out = (uint32_t)v;
  return r;
}

int
json_get_int (yajl_val obj, const char *path, const char *key, int min, int max, int *out, hk_err *err)
{
  int64_t v = 0;
  int r = json_get_i64 (obj, path, key, min, max, &v, err);
  if (r > 0)
    *out = (int)v;
  return r;
}

int
json_as_strv (yajl_val v, const char *path, const char *key, char ***out, hk_err *err)
{
  yajl_val a = NULL;
  int r = json_as_array (v, path, key, &a, err);
  if (r <= 0)
    return r;
  size_t n = json_len (a);
  for (size_t i = 0; i < n; i++)
    if (!YAJL_IS_STRING (json_at (a, i)))
      {
        cleanup_free char *where = json_path (path, key);
        cleanup_free char *elem = json_index (where, i);
        return json_error (err, elem, NULL, "must be a string");
      }
  char **list = xcalloc (n + 1, sizeof *list);
  for (size_t i = 0; i < n; i++)
    list[i] = xstrdup (json_at (a, i)->u.string);
  strv_free (*out);
  *out = list;
  return 1;
}

int
json_as_kv (yajl_val v, const char *path, const char *key, struct oci_kv **out, size_t *n, hk_err *err)
{
  yajl_val o = NULL;
  int r = json_as_object (v, path, key, &o, err);
  if (r <= 0)
    return r;
  size_t len = o->u.object.len;
  for (size_t i = 0; i < len; i++)
    if (!YAJL_IS_STRING (o->u.object.values[i]))
      {
        cleanup_free char *where = json_path (path, key);
        return json_error (err, where, o->u.object.keys[i], "must be a string");
      }
  struct oci_kv *kv = xcalloc (len, sizeof *kv);
  for (size_t i = 0; i < len; i++)
    {
      kv[i].key = xstrdup (o->u.object.keys[i]);
      kv[i].value = xstrdup (o->u.object.values[i]->u.string);
    }
  json_kv_free (*out, *n);
  *out = kv;
  *n = len;
  return 1;
}

void
json_kv_free (struct oci_kv *kv, size_t n)
{
  for (size_t i = 0; i < n; i++)
    {
      free (kv[i].key);
      free (kv[i].value);
    }
  free (kv);
}

/* ---- writing ---- */

static void
note (struct json_out *o, yajl_gen_status s)
{
  if (s != yajl_gen_status_ok && o->status == yajl_gen_status_ok)
    o->status = s;
}

void
json_out_init (struct json_out *o, const char *indent)
{
  o->g = yajl_gen_alloc (NULL);
  if (o->g == NULL)
    {
      fputs ("hako: out of memory\n", stderr);
      abort ();
    }
  o->status = yajl_gen_status_ok;
  /* Refuse to write invalid UTF-8: what we write, yajl must read back. */
  yajl_gen_config (o->g, yajl_gen_validate_utf8, 1);
  if (indent)
    {
      yajl_gen_config (o->g, yajl_gen_beautify, 1);
      yajl_gen_config (o->g, yajl_gen_indent_string, indent);
    }
}

void
json_obj_open (struct json_out *o)
{
  note (o, yajl_gen_map_open (o->g));
}

void
json_obj_close (struct json_out *o)
{
  note (o, yajl_gen_map_close (o->g));
}

void
json_arr_open (struct json_out *o)
{
  note (o, yajl_gen_array_open (o->g));
}

void
json_arr_close (struct json_out *o)
{
  note (o, yajl_gen_array_close (o->g));
}

void
json_str (struct json_out *o, const char *s)
{
  note (o, yajl_gen_string (o->g, (const unsigned char *)s, strlen (s)));
}

void
json_key (struct json_out *o, const char *key)
{
  json_str (o, key);
}

void
json_int (struct json_out *o, int64_t v)
{
  note (o, yajl_gen_integer (o->g, v));
}

void
json_uint (struct json_out *o, uint64_t v)
{
  char buf[32];
  int n = snprintf (buf, sizeof buf, "%" PRIu64, v);
  note (o, yajl_gen_number (o->g, buf, n));
}

void
json_bool (struct json_out *o, bool v)
{
  note (o, yajl_gen_bool (o->g, v));
}

void
json_null (struct json_out *o)
{
  note (o, yajl_gen_null (o->g));
}

void
json_number (struct json_out *o, const char *text)
{
  note (o, yajl_gen_number (o->g, text, strlen (text)));
}

void
json_strv (struct json_out *o, char *const *v)
{
  json_arr_open (o);
  for (size_t i = 0; v && v[i]; i++)
    json_str (o, v[i]);
  json_arr_close (o);
}

void
json_kstr (struct json_out *o, const char *key, const char *s)
{
  if (s == NULL)
    return;
  json_key (o, key);
  json_str (o, s);
}

void
json_kint (struct json_out *o, const char *key, int64_t v)
{
  json_key (o, key);
  json_int (o, v);
}

void
json_kuint (struct json_out *o, const char *key, uint64_t v)
{
  json_key (o, key);
  json_uint (o, v);
}

void
json_kbool (struct json_out *o, const char *key, bool v)
{
  json_key (o, key);
  json_bool (o, v);
}

void
json_kstrv (struct json_out *o, const char *key, char *const *v)
{
  if (v == NULL)
    return;
  json_key (o, key);
  json_strv (o, v);
}

int
json_out_finish (struct json_out *o, char **out, size_t *len, hk_err *err)
{
  const unsigned char *buf;
  size_t n;
  int r = 0;
  if (o->status != yajl_gen_status_ok)
    r = err_set (err, EINVAL, "writing JSON: %s",
                 o->status == yajl_gen_invalid_string ? "a string is not valid UTF-8" : "generator misuse");
  else if (yajl_gen_get_buf (o->g, &buf, &n) != yajl_gen_status_ok)
    r = err_set (err, EINVAL, "writing JSON: no output");
  else
    {
      /* Pretty output ends in a newline; callers add their own. */
      while (n > 0 && buf[n - 1] == '\n')
        n--;
      *out = xstrndup ((const char *)buf, n);
      if (len)
        *len = n;
    }
  yajl_gen_free (o->g);
  o->g = NULL;
  return r;
}

void
json_value (struct json_out *o, yajl_val v)
{
  if (YAJL_IS_OBJECT (v))
    {
      json_obj_open (o);
      json_members_but (o, v, (const char *const[]){ NULL });
      json_obj_close (o);
    }
  else if (YAJL_IS_ARRAY (v))
    {
      json_arr_open (o);
      for (size_t i = 0; i < v->u.array.len; i++)
        json_value (o, v->u.array.values[i]);
      json_arr_close (o);
    }
  else if (YAJL_IS_STRING (v))
    json_str (o, v->u.string);
  else if (YAJL_IS_NUMBER (v))
    json_number (o, v->u.number.r);
  else if (YAJL_IS_TRUE (v) || YAJL_IS_FALSE (v))
    json_bool (o, YAJL_IS_TRUE (v));
  else
    json_null (o);
}

void
json_members_but (struct json_out *o, yajl_val obj, const char *const *skip)
{
  for (size_t i = 0; YAJL_IS_OBJECT (obj) && i < obj->u.object.len; i++)
    {
      bool skipped = false;
      for (size_t j = 0; skip[j] && !skipped; j++)
        skipped = strcmp (obj->u.object.keys[i], skip[j]) == 0;
      if (skipped)
        continue;
      json_key (o, obj->u.object.keys[i]);
      json_value (o, obj->u.object.values[i]);
    }
}
