/* proxy_conn: a client connection spoken to as an HTTP proxy — request
 * heads (CONNECT, or an absolute http:// URI), each checked against the
 * egress policy with the rule that decided it logged; the way to the
 * upstream (resolving, every address checked, connecting); and the relay
 * both ways (proxy_dir.c), opaque for a CONNECT tunnel.
 *
 * Every request on a connection is checked, the second on a kept-alive
 * upstream as the first: a request body is passed on up to its last byte
 * (Content-Length, or the end a chunked body's framing gives), never
 * further, so the next head is always read and checked here.
 *
 * Limits: a keep-alive connection may send requests to several hosts one
 * after another, but switching host closes the previous upstream
 * connection (pipelined requests to different hosts may see the earlier
 * response cut short); a response that ends with the origin closing ends
 * the client's connection too. */
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "lib/netclass.h"
#include "lib/util.h"
#include "oci/netrule.h"
#include "runtime/proxy/proxy_internal.h"

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

/* The path part of a request target for the log: no query (the sandbox's
 * own data, and where a secret's placeholder may sit). */
static void
log_path (const char *target, size_t len, char *out, size_t size)
{
  size_t n = 0;
  while (n < len && target[n] != '?' && target[n] != '#')
    n++;
  snprintf (out, size, "%.*s", (int)n, target);
}

/* A line about the connection's current request (or CONNECT). */
static void
log_request (struct proxy *p, const struct conn *c, const char *verdict, const char *rule, const char *reason,
             int status)
{
  const char *left[5] = { NULL };
  for (size_t i = 0; i < c->n_left && i < 4; i++)
    left[i] = c->left[i];
  struct oci_proxy_event ev = { .unreplaced = left,
                                .method = c->method[0] ? c->method : NULL,
                                .scheme = c->connect ? NULL : "http",
                                .host = c->host[0] ? c->host : NULL,
                                .port = c->port,
                                .path = c->connect || !c->path[0] ? NULL : c->path,
                                .target = c->target[0] ? c->target : NULL,
                                .verdict = verdict,
                                .rule = rule,
                                .reason = reason,
                                .address = c->address,
                                .tunnel = c->connect && strcmp (verdict, "deny") != 0 ? "opaque" : NULL,
                                .status = status };
  proxy_log (p, &ev);
}

void
conn_fail (struct proxy *p, struct conn *c, int status, const char *verdict, const char *rule,
           const char *reason)
{
  if (c->m)
    {
      mitm_fail (p, c, status, reason);
      return;
    }
  log_request (p, c, verdict, rule, reason, status);
  reply_error (p, c, status, reason);
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
      format_addr (&c->addrs[i], c->address, sizeof c->address);
      return true;
    }
  return false;
}

/* Connect to the addresses that passed the policy. */
static void
begin_connect (struct proxy *p, struct conn *c)
{
  int e = 0;
  if (!connect_next (p, c, &e))
    {
      char reason[512];
      snprintf (reason, sizeof reason, "cannot connect to %s: %s", c->target, strerror (e));
      conn_fail (p, c, 502, "error", c->rule, reason);
    }
}

/* A name came back from the resolver: keep the addresses the policy lets
 * through (a public one, unless a deny rule's range holds it; a loopback,
 * private or link-local one only when a rule names it). */
static void
resolved (struct proxy *p, struct conn *c, struct resolve_job *j)
{
  char reason[1024], first_bad[INET6_ADDRSTRLEN] = "";
  struct pol_decision d, bad = { 0 };
  uint8_t a[16];
  c->job = NULL;
  c->st = C_HEAD;
  if (j->gai != 0)
    {
      snprintf (reason, sizeof reason, "cannot resolve %s: %s", j->host, gai_strerror (j->gai));
      conn_fail (p, c, 502, "error", c->rule, reason);
      return;
    }
  c->n_addrs = c->next_addr = 0;
  for (struct addrinfo *r = j->res; r && c->n_addrs < MAX_ADDRS; r = r->ai_next)
    {
      if (r->ai_family != AF_INET && r->ai_family != AF_INET6)
        continue;
      net_addr_from_sockaddr (r->ai_addr, a);
      policy_address (p->pol, a, c->port, &d);
      if (d.v != POL_DENY)
        {
          memcpy (&c->addrs[c->n_addrs], r->ai_addr, r->ai_addrlen);
          c->addr_len[c->n_addrs++] = r->ai_addrlen;
        }
      else if (!first_bad[0])
        {
          format_addr ((struct sockaddr_storage *)r->ai_addr, first_bad, sizeof first_bad);
          bad = d;
        }
    }
  if (c->n_addrs > 0)
    {
      begin_connect (p, c);
      return;
    }
  snprintf (c->address, sizeof c->address, "%s", first_bad);
  snprintf (reason, sizeof reason, "%s resolves to %s: %s", j->host,
            first_bad[0] ? first_bad : "no usable address",
            first_bad[0] ? bad.reason : "none is IPv4 or IPv6");
  conn_fail (p, c, 403, "deny", first_bad[0] ? bad.rule : "default", reason);
}

