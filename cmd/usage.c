/* usage: which option or verb was wrong, named after the verb, and what was
 * probably meant.  getopt's own messages are off (opterr = 0, set in main):
 * they name argv[0], which for a verb is the verb's bare word ("ls"). */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"

/* Optimal string alignment distance (Levenshtein plus adjacent swaps:
 * "imgae" is one edit from "image"), or a big number past 63 bytes. */
static size_t
edit_distance (const char *a, const char *b)
{
  size_t la = strlen (a), lb = strlen (b);
  if (la > 63 || lb > 63)
    return 1000;
  size_t d[64][64];
  for (size_t i = 0; i <= la; i++)
    d[i][0] = i;
  for (size_t j = 0; j <= lb; j++)
    d[0][j] = j;
  for (size_t i = 1; i <= la; i++)
    for (size_t j = 1; j <= lb; j++)
      {
        size_t cost = a[i - 1] != b[j - 1];
        size_t v = d[i - 1][j] + 1;
        if (d[i][j - 1] + 1 < v)
          v = d[i][j - 1] + 1;
        if (d[i - 1][j - 1] + cost < v)
          v = d[i - 1][j - 1] + cost;
        if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < v)
          v = d[i - 2][j - 2] + 1;
        d[i][j] = v;
      }
  return d[la][lb];
}

const char *
cmd_suggest (const char *word, const char *const *names, size_t n)
{
  /* One edit for short words, two from five letters on: closer than that,
   * a suggestion is a guess ("ps" for "x"). */
  size_t limit = strlen (word) >= 5 ? 2 : 1, best = limit + 1;
  const char *pick = NULL;
  for (size_t i = 0; i < n; i++)
    {
      size_t d = edit_distance (word, names[i]);
      if (d < best)
        {
          best = d;
          pick = names[i];
        }
    }
  return pick;
}

static const struct option *
option_by_val (const struct option *opts, int val)
{
  for (const struct option *o = opts; o->name; o++)
    if (o->val == val)
      return o;
  return NULL;
}

/* An unknown or ambiguous --NAME (NAME ends at '='). */
static int
bad_long (const char *verb, const char *arg, const struct option *opts)
{
  char name[64];
  const char *names[128];
  size_t n = 0, matches = 0, len = strcspn (arg + 2, "=");
  snprintf (name, sizeof name, "%.*s", (int)len, arg + 2);
  for (const struct option *o = opts; o->name && n < 128; o++)
    {
      names[n++] = o->name;
      matches += strncmp (o->name, name, len) == 0;
    }
  if (matches > 1)
    return cmd_usage (verb, "option '--%s' is ambiguous", name);
  const char *s = cmd_suggest (name, names, n);
  if (s)
    return cmd_usage (verb, "unrecognized option '--%s'; did you mean '--%s'?", name, s);
  return cmd_usage (verb, "unrecognized option '--%s'", name);
}

int
cmd_bad_option (const char *verb, char **argv, const struct option *opts)
{
  const char *arg = optind > 0 ? argv[optind - 1] : NULL;
  const struct option *o = optopt ? option_by_val (opts, optopt) : NULL;
  /* getopt leaves optind on a short option's word while more letters of it
   * remain ("-xq"): argv[optind - 1] is then an earlier word, long or not. */
  bool is_long = arg && strncmp (arg, "--", 2) == 0
                 && (optopt == 0 || (o && strncmp (arg + 2, o->name, strcspn (arg + 2, "=")) == 0));
  if (o && o->has_arg == required_argument)
    return is_long ? cmd_usage (verb, "option '--%s' requires an argument", o->name)
                   : cmd_usage (verb, "option requires an argument -- '%c'", optopt);
  if (o && is_long)
    return cmd_usage (verb, "option '--%s' doesn't allow an argument", o->name);
  if (is_long)
    return bad_long (verb, arg, opts);
  if (optopt > 0 && optopt < 256)
    return cmd_usage (verb, "invalid option -- '%c'", optopt);
  return cmd_usage (verb, "bad option");
}
