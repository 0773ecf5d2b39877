/* cgroup_internal: what cgroup.c shares with its v1 and v2 backends. */
#ifndef HAKO_RUNTIME_CGROUP_INTERNAL_H
#define HAKO_RUNTIME_CGROUP_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/err.h"
#include "oci/spec.h"
#include "runtime/cgroup/cgroup.h"

/* One per cgroup version; hybrid hosts use v1's (their cgroup2 hierarchy has
 * no controllers and only tracks the sandbox's processes). */
struct cg_backend
{
  const char *name;
  /* The controllers spec's limits need (bits), refusing what this version
   * cannot express.  Pure: looks at nothing but the spec. */
  int (*needs) (const struct oci_spec *spec, unsigned *ctls, hk_err *err);
  /* Write the limits into the sandbox's made, still empty cgroups. */
  int (*apply) (const struct cg_sandbox *cg, const struct oci_spec *spec, hk_err *err);
  /* The cgroup2 eBPF device filter, where this version's rules are one
   * (apply attaches it too, unless cg->defer_filter). */
  int (*filter) (const struct cg_sandbox *cg, const struct oci_spec *spec, hk_err *err);
  int (*freeze) (const struct cg_sandbox *cg, bool frozen, hk_err *err);
  /* SIGKILL every process without cgroup.kill (frozen ones included). */
  int (*kill) (const struct cg_sandbox *cg, hk_err *err);
  /* cg_update and cg_stats, for this version's files. */
  int (*update) (const struct cg_sandbox *cg, const struct oci_resources *upd,
                 const struct oci_resources *merged, hk_err *err);
  int (*stats) (const struct cg_sandbox *cg, struct oci_stats *out, hk_err *err);
  /* How many times the OOM killer has killed in the memory cgroup (0
   * without one). */
  int (*oom_kills) (const struct cg_sandbox *cg, uint64_t *n, hk_err *err);
};

/* The files of cg_stats: a number ("max" reads as UINT64_MAX), and
 * "key value" lines (memory.stat, cpu.stat) with a callback per line. */
int cg_read_u64 (const char *dir, const char *file, uint64_t *out, hk_err *err);
typedef void (*cg_kv_fn) (const char *key, uint64_t value, void *arg);
int cg_read_kv (const char *dir, const char *file, cg_kv_fn fn, void *arg, hk_err *err);
/* A cgroup2 dir's cpu.stat into s (usage is there without the cpu
 * controller, throttling with it); nothing when the file is missing. */
int cg_v2_cpu_stat (const char *dir, struct oci_stats *s, hk_err *err);
/* "update cannot ...: the sandbox has no <ctl> cgroup" for ENOTSUP. */
int cg_update_missing (unsigned ctl, bool v2, hk_err *err);

extern const struct cg_backend cg_v1_backend;
extern const struct cg_backend cg_v2_backend;

/* The controller bit of a name ("memory"; on v2 "io" is CG_BLKIO), 0 if unknown. */
unsigned cg_ctl_bit (const char *name, size_t len, bool v2);
/* "cpu,cpuacct" or "cpuset cpu io memory pids\n": the known ones as bits. */
unsigned cg_parse_ctl_list (const char *s, const char *seps, bool v2);

/* DIR/FILE: write value (one write), or read it (trailing newline dropped;
 * the file must fit in size).  Errors name the file. */
int cg_write (const char *dir, const char *file, const char *value, hk_err *err);
int cg_writef (const char *dir, const char *file, hk_err *err, const char *fmt, ...)
    __attribute__ ((format (printf, 4, 5)));
int cg_read (const char *dir, const char *file, char *buf, size_t size, hk_err *err);
bool cg_file_exists (const char *dir, const char *file);

/* The sandbox's v1 directory carrying ctl, or its cgroup2 one; NULL if none. */
const struct cg_dir *cg_dir_v1 (const struct cg_sandbox *cg, unsigned ctl);
const struct cg_dir *cg_dir_v2 (const struct cg_sandbox *cg);

