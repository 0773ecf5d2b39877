/* limits: update, stats, ps and events for a live sandbox, over its state
 * and the record of its cgroups. */
#include "runtime/lifecycle/limits.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pwd.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <time.h>
#include <unistd.h>

#include "lib/util.h"
#include "oci/resources.h"
#include "runtime/build/disk.h"
#include "runtime/cgroup/cgroup.h"
#include "runtime/lifecycle/sandbox.h"
#include "runtime/node/admission.h"
#include "runtime/state/pidinfo.h"

/* The state of a sandbox that has processes (created, running, paused). */
static int
live_state (const struct store *st, const char *id, struct oci_state **s, hk_err *err)
{
  if (sbx_state (st, id, s, err) < 0)
    return -1;
  if ((*s)->status == OCI_STATUS_STOPPED || (*s)->status == OCI_STATUS_CREATING)
    {
      enum oci_status was = (*s)->status;
      oci_state_free (*s);
      *s = NULL;
      return err_set (err, ESRCH, "sandbox %s is %s: it has no processes", id, oci_status_name (was));
    }
  return 0;
}

static int
load_record (const struct store *st, const char *id, struct cg_sandbox *cg, hk_err *err)
{
  cleanup_free char *record = xasprintf ("%s/%s/cgroups", st->root, id);
  if (cg_load (record, cg, err) == 0)
    return 0;
  if (err->errnum == ENOENT)
    {
      err_clear (err);
      *cg = (struct cg_sandbox){ 0 };
      return 0; /* none was made */
    }
  return -1;
}

/* ---- update ------------------------------------------------------------------ */

static int
check_merged (const struct oci_resources *r, hk_err *err)
{
  if (r->has_memory_swap && r->memory_swap >= 0 && r->has_memory_limit && r->memory_limit >= 0
      && r->memory_swap < r->memory_limit)
    return err_set (err, EINVAL,
                    "memory swap %" PRId64 " is below the memory limit %" PRId64
                    " (swap counts memory plus swap)",
                    r->memory_swap, r->memory_limit);
  return 0;
}

/* Write the updated limits into the frozen config: what a restart reads. */
static int
save_config (const char *path, const char *text, size_t len, const struct oci_resources *r, hk_err *err)
{
  cleanup_free char *out = NULL;
  size_t out_len;
  if (oci_config_set_resources (text, len, r, &out, &out_len, err) < 0)
    return -1;
  return file_write_atomic (path, out, out_len, 0600, err);
}

static int
update_locked (const struct store *st, const struct store_entry *e, const struct oci_resources *upd,
               hk_err *err)
{
  cleanup_free char *config = store_path (e, "config.json");
  cleanup_free char *text = NULL;
  size_t len;
  struct oci_spec *spec = NULL;
  struct cg_sandbox cg = { 0 };
  if (file_read_all (config, 1 << 24, &text, &len, err) < 0 || oci_spec_parse (text, len, &spec, err) < 0)
    return err_prefix (err, "the sandbox's config");
  struct oci_resources *r = &spec->linux.resources;
  bool had_limit = r->has_memory_limit;
  int64_t old_limit = r->memory_limit;
  if (oci_resources_check_devices (r, upd, err) < 0)
    {
      oci_spec_free (spec);
      return -1;
    }
  oci_resources_merge (r, upd);
  int ret = -1;
  bool reserved = false;
  if (check_merged (r, err) < 0 || load_record (st, e->id, &cg, err) < 0)
    goto out;
  if (upd->has_memory_limit)
    {
      if (admission_reserve (st, e->id, spec, err) < 0)
        goto out;
      reserved = true;
    }
  if (cg_update (&cg, upd, r, err) < 0 || save_config (config, text, len, r, err) < 0)
    goto out;
  ret = 0;
out:
  if (ret < 0 && reserved)
    {
      /* Give back what the refused limit reserved. */
      hk_err ignored;
      r->has_memory_limit = had_limit;
      r->memory_limit = old_limit;
      admission_reserve (st, e->id, spec, &ignored);
    }
  cg_sandbox_free (&cg);
  oci_spec_free (spec);
  return ret;
}

