/* cgroup_v1: limits, freezing and killing with the legacy per-controller
 * hierarchies (v1 hosts, and the controllers of hybrid ones). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/util.h"
#include "runtime/cgroup/cgroup_internal.h"

/* ---- what the spec needs ----------------------------------------------------------- */

static int
v1_needs (const struct oci_spec *spec, unsigned *ctls, hk_err *err)
{
  const struct oci_resources *r = &spec->linux.resources;
  unsigned n = 0;
  if (r->n_unified)
    return err_set (err, ENOTSUP,
                    "linux.resources.unified.%s: invalid configuration on this host: unified "
                    "keys need cgroup v2, and this host's controllers are cgroup v1",
                    r->unified[0].key);
  if (r->has_memory_swap && r->memory_swap != -1 && r->has_memory_limit && r->memory_limit >= 0
      && r->memory_swap < r->memory_limit)
    return err_set (err, EINVAL,
                    "linux.resources.memory.swap: it counts memory plus swap, so it cannot "
                    "be below the memory limit");
  n |= cg_knob_ctls (r, false, false);
  if (r->n_hugepage_limits)
    n |= CG_HUGETLB;
  if (r->has_blkio_weight || r->n_blkio_devices)
    n |= CG_BLKIO;
  if (r->n_devices)
    {
      /* Translated now so that a rule v1 cannot express fails before
       * anything is made. */
      cleanup_free struct cg_dev_write *w = NULL;
      size_t nw;
      if (cg_v1_device_writes (spec, &w, &nw, err) < 0)
        return -1;
      n |= CG_DEVICES;
    }
  *ctls = n;
  return 0;
}

/* ---- writing the limits ------------------------------------------------------------ */

/* The directory of ctl; cg_prepare made sure it exists when a limit needs it. */
static const char *
dir_of (const struct cg_sandbox *cg, unsigned ctl)
{
  const struct cg_dir *d = cg_dir_v1 (cg, ctl);
  return d ? d->path : NULL;
}

/* A v1 file only some kernels or boot options have (memsw, kmem.tcp): absent,
 * the limit is refused naming the file and why, never dropped. */
static int
v1_write_present (const char *dir, const char *file, const char *field, const char *why, int64_t value,
                  hk_err *err)
{
  if (!cg_file_exists (dir, file))
    return err_set (err, ENOTSUP, "linux.resources.memory.%s: %s/%s does not exist (%s)", field, dir, file,
                    why);
  return cg_writef (dir, file, err, "%" PRId64, value);
}

static int
v1_memory (const char *dir, const struct oci_resources *r, hk_err *err)
{
  /* The kernel keeps memsw >= limit at every write; both start unlimited,
   * so the limit (a row of the table) goes first. */
  if (cg_write_knobs (dir, r, false, CG_MEMORY, err) < 0)
    return -1;
  if (r->has_memory_swap
      && v1_write_present (dir, "memory.memsw.limit_in_bytes", "swap",
                           "swap accounting is off: swapaccount=1", r->memory_swap, err)
             < 0)
    return -1;
  /* v1 charges socket buffers to the cgroup only under this limit. */
  if (r->has_memory_kernel_tcp
      && v1_write_present (dir, "memory.kmem.tcp.limit_in_bytes", "kernelTCP",
                           "this kernel has no v1 TCP memory accounting", r->memory_kernel_tcp, err)
             < 0)
    return -1;
  return 0;
}

static int
v1_devices (const char *dir, const struct oci_spec *spec, hk_err *err)
{
  cleanup_free struct cg_dev_write *w = NULL;
  size_t n;
  if (cg_v1_device_writes (spec, &w, &n, err) < 0)
    return -1;
  for (size_t i = 0; i < n; i++)
    if (cg_write (dir, w[i].allow ? "devices.allow" : "devices.deny", w[i].line, err) < 0)
      return err_prefix (err, "linux.resources.devices");
  return 0;
}

/* The weight file, f ("weight" or "weight_device"): CFQ's blkio.F, else
 * BFQ's blkio.bfq.F (Linux 5.0+ has only BFQ's); neither is an error naming
 * the spec's member. */
