/* proxy_mitm_req: an intercepted connection's requests — each head read
 * (origin form, its Host the CONNECT's), checked against the policy (method,
 * path), given the secrets its host may have in place of their
 * placeholders, and queued for the origin; bodies passed on as framed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lib/netclass.h"
#include "lib/util.h"
#include "oci/netrule.h"
#include "runtime/proxy/proxy_mitm.h"

/* ---- buffers -------------------------------------------------------------------- */

void
tbuf_init (struct tbuf *b, size_t cap)
{
  *b = (struct tbuf){ .d = xmalloc (cap), .cap = cap };
}

/* What is in b may be a secret's value: wiped, not just dropped. */
void
tbuf_fini (struct tbuf *b)
{
  if (b->d)
    explicit_bzero (b->d, b->cap);
  free (b->d);
  *b = (struct tbuf){ 0 };
}

size_t
tbuf_used (const struct tbuf *b)
{
  return b->len - b->off;
}

/* Room at the end, moving what is there to the front when that helps. */
size_t
tbuf_room (struct tbuf *b)
{
  if (b->off == b->len)
    b->off = b->len = 0;
  else if (b->off > 0 && b->len == b->cap)
    {
      memmove (b->d, b->d + b->off, b->len - b->off);
      b->len -= b->off;
      b->off = 0;
    }
  return b->cap - b->len;
}

void
tbuf_add (struct tbuf *b, const void *data, size_t n)
{
  if (b->off > 0 && b->len + n > b->cap)
    {
      memmove (b->d, b->d + b->off, b->len - b->off);
      b->len -= b->off;
      b->off = 0;
    }
  if (b->len + n > b->cap)
    {
      b->cap = b->len + n;
      b->d = xrealloc (b->d, b->cap);
    }
  memcpy (b->d + b->len, data, n);
  b->len += n;
}

/* ---- requests ------------------------------------------------------------------- */

static void
add_name (char names[][64], size_t *n, const char *name)
{
  for (size_t i = 0; i < *n; i++)
    if (strcmp (names[i], name) == 0)
      return;
  if (*n < MAX_NAMES)
    snprintf (names[(*n)++], 64, "%s", name);
}

/* Whether the header line at h (of n bytes to the head's end) is name's. */
static bool
header_named (const char *h, size_t n, const char *name)
{
  size_t k = strlen (name);
  return n > k && strncasecmp (h, name, k) == 0 && h[k] == ':';
}

/* The head with each placeholder whose secret is for this host put in its
 * place: in header values, and in the query where the secret says so;
 * never in header names or the path.  A placeholder left as it was (not
 * its host, or not a place it may go) is named in q->left.  To a host
 * whose secrets' values are masked in its answers (proxy_mask.h), the
 * request asks for them in no content or transfer coding: a gzip'ed echo
 * would carry a value past the mask. */
static char *
put_secrets (const struct proxy *p, const struct conn *c, const struct http_request *req, struct pending *q,
             size_t *out_len)
{
  const char *h = req->head;
  size_t len = req->head_len;
  const char *line1 = memchr (h, '\n', len);
  size_t query = req->path_off + strcspn (h + req->path_off, "?");
  size_t path_end = req->path_off + req->path_len;
  bool identity = c->m->mask != NULL;
  struct tbuf out;
  tbuf_init (&out, len + 256);
  bool in_value = false;
  for (size_t i = 0; i < len;)
    {
      if (identity && line1 && h + i == line1 + 1)
        {
          tbuf_add (&out, "Accept-Encoding: identity\r\n", 27);
          identity = false;
        }
      if (line1 && h + i > line1 && h[i - 1] == '\n' && c->m->mask
          && (header_named (h + i, len - i, "Accept-Encoding") || header_named (h + i, len - i, "TE")))
        {
          const char *eol = memchr (h + i, '\n', len - i);
          i = eol ? (size_t)(eol - h) + 1 : len;
          continue;
        }
      if (h[i] == '\n')
        in_value = false;
      else if (h[i] == ':' && line1 && h + i > line1)
        in_value = true;
      const struct egress_secret *s = p->pol->n_secrets ? policy_secret_at (p->pol, h + i, len - i) : NULL;
      if (s == NULL)
        {
          tbuf_add (&out, h + i++, 1);
          continue;
        }
      bool in_query = i >= query && i < path_end;
      bool place = (h + i > line1 && in_value) || (in_query && s->query);
      if (place && s->value && policy_secret_for (s, c->m->sni.host, c->port))
        {
          tbuf_add (&out, s->value, s->value_len);
          add_name (q->put, &q->n_put, s->name);
        }
      else
        {
          tbuf_add (&out, s->placeholder, strlen (s->placeholder));
          add_name (q->left, &q->n_left, s->name);
        }
      i += strlen (s->placeholder);
    }
  *out_len = out.len;
  return out.d;
}

/* The request's Host must be the CONNECT's (and so its SNI's): the rules
 * were checked against that name, and the origin must not be asked for
 * another. */
static bool
host_matches (const struct conn *c, const struct http_request *req)
{
  char h[256];
  uint8_t a[16], b[16];
  if (req->port != c->port)
    return false;
  if (net_parse_literal (req->host, a))
    return net_parse_literal (c->m->sni.host, b) && memcmp (a, b, 16) == 0;
  return net_normalize_name (req->host, h, sizeof h) && strcasecmp (h, c->m->sni.host) == 0;
}

