/* cgroup: each sandbox's own cgroups in every hierarchy hako uses — their
 * paths, the record of them, making, placing, freezing, killing and removal.
 * The host's hierarchies are cgroup_host.c's; the two backends (cgroup_v1.c,
 * cgroup_v2.c) write the controller files. */
#include "runtime/cgroup/cgroup.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/log.h"
#include "lib/util.h"
#include "oci/knobs.h"
#include "runtime/cgroup/cgroup_internal.h"

/* ---- the sandbox's paths ------------------------------------------------------- */

static const struct cg_backend *
backend (enum cg_layout layout)
{
  return layout == CG_UNIFIED ? &cg_v2_backend : &cg_v1_backend;
}

/* The spec item a controller is there for, for error messages. */
static const char *
needed_by (unsigned ctl)
{
  switch (ctl)
    {
    case CG_MEMORY: return "linux.resources.memory";
    case CG_PIDS: return "linux.resources.pids";
    case CG_CPU: return "linux.resources.cpu";
    case CG_CPUSET: return "linux.resources.cpu.cpus/mems";
    case CG_DEVICES: return "linux.resources.devices";
    case CG_HUGETLB: return "linux.resources.hugepageLimits";
    case CG_BLKIO: return "linux.resources.blockIO";
    default: return "linux.resources.unified";
    }
}

static bool
asks_limits (const struct oci_spec *spec)
{
  const struct oci_resources *r = &spec->linux.resources;
  return oci_knobs_any (r, false) || r->has_blkio_weight || r->n_blkio_devices || r->n_devices
         || r->n_hugepage_limits || r->n_unified;
}

/* ---- the table's knobs (oci/knobs.h) ------------------------------------------------ */

static unsigned
knob_ctl (const struct oci_knob *k, bool v2)
{
  return cg_ctl_bit (k->ctl, strlen (k->ctl), v2);
}

unsigned
cg_knob_ctls (const struct oci_resources *r, bool v2, bool update)
{
  unsigned n = 0;
  for (size_t i = 0; i < oci_n_knobs; i++)
    {
      const struct oci_knob *k = &oci_knobs[i];
      if ((v2 ? k->v2_file : k->v1_file) && (k->update || !update) && oci_knob_is_set (k, r))
        n |= knob_ctl (k, v2);
    }
  return n;
}

int
cg_knobs_refuse_v2 (const struct oci_resources *r, hk_err *err)
{
  for (size_t i = 0; i < oci_n_knobs; i++)
    {
      const struct oci_knob *k = &oci_knobs[i];
      if (k->v2_file == NULL && k->v2_why && oci_knob_is_set (k, r))
        return err_set (err, ENOTSUP, "linux.resources.%s.%s: %s", k->obj, k->key, k->v2_why);
    }
  return 0;
}

/* k's value as its file takes it; false when nothing is to be written. */
static bool
knob_text (const struct oci_knob *k, enum oci_knob_conv conv, const struct oci_resources *r, char *buf,
           size_t size)
{
  int64_t v = oci_knob_i64 (k, r);
  switch (conv)
    {
    case OCI_CONV_AS_IS:
      if (k->type == OCI_KNOB_U64)
        snprintf (buf, size, "%" PRIu64, oci_knob_u64 (k, r));
      else
        snprintf (buf, size, "%" PRId64, v);
      return true;
    case OCI_CONV_MAX_NEG:
      v < 0 ? snprintf (buf, size, "max") : snprintf (buf, size, "%" PRId64, v);
      return true;
    case OCI_CONV_MAX_NPOS:
      v <= 0 ? snprintf (buf, size, "max") : snprintf (buf, size, "%" PRId64, v);
      return true;
    case OCI_CONV_FLAG: snprintf (buf, size, "1"); return true;
    case OCI_CONV_WEIGHT:
      {
        /* shares 2..262144 onto weight 1..10000, as runc and crun map them. */
        uint64_t s = oci_knob_u64 (k, r);
        if (s == 0)
          return false;
        s = s < 2 ? 2 : s > 262144 ? 262144 : s;
        snprintf (buf, size, "%" PRIu64, 1 + ((s - 2) * 9999) / 262142);
        return true;
      }
    default: return false;
    }
}

