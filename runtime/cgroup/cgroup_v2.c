/* cgroup_v2: limits, freezing and killing in the unified (cgroup2) hierarchy. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util.h"
#include "runtime/cgroup/cgroup_bpf.h"
#include "runtime/cgroup/cgroup_internal.h"

/* ---- what the spec needs ----------------------------------------------------------- */

/* A unified key is a file of the sandbox's own cgroup: "memory.high".  Files
 * that move, kill or freeze processes are hako's to write, not the spec's. */
static int
unified_key_ctl (const char *key, unsigned *ctl, hk_err *err)
{
  static const char *const reserved[] = { "cgroup.procs",  "cgroup.threads",         "cgroup.kill",
                                          "cgroup.freeze", "cgroup.subtree_control", "cgroup.type" };
  const char *dot = strchr (key, '.');
  *ctl = 0;
  if (dot == NULL || dot == key || strchr (key, '/') || key[0] == '.')
    return err_set (err, EINVAL, "linux.resources.unified: \"%s\" is not a cgroup file name", key);
  for (size_t i = 0; i < sizeof reserved / sizeof *reserved; i++)
    if (strcmp (key, reserved[i]) == 0)
      return err_set (err, EINVAL, "linux.resources.unified: \"%s\" is hako's to write", key);
  if ((size_t)(dot - key) == 6 && memcmp (key, "cgroup", 6) == 0)
    return 0;
  *ctl = cg_ctl_bit (key, dot - key, true);
  if (*ctl == 0)
    return err_set (err, ENOTSUP,
                    "linux.resources.unified: \"%s\": controller \"%.*s\" is not one hako "
                    "manages",
                    key, (int)(dot - key), key);
  return 0;
}

static int
v2_needs (const struct oci_spec *spec, unsigned *ctls, hk_err *err)
{
  const struct oci_resources *r = &spec->linux.resources;
  unsigned n = 0;
  if (cg_knobs_refuse_v2 (r, err) < 0)
    return -1;
  if (r->has_memory_kernel_tcp && !cg_limit_bounds_tcp (r))
    return err_set (err, ENOTSUP,
                    "linux.resources.memory.kernelTCP: cgroup v2 has no separate TCP memory "
                    "limit; it is accepted only with a memory.limit no larger (socket memory "
                    "counts in memory.max, which then enforces it)");
  if (r->has_memory_swap && r->memory_swap != -1
      && (!r->has_memory_limit || r->memory_limit < 0 || r->memory_swap < r->memory_limit))
    return err_set (err, EINVAL,
                    "linux.resources.memory.swap: it counts memory plus swap, so it needs "
                    "a memory limit no larger than it");
  n |= cg_knob_ctls (r, true, false);
  if (r->n_hugepage_limits)
    n |= CG_HUGETLB;
  if (r->has_blkio_weight || r->n_blkio_devices)
    n |= CG_BLKIO;
  if (r->n_devices)
    {
      /* Built now so that a rule list too long for one program fails
       * before anything is made; loaded and attached by apply. */
      cleanup_free struct cg_dev_rule *rules = NULL;
      cleanup_free struct bpf_insn *prog = NULL;
      size_t nr, len;
      if (cg_device_rules (spec, &rules, &nr) < 0 || cg_bpf_devices_prog (rules, nr, &prog, &len, err) < 0)
        return -1;
    }
  for (size_t i = 0; i < r->n_unified; i++)
    {
      unsigned ctl;
      if (unified_key_ctl (r->unified[i].key, &ctl, err) < 0)
        return -1;
      n |= ctl;
    }
  *ctls = n;
  return 0;
}

/* ---- writing the limits ------------------------------------------------------------ */

/* A controller's files appear in a cgroup only once every ancestor enables it
 * for its children: from the hierarchy's root down to the sandbox's parent,
 * add what is missing (reading first: most hosts already have it). */