/* One request head at the start of cin, complete (h bytes): checked,
 * secrets put in, queued for the origin.  false: refused (answered). */
static bool
take_request (struct proxy *p, struct conn *c, size_t h)
{
  struct mitm *m = c->m;
  struct http_request req;
  int status = 400;
  char reason[1024];
  struct pending *q = &m->q[(m->qh + m->qn) % MAX_PENDING];
  *q = (struct pending){ 0 };
  int r = http_parse_origin_request (m->cin.d + m->cin.off, h, c->port, &req, &status, reason, sizeof reason);
  if (r == 0)
    {
      snprintf (q->method, sizeof q->method, "%s", req.method);
      size_t n = strcspn (req.head + req.path_off, "?# ");
      snprintf (q->path, sizeof q->path, "%.*s", (int)(n < req.path_len ? n : req.path_len),
                req.head + req.path_off);
    }
  if (r == 0 && !host_matches (c, &req))
    {
      status = 421;
      r = -1;
      snprintf (reason, sizeof reason, "the request's Host (%s:%u) is not the CONNECT's, %s", req.host,
                (unsigned)req.port, c->target);
    }
  struct pol_decision d = { .v = POL_DENY, .rule = "default" };
  char **segs = NULL;
  size_t nsegs;
  const char *why = NULL;
  if (r == 0 && oci_net_path_split (req.head + req.path_off, req.path_len, &segs, &nsegs, &why) < 0)
    {
      r = -1;
      snprintf (reason, sizeof reason, "%s", why);
    }
  if (r == 0)
    {
      policy_request (p->pol, m->sni.host, c->port, true, req.method, segs, nsegs, &d);
      strv_free (segs);
      if (d.v == POL_DENY)
        {
          r = -1;
          status = 403;
          snprintf (reason, sizeof reason, "%s", d.reason);
        }
    }
  if (r < 0)
    {
      mitm_log_request (p, c, q, "deny", d.rule, reason, status, 0);
      http_request_free (&req);
      mitm_refuse (p, c, status, reason);
      return false;
    }
  snprintf (q->rule, sizeof q->rule, "%s", d.rule);
  q->head = strcmp (req.method, "HEAD") == 0;
  /* A live update may have given the host a secret since the connection
   * began: its value is masked from this request's answer on. */
  if (m->mask_gen != p->pol_gen)
    {
      mask_free (m->mask);
      m->mask = mask_new (p->pol, m->sni.host, c->port);
      m->mask_gen = p->pol_gen;
    }
  size_t out_len;
  char *out = put_secrets (p, c, &req, q, &out_len);
  tbuf_add (&m->up, out, out_len);
  explicit_bzero (out, out_len);
  free (out);
  q->sent = out_len;
  m->qn++;
  m->requests++;
  m->body_left = req.body_len;
  m->chunked = req.chunked;
  m->chunks = (struct http_chunked){ 0 };
  m->cin.off += h;
  c->head_since = now_ms ();
  http_request_free (&req);
  if (c->up.fd < 0 && c->st == C_HEAD)
    upstream_begin (p, c); /* the first request (or the first after the origin closed) */
  return true;
}

/* Move what cin holds toward the origin: bodies as framed, heads checked.
 * true when something moved. */
bool
mitm_process_requests (struct proxy *p, struct conn *c)
{
  struct mitm *m = c->m;
  bool moved = false;
  while (m->st == M_OPEN && tbuf_used (&m->cin) > 0 && tbuf_used (&m->up) < UP_MAX)
    {
      const char *in = m->cin.d + m->cin.off;
      size_t avail = tbuf_used (&m->cin);
      struct pending *last = m->qn ? &m->q[(m->qh + m->qn - 1) % MAX_PENDING] : NULL;
      if (m->upgraded || m->body_left > 0)
        {
          size_t k = m->upgraded || m->body_left > avail ? avail : (size_t)m->body_left;
          tbuf_add (&m->up, in, k);
          m->cin.off += k;
          if (!m->upgraded)
            m->body_left -= k;
          if (last)
            last->sent += k;
          moved = true;
          continue;
        }
      if (m->chunked)
        {
          bool done;
          const char *why = NULL;
          ssize_t k = http_chunked_feed (&m->chunks, in, avail, &done, &why);
          if (k < 0)
            {
              mitm_fail (p, c, 400, why);
              return true;
            }
          tbuf_add (&m->up, in, (size_t)k);
          m->cin.off += (size_t)k;
          if (last)
            last->sent += (uint64_t)k;
          m->chunked = !done;
          moved = true;
          continue;
        }
      if (m->qn == MAX_PENDING)
        break;
      ssize_t h = http_head_end (in, avail, HTTP_MAX_HEAD);
      if (h == 0)
        break;
      if (h < 0)
        {
          struct pending *q = &m->q[(m->qh + m->qn) % MAX_PENDING];
          *q = (struct pending){ 0 };
          mitm_log_request (p, c, q, "deny", "default", "request head larger than 16 KiB", 431, 0);
          mitm_refuse (p, c, 431, "request head larger than 16 KiB");
          return true;
        }
      if (!take_request (p, c, (size_t)h))
        return true;
      moved = true;
    }
  return moved;
}