static const char *
v1_weight_file (const char *dir, const char *member, const char *f, char buf[64], hk_err *err)
{
  snprintf (buf, 64, "blkio.%s", f);
  if (cg_file_exists (dir, buf))
    return buf;
  snprintf (buf, 64, "blkio.bfq.%s", f);
  if (cg_file_exists (dir, buf))
    return buf;
  err_set (err, ENOTSUP,
           "linux.resources.blockIO.%s: %s has neither blkio.%s nor blkio.bfq.%s (no proportional I/O "
           "scheduler)",
           member, dir, f, f);
  return NULL;
}

static int
v1_blkio (const char *dir, const struct oci_resources *r, hk_err *err)
{
  static const char *const throttle_file[]
      = { "blkio.throttle.read_bps_device", "blkio.throttle.write_bps_device",
          "blkio.throttle.read_iops_device", "blkio.throttle.write_iops_device" };
  char buf[64], dev_buf[64];
  const char *file, *weight_device = NULL;
  /* The default weight first: BFQ's write of it resets every per-device
   * weight, which would drop weightDevice's. */
  if (r->has_blkio_weight
      && ((file = v1_weight_file (dir, "weight", "weight", buf, err)) == NULL
          || cg_writef (dir, file, err, "%u", (unsigned)r->blkio_weight) < 0))
    return -1;
  for (size_t i = 0; i < r->n_blkio_devices; i++)
    {
      const struct oci_blkio_device *t = &r->blkio_devices[i];
      if (t->kind == OCI_BLKIO_WEIGHT)
        {
          /* Looked up once, at the first weightDevice entry. */
          if (weight_device == NULL
              && (weight_device = v1_weight_file (dir, "weightDevice", "weight_device", dev_buf, err))
                     == NULL)
            return -1;
          file = weight_device;
        }
      else
        file = throttle_file[t->kind];
      /* The kernel refuses a device whose scheduler has no weights (EOPNOTSUPP). */
      if (cg_writef (dir, file, err, "%" PRId64 ":%" PRId64 " %" PRIu64, t->major, t->minor, t->value) < 0)
        return err_prefix (err, "linux.resources.blockIO");
    }
  return 0;
}

static int
v1_hugetlb (const char *dir, const struct oci_resources *r, hk_err *err)
{
  for (size_t i = 0; i < r->n_hugepage_limits; i++)
    {
      char file[64];
      snprintf (file, sizeof file, "hugetlb.%s.limit_in_bytes", r->hugepage_limits[i].key);
      if (!cg_file_exists (dir, file))
        return err_set (err, ENOTSUP, "linux.resources.hugepageLimits: no %s in %s (no such page size)", file,
                        dir);
      if (cg_write (dir, file, r->hugepage_limits[i].value, err) < 0)
        return -1;
    }
  return 0;
}

/* On hybrid, without a v1 devices cgroup: the filter on the cgroup2 dir. */
static int
v1_filter (const struct cg_sandbox *cg, const struct oci_spec *spec, hk_err *err)
{
  const struct cg_dir *v2 = cg_dir_v2 (cg);
  if (dir_of (cg, CG_DEVICES) || v2 == NULL)
    return 0;
  return cg_devices_filter (v2->path, spec, err);
}

static int
v1_apply (const struct cg_sandbox *cg, const struct oci_spec *spec, hk_err *err)
{
  const struct oci_resources *r = &spec->linux.resources;
  const char *mem = dir_of (cg, CG_MEMORY), *cpu = dir_of (cg, CG_CPU), *cpuset = dir_of (cg, CG_CPUSET);
  const char *pids = dir_of (cg, CG_PIDS), *dev = dir_of (cg, CG_DEVICES), *blk = dir_of (cg, CG_BLKIO);
  const char *huge = dir_of (cg, CG_HUGETLB);
  if (mem && v1_memory (mem, r, err) < 0)
    return -1;
  if ((pids && cg_write_knobs (pids, r, false, CG_PIDS, err) < 0)
      || (cpu && cg_write_knobs (cpu, r, false, CG_CPU, err) < 0)
      || (cpuset && cg_write_knobs (cpuset, r, false, CG_CPUSET, err) < 0))
    return -1;
  /* The spec's device rules or the default ones (cgroup_devices.c), in the
   * v1 devices cgroup; on hybrid, rules that add nothing to hako's /dev
   * are an eBPF filter on the cgroup2 dir instead (cg_prepare). */
  if (dev && v1_devices (dev, spec, err) < 0)
    return -1;
  const struct cg_dir *v2 = cg_dir_v2 (cg);
  if (!dev && r->n_devices && v2 == NULL && !cg_v2_devices_harmless (spec))
    return err_set (err, EACCES,
                    "linux.resources.devices: the eBPF device filter needs the sandbox's "
                    "cgroup2 dir, which could not be made (not writable by this user)");
  if (!cg->defer_filter && v1_filter (cg, spec, err) < 0)
    return -1;
  if (blk && v1_blkio (blk, r, err) < 0)
    return -1;
  if (huge && v1_hugetlb (huge, r, err) < 0)
    return -1;
  return 0;
}

