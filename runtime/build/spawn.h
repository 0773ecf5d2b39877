/* spawn: one clone3 with the spec's namespaces, the parent<->child sync
 * channel, id maps written by the parent, and the child's setup sequence. */

/* The room runtime/build/ (this is its main header): the pieces a sandbox
 * is built from — the spec's checks (validate), clone3 and the child's setup
 * (spawn), the root and its mounts (mount, mount_src, mntns, rootfs_image),
 * the id maps (idmap), the pty (console), the loopback of its network
 * namespace (net), the OCI hooks (hooks), the disk limit (disk) and hako's
 * pid 1 (init).  runtime/lifecycle/'s create puts them together.  It may use
 * the rooms below it: cgroup, state, node, proxy, confine
 * (tests/style/layers.sh). */
#ifndef HAKO_RUNTIME_SPAWN_H
#define HAKO_RUNTIME_SPAWN_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/err.h"
#include "oci/spec.h"
#include "runtime/confine/landlock.h"
#include "runtime/confine/learn.h"
#include "runtime/confine/seccomp.h"

struct mnt_cgroup;

/* The sandbox's cgroups, for spawn_clone: the child is put in its cgroup2
 * one as it is born (CLONE_INTO_CGROUP) or after its id maps are written,
 * and joins the v1 ones itself right after "go", before it builds
 * anything: it runs nothing of its own outside them. */
struct spawn_cgroup
{
  int v2_fd; /* a cgroup2 directory for clone3's CLONE_INTO_CGROUP, or -1 */
  /* Place the child in the rest; in_v2: clone3 already put it in v2_fd's. */
  int (*place) (void *arg, pid_t pid, bool in_v2, hk_err *err);
  /* Attach the device filter (NULL: none, or made with the cgroups): called
   * once the child has its go, before its ready is read. */
  int (*filter) (void *arg, const struct oci_spec *spec, hk_err *err);
  void *arg;
  /* The v1 cgroups' "tasks" files (cg_open_self_join), which the child
   * writes "0" into first thing after "go", joining them by itself: a
   * move by another process's write waits for an RCU grace period
   * (runtime/cgroup/cgroup_join.c); place then leaves the v1 ones alone. */
  const int *v1_tasks;
  size_t n_v1_tasks;
};

struct spawn_cfg
{
  const struct oci_spec *spec;
  const char *rootfs;               /* absolute host path of the directory that becomes / */
  const char *bundle;               /* absolute; may be NULL */
  const char *workdir;              /* absolute host path of the persistent work dir, or NULL */
  const char *cgroup_dir;           /* host path of the sandbox's cgroup2 dir, or NULL */
  const struct mnt_cgroup *cgroups; /* with v1 hierarchies: the sandbox's dir in each (mount.h) */
  size_t n_cgroups;
  const char *overlay;                  /* image sandboxes: overlayfs options for the root (rootfs_image.h) */
  const char *overlay_dir;              /* ... relative to this directory */
  const char *tree;                     /* no mount namespace of its own: where its tree is built (mount.h) */
  const struct spawn_cgroup *cgroup;    /* NULL: no cgroups of its own */
  const struct landlock_plan *landlock; /* NULL: no Landlock */
  const struct seccomp_prog *seccomp;   /* NULL: no filter */
  /* Detached (create): an O_PATH fd of the exec fifo the child blocks on until
   * `start`.  Foreground (run): -1, and the child waits for spawn_release. */
  int fifo_fd;
  unsigned int preserve_fds; /* hako's fds 3..3+N-1 pass to the process as they are */
  /* With process.terminal: where the pty's master goes (a shim's console
   * socket, or run's own end for its relay).  Unused otherwise. */
  int console_fd;
  /* run --detach: the process's stdout and stderr go to these pipes (the
   * monitor's log, sbxlog.h) and its stdin is /dev/null.  Otherwise it
   * keeps hako's stdio. */
  bool stdio_log;
  int log_out, log_err;
  /* Called once the child is in its namespaces and cgroups, before it is
   * told to build its root (the prestart and createRuntime hooks).  NULL: none. */
  int (*before_go) (void *arg, pid_t pid, hk_err *err);
  void *before_go_arg;
  /* The child reports once in its v1 cgroups and the parent waits for that
   * before before_go: set when there are hooks to run there, which may look
   * for the process's cgroups.  Otherwise nothing waits for it. */
  bool wait_joined;
  /* run --learn: the process installs the observing filter last and hands
   * its listener to the learner over this link (runtime/confine/learn.h).  NULL: none. */
  const struct learn_link *learn;
  /* Allowlist mode (netpolicy_has_proxy): once set up, the child makes the
   * proxy's listening socket in its network namespace and passes it over
   * the sync socket before "ready" (spawn_child.proxy_fd). */
  bool proxy_listener;
  /* Published ports (runtime/proxy/ports.h): hako opens the child's network
   * namespace, and its user namespace when it has one, before "go"
   * (spawn_child.netns_fd, userns_fd), for their forwarder to enter. */
  bool ns_fds;
};

struct spawn_child
{
  pid_t pid;
  int pidfd;
  int sync_fd;
  uint64_t start_time;
  int proxy_fd;            /* the listener of cfg.proxy_listener once ready, or -1; spawn_close closes it */
  int netns_fd, userns_fd; /* cfg.ns_fds: its namespaces, or -1; spawn_close closes them */
};

/* Clone the sandbox's first process into its namespaces, write its id maps and
 * let it build its root.  The child then reports ready or an error. */
int spawn_clone (const struct spawn_cfg *cfg, struct spawn_child *out, hk_err *err);
/* Wait until the child is ready to exec (receiving the proxy's listener on
 * the way, when it makes one).  On failure, *status is what `run`
 * exits with: 126/127 when the command cannot be run, else 125. */
int spawn_wait_ready (struct spawn_child *c, int *status, hk_err *err);
/* Foreground only: let the ready child exec its process. */
int spawn_release (struct spawn_child *c, hk_err *err);
/* Kill and reap a child that never got going (failed create). */
void spawn_abort (struct spawn_child *c);
void spawn_close (struct spawn_child *c);

#endif