static int
enable_controllers (const struct cg_dir *d, hk_err *err)
{
  char buf[PATH_MAX];
  size_t mlen = strlen (d->mount);
  snprintf (buf, sizeof buf, "%s", d->path);
  char *end = strrchr (buf, '/');
  for (char *p = buf + mlen;; p = strchr (p + 1, '/'))
    {
      char saved = *p;
      *p = '\0';
      char on[512], add[512] = "";
      if (cg_read (buf, "cgroup.subtree_control", on, sizeof on, err) < 0)
        return -1;
      /* subtree_control reads "memory pids" (a fake tree may echo "+memory"). */
      for (char *c = on; *c; c++)
        if (*c == '+')
          *c = ' ';
      unsigned missing = d->ctls;
      char *save = NULL;
      for (char *tok = strtok_r (on, " ", &save); tok; tok = strtok_r (NULL, " ", &save))
        missing &= ~cg_ctl_bit (tok, strlen (tok), true);
      for (unsigned bit = 1; bit && bit <= missing; bit <<= 1)
        if (missing & bit)
          snprintf (add + strlen (add), sizeof add - strlen (add), "%s+%s", add[0] ? " " : "",
                    cg_ctl_name (bit, true));
      if (add[0] && cg_write (buf, "cgroup.subtree_control", add, err) < 0)
        return err_prefix (err, "enable the controllers the limits need");
      *p = saved;
      if (p == end)
        return 0;
    }
}

static int
write_max (const char *dir, const char *file, int64_t v, hk_err *err)
{
  return v < 0 ? cg_write (dir, file, "max", err) : cg_writef (dir, file, err, "%" PRId64, v);
}

/* memory.low, memory.max, pids.max, cpu.weight and cpuset.* are rows of the
 * table (cg_write_knobs); what follows depends on more than one knob. */
static int
v2_swap (const char *dir, const struct oci_resources *r, hk_err *err)
{
  if (!r->has_memory_swap)
    return 0;
  if (!cg_file_exists (dir, "memory.swap.max"))
    return err_set (err, ENOTSUP,
                    "linux.resources.memory.swap: %s/memory.swap.max does not exist (no "
                    "swap accounting in this kernel)",
                    dir);
  /* OCI's swap is memory plus swap; cgroup v2 limits the swap alone. */
  int64_t swap = r->memory_swap < 0 ? -1 : r->memory_swap - r->memory_limit;
  return write_max (dir, "memory.swap.max", swap, err);
}

/* cpu.max takes the quota and the period together. */
static int
v2_cpu_max (const char *dir, const struct oci_resources *r, hk_err *err)
{
  if (r->has_cpu_quota || r->has_cpu_period)
    {
      char quota[32] = "max";
      if (r->has_cpu_quota && r->cpu_quota > 0)
        snprintf (quota, sizeof quota, "%" PRId64, r->cpu_quota);
      if (r->has_cpu_period)
        return cg_writef (dir, "cpu.max", err, "%s %" PRIu64, quota, r->cpu_period);
      return cg_write (dir, "cpu.max", quota, err);
    }
  return 0;
}

/* blkio's weight (10..1000) in io.weight's range (1..10000). */
static unsigned
v2_io_weight (uint64_t w)
{
  return 1 + ((unsigned)w - 10) * 9999 / 990;
}

static int
v2_io (const char *dir, const struct oci_resources *r, hk_err *err)
{
  static const char *const key[] = { "rbps", "wbps", "riops", "wiops" };
  /* BFQ takes blkio's 10..1000 as is.  The default weight first: BFQ's
   * write of it resets every per-device weight, which would drop
   * weightDevice's. */
  bool bfq = cg_file_exists (dir, "io.bfq.weight");
  if (r->has_blkio_weight
      && (bfq ? cg_writef (dir, "io.bfq.weight", err, "%u", (unsigned)r->blkio_weight)
              : cg_writef (dir, "io.weight", err, "default %u", v2_io_weight (r->blkio_weight)))
             < 0)
    return -1;
  for (size_t i = 0; i < r->n_blkio_devices; i++)
    {
      const struct oci_blkio_device *t = &r->blkio_devices[i];
      int w;
      if (t->kind != OCI_BLKIO_WEIGHT)
        w = cg_writef (dir, "io.max", err, "%" PRId64 ":%" PRId64 " %s=%" PRIu64, t->major, t->minor,
                       key[t->kind], t->value);
      else if (bfq)
        w = cg_writef (dir, "io.bfq.weight", err, "%" PRId64 ":%" PRId64 " %" PRIu64, t->major, t->minor,
                       t->value);
      else
        w = cg_writef (dir, "io.weight", err, "%" PRId64 ":%" PRId64 " %u", t->major, t->minor,
                       v2_io_weight (t->value));
      if (w < 0)
        return err_prefix (err, "linux.resources.blockIO");
    }
  return 0;
}