int
cg_write_knobs (const char *dir, const struct oci_resources *r, bool v2, unsigned ctls, hk_err *err)
{
  for (size_t i = 0; i < oci_n_knobs; i++)
    {
      const struct oci_knob *k = &oci_knobs[i];
      const char *file = v2 ? k->v2_file : k->v1_file;
      enum oci_knob_conv conv = v2 ? k->v2_conv : k->v1_conv;
      char text[32];
      if (file == NULL || !(knob_ctl (k, v2) & ctls) || !oci_knob_is_set (k, r))
        continue;
      if (k->type == OCI_KNOB_STR && conv == OCI_CONV_AS_IS)
        {
          if (cg_write (dir, file, oci_knob_str (k, r), err) < 0)
            return -1;
        }
      else if (knob_text (k, conv, r, text, sizeof text) && cg_write (dir, file, text, err) < 0)
        return -1;
    }
  return 0;
}

/* Under each hierarchy's root: hako/ID for the default state root, else
 * hako-HASH/ID, so that the same id under two state roots (two test suites,
 * two orchestrators) never names the same cgroup. */
static char *
default_path (const char *id, const char *state_root)
{
  if (strcmp (state_root, "/run/hako") == 0)
    return xasprintf ("hako/%s", id);
  return xasprintf ("hako-%08x/%s", fnv1a32 (state_root), id);
}

/* linux.cgroupsPath made canonical: no "." or ".." components (the path must
 * not climb out of the hierarchy), no empty ones, no control characters
 * (the record is one line per directory).  "" for the root itself. */
static int
clean_path (const char *in, char **out, hk_err *err)
{
  size_t len = strlen (in);
  if (len >= PATH_MAX / 2)
    return err_set (err, ENAMETOOLONG, "linux.cgroupsPath: too long");
  for (const char *p = in; *p; p++)
    if ((unsigned char)*p < 0x20 || *p == 0x7f)
      return err_set (err, EINVAL, "linux.cgroupsPath: control characters are not allowed");
  char *buf = xmalloc (len + 1);
  size_t n = 0;
  for (const char *p = in; *p;)
    {
      p += strspn (p, "/");
      size_t c = strcspn (p, "/");
      if (c == 0)
        break;
      if ((c == 1 && p[0] == '.') || (c == 2 && p[0] == '.' && p[1] == '.'))
        {
          free (buf);
          return err_set (err, EINVAL, "linux.cgroupsPath \"%s\": \".\" and \"..\" are not allowed", in);
        }
      if (n)
        buf[n++] = '/';
      memcpy (buf + n, p, c);
      n += c;
      p += c;
    }
  buf[n] = '\0';
  *out = buf;
  return 0;
}

/* "slice:prefix:name", the form runc takes with --systemd-cgroup. */
static bool
is_systemd_path (const char *p)
{
  const char *c1 = strchr (p, ':');
  return c1 && strchr (c1 + 1, ':') && !strchr (p, '/');
}

/* A unit name's characters, as systemd allows them. */
static bool
unit_chars_ok (const char *s, size_t n)
{
  for (size_t i = 0; i < n; i++)
    if (!isalnum ((unsigned char)s[i]) && strchr ("-_.\\@", s[i]) == NULL)
      return false;
  return n > 0;
}

/* A slice's cgroup path, which its name says: a-b.slice is in a.slice, and
 * "-.slice" is the root (""); NULL for a name systemd would refuse. */
static char *
expand_slice (const char *slice, size_t ls)
{
  const size_t suffix = sizeof ".slice" - 1;
  if (ls <= suffix || memcmp (slice + ls - suffix, ".slice", suffix) != 0 || !unit_chars_ok (slice, ls))
    return NULL;
  size_t stem = ls - suffix;
  if (stem == 1 && slice[0] == '-')
    return xstrdup ("");
  if (slice[0] == '-' || slice[stem - 1] == '-' || memmem (slice, stem, "--", 2))
    return NULL;
  char *path = xstrdup ("");
  for (size_t i = 0; i <= stem; i++)
    if (i == stem || slice[i] == '-')
      {
        char *next = xasprintf ("%s%s%.*s.slice", path, *path ? "/" : "", (int)i, slice);
        free (path);
        path = next;
      }
  return path;
}

