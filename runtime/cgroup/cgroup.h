/* cgroup: the host's cgroup layout (v2, v1, hybrid), and each sandbox's own
 * cgroups in every hierarchy hako uses — their paths, limits, freezing,
 * killing and removal.  cgroup_host.c reads the host's hierarchies,
 * cgroup.c owns the sandbox's directories and the record of them, and two
 * backends (cgroup_v1.c, cgroup_v2.c) write the controller files. */

/* The room runtime/cgroup/, the bottom one: cgroup.h is its public header;
 * cgroup_internal.h and cgroup_bpf.h are for the room's own files (and its
 * unit tests).  It uses nothing else of runtime/ (tests/style/layers.sh). */
#ifndef HAKO_RUNTIME_CGROUP_H
#define HAKO_RUNTIME_CGROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/err.h"
#include "oci/report/stats.h"
#include "oci/spec.h"

enum cg_layout
{
  CG_NONE,   /* no cgroup filesystem at all */
  CG_V1,     /* legacy: v1 controllers only */
  CG_HYBRID, /* v1 controllers plus cgroup2 at /sys/fs/cgroup/unified */
  CG_UNIFIED /* cgroup2 at /sys/fs/cgroup */
};

/* Detected once (statfs of /sys/fs/cgroup and its unified child). */
enum cg_layout cg_layout (void);
/* Where the cgroup2 hierarchy is mounted, or NULL (v1 only / none). */
const char *cg_v2_mount (void);

/* The controllers hako drives, as bits.  CG_BLKIO is "io" on v2. */
enum
{
  CG_CPU = 1u << 0,
  CG_CPUACCT = 1u << 1,
  CG_CPUSET = 1u << 2,
  CG_MEMORY = 1u << 3,
  CG_DEVICES = 1u << 4,
  CG_FREEZER = 1u << 5,
  CG_BLKIO = 1u << 6,
  CG_PIDS = 1u << 7,
  CG_HUGETLB = 1u << 8,
};
/* "memory", or on v2 the cgroup2 name ("io" for CG_BLKIO); NULL for several bits. */
const char *cg_ctl_name (unsigned ctl, bool v2);

/* One mounted hierarchy. */
struct cg_hier
{
  char *mount;   /* /sys/fs/cgroup/memory, /sys/fs/cgroup/unified, /sys/fs/cgroup */
  char *name;    /* "memory", "cpu,cpuacct"; "unified" for the cgroup2 one */
  unsigned ctls; /* v1: the controllers it carries; v2: those its root offers */
  bool v2;
  char *self; /* the calling process's cgroup in it ("/", "/user.slice/..."), or NULL */
};

struct cg_host
{
  enum cg_layout layout;
  struct cg_hier *hier;
  size_t n_hier;
};

/* Read the hierarchies under root.  layout CG_NONE detects the layout with
 * statfs and only takes real cgroup mounts; any other layout is trusted and
 * root read as such (unit tests point it at a fake tree in a temp dir).
 * self_text: /proc/self/cgroup's text, NULL to read it. */
int cg_host_probe (const char *root, enum cg_layout layout, const char *self_text, struct cg_host *out,
                   hk_err *err);
void cg_host_free (struct cg_host *h);
/* This host's /sys/fs/cgroup, probed on first use. */
int cg_host_get (const struct cg_host **out, hk_err *err);
/* Split a /proc/PID/cgroup line ("ID:CONTROLLERS:/PATH") in place; false
 * when it is not one, or its path is not absolute or climbs with "..". */
bool cg_line_split (char *line, char **controllers, char **path);
/* The host directory of that line's cgroup (v2: the "0::" line), or NULL
 * when its hierarchy is not mounted where hako looks (v1: the usual
 * /sys/fs/cgroup/<controllers> layout).  exec joins a sandbox's cgroups so. */
char *cg_dir_of (bool v2, const char *controllers, const char *path);

