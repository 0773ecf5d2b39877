/* proxy: the allowlist sandbox's way out — an HTTP proxy (CONNECT and
 * absolute-URI requests) on one epoll loop, checking every target against
 * the allow-list and relaying bytes with splice.
 *
 * Each connection has two directions, client->upstream and
 * upstream->client.  A direction first writes out its buffer (our own
 * responses, rewritten request heads, the body bytes that came with a
 * head), then relays with splice through a pipe of its own (zero-copy), or
 * with read/write when the kernel refuses splice: responses, tunnels, and a
 * request body of known length up to its last byte (the next head is read
 * and checked as every head is).  Epoll is level-triggered and each direction reads
 * only once the previous bytes are written, so a slow reader holds back its
 * writer instead of growing memory.
 *
 * Host names are resolved by two worker threads (proxy_resolve.c), the
 * only threads; everything else is the loop's.
 *
 * Limits of this first version: a keep-alive connection may
 * send requests to several hosts one after another, but switching host
 * closes the previous upstream connection (pipelined requests to different
 * hosts may see the earlier response cut short); a response that ends with
 * the origin closing ends the client's connection too. */
#include "runtime/proxy/proxy.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "lib/util.h"
#include "oci/report/proxy_log.h"
#include "runtime/proxy/proxy_dir.h"
#include "runtime/proxy/proxy_http.h"
#include "runtime/proxy/proxy_resolve.h"

#define MAX_ADDRS 8
#define LINGER_MAX (1 << 20) /* bytes read and dropped after an error response */

struct conn;

struct endpoint
{
  struct conn *c;
  int fd;
  uint32_t events; /* registered with epoll */
  bool hup;        /* closed by the peer: no longer polled, read to the end */
};

enum conn_state
{
  C_HEAD,       /* reading a request head; no upstream or an idle one */
  C_RESOLVING,  /* waiting for the resolver */
  C_CONNECTING, /* waiting for the upstream connect */
  C_OPEN        /* upstream connected */
};

struct conn
{
  struct conn *next, *prev;
  struct endpoint cl, up;
  enum conn_state st;
  bool tunnel;    /* client bytes go upstream unparsed (CONNECT, or a chunked body) */
  bool connect;   /* the pending upstream is a CONNECT's */
  bool closing;   /* an error response is queued: close once it is written */
  bool lingering; /* ... it is written: reading what the client still sends */
  size_t discarded;
  bool dead;
  char in[HTTP_MAX_HEAD]; /* client bytes not parsed yet */
  size_t in_len;
  uint64_t body_left;
  char target[300]; /* host:port of the upstream */
  char method[24];
  uint16_t port;
  struct resolve_job *job; /* while resolving */
  struct sockaddr_storage addrs[MAX_ADDRS];
  socklen_t addr_len[MAX_ADDRS];
  int n_addrs, next_addr;
  struct dir c2u, u2c;
  uint64_t last;       /* last traffic */
  uint64_t head_since; /* accepted, or the previous head complete */
};

struct proxy
{
  const struct proxy_cfg *cfg;
  int ep;
  struct conn *conns;
  struct conn *graveyard; /* closed during this batch of events, freed after it */
  size_t n_conns;
  bool accept_paused; /* out of fds: the listener waits for a connection to close */
  size_t logged;      /* bytes written to the log */
};

/* ---- log ------------------------------------------------------------------- */

/* Client-supplied text goes into the log as printable ASCII only. */
static void
sanitize (const char *in, char *out, size_t size)
{
  size_t i = 0;
  for (; in && in[i] && i + 1 < size; i++)
    out[i] = (in[i] >= 0x20 && in[i] < 0x7f) ? in[i] : '?';
  out[i] = '\0';
}