int
cg_systemd_path (const char *cp, char **out, hk_err *err)
{
  const char *c1 = strchr (cp, ':'), *c2 = c1 ? strchr (c1 + 1, ':') : NULL;
  if (c1 == NULL || c2 == NULL || strchr (c2 + 1, ':') || strchr (cp, '/'))
    return err_set (err, EINVAL, "linux.cgroupsPath \"%s\": a systemd cgroup path is slice:prefix:name", cp);
  size_t ls = (size_t)(c1 - cp), lp = (size_t)(c2 - c1 - 1), ln = strlen (c2 + 1);
  const char *slice = ls ? cp : "system.slice", *prefix = c1 + 1, *name = c2 + 1;
  if (ls == 0)
    ls = strlen (slice);
  if (ln == 0 || !unit_chars_ok (name, ln) || (lp && !unit_chars_ok (prefix, lp)))
    return err_set (err, EINVAL,
                    "linux.cgroupsPath \"%s\": the prefix and name must be unit name "
                    "characters (letters, digits, \"-_.\\@\"), and the name not empty",
                    cp);
  /* A name that is a slice is the sandbox's cgroup itself, where its own
   * name puts it; otherwise the sandbox is the scope PREFIX-NAME.scope (as
   * runc names it) in the slice. */
  if (ln > 6 && strcmp (name + ln - 6, ".slice") == 0)
    {
      *out = expand_slice (name, ln);
      return *out ? 0
                  : err_set (err, EINVAL, "linux.cgroupsPath \"%s\": \"%s\" is not a valid slice name", cp,
                             name);
    }
  cleanup_free char *path = expand_slice (slice, ls);
  if (path == NULL)
    return err_set (err, EINVAL, "linux.cgroupsPath \"%s\": \"%.*s\" is not a slice name (a-b.slice)", cp,
                    (int)ls, slice);
  cleanup_free char *unit
      = lp ? xasprintf ("%.*s-%s.scope", (int)lp, prefix, name) : xasprintf ("%s.scope", name);
  *out = xasprintf ("%s%s%s", path, *path ? "/" : "", unit);
  return 0;
}

static void
add_dir (struct cg_sandbox *cg, const struct cg_hier *hh, const char *base, const char *rel, unsigned ctls,
         bool required)
{
  cg->dirs = xrealloc (cg->dirs, (cg->n + 1) * sizeof *cg->dirs);
  struct cg_dir *d = &cg->dirs[cg->n++];
  /* base is "/" or "/a/b"; rel never starts with a slash. */
  const char *sep = base[strlen (base) - 1] == '/' ? "" : "/";
  *d = (struct cg_dir){ .path = xasprintf ("%s%s%s%s", hh->mount, base, sep, rel),
                        .mount = xstrdup (hh->mount),
                        .hier = xstrdup (hh->name),
                        .ctls = ctls,
                        .v2 = hh->v2,
                        .required = required };
}

/* Whether a hybrid host has its cgroup2 hierarchy mounted (where the
 * sandbox's processes are tracked, frozen and killed). */
static bool
hybrid_v2 (const struct cg_host *h)
{
  for (size_t i = 0; i < h->n_hier; i++)
    if (h->hier[i].v2)
      return true;
  return false;
}

/* Whether a v1 hierarchy carries ctl. */
static bool
host_has (const struct cg_host *h, unsigned ctl)
{
  for (size_t i = 0; i < h->n_hier; i++)
    if (!h->hier[i].v2 && (h->hier[i].ctls & ctl))
      return true;
  return false;
}

/* The v1 controllers every sandbox gets a cgroup in, limit or not, so that
 * `hako update` can set its memory, pids and cpu limits later: moving the
 * processes of a running sandbox into a new cgroup cannot be made atomic
 * against its forks and the commands an exec starts meanwhile, and a
 * process left behind would escape the limit.  Optional where no limit
 * needs them (rootless: a hierarchy hako may not write is left out).  Not
 * cpuset: the first cpuset cgroup below the root turns the kernel's cpuset
 * checks on for the whole host (a static key: ~10-20 ms of text patching
 * at its mkdir and again at its rmdir, here), so one is made only for
 * cpu.cpus or cpu.mems set at create. */
#define CG_UPDATABLE (CG_MEMORY | CG_PIDS | CG_CPU)

/* Which of the host's hierarchies the sandbox uses, and how much each matters:
 * on v2 the one hierarchy; on v1 every controller a limit needs (required),
 * those update can change later (CG_UPDATABLE) and the devices controller of the default
 * device rules (want: optional), plus the freezer (pause, kill) when
 * mounted; on hybrid the same v1 controllers and the cgroup2 hierarchy,
 * which tracks, freezes and kills the processes, carries the device filter
 * and is what the sandbox sees at /sys/fs/cgroup.  every_v1: every v1
 * hierarchy too (the others optional), as runc places a container. */