void
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

void
upstream_begin (struct proxy *p, struct conn *c)
{
  uint8_t a[16];
  c->address[0] = '\0';
  if (net_parse_literal (c->host, a))
    {
      /* An address is decided at once. */
      struct pol_decision d;
      struct addrinfo hints = { .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV, .ai_socktype = SOCK_STREAM };
      struct addrinfo *res = NULL;
      char port[8];
      snprintf (port, sizeof port, "%u", (unsigned)c->port);
      policy_address (p->pol, a, c->port, &d);
      if (d.v == POL_DENY || getaddrinfo (c->host, port, &hints, &res) != 0)
        {
          char reason[1024];
          snprintf (reason, sizeof reason, "%s: %s", c->target,
                    d.v == POL_DENY ? d.reason : "not an address");
          snprintf (c->address, sizeof c->address, "%.63s", c->host);
          conn_fail (p, c, 403, "deny", d.rule, reason);
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
  /* A name only once the policy let it through: an unlisted name makes no
   * DNS query, so the resolver cannot carry data out either. */
  struct resolve_job *j = xcalloc (1, sizeof *j);
  j->owner = c;
  snprintf (j->host, sizeof j->host, "%s", c->host);
  snprintf (j->port, sizeof j->port, "%u", (unsigned)c->port);
  c->job = j;
  c->st = C_RESOLVING;
  resolver_submit (j);
}

/* The upstream connect finished (or failed: then the next address). */
static void
finish_connect (struct proxy *p, struct conn *c)
{
  int e = fd_connect_result (c->up.fd);
  if (e == EINPROGRESS && !c->up.hup)
    return; /* woken by the client */
  if ((e == 0 || e == EINPROGRESS) && c->up.hup)
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
          conn_fail (p, c, 502, "error", c->rule, reason);
        }
      return;
    }
  c->st = C_OPEN;
  if (c->m)
    {
      mitm_connected (p, c);
      return;
    }
  bool learn = strcmp (c->rule, "learn") == 0;
  log_request (p, c, learn ? "learn" : "allow", c->rule,
               learn ? "learning mode: forwarded and recorded, not checked" : NULL, c->connect ? 200 : 0);
  if (c->connect)
    {
      size_t n;
      cleanup_free char *r = http_response (200, "", &n);
      dir_queue (&c->u2c, r, n);
      c->tunnel = true;
    }
}

/* Check a request against the policy: its destination, and where a request
 * rule names the host its method and path.  false: refused (logged, the
 * answer queued). */
static bool
check_request (struct proxy *p, struct conn *c, const struct http_request *req, bool *intercept)
{
  struct pol_decision d;
  *intercept = false;
  policy_destination (p->pol, req->host, req->port, req->connect, &d);
  if (d.v != POL_DENY && !req->connect && policy_has_request_rules (p->pol, req->host, req->port, false))
    {
      char **segs;
      size_t n;
      const char *why = NULL;
      if (oci_net_path_split (req->head + req->path_off, req->path_len, &segs, &n, &why) < 0)
        {
          conn_fail (p, c, 400, "deny", "default", why);
          return false;
        }
      policy_request (p->pol, req->host, req->port, false, req->method, segs, n, &d);
      strv_free (segs);
    }
  if (d.v == POL_DENY)
    {
      conn_fail (p, c, 403, "deny", d.rule, d.reason);
      return false;
    }
  snprintf (c->rule, sizeof c->rule, "%s", d.rule);
  *intercept = d.v == POL_INTERCEPT;
  return true;
}

/* The connection's current request: what its log lines name. */
static void
set_request (const struct proxy *p, struct conn *c, const struct http_request *req)
{
  http_authority (req->host, req->port, c->target, sizeof c->target);
  snprintf (c->host, sizeof c->host, "%s", req->host);
  snprintf (c->method, sizeof c->method, "%s", req->method);
  c->port = req->port;
  c->connect = req->connect;
  c->path[0] = '\0';
  c->n_left = 0;
  if (req->connect)
    return;
  log_path (req->head + req->path_off, req->path_len, c->path, sizeof c->path);
  /* A placeholder goes out as it is over plain HTTP: said so in the log. */
  const char *names[4];
  c->n_left = policy_placeholders (p->pol, req->head, req->head_len, names, 4);
  for (size_t i = 0; i < c->n_left; i++)
    snprintf (c->left[i], sizeof c->left[i], "%s", names[i]);
}

/* Body bytes of the current request that are in c->in, passed on: 1 some
 * were, 0 none is due (a head comes next), -1 the body is malformed (the
 * connection is refused). */
static int
pass_body (struct proxy *p, struct conn *c)
{
  if (c->body_left > 0)
    {
      size_t k = c->body_left < c->in_len ? (size_t)c->body_left : c->in_len;
      dir_queue (&c->c2u, c->in, k);
      consume_in (c, k);
      c->body_left -= k;
      return 1;
    }
  if (!c->chunked)
    return 0;
  bool done;
  const char *why = NULL;
  ssize_t k = http_chunked_feed (&c->chunks, c->in, c->in_len, &done, &why);
  if (k < 0)
    {
      conn_fail (p, c, 400, "deny", "default", why);
      return -1;
    }
  dir_queue (&c->c2u, c->in, (size_t)k);
  consume_in (c, (size_t)k);
  c->chunked = !done;
  return 1;
}

