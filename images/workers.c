/* workers: one function over items 0..n-1 on a few threads at once — the
 * layers of an image, which decompress, hash and unpack independently of
 * one another, each into a directory of its own. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#include "images/internal.h"
#include "lib/util.h"

/* Beyond the CPUs more threads only queue; beyond a few, the disk does. */
#define MAX_WORKERS 4

struct pool
{
  size_t n;
  int (*fn) (void *ctx, size_t i, hk_err *err);
  void *ctx;
  const bool *defer;
  hk_err *errs;
  int *rc;
  atomic_size_t next;
  atomic_bool failed; /* once one fails no new item starts */
};

static void *
worker (void *arg)
{
  struct pool *p = arg;
  for (;;)
    {
      size_t i = atomic_fetch_add (&p->next, 1);
      if (i >= p->n || atomic_load (&p->failed))
        return NULL;
      if (p->defer && p->defer[i])
        continue;
      p->rc[i] = p->fn (p->ctx, i, &p->errs[i]);
      if (p->rc[i] < 0)
        atomic_store (&p->failed, true);
    }
}

static size_t
worker_count (size_t n)
{
  long cpus = sysconf (_SC_NPROCESSORS_ONLN);
  size_t w = cpus > 0 ? (size_t)cpus : 1;
  w = w < MAX_WORKERS ? w : MAX_WORKERS;
  return w < n ? w : n;
}

int
img_each_parallel (size_t n, int (*fn) (void *ctx, size_t i, hk_err *err), void *ctx, const bool *defer,
                   hk_err *err)
{
  struct pool p = { .n = n,
                    .fn = fn,
                    .ctx = ctx,
                    .defer = defer,
                    .errs = xcalloc (n + 1, sizeof *p.errs),
                    .rc = xcalloc (n + 1, sizeof *p.rc) };
  size_t w = worker_count (n);
  pthread_t *threads = xcalloc (w + 1, sizeof *threads);
  size_t started = 0;
  /* The calling thread is one of the workers. */
  for (; started + 1 < w; started++)
    if (pthread_create (&threads[started], NULL, worker, &p) != 0)
      break;
  worker (&p);
  for (size_t t = 0; t < started; t++)
    pthread_join (threads[t], NULL);
  /* The deferred items, in order, once the others are done. */
  for (size_t i = 0; defer && i < n && !atomic_load (&p.failed); i++)
    if (defer[i] && (p.rc[i] = fn (ctx, i, &p.errs[i])) < 0)
      atomic_store (&p.failed, true);
  int r = 0;
  /* The first item that failed names the error, whichever finished first. */
  for (size_t i = 0; i < n; i++)
    if (p.rc[i] < 0)
      {
        *err = p.errs[i];
        r = -1;
        break;
      }
  free (threads);
  free (p.errs);
  free (p.rc);
  return r;
}
