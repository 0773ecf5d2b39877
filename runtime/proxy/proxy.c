/* proxy: the proxied sandbox's way out — an HTTP proxy (CONNECT and
 * absolute-URI requests) on one epoll loop, checking every destination and
 * request against the sandbox's egress policy (policy.c).  This file is the
 * loop: accepting, the decision log, timeouts, closing.  proxy_conn.c
 * speaks plain HTTP and CONNECT and finds the way to an upstream;
 * proxy_mitm.c serves the CONNECTs whose requests are to be seen inside
 * TLS (proxy_tls.c).
 *
 * Each connection has two directions, client->upstream and
 * upstream->client.  A direction first writes out its buffer (our own
 * responses, rewritten request heads, the body bytes that came with a
 * head), then relays with splice through a pipe of its own (zero-copy), or
 * with read/write when the kernel refuses splice: responses, tunnels, and a
 * request body of known length up to its last byte (the next head is read
 * and checked as every head is).  Epoll is level-triggered and each
 * direction reads only once the previous bytes are written, so a slow
 * reader holds back its writer instead of growing memory.
 *
 * Host names are resolved by two worker threads (proxy_resolve.c), the
 * only threads; everything else is the loop's. */
#include "runtime/proxy/proxy.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "lib/util.h"
#include "runtime/proxy/proxy_internal.h"

/* ---- log ------------------------------------------------------------------- */

/* Client-supplied text goes into the log as printable ASCII only. */
void
proxy_sanitize (const char *in, char *out, size_t size)
{
  size_t i = 0;
  for (; in && in[i] && i + 1 < size; i++)
    out[i] = (in[i] >= 0x20 && in[i] < 0x7f) ? in[i] : '?';
  out[i] = '\0';
}

void
proxy_log (struct proxy *p, struct oci_proxy_event *ev)
{
  if (p->cfg->log_fd < 0 || p->logged >= PROXY_LOG_MAX)
    return;
  struct timespec ts;
  struct tm tm;
  char when[64], m[32], h[260], path[512], t[320], r[400];
  clock_gettime (CLOCK_REALTIME, &ts);
  gmtime_r (&ts.tv_sec, &tm);
  size_t n = strftime (when, sizeof when, "%Y-%m-%dT%H:%M:%S", &tm);
  snprintf (when + n, sizeof when - n, ".%03ldZ", ts.tv_nsec / 1000000);
  ev->time = when;
  ev->sandbox = p->cfg->sandbox;
#define CLEAN(field, buf)                                                                                    \
  if (ev->field)                                                                                             \
    {                                                                                                        \
      proxy_sanitize (ev->field, buf, sizeof buf);                                                           \
      ev->field = buf;                                                                                       \
    }
  CLEAN (method, m);
  CLEAN (host, h);
  CLEAN (path, path);
  CLEAN (target, t);
  CLEAN (reason, r);
#undef CLEAN
  cleanup_free char *line = oci_proxy_log_line (ev);
  if (line == NULL)
    return;
  size_t len = strlen (line);
  if (p->logged + len >= PROXY_LOG_MAX)
    {
      free (line);
      struct oci_proxy_event full
          = { .time = when,
              .sandbox = p->cfg->sandbox,
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
  /* `run --learn`: the learner reads the same lines (hako-learn(7)). */
  if (line && p->cfg->learn_fd >= 0)
    fd_write_all (p->cfg->learn_fd, line, len);
}

/* ---- connections ----------------------------------------------------------- */

void
ep_set (struct proxy *p, struct endpoint *e, uint32_t events)
{
  if (e->fd < 0 || e->hup || e->events == events)
    return;
  struct epoll_event ev = { .events = events, .data.ptr = e };
  if (epoll_ctl (p->ep, EPOLL_CTL_MOD, e->fd, &ev) == 0)
    e->events = events;
}

void
ep_add (struct proxy *p, struct endpoint *e, uint32_t events)
{
  struct epoll_event ev = { .events = events, .data.ptr = e };
  epoll_ctl (p->ep, EPOLL_CTL_ADD, e->fd, &ev);
  e->events = events;
}

/* Forget the upstream: its connection, a name being resolved for it, and
 * both directions' bytes. */
void
up_close (struct proxy *p, struct conn *c)
{
  if (c->job)
    {
      c->job->owner = NULL; /* the resolver's job outlives us; drain_resolver frees it */
      c->job = NULL;
    }
  if (c->m)
    mitm_up_closed (c);
  if (c->up.fd >= 0)
    close (c->up.fd); /* which takes it out of the epoll set: the proxy holds no other copy of it */
  c->up = (struct endpoint){ .c = c, .fd = -1 };
  dir_fini (&c->c2u);
  dir_fini (&c->u2c);
  c->st = C_HEAD;
}

void
conn_close (struct proxy *p, struct conn *c)
{
  if (c->dead)
    return;
  c->dead = true;
  if (c->m)
    mitm_free (p, c);
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

void
format_addr (const struct sockaddr_storage *ss, char *out, size_t size)
{
  const void *a = ss->ss_family == AF_INET ? (const void *)&((const struct sockaddr_in *)ss)->sin_addr
                                           : (const void *)&((const struct sockaddr_in6 *)ss)->sin6_addr;
  if (inet_ntop (ss->ss_family, a, out, (socklen_t)size) == NULL)
    snprintf (out, size, "?");
}

/* epoll tags for the fds that are not a connection's. */
static int listen_marker, watch_marker, resolver_marker, ctl_marker;

void
proxy_again (struct proxy *p, struct conn *c)
{
  if (c->again || c->dead)
    return;
  c->again = true;
  c->again_next = p->again;
  p->again = c;
}

/* The connections that asked for another step with no event to come: TLS
 * bytes GnuTLS has read and holds, which epoll cannot see. */
static void
run_again (struct proxy *p)
{
  struct conn *list = p->again;
  p->again = NULL;
  while (list)
    {
      struct conn *c = list;
      list = c->again_next;
      c->again = false;
      if (!c->dead)
        conn_step (p, c);
    }
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
      bool want_head = c->m ? mitm_wants_head (c)
                            : c->st == C_HEAD && !c->tunnel && c->body_left == 0 && !c->chunked
                                  && !dir_has_data (&c->u2c) && (c->up.fd < 0 || c->in_len > 0);
      if ((want_head && now - c->head_since > p->cfg->head_timeout_ms)
          || (c->lingering && now - c->head_since > PROXY_HEAD_TIMEOUT_MS / 15)
          || now - c->last > PROXY_IDLE_TIMEOUT_MS)
        {
          if (c->m)
            mitm_expire (p, c);
          else
            conn_close (p, c);
        }
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
  struct proxy p = { .cfg = cfg, .pol = cfg->policy, .tls = cfg->tls };
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
  ev.data.ptr = &ctl_marker;
  if (cfg->ctl_fd >= 0 && epoll_ctl (p.ep, EPOLL_CTL_ADD, cfg->ctl_fd, &ev) < 0)
    return -1;
  struct epoll_event evs[64];
  uint64_t last_sweep = now_ms ();
  for (;;)
    {
      int n = epoll_wait (p.ep, evs, 64, p.again ? 0 : 1000);
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
          if (evs[i].data.ptr == &ctl_marker)
            {
              proxy_ctl_serve (&p);
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
      run_again (&p);
      bury (&p);
      if (now_ms () - last_sweep >= 1000)
        {
          expire_idle (&p);
          bury (&p);
          last_sweep = now_ms ();
        }
    }
}
