/* learn_http (oci): learning's network observations — the proxy's decision
 * lines read back (the format hako logs --network prints), and the request
 * rules made of them: the narrowest that cover what was seen (oci/learn.h,
 * hako-learn(7)). */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util.h"
#include "oci/json.h"
#include "oci/learn.h"
#include "oci/netrule.h"
#include "oci/spec.h"

/* ---- decision lines ------------------------------------------------------------- */

static const char *
str_of (yajl_val root, const char *key)
{
  yajl_val v = json_get (root, key);
  return YAJL_IS_STRING (v) ? v->u.string : NULL;
}

char
oci_learn_decision (const char *line, size_t len, char **value)
{
  yajl_val root;
  hk_err err;
  *value = NULL;
  if (json_parse (line, len, &root, &err) < 0)
    return 0;
  const char *verdict = str_of (root, "verdict"), *method = str_of (root, "method");
  const char *scheme = str_of (root, "scheme"), *host = str_of (root, "host"), *path = str_of (root, "path");
  const char *tunnel = str_of (root, "tunnel");
  yajl_val port = json_get (root, "port");
  char kind = 0;
  /* What was let through only: a refusal taught nothing to grant. */
  bool through = verdict && (strcmp (verdict, "learn") == 0 || strcmp (verdict, "allow") == 0);
  if (through && host && YAJL_IS_INTEGER (port) && method)
    {
      long p = (long)YAJL_GET_INTEGER (port);
      char h[300];
      if (strchr (host, ':'))
        snprintf (h, sizeof h, "[%s]", host);
      else
        snprintf (h, sizeof h, "%s", host);
      if (scheme && path && (strcmp (scheme, "http") == 0 || strcmp (scheme, "https") == 0))
        {
          /* The path as a rule's pattern reads it: a '*' it holds is a
           * character, not a wildcard. */
          cleanup_free char *pat = xmalloc (strlen (path) * 3 + 1);
          char *o = pat;
          for (const char *c = path; *c; c++)
            o = *c == '*' ? o + sprintf (o, "%%2A") : (*o = *c, o + 1);
          *o = '\0';
          kind = 'q';
          *value = xasprintf ("%s %s://%s:%ld%s", method, scheme, h, p, pat);
        }
      else if (strcmp (method, "CONNECT") == 0 && tunnel && strcmp (tunnel, "opaque") == 0)
        {
          kind = 'h';
          *value = xasprintf ("%s:%ld", h, p);
        }
    }
  json_free (root);
  return kind;
}

/* ---- request rules ----------------------------------------------------------------- */

/* One request rule taken apart: its methods, where ("scheme://host:port"),
 * its path's segments (decoded; "*" a wildcard). */
struct req
{
  char **methods;
  char *origin;
  char **segs;
  size_t n;
  bool rest;
  size_t from; /* the input it came from */
};

static bool
take (const char *text, size_t from, struct req *out)
{
  struct net_rule r;
  hk_err err;
  if (oci_net_rule_parse (text, &r, &err) < 0 || !r.request)
    {
      oci_net_rule_free (&r);
      return false;
    }
  const char *auth = strstr (text, "://") + 3;
  size_t alen = strcspn (auth, "/");
  *out = (struct req){ .origin = xstrndup (text + strcspn (text, " ") + 1,
                                           (size_t)(auth + alen - text) - strcspn (text, " ") - 1),
                       .segs = r.segs,
                       .n = r.n_segs,
                       .rest = r.rest,
                       .from = from };
  out->methods = r.methods ? r.methods : xcalloc (2, sizeof (char *));
  if (r.methods == NULL)
    out->methods[0] = xstrdup ("*");
  r.segs = NULL;
  r.methods = NULL;
  oci_net_rule_free (&r);
  for (size_t i = 0; i < out->n; i++)
    if (strcmp (out->segs[i], "*") == 0)
      out->segs[i][0] = '\x01'; /* a rule's wildcard, kept one */
  return true;
}

static void
req_free (struct req *q)
{
  strv_free (q->methods);
  free (q->origin);
  strv_free (q->segs);
}

/* A segment as a rule writes it: '*', '%', '?', '#', blanks and what is
 * not printable ASCII escaped, so a segment named "*" stays literal. */
static void
put_segment (FILE *f, const char *s)
{
  for (const unsigned char *c = (const unsigned char *)s; *c; c++)
    if (*c <= 0x20 || *c >= 0x7f || strchr ("*%?#", *c))
      fprintf (f, "%%%02X", *c);
    else
      fputc (*c, f);
}

static char *
req_text (const struct req *q)
{
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream (&text, &len);
  if (f == NULL)
    return NULL;
  for (size_t i = 0; q->methods[i]; i++)
    fprintf (f, "%s%s", i ? "," : "", q->methods[i]);
  fprintf (f, " %s", q->origin);
  for (size_t i = 0; i < q->n; i++)
    {
      fputc ('/', f);
      if (q->segs[i][0] == '\x01')
        fputc ('*', f); /* a learned wildcard */
      else
        put_segment (f, q->segs[i]);
    }
  if (q->rest)
    fputs ("/**", f);
  else if (q->n == 0)
    fputc ('/', f);
  fclose (f);
  return text;
}