/* A head that is too long (h < 0) or that did not parse: refused, with
 * what was read of it in the log line. */
static void
head_refused (struct proxy *p, struct conn *c, ssize_t h, struct http_request *req, int status,
              const char *reason)
{
  snprintf (c->method, sizeof c->method, "%s", h > 0 ? req->method : "");
  snprintf (c->host, sizeof c->host, "%s", h > 0 ? req->host : "");
  c->port = h > 0 ? req->port : 0;
  c->target[0] = c->path[0] = '\0';
  if (c->host[0] && c->port)
    http_authority (c->host, c->port, c->target, sizeof c->target);
  c->connect = h > 0 && req->connect;
  if (h > 0)
    http_request_free (req);
  conn_fail (p, c, status, "deny", NULL, reason);
}

/* Parse what the client sent while no tunnel is open: request heads (each
 * checked, rewritten and sent to its upstream) and their bodies. */
static void
process_in (struct proxy *p, struct conn *c)
{
  while (c->in_len > 0 && !c->closing && c->st != C_CONNECTING && c->st != C_RESOLVING && !c->m)
    {
      if (c->tunnel)
        {
          dir_queue (&c->c2u, c->in, c->in_len);
          c->in_len = 0;
          return;
        }
      int b = pass_body (p, c);
      if (b < 0)
        return;
      if (b > 0)
        continue;
      ssize_t h = http_head_end (c->in, c->in_len, HTTP_MAX_HEAD);
      if (h == 0)
        return;
      struct http_request req;
      int status = 431;
      char reason[256] = "request head larger than 16 KiB";
      if (h < 0 || http_parse_request (c->in, (size_t)h, &req, &status, reason, sizeof reason) < 0)
        {
          head_refused (p, c, h, &req, status, reason);
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
      set_request (p, c, &req);
      bool intercept;
      if (!check_request (p, c, &req, &intercept))
        {
          http_request_free (&req);
          return;
        }
      c->body_left = req.connect ? 0 : req.body_len;
      c->chunked = !req.connect && req.chunked;
      c->chunks = (struct http_chunked){ 0 };
      if (reuse)
        {
          log_request (p, c, strcmp (c->rule, "learn") == 0 ? "learn" : "allow", c->rule, "same connection",
                       0);
          dir_queue (&c->c2u, req.head, req.head_len);
        }
      else
        {
          up_close (p, c);
          if (!req.connect)
            dir_queue (&c->c2u, req.head, req.head_len);
          if (intercept)
            {
              http_request_free (&req);
              if (mitm_begin (p, c) < 0)
                conn_fail (p, c, 502, "error", c->rule, "cannot intercept: the sandbox has no egress CA");
              return;
            }
          upstream_begin (p, c);
        }
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
  if (c->m || !want_client_read (c) || (c->tunnel && c->in_len == 0) || body_splice (c))
    return 0;
  ssize_t n = read (c->cl.fd, c->in + c->in_len, sizeof c->in - c->in_len);
  if (n < 0)
    return errno == EAGAIN || errno == EINTR ? 0 : -1;
  if (n == 0)
    {
      c->c2u.eof = true;
      return c->up.fd < 0 && !dir_has_data (&c->u2c) ? -1 : 0;
    }
  if (c->in_len == 0 && !c->tunnel && c->body_left == 0 && !c->chunked)
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
void
conn_step (struct proxy *p, struct conn *c)
{
  if (c->st == C_CONNECTING)
    finish_connect (p, c);
  if (c->dead)
    return;
  if (c->m)
    {
      mitm_step (p, c);
      return;
    }
  for (int round = 0; round < 2 && !c->dead; round++)
    {
      if (client_read (p, c) < 0)
        {
          conn_close (p, c);
          return;
        }
      if (c->m)
        {
          mitm_step (p, c);
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

void
conn_recheck (struct proxy *p, struct conn *c)
{
  if (c->dead || c->closing || c->up.fd < 0 || !c->host[0])
    return;
  struct pol_decision d;
  policy_destination (p->pol, c->host, c->port, c->connect, &d);
  uint8_t a[16];
  if (d.v != POL_DENY && net_parse_literal (c->address, a))
    policy_address (p->pol, a, c->port, &d);
  /* A tunnel whose requests are now to be seen is cut too: the client's
   * next connection is intercepted. */
  bool now_seen = d.v == POL_INTERCEPT && !c->m;
  if (d.v != POL_DENY && !now_seen)
    return;
  char reason[400];
  snprintf (reason, sizeof reason, "cut by a policy update: %s",
            d.v == POL_DENY ? d.reason : "its requests are now checked inside TLS");
  log_request (p, c, "deny", d.rule, reason, 0);
  conn_close (p, c);
}