static void
log_event (struct proxy *p, const char *method, const char *target, const char *verdict, const char *reason,
           const char *address)
{
  if (p->cfg->log_fd < 0)
    return;
  struct timespec ts;
  struct tm tm;
  char when[64], m[32], t[320], r[400];
  clock_gettime (CLOCK_REALTIME, &ts);
  gmtime_r (&ts.tv_sec, &tm);
  size_t n = strftime (when, sizeof when, "%Y-%m-%dT%H:%M:%S", &tm);
  snprintf (when + n, sizeof when - n, ".%03ldZ", ts.tv_nsec / 1000000);
  sanitize (method, m, sizeof m);
  sanitize (target, t, sizeof t);
  sanitize (reason, r, sizeof r);
  struct oci_proxy_event ev = { .time = when,
                                .method = method ? m : NULL,
                                .target = target ? t : NULL,
                                .verdict = verdict,
                                .reason = reason ? r : NULL,
                                .address = address };
  cleanup_free char *line = oci_proxy_log_line (&ev);
  if (line == NULL || p->logged >= PROXY_LOG_MAX)
    return;
  size_t len = strlen (line);
  if (p->logged + len >= PROXY_LOG_MAX)
    {
      free (line);
      struct oci_proxy_event full
          = { .time = when,
              .verdict = "log-full",
              .reason = "the log reached its size limit; later decisions are not logged" };
      line = oci_proxy_log_line (&full);
      len = line ? strlen (line) : 0;
      p->logged = PROXY_LOG_MAX;
    }
  else
    p->logged += len;
  if (line)
    fd_write_all (p->cfg->log_fd, line, len);
}

/* ---- connections ----------------------------------------------------------- */

static void
ep_set (struct proxy *p, struct endpoint *e, uint32_t events)
{
  if (e->fd < 0 || e->hup || e->events == events)
    return;
  struct epoll_event ev = { .events = events, .data.ptr = e };
  if (epoll_ctl (p->ep, EPOLL_CTL_MOD, e->fd, &ev) == 0)
    e->events = events;
}

static void
ep_add (struct proxy *p, struct endpoint *e, uint32_t events)
{
  struct epoll_event ev = { .events = events, .data.ptr = e };
  epoll_ctl (p->ep, EPOLL_CTL_ADD, e->fd, &ev);
  e->events = events;
}

/* Forget the upstream: its connection, a name being resolved for it, and
 * both directions' bytes. */
static void
up_close (struct proxy *p, struct conn *c)
{
  if (c->job)
    {
      c->job->owner = NULL; /* the resolver's job outlives us; drain_resolver frees it */
      c->job = NULL;
    }
  if (c->up.fd >= 0)
    close (c->up.fd); /* which takes it out of the epoll set: the proxy holds no other copy of it */
  c->up = (struct endpoint){ .c = c, .fd = -1 };
  dir_fini (&c->c2u);
  dir_fini (&c->u2c);
  c->st = C_HEAD;
}

static void
conn_close (struct proxy *p, struct conn *c)
{
  if (c->dead)
    return;
  c->dead = true;
  up_close (p, c);
  close (c->cl.fd); /* out of the epoll set with it, as in up_close */
  c->cl.fd = -1;
  if (c->prev)
    c->prev->next = c->next;
  else
    p->conns = c->next;
  if (c->next)
    c->next->prev = c->prev;
  c->next = p->graveyard;
  p->graveyard = c;
  p->n_conns--;
}

/* Answer with an error and close once it is written; the upstream (if any)
 * and whatever the client sends next are dropped. */
static void
reply_error (struct proxy *p, struct conn *c, int status, const char *reason)
{
  size_t n;
  cleanup_free char *r = http_response (status, reason, &n);
  up_close (p, c);
  dir_queue (&c->u2c, r, n);
  c->closing = true;
  c->in_len = 0;
}

static void
consume_in (struct conn *c, size_t n)
{
  memmove (c->in, c->in + n, c->in_len - n);
  c->in_len -= n;
}

static void
format_addr (const struct sockaddr_storage *ss, char *out, size_t size)
{
  const void *a = ss->ss_family == AF_INET ? (const void *)&((const struct sockaddr_in *)ss)->sin_addr
                                           : (const void *)&((const struct sockaddr_in6 *)ss)->sin6_addr;
  if (inet_ntop (ss->ss_family, a, out, (socklen_t)size) == NULL)
    snprintf (out, size, "?");
}

