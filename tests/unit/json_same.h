/* json_same: whether oci/json.c's json_parse reads a text as yajl_tree_parse
 * does — the same verdict, the same first line of yajl's message on
 * failure, and the same tree on success (types, keys in order with their
 * repeats, strings, each number's text, integer, double and flags).  For
 * tests/unit/test_json.c and tests/fuzz/fuzz_json.c. */
#ifndef HAKO_TESTS_JSON_SAME_H
#define HAKO_TESTS_JSON_SAME_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_tree.h>

#include "lib/err.h"
#include "oci/json.h"

static bool
json_same_tree (yajl_val a, yajl_val b)
{
  if (a == NULL || b == NULL)
    return a == b;
  if (a->type != b->type)
    return false;
  switch (a->type)
    {
    case yajl_t_string: return strcmp (a->u.string, b->u.string) == 0;
    case yajl_t_number:
      if (strcmp (a->u.number.r, b->u.number.r) != 0 || a->u.number.flags != b->u.number.flags)
        return false;
      if ((a->u.number.flags & YAJL_NUMBER_INT_VALID) && a->u.number.i != b->u.number.i)
        return false;
      /* Bit for bit: -0.0 is not 0.0 here. */
      return !(a->u.number.flags & YAJL_NUMBER_DOUBLE_VALID)
             || memcmp (&a->u.number.d, &b->u.number.d, sizeof a->u.number.d) == 0;
    case yajl_t_object:
      if (a->u.object.len != b->u.object.len)
        return false;
      for (size_t i = 0; i < a->u.object.len; i++)
        if (strcmp (a->u.object.keys[i], b->u.object.keys[i]) != 0
            || !json_same_tree (a->u.object.values[i], b->u.object.values[i]))
          return false;
      return true;
    case yajl_t_array:
      if (a->u.array.len != b->u.array.len)
        return false;
      for (size_t i = 0; i < a->u.array.len; i++)
        if (!json_same_tree (a->u.array.values[i], b->u.array.values[i]))
          return false;
      return true;
    default: return true;
    }
}

/* 1 when both read TEXT alike, 0 when they differ (why on stderr), -1 when
 * json_parse refuses it before yajl (a NUL, a \u0000, blank text): nothing
 * to compare. */
static int
json_same (const char *text, size_t len)
{
  hk_err err = { 0 };
  yajl_val mine = NULL;
  int r = json_parse (text, len, &mine, &err);
  if (r < 0
      && (strstr (err.msg, "the text is empty") || strstr (err.msg, "NUL byte")
          || strstr (err.msg, "NUL characters")))
    return -1;
  char *copy = malloc (len + 1);
  memcpy (copy, text, len);
  copy[len] = '\0';
  char msg[1024] = "";
  yajl_val theirs = yajl_tree_parse (copy, msg, sizeof msg);
  free (copy);
  msg[strcspn (msg, "\n")] = '\0';
  int same;
  if (r < 0 || theirs == NULL)
    {
      char want[1100];
      snprintf (want, sizeof want, "invalid JSON: %s", msg[0] ? msg : "parse error");
      same = r < 0 && theirs == NULL && strcmp (err.msg, want) == 0;
      if (!same)
        fprintf (stderr, "json_same: json_parse %s (%s), yajl_tree_parse %s (%s)\n",
                 r < 0 ? "failed" : "read it", r < 0 ? err.msg : "", theirs ? "read it" : "failed", msg);
    }
  else
    {
      same = json_same_tree (mine, theirs);
      if (!same)
        fprintf (stderr, "json_same: the trees differ\n");
    }
  if (mine)
    json_free (mine);
  if (theirs)
    yajl_tree_free (theirs);
  return same;
}

#endif