/* One of a sandbox's cgroup directories. */
struct cg_dir
{
  char *path;    /* absolute host path of the sandbox's cgroup in this hierarchy */
  char *mount;   /* where the hierarchy is mounted */
  char *hier;    /* the hierarchy's name ("memory", "cpu,cpuacct", "unified") */
  unsigned ctls; /* v1: the hierarchy's controllers; v2: those the limits need */
  bool v2;
  bool required; /* a limit needs it: not being able to make it fails create */
  bool made;     /* it exists and is this sandbox's (processes may be inside) */
  bool skipped;  /* optional and not writable here (rootless): not used */
};

/* A sandbox's cgroups, one directory per hierarchy it uses. */
struct cg_sandbox
{
  enum cg_layout layout;
  struct cg_dir *dirs;
  size_t n;
  /* The default path: the parent (hako/ or hako-HASH/) is shared by
   * sandboxes and removed once empty. */
  bool shared_parent;
  /* Loaded from a record written before its directories were all made: any
   * of them may exist, but no process was ever placed in them. */
  bool unsure;
  /* Set before cg_create: the cgroup2 eBPF device filter is left out of it,
   * for cg_attach_filter while the sandbox's child builds its root. */
  bool defer_filter;
};

/* Decide the sandbox's cgroups: which hierarchies, which path in each, and
 * refuse (125, naming it) what this host cannot enforce.  Reads the host,
 * writes nothing.  linux.cgroupsPath follows runc: absolute ("/a/b", under
 * each hierarchy's root), relative ("a/b", under hako's own cgroup in each
 * hierarchy); absent, "/hako/ID" for the default state root /run/hako and
 * "/hako-HASH/ID" for any other, HASH naming that root, so that two state
 * roots never share a cgroup.  "slice:prefix:name" (systemd) is refused. */
int cg_prepare (const struct cg_host *h, const struct oci_spec *spec, const char *id, const char *state_root,
                struct cg_sandbox *out, hk_err *err);
/* Write the record (before anything is made), make the directories and write
 * the limits.  On failure what was made is still listed: cg_remove it. */
int cg_create (struct cg_sandbox *cg, const struct oci_spec *spec, const char *record, hk_err *err);
/* The device filter cg_create left out (defer_filter), if this sandbox's
 * rules are one: attach it before any of the sandbox's own code runs. */
int cg_attach_filter (const struct cg_sandbox *cg, const struct oci_spec *spec, hk_err *err);
/* The steps of cg_create, for the unit tests. */
int cg_record_write (const struct cg_sandbox *cg, const char *record, bool made, hk_err *err);
int cg_make_dirs (struct cg_sandbox *cg, hk_err *err);
int cg_apply (const struct cg_sandbox *cg, const struct oci_spec *spec, hk_err *err);

/* Read the record of a sandbox's cgroups.  A missing record fails with
 * ENOENT: then nothing was ever made. */
int cg_load (const char *record, struct cg_sandbox *out, hk_err *err);
/* For a sandbox whose record is damaged: its default paths in every
 * hierarchy, to be removed where they exist and are empty (nothing else is
 * known to be its). */
void cg_guess (const struct cg_host *h, const char *id, const char *state_root, struct cg_sandbox *out);
void cg_sandbox_free (struct cg_sandbox *cg);

/* The sandbox's cgroup2 directory (shown in the sandbox), or NULL. */
const char *cg_v2_path (const struct cg_sandbox *cg);
/* An fd of it for clone3's CLONE_INTO_CGROUP, or -1. */
int cg_open_v2 (const struct cg_sandbox *cg);
/* Move pid into every one of the sandbox's cgroups (but the cgroup2 one when
 * skip_v2: clone3 already put it there; and the v1 ones when skip_v1: the
 * process joins them itself, cg_join_self). */
int cg_enter (const struct cg_sandbox *cg, pid_t pid, bool skip_v2, bool skip_v1, hk_err *err);
/* A single-threaded process joining the sandbox's v1 cgroups by itself
 * (cgroup_join.c says why: no RCU grace period).  cg_open_self_join opens
 * the "tasks" file of each v1 directory made (in hako, before the fork;
 * *n may be 0); the process then calls cg_join_self, which writes "0"
 * into each: a write moves the thread that makes it. */