/* Start connecting to the next candidate address; false when none is left. */
static bool
connect_next (struct proxy *p, struct conn *c, int *last_errno)
{
  while (c->next_addr < c->n_addrs)
    {
      int i = c->next_addr++;
      int fd = socket (c->addrs[i].ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
      if (fd < 0)
        {
          *last_errno = errno;
          continue;
        }
      if (connect (fd, (struct sockaddr *)&c->addrs[i], c->addr_len[i]) < 0 && errno != EINPROGRESS)
        {
          *last_errno = errno;
          close (fd);
          continue;
        }
      c->up = (struct endpoint){ .c = c, .fd = fd };
      ep_add (p, &c->up, EPOLLOUT);
      c->st = C_CONNECTING;
      return true;
    }
  return false;
}

static void conn_step (struct proxy *p, struct conn *c);

/* epoll tags for the fds that are not a connection's. */
static int listen_marker, watch_marker, resolver_marker;

/* ---- the allow-list decision --------------------------------------------------- */

static void
refuse (struct proxy *p, struct conn *c, int status, const char *verdict, const char *reason,
        const char *address)
{
  log_event (p, c->method, c->target, verdict, reason, address);
  reply_error (p, c, status, reason);
}

/* Connect to the addresses that passed the allow-list. */
static void
begin_connect (struct proxy *p, struct conn *c)
{
  int e = 0;
  char addr[INET6_ADDRSTRLEN];
  format_addr (&c->addrs[0], addr, sizeof addr);
  log_event (p, c->method, c->target, p->cfg->learn_fd >= 0 ? "learn" : "allow",
             p->cfg->learn_fd >= 0 ? "learning mode: forwarded and recorded, not checked" : NULL, addr);
  if (p->cfg->learn_fd >= 0)
    {
      /* The target as the allow-list would name it (host:port, [v6]:port);
       * the learner turns these lines into network.allow.  Client text is
       * kept printable so a line cannot smuggle a second one in. */
      char t[sizeof c->target + 2];
      sanitize (c->target, t, sizeof t - 1);
      size_t n = strlen (t);
      t[n++] = '\n';
      fd_write_all (p->cfg->learn_fd, t, n);
    }
  if (!connect_next (p, c, &e))
    {
      char reason[512];
      snprintf (reason, sizeof reason, "cannot connect to %s: %s", c->target, strerror (e));
      refuse (p, c, 502, "error", reason, NULL);
    }
}

/* A name came back from the resolver: keep the addresses the allow-list
 * lets through (a listed name's public addresses; loopback, private and
 * link-local ones only when listed themselves). */
static void
resolved (struct proxy *p, struct conn *c, struct resolve_job *j)
{
  char reason[512], first_bad[INET6_ADDRSTRLEN] = "";
  uint8_t a[16];
  c->job = NULL;
  c->st = C_HEAD;
  if (j->gai != 0)
    {
      snprintf (reason, sizeof reason, "cannot resolve %s: %s", j->host, gai_strerror (j->gai));
      refuse (p, c, 502, "error", reason, NULL);
      return;
    }
  c->n_addrs = c->next_addr = 0;
  for (struct addrinfo *r = j->res; r && c->n_addrs < MAX_ADDRS; r = r->ai_next)
    {
      if (r->ai_family != AF_INET && r->ai_family != AF_INET6)
        continue;
      al_addr_from_sockaddr (r->ai_addr, a);
      /* Learning forwards any name, but to the host's own and neighbouring
       * addresses only where the CLI user listed them, as without it: a
       * learned run is no way around the loopback rule. */
      if (al_addr_allowed (p->cfg->al, a, c->port, true))
        {
          memcpy (&c->addrs[c->n_addrs], r->ai_addr, r->ai_addrlen);
          c->addr_len[c->n_addrs++] = r->ai_addrlen;
        }
      else if (!first_bad[0])
        format_addr ((struct sockaddr_storage *)r->ai_addr, first_bad, sizeof first_bad);
    }
  if (c->n_addrs > 0)
    {
      begin_connect (p, c);
      return;
    }
  snprintf (reason, sizeof reason,
            "%s resolves to %s, a loopback, private or link-local address "
            "the allow-list does not name",
            j->host, first_bad[0] ? first_bad : "no usable address");
  refuse (p, c, 403, "deny", reason, first_bad[0] ? first_bad : NULL);
}

static void
drain_resolver (struct proxy *p)
{
  struct resolve_job *j;
  while ((j = resolver_take ()) != NULL)
    {
      struct conn *c = j->owner;
      if (c && !c->dead && !c->closing)
        {
          c->last = now_ms ();
          resolved (p, c, j);
          if (!c->dead)
            conn_step (p, c);
        }
      resolve_job_free (j);
    }
}

/* Check req's target against the allow-list and start on the way there.
 * An address is decided at once; a name only when it is listed is handed
 * to the resolver: an unlisted name makes no DNS query, so the resolver
 * cannot carry data out either. */
static void
start_upstream (struct proxy *p, struct conn *c, const struct http_request *req)
{
  up_close (p, c);
  http_authority (req->host, req->port, c->target, sizeof c->target);
  snprintf (c->method, sizeof c->method, "%s", req->method);
  c->connect = req->connect;
  c->port = req->port;
  if (!req->connect)
    dir_queue (&c->c2u, req->head, req->head_len);
  char reason[512];
  snprintf (reason, sizeof reason, "%s is not in the sandbox's network allow-list", c->target);
  uint8_t a[16];
  if (al_parse_literal (req->host, a))
    {
      struct addrinfo hints = { .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV, .ai_socktype = SOCK_STREAM };
      struct addrinfo *res = NULL;
      char port[8];
      snprintf (port, sizeof port, "%u", (unsigned)req->port);
      if (!al_addr_allowed (p->cfg->al, a, req->port, p->cfg->learn_fd >= 0)
          || getaddrinfo (req->host, port, &hints, &res) != 0)
        {
          refuse (p, c, 403, "deny", reason, NULL);
          return;
        }
      memcpy (&c->addrs[0], res->ai_addr, res->ai_addrlen);
      c->addr_len[0] = res->ai_addrlen;
      c->n_addrs = 1;
      c->next_addr = 0;
      freeaddrinfo (res);
      begin_connect (p, c);
      return;
    }
  if (p->cfg->learn_fd < 0 && !al_name_allowed (p->cfg->al, req->host, req->port))
    {
      refuse (p, c, 403, "deny", reason, NULL);
      return;
    }
  struct resolve_job *j = xcalloc (1, sizeof *j);
  j->owner = c;
  snprintf (j->host, sizeof j->host, "%s", req->host);
  snprintf (j->port, sizeof j->port, "%u", (unsigned)req->port);
  c->job = j;
  c->st = C_RESOLVING;
  resolver_submit (j);
}

/* The upstream connect finished (or failed: then the next address). */
static void
finish_connect (struct proxy *p, struct conn *c)
{
  int e = 0;
  socklen_t len = sizeof e;
  if (getsockopt (c->up.fd, SOL_SOCKET, SO_ERROR, &e, &len) < 0)
    e = errno;
  struct sockaddr_storage peer;
  socklen_t plen = sizeof peer;
  /* No error and no peer yet: still in progress (we were woken by the client). */
  if (e == 0 && getpeername (c->up.fd, (struct sockaddr *)&peer, &plen) < 0 && errno == ENOTCONN
      && !c->up.hup)
    return;
  if (e == 0 && c->up.hup)
    e = ECONNREFUSED;
  if (e != 0)
    {
      /* Keep what is queued for the origin: the next address gets it. */
      struct dir keep = c->c2u;
      dir_init (&c->c2u);
      up_close (p, c);
      c->c2u = keep;
      int last = e;
      if (!connect_next (p, c, &last))
        {
          char reason[512];
          snprintf (reason, sizeof reason, "cannot connect to %s: %s", c->target, strerror (last));
          log_event (p, c->method, c->target, "error", reason, NULL);
          reply_error (p, c, 502, reason);
        }
      return;
    }
  c->st = C_OPEN;
  if (c->connect)
    {
      size_t n;
      cleanup_free char *r = http_response (200, "", &n);
      dir_queue (&c->u2c, r, n);
      c->tunnel = true;
    }
}

/* Parse what the client sent while no tunnel is open: request heads (each
 * checked, rewritten and sent to its upstream) and their bodies. */
static void
process_in (struct proxy *p, struct conn *c)
{
  while (c->in_len > 0 && !c->closing && c->st != C_CONNECTING && c->st != C_RESOLVING)
    {
      if (c->tunnel)
        {
          dir_queue (&c->c2u, c->in, c->in_len);
          c->in_len = 0;
          return;
        }
      if (c->body_left > 0)
        {
          size_t k = c->body_left < c->in_len ? (size_t)c->body_left : c->in_len;
          dir_queue (&c->c2u, c->in, k);
          consume_in (c, k);
          c->body_left -= k;
          continue;
        }
      ssize_t h = http_head_end (c->in, c->in_len, HTTP_MAX_HEAD);
      if (h == 0)
        return;
      if (h < 0)
        {
          log_event (p, NULL, NULL, "deny", "request head too large", NULL);
          reply_error (p, c, 431, "request head larger than 16 KiB");
          return;
        }
      struct http_request req;
      int status;
      char reason[256];
      if (http_parse_request (c->in, (size_t)h, &req, &status, reason, sizeof reason) < 0)
        {
          log_event (p, req.method[0] ? req.method : NULL, req.host[0] ? req.host : NULL, "deny", reason,
                     NULL);
          reply_error (p, c, status, reason);
          return;
        }
      char target[300];
      http_authority (req.host, req.port, target, sizeof target);
      bool reuse = !req.connect && c->up.fd >= 0 && c->st == C_OPEN && strcmp (target, c->target) == 0;
      /* Switching upstreams waits until the previous response is written out. */
      if (!reuse && c->up.fd >= 0 && dir_has_data (&c->u2c))
        {
          http_request_free (&req);
          return;
        }
      consume_in (c, (size_t)h);
      c->head_since = now_ms ();
      if (req.connect && c->up.fd >= 0)
        {
          up_close (p, c);
        }
      if (reuse)
        {
          log_event (p, req.method, target, "allow", "same connection", NULL);
          dir_queue (&c->c2u, req.head, req.head_len);
        }
      else
        start_upstream (p, c, &req);
      c->body_left = req.connect ? 0 : req.body_len;
      if (req.body_raw)
        c->tunnel = true; /* a chunked body: the rest of the stream goes as is */
      http_request_free (&req);
    }
}

/* A request body of known length, its first bytes (those that came with
 * the head) already queued: the rest is spliced from the client like a
 * tunnel, up to its last byte. */
static bool
body_splice (const struct conn *c)
{
  return !c->tunnel && c->body_left > 0 && c->in_len == 0 && !c->closing;
}

static bool
want_client_read (const struct conn *c)
{
  if (c->lingering)
    return true;
  if (c->closing || c->c2u.eof || c->st == C_CONNECTING || c->st == C_RESOLVING)
    return false;
  if ((c->tunnel && c->in_len == 0) || body_splice (c))
    return c->st == C_OPEN && !dir_has_data (&c->c2u);
  return c->c2u.len == c->c2u.off && c->in_len < sizeof c->in;
}

/* Read the client in parse mode; 0 ok, -1 the connection is over. */
static int
client_read (struct proxy *p, struct conn *c)
{
  if (c->closing)
    return 0;
  process_in (p, c);
  if (!want_client_read (c) || (c->tunnel && c->in_len == 0) || body_splice (c))
    return 0;
  ssize_t n = read (c->cl.fd, c->in + c->in_len, sizeof c->in - c->in_len);
  if (n < 0)
    return errno == EAGAIN || errno == EINTR ? 0 : -1;
  if (n == 0)
    {
      c->c2u.eof = true;
      return c->up.fd < 0 && !dir_has_data (&c->u2c) ? -1 : 0;
    }
  if (c->in_len == 0 && !c->tunnel && c->body_left == 0)
    c->head_since = now_ms (); /* a new head starts: its 30 seconds start now */
  c->in_len += (size_t)n;
  process_in (p, c);
  return 0;
}

static void
conn_update (struct proxy *p, struct conn *c)
{
  uint32_t cl = 0, up = 0;
  if (want_client_read (c))
    cl |= EPOLLIN;
  if (dir_has_data (&c->u2c))
    cl |= EPOLLOUT;
  if (c->st == C_CONNECTING || dir_has_data (&c->c2u))
    up |= EPOLLOUT;
  if (c->st == C_OPEN && !c->closing && !c->u2c.eof && !dir_has_data (&c->u2c))
    up |= EPOLLIN;
  ep_set (p, &c->cl, cl);
  ep_set (p, &c->up, up);
}

/* An error response is out: close our side and read (discarding) what the
 * client still sends, a little while, so that closing with unread data does
 * not reset the connection before the client has read the response.
 * 0 while lingering, -1 when it is time to close. */
static int
linger (struct conn *c)
{
  char sink[16384];
  if (!c->lingering)
    {
      shutdown (c->cl.fd, SHUT_WR);
      c->lingering = true;
      c->head_since = now_ms (); /* expire_idle ends a lingering client after HEAD_TIMEOUT / 15 */
    }
  for (int i = 0; i < 4; i++)
    {
      ssize_t n = read (c->cl.fd, sink, sizeof sink);
      if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
        return -1;
      if (n < 0)
        return 0;
      c->discarded += (size_t)n;
      if (c->discarded > LINGER_MAX)
        return -1;
    }
  return 0;
}

/* Do everything the connection can do now. */
static void
conn_step (struct proxy *p, struct conn *c)
{
  if (c->st == C_CONNECTING)
    finish_connect (p, c);
  for (int round = 0; round < 2 && !c->dead; round++)
    {
      if (client_read (p, c) < 0)
        {
          conn_close (p, c);
          return;
        }
      if (c->st == C_OPEN)
        {
          bool body = body_splice (c);
          int src = (c->tunnel && c->in_len == 0 && !c->closing) || body ? c->cl.fd : -1;
          if (dir_pump (&c->c2u, src, c->up.fd, body ? &c->body_left : NULL) < 0)
            {
              conn_close (p, c);
              return;
            }
        }
      int src = c->st == C_OPEN && !c->closing ? c->up.fd : -1;
      if (dir_pump (&c->u2c, src, c->cl.fd, NULL) < 0)
        {
          conn_close (p, c);
          return;
        }
    }
  bool u2c_done = !dir_has_data (&c->u2c);
  if (c->closing && u2c_done)
    {
      if (linger (c) < 0)
        conn_close (p, c);
      else
        conn_update (p, c);
      return;
    }
  /* Upstream finished: in a tunnel, once both ways are done; for forwarded
   * requests right away, as the response may be delimited by the close. */
  if (c->u2c.eof && u2c_done && (!c->tunnel || c->c2u.eof || c->cl.hup))
    {
      conn_close (p, c);
      return;
    }
  if (c->cl.hup && c->up.fd < 0)
    {
      conn_close (p, c);
      return;
    }
  conn_update (p, c);
}

static void
accept_all (struct proxy *p)
{
  for (;;)
    {
      int fd = accept4 (p->cfg->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0 && (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM))
        {
          /* The listener would stay readable and spin the loop: stop
           * polling it until a connection is gone. */
          struct epoll_event ev = { .events = 0, .data.ptr = &listen_marker };
          epoll_ctl (p->ep, EPOLL_CTL_MOD, p->cfg->listen_fd, &ev);
          p->accept_paused = true;
          return;
        }
      if (fd < 0)
        return;
      if (p->n_conns >= PROXY_MAX_CONNS)
        {
          close (fd);
          continue;
        }
      struct conn *c = xcalloc (1, sizeof *c);
      c->cl = (struct endpoint){ .c = c, .fd = fd };
      c->up = (struct endpoint){ .c = c, .fd = -1 };
      dir_init (&c->c2u);
      dir_init (&c->u2c);
      c->last = c->head_since = now_ms ();
      c->next = p->conns;
      if (p->conns)
        p->conns->prev = c;
      p->conns = c;
      p->n_conns++;
      ep_add (p, &c->cl, EPOLLIN);
    }
}

static void
expire_idle (struct proxy *p)
{
  uint64_t now = now_ms ();
  for (struct conn *c = p->conns, *next; c; c = next)
    {
      next = c->next;
      /* Waiting for a head: since the connection or the last head, traffic
       * or not (a byte every few seconds does not hold a connection). */
      bool want_head = c->st == C_HEAD && !c->tunnel && c->body_left == 0 && !dir_has_data (&c->u2c)
                       && (c->up.fd < 0 || c->in_len > 0);
      if ((want_head && now - c->head_since > PROXY_HEAD_TIMEOUT_MS)
          || (c->lingering && now - c->head_since > PROXY_HEAD_TIMEOUT_MS / 15)
          || now - c->last > PROXY_IDLE_TIMEOUT_MS)
        conn_close (p, c);
    }
}

static void
bury (struct proxy *p)
{
  if (p->graveyard && p->accept_paused)
    {
      struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &listen_marker };
      epoll_ctl (p->ep, EPOLL_CTL_MOD, p->cfg->listen_fd, &ev);
      p->accept_paused = false;
    }
  while (p->graveyard)
    {
      struct conn *c = p->graveyard;
      p->graveyard = c->next;
      free (c);
    }
}