static int
choose_dirs (const struct cg_host *h, unsigned need, unsigned want, const char *rel, bool relative,
             bool every_v1, struct cg_sandbox *cg, hk_err *err)
{
  unsigned have = 0;
  for (size_t i = 0; i < h->n_hier; i++)
    {
      const struct cg_hier *hh = &h->hier[i];
      /* On hybrid no v1 freezer: the cgroup2 dir freezes (cgroup.freeze is
       * core cgroup2, no controller needed) and kills, and every v1 cgroup
       * an exec joins adds to what its join costs. */
      unsigned freezer = h->layout == CG_HYBRID && hybrid_v2 (h) ? 0 : CG_FREEZER;
      unsigned use = hh->v2 ? need : every_v1 ? hh->ctls : hh->ctls & (need | want | freezer);
      if (hh->v2 && h->layout == CG_UNIFIED)
        {
          unsigned missing = need & ~hh->ctls;
          if (missing)
            {
              unsigned bit = missing & -missing;
              return err_set (err, ENOTSUP,
                              "cgroup controller \"%s\" (needed by %s) is not available: "
                              "not in %s/cgroup.controllers",
                              cg_ctl_name (bit, true), needed_by (bit), hh->mount);
            }
        }
      else if (hh->v2)
        use = 0; /* hybrid: tracking only */
      else if (use == 0)
        continue;
      if (relative && hh->self == NULL)
        return err_set (err, ENOENT, "linux.cgroupsPath: hako's own cgroup in %s is not in /proc/self/cgroup",
                        hh->mount);
      add_dir (cg, hh, relative ? hh->self : "/", rel, use, (use & need) != 0);
      have |= hh->v2 ? use : hh->ctls;
    }
  unsigned missing = need & ~have;
  if (missing)
    {
      unsigned bit = missing & -missing;
      return err_set (err, ENOTSUP, "cgroup controller \"%s\" (needed by %s) is not mounted on this host",
                      cg_ctl_name (bit, h->layout == CG_UNIFIED), needed_by (bit));
    }
  return 0;
}

/* Whether the memory limit alone keeps a kernel memory limit of k: kernel
 * memory (and on v2 socket memory) is charged to the sandbox's usage, which
 * the limit bounds, so a limit no larger than k enforces k. */
static bool
limit_bounds (const struct oci_resources *r, int64_t k)
{
  return k == -1 || (r->has_memory_limit && r->memory_limit >= 0 && r->memory_limit <= k);
}

/* memory.kernel: Linux no longer enforces a separate kernel memory limit
 * (v1's memory.kmem.limit_in_bytes takes a write and ignores it; v2 never
 * had one), so it is taken only where the memory limit already holds it. */
static int
check_memory_kernel (const struct oci_resources *r, hk_err *err)
{
  if (r->has_memory_kernel && !limit_bounds (r, r->memory_kernel))
    return err_set (err, ENOTSUP,
                    "linux.resources.memory.kernel: Linux no longer enforces a separate kernel "
                    "memory limit; it is accepted only with a memory.limit no larger (kernel "
                    "memory counts in the limit, which then enforces it)");
  return 0;
}

bool
cg_limit_bounds_tcp (const struct oci_resources *r)
{
  return limit_bounds (r, r->memory_kernel_tcp);
}

int
cg_prepare (const struct cg_host *h, const struct oci_spec *spec, const char *id, const char *state_root,
            struct cg_sandbox *out, hk_err *err)
{
  const char *cp = spec->linux.cgroups_path;
  *out = (struct cg_sandbox){ .layout = h->layout };
  bool systemd = cp && is_systemd_path (cp);
  /* The path systemd would give the scope, made through cgroupfs: hako
   * registers no transient unit (it would need D-Bus), so systemctl does
   * not list the sandbox, but it lands where systemd's tools look. */
  if (systemd && access (SYSTEMD_RUNNING, F_OK) < 0)
    return err_set (err, ENOTSUP,
                    "linux.cgroupsPath \"%s\": a systemd cgroup path (slice:prefix:name) needs "
                    "systemd, which is not running on this host (no " SYSTEMD_RUNNING "); "
                    "give a cgroupfs path (podman: --cgroup-manager cgroupfs)",
                    cp);
  if (h->layout == CG_NONE)
    return asks_limits (spec) ? err_set (err, ENOTSUP,
                                         "linux.resources: this host has no cgroup "
                                         "filesystem to enforce the limits with")
                              : 0;
  if (check_memory_kernel (&spec->linux.resources, err) < 0)
    return -1;
  unsigned need = 0;
  if (backend (h->layout)->needs (spec, &need, err) < 0)
    return -1;
  /* Every sandbox is held to device rules, its spec's or the default ones
   * (cgroup_devices.c), so the sandbox is always in a devices cgroup or
   * under the cgroup2 device filter.  Hybrid: rules that add nothing to
   * what hako's /dev holds (the default ones, runc spec's deny-all) become
   * an eBPF filter on the cgroup2 dir, as on v2, not a v1 devices cgroup
   * that every exec would have to join (an RCU grace period, ~17 ms here,
   * per join).  Rules beyond them (a GPU, fuse, tun) go to the v1 devices
   * controller where one is mounted, as runc puts them: devices.list then
   * shows them to the host's tools.  The default rules are wanted, not
   * needed: a host without a devices controller still runs the sandbox. */
  unsigned want = CG_UPDATABLE | CG_DEVICES;
  if (h->layout == CG_HYBRID && hybrid_v2 (h) && (cg_v2_devices_harmless (spec) || !host_has (h, CG_DEVICES)))
    {
      need &= ~CG_DEVICES;
      want &= ~CG_DEVICES;
    }
  cleanup_free char *rel = NULL;
  bool relative = false;
  if (cp == NULL || *cp == '\0')
    {
      rel = default_path (id, state_root);
      out->shared_parent = true;
    }
  else if (systemd)
    {
      if (cg_systemd_path (cp, &rel, err) < 0)
        return -1;
    }
  else
    {
      if (clean_path (cp, &rel, err) < 0)
        return -1;
      relative = cp[0] != '/';
      if (rel[0] == '\0')
        return err_set (err, EINVAL, "linux.cgroupsPath \"%s\": a sandbox cannot use the root cgroup", cp);
    }
  /* A cgroupsPath is an orchestrator placing the sandbox (podman,
   * containerd, kubelet): its tools read every v1 controller at that path
   * (ctr task metrics, cAdvisor) and CRI may set a limit later, so on v1
   * the sandbox gets a cgroup in each, as runc gives it; an exec then pays
   * for joining them (an RCU grace period after a quiet spell).  hako's own
   * default path makes only what the limits need. */
  bool every_v1 = cp && *cp;
  if (choose_dirs (h, need, want, rel, relative, every_v1, out, err) < 0)
    {
      cg_sandbox_free (out);
      return -1;
    }
  return 0;
}

