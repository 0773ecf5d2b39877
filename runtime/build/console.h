/* console: a sandbox process's terminal — a pty allocated inside the
 * sandbox's own devpts, its master handed over a unix socket (runc's
 * --console-socket protocol), and hako's relay between its own terminal and
 * that master when no socket was given. */
#ifndef HAKO_RUNTIME_CONSOLE_H
#define HAKO_RUNTIME_CONSOLE_H

#include <poll.h>
#include <stdbool.h>
#include <sys/ioctl.h>
#include <sys/types.h>
#include <termios.h>

#include "lib/err.h"

/* Connect to the listening unix socket at path (a shim's --console-socket). */
int console_connect (const char *path, int *fd, hk_err *err);
/* The master over sock with SCM_RIGHTS, as runc sends it: the payload is the
 * name "/dev/ptmx", the one control message carries the fd. */
int console_send_master (int sock, int master, hk_err *err);
int console_recv_master (int sock, int *master, hk_err *err);

/* The device of the host's devpts (/dev/pts as hako sees it), to tell it
 * from the sandbox's own; 0 when there is none. */
dev_t console_host_devpts (void);

/* Inside the sandbox (after pivot_root, or after joining its mount
 * namespace): a new pty of the devpts mounted at /dev/pts, which must not be
 * host_devpts, sized to ws (when its fields are non-zero), with the slave as
 * stdin, stdout, stderr and controlling terminal (the caller is a session
 * leader), the master sent over sock.  With dev_console, the slave is also
 * bound on /dev/console. */
int console_setup (int sock, const struct winsize *ws, bool dev_console, dev_t host_devpts, hk_err *err);

/* hako's side when it keeps the master: its stdin goes in (raw, when a
 * terminal), the output comes to its stdout, its window size follows. */
struct console_relay
{
  int master;   /* -1: no relay */
  bool in_open; /* stdin not at EOF yet */
  bool raw;     /* stdin was put in raw mode: restore saved */
  struct termios saved;
};

/* Take over master: stdin raw if it is a terminal, its size copied. */
void console_relay_begin (struct console_relay *r, int master);
/* Two pollfds: stdin and the master (fd -1 when done with). */
void console_relay_fds (const struct console_relay *r, struct pollfd pf[2]);
void console_relay_io (struct console_relay *r, const struct pollfd pf[2]);
/* SIGWINCH: hako's terminal's size to the pty. */
void console_relay_winch (struct console_relay *r);
/* The process ended: pass on what it left in the pty, restore stdin, close. */
void console_relay_end (struct console_relay *r);

#endif