int
proxy_run (const struct proxy_cfg *cfg)
{
  struct proxy p = { .cfg = cfg };
  signal (SIGPIPE, SIG_IGN);
  p.ep = epoll_create1 (EPOLL_CLOEXEC);
  if (p.ep < 0)
    return -1;
  struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &listen_marker };
  if (epoll_ctl (p.ep, EPOLL_CTL_ADD, cfg->listen_fd, &ev) < 0)
    return -1;
  if (resolver_init () < 0)
    return -1;
  ev.data.ptr = &resolver_marker;
  if (epoll_ctl (p.ep, EPOLL_CTL_ADD, resolver_fd (), &ev) < 0)
    return -1;
  ev.data.ptr = &watch_marker;
  if (cfg->watch_fd >= 0 && epoll_ctl (p.ep, EPOLL_CTL_ADD, cfg->watch_fd, &ev) < 0)
    return -1;
  struct epoll_event evs[64];
  uint64_t last_sweep = now_ms ();
  for (;;)
    {
      int n = epoll_wait (p.ep, evs, 64, 1000);
      if (n < 0 && errno != EINTR)
        return -1;
      for (int i = 0; i < n; i++)
        {
          if (evs[i].data.ptr == &watch_marker)
            return 0;
          if (evs[i].data.ptr == &listen_marker)
            {
              accept_all (&p);
              continue;
            }
          if (evs[i].data.ptr == &resolver_marker)
            {
              drain_resolver (&p);
              continue;
            }
          struct endpoint *e = evs[i].data.ptr;
          struct conn *c = e->c;
          if (c->dead)
            continue;
          c->last = now_ms ();
          /* A peer gone both ways is no longer polled (it would wake the
           * loop until we act); what it sent is still read to the end. */
          if ((evs[i].events & (EPOLLHUP | EPOLLERR)) && !e->hup)
            {
              if (e == &c->cl && (evs[i].events & EPOLLERR))
                {
                  conn_close (&p, c);
                  continue;
                }
              epoll_ctl (p.ep, EPOLL_CTL_DEL, e->fd, NULL);
              e->hup = true;
            }
          conn_step (&p, c);
        }
      bury (&p);
      if (now_ms () - last_sweep >= 1000)
        {
          expire_idle (&p);
          bury (&p);
          last_sweep = now_ms ();
        }
    }
}
