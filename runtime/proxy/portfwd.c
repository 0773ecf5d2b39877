/* portfwd: a published port's forwarder — connections accepted on
 * listening sockets of the host's network namespace, each relayed to the
 * same port on the loopback of the namespace the forwarder runs in (the
 * sandbox's), on one epoll loop.
 *
 * The forwarder parses nothing: bytes go both ways unchanged, each
 * direction through proxy_dir's splice relay (a direction reads only once
 * its previous bytes are written, so a slow reader holds back its writer
 * instead of growing memory).  Where a connection goes is fixed when the
 * port is published — the sandbox's own 127.0.0.1:PORT, or [::1]:PORT —
 * so nothing the sandbox sends can make it connect anywhere else: a
 * published port lets the host in and nothing out. */
#include "runtime/proxy/portfwd.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lib/util.h"
#include "runtime/proxy/proxy_dir.h"

/* What an epoll event's pointer leads to: the first member of each. */
enum tag
{
  T_LISTEN,
  T_WATCH,
  T_SIDE
};

struct listen_ref
{
  enum tag tag;
  const struct portfwd_listener *l;
};

struct fconn;

struct side
{
  enum tag tag;
  struct fconn *c;
  int fd;
  uint32_t events; /* registered with epoll */
  bool hup;        /* both ways shut: no longer polled, read to the end */
};

struct fconn
{
  struct fconn *next, *prev; /* live connections */
  struct fconn *again;       /* on the loop's list of connections to step again */
  struct side cl, in;        /* the host's client; the sandbox's server */
  uint16_t port;
  bool connecting, tried_v6, dead;
  bool queued, buried; /* on the again list; closed and left for it to free */
  struct dir c2i, i2c;
};

struct fwd
{
  int ep;
  struct fconn *conns, *again, *graveyard;
  size_t n_conns;
  struct listen_ref *refs;
  size_t n_refs;
  bool accept_paused; /* out of fds: the listeners wait for a connection to close */
};

static const enum tag watch_tag = T_WATCH;

static void
side_set (struct fwd *f, struct side *s, uint32_t events)
{
  if (s->fd < 0 || s->hup || s->events == events)
    return;
  struct epoll_event ev = { .events = events, .data.ptr = s };
  if (epoll_ctl (f->ep, EPOLL_CTL_MOD, s->fd, &ev) == 0)
    s->events = events;
}

static void
side_add (struct fwd *f, struct side *s, uint32_t events)
{
  struct epoll_event ev = { .events = events, .data.ptr = s };
  epoll_ctl (f->ep, EPOLL_CTL_ADD, s->fd, &ev);
  s->events = events;
}

static void
conn_close (struct fwd *f, struct fconn *c)
{
  if (c->dead)
    return;
  c->dead = true;
  /* Closing an fd takes it out of the epoll set: we hold no other copy. */
  if (c->in.fd >= 0)
    close (c->in.fd);
  close (c->cl.fd);
  c->in.fd = c->cl.fd = -1;
  dir_fini (&c->c2i);
  dir_fini (&c->i2c);
  if (c->prev)
    c->prev->next = c->next;
  else
    f->conns = c->next;
  if (c->next)
    c->next->prev = c->prev;
  c->next = f->graveyard;
  f->graveyard = c;
  f->n_conns--;
}

/* Start connecting to the sandbox's 127.0.0.1:PORT, or its [::1]:PORT the
 * second time; false when even that cannot start. */
