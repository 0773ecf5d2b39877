/* proxy_mitm: a CONNECT whose requests are to be seen (a request rule or a
 * secret names its host).  The proxy answers 200, terminates the client's
 * TLS with a leaf of the sandbox's CA for the CONNECT's host (tls.c: SNI
 * must be that host, ALPN offers http/1.1 only), reads each request —
 * origin form, its Host the CONNECT's — and checks it (method, path)
 * against the policy; a request let through gets the secrets its host may
 * have put in place of their placeholders and goes to the origin over the
 * proxy's own TLS, verified against the host's trust, never the sandbox's.
 * Responses are framed as they pass back, so each request gets one log line
 * with its status and bytes; the CONNECT gets one when it ends.
 *
 * Requests are framed as the plain path frames them (proxy_http.c:
 * Content-Length or chunked, nothing in between), so every request after
 * the first on a connection is read and checked too: no second request
 * rides inside a first one's body past the rules.  A 101 (an upgrade the
 * rules let through) turns the connection into a relay both ways.
 *
 * All buffers are bounded: a sandbox that sends faster than the origin
 * reads, or an origin faster than the sandbox, is held back, not stored. */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "lib/netclass.h"
#include "lib/util.h"
#include "runtime/proxy/proxy_mitm.h"

/* ---- the log -------------------------------------------------------------------- */

void
mitm_log_request (struct proxy *p, const struct conn *c, const struct pending *q, const char *verdict,
                  const char *rule, const char *reason, int status, uint64_t received)
{
  const char *put[MAX_NAMES + 1] = { NULL }, *left[MAX_NAMES + 1] = { NULL };
  for (size_t i = 0; q && i < q->n_put; i++)
    put[i] = q->put[i];
  for (size_t i = 0; q && i < q->n_left; i++)
    left[i] = q->left[i];
  struct oci_proxy_event ev = { .method = q && q->method[0] ? q->method : NULL,
                                .scheme = "https",
                                .host = c->m->sni.host,
                                .port = c->port,
                                .path = q && q->path[0] ? q->path : NULL,
                                .target = c->target,
                                .verdict = verdict,
                                .rule = rule,
                                .reason = reason,
                                .address = c->address,
                                .status = status,
                                .has_bytes = q != NULL,
                                .sent = q ? q->sent : 0,
                                .received = received,
                                .secrets = put,
                                .unreplaced = left };
  proxy_log (p, &ev);
}

/* The CONNECT's own line, when it ends. */
static void
log_connect (struct proxy *p, const struct conn *c)
{
  const struct mitm *m = c->m;
  bool ok = strcmp (m->verdict, "allow") == 0;
  struct oci_proxy_event ev = { .method = "CONNECT",
                                .host = m->sni.host,
                                .port = c->port,
                                .target = c->target,
                                .verdict = m->verdict,
                                .rule = c->rule,
                                .reason = m->reason,
                                .address = c->address,
                                .tunnel = "intercepted",
                                .status = ok ? 200 : 0,
                                .has_bytes = true,
                                .sent = m->sent,
                                .received = m->received };
  proxy_log (p, &ev);
}

/* ---- the end -------------------------------------------------------------------- */

void
mitm_up_closed (struct conn *c)
{
  struct mitm *m = c->m;
  if (m->us)
    tls_session_free (NULL, m->us);
  m->us = NULL;
  m->us_ready = false;
  m->up_flush = false;
  /* What was queued for that origin (a head with a secret in it, maybe)
   * goes nowhere else. */
  explicit_bzero (m->up.d, m->up.cap);
  m->up.off = m->up.len = 0;
}

void
mitm_free (struct proxy *p, struct conn *c)
{
  struct mitm *m = c->m;
  if (m == NULL)
    return;
  p->n_mitm--;
  if (m->us)
    tls_session_free (NULL, m->us);
  if (m->cs)
    tls_session_free (NULL, m->cs);
  tbuf_fini (&m->cin);
  tbuf_fini (&m->up);
  tbuf_fini (&m->down);
  mask_free (m->mask);
  free (m);
  c->m = NULL;
}

/* Close the connection, the CONNECT's line and the unanswered requests'
 * written first. */