int
sbx_update (const struct store *st, const char *id, const struct oci_resources *upd, hk_err *err)
{
  struct store_entry e;
  struct oci_state *s = NULL;
  if (store_open (st, id, true, &e, err) < 0)
    return -1;
  int r = live_state (st, id, &s, err);
  if (r == 0)
    r = update_locked (st, &e, upd, err);
  oci_state_free (s);
  store_close (&e);
  return r;
}

/* ---- stats ------------------------------------------------------------------- */

/* The CPUs the sandbox may use, in thousandths: those its process may run
 * on, bounded by its CPU quota (config.json: update keeps it current). */
static uint64_t
cpu_limit_milli (const struct store *st, const struct oci_state *s)
{
  cpu_set_t set;
  long online = sysconf (_SC_NPROCESSORS_ONLN);
  uint64_t milli = sched_getaffinity (s->pid, sizeof set, &set) == 0 ? (uint64_t)CPU_COUNT (&set) * 1000
                   : online > 0                                      ? (uint64_t)online * 1000
                                                                     : 0;
  cleanup_free char *path = xasprintf ("%s/%s/config.json", st->root, s->id);
  struct oci_spec *spec = NULL;
  hk_err ignored;
  if (oci_spec_load (path, &spec, &ignored) < 0)
    return milli;
  const struct oci_resources *r = &spec->linux.resources;
  if (r->has_cpu_quota && r->cpu_quota > 0 && r->has_cpu_period && r->cpu_period > 0)
    {
      uint64_t q = (uint64_t)r->cpu_quota * 1000 / r->cpu_period;
      if (q < milli || milli == 0)
        milli = q;
    }
  oci_spec_free (spec);
  return milli;
}

/* The cgroups' figures and hako's beside them (oci_stats says which). */
static int
collect_stats (const struct store *st, const struct oci_state *s, const struct cg_sandbox *cg,
               struct oci_stats *out, hk_err *err)
{
  if (cg_stats (cg, out, err) < 0)
    return -1;
  out->cpu_limit_milli = cpu_limit_milli (st, s);
  struct sysinfo si;
  if (sysinfo (&si) == 0)
    out->mem_total = (uint64_t)si.totalram * si.mem_unit;
  if (out->has_memory && out->mem.limit > 0 && (out->mem_total == 0 || out->mem.limit < out->mem_total))
    out->mem_total = out->mem.limit;
  if (disk_usage (st, s->id, &out->has_disk, &out->disk_used, &out->disk_total, err) < 0)
    {
      oci_stats_free (out);
      return -1;
    }
  return 0;
}

int
sbx_stats (const struct store *st, const char *id, struct oci_stats *out, hk_err *err)
{
  struct oci_state *s = NULL;
  struct cg_sandbox cg = { 0 };
  *out = (struct oci_stats){ 0 };
  if (live_state (st, id, &s, err) < 0)
    return -1;
  int r = load_record (st, id, &cg, err) < 0 ? -1 : collect_stats (st, s, &cg, out, err);
  cg_sandbox_free (&cg);
  oci_state_free (s);
  return r;
}

/* ---- ps ---------------------------------------------------------------------- */

static char *
user_name (uid_t uid)
{
  struct passwd pw, *res = NULL;
  char buf[4096];
  if (getpwuid_r (uid, &pw, buf, sizeof buf, &res) == 0 && res)
    return xstrdup (res->pw_name);
  return xasprintf ("%u", (unsigned)uid);
}

/* "HH:MM" for today, "MonDD" before, as ps's STIME. */
static char *
start_text (uint64_t ticks)
{
  static time_t boot;
  if (boot == 0)
    {
      cleanup_free char *stat = NULL;
      hk_err ignored;
      if (file_read_all ("/proc/stat", 1 << 20, &stat, NULL, &ignored) == 0)
        {
          const char *b = strstr (stat, "\nbtime ");
          boot = b ? (time_t)strtoll (b + 7, NULL, 10) : 0;
        }
    }
  long hz = sysconf (_SC_CLK_TCK);
  time_t t = boot + (time_t)(ticks / (uint64_t)(hz > 0 ? hz : 100)), now = time (NULL);
  struct tm tm, tn;
  char buf[16];
  localtime_r (&t, &tm);
  localtime_r (&now, &tn);
  strftime (buf, sizeof buf, tm.tm_yday == tn.tm_yday && tm.tm_year == tn.tm_year ? "%H:%M" : "%b%d", &tm);
  return xstrdup (buf);
}