/* ---- freezing and killing ---------------------------------------------------------- */

/* Write want to freezer.state and read it back until the kernel reports it.
 * Freezing can sit in FREEZING while tasks fork or are being added; writing
 * FROZEN again now and then nudges it along (runc found the same). */
static int
set_freezer (const char *dir, const char *want, hk_err *err)
{
  uint64_t deadline = now_ms () + 10000, nudge = now_ms () + 50;
  unsigned step = 0;
  if (cg_write (dir, "freezer.state", want, err) < 0)
    return -1;
  for (;;)
    {
      char state[32];
      if (cg_read (dir, "freezer.state", state, sizeof state, err) < 0)
        return -1;
      if (strcmp (state, want) == 0)
        return 0;
      if (now_ms () >= nudge)
        {
          if (cg_write (dir, "freezer.state", want, err) < 0)
            return -1;
          nudge = now_ms () + 50;
        }
      if (!cg_backoff (&step, deadline))
        return err_set (err, ETIMEDOUT, "%s/freezer.state: still %s, not %s, after 10 s", dir, state, want);
    }
}

static int
v1_freeze (const struct cg_sandbox *cg, bool frozen, hk_err *err)
{
  const char *dir = dir_of (cg, CG_FREEZER);
  if (!frozen)
    return set_freezer (dir, "THAWED", err);
  if (set_freezer (dir, "FROZEN", err) == 0)
    return 0;
  hk_err ignored;
  cg_write (dir, "freezer.state", "THAWED", &ignored); /* half-frozen is worse than not frozen */
  return -1;
}

/* Freeze, so that nothing forks between reading the list and the kills; kill
 * every task; thaw, so that they can die. */
static int
v1_kill (const struct cg_sandbox *cg, hk_err *err)
{
  const char *dir = dir_of (cg, CG_FREEZER);
  hk_err ignored;
  size_t n;
  set_freezer (dir, "FROZEN", &ignored);
  int r = cg_kill_procs (dir, &n, err);
  if (cg_write (dir, "freezer.state", "THAWED", r < 0 ? &ignored : err) < 0)
    r = -1;
  return r;
}

/* ---- update and stats ---------------------------------------------------------------- */

static int
memory_write (const char *dir, const char *file, int64_t v, hk_err *err)
{
  if (cg_writef (dir, file, err, "%" PRId64, v) == 0)
    return 0;
  if (err->errnum == EBUSY)
    {
      uint64_t usage = 0;
      hk_err ignored;
      cg_read_u64 (dir, "memory.usage_in_bytes", &usage, &ignored);
      return err_set (err, EBUSY,
                      "cannot lower the memory limit to %" PRId64 ": the sandbox uses %" PRIu64
                      " bytes and the kernel could not reclaim enough (%s/%s: Device or resource busy)",
                      v, usage, dir, file);
    }
  return -1;
}

/* The kernel keeps memory.memsw.limit >= memory.limit at every write: raise
 * memsw first when the new limit passes the current memsw, else the limit
 * first.  A limit lifted (-1) with no swap given lifts memory+swap too, as
 * runc's update does: no finite memsw can stay above an unlimited limit. */