static bool
connect_inner (struct fwd *f, struct fconn *c)
{
  for (;;)
    {
      bool v6 = c->tried_v6;
      struct sockaddr_in sin = { .sin_family = AF_INET,
                                 .sin_port = htons (c->port),
                                 .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
      struct sockaddr_in6 sin6
          = { .sin6_family = AF_INET6, .sin6_port = htons (c->port), .sin6_addr = IN6ADDR_LOOPBACK_INIT };
      int fd = socket (v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
      if (fd >= 0
          && (connect (fd, v6 ? (struct sockaddr *)&sin6 : (struct sockaddr *)&sin,
                       v6 ? sizeof sin6 : sizeof sin)
                  == 0
              || errno == EINPROGRESS))
        {
          c->in = (struct side){ .tag = T_SIDE, .c = c, .fd = fd };
          c->connecting = true;
          side_add (f, &c->in, EPOLLOUT);
          return true;
        }
      if (fd >= 0)
        close (fd);
      if (v6)
        return false;
      c->tried_v6 = true;
    }
}

/* The connect to the sandbox finished: on to the relay, or (refused on
 * 127.0.0.1) the second address; false when the connection is over. */
static bool
finish_connect (struct fwd *f, struct fconn *c)
{
  int e = fd_connect_result (c->in.fd);
  if (e == EINPROGRESS)
    return true; /* woken by the client */
  if (e == 0)
    {
      c->connecting = false;
      return true;
    }
  close (c->in.fd);
  c->in.fd = -1;
  c->in.hup = false;
  if (c->tried_v6)
    return false;
  c->tried_v6 = true; /* a server on the sandbox's ::1 alone */
  return connect_inner (f, c);
}

static bool
dir_done (const struct dir *d)
{
  return d->eof && !dir_has_data (d);
}

/* One pass of both directions: false when the connection is over. */
static bool
pump_both (struct fconn *c)
{
  return dir_pump (&c->c2i, c->cl.fd, c->in.fd, NULL) == 0
         && dir_pump (&c->i2c, c->in.fd, c->cl.fd, NULL) == 0;
}

/* A side both ways shut is no longer polled (it would wake the loop for
 * ever), so what it still holds is read here; a connection it holds back
 * past a round is stepped again on the next turn of the loop. */
static bool
hup_pending (const struct fconn *c)
{
  return (c->cl.hup && !c->c2i.eof && !dir_has_data (&c->c2i))
         || (c->in.hup && !c->i2c.eof && !dir_has_data (&c->i2c));
}

static void
conn_step (struct fwd *f, struct fconn *c)
{
  if (c->connecting)
    {
      if (!finish_connect (f, c))
        {
          conn_close (f, c);
          return;
        }
      if (c->connecting)
        return;
    }
  for (int round = 0; round < 4; round++)
    {
      if (!pump_both (c))
        {
          conn_close (f, c);
          return;
        }
      if (!hup_pending (c))
        break;
    }
  if (dir_done (&c->c2i) && dir_done (&c->i2c))
    {
      conn_close (f, c);
      return;
    }
  if (hup_pending (c) && !c->queued)
    {
      c->queued = true;
      c->again = f->again;
      f->again = c;
    }
  uint32_t cl = 0, in = 0;
  if (!c->c2i.eof && !dir_has_data (&c->c2i))
    cl |= EPOLLIN;
  if (dir_has_data (&c->i2c))
    cl |= EPOLLOUT;
  if (!c->i2c.eof && !dir_has_data (&c->i2c))
    in |= EPOLLIN;
  if (dir_has_data (&c->c2i))
    in |= EPOLLOUT;
  side_set (f, &c->cl, cl);
  side_set (f, &c->in, in);
}

static void
pause_accept (struct fwd *f, bool paused)
{
  for (size_t i = 0; i < f->n_refs; i++)
    {
      struct epoll_event ev = { .events = paused ? 0 : EPOLLIN, .data.ptr = &f->refs[i] };
      epoll_ctl (f->ep, EPOLL_CTL_MOD, f->refs[i].l->fd, &ev);
    }
  f->accept_paused = paused;
}

static void
accept_all (struct fwd *f, const struct portfwd_listener *l)
{
  for (;;)
    {
      int fd = accept4 (l->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0 && (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM))
        {
          /* The listeners would stay readable and spin the loop. */
          pause_accept (f, true);
          return;
        }
      if (fd < 0)
        return;
      if (f->n_conns >= PORTFWD_MAX_CONNS)
        {
          close (fd);
          continue;
        }
      struct fconn *c = xcalloc (1, sizeof *c);
      c->cl = (struct side){ .tag = T_SIDE, .c = c, .fd = fd };
      c->in = (struct side){ .tag = T_SIDE, .c = c, .fd = -1 };
      c->port = l->port;
      dir_init (&c->c2i);
      dir_init (&c->i2c);
      c->next = f->conns;
      if (f->conns)
        f->conns->prev = c;
      f->conns = c;
      f->n_conns++;
      if (!connect_inner (f, c))
        {
          conn_close (f, c);
          continue;
        }
      side_add (f, &c->cl, 0); /* read once the sandbox's side is connected */
    }
}

static void
bury (struct fwd *f)
{
  if (f->graveyard && f->accept_paused)
    pause_accept (f, false);
  while (f->graveyard)
    {
      struct fconn *c = f->graveyard;
      f->graveyard = c->next;
      if (c->queued)
        c->buried = true; /* step_again frees it */
      else
        free (c);
    }
}

/* Step each connection a hung-up side held back on the last turn. */
static void
step_again (struct fwd *f)
{
  struct fconn *list = f->again;
  f->again = NULL;
  while (list)
    {
      struct fconn *c = list;
      list = c->again;
      c->queued = false;
      if (c->buried)
        free (c);
      else if (!c->dead)
        conn_step (f, c);
      /* else closed this turn: bury frees it */
    }
}

static void
on_event (struct fwd *f, struct side *s, uint32_t events)
{
  struct fconn *c = s->c;
  if (c->dead)
    return;
  if ((events & EPOLLERR) && s == &c->cl)
    {
      conn_close (f, c); /* the client reset: nothing left to deliver */
      return;
    }
  if ((events & (EPOLLHUP | EPOLLERR)) && !s->hup && !(s == &c->in && c->connecting))
    {
      epoll_ctl (f->ep, EPOLL_CTL_DEL, s->fd, NULL);
      s->hup = true;
    }
  conn_step (f, c);
}

int
portfwd_run (const struct portfwd_cfg *cfg)
{
  struct fwd f = { .n_refs = cfg->n };
  signal (SIGPIPE, SIG_IGN);
  f.ep = epoll_create1 (EPOLL_CLOEXEC);
  if (f.ep < 0)
    return -1;
  f.refs = xcalloc (cfg->n + 1, sizeof *f.refs);
  for (size_t i = 0; i < cfg->n; i++)
    {
      f.refs[i] = (struct listen_ref){ .tag = T_LISTEN, .l = &cfg->l[i] };
      struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &f.refs[i] };
      if (epoll_ctl (f.ep, EPOLL_CTL_ADD, cfg->l[i].fd, &ev) < 0)
        return -1;
    }
  struct epoll_event wev = { .events = EPOLLIN, .data.ptr = (void *)&watch_tag };
  if (epoll_ctl (f.ep, EPOLL_CTL_ADD, cfg->watch_fd, &wev) < 0)
    return -1;
  struct epoll_event evs[64];
  for (;;)
    {
      int n = epoll_wait (f.ep, evs, 64, f.again ? 0 : -1);
      if (n < 0 && errno != EINTR)
        return -1;
      for (int i = 0; i < n; i++)
        {
          enum tag t = *(const enum tag *)evs[i].data.ptr;
          if (t == T_WATCH)
            return 0;
          if (t == T_LISTEN)
            accept_all (&f, ((const struct listen_ref *)evs[i].data.ptr)->l);
          else
            on_event (&f, evs[i].data.ptr, evs[i].events);
        }
      step_again (&f);
      bury (&f);
    }
}