int cg_open_self_join (const struct cg_sandbox *cg, int **fds, size_t *n, hk_err *err);
int cg_join_self (const int *fds, size_t n, hk_err *err);
void cg_close_self_join (int *fds, size_t n);

/* Freeze (or thaw) every process, and return only once the kernel says
 * they are all frozen (thawed). */
bool cg_can_freeze (const struct cg_sandbox *cg);
int cg_freeze (const struct cg_sandbox *cg, bool frozen, hk_err *err);
/* SIGKILL every process in the sandbox's cgroups, frozen ones included. */
int cg_kill (const struct cg_sandbox *cg, hk_err *err);
/* Change the limits of a sandbox's cgroups: every field upd sets (merged is
 * the sandbox's limits once updated, for values read together, such as swap
 * which counts memory too).  Every sandbox has a cgroup in the memory, pids
 * and cpu controllers (v1: made at create whatever its limits; cpuset only
 * for cpus or mems set at create); one it has none for (not mounted, not
 * writable when it was created, a v1 cpuset) is refused with ENOTSUP naming
 * it: moving every process of a running sandbox into a new cgroup cannot be
 * made atomic against its forks and its execs.
 * Lowering memory below what the sandbox uses fails with EBUSY if the kernel
 * cannot reclaim enough (v1; v2 reclaims, or OOM-kills, instead). */
int cg_update (const struct cg_sandbox *cg, const struct oci_resources *upd,
               const struct oci_resources *merged, hk_err *err);
/* Usage now: cpu, memory, pids, from whichever cgroups the sandbox has. */
int cg_stats (const struct cg_sandbox *cg, struct oci_stats *out, hk_err *err);
/* Every process in the sandbox's cgroups (from the one that tracks them
 * all: cgroup2, else the v1 freezer), sorted.  ENOENT when it has none. */
int cg_pids (const struct cg_sandbox *cg, pid_t **out, size_t *n, hk_err *err);

/* OOM notifications: v1 an eventfd on memory.oom_control, v2 inotify on
 * memory.events.  fd is -1 when the sandbox has no memory cgroup. */
struct cg_oom_watch
{
  int fd;
  bool v2;
  char *dir;
  uint64_t seen; /* v2: oom_kill count read last */
};
int cg_oom_watch_open (const struct cg_sandbox *cg, struct cg_oom_watch *w, hk_err *err);
/* After fd polled readable: how many OOM events happened since last time. */
int cg_oom_watch_read (struct cg_oom_watch *w, uint64_t *events, hk_err *err);
void cg_oom_watch_close (struct cg_oom_watch *w);

/* Send sig to every process in the sandbox's cgroups (a process forking
 * meanwhile may miss it: for SIGTERM, the polite first try).  ENOENT when
 * the sandbox has none. */
int cg_signal (const struct cg_sandbox *cg, int sig, hk_err *err);
/* How many processes the OOM killer has killed in the sandbox's memory
 * cgroup so far (0 when it has none). */
int cg_oom_kills (const struct cg_sandbox *cg, uint64_t *n, hk_err *err);
/* The oom_kill count of the v1 memory cgroup memdir and of its exec slots
 * (below): what cgroup2's memory.events counts, all of the sandbox's. */
int cg_v1_oom_kills (const char *memdir, uint64_t *n, hk_err *err);

/* An attached exec's own v1 memory cgroup below the sandbox's (hako-mem-N,
 * made on first use, kept and reused: cgroup_slot.c), held with flock while
 * the command runs, so that its oom_kill count is the command's tree's
 * alone.  Take: 0 with fd >= 0 (dir is its host path, before its count),
 * -1 when none is free or can be made. */
struct cg_mem_slot
{
  int fd;
  char *dir;
  uint64_t before;
};
int cg_mem_slot_take (const char *memdir, struct cg_mem_slot *s);
/* How many of the slot's processes the OOM killer took since the take. */
int cg_mem_slot_oom_kills (const struct cg_mem_slot *s, uint64_t *n);
void cg_mem_slot_release (struct cg_mem_slot *s);

/* Kill what is still inside, wait until the cgroups are empty, remove them
 * (and the shared parent once empty). */
int cg_remove (struct cg_sandbox *cg, hk_err *err);

#endif