static void
mitm_close (struct proxy *p, struct conn *c, const char *why)
{
  struct mitm *m = c->m;
  for (size_t i = 0; i < m->qn; i++)
    mitm_log_request (p, c, &m->q[(m->qh + i) % MAX_PENDING], "error", m->q[(m->qh + i) % MAX_PENDING].rule,
                      why ? why : "the connection ended before the answer", 0, 0);
  m->qn = 0;
  log_connect (p, c);
  conn_close (p, c);
}

/* Answer status inside the client's TLS, then end the connection: for a
 * refusal, or an origin that could not be reached.  With an answer already
 * on its way (pipelined requests), the connection just ends. */
void
mitm_answer_and_close (struct proxy *p, struct conn *c, int status, const char *reason)
{
  struct mitm *m = c->m;
  up_close (p, c);
  if (m->st < M_OPEN || m->down_ready > m->down.off || m->rst != R_HEAD || m->rbytes > 0)
    {
      mitm_close (p, c, reason);
      return;
    }
  size_t n;
  cleanup_free char *r = http_response (status, reason, &n);
  m->down_base += m->down.len;
  m->down.off = m->down.len = m->down_ready = 0;
  tbuf_add (&m->down, r, n);
  m->down_ready = m->down_safe = m->down.len;
  m->st = M_CLOSING;
}

void
mitm_refuse (struct proxy *p, struct conn *c, int status, const char *reason)
{
  struct mitm *m = c->m;
  if (m->qn == 0)
    {
      mitm_answer_and_close (p, c, status, reason);
      return;
    }
  m->deferred = status;
  snprintf (m->deferred_why, sizeof m->deferred_why, "%s", reason);
  m->st = M_DEFER;
}

void
mitm_fail (struct proxy *p, struct conn *c, int status, const char *reason)
{
  struct mitm *m = c->m;
  if (m->qn > 0)
    {
      struct pending *q = &m->q[m->qh];
      mitm_log_request (p, c, q, status == 403 ? "deny" : "error", q->rule, reason, status, 0);
      m->qh = (m->qh + 1) % MAX_PENDING;
      m->qn--;
    }
  mitm_answer_and_close (p, c, status, reason);
}

/* ---- the start ------------------------------------------------------------------ */