void
cg_guess (const struct cg_host *h, const char *id, const char *state_root, struct cg_sandbox *out)
{
  cleanup_free char *rel = default_path (id, state_root);
  *out = (struct cg_sandbox){ .layout = h->layout, .shared_parent = true, .unsure = true };
  for (size_t i = 0; i < h->n_hier; i++)
    add_dir (out, &h->hier[i], "/", rel, 0, false);
}

/* ---- the record ------------------------------------------------------------------ */

static const char *
layout_name (enum cg_layout l)
{
  switch (l)
    {
    case CG_V1: return "v1";
    case CG_HYBRID: return "hybrid";
    case CG_UNIFIED: return "unified";
    default: return "none";
    }
}

/* <state dir>/cgroups: written before the first mkdir, so that a hako killed
 * at any point leaves what `delete` needs to find every directory, whatever
 * state.json says.  "made" is added once every directory exists: only then can
 * a process be inside, and only then is each directory surely this sandbox's. */
int
cg_record_write (const struct cg_sandbox *cg, const char *record, bool made, hk_err *err)
{
  size_t cap = 128;
  for (size_t i = 0; i < cg->n; i++)
    cap += strlen (cg->dirs[i].path) + strlen (cg->dirs[i].mount) + strlen (cg->dirs[i].hier) + 4;
  cleanup_free char *buf = xmalloc (cap);
  size_t len = snprintf (buf, cap, "hako-cgroups 1 %s %d\n", layout_name (cg->layout), cg->shared_parent);
  for (size_t i = 0; i < cg->n; i++)
    if (!cg->dirs[i].skipped)
      len += snprintf (buf + len, cap - len, "%s\t%s\t%s\n", cg->dirs[i].hier, cg->dirs[i].mount,
                       cg->dirs[i].path);
  if (made)
    len += snprintf (buf + len, cap - len, "made\n");
  return file_write_atomic (record, buf, len, 0600, err);
}

static int
parse_record_line (char *line, struct cg_sandbox *cg)
{
  char *t1 = strchr (line, '\t');
  char *t2 = t1 ? strchr (t1 + 1, '\t') : NULL;
  if (t2 == NULL || t2[1] != '/')
    return -1;
  *t1 = *t2 = '\0';
  cg->dirs = xrealloc (cg->dirs, (cg->n + 1) * sizeof *cg->dirs);
  struct cg_dir *d = &cg->dirs[cg->n++];
  bool v2 = strcmp (line, "unified") == 0;
  *d = (struct cg_dir){ .hier = xstrdup (line),
                        .mount = xstrdup (t1 + 1),
                        .path = xstrdup (t2 + 1),
                        .v2 = v2,
                        .ctls = v2 ? 0 : cg_parse_ctl_list (line, ",", false) };
  return 0;
}