static int
v1_update_memory (const char *dir, const struct oci_resources *upd, hk_err *err)
{
  bool has_memsw = cg_file_exists (dir, "memory.memsw.limit_in_bytes");
  bool lifted = upd->has_memory_limit && upd->memory_limit == -1;
  bool swap = upd->has_memory_swap || (lifted && has_memsw);
  int64_t swap_to = upd->has_memory_swap ? upd->memory_swap : -1;
  if (swap && !has_memsw)
    return err_set (err, ENOTSUP,
                    "memory swap: %s/memory.memsw.limit_in_bytes does not exist (swap accounting is off)",
                    dir);
  uint64_t memsw = UINT64_MAX;
  hk_err ignored;
  if (swap && upd->has_memory_limit)
    cg_read_u64 (dir, "memory.memsw.limit_in_bytes", &memsw, &ignored);
  bool swap_first = swap && upd->has_memory_limit && (lifted || (uint64_t)upd->memory_limit > memsw);
  if (swap_first && memory_write (dir, "memory.memsw.limit_in_bytes", swap_to, err) < 0)
    return -1;
  if (upd->has_memory_limit && memory_write (dir, "memory.limit_in_bytes", upd->memory_limit, err) < 0)
    return -1;
  if (swap && !swap_first && memory_write (dir, "memory.memsw.limit_in_bytes", swap_to, err) < 0)
    return -1;
  if (upd->has_memory_reservation
      && cg_writef (dir, "memory.soft_limit_in_bytes", err, "%" PRId64, upd->memory_reservation) < 0)
    return -1;
  return 0;
}

static int
v1_update (const struct cg_sandbox *cg, const struct oci_resources *upd, const struct oci_resources *merged,
           hk_err *err)
{
  (void)merged;
  static const unsigned order[] = { CG_MEMORY, CG_PIDS, CG_CPU, CG_CPUSET };
  unsigned want = cg_knob_ctls (upd, false, true);
  /* Every controller is checked before the first write: a refused update
   * changes nothing. */
  for (size_t i = 0; i < sizeof order / sizeof *order; i++)
    if ((want & order[i]) && !dir_of (cg, order[i]))
      return cg_update_missing (order[i], false, err);
  if ((want & CG_MEMORY) && v1_update_memory (dir_of (cg, CG_MEMORY), upd, err) < 0)
    return -1;
  for (size_t i = 1; i < sizeof order / sizeof *order; i++)
    if ((want & order[i]) && cg_write_knobs (dir_of (cg, order[i]), upd, false, order[i], err) < 0)
      return -1;
  return 0;
}

static void
add_raw (const char *key, uint64_t v, void *arg)
{
  oci_stats_add_raw (arg, key, v);
}

static void
take_throttling (const char *key, uint64_t v, void *arg)
{
  struct oci_stats *s = arg;
  if (strcmp (key, "nr_periods") == 0)
    s->periods = v;
  else if (strcmp (key, "nr_throttled") == 0)
    s->throttled_periods = v;
  else if (strcmp (key, "throttled_time") == 0)
    s->throttled_ns = v;
}

static void
take_cpuacct (const char *key, uint64_t v, void *arg)
{
  struct oci_stats *s = arg;
  long hz = sysconf (_SC_CLK_TCK);
  uint64_t ns = v * (1000000000ull / (uint64_t)(hz > 0 ? hz : 100));
  if (strcmp (key, "user") == 0)
    s->cpu_user_ns = ns;
  else if (strcmp (key, "system") == 0)
    s->cpu_kernel_ns = ns;
}

static int
v1_stats_memory (const char *dir, struct oci_stats *s, hk_err *err)
{
  if (cg_read_u64 (dir, "memory.usage_in_bytes", &s->mem.usage, err) < 0
      || cg_read_u64 (dir, "memory.max_usage_in_bytes", &s->mem.max, err) < 0
      || cg_read_u64 (dir, "memory.limit_in_bytes", &s->mem.limit, err) < 0
      || cg_read_u64 (dir, "memory.failcnt", &s->mem.failcnt, err) < 0
      || cg_read_kv (dir, "memory.stat", add_raw, s, err) < 0)
    return -1;
  s->has_memory = true;
  if (cg_file_exists (dir, "memory.memsw.usage_in_bytes"))
    {
      if (cg_read_u64 (dir, "memory.memsw.usage_in_bytes", &s->swap.usage, err) < 0
          || cg_read_u64 (dir, "memory.memsw.max_usage_in_bytes", &s->swap.max, err) < 0
          || cg_read_u64 (dir, "memory.memsw.limit_in_bytes", &s->swap.limit, err) < 0
          || cg_read_u64 (dir, "memory.memsw.failcnt", &s->swap.failcnt, err) < 0)
        return -1;
      s->has_swap = true;
    }
  return 0;
}

