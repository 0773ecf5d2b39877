/* criu: Debian's criu binary, driven for transparent checkpoint/restore of a
 * sandbox's processes — whether it works on this host (`criu check`), and
 * the command lines of `criu dump` and `criu restore` with runc's flags. */
#ifndef HAKO_RUNTIME_CRIU_H
#define HAKO_RUNTIME_CRIU_H

#include <stdbool.h>
#include <sys/types.h>

#include "lib/err.h"

/* What `criu check` said.  reason: criu's own error lines, "Error (file:line): "
 * stripped, joined with "; " (or why criu could not be run at all). */
struct criu_verdict
{
  bool works;
  char *binary;  /* the criu run, or NULL when none was found */
  char *version; /* "3.17.1", or NULL */
  char *reason;  /* NULL when it works */
};

/* Run `criu check` (HAKO_CRIU names another binary: the tests' stand-in).
 * cache (may be NULL) is a file the verdict is kept in, keyed by the
 * kernel release and the binary's size and mtime, so checkpoint, restore
 * and doctor do not pay for criu's probes each time.  Never fails: a criu
 * that cannot run is a verdict. */
void criu_probe (const char *cache, struct criu_verdict *v);
void criu_verdict_free (struct criu_verdict *v);
/* The reason out of criu's output (exposed for the unit tests). */
char *criu_reason (const char *output);

/* runc's checkpoint/restore flags. */
struct criu_opts
{
  const char *image_path;          /* --image-path: criu's images */
  const char *work_path;           /* --work-path: logs and criu's work files (default image_path) */
  bool leave_running;              /* --leave-running (dump) */
  bool tcp_established;            /* --tcp-established */
  bool file_locks;                 /* --file-locks */
  bool ext_unix_sk;                /* --ext-unix-sk */
  bool shell_job;                  /* --shell-job */
  const char *manage_cgroups_mode; /* soft, full, strict or ignore; NULL: soft */
};

/* Is mode one of criu's --manage-cgroups modes? */
bool criu_cgroups_mode_valid (const char *mode);

/* The sandbox as criu sees it. */
struct criu_target
{
  pid_t pid;               /* dump: the sandbox's first process */
  const char *root;        /* restore: the root, mounted on the host */
  const char *freezer;     /* dump: the freezer cgroup (v1 dir or v2 dir), or NULL */
  const char *cgroup_root; /* restore: where the cgroups go, or NULL */
  const char *pidfile;     /* restore: where criu writes the restored pid */
  char *const *mounts;     /* bind mounts' destinations: external to criu */
  char *const *sources;    /* restore: their sources, as mounts */
};

/* argv (NULL-terminated, caller frees with strv_free) for criu. */
char **criu_dump_argv (const char *binary, const struct criu_opts *o, const struct criu_target *t);
char **criu_restore_argv (const char *binary, const struct criu_opts *o, const struct criu_target *t);

/* Run argv; on failure the error quotes the end of log (criu's -o file). */
int criu_exec (char *const *argv, const char *log, hk_err *err);

#endif