int
cg_load (const char *record, struct cg_sandbox *out, hk_err *err)
{
  cleanup_free char *text = NULL;
  *out = (struct cg_sandbox){ 0 };
  if (file_read_all (record, 1 << 16, &text, NULL, err) < 0)
    return -1;
  char layout[16];
  int shared;
  if (sscanf (text, "hako-cgroups 1 %15s %d\n", layout, &shared) != 2)
    return err_set (err, EINVAL, "%s: not a cgroup record", record);
  out->layout = strcmp (layout, "unified") == 0  ? CG_UNIFIED
                : strcmp (layout, "hybrid") == 0 ? CG_HYBRID
                : strcmp (layout, "v1") == 0     ? CG_V1
                                                 : CG_NONE;
  out->shared_parent = shared != 0;
  bool made = false;
  char *save = NULL;
  strtok_r (text, "\n", &save); /* the header */
  for (char *line = strtok_r (NULL, "\n", &save); line; line = strtok_r (NULL, "\n", &save))
    {
      if (strcmp (line, "made") == 0)
        made = true;
      else if (parse_record_line (line, out) < 0)
        {
          cg_sandbox_free (out);
          return err_set (err, EINVAL, "%s: damaged line \"%s\"", record, line);
        }
    }
  for (size_t i = 0; i < out->n; i++)
    out->dirs[i].made = made;
  out->unsure = !made;
  return 0;
}

void
cg_sandbox_free (struct cg_sandbox *cg)
{
  for (size_t i = 0; i < cg->n; i++)
    {
      free (cg->dirs[i].path);
      free (cg->dirs[i].mount);
      free (cg->dirs[i].hier);
    }
  free (cg->dirs);
  cg->dirs = NULL;
  cg->n = 0;
}

/* ---- making the directories ------------------------------------------------------- */

/* A v1 cpuset cgroup starts with no cpus and no mems, and refuses tasks until
 * it has both: give an empty one its parent's. */
static int
cpuset_init (const char *dir, hk_err *err)
{
  static const char *const files[] = { "cpuset.cpus", "cpuset.mems" };
  cleanup_free char *parent = xstrndup (dir, strrchr (dir, '/') - dir);
  for (int i = 0; i < 2; i++)
    {
      char mine[4096], theirs[4096];
      if (cg_read (dir, files[i], mine, sizeof mine, err) < 0)
        return -1;
      if (mine[0] != '\0')
        continue;
      if (cg_read (parent, files[i], theirs, sizeof theirs, err) < 0
          || cg_write (dir, files[i], theirs[0] ? theirs : "\n", err) < 0)
        return -1;
    }
  return 0;
}

/* mkdir every component between the hierarchy's mount and d's parent. */
static int
make_parents (const struct cg_dir *d, hk_err *err)
{
  char buf[PATH_MAX];
  size_t mlen = strlen (d->mount);
  snprintf (buf, sizeof buf, "%s", d->path);
  bool cpuset = !d->v2 && (d->ctls & CG_CPUSET);
  for (char *p = strchr (buf + mlen + 1, '/'); p; p = strchr (p + 1, '/'))
    {
      *p = '\0';
      if (mkdir (buf, 0755) < 0 && errno != EEXIST)
        return err_sys (err, "mkdir %s", buf);
      if (cpuset && cpuset_init (buf, err) < 0)
        return -1;
      *p = '/';
    }
  return 0;
}

static int
make_dir (struct cg_dir *d, hk_err *err)
{
  /* ENOENT: a delete removed the shared parent (empty a moment ago) between
   * our mkdir of it and of the leaf; make it again. */
  for (int attempt = 0;; attempt++)
    {
      if (make_parents (d, err) == 0 && mkdir (d->path, 0755) == 0)
        {
          d->made = true;
          return !d->v2 && (d->ctls & CG_CPUSET) ? cpuset_init (d->path, err) : 0;
        }
      int e = err->errnum ? err->errnum : errno;
      if (e == ENOENT && attempt < 10)
        {
          err_clear (err);
          continue;
        }
      if (e == EEXIST)
        return err_set (err, EEXIST,
                        "cgroup %s already exists: another sandbox uses it (delete that "
                        "one, or set linux.cgroupsPath)",
                        d->path);
      /* Not needed by a limit and not ours to write (rootless): go without. */
      if (!d->required && (e == EACCES || e == EPERM || e == EROFS))
        {
          err_clear (err);
          d->skipped = true;
          log_debug ("cgroup %s: not writable here (%s): the sandbox goes without one in \"%s\"", d->path,
                     strerror (e), d->hier);
          return 0;
        }
      if (err->errnum == 0)
        err_code (err, e, "mkdir %s", d->path);
      return err_prefix (err, "cgroup controller \"%s\"", d->hier);
    }
}

