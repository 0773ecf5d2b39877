/* fdpass: one message over a unix socket, optionally carrying one fd (SCM_RIGHTS). */
#ifndef HAKO_LIB_FDPASS_H
#define HAKO_LIB_FDPASS_H

#include <stddef.h>
#include <sys/types.h>

/* Send len bytes of buf and, when fd >= 0, fd with them; retries EINTR and
 * never raises SIGPIPE.  The bytes sent, or -1 with errno. */
ssize_t fd_send (int sock, const void *buf, size_t len, int fd);

/* Receive up to len bytes into buf; a passed fd lands in *fd (O_CLOEXEC), or -1
 * when none came.  With fd NULL, and for every fd past the first, the passed
 * fds are closed.  The bytes received (0 at end of stream), or -1 with errno. */
ssize_t fd_recv (int sock, void *buf, size_t len, int *fd);

#endif
