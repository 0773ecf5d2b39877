/* cgroup_join: a process joining its sandbox's v1 cgroups by itself, which
 * costs microseconds where a write of its pid by another process can wait
 * for an RCU grace period (milliseconds, tens after a quiet spell).
 *
 * Moving a process by writing its pid into cgroup.procs (or into any
 * cgroup file but by a thread moving itself) takes the kernel's global
 * cgroup_threadgroup_rwsem for writing, whose rcu_sync waits for a grace
 * period unless another writer went by within the last one: 5 to 48 ms on
 * this project's 2-core VM when writes were 50 ms apart (docs/benchmarks.md,
 * "The cgroup attach").  A thread that writes "0" into a v1 "tasks" file
 * moves itself alone, and the kernel skips that lock: the thread cannot
 * exit or exec under its own write (commit 9a3284fad42f, "cgroup: Optimize
 * single thread migration", 2021, in the stable kernels from 5.4; before
 * it, the write takes the lock and costs what a cgroup.procs write does).  hako's
 * processes that join are single-threaded (the sandbox's first process,
 * an exec's joiner), so the thread is the whole process, and everything it
 * forks after is born inside.  The files are opened by hako beforehand: v1
 * checks the opener's credentials, so a child that has already changed
 * user namespace (or whose /sys is about to be another) still may. */
#include "runtime/cgroup/cgroup.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "lib/util.h"

int
cg_open_self_join (const struct cg_sandbox *cg, int **fds, size_t *n, hk_err *err)
{
  *fds = NULL;
  *n = 0;
  int *v = xcalloc (cg->n ? cg->n : 1, sizeof *v);
  size_t k = 0;
  for (size_t i = 0; i < cg->n; i++)
    {
      const struct cg_dir *d = &cg->dirs[i];
      if (d->v2 || !d->made || d->skipped)
        continue;
      char path[4096];
      snprintf (path, sizeof path, "%s/tasks", d->path);
      v[k] = open (path, O_WRONLY | O_CLOEXEC);
      if (v[k] < 0)
        {
          int e = errno;
          cg_close_self_join (v, k);
          return err_code (err, e, "open %s", path);
        }
      k++;
    }
  *fds = v;
  *n = k;
  return 0;
}

int
cg_join_self (const int *fds, size_t n, hk_err *err)
{
  for (size_t i = 0; i < n; i++)
    if (write (fds[i], "0", 1) != 1)
      return err_sys (err, "join the sandbox's v1 cgroup (a write to its tasks file)");
  return 0;
}

void
cg_close_self_join (int *fds, size_t n)
{
  for (size_t i = 0; fds && i < n; i++)
    if (fds[i] >= 0)
      close (fds[i]);
  free (fds);
}