static int
v1_stats_cpu (const char *acct, const char *cpu, struct oci_stats *s, hk_err *err)
{
  if (acct)
    {
      char buf[4096];
      if (cg_read_u64 (acct, "cpuacct.usage", &s->cpu_total_ns, err) < 0
          || cg_read_kv (acct, "cpuacct.stat", take_cpuacct, s, err) < 0
          || cg_read (acct, "cpuacct.usage_percpu", buf, sizeof buf, err) < 0)
        return -1;
      for (char *p = buf, *end; *p; p = end)
        {
          uint64_t v = strtoull (p, &end, 10);
          if (end == p)
            break;
          s->cpu_percpu_ns = xrealloc (s->cpu_percpu_ns, (s->n_percpu + 1) * sizeof *s->cpu_percpu_ns);
          s->cpu_percpu_ns[s->n_percpu++] = v;
        }
      s->has_cpu = true;
    }
  if (cpu && cg_file_exists (cpu, "cpu.stat"))
    {
      if (cg_read_kv (cpu, "cpu.stat", take_throttling, s, err) < 0)
        return -1;
      s->has_throttling = true;
    }
  return 0;
}

/* Without a pids cgroup (no limit was set): the tasks listed in dir/file. */
static int
count_tasks (const char *dir, const char *file, uint64_t *n, hk_err *err)
{
  cleanup_free char *path = xasprintf ("%s/%s", dir, file);
  cleanup_free char *text = NULL;
  if (file_read_all (path, 1 << 22, &text, NULL, err) < 0)
    return -1;
  *n = 0;
  for (char *p = text; *p; p++)
    *n += *p == '\n';
  return 0;
}

static int
v1_stats (const struct cg_sandbox *cg, struct oci_stats *s, hk_err *err)
{
  const char *mem = dir_of (cg, CG_MEMORY), *pids = dir_of (cg, CG_PIDS), *fz = dir_of (cg, CG_FREEZER);
  if (mem && v1_stats_memory (mem, s, err) < 0)
    return -1;
  if (v1_stats_cpu (dir_of (cg, CG_CPUACCT), dir_of (cg, CG_CPU), s, err) < 0)
    return -1;
  /* Hybrid, without a cpuacct cgroup (no cpu limit): the cgroup2 dir that
   * tracks the processes counts their CPU time all the same. */
  const struct cg_dir *v2 = cg_dir_v2 (cg);
  if (!s->has_cpu && v2)
    {
      bool throttling = s->has_throttling;
      if (cg_v2_cpu_stat (v2->path, s, err) < 0)
        return -1;
      s->has_throttling = throttling;
    }
  if (pids)
    {
      if (cg_read_u64 (pids, "pids.current", &s->pids_current, err) < 0
          || cg_read_u64 (pids, "pids.max", &s->pids_limit, err) < 0)
        return -1;
      if (s->pids_limit == UINT64_MAX)
        s->pids_limit = 0;
      s->has_pids = true;
    }
  else if (fz || v2)
    {
      /* The tasks the freezer, or the cgroup2 dir that tracks them, holds. */
      if (fz ? count_tasks (fz, "tasks", &s->pids_current, err) < 0
             : count_tasks (v2->path, "cgroup.threads", &s->pids_current, err) < 0)
        return -1;
      s->has_pids = true;
    }
  return 0;
}

/* memory.oom_control's "oom_kill" (4.13+), with the exec slots'. */
static int
v1_oom_kills (const struct cg_sandbox *cg, uint64_t *n, hk_err *err)
{
  const char *dir = dir_of (cg, CG_MEMORY);
  *n = 0;
  return dir ? cg_v1_oom_kills (dir, n, err) : 0;
}

const struct cg_backend cg_v1_backend = {
  .name = "v1",
  .needs = v1_needs,
  .apply = v1_apply,
  .filter = v1_filter,
  .freeze = v1_freeze,
  .kill = v1_kill,
  .update = v1_update,
  .stats = v1_stats,
  .oom_kills = v1_oom_kills,
};
