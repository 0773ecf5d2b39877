/* proxy_mask: the values of a host's secrets masked in what its origin
 * answers (proxy_mask.h says why). */
#include "runtime/proxy/proxy_mask.h"

#include <stdlib.h>
#include <string.h>

#include "lib/util.h"

struct one
{
  char *v;
  size_t len;
  size_t *fail; /* KMP: fail[i], the longest proper border of v[0..i] */
  size_t st;    /* bytes of v matched by the content fed last */
};

struct proxy_mask
{
  struct one *s;
  size_t n;
  uint64_t *ring; /* the stream offsets of the last cap content bytes */
  size_t cap;
  uint64_t count; /* content bytes fed since the last reset */
};

static void
one_init (struct one *o, const char *v, size_t len)
{
  o->v = xmalloc (len);
  memcpy (o->v, v, len);
  o->len = len;
  o->fail = xcalloc (len, sizeof *o->fail);
  for (size_t i = 1, k = 0; i < len; i++)
    {
      while (k > 0 && v[i] != v[k])
        k = o->fail[k - 1];
      if (v[i] == v[k])
        k++;
      o->fail[i] = k;
    }
}

struct proxy_mask *
mask_new (const struct egress_policy *p, const char *host, uint16_t port)
{
  struct proxy_mask *k = NULL;
  for (size_t i = 0; i < p->n_secrets; i++)
    {
      const struct egress_secret *s = &p->secrets[i];
      if (s->value == NULL || s->value_len < MASK_MIN || !policy_secret_for (s, host, port))
        continue;
      if (k == NULL)
        {
          k = xcalloc (1, sizeof *k);
          k->s = xcalloc (p->n_secrets, sizeof *k->s);
        }
      one_init (&k->s[k->n++], s->value, s->value_len);
      if (s->value_len > k->cap)
        k->cap = s->value_len;
    }
  if (k)
    k->ring = xcalloc (k->cap, sizeof *k->ring);
  return k;
}

void
mask_free (struct proxy_mask *k)
{
  if (k == NULL)
    return;
  for (size_t i = 0; i < k->n; i++)
    {
      explicit_bzero (k->s[i].v, k->s[i].len);
      free (k->s[i].v);
      free (k->s[i].fail);
    }
  free (k->s);
  free (k->ring);
  free (k);
}

/* The stream offset of the content byte back bytes before the last. */
static uint64_t
ring_at (const struct proxy_mask *k, size_t back)
{
  return k->ring[(k->count - back) % k->cap];
}

void
mask_feed (struct proxy_mask *k, char *buf, uint64_t base, uint64_t at, size_t n)
{
  if (k == NULL)
    return;
  for (size_t i = 0; i < n; i++)
    {
      char c = buf[at - base + i];
      k->ring[k->count % k->cap] = at + i;
      k->count++;
      for (size_t j = 0; j < k->n; j++)
        {
          struct one *o = &k->s[j];
          while (o->st > 0 && o->v[o->st] != c)
            o->st = o->fail[o->st - 1];
          if (o->v[o->st] == c)
            o->st++;
          if (o->st < o->len)
            continue;
          /* The value whole: its bytes, wherever the framing put them. */
          for (size_t b = o->len; b > 0; b--)
            buf[ring_at (k, b) - base] = '*';
          o->st = 0;
        }
    }
}

uint64_t
mask_hold (const struct proxy_mask *k)
{
  size_t most = 0;
  for (size_t j = 0; k && j < k->n; j++)
    if (k->s[j].st > most)
      most = k->s[j].st;
  return most ? ring_at (k, most) : UINT64_MAX;
}

void
mask_reset (struct proxy_mask *k)
{
  for (size_t j = 0; k && j < k->n; j++)
    k->s[j].st = 0;
}
