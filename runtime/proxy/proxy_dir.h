/* proxy_dir: one direction of a proxied connection (proxy_dir.c). */
#ifndef HAKO_RUNTIME_PROXY_DIR_H
#define HAKO_RUNTIME_PROXY_DIR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct dir
{
  char *buf; /* bytes to write before anything from the pipe */
  size_t off, len, cap;
  int pipe[2];
  size_t pending;  /* bytes in the pipe */
  size_t pipe_cap; /* asked of one splice into it: PIPE_SIZE, PIPE_BULK once grown */
  uint64_t moved;  /* bytes taken from the source so far */
  bool no_splice;  /* the kernel refused splice: relay through buf */
  bool eof;        /* the source has ended */
  bool shut;       /* the destination is shut down for writing */
};

void dir_init (struct dir *d);
void dir_fini (struct dir *d);
bool dir_has_data (const struct dir *d);
/* Queue N bytes to be written before anything from the pipe. */
void dir_queue (struct dir *d, const void *data, size_t n);
/* Write what is queued to dst: 1 when all of it is out, 0 when dst is full,
 * -1 on an error (the connection is over). */
int dir_flush (struct dir *d, int dst);
/* One chunk from src into the direction: 1 moved, 0 nothing now, -1 error;
 * left (NULL: no limit) is what may still be taken from src, counted down. */
int dir_fill (struct dir *d, int src, uint64_t *left);
/* Move bytes from src (-1: only flush) to dst until either would block (or
 * left, when not NULL, is down to 0); shuts dst down once src ended. */
int dir_pump (struct dir *d, int src, int dst, uint64_t *left);

#endif