static char *
command_of (pid_t pid, const char *comm)
{
  cleanup_free char *path = xasprintf ("/proc/%d/cmdline", (int)pid);
  char *text = NULL;
  size_t len = 0;
  hk_err ignored;
  if (file_read_all (path, 1 << 16, &text, &len, &ignored) < 0 || len == 0)
    {
      free (text);
      return xasprintf ("[%s]", comm);
    }
  for (size_t i = 0; i + 1 < len; i++)
    if (text[i] == '\0')
      text[i] = ' ';
  return text;
}

/* From /proc/PID/stat and status; false when the process is gone. */
static bool
read_proc (pid_t pid, struct oci_proc *p)
{
  cleanup_free char *path = xasprintf ("/proc/%d/stat", (int)pid);
  cleanup_free char *stat = NULL, *status = NULL;
  hk_err ignored;
  if (file_read_all (path, 4096, &stat, NULL, &ignored) < 0)
    return false;
  char *open_p = strchr (stat, '('), *close_p = strrchr (stat, ')');
  if (!open_p || !close_p || close_p < open_p)
    return false;
  *close_p = '\0';
  cleanup_free char *comm = xstrdup (open_p + 1);
  char state;
  int ppid;
  unsigned long long utime, stime, start;
  /* Fields 3.. after the comm: state ppid pgrp session tty tpgid flags minflt
   * cminflt majflt cmajflt utime stime cutime cstime prio nice threads itreal start. */
  if (sscanf (close_p + 2, "%c %d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %*d %*d %*d %*d %*d %*d %llu",
              &state, &ppid, &utime, &stime, &start)
      != 5)
    return false;
  free (path);
  path = xasprintf ("/proc/%d/status", (int)pid);
  if (file_read_all (path, 1 << 16, &status, NULL, &ignored) < 0)
    return false;
  const char *uid = strstr (status, "\nUid:");
  const char *nspid = strstr (status, "\nNSpid:");
  long hz = sysconf (_SC_CLK_TCK);
  *p = (struct oci_proc){ .pid = pid, .ppid = ppid, .state = state };
  p->uid = uid ? (uid_t)strtoul (uid + 5, NULL, 10) : 0;
  if (nspid)
    {
      const char *end = strchr (nspid + 1, '\n');
      const char *last = end ? end : nspid + strlen (nspid);
      while (last > nspid && (last[-1] == ' ' || last[-1] == '\t'))
        last--;
      while (last > nspid && last[-1] >= '0' && last[-1] <= '9')
        last--;
      p->ns_pid = (pid_t)strtol (last, NULL, 10);
    }
  p->cpu_ms = (utime + stime) * 1000 / (uint64_t)(hz > 0 ? hz : 100);
  p->user = user_name (p->uid);
  p->start = start_text (start);
  p->command = command_of (pid, comm);
  return true;
}

static int
sandbox_pids (const struct store *st, const struct oci_state *s, pid_t **pids, size_t *n, hk_err *err)
{
  struct cg_sandbox cg = { 0 };
  int r = load_record (st, s->id, &cg, err);
  if (r == 0)
    {
      r = cg_pids (&cg, pids, n, err);
      if (r < 0 && err->errnum == ENOENT)
        {
          /* No cgroup here (no cgroup filesystem, or rootless): its pid
           * namespace, if it has its own. */
          struct stat mine, theirs;
          cleanup_free char *ns = xasprintf ("/proc/%d/ns/pid", (int)s->pid);
          err_clear (err);
          if (stat ("/proc/self/ns/pid", &mine) == 0 && stat (ns, &theirs) == 0
              && mine.st_ino != theirs.st_ino)
            r = pid_list_ns (s->pid, pids, n, err);
          else
            {
              *pids = xmalloc (sizeof **pids);
              (*pids)[0] = s->pid;
              *n = 1;
              r = 0;
            }
        }
    }
  cg_sandbox_free (&cg);
  return r;
}

