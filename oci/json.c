/* json: reading yajl trees with typed, path-named errors, and writing JSON. */
#include "oci/json.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
  cleanup_free char *buf = xmalloc (len + 1);
  memcpy (buf, text, len);
  buf[len] = '\0';
  char msg[1024] = "";
  yajl_val v = yajl_tree_parse (buf, msg, sizeof msg);
  if (v == NULL)
    {
      /* yajl draws a caret under the text on further lines: keep the first. */
      msg[strcspn (msg, "\n")] = '\0';
      return json_invalid (err, msg[0] ? msg : "parse error");
    }
  *out = v;
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

char *
json_path (const char *path, const char *key)
{
  if (key == NULL)
    return xstrdup (path);
  if (is_identifier (key))
    return xasprintf ("%s.%s", path, key);
  return xasprintf ("%s[\"%s\"]", path, key);
}

char *
json_index (const char *path, size_t i)
{
  return xasprintf ("%s[%zu]", path, i);
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