/* Enable what d's limits need in its ancestors and write r's limits. */
static int
v2_limits (const struct cg_dir *d, const struct oci_resources *r, hk_err *err)
{
  const char *dir = d->path;
  if (d->ctls && enable_controllers (d, err) < 0)
    return -1;
  if (cg_write_knobs (dir, r, true, CG_MEMORY | CG_PIDS | CG_CPU | CG_CPUSET, err) < 0
      || v2_swap (dir, r, err) < 0 || v2_cpu_max (dir, r, err) < 0 || v2_io (dir, r, err) < 0)
    return -1;
  for (size_t i = 0; i < r->n_hugepage_limits; i++)
    {
      char file[64];
      snprintf (file, sizeof file, "hugetlb.%s.max", r->hugepage_limits[i].key);
      if (!cg_file_exists (dir, file))
        return err_set (err, ENOTSUP, "linux.resources.hugepageLimits: no %s in %s (no such page size)", file,
                        dir);
      if (cg_write (dir, file, r->hugepage_limits[i].value, err) < 0)
        return -1;
    }
  for (size_t i = 0; i < r->n_unified; i++)
    if (cg_write (dir, r->unified[i].key, r->unified[i].value, err) < 0)
      return err_prefix (err, "linux.resources.unified");
  return 0;
}

static int
v2_filter (const struct cg_sandbox *cg, const struct oci_spec *spec, hk_err *err)
{
  const struct cg_dir *d = cg_dir_v2 (cg);
  return d ? cg_devices_filter (d->path, spec, err) : 0;
}

static int
v2_apply (const struct cg_sandbox *cg, const struct oci_spec *spec, hk_err *err)
{
  const struct oci_resources *r = &spec->linux.resources;
  const struct cg_dir *d = cg_dir_v2 (cg);
  if (d == NULL && r->n_devices && !cg_v2_devices_harmless (spec))
    return err_set (err, EACCES,
                    "linux.resources.devices: the eBPF device filter needs the sandbox's own cgroup, "
                    "which could not be made (not writable by this user)");
  if (d == NULL)
    return 0; /* optional and skipped: no limit needed it */
  /* The spec's device rules, or the default ones (cgroup_devices.c): every
   * sandbox gets the filter. */
  if (v2_limits (d, r, err) < 0 || (!cg->defer_filter && v2_filter (cg, spec, err) < 0))
    return -1;
  return 0;
}

/* ---- freezing and killing ---------------------------------------------------------- */

/* cgroup.events reads "populated N\nfrozen N\n". */
static int
frozen_is (const char *dir, bool want, hk_err *err)
{
  char buf[256];
  if (cg_read (dir, "cgroup.events", buf, sizeof buf, err) < 0)
    return -1;
  const char *f = strstr (buf, "frozen ");
  return f && (f[7] == '1') == want;
}

static int
v2_freeze (const struct cg_sandbox *cg, bool frozen, hk_err *err)
{
  const char *dir = cg_dir_v2 (cg)->path;
  if (cg_write (dir, "cgroup.freeze", frozen ? "1" : "0", err) < 0)
    return -1;
  uint64_t deadline = now_ms () + 10000;
  unsigned step = 0;
  for (;;)
    {
      int r = frozen_is (dir, frozen, err);
      if (r < 0)
        return -1;
      if (r)
        return 0;
      if (!cg_backoff (&step, deadline))
        break;
    }
  hk_err ignored;
  if (frozen)
    cg_write (dir, "cgroup.freeze", "0", &ignored); /* half-frozen is worse than not frozen */
  return err_set (err, ETIMEDOUT, "%s: not %s after 10 s", dir, frozen ? "frozen" : "thawed");
}

/* Without cgroup.kill (before 5.14): freeze so nothing forks meanwhile, kill
 * every process, thaw so they die. */
static int
v2_kill (const struct cg_sandbox *cg, hk_err *err)
{
  const char *dir = cg_dir_v2 (cg)->path;
  hk_err ignored;
  size_t n;
  v2_freeze (cg, true, &ignored);
  int r = cg_kill_procs (dir, &n, err);
  if (cg_write (dir, "cgroup.freeze", "0", r < 0 ? &ignored : err) < 0)
    r = -1;
  return r;
}