int
cg_make_dirs (struct cg_sandbox *cg, hk_err *err)
{
  for (size_t i = 0; i < cg->n; i++)
    {
      err_clear (err);
      if (make_dir (&cg->dirs[i], err) < 0)
        return -1;
    }
  return 0;
}

int
cg_apply (const struct cg_sandbox *cg, const struct oci_spec *spec, hk_err *err)
{
  return backend (cg->layout)->apply (cg, spec, err);
}

int
cg_attach_filter (const struct cg_sandbox *cg, const struct oci_spec *spec, hk_err *err)
{
  if (cg->n == 0 || !cg->defer_filter)
    return 0;
  return backend (cg->layout)->filter (cg, spec, err);
}

int
cg_create (struct cg_sandbox *cg, const struct oci_spec *spec, const char *record, hk_err *err)
{
  if (cg->n == 0)
    return 0;
  if (cg_record_write (cg, record, false, err) < 0 || cg_make_dirs (cg, err) < 0
      || cg_record_write (cg, record, true, err) < 0)
    return -1;
  return cg_apply (cg, spec, err);
}

/* ---- using them -------------------------------------------------------------------- */

const struct cg_dir *
cg_dir_v1 (const struct cg_sandbox *cg, unsigned ctl)
{
  for (size_t i = 0; i < cg->n; i++)
    if (!cg->dirs[i].v2 && cg->dirs[i].made && (cg->dirs[i].ctls & ctl))
      return &cg->dirs[i];
  return NULL;
}

const struct cg_dir *
cg_dir_v2 (const struct cg_sandbox *cg)
{
  for (size_t i = 0; i < cg->n; i++)
    if (cg->dirs[i].v2 && cg->dirs[i].made)
      return &cg->dirs[i];
  return NULL;
}

const char *
cg_v2_path (const struct cg_sandbox *cg)
{
  const struct cg_dir *d = cg_dir_v2 (cg);
  return d ? d->path : NULL;
}

