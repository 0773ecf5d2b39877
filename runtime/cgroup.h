/* cgroup: the host's cgroup layout (v2, v1, hybrid) and where a process sits.
 * Limits, freezing and per-sandbox cgroups build on this (see the cgroups issue). */
#ifndef HAKO_RUNTIME_CGROUP_H
#define HAKO_RUNTIME_CGROUP_H

enum cg_layout
{
  CG_NONE,     /* no cgroup filesystem at all */
  CG_V1,       /* legacy: v1 controllers only */
  CG_HYBRID,   /* v1 controllers plus cgroup2 at /sys/fs/cgroup/unified */
  CG_UNIFIED   /* cgroup2 at /sys/fs/cgroup */
};

/* Detected once (statfs of /sys/fs/cgroup and its unified child). */
enum cg_layout cg_layout (void);
/* Where the cgroup2 hierarchy is mounted, or NULL (v1 only / none). */
const char *cg_v2_mount (void);
/* Host path of the calling process's cgroup2 directory (caller frees), or NULL. */
char *cg_self_v2_dir (void);

#endif