static bool
same_parent (const struct req *a, const struct req *b)
{
  if (strcmp (a->origin, b->origin) != 0 || a->n != b->n || a->rest != b->rest || a->n == 0)
    return false;
  for (size_t i = 0; i + 1 < a->n; i++)
    if (strcmp (a->segs[i], b->segs[i]) != 0)
      return false;
  return strcmp (a->methods[0], b->methods[0]) == 0 && a->methods[1] == NULL && b->methods[1] == NULL;
}

/* Siblings — one method, one parent, one depth — from
 * LEARN_DIR_THRESHOLD on become one rule with "*" for their last segment
 * (a directory listing's files, an API's ids). */
static void
collapse_siblings (struct req *v, size_t n)
{
  for (size_t i = 0; i < n; i++)
    {
      if (v[i].n == 0 || v[i].segs[v[i].n - 1][0] == '\x01' || v[i].methods[1] != NULL)
        continue;
      size_t k = 0;
      for (size_t j = 0; j < n; j++)
        k += same_parent (&v[i], &v[j]) && strcmp (v[j].segs[v[j].n - 1], v[i].segs[v[i].n - 1]) != 0;
      if (k + 1 < LEARN_DIR_THRESHOLD)
        continue;
      for (size_t j = 0; j < n; j++)
        if (j != i && same_parent (&v[i], &v[j]))
          {
            free (v[j].segs[v[j].n - 1]);
            v[j].segs[v[j].n - 1] = xstrdup ("\x01");
          }
      free (v[i].segs[v[i].n - 1]);
      v[i].segs[v[i].n - 1] = xstrdup ("\x01");
    }
}

static bool
same_path (const struct req *a, const struct req *b)
{
  if (strcmp (a->origin, b->origin) != 0 || a->n != b->n || a->rest != b->rest)
    return false;
  for (size_t i = 0; i < a->n; i++)
    if (strcmp (a->segs[i], b->segs[i]) != 0)
      return false;
  return true;
}

static int
cmp_str (const void *a, const void *b)
{
  return strcmp (*(char *const *)a, *(char *const *)b);
}

/* The methods of b added to a's (once each, sorted). */
static void
merge_methods (struct req *a, const struct req *b)
{
  size_t n = strv_len (a->methods);
  for (size_t i = 0; b->methods[i]; i++)
    {
      bool have = false;
      for (size_t j = 0; j < n && !have; j++)
        have = strcmp (a->methods[j], b->methods[i]) == 0;
      if (have)
        continue;
      a->methods = xrealloc (a->methods, (n + 2) * sizeof *a->methods);
      a->methods[n++] = xstrdup (b->methods[i]);
      a->methods[n] = NULL;
    }
  qsort (a->methods, n, sizeof *a->methods, cmp_str);
}

/* v[n] with its methods split: one rule a method after it (v grown as
 * needed); the number of rules it became. */
static size_t
split_methods (struct req **v, size_t n, size_t *cap)
{
  size_t extra = strv_len ((*v)[n].methods) - 1;
  if (n + extra + 1 > *cap)
    {
      *cap = n + extra + 16;
      *v = xrealloc (*v, *cap * sizeof **v);
    }
  struct req *q = &(*v)[n];
  for (size_t m = 1; m <= extra; m++)
    {
      struct req *c = &(*v)[n + m];
      *c = (struct req){ .methods = xcalloc (2, sizeof (char *)),
                         .origin = xstrdup (q->origin),
                         .segs = xcalloc (q->n + 1, sizeof (char *)),
                         .n = q->n,
                         .rest = q->rest,
                         .from = q->from };
      c->methods[0] = q->methods[m];
      for (size_t s = 0; s < q->n; s++)
        c->segs[s] = xstrdup (q->segs[s]);
    }
  q->methods[1] = NULL;
  return extra + 1;
}

char **
oci_learn_request_rules (char *const *in, size_t **from)
{
  size_t n_in = strv_len (in), n = 0, cap = n_in + 1;
  struct req *v = xcalloc (cap, sizeof *v);
  /* One method a rule while collapsing: an old profile's "GET,HEAD" is
   * split, and merged again below. */
  for (size_t i = 0; i < n_in; i++)
    {
      if (n + 1 > cap)
        v = xrealloc (v, (cap = n + 16) * sizeof *v);
      if (take (in[i], i, &v[n]))
        n += split_methods (&v, n, &cap);
    }
  collapse_siblings (v, n);
  char **out = xcalloc (n + 1, sizeof *out);
  size_t k = 0;
  *from = xcalloc (n + 1, sizeof **from);
  for (size_t i = 0; i < n; i++)
    {
      if (v[i].origin == NULL)
        continue;
      for (size_t j = i + 1; j < n; j++)
        if (v[j].origin && same_path (&v[i], &v[j]))
          {
            merge_methods (&v[i], &v[j]);
            req_free (&v[j]);
            v[j].origin = NULL;
          }
      char *t = req_text (&v[i]);
      if (t)
        {
          (*from)[k] = v[i].from;
          out[k++] = t;
        }
      req_free (&v[i]);
    }
  free (v);
  return out;
}
