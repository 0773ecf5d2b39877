/* helpers: what several unit tests share — JSON written with ' for ", and a
 * spec parsed from it. */
#ifndef HAKO_TESTS_HELPERS_H
#define HAKO_TESTS_HELPERS_H

#include <string.h>

#include "lib/util.h"
#include "oci/spec.h"

/* A copy of s with every ' turned into " (test JSON stays readable in C). */
static inline char *
q (const char *s)
{
  char *r = xstrdup (s);
  for (char *p = r; *p; p++)
    if (*p == '\'')
      *p = '"';
  return r;
}

/* The spec in TEXT (' for "), or NULL with err filled. */
static inline struct oci_spec *
parse_q (const char *text, hk_err *err)
{
  cleanup_free char *json = q (text);
  struct oci_spec *s = NULL;
  if (oci_spec_parse (json, strlen (json), &s, err) < 0)
    return NULL;
  return s;
}

#endif
