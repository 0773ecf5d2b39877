/* portfwd: a published port's forwarder — connections accepted on
 * listening sockets of the host's network namespace, each relayed (splice,
 * proxy_dir.c) to the same TCP port on the loopback of the namespace the
 * forwarder runs in: the sandbox's (runtime/proxy/ports.c puts it there). */
#ifndef HAKO_RUNTIME_PORTFWD_H
#define HAKO_RUNTIME_PORTFWD_H

#include <stddef.h>
#include <stdint.h>

/* At most this many connections at once (more are closed on accept): each
 * holds two sockets and up to two pipes. */
#define PORTFWD_MAX_CONNS 1024

struct portfwd_listener
{
  int fd;        /* listening TCP socket, made in the host's netns; non-blocking */
  uint16_t port; /* the sandbox's port its connections go to */
};

struct portfwd_cfg
{
  const struct portfwd_listener *l;
  size_t n;
  int watch_fd; /* pidfd of the sandbox's process: the forwarder ends when it exits */
};

/* Serve until watch_fd reports its process gone: 0 then, -1 when the loop
 * cannot run (epoll).  Each connection goes to 127.0.0.1:PORT, or [::1]:PORT
 * when that refuses it (a server listening on IPv6 alone). */
int portfwd_run (const struct portfwd_cfg *cfg);

#endif