/* ---- update and stats ---------------------------------------------------------------- */

/* On v2 the sandbox's cgroup is there whatever the limits; a controller no
 * limit needed at create is enabled now in its ancestors (the sandbox's own
 * cgroup holds processes, but its parent does not). */
static int
v2_update (const struct cg_sandbox *cg, const struct oci_resources *upd, const struct oci_resources *merged,
           hk_err *err)
{
  const struct cg_dir *d = cg_dir_v2 (cg);
  if (d == NULL)
    return cg_update_missing (upd->has_pids_limit ? CG_PIDS : CG_MEMORY, true, err);
  struct cg_dir need = *d;
  need.ctls = cg_knob_ctls (upd, true, true);
  if (need.ctls && enable_controllers (&need, err) < 0)
    return -1;
  /* memory.swap.max is swap alone: it is computed from the merged limit; and
   * cpu.max takes quota and period together. */
  struct oci_resources r = *upd;
  if (r.has_memory_swap)
    {
      r.has_memory_limit = merged->has_memory_limit;
      r.memory_limit = merged->memory_limit;
    }
  if (r.has_cpu_quota || r.has_cpu_period)
    {
      r.has_cpu_quota = merged->has_cpu_quota;
      r.cpu_quota = merged->cpu_quota;
      r.has_cpu_period = merged->has_cpu_period;
      r.cpu_period = merged->cpu_period;
    }
  r.n_devices = 0;
  r.n_unified = 0;
  r.n_hugepage_limits = 0;
  r.has_blkio_weight = false;
  r.n_blkio_devices = 0;
  return v2_limits (&need, &r, err);
}

static void
add_raw (const char *key, uint64_t v, void *arg)
{
  oci_stats_add_raw (arg, key, v);
}

static void
take_events (const char *key, uint64_t v, void *arg)
{
  if (strcmp (key, "max") == 0)
    *(uint64_t *)arg = v;
}

static int
v2_stats (const struct cg_sandbox *cg, struct oci_stats *s, hk_err *err)
{
  const struct cg_dir *d = cg_dir_v2 (cg);
  if (d == NULL)
    return 0;
  const char *dir = d->path;
  if (cg_v2_cpu_stat (dir, s, err) < 0)
    return -1;
  if (cg_file_exists (dir, "memory.current"))
    {
      if (cg_read_u64 (dir, "memory.current", &s->mem.usage, err) < 0
          || cg_read_u64 (dir, "memory.max", &s->mem.limit, err) < 0
          || cg_read_kv (dir, "memory.events", take_events, &s->mem.failcnt, err) < 0
          || cg_read_kv (dir, "memory.stat", add_raw, s, err) < 0)
        return -1;
      if (cg_file_exists (dir, "memory.peak") && cg_read_u64 (dir, "memory.peak", &s->mem.max, err) < 0)
        return -1;
      s->has_memory = true;
      if (cg_file_exists (dir, "memory.swap.current"))
        {
          if (cg_read_u64 (dir, "memory.swap.current", &s->swap.usage, err) < 0
              || cg_read_u64 (dir, "memory.swap.max", &s->swap.limit, err) < 0)
            return -1;
          s->has_swap = true;
        }
    }
  if (cg_file_exists (dir, "pids.current"))
    {
      if (cg_read_u64 (dir, "pids.current", &s->pids_current, err) < 0
          || cg_read_u64 (dir, "pids.max", &s->pids_limit, err) < 0)
        return -1;
      if (s->pids_limit == UINT64_MAX)
        s->pids_limit = 0;
      s->has_pids = true;
    }
  return 0;
}

/* memory.events' "oom_kill" (counts this cgroup and its descendants). */
static int
v2_oom_kills (const struct cg_sandbox *cg, uint64_t *n, hk_err *err)
{
  const struct cg_dir *d = cg_dir_v2 (cg);
  *n = 0;
  if (d == NULL || !cg_file_exists (d->path, "memory.events"))
    return 0;
  return cg_read_key (d->path, "memory.events", "oom_kill", n, err);
}

const struct cg_backend cg_v2_backend = {
  .name = "v2",
  .needs = v2_needs,
  .apply = v2_apply,
  .filter = v2_filter,
  .freeze = v2_freeze,
  .kill = v2_kill,
  .update = v2_update,
  .stats = v2_stats,
  .oom_kills = v2_oom_kills,
};