int
mitm_begin (struct proxy *p, struct conn *c)
{
  if (p->tls == NULL)
    return -1;
  if (p->n_mitm >= PROXY_MAX_MITM)
    {
      conn_fail (p, c, 503, "error", c->rule, "too many intercepted connections at once: try again");
      return 0;
    }
  p->n_mitm++;
  struct mitm *m = xcalloc (1, sizeof *m);
  c->m = m;
  m->verdict = "allow";
  char h[256];
  uint8_t a[16];
  snprintf (m->sni.host, sizeof m->sni.host, "%s",
            net_parse_literal (c->host, a) || !net_normalize_name (c->host, h, sizeof h) ? c->host : h);
  tbuf_init (&m->cin, IN_CAP);
  tbuf_init (&m->up, 16384);
  tbuf_init (&m->down, DOWN_CAP);
  m->mask = mask_new (p->pol, m->sni.host, c->port);
  m->mask_gen = p->pol_gen;
  /* TLS bytes sent before the answer to the CONNECT went into the plain
   * path's buffer, not GnuTLS's: no client does that; refused. */
  if (c->in_len > 0)
    {
      m->verdict = "deny";
      snprintf (m->reason, sizeof m->reason, "bytes sent before the CONNECT was answered");
      mitm_close (p, c, NULL);
      return 0;
    }
  size_t n;
  cleanup_free char *r = http_response (200, "", &n);
  dir_queue (&c->u2c, r, n);
  m->st = M_REPLY;
  /* A TLS handshake is small writes answered by small writes: Nagle's
   * algorithm would hold each for the peer's delayed ACK (40 ms). */
  int one = 1;
  setsockopt (c->cl.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return 0;
}

bool
mitm_wants_head (const struct conn *c)
{
  const struct mitm *m = c->m;
  if (m->st == M_REPLY || m->st == M_CLIENT_HS)
    return true;
  return m->st == M_OPEN && m->qn == 0 && m->body_left == 0 && !m->chunked && !m->upgraded
         && (tbuf_used (&m->cin) > 0 || m->requests == 0);
}

void
mitm_connected (struct proxy *p, struct conn *c)
{
  struct mitm *m = c->m;
  hk_err err = { 0 };
  int one = 1;
  setsockopt (c->up.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  if (tls_client_session (p->tls, c->up.fd, m->sni.host, &m->us, &err) < 0)
    {
      mitm_fail (p, c, 502, err.msg);
      return;
    }
  m->us_ready = false;
}

/* ---- responses ------------------------------------------------------------------ */

/* The oldest request's answer is complete. */
static void
answered (struct proxy *p, struct conn *c)
{
  struct mitm *m = c->m;
  struct pending *q = &m->q[m->qh];
  bool learn = strcmp (q->rule, "learn") == 0;
  mitm_log_request (p, c, q, learn ? "learn" : "allow", q->rule, NULL, m->rstatus, m->rbytes);
  m->qh = (m->qh + 1) % MAX_PENDING;
  m->qn--;
  m->rst = R_HEAD;
  m->rbytes = 0;
  mask_reset (m->mask);
}

/* k more bytes of down framed; content (a head, a body's bytes, not a
 * chunk's framing) is what a secret's value is looked for in. */
static void
take (struct mitm *m, size_t k, bool content)
{
  if (content)
    mask_feed (m->mask, m->down.d, m->down_base, m->down_base + m->down_ready, k);
  m->down_ready += k;
  m->rbytes += (uint64_t)k;
}

/* What may go to the client: all that is framed but the bytes that may
 * begin a secret's value (proxy_mask.h). */
static void
set_safe (struct mitm *m)
{
  uint64_t hold = mask_hold (m->mask);
  m->down_safe = hold == UINT64_MAX ? m->down_ready : (size_t)(hold - m->down_base);
}

/* Frame a response head at down's unframed bytes: -1 malformed, 0 not yet
 * whole, 1 taken. */
static int
frame_head (struct proxy *p, struct conn *c)
{
  struct mitm *m = c->m;
  const char *in = m->down.d + m->down_ready;
  size_t avail = m->down.len - m->down_ready;
  if (m->qn == 0)
    return -1; /* an answer nobody asked for */
  ssize_t h = http_head_end (in, avail, RESP_HEAD_MAX);
  if (h <= 0)
    return h < 0 ? -1 : 0;
  struct http_response resp;
  if (http_parse_response (in, (size_t)h, m->q[m->qh].head, &resp) < 0)
    return -1;
  take (m, (size_t)h, true);
  m->rstatus = resp.status;
  if (resp.status == 101)
    {
      m->upgraded = true; /* from here a relay both ways */
      answered (p, c);
      return 1;
    }
  if (resp.status < 200)
    return 1; /* interim (100 Continue): the answer is still to come */
  if (resp.chunked)
    {
      m->rst = R_CHUNKED;
      m->rchunks = (struct http_chunked){ 0 };
    }
  else if (resp.until_close)
    m->rst = R_CLOSE;
  else if (resp.body_len > 0)
    {
      m->rst = R_LEN;
      m->rleft = resp.body_len;
    }
  else
    answered (p, c);
  return 1;
}

/* Frame what came from the origin: what is framed (and masked) may go to
 * the client.  -1 when the origin's bytes cannot be read as answers. */
static int
frame_responses (struct proxy *p, struct conn *c)
{
  struct mitm *m = c->m;
  int r = 0;
  while (m->down_ready < m->down.len)
    {
      size_t avail = m->down.len - m->down_ready;
      if (m->upgraded || m->rst == R_CLOSE)
        {
          take (m, avail, true);
          continue;
        }
      if (m->rst == R_HEAD)
        {
          int h = frame_head (p, c);
          if (h < 0 || (h == 0 && avail >= RESP_HEAD_MAX))
            r = -1;
          if (h <= 0)
            break;
          continue;
        }
      if (m->rst == R_LEN)
        {
          size_t k = m->rleft < avail ? (size_t)m->rleft : avail;
          take (m, k, true);
          m->rleft -= k;
          if (m->rleft == 0)
            answered (p, c);
          continue;
        }
      /* A chunk's data apart from its framing: a value split across
       * chunks is still found. */
      bool done;
      const char *why;
      uint64_t data = http_chunked_data (&m->rchunks);
      ssize_t k = http_chunked_feed (&m->rchunks, m->down.d + m->down_ready,
                                     data ? (data < avail ? (size_t)data : avail) : 1, &done, &why);
      if (k < 0)
        {
          r = -1;
          break;
        }
      take (m, (size_t)k, data > 0);
      if (done)
        answered (p, c);
    }
  set_safe (m);
  return r;
}

/* ---- the relay ------------------------------------------------------------------ */

/* Room at down's end; its framed part moves with it. */
static size_t
down_room (struct mitm *m)
{
  struct tbuf *b = &m->down;
  if (b->off == b->len)
    {
      m->down_base += b->len;
      b->off = b->len = m->down_ready = m->down_safe = 0;
    }
  else if (b->off > 0 && b->len == b->cap)
    {
      memmove (b->d, b->d + b->off, b->len - b->off);
      m->down_base += b->off;
      m->down_ready -= b->off;
      m->down_safe -= b->off;
      b->len -= b->off;
      b->off = 0;
    }
  return b->cap - b->len;
}

/* One record from s into b (room bytes at most): > 0 read, 0 nothing now,
 * -1 the peer ended (close_notify, or a close without one), -2 fatal
 * (*code). */
static ssize_t
tls_read (gnutls_session_t s, struct tbuf *b, size_t room, int *code)
{
  /* AGAIN with bytes still read ahead: a record that carried no data (a
   * TLS 1.3 session ticket, a key update) was taken; the next may. */
  for (int tries = 0; tries < 16; tries++)
    {
      ssize_t n = tls.gnutls_record_recv (s, b->d + b->len, room);
      if (n > 0)
        {
          b->len += (size_t)n;
          return n;
        }
      if (n == 0 || n == GNUTLS_E_PREMATURE_TERMINATION)
        return -1;
      if (n != GNUTLS_E_AGAIN && n != GNUTLS_E_INTERRUPTED && tls.gnutls_error_is_fatal ((int)n))
        {
          *code = (int)n;
          return -2;
        }
      if (!tls_buffered (s))
        return 0;
    }
  return 0;
}

static const char *
tls_why (int code)
{
  return tls.gnutls_strerror (code);
}

/* The origin's handshake: 1 done or moving, 0 waiting, -1 failed (answered). */
static int
origin_handshake (struct proxy *p, struct conn *c)
{
  struct mitm *m = c->m;
  int r = tls.gnutls_handshake (m->us);
  if (r == 0)
    {
      m->us_ready = true;
      return 1;
    }
  if (r == GNUTLS_E_AGAIN || r == GNUTLS_E_INTERRUPTED)
    return 0;
  if (!tls.gnutls_error_is_fatal (r))
    return 1;
  char why[600];
  tls_failure (m->us, r, why, sizeof why);
  char reason[1024];
  snprintf (reason, sizeof reason, "TLS with the origin %s failed: %s", c->target, why);
  mitm_fail (p, c, 502, reason);
  return -1;
}

/* The client's side: its bytes into cin, framed answers out of down.
 * true when something moved; -1 (c closed) on a fatal error. */
static int
client_io (struct proxy *p, struct conn *c)
{
  struct mitm *m = c->m;
  int code = 0;
  bool moved = false;
  if (m->st == M_OPEN && !m->client_eof && tbuf_used (&m->up) < UP_MAX && tbuf_room (&m->cin) > 0)
    {
      ssize_t n = tls_read (m->cs, &m->cin, m->cin.cap - m->cin.len, &code);
      if (n == -2)
        {
          char reason[400];
          snprintf (reason, sizeof reason, "the client's TLS failed: %s", tls_why (code));
          mitm_close (p, c, reason);
          return -1;
        }
      m->client_eof |= n == -1;
      m->sent += n > 0 ? (uint64_t)n : 0;
      moved |= n != 0;
    }
  if (m->down_flush || m->down_safe > m->down.off)
    {
      ssize_t n
          = tls_send (m->cs, m->down.d + m->down.off, m->down_safe - m->down.off, &m->down_flush, &code);
      if (n < 0)
        {
          mitm_close (p, c, "the client went away");
          return -1;
        }
      m->down.off += (size_t)n;
      moved |= n > 0;
    }
  return moved;
}

/* The origin's side: queued requests out, its bytes into down. */
static int
origin_io (struct proxy *p, struct conn *c)
{
  struct mitm *m = c->m;
  int code = 0;
  bool moved = false;
  if (m->us && !m->us_ready)
    {
      int r = origin_handshake (p, c);
      if (r <= 0)
        return r;
      moved = true;
    }
  if (!m->us_ready)
    return moved;
  if (m->up_flush || tbuf_used (&m->up) > 0)
    {
      ssize_t n = tls_send (m->us, m->up.d + m->up.off, tbuf_used (&m->up), &m->up_flush, &code);
      if (n < 0)
        {
          mitm_fail (p, c, 502, "the origin went away");
          return -1;
        }
      m->up.off += (size_t)n;
      if (m->up.off == m->up.len)
        m->up.off = m->up.len = 0;
      moved |= n > 0;
    }
  size_t room = m->origin_eof ? 0 : down_room (m);
  if (room > 0)
    {
      ssize_t n = tls_read (m->us, &m->down, room, &code);
      if (n == -2)
        {
          char reason[400];
          snprintf (reason, sizeof reason, "TLS with the origin failed: %s", tls_why (code));
          mitm_fail (p, c, 502, reason);
          return -1;
        }
      m->origin_eof |= n == -1;
      m->received += n > 0 ? (uint64_t)n : 0;
      moved |= n != 0;
      /* Nothing more will come (the origin's end), or a relay both ways
       * (an upgrade: its messages have no end the proxy knows) has nothing
       * more now: what was held for a value's beginning goes. */
      if (m->origin_eof || (m->upgraded && n == 0))
        mask_reset (m->mask);
    }
  if (frame_responses (p, c) < 0)
    {
      mitm_close (p, c, "the origin's answer could not be read as HTTP/1.1");
      return -1;
    }
  return moved;
}

/* Everything both sides can do now: 1 when it stopped with more to do, 0
 * when nothing moves until an event, -1 when c is gone. */
static int
pump (struct proxy *p, struct conn *c)
{
  for (int round = 0; round < ROUNDS; round++)
    {
      /* A side that failed has answered (or closed): -1 with c still
       * open is an answer of ours to flush, which is progress. */
      int a = client_io (p, c);
      if (c->dead)
        return -1;
      bool b = mitm_process_requests (p, c);
      if (c->dead)
        return -1;
      int o = c->m->st == M_CLOSING ? 0 : origin_io (p, c);
      if (c->dead)
        return -1;
      if (!a && !b && !o)
        return 0;
    }
  return 1;
}

/* The ends of a connection: 1 when c was closed. */
static int
finish (struct proxy *p, struct conn *c)
{
  struct mitm *m = c->m;
  bool flushed = !m->down_flush && m->down.off == m->down_safe && m->down_safe == m->down.len;
  if (m->origin_eof && m->rst == R_CLOSE)
    answered (p, c);
  if (m->st == M_DEFER && m->qn == 0 && flushed)
    {
      mitm_answer_and_close (p, c, m->deferred, m->deferred_why);
      return 0;
    }
  if (m->st == M_CLOSING || (m->origin_eof && (m->qn > 0 || m->upgraded)))
    {
      if (!flushed)
        return 0;
      tls.gnutls_bye (m->cs, GNUTLS_SHUT_WR); /* best effort: the socket is non-blocking */
      mitm_close (p, c, m->origin_eof ? "the origin closed before answering" : NULL);
      return 1;
    }
  if (m->origin_eof && flushed)
    {
      /* An idle origin closed: the next request opens a new one. */
      up_close (p, c);
      m->origin_eof = false;
    }
  if (m->client_eof && m->qn == 0 && flushed && tbuf_used (&m->cin) == 0)
    {
      mitm_close (p, c, NULL);
      return 1;
    }
  return 0;
}

static void
mitm_update (struct proxy *p, struct conn *c)
{
  struct mitm *m = c->m;
  uint32_t cl = 0, up = 0;
  if (m->st == M_REPLY)
    cl = EPOLLOUT;
  else if (m->st == M_CLIENT_HS)
    cl = tls.gnutls_record_get_direction (m->cs) ? EPOLLOUT : EPOLLIN;
  else
    {
      if (m->down_flush || m->down_safe > m->down.off)
        cl |= EPOLLOUT;
      if (m->st == M_OPEN && !m->client_eof && tbuf_used (&m->up) < UP_MAX
          && m->cin.len - m->cin.off < m->cin.cap)
        cl |= EPOLLIN;
    }
  if (c->st == C_CONNECTING)
    up = EPOLLOUT;
  else if (m->us && !m->us_ready)
    up = tls.gnutls_record_get_direction (m->us) ? EPOLLOUT : EPOLLIN;
  else if (m->us_ready)
    {
      if (m->up_flush || tbuf_used (&m->up) > 0)
        up |= EPOLLOUT;
      if (!m->origin_eof && (m->down.len < m->down.cap || m->down.off > 0))
        up |= EPOLLIN;
    }
  ep_set (p, &c->cl, cl);
  ep_set (p, &c->up, up);
}

/* The client's handshake: 1 done, 0 waiting, -1 refused (c closed). */
static int
client_handshake (struct proxy *p, struct conn *c)
{
  struct mitm *m = c->m;
  int r = tls.gnutls_handshake (m->cs);
  if (r == 0)
    {
      m->st = M_OPEN;
      c->head_since = now_ms (); /* the first request's head: its own time from here */
      return 1;
    }
  if (r == GNUTLS_E_AGAIN || r == GNUTLS_E_INTERRUPTED || !tls.gnutls_error_is_fatal (r))
    return 0;
  m->verdict = "deny";
  if (m->sni.why[0])
    snprintf (m->reason, sizeof m->reason, "%s", m->sni.why);
  else
    snprintf (m->reason, sizeof m->reason, "the client's TLS handshake failed: %s", tls_why (r));
  mitm_close (p, c, NULL);
  return -1;
}

void
mitm_step (struct proxy *p, struct conn *c)
{
  struct mitm *m = c->m;
  if (m->st == M_REPLY)
    {
      int r = dir_flush (&c->u2c, c->cl.fd);
      if (r < 0)
        {
          mitm_close (p, c, NULL);
          return;
        }
      if (r == 0)
        {
          mitm_update (p, c);
          return;
        }
      hk_err err = { 0 };
      if (tls_server_session (p->tls, c->cl.fd, &m->sni, &m->cs, &err) < 0)
        {
          m->verdict = "error";
          snprintf (m->reason, sizeof m->reason, "%.600s", err.msg);
          mitm_close (p, c, NULL);
          return;
        }
      m->st = M_CLIENT_HS;
    }
  if (m->st == M_CLIENT_HS)
    {
      int r = client_handshake (p, c);
      if (r <= 0)
        {
          if (r == 0)
            mitm_update (p, c);
          return;
        }
    }
  int more = pump (p, c);
  if (more < 0 || c->dead || finish (p, c))
    return;
  /* Bytes read ahead that no event will announce: another step soon. */
  bool client_room = tbuf_used (&m->up) < UP_MAX && m->cin.len - m->cin.off < m->cin.cap;
  bool origin_room = m->down.len < m->down.cap || m->down.off > 0;
  bool held = (m->cs && m->st == M_OPEN && !m->client_eof && client_room && tls_buffered (m->cs))
              || (m->us && m->us_ready && !m->origin_eof && origin_room && tls_buffered (m->us));
  if (more || held)
    proxy_again (p, c);
  mitm_update (p, c);
}

void
mitm_expire (struct proxy *p, struct conn *c)
{
  struct mitm *m = c->m;
  if (m->st < M_OPEN)
    {
      m->verdict = "deny";
      snprintf (m->reason, sizeof m->reason, "no TLS handshake within %llu ms",
                (unsigned long long)p->cfg->head_timeout_ms);
    }
  mitm_close (p, c, "no request head within the time allowed");
}
