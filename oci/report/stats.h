/* stats: a sandbox's resource usage and its processes, and their JSON in
 * runc's shapes (`events --stats`, `events` lines, `ps --format json`). */
#ifndef HAKO_OCI_STATS_H
#define HAKO_OCI_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/err.h"

struct oci_kv_u64
{
  char *key;
  uint64_t value;
};

/* A usage/limit record as runc's MemoryEntry. */
struct oci_mem_entry
{
  uint64_t usage, max, limit, failcnt;
};

struct oci_stats
{
  bool has_cpu;
  uint64_t cpu_total_ns, cpu_user_ns, cpu_kernel_ns;
  uint64_t *cpu_percpu_ns;
  size_t n_percpu;
  bool has_throttling;
  uint64_t periods, throttled_periods, throttled_ns;

  bool has_memory;
  struct oci_mem_entry mem, swap;
  bool has_swap;
  struct oci_kv_u64 *mem_raw; /* memory.stat, as the kernel names them */
  size_t n_mem_raw;

  bool has_pids;
  uint64_t pids_current, pids_limit; /* limit 0: none */

  /* hako's additions to runc's shapes: the CPUs the sandbox may use, in
   * thousandths (its affinity, bounded by its quota: "cpu.limit"); the memory
   * it may use (its limit, bounded by the host's: "memory.total"); its disk
   * limit's filesystem, used and in all ("disk"). */
  uint64_t cpu_limit_milli; /* 0: unknown */
  uint64_t mem_total;       /* 0: unknown */
  bool has_disk;
  uint64_t disk_used, disk_total;
};

void oci_stats_free (struct oci_stats *s);
/* Append key=value to s->mem_raw. */
void oci_stats_add_raw (struct oci_stats *s, const char *key, uint64_t value);

/* {"type":"stats","id":ID,"data":{"cpu":..,"memory":..,"pids":..}} */
int oci_stats_event_json (const char *id, const struct oci_stats *s, char **out, size_t *len, hk_err *err);
/* {"type":TYPE,"id":ID} (an "oom" event, as runc's). */
int oci_event_json (const char *type, const char *id, char **out, size_t *len, hk_err *err);

/* One process of a sandbox, for ps. */
struct oci_proc
{
  pid_t pid, ppid; /* as the host sees them */
  pid_t ns_pid;    /* as the sandbox sees it (0 when unknown) */
  uid_t uid;       /* real uid, on the host */
  char *user;      /* the host's name for uid, or its number */
  char state;      /* R, S, D, T, Z ... */
  uint64_t cpu_ms; /* user + system time */
  char *start;     /* "HH:MM" (today) or "MonDD" */
  char *command;   /* argv joined by spaces, or [comm] */
};

void oci_procs_free (struct oci_proc *p, size_t n);
/* [pid, ...]: what `runc ps --format json` prints and its clients parse
 * (containerd's shim). */
int oci_pids_json (const struct oci_proc *p, size_t n, char **out, size_t *len, hk_err *err);
/* [{"pid":..,"ppid":..,"ns_pid":..,"user":..,"uid":..,"state":..,"command":..}, ...] */
int oci_procs_json (const struct oci_proc *p, size_t n, char **out, size_t *len, hk_err *err);

#endif
