/* knobs: the table of linux.resources' one-value cgroup limits (knobs.h). */
#include "oci/knobs.h"

#include <stdlib.h>
#include <string.h>

#define OFF(f) offsetof (struct oci_resources, f)
#define I64(obj, key, min, f) obj, key, OCI_KNOB_I64, min, INT64_MAX, OFF (has_##f), OFF (f)
#define U64(obj, key, max, f) obj, key, OCI_KNOB_U64, 0, max, OFF (has_##f), OFF (f)
#define FLAG(obj, key, f) obj, key, OCI_KNOB_BOOL, 0, 0, 0, OFF (f)
#define STR(obj, key, f) obj, key, OCI_KNOB_STR, 0, 0, 0, OFF (f)

/* In the order of the writes: a v1 memory limit before memsw (the kernel
 * keeps memsw >= limit; memsw is written by hand after the table's rows),
 * and the cpu period before the quota (a quota is checked against the
 * period in force), the realtime period before the runtime. */
const struct oci_knob oci_knobs[] = {
  { I64 ("memory", "limit", -1, memory_limit), "memory", "memory.limit_in_bytes", "memory.max",
    OCI_CONV_AS_IS, OCI_CONV_MAX_NEG, true, NULL },
  { I64 ("memory", "reservation", -1, memory_reservation), "memory", "memory.soft_limit_in_bytes",
    "memory.low", OCI_CONV_AS_IS, OCI_CONV_MAX_NEG, true, NULL },
  { I64 ("memory", "swap", -1, memory_swap), "memory", "memory.memsw.limit_in_bytes", "memory.swap.max",
    OCI_CONV_BY_HAND, OCI_CONV_BY_HAND, true, NULL },
  /* Enforced by no Linux: accepted under a memory limit no larger (cgroup.c). */
  { I64 ("memory", "kernel", -1, memory_kernel), "memory", NULL, NULL, OCI_CONV_NONE, OCI_CONV_NONE, false,
    NULL },
  /* v2 counts socket memory in memory.max: accepted under a limit no larger (cgroup_v2.c). */
  { I64 ("memory", "kernelTCP", -1, memory_kernel_tcp), "memory", "memory.kmem.tcp.limit_in_bytes", NULL,
    OCI_CONV_BY_HAND, OCI_CONV_NONE, false, NULL },
  { U64 ("memory", "swappiness", 100, memory_swappiness), "memory", "memory.swappiness", NULL, OCI_CONV_AS_IS,
    OCI_CONV_NONE, false, "cgroup v2 has no per-cgroup swappiness" },
  { FLAG ("memory", "disableOOMKiller", disable_oom_killer), "memory", "memory.oom_control", NULL,
    OCI_CONV_FLAG, OCI_CONV_NONE, false, "cgroup v2 cannot disable the OOM killer" },
  { I64 ("pids", "limit", INT64_MIN, pids_limit), "pids", "pids.max", "pids.max", OCI_CONV_MAX_NPOS,
    OCI_CONV_MAX_NPOS, true, NULL },
  { U64 ("cpu", "shares", UINT64_MAX, cpu_shares), "cpu", "cpu.shares", "cpu.weight", OCI_CONV_AS_IS,
    OCI_CONV_WEIGHT, true, NULL },
  { U64 ("cpu", "period", UINT64_MAX, cpu_period), "cpu", "cpu.cfs_period_us", "cpu.max", OCI_CONV_AS_IS,
    OCI_CONV_BY_HAND, true, NULL },
  { I64 ("cpu", "quota", -1, cpu_quota), "cpu", "cpu.cfs_quota_us", "cpu.max", OCI_CONV_AS_IS,
    OCI_CONV_BY_HAND, true, NULL },
  { U64 ("cpu", "realtimePeriod", UINT64_MAX, cpu_realtime_period), "cpu", "cpu.rt_period_us", NULL,
    OCI_CONV_AS_IS, OCI_CONV_NONE, false, "cgroup v2 has no realtime scheduling limits" },
  { I64 ("cpu", "realtimeRuntime", -1, cpu_realtime_runtime), "cpu", "cpu.rt_runtime_us", NULL,
    OCI_CONV_AS_IS, OCI_CONV_NONE, false, "cgroup v2 has no realtime scheduling limits" },
  { STR ("cpu", "cpus", cpu_cpus), "cpuset", "cpuset.cpus", "cpuset.cpus", OCI_CONV_AS_IS, OCI_CONV_AS_IS,
    true, NULL },
  { STR ("cpu", "mems", cpu_mems), "cpuset", "cpuset.mems", "cpuset.mems", OCI_CONV_AS_IS, OCI_CONV_AS_IS,
    true, NULL },
};
const size_t oci_n_knobs = sizeof oci_knobs / sizeof *oci_knobs;

static const void *
at (const struct oci_resources *r, size_t off)
{
  return (const char *)r + off;
}

bool
oci_knob_is_set (const struct oci_knob *k, const struct oci_resources *r)
{
  switch (k->type)
    {
    case OCI_KNOB_BOOL: return *(const bool *)at (r, k->val);
    case OCI_KNOB_STR: return *(char *const *)at (r, k->val) != NULL;
    default: return *(const bool *)at (r, k->has);
    }
}

int64_t
oci_knob_i64 (const struct oci_knob *k, const struct oci_resources *r)
{
  switch (k->type)
    {
    case OCI_KNOB_I64: return *(const int64_t *)at (r, k->val);
    case OCI_KNOB_U64: return (int64_t) * (const uint64_t *)at (r, k->val);
    case OCI_KNOB_BOOL: return *(const bool *)at (r, k->val);
    default: return 0;
    }
}

uint64_t
oci_knob_u64 (const struct oci_knob *k, const struct oci_resources *r)
{
  return k->type == OCI_KNOB_U64 ? *(const uint64_t *)at (r, k->val) : (uint64_t)oci_knob_i64 (k, r);
}

const char *
oci_knob_str (const struct oci_knob *k, const struct oci_resources *r)
{
  return k->type == OCI_KNOB_STR ? *(char *const *)at (r, k->val) : NULL;
}

bool
oci_knobs_any (const struct oci_resources *r, bool updatable)
{
  for (size_t i = 0; i < oci_n_knobs; i++)
    if ((oci_knobs[i].update || !updatable) && oci_knob_is_set (&oci_knobs[i], r))
      return true;
  return false;
}

const struct oci_knob *
oci_knobs_unchangeable (const struct oci_resources *r)
{
  for (size_t i = 0; i < oci_n_knobs; i++)
    if (!oci_knobs[i].update && oci_knob_is_set (&oci_knobs[i], r))
      return &oci_knobs[i];
  return NULL;
}
