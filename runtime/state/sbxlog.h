/* sbxlog: the bounded log of a detached sandbox's stdout and stderr. */
#ifndef HAKO_RUNTIME_SBXLOG_H
#define HAKO_RUNTIME_SBXLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/err.h"

/* The default cap of a sandbox's log (both files together). */
#define SBXLOG_DEFAULT_CAP (16ULL << 20)
#define SBXLOG_MIN_CAP (64ULL << 10)

/* The marker in a sandbox's state dir that its process's stdio goes to the
 * log (it holds the cap): a restart (`start` of a stopped sandbox) logs too. */
#define SBXLOG_MARKER "log-stdio"

/* Writer side, in the monitor.  The lines of the two pipes go to
 * <state>/log as CRI's log format ("TIME STREAM P|F TEXT"), and when that
 * file passes half the cap it becomes log.1 (the older log.1 is dropped):
 * what is kept is between half the cap and the cap, the newest. */
struct sbxlog_pipes
{
  int out[2], err[2]; /* [0] the monitor reads, [1] the sandbox's stdout/stderr */
};
int sbxlog_pipes_open (struct sbxlog_pipes *p, hk_err *err);
void sbxlog_pipes_close (struct sbxlog_pipes *p);
/* Copy both pipes into the log until both reach EOF, or until done_fd (a
 * pidfd; -1 none) is readable and no more data comes for a moment.  Never
 * fails: a log that cannot be written drops the output (the sandbox must
 * not block on a full pipe). */
void sbxlog_pump (const char *state_dir, int out_fd, int err_fd, uint64_t cap, int done_fd);
/* The same log, written by a caller with a loop of its own (a kept
 * process's holder, runtime/exec/procs.h): open takes dirfd (-1: every write is
 * dropped), write splits a read of stream (0 stdout, 1 stderr) into its
 * records. */
struct sbxlog_writer
{
  int dirfd, fd;
  uint64_t size, half;
  bool partial[2]; /* the stream's last record ended without a newline */
};
void sbxlog_writer_open (struct sbxlog_writer *w, int dirfd, uint64_t cap);
void sbxlog_writer_write (struct sbxlog_writer *w, int stream, const char *buf, size_t len);
void sbxlog_writer_close (struct sbxlog_writer *w);

/* Reader side, for `hako logs`. */
struct sbxlog_line
{
  bool err;         /* stderr */
  bool partial;     /* no newline after text (more of the line follows) */
  const char *time; /* RFC 3339 with nanoseconds */
  const char *text;
  size_t len;
};
/* Returns 0 to go on, 1 to stop there (the reader went away: not an
 * error), -1 when writing failed (errno says why). */
typedef int (*sbxlog_emit) (void *arg, const struct sbxlog_line *l);
/* Each line of the log, oldest first; with tail >= 0 only the last tail
 * lines (whole lines: a partial record counts with the rest of its line;
 * 0: none, what follow then prints is what comes from now on).
 * With follow, then each new line until stopped() says the sandbox's
 * process is gone and the log has no more.  A sandbox without a log is an
 * error naming why. */
int sbxlog_read (const char *state_dir, long tail, bool follow, bool (*stopped) (void *arg), void *arg,
                 sbxlog_emit emit, hk_err *err);

#endif