int
cg_open_v2 (const struct cg_sandbox *cg)
{
  const struct cg_dir *d = cg_dir_v2 (cg);
  return d ? open (d->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
}

int
cg_enter (const struct cg_sandbox *cg, pid_t pid, bool skip_v2, bool skip_v1, hk_err *err)
{
  for (size_t i = 0; i < cg->n; i++)
    {
      const struct cg_dir *d = &cg->dirs[i];
      if (!d->made || (skip_v2 && d->v2) || (skip_v1 && !d->v2))
        continue;
      if (cg_writef (d->path, "cgroup.procs", err, "%d", (int)pid) < 0)
        return err_prefix (err, "place process %d in its cgroup", (int)pid);
    }
  return 0;
}

/* The cgroup2 freezer on v2 and hybrid hosts, the v1 freezer on v1 ones.
 * A hybrid sandbox may have a v1 freezer cgroup too (placed by an
 * orchestrator's cgroupsPath, or paused by an older hako); cgroup2 freezes
 * it all the same, and unlike v1 lets SIGKILL through, so a kill -9 of a
 * paused sandbox (ctr task delete -f) takes effect at once. */
bool
cg_can_freeze (const struct cg_sandbox *cg)
{
  return cg_dir_v1 (cg, CG_FREEZER) || cg_dir_v2 (cg);
}

int
cg_freeze (const struct cg_sandbox *cg, bool frozen, hk_err *err)
{
  const struct cg_dir *fz = cg_dir_v1 (cg, CG_FREEZER);
  if (cg_dir_v2 (cg))
    {
      if (cg_v2_backend.freeze (cg, frozen, err) < 0)
        return -1;
      return frozen || fz == NULL ? 0 : cg_write (fz->path, "freezer.state", "THAWED", err);
    }
  if (fz)
    return cg_v1_backend.freeze (cg, frozen, err);
  return err_set (err, ENOTSUP,
                  "the sandbox has no freezer cgroup (none mounted, or not writable by "
                  "this user)");
}

int
cg_kill (const struct cg_sandbox *cg, hk_err *err)
{
  const struct cg_dir *v2 = cg_dir_v2 (cg);
  const struct cg_dir *fz = cg_dir_v1 (cg, CG_FREEZER);
  hk_err ignored;
  /* cgroup.kill (5.14+) is one write and races with no fork.  A task frozen
   * by the v1 freezer dies only once thawed. */
  if (v2 && cg_write (v2->path, "cgroup.kill", "1", &ignored) == 0)
    return fz ? cg_write (fz->path, "freezer.state", "THAWED", err) : 0;
  if (fz)
    return cg_v1_backend.kill (cg, err);
  if (v2)
    return cg_v2_backend.kill (cg, err);
  /* Nothing to freeze with: kill what is listed, until nothing is. */
  for (size_t i = 0; i < cg->n; i++)
    {
      size_t n;
      if (cg->dirs[i].made && cg_kill_procs (cg->dirs[i].path, &n, err) < 0)
        return -1;
    }
  return 0;
}

int
cg_signal (const struct cg_sandbox *cg, int sig, hk_err *err)
{
  /* The cgroup2 directory tracks every process on hybrid hosts too; else
   * any v1 one (every hierarchy holds every process of the sandbox). */
  const struct cg_dir *d = cg_dir_v2 (cg);
  for (size_t i = 0; d == NULL && i < cg->n; i++)
    if (cg->dirs[i].made && !cg->dirs[i].skipped)
      d = &cg->dirs[i];
  size_t n = 0;
  if (d == NULL)
    return err_set (err, ENOENT, "no cgroup to signal through");
  return cg_signal_procs (d->path, sig, &n, err);
}

int
cg_oom_kills (const struct cg_sandbox *cg, uint64_t *n, hk_err *err)
{
  *n = 0;
  if (cg->n == 0)
    return 0;
  return backend (cg->layout)->oom_kills (cg, n, err);
}

/* ---- removing them ------------------------------------------------------------------- */

static bool
populated (const struct cg_sandbox *cg)
{
  for (size_t i = 0; i < cg->n; i++)
    {
      char buf[16];
      hk_err ignored;
      uint64_t v2_populated = 0;
      if (!cg->dirs[i].made)
        continue;
      /* cgroup2: its children's processes too (an exec's cgroup). */
      if (cg->dirs[i].v2
          && cg_read_key (cg->dirs[i].path, "cgroup.events", "populated", &v2_populated, &ignored) == 0)
        {
          if (v2_populated)
            return true;
        }
      else if (cg_read (cg->dirs[i].path, "cgroup.procs", buf, sizeof buf, &ignored) == 0 && buf[0] != '\0')
        return true;
    }
  return false;
}

/* Kill, and kill again while something is left (a fork that raced the first
 * kill on a host without a freezer), for up to 10 s. */
static int
kill_until_empty (const struct cg_sandbox *cg, hk_err *err)
{
  uint64_t deadline = now_ms () + 10000, next_kill = 0;
  unsigned step = 0;
  while (populated (cg))
    {
      if (now_ms () >= next_kill)
        {
          if (cg_kill (cg, err) < 0)
            return -1;
          next_kill = now_ms () + 200;
        }
      if (!cg_backoff (&step, deadline))
        return err_set (err, EBUSY, "the sandbox's cgroups still hold processes 10 s after SIGKILL");
    }
  return 0;
}

/* rmdir, retrying EBUSY: the kernel may still be letting go of the last
 * task for a moment after cgroup.procs reads empty. */
static int
remove_dir (const char *path, hk_err *err)
{
  uint64_t deadline = now_ms () + 2000;
  unsigned step = 0;
  /* Its children first: a cgroup2 dir holds the cgroups of its attached
   * execs (runtime/exec_tree.c), empty once the sandbox's are. */
  if (cg_remove_children (path, err) < 0)
    return -1;
  while (rmdir (path) < 0)
    {
      if (errno == ENOENT)
        return 0;
      if (errno != EBUSY || !cg_backoff (&step, deadline))
        return err_sys (err, "remove cgroup %s", path);
    }
  return 0;
}

static void
remove_shared_parent (const struct cg_dir *d)
{
  /* Only if nobody else's sandbox is in it: rmdir refuses a non-empty one. */
  cleanup_free char *parent = xstrndup (d->path, strrchr (d->path, '/') - d->path);
  if (strlen (parent) > strlen (d->mount))
    rmdir (parent);
}

int
cg_remove (struct cg_sandbox *cg, hk_err *err)
{
  int r = 0;
  if (cg->unsure)
    {
      /* No process was ever placed: whatever exists of these is empty, or
       * was never ours (rmdir refuses a populated cgroup). */
      for (size_t i = 0; i < cg->n; i++)
        {
          rmdir (cg->dirs[i].path);
          if (cg->shared_parent)
            remove_shared_parent (&cg->dirs[i]);
        }
      return 0;
    }
  if (populated (cg) && kill_until_empty (cg, err) < 0)
    return -1;
  for (size_t i = 0; i < cg->n; i++)
    {
      struct cg_dir *d = &cg->dirs[i];
      if (d->made && remove_dir (d->path, err) < 0)
        {
          r = -1;
          continue;
        }
      d->made = false;
      /* Also after a create that made the parent but not the leaf. */
      if (cg->shared_parent)
        remove_shared_parent (d);
    }
  return r;
}
