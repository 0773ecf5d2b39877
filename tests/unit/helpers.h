/* helpers: what several unit tests share — JSON written with ' for ", and a
 * spec parsed from it, from plain JSON, or from a profile `hako spec` writes.
 * A test that needs a struct oci_spec gets it here rather than carrying its
 * own copy of "write the JSON, parse it, say why it did not parse". */
#ifndef HAKO_TESTS_HELPERS_H
#define HAKO_TESTS_HELPERS_H

#include <stdio.h>
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

/* The spec in JSON (plain "), or NULL after a TAP comment saying why. */
static inline struct oci_spec *
spec_json (const char *json)
{
  hk_err err = { 0 };
  struct oci_spec *s = NULL;
  if (oci_spec_parse (json, strlen (json), &s, &err) < 0)
    {
      printf ("# spec does not parse: %s\n", err.msg);
      return NULL;
    }
  return s;
}

/* The spec in TEXT (' for "), or NULL after a TAP comment saying why. */
static inline struct oci_spec *
spec_q (const char *text)
{
  cleanup_free char *json = q (text);
  return spec_json (json);
}

/* The profile P as `hako spec` writes it (its text in *text, the caller's to
 * free), parsed; NULL with err filled if either step fails. */
static inline struct oci_spec *
spec_profile (enum oci_profile p, bool rootless, char *const *args, const struct oci_profile_limits *lim,
              char **text, hk_err *err)
{
  struct oci_spec *s = NULL;
  *text = NULL;
  if (oci_profile_generate (p, rootless, args, lim, text, err) < 0
      || oci_spec_parse (*text, strlen (*text), &s, err) < 0)
    return NULL;
  return s;
}

#endif
