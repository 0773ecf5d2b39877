/* cgroup_internal: what cgroup.c shares with its v1 and v2 backends. */
#ifndef HAKO_RUNTIME_CGROUP_INTERNAL_H
#define HAKO_RUNTIME_CGROUP_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/err.h"
#include "oci/spec.h"
#include "runtime/cgroup.h"

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
  int (*freeze) (const struct cg_sandbox *cg, bool frozen, hk_err *err);
  /* SIGKILL every process without cgroup.kill (frozen ones included). */
  int (*kill) (const struct cg_sandbox *cg, hk_err *err);
  /* How many times the OOM killer has killed in the memory cgroup (0
   * without one). */
  int (*oom_kills) (const struct cg_sandbox *cg, uint64_t *n, hk_err *err);
};

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

/* SIGKILL every process listed in DIR/cgroup.procs; *n counts them. */
int cg_kill_procs (const char *dir, size_t *n, hk_err *err);
/* The same with any signal. */
int cg_signal_procs (const char *dir, int sig, size_t *n, hk_err *err);
/* The number after "KEY " on a line of DIR/FILE ("oom_kill 3"); 0 if absent. */
int cg_read_key (const char *dir, const char *file, const char *key, uint64_t *out, hk_err *err);
/* Sleep with a growing step (for polling the kernel's view): 0.1 ms doubling
 * up to 10 ms.  Returns false once deadline (now_ms) has passed. */
bool cg_backoff (unsigned *step_us, uint64_t deadline);

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
/* cgroup v2 has no devices controller (an eBPF filter, not in hako yet): the
 * rules are accepted only when they add nothing to what /dev holds. */
int cg_v2_devices_check (const struct oci_spec *spec, hk_err *err);

#endif