/* rmdir every cgroup below DIR, deepest first (retrying EBUSY for a
 * moment, as a task that just exited may still hold one). */
int cg_remove_children (const char *dir, hk_err *err);
/* SIGKILL every process listed in DIR/cgroup.procs and in its child
 * cgroups' (an attached exec's); *n counts them. */
int cg_kill_procs (const char *dir, size_t *n, hk_err *err);
/* The same with any signal. */
int cg_signal_procs (const char *dir, int sig, size_t *n, hk_err *err);
/* The number after "KEY " on a line of DIR/FILE ("oom_kill 3"); 0 if absent. */
int cg_read_key (const char *dir, const char *file, const char *key, uint64_t *out, hk_err *err);
/* Sleep with a growing step (for polling the kernel's view): 0.1 ms doubling
 * up to 10 ms.  Returns false once deadline (now_ms) has passed. */
bool cg_backoff (unsigned *step_us, uint64_t deadline);

/* The table's knobs (oci/knobs.h): the controllers of those r sets that
 * have a file on this version (only those update may change, for update);
 * the first r sets that v2 refuses (its row's reason); and the writes of
 * those of the controllers ctls, in the table's order (OCI_CONV_BY_HAND
 * rows are the backend's to write). */
unsigned cg_knob_ctls (const struct oci_resources *r, bool v2, bool update);
int cg_knobs_refuse_v2 (const struct oci_resources *r, hk_err *err);
int cg_write_knobs (const char *dir, const struct oci_resources *r, bool v2, unsigned ctls, hk_err *err);

/* Whether the memory limit alone keeps memory.kernelTCP (cgroup v2 charges
 * socket memory to memory.max). */
bool cg_limit_bounds_tcp (const struct oci_resources *r);
/* Where systemd runs, this directory exists (sd_booted(3)). */
#define SYSTEMD_RUNNING "/run/systemd/system"
/* A systemd cgroupsPath "slice:prefix:name" as the cgroup path systemd
 * gives the unit: "a-b.slice:p:n" is "a.slice/a-b.slice/p-n.scope"; an
 * empty slice is system.slice, "-.slice" the root.  For the unit tests too. */
int cg_systemd_path (const char *cp, char **out, hk_err *err);

/* v1 device rules as the lines written to devices.allow / devices.deny, in
 * order: the spec's rules, then the nodes hako's /dev holds and the spec's
 * linux.devices (runc's defaults, without its "mknod anything").  Refuses a
 * rule v1's exception lists cannot express.  For the unit tests too. */
struct cg_dev_write
{
  bool allow;
  char line[48];
};
int cg_v1_device_writes (const struct oci_spec *spec, struct cg_dev_write **out, size_t *n, hk_err *err);
/* One device rule: type 'a' (any), 'b' or 'c'; -1 numbers match any. */
enum
{
  CG_DEV_R = 1,
  CG_DEV_W = 2,
  CG_DEV_M = 4,
};
struct cg_dev_rule
{
  bool allow;
  char type;
  int64_t major, minor;
  unsigned access; /* CG_DEV_* bits */
};
/* The rules cgroup v2's eBPF filter enforces, in order: the spec's, then
 * the nodes hako's /dev holds and the spec's linux.devices (as for v1). */
int cg_device_rules (const struct oci_spec *spec, struct cg_dev_rule **out, size_t *n);
/* The rules add nothing to what the sandbox reaches without them: a
 * deny-all, then allows of the nodes in its /dev, and no CAP_MKNOD.  Such
 * rules are accepted where the filter cannot be loaded (rootless). */
bool cg_v2_devices_harmless (const struct oci_spec *spec);
/* The spec's device rules as an eBPF filter attached to the cgroup2 dir
 * (v2 hosts, and hybrid ones, whose processes every exec would otherwise
 * have to move into a v1 devices cgroup).  Where hako may not load it
 * (rootless), rules that add nothing to what /dev allows are accepted. */
int cg_devices_filter (const char *dir, const struct oci_spec *spec, hk_err *err);

#endif