int
sbx_ps (const struct store *st, const char *id, struct oci_proc **out, size_t *n, hk_err *err)
{
  struct oci_state *s = NULL;
  cleanup_free pid_t *pids = NULL;
  size_t np = 0;
  *out = NULL;
  *n = 0;
  if (sbx_state (st, id, &s, err) < 0)
    return -1;
  /* A stopped sandbox has no processes: an empty list, as runc's ps. */
  if (s->status == OCI_STATUS_STOPPED)
    {
      oci_state_free (s);
      *out = xcalloc (1, sizeof **out);
      return 0;
    }
  oci_state_free (s);
  if (live_state (st, id, &s, err) < 0)
    return -1;
  int r = sandbox_pids (st, s, &pids, &np, err);
  oci_state_free (s);
  if (r < 0)
    return -1;
  *out = xcalloc (np ? np : 1, sizeof **out);
  for (size_t i = 0; i < np; i++)
    if (read_proc (pids[i], &(*out)[*n]))
      (*n)++;
  return 0;
}

/* ---- events ------------------------------------------------------------------ */

/* Report the OOM kills counted since last time; *n how many. */
static int
report_oom (struct cg_oom_watch *w, sbx_event_fn fn, void *arg, uint64_t *n, hk_err *err)
{
  *n = 0;
  if (w->fd < 0)
    return 0;
  if (cg_oom_watch_read (w, n, err) < 0)
    return -1;
  for (uint64_t i = 0; i < *n; i++)
    fn ("oom", NULL, arg);
  return 0;
}

static int
report_stats (const struct store *st, const struct oci_state *s, const struct cg_sandbox *cg, sbx_event_fn fn,
              void *arg, hk_err *err)
{
  struct oci_stats stats = { 0 };
  if (collect_stats (st, s, cg, &stats, err) < 0)
    return -1;
  fn ("stats", &stats, arg);
  oci_stats_free (&stats);
  return 0;
}

/* The kernel signals an OOM as it starts, and counts the kill only once it
 * has chosen a victim: after a notification whose kill is not counted yet,
 * the count is read again every RECHECK_MS for a while. */
#define RECHECK_MS 20
#define RECHECKS 100

static int
watch (const struct store *st, const struct oci_state *s, const struct cg_sandbox *cg, uint64_t interval_ms,
       sbx_event_fn fn, void *arg, hk_err *err)
{
  cleanup_close int pidfd = pid_open (s->pid, s->pid_start_time);
  struct cg_oom_watch w;
  if (pidfd < 0)
    return 0; /* gone already */
  if (cg_oom_watch_open (cg, &w, err) < 0)
    return -1;
  int r = 0, recheck = 0;
  uint64_t next = interval_ms ? now_ms () + interval_ms : 0, k;
  for (;;)
    {
      struct pollfd pf[2] = { { .fd = pidfd, .events = POLLIN }, { .fd = w.fd, .events = POLLIN } };
      int timeout = recheck ? RECHECK_MS : -1;
      if (interval_ms)
        {
          uint64_t now = now_ms ();
          int t = next > now ? (int)(next - now) : 0;
          timeout = timeout < 0 || t < timeout ? t : timeout;
        }
      int n = poll (pf, w.fd >= 0 ? 2 : 1, timeout);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        {
          r = err_sys (err, "poll");
          break;
        }
      /* OOM first: the kill that ends the process is reported before the end. */
      if ((pf[1].revents & POLLIN) || recheck || pf[0].revents)
        {
          if ((r = report_oom (&w, fn, arg, &k, err)) < 0)
            break;
          recheck = k ? 0 : (pf[1].revents & POLLIN) ? RECHECKS : recheck ? recheck - 1 : 0;
        }
      if (pf[0].revents)
        break;
      if (interval_ms && now_ms () >= next)
        {
          if ((r = report_stats (st, s, cg, fn, arg, err)) < 0)
            break;
          next += interval_ms;
        }
    }
  cg_oom_watch_close (&w);
  return r;
}

int
sbx_events (const struct store *st, const char *id, uint64_t interval_ms, sbx_event_fn fn, void *arg,
            hk_err *err)
{
  struct oci_state *s = NULL;
  struct cg_sandbox cg = { 0 };
  if (live_state (st, id, &s, err) < 0)
    return -1;
  int r = load_record (st, id, &cg, err) < 0 ? -1 : watch (st, s, &cg, interval_ms, fn, arg, err);
  cg_sandbox_free (&cg);
  oci_state_free (s);
  return r;
}
