/* json: reading yajl trees with typed, path-named errors, and writing JSON.
 * Private to oci/: nothing outside it includes yajl. */
#ifndef HAKO_OCI_JSON_H
#define HAKO_OCI_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#include "lib/err.h"

struct oci_kv;

/* ---- reading ---- */

/* Parse LEN bytes of JSON text (need not be NUL-terminated).  Malformed text
 * fails with "invalid JSON: <yajl's message>"; so does a string holding a NUL
 * (\u0000), which C strings would silently cut short.  The tree is
 * yajl's types in an arena of its own: free *out with json_free (never
 * yajl_tree_free), and only the root it gave. */
int json_parse (const char *text, size_t len, yajl_val *out, hk_err *err);
void json_free (yajl_val root);

/* The member KEY of OBJ; NULL when OBJ is not an object, KEY is absent or its
 * value is null (a null field is an absent field, as for Go's encoding/json).
 * A key given twice: the last one wins, as in Go. */
yajl_val json_get (yajl_val obj, const char *key);

/* "PATH.KEY", or PATH["KEY"] when KEY is not an identifier, or PATH alone
 * when KEY is NULL.  PATH[I] for array elements. */
char *json_path (const char *path, const char *key);
char *json_index (const char *path, size_t i);

/* Fail with "PATH.KEY: <message>" (errnum EINVAL, no strerror appended). */
int json_error (hk_err *err, const char *path, const char *key, const char *fmt, ...)
    __attribute__ ((format (printf, 4, 5)));

/* Value readers.  V is the value found at PATH.KEY (KEY may be NULL); V NULL
 * means absent.  Each returns 0 when absent (*out untouched), 1 when read and
 * -1 with a path-named error when V has the wrong type or range. */
int json_as_object (yajl_val v, const char *path, const char *key, yajl_val *out, hk_err *err);
int json_as_array (yajl_val v, const char *path, const char *key, yajl_val *out, hk_err *err);
/* A new copy in *out (an earlier *out is freed). */
int json_as_string (yajl_val v, const char *path, const char *key, char **out, hk_err *err);
int json_as_bool (yajl_val v, const char *path, const char *key, bool *out, hk_err *err);
/* Integers (no fraction, no exponent) within [min, max]. */
int json_as_u64 (yajl_val v, const char *path, const char *key, uint64_t max, uint64_t *out, hk_err *err);
int json_as_i64 (yajl_val v, const char *path, const char *key, int64_t min, int64_t max, int64_t *out,
                 hk_err *err);
/* An array of strings, as a NULL-terminated vector. */
int json_as_strv (yajl_val v, const char *path, const char *key, char ***out, hk_err *err);
/* An object of string values, in document order. */
int json_as_kv (yajl_val v, const char *path, const char *key, struct oci_kv **out, size_t *n, hk_err *err);

/* Field readers: the same on member KEY of OBJ at PATH. */
static inline int
json_get_object (yajl_val obj, const char *path, const char *key, yajl_val *out, hk_err *err)
{
  return json_as_object (json_get (obj, key), path, key, out, err);
}

static inline int
json_get_array (yajl_val obj, const char *path, const char *key, yajl_val *out, hk_err *err)
{
  return json_as_array (json_get (obj, key), path, key, out, err);
}

static inline int
json_get_string (yajl_val obj, const char *path, const char *key, char **out, hk_err *err)
{
  return json_as_string (json_get (obj, key), path, key, out, err);
}

static inline int
json_get_bool (yajl_val obj, const char *path, const char *key, bool *out, hk_err *err)
{
  return json_as_bool (json_get (obj, key), path, key, out, err);
}

static inline int
json_get_u64 (yajl_val obj, const char *path, const char *key, uint64_t max, uint64_t *out, hk_err *err)
{
  return json_as_u64 (json_get (obj, key), path, key, max, out, err);
}

static inline int
json_get_i64 (yajl_val obj, const char *path, const char *key, int64_t min, int64_t max, int64_t *out,
              hk_err *err)
{
  return json_as_i64 (json_get (obj, key), path, key, min, max, out, err);
}

static inline int
json_get_strv (yajl_val obj, const char *path, const char *key, char ***out, hk_err *err)
{
  return json_as_strv (json_get (obj, key), path, key, out, err);
}

static inline int
json_get_kv (yajl_val obj, const char *path, const char *key, struct oci_kv **out, size_t *n, hk_err *err)
{
  return json_as_kv (json_get (obj, key), path, key, out, n, err);
}

/* Typed field readers into narrower integers. */
int json_get_u32 (yajl_val obj, const char *path, const char *key, uint32_t *out, hk_err *err);
int json_get_int (yajl_val obj, const char *path, const char *key, int min, int max, int *out, hk_err *err);

/* Whether obj's member key asks for something: present, and not null, an
 * empty array, an empty object or an empty string. */
bool json_is_set (yajl_val obj, const char *key);
/* The first of keys (NULL-terminated) that json_is_set finds in obj, or NULL. */
const char *json_first_set (yajl_val obj, const char *const *keys);

/* Array length and element (V must be an array). */
size_t json_len (yajl_val v);
yajl_val json_at (yajl_val v, size_t i);

void json_kv_free (struct oci_kv *kv, size_t n);

/* ---- writing ---- */

/* A generator that remembers its first failure, so callers emit without
 * checking every call and check once in json_out_finish. */
struct json_out
{
  yajl_gen g;
  yajl_gen_status status;
};

/* INDENT NULL: compact output; else pretty with that indent string. */
void json_out_init (struct json_out *o, const char *indent);
void json_obj_open (struct json_out *o);
void json_obj_close (struct json_out *o);
void json_arr_open (struct json_out *o);
void json_arr_close (struct json_out *o);
void json_key (struct json_out *o, const char *key);
void json_str (struct json_out *o, const char *s);
void json_int (struct json_out *o, int64_t v);
void json_uint (struct json_out *o, uint64_t v);
void json_bool (struct json_out *o, bool v);
void json_strv (struct json_out *o, char *const *v);
void json_null (struct json_out *o);
/* A number given as its JSON text (as yajl's tree keeps it). */
void json_number (struct json_out *o, const char *text);
/* A parsed value written back as it was read, numbers in their own text:
 * what the config editors (spec_edit.c, spec_network.c, cdi.c, learn.c)
 * copy through untouched. */
void json_value (struct json_out *o, yajl_val v);
/* The members of object obj (none if not an object) but those named in
 * skip (NULL-terminated), as "key": value pairs. */
void json_members_but (struct json_out *o, yajl_val obj, const char *const *skip);
/* "key": value pairs; json_kstr and json_kstrv skip a NULL value. */
void json_kstr (struct json_out *o, const char *key, const char *s);
void json_kint (struct json_out *o, const char *key, int64_t v);
void json_kuint (struct json_out *o, const char *key, uint64_t v);
void json_kbool (struct json_out *o, const char *key, bool v);
void json_kstrv (struct json_out *o, const char *key, char *const *v);
/* The text (NUL-terminated, no trailing newline) in *out, its length in *len
 * (when not NULL); frees the generator either way. */
int json_out_finish (struct json_out *o, char **out, size_t *len, hk_err *err);

#endif
