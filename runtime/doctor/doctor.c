/* doctor: probe what this host can enforce (user namespaces, Landlock,
 * seccomp, cgroups, overlayfs and idmapped mounts in a user namespace, the
 * newer syscalls, CAP_SYS_RESOURCE) by trying each, and judge every profile
 * against the result.  The probes that change anything (a namespace, a
 * mount) run in a forked child that dies with what it made; the only thing
 * made on the host is a temporary directory, removed before returning. */
#include "runtime/doctor/doctor.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/magic.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/syscalls.h"
#include "lib/util.h"
#include "runtime/build/idmap.h"
#include "runtime/build/net.h"
#include "runtime/cgroup/cgroup.h"
#include "runtime/confine/landlock.h"
#include "runtime/confine/seccomp.h"
#include "runtime/node/admission.h"
#include "runtime/proxy/netpolicy.h"

/* The id range the host profile maps the sandbox's root to (oci/profile.c). */
#define PROBE_ID_BASE 1000000000u
#define PROBE_ID_SIZE 65536u

/* ---- small helpers ---------------------------------------------------------- */

static void
strv_add (char ***v, char *s)
{
  size_t n = strv_len (*v);
  *v = xrealloc (*v, (n + 2) * sizeof **v);
  (*v)[n] = s;
  (*v)[n + 1] = NULL;
}

/* An integer sysctl, or -1 when this kernel has no such knob. */
static long
read_knob (const char *path)
{
  cleanup_free char *text = NULL;
  hk_err ignored;
  if (file_read_all (path, 64, &text, NULL, &ignored) < 0)
    return -1;
  return strtol (text, NULL, 10);
}

static void
field_knob (struct doctor_item *it, const char *key, long v)
{
  if (v < 0)
    doctor_field_null (it, key);
  else
    doctor_field_int (it, key, v);
}

/* Run fn in a forked child and return the errno it failed with (0: it
 * worked).  What fn makes (namespaces, mounts) dies with the child. */
static int
in_child (int (*fn) (void *), void *arg)
{
  pid_t pid = fork ();
  if (pid < 0)
    return errno;
  if (pid == 0)
    {
      prctl (PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
      _exit (fn (arg) < 0 ? (errno > 0 && errno < 255 ? errno : 255) : 0);
    }
  int ws;
  while (waitpid (pid, &ws, 0) < 0)
    if (errno != EINTR)
      return errno;
  if (WIFSIGNALED (ws))
    return EINTR;
  return WEXITSTATUS (ws);
}

static int
write_file (const char *path, const char *text)
{
  cleanup_close int fd = open (path, O_WRONLY | O_CLOEXEC);
  if (fd < 0)
    return -1;
  return fd_write_all (fd, text, strlen (text));
}

/* In a new user namespace of its own, map the caller's ids to 0 the way an
 * unprivileged process can (setgroups denied, one id). */
static int
enter_own_userns (void)
{
  uid_t uid = geteuid ();
  gid_t gid = getegid ();
  char map[64];
  if (unshare (CLONE_NEWUSER) < 0)
    return -1;
  if (write_file ("/proc/self/setgroups", "deny") < 0)
    return -1;
  snprintf (map, sizeof map, "0 %u 1", (unsigned)uid);
  if (write_file ("/proc/self/uid_map", map) < 0)
    return -1;
  snprintf (map, sizeof map, "0 %u 1", (unsigned)gid);
  return write_file ("/proc/self/gid_map", map);
}

/* As hako is: a user namespace whose maps it can write. */
static int
probe_userns (void *arg)
{
  (void)arg;
  return enter_own_userns ();
}

/* As an ordinary user would (for the rootless profile): drop to nobody
 * first.  An LSM restriction such as AppArmor's
 * apparmor_restrict_unprivileged_userns lets the unshare succeed but takes
 * the capabilities inside away, so writing the maps is what fails. */
static int
probe_userns_unprivileged (void *arg)
{
  (void)arg;
  if (geteuid () == 0
      && (setgroups (0, NULL) < 0 || setresgid (65534, 65534, 65534) < 0
          || setresuid (65534, 65534, 65534) < 0))
    return -1;
  /* The uid change made us non-dumpable, which makes our /proc/self files
   * root's: a process started by that user would be dumpable. */
  prctl (PR_SET_DUMPABLE, 1, 0, 0, 0);
  return enter_own_userns ();
}

struct overlay_dirs
{
  char *lower, *upper, *work, *merged;
};

static int
probe_overlay (void *arg)
{
  const struct overlay_dirs *d = arg;
  if (enter_own_userns () < 0 || unshare (CLONE_NEWNS) < 0
      || mount (NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
    return -1;
  cleanup_free char *opts = xasprintf ("lowerdir=%s,upperdir=%s,workdir=%s", d->lower, d->upper, d->work);
  return mount ("overlay", d->merged, "overlay", 0, opts);
}

static const char *
fs_name (long magic)
{
  static const struct
  {
    long magic;
    const char *name;
  } names[] = {
    { EXT4_SUPER_MAGIC, "ext4" },
    { XFS_SUPER_MAGIC, "xfs" },
    { BTRFS_SUPER_MAGIC, "btrfs" },
    { TMPFS_MAGIC, "tmpfs" },
    { OVERLAYFS_SUPER_MAGIC, "overlay" },
    { 0x01021994, "tmpfs" },
    { 0x65735546, "fuse" },
    { 0x6969, "nfs" },
    { 0x2fc12fc1, "zfs" },
    { 0xf2f52010, "f2fs" },
  };
  for (size_t i = 0; i < sizeof names / sizeof *names; i++)
    if (names[i].magic == magic)
      return names[i].name;
  return "unknown";
}

/* ---- the probes ------------------------------------------------------------- */

static void
check_userns (struct doctor_report *r, bool *root_ok, bool *unpriv_ok)
{
  long clone_knob = read_knob ("/proc/sys/kernel/unprivileged_userns_clone");
  long max_ns = read_knob ("/proc/sys/user/max_user_namespaces");
  long aa = read_knob ("/proc/sys/kernel/apparmor_restrict_unprivileged_userns");
  int e_root = in_child (probe_userns, NULL);
  int e_unpriv = in_child (probe_userns_unprivileged, NULL);
  *root_ok = e_root == 0;
  *unpriv_ok = e_unpriv == 0;
  char *why;
  if (e_root != 0 && max_ns == 0)
    why = xstrdup ("user.max_user_namespaces is 0: no user namespaces at all");
  else if (e_root != 0)
    why = xasprintf ("creating one failed: %s", strerror (e_root));
  else if (e_unpriv == 0)
    why = xstrdup ("created and mapped, by this process and by an ordinary user");
  else if (clone_knob == 0)
    why = xasprintf ("an ordinary user cannot create one (%s): kernel.unprivileged_userns_clone is 0",
                     strerror (e_unpriv));
  else if (aa > 0)
    why = xasprintf ("an ordinary user cannot use one (%s): AppArmor restricts them "
                     "(kernel.apparmor_restrict_unprivileged_userns = 1)",
                     strerror (e_unpriv));
  else
    why = xasprintf ("an ordinary user cannot create one: %s", strerror (e_unpriv));
  struct doctor_item *it = doctor_add_item (r, "user_namespaces", "user namespaces", *root_ok, why);
  doctor_field_bool (it, "unprivileged", *unpriv_ok);
  field_knob (it, "max_user_namespaces", max_ns);
  field_knob (it, "unprivileged_userns_clone", clone_knob);
  field_knob (it, "apparmor_restrict_unprivileged_userns", aa);
}

static int
check_landlock (struct doctor_report *r)
{
  int abi = landlock_abi ();
  char *why;
  if (abi <= 0)
    {
      int v = sys_landlock_create_ruleset (NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
      int e = v < 0 ? errno : 0;
      why = e == EOPNOTSUPP ? xstrdup ("built into the kernel but not enabled (add landlock to the lsm= "
                                       "boot parameter); the profiles fail closed")
            : e == ENOSYS   ? xstrdup ("not in this kernel (Linux 5.13+, CONFIG_SECURITY_LANDLOCK); the "
                                         "profiles fail closed")
                            : xasprintf ("unavailable: %s; the profiles fail closed", strerror (e));
    }
  else
    why = xasprintf ("ABI %d: filesystem rules%s%s%s%s; the profiles' \"scoped\": true needs ABI 6 and, "
                     "being required, fails closed on an older kernel",
                     abi, abi >= 2 ? ", refer" : "", abi >= 3 ? ", truncate" : "",
                     abi >= 4 ? ", TCP bind/connect ports" : "",
                     abi >= 6 ? ", scoped abstract sockets and signals" : "");
  struct doctor_item *it = doctor_add_item (r, "landlock", "Landlock", abi > 0, why);
  doctor_field_int (it, "abi", abi > 0 ? abi : 0);
  doctor_field_int (it, "profiles_need_abi", 6);
  return abi;
}

static void
check_seccomp (struct doctor_report *r)
{
  static const struct
  {
    uint32_t action;
    const char *name;
  } actions[] = {
    { SECCOMP_RET_KILL_PROCESS, "SCMP_ACT_KILL_PROCESS" },
    { SECCOMP_RET_KILL_THREAD, "SCMP_ACT_KILL_THREAD" },
    { SECCOMP_RET_TRAP, "SCMP_ACT_TRAP" },
    { SECCOMP_RET_ERRNO, "SCMP_ACT_ERRNO" },
    { SECCOMP_RET_USER_NOTIF, "SCMP_ACT_NOTIFY" },
    { SECCOMP_RET_TRACE, "SCMP_ACT_TRACE" },
    { SECCOMP_RET_LOG, "SCMP_ACT_LOG" },
    { SECCOMP_RET_ALLOW, "SCMP_ACT_ALLOW" },
  };
  int mode = prctl (PR_GET_SECCOMP, 0, 0, 0, 0);
  int mode_err = mode < 0 ? errno : 0;
  cleanup_free char **avail = NULL, **missing = NULL;
  for (size_t i = 0; i < sizeof actions / sizeof *actions; i++)
    {
      uint32_t a = actions[i].action;
      if (sys_seccomp (SECCOMP_GET_ACTION_AVAIL, 0, &a) == 0)
        strv_add (&avail, (char *)actions[i].name);
      else
        strv_add (&missing, (char *)actions[i].name);
    }
  uint32_t errno_action = SECCOMP_RET_ERRNO;
  bool ok = mode_err == 0 && sys_seccomp (SECCOMP_GET_ACTION_AVAIL, 0, &errno_action) == 0;
  char *why;
  if (mode_err == EINVAL)
    why = xstrdup ("not in this kernel (CONFIG_SECCOMP_FILTER): the profiles' filter cannot load");
  else if (!ok)
    why = xasprintf ("seccomp(SECCOMP_GET_ACTION_AVAIL) failed: %s", strerror (errno));
  else if (mode == 2)
    why = xstrdup ("filters load; hako itself already runs under one (a container's), which stays "
                   "in force beneath the sandbox's");
  else
    why = xstrdup ("filters load; hako itself runs unfiltered");
  struct doctor_item *it = doctor_add_item (r, "seccomp", "seccomp", ok, why);
  doctor_field_str (it, "mode", mode == 2 ? "filter" : mode == 1 ? "strict" : mode == 0 ? "disabled" : NULL);
  doctor_field_strv (it, "actions", avail);
  doctor_field_strv (it, "missing_actions", missing);
}

static const char *
layout_name (enum cg_layout l)
{
  switch (l)
    {
    case CG_V1: return "v1";
    case CG_HYBRID: return "hybrid";
    case CG_UNIFIED: return "v2";
    case CG_NONE:
    default: return "none";
    }
}

/* A hierarchy hako could make a sandbox's cgroup in: its root (where the
 * default paths go) or, for a delegated subtree, the caller's own cgroup. */
static bool
hier_writable (const struct cg_hier *h)
{
  if (access (h->mount, W_OK) == 0)
    return true;
  if (h->self == NULL || strcmp (h->self, "/") == 0)
    return false;
  cleanup_free char *own = xasprintf ("%s%s", h->mount, h->self);
  return access (own, W_OK) == 0;
}

static void
add_ctls (char ***v, unsigned ctls, bool v2)
{
  for (unsigned bit = 1; bit && bit <= CG_HUGETLB; bit <<= 1)
    if ((ctls & bit) && !strv_contains (*v, cg_ctl_name (bit, v2)))
      strv_add (v, (char *)cg_ctl_name (bit, v2));
}

static void
check_cgroups (struct doctor_report *r, const struct cg_host **host)
{
  hk_err err = { 0 };
  *host = NULL;
  if (cg_host_get (host, &err) < 0)
    {
      struct doctor_item *it = doctor_add_item (r, "cgroup", "cgroups", false, xstrdup (err.msg));
      doctor_field_str (it, "mode", "none");
      return;
    }
  const struct cg_host *h = *host;
  cleanup_free char **ctls = NULL, **writable = NULL;
  const char *v2_mount = NULL;
  bool v2_writable = false;
  for (size_t i = 0; i < h->n_hier; i++)
    {
      const struct cg_hier *hh = &h->hier[i];
      bool w = hier_writable (hh);
      add_ctls (&ctls, hh->ctls, hh->v2);
      if (w)
        add_ctls (&writable, hh->ctls, hh->v2);
      if (hh->v2)
        {
          v2_mount = hh->mount;
          v2_writable = w;
        }
    }
  char *why;
  const char *mode = layout_name (h->layout);
  if (h->layout == CG_NONE)
    why = xstrdup ("no cgroup filesystem: sandboxes get no cgroups; limits and pause fail create");
  else if (writable == NULL && !v2_writable)
    why = xasprintf ("%s, nothing writable by this user: sandboxes go without cgroups of their own, "
                     "and a limit fails create",
                     mode);
  else
    why = xasprintf ("%s%s%s; limits on a controller not listed as writable fail create", mode,
                     v2_mount ? ", cgroup2 at " : "", v2_mount ? v2_mount : "");
  struct doctor_item *it = doctor_add_item (r, "cgroup", "cgroups", h->layout != CG_NONE, why);
  doctor_field_str (it, "mode", mode);
  doctor_field_str (it, "v2_mount", v2_mount);
  doctor_field_bool (it, "v2_writable", v2_writable);
  doctor_field_strv (it, "controllers", ctls);
  doctor_field_strv (it, "writable_controllers", writable);
}

/* favordynmods, a cgroup mount option (Linux 6.0+; cgroup2's and v1's),
 * makes the kernel keep its global threadgroup lock in the mode where a
 * cgroup move never waits for an RCU grace period.  hako's own moves do
 * not wait anyway (a process joins its v1 cgroups itself, its cgroup2 one
 * as it is born: runtime/cgroup/cgroup_join.c); other tools' do. */
static void
check_cgroup_moves (struct doctor_report *r, const struct cg_host *h)
{
  if (h == NULL || h->layout == CG_NONE)
    return;
  cleanup_free char *text = NULL;
  hk_err ignored;
  const char *on = NULL, *suggest = NULL;
  char *mounts = file_read_all ("/proc/self/mountinfo", 1 << 20, &text, NULL, &ignored) == 0 ? text : NULL;
  for (char *save = NULL, *l = mounts ? strtok_r (mounts, "\n", &save) : NULL; l;
       l = strtok_r (NULL, "\n", &save))
    {
      char *sep = strstr (l, " - ");
      char mnt[4096], type[64], src[256], opts[1024];
      if (sep == NULL || sscanf (l, "%*s %*s %*s %*s %4095s", mnt) != 1
          || sscanf (sep + 3, "%63s %255s %1023s", type, src, opts) != 3
          || (strcmp (type, "cgroup2") != 0 && strcmp (type, "cgroup") != 0))
        continue;
      if (suggest == NULL || strcmp (type, "cgroup2") == 0)
        suggest = strcmp (type, "cgroup2") == 0 && strcmp (mnt, "/sys/fs/cgroup/unified") == 0
                      ? "/sys/fs/cgroup/unified"
                  : strcmp (type, "cgroup2") == 0 ? "/sys/fs/cgroup"
                                                  : "/sys/fs/cgroup/memory";
      if (strstr (opts, "favordynmods") && !strstr (opts, "nofavordynmods"))
        on = strcmp (type, "cgroup2") == 0 ? "cgroup2" : "a v1 hierarchy";
    }
  static const char cost[]
      = "every fork, exit and exec then takes the lock's slow path, a shared counter instead of "
        "per-CPU ones, which shows on hosts that fork at high rates on many CPUs";
  char *why = on ? xasprintf ("favordynmods is set (%s): no cgroup move waits for an RCU grace period; %s",
                              on, cost)
                 : xasprintf ("favordynmods is not set: a move of a process by another's write to "
                              "cgroup.procs waits for an RCU grace period (5-50 ms after a quiet spell). "
                              "hako's own moves do not (its processes join their cgroups themselves); for "
                              "other tools', `mount -o remount,favordynmods %s` (Linux 6.0+) removes the "
                              "wait, and %s",
                              suggest ? suggest : "/sys/fs/cgroup", cost);
  struct doctor_item *it
      = doctor_add_item (r, "cgroup_moves", "cgroup moves without a grace period", on != NULL, why);
  doctor_field_bool (it, "favordynmods", on != NULL);
  doctor_field_str (it, "remount", on ? NULL : suggest);
}

static void
check_overlay (struct doctor_report *r)
{
  hk_err err = { 0 };
  const char *tmp = getenv ("TMPDIR");
  cleanup_free char *base = xasprintf ("%s/hako-doctor.XXXXXX", tmp && *tmp ? tmp : "/tmp");
  struct doctor_item *it;
  if (mkdtemp (base) == NULL)
    {
      doctor_add_item (r, "overlay_in_userns", "overlayfs in a user namespace", false,
                       xasprintf ("not probed: mkdtemp %s: %s", base, strerror (errno)));
      return;
    }
  struct overlay_dirs d = {
    .lower = xasprintf ("%s/lower", base),
    .upper = xasprintf ("%s/upper", base),
    .work = xasprintf ("%s/work", base),
    .merged = xasprintf ("%s/merged", base),
  };
  int e = 0;
  if (mkdir (d.lower, 0755) < 0 || mkdir (d.upper, 0755) < 0 || mkdir (d.work, 0755) < 0
      || mkdir (d.merged, 0755) < 0)
    e = errno;
  else
    e = in_child (probe_overlay, &d);
  /* overlayfs leaves WORK/work mode 000: owned by an ordinary user, it
   * could not be removed without this. */
  cleanup_free char *workwork = xasprintf ("%s/work", d.work);
  chmod (workwork, 0700);
  rm_rf (base, &err);
  it = doctor_add_item (r, "overlay_in_userns", "overlayfs in a user namespace", e == 0,
                        e == 0 ? xstrdup ("mounted by root of a user namespace (Linux 5.11+)")
                               : xasprintf ("mounting overlay in a user namespace failed: %s (Linux "
                                            "5.11+ allows it); image roots need hako to mount them as "
                                            "real root",
                                            strerror (e)));
  (void)it;
  free (d.lower);
  free (d.upper);
  free (d.work);
  free (d.merged);
}

static void
check_syscalls (struct doctor_report *r, bool *have_all)
{
  /* Each called so that it fails on its arguments if it exists and with
   * ENOSYS if not (or succeeds harmlessly). */
  int fd = sys_pidfd_open (getpid (), 0);
  bool pidfd = fd >= 0 || errno != ENOSYS;
  if (fd >= 0)
    close (fd);
  bool clone3 = syscall (SYS_clone3, NULL, 0) < 0 && errno != ENOSYS;
  struct open_how how = { .flags = O_PATH | O_CLOEXEC, .resolve = RESOLVE_IN_ROOT };
  fd = sys_openat2 (AT_FDCWD, "/", &how);
  bool openat2 = fd >= 0 || errno != ENOSYS;
  if (fd >= 0)
    close (fd);
  struct mount_attr a = { 0 };
  bool setattr = sys_mount_setattr (-1, "", AT_EMPTY_PATH, &a) == 0 || errno != ENOSYS;
  bool closerange = sys_close_range (~0U, ~0U, 0) == 0 || errno != ENOSYS;
  cleanup_free char **missing = NULL;
  if (!clone3)
    strv_add (&missing, "clone3 (Linux 5.3)");
  if (!pidfd)
    strv_add (&missing, "pidfd_open (Linux 5.3)");
  if (!openat2)
    strv_add (&missing, "openat2 (Linux 5.6)");
  if (!closerange)
    strv_add (&missing, "close_range (Linux 5.9)");
  if (!setattr)
    strv_add (&missing, "mount_setattr (Linux 5.12)");
  *have_all = missing == NULL;
  char *why;
  if (missing == NULL)
    why = xstrdup ("clone3, pidfd_open, openat2, close_range and mount_setattr are all there");
  else
    {
      why = xstrdup ("missing (or filtered by a seccomp profile hako runs under):");
      for (char **m = missing; *m; m++)
        {
          char *next = xasprintf ("%s %s", why, *m);
          free (why);
          why = next;
        }
    }
  struct doctor_item *it
      = doctor_add_item (r, "syscalls", "clone3, pidfd, openat2, mount_setattr", missing == NULL, why);
  doctor_field_bool (it, "clone3", clone3);
  doctor_field_bool (it, "pidfd_open", pidfd);
  doctor_field_bool (it, "openat2", openat2);
  doctor_field_bool (it, "close_range", closerange);
  doctor_field_bool (it, "mount_setattr", setattr);
}

/* An idmapped clone of PATH's mount, made and dropped (never attached). */
static int
try_idmap (const char *path, int userns_fd)
{
  cleanup_close int tree = sys_open_tree (AT_FDCWD, path, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
  if (tree < 0)
    return errno;
  struct mount_attr a = { .attr_set = MOUNT_ATTR_IDMAP, .userns_fd = (uint64_t)userns_fd };
  return sys_mount_setattr (tree, "", AT_EMPTY_PATH, &a) == 0 ? 0 : errno;
}

static bool
check_idmap (struct doctor_report *r, const char *state_root)
{
  static const char *const paths[] = { "/", "/tmp", "/var/lib", "/run" };
  cleanup_free char **yes = NULL, **no = NULL;
  int first_err = 0;
  hk_err err = { 0 };
  bool root = geteuid () == 0;
  struct oci_idmap uid = { 0, root ? PROBE_ID_BASE : (unsigned)geteuid (), root ? PROBE_ID_SIZE : 1 };
  struct oci_idmap gid = { 0, root ? PROBE_ID_BASE : (unsigned)getegid (), root ? PROBE_ID_SIZE : 1 };
  /* As an ordinary user the namespace cannot be mapped from outside; the
   * probe then says what idmapping needs. */
  cleanup_close int userns_fd = root ? idmap_userns_open (&uid, 1, &gid, 1, &err) : -1;
  if (userns_fd < 0)
    first_err = root ? (err.errnum ? err.errnum : EPERM) : EPERM;
  for (size_t i = 0; userns_fd >= 0 && i < sizeof paths / sizeof *paths + 1; i++)
    {
      const char *p = i < sizeof paths / sizeof *paths ? paths[i] : state_root;
      struct statfs sf;
      if (p == NULL || statfs (p, &sf) < 0)
        continue;
      int e = try_idmap (p, userns_fd);
      char *what = e == 0 ? xasprintf ("%s (%s)", p, fs_name (sf.f_type))
                          : xasprintf ("%s (%s): %s", p, fs_name (sf.f_type), strerror (e));
      strv_add (e == 0 ? &yes : &no, what);
      if (e && !first_err)
        first_err = e;
    }
  char *why;
  if (yes)
    why = xasprintf ("mount_setattr(MOUNT_ATTR_IDMAP) works on %s%s", yes[0],
                     no ? "; not on every filesystem probed" : "");
  else if (geteuid () != 0)
    why = xasprintf ("needs CAP_SYS_ADMIN in the initial user namespace (hako as root): %s",
                     strerror (first_err ? first_err : EPERM));
  else
    why = xasprintf ("no filesystem probed can be idmapped: %s (Linux 5.12+, and per filesystem)",
                     strerror (first_err ? first_err : ENOSYS));
  struct doctor_item *it = doctor_add_item (r, "idmapped_mounts", "idmapped mounts", yes != NULL, why);
  doctor_field_strv (it, "supported_on", yes);
  doctor_field_strv (it, "unsupported_on", no);
  bool any = yes != NULL;
  for (char **p = yes; p && *p; p++)
    free (*p);
  for (char **p = no; p && *p; p++)
    free (*p);
  return any;
}

static bool
check_sys_resource (struct doctor_report *r)
{
  cap_t caps = cap_get_proc ();
  cap_flag_value_t v = CAP_CLEAR;
  if (caps)
    {
      cap_get_flag (caps, CAP_SYS_RESOURCE, CAP_EFFECTIVE, &v);
      cap_free (caps);
    }
  struct rlimit nofile = { 0 };
  getrlimit (RLIMIT_NOFILE, &nofile);
  bool have = v == CAP_SET;
  char *why = have ? xstrdup ("rlimits may be raised above the current hard limits")
                   : xasprintf ("missing: an rlimit whose hard limit is above hako's own (RLIMIT_NOFILE "
                                "hard %llu here) fails create with an error naming it",
                                (unsigned long long)nofile.rlim_max);
  struct doctor_item *it = doctor_add_item (r, "cap_sys_resource", "CAP_SYS_RESOURCE", have, why);
  doctor_field_int (it, "nofile_hard", nofile.rlim_max == RLIM_INFINITY ? -1 : (int64_t)nofile.rlim_max);
  return have;
}

/* ---- network namespaces ------------------------------------------------------ */

/* How far a sandbox's network gets: in a forked child, as hako would make
 * it (in a user namespace or not, as this user or as an ordinary one), a
 * network namespace, its lo up, and the allow-list proxy's listening
 * socket bound in it (what the sandbox's first process does). */
enum net_step
{
  NET_OK = 0,
  NET_STEP_USERNS, /* the user namespace around it */
  NET_STEP_NETNS,  /* unshare (CLONE_NEWNET) */
  NET_STEP_LO,     /* lo up */
  NET_STEP_LISTEN  /* 127.0.0.1:3128 bound and listening */
};

enum net_ctx
{
  NET_CTX_PLAIN,  /* hako's own credentials, no user namespace (root only) */
  NET_CTX_USERNS, /* in a user namespace of this user's */
  NET_CTX_UNPRIV  /* in one of an ordinary user's (uid 65534 when root) */
};

struct net_probe
{
  bool ran;
  int step; /* enum net_step that failed, NET_OK */
  int errnum;
};

static void __attribute__ ((noreturn)) net_probe_child (enum net_ctx ctx, int out)
{
  hk_err err = { 0 };
  int r[2] = { NET_STEP_USERNS, 0 };
  prctl (PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  if (ctx == NET_CTX_UNPRIV && geteuid () == 0
      && (setgroups (0, NULL) < 0 || setresgid (65534, 65534, 65534) < 0
          || setresuid (65534, 65534, 65534) < 0))
    goto fail;
  prctl (PR_SET_DUMPABLE, 1, 0, 0, 0); /* see probe_userns_unprivileged */
  if (ctx != NET_CTX_PLAIN && enter_own_userns () < 0)
    goto fail;
  r[0] = NET_STEP_NETNS;
  if (unshare (CLONE_NEWNET) < 0)
    goto fail;
  r[0] = NET_STEP_LO;
  if (net_loopback_up (&err) < 0)
    {
      errno = err.errnum;
      goto fail;
    }
  r[0] = NET_STEP_LISTEN;
  int fd = netpolicy_listen (&err);
  if (fd < 0)
    {
      errno = err.errnum;
      goto fail;
    }
  r[0] = NET_OK;
  errno = 0;
fail:
  r[1] = errno;
  _exit (write (out, r, sizeof r) == (ssize_t)sizeof r ? 0 : 1);
}

static void
probe_net (enum net_ctx ctx, struct net_probe *out)
{
  *out = (struct net_probe){ .ran = true, .step = NET_STEP_USERNS, .errnum = EIO };
  int p[2];
  if (pipe2 (p, O_CLOEXEC) < 0)
    {
      out->errnum = errno;
      return;
    }
  pid_t pid = fork ();
  if (pid == 0)
    {
      close (p[0]);
      net_probe_child (ctx, p[1]);
    }
  close (p[1]);
  int r[2];
  if (pid > 0 && read (p[0], r, sizeof r) == (ssize_t)sizeof r)
    {
      out->step = r[0];
      out->errnum = r[1];
    }
  else if (pid < 0)
    out->errnum = errno;
  close (p[0]);
  if (pid > 0)
    while (waitpid (pid, NULL, 0) < 0 && errno == EINTR)
      ;
}

/* What failed, in a few words; NULL when nothing did. */
static char *
net_failure (const struct net_probe *n)
{
  static const char *const what[] = {
    [NET_STEP_USERNS] = "the user namespace around it",
    [NET_STEP_NETNS] = "unshare(CLONE_NEWNET)",
    [NET_STEP_LO] = "bringing its lo up",
    [NET_STEP_LISTEN] = "binding 127.0.0.1:3128 in it (the proxy's socket)",
  };
  if (!n->ran || n->step == NET_OK)
    return NULL;
  long max = read_knob ("/proc/sys/user/max_net_namespaces");
  if (n->step == NET_STEP_NETNS && max == 0)
    return xasprintf ("%s: %s (user.max_net_namespaces is 0)", what[n->step], strerror (n->errnum));
  return xasprintf ("%s: %s", what[n->step], strerror (n->errnum));
}

struct net_facts
{
  struct net_probe plain, userns, unpriv;
};

static void
check_network (struct doctor_report *r, struct net_facts *f)
{
  *f = (struct net_facts){ 0 };
  if (geteuid () == 0)
    probe_net (NET_CTX_PLAIN, &f->plain);
  probe_net (NET_CTX_USERNS, &f->userns);
  probe_net (NET_CTX_UNPRIV, &f->unpriv);
  /* As hako runs: its own network namespace (root), else one in a user
   * namespace of its own (an ordinary user). */
  const struct net_probe *own = f->plain.ran ? &f->plain : &f->userns;
  cleanup_free char *own_why = net_failure (own);
  cleanup_free char *userns_why = net_failure (&f->userns);
  cleanup_free char *unpriv_why = net_failure (&f->unpriv);
  char *detail;
  if (own_why)
    detail = xasprintf ("missing: %s", own_why);
  else if (userns_why)
    detail = xasprintf ("made, lo up and the proxy's socket bound; in a user namespace: %s", userns_why);
  else if (unpriv_why)
    detail = xasprintf ("made, lo up and the proxy's socket bound, also in a user namespace; by an ordinary "
                        "user: %s",
                        unpriv_why);
  else
    detail = xstrdup ("made, lo up and the proxy's socket bound: by this process, in a user namespace and by "
                      "an ordinary user");
  struct doctor_item *it
      = doctor_add_item (r, "network_namespaces", "network namespaces", own_why == NULL, detail);
  doctor_field_bool (it, "in_user_namespace", userns_why == NULL);
  doctor_field_bool (it, "unprivileged", unpriv_why == NULL);
  field_knob (it, "max_net_namespaces", read_knob ("/proc/sys/user/max_net_namespaces"));
  field_knob (it, "ip_unprivileged_port_start", read_knob ("/proc/sys/net/ipv4/ip_unprivileged_port_start"));
}

/* ---- the profiles ----------------------------------------------------------- */

struct host_facts
{
  struct net_facts net;
  bool userns_root, userns_unpriv, syscalls, sys_resource, idmap;
  int landlock_abi;
  const struct cg_host *cg;
  const char *state_root;
};

/* Each network mode with this profile, for the user running doctor:
 * "host" needs nothing beyond the profile; "none" a network namespace
 * with lo up, made where the profile's process is (in its user namespace,
 * as this user or, for the rootless profile judged by root, an ordinary
 * one); "allowlist" that and the proxy's socket bound inside, which the
 * sandbox's first process makes and hands to the proxy outside. */
static void
judge_networks (struct doctor_profile *p, const struct oci_spec *spec, bool rootless,
                const struct host_facts *f)
{
  bool userns = oci_spec_ns (spec, OCI_NS_USER) != NULL;
  const struct net_probe *n = !userns && f->net.plain.ran   ? &f->net.plain
                              : rootless && geteuid () == 0 ? &f->net.unpriv
                                                            : &f->net.userns;
  cleanup_free char *fail = net_failure (n);
  bool lo_ok = n->step == NET_OK || n->step == NET_STEP_LISTEN;
  const char *no_profile = "the profile itself fails here (see its missing list)";
  long port_start = read_knob ("/proc/sys/net/ipv4/ip_unprivileged_port_start");
  if (!p->works)
    doctor_add_network (p, "host", false, xstrdup (no_profile));
  else if (userns && port_start > 0)
    doctor_add_network (p, "host", true,
                        xasprintf ("the host's network namespace: the sandbox reaches what the host reaches; "
                                   "from its user namespace, ports below %ld cannot be bound "
                                   "(net.ipv4.ip_unprivileged_port_start)",
                                   port_start));
  else
    doctor_add_network (p, "host", true,
                        xstrdup ("the host's network namespace: the sandbox reaches what the host reaches"));
  if (!p->works)
    doctor_add_network (p, "none", false, xstrdup (no_profile));
  else if (!lo_ok)
    doctor_add_network (p, "none", false, xasprintf ("no network namespace of its own: %s", fail));
  else
    doctor_add_network (p, "none", true, xstrdup ("a network namespace of its own with only lo"));
  if (!p->works)
    doctor_add_network (p, "allowlist", false, xstrdup (no_profile));
  else if (fail)
    doctor_add_network (p, "allowlist", false, xasprintf ("no proxy inside: %s", fail));
  else
    doctor_add_network (p, "allowlist", true,
                        xasprintf ("only lo, and the proxy at 127.0.0.1:3128 (its socket made inside, served "
                                   "from the host's network namespace as %s) for what --allow lists",
                                   rootless && geteuid () == 0 ? "the user running it"
                                   : geteuid () == 0           ? "nobody"
                                                               : "this user"));
}

/* Whether this host can confine the profile: its Landlock rules and seccomp filter. */
static void
check_confinement (struct doctor_profile *p, const struct oci_spec *spec, const struct host_facts *f)
{
  hk_err err = { 0 };
  struct landlock_plan *plan = NULL;
  if (landlock_prepare_abi (spec, f->landlock_abi, &plan, &err) < 0)
    strv_add (&p->missing, xasprintf ("Landlock: %s", err.msg));
  landlock_plan_free (plan);
  err_clear (&err);
  struct seccomp_prog *prog = NULL;
  if (seccomp_prepare (spec, &prog, &err) < 0)
    strv_add (&p->missing, xasprintf ("seccomp: %s", err.msg));
  seccomp_prog_free (prog);
  err_clear (&err);
}

/* Hard rlimits above hako's own, which only CAP_SYS_RESOURCE may raise. */
static void
check_rlimits (struct doctor_profile *p, const struct oci_spec *spec, const struct host_facts *f)
{
  for (size_t i = 0; spec->process && i < spec->process->n_rlimits; i++)
    {
      const struct oci_rlimit *rl = &spec->process->rlimits[i];
      struct rlimit cur;
      if (!f->sys_resource && getrlimit (rl->resource, &cur) == 0 && cur.rlim_max != RLIM_INFINITY
          && rl->hard > cur.rlim_max)
        strv_add (&p->missing,
                  xasprintf ("%s hard %llu is above the current hard limit %llu, without "
                             "CAP_SYS_RESOURCE",
                             rl->type, (unsigned long long)rl->hard, (unsigned long long)cur.rlim_max));
    }
}

static void
judge_profile (struct doctor_profile *p, enum oci_profile which, bool rootless, const struct host_facts *f)
{
  hk_err err = { 0 };
  cleanup_free char *json = NULL;
  struct oci_spec *spec = NULL;
  p->works = false;
  struct oci_profile_limits lim;
  if (admission_profile_limits (&lim, &err) < 0)
    {
      strv_add (&p->missing, xasprintf ("the default limits: %s", err.msg));
      return;
    }
  if (!rootless)
    {
      char mem[48] = "none", pids[32] = "none";
      if (lim.memory > 0)
        snprintf (mem, sizeof mem, "%lld MiB", (long long)(lim.memory >> 20));
      if (lim.pids > 0)
        snprintf (pids, sizeof pids, "%lld tasks", (long long)lim.pids);
      strv_add (&p->notes, xasprintf ("limits by default: memory %s, pids %s (node.json: default_memory, "
                                      "default_pids)",
                                      mem, pids));
    }
  if (oci_profile_generate (which, rootless, NULL, &lim, &json, &err) < 0
      || oci_spec_parse (json, strlen (json), &spec, &err) < 0)
    {
      strv_add (&p->missing, xasprintf ("the profile itself: %s", err.msg));
      return;
    }
  if (!f->syscalls)
    strv_add (&p->missing, xstrdup ("clone3, pidfd_open, openat2, close_range or mount_setattr (see above)"));
  if (oci_spec_ns (spec, OCI_NS_USER))
    {
      if (rootless && !f->userns_unpriv)
        strv_add (&p->missing, xstrdup ("a user namespace an ordinary user can create and map"));
      else if (!rootless && !f->userns_root)
        strv_add (&p->missing, xstrdup ("user namespaces"));
    }
  if (spec->sandbox.idmap && !f->idmap)
    strv_add (&p->missing, xstrdup ("idmapped mounts for the bundle's rootfs (sandbox.idmap; set it to "
                                    "false to go without)"));
  else if (spec->sandbox.idmap)
    strv_add (&p->notes, xstrdup ("the bundle's rootfs is mounted idmapped: its filesystem must support "
                                  "it (see idmapped mounts above)"));
  check_confinement (p, spec, f);
  check_rlimits (p, spec, f);
  if (rootless)
    {
      strv_add (&p->notes, xstrdup ("state under $XDG_RUNTIME_DIR/hako (unset: /run/user/UID/hako, else "
                                    "~/.cache/hako/run), data under ~/.local/share/hako"));
      strv_add (&p->notes, xstrdup ("no cgroups of its own unless a delegated, writable one exists: no "
                                    "limits, no pause"));
      strv_add (&p->notes, xstrdup ("uid/gid mappings wider than one id need newuidmap/newgidmap and "
                                    "/etc/subuid and /etc/subgid ranges"));
    }
  else if (f->cg)
    {
      struct cg_sandbox cg = { 0 };
      if (cg_prepare (f->cg, spec, "doctor-probe", f->state_root, &cg, &err) < 0)
        strv_add (&p->missing, xasprintf ("cgroups: %s", err.msg));
      cg_sandbox_free (&cg);
    }
  if (!rootless)
    strv_add (&p->notes, xstrdup ("root inside is host uid 1000000000: root-only host files stay "
                                  "unreadable"));
  p->works = p->missing == NULL;
  judge_networks (p, spec, rootless, f);
  oci_spec_free (spec);
}

static void
judge_profiles (struct doctor_report *r, const struct host_facts *f)
{
  static const struct
  {
    const char *name;
    enum oci_profile which;
    bool rootless;
  } profiles[] = {
    { "default", OCI_PROFILE_DEFAULT, false },
    { "host", OCI_PROFILE_HOST, false },
    { "rootless", OCI_PROFILE_DEFAULT, true },
  };
  size_t n = sizeof profiles / sizeof *profiles;
  r->profiles = xcalloc (n, sizeof *r->profiles);
  r->n_profiles = n;
  for (size_t i = 0; i < n; i++)
    {
      r->profiles[i].name = profiles[i].name;
      /* As an ordinary user every profile is generated rootless (as create does). */
      judge_profile (&r->profiles[i], profiles[i].which, profiles[i].rootless || geteuid () != 0, f);
    }
}

int
doctor_probe (const char *state_root, struct doctor_report *r, hk_err *err)
{
  (void)err;
  *r = (struct doctor_report){ .euid = geteuid () };
  struct utsname u;
  r->kernel = xstrdup (uname (&u) == 0 ? u.release : "unknown");
  struct host_facts f = { .state_root = state_root };
  check_userns (r, &f.userns_root, &f.userns_unpriv);
  check_network (r, &f.net);
  f.landlock_abi = check_landlock (r);
  check_seccomp (r);
  check_cgroups (r, &f.cg);
  check_cgroup_moves (r, f.cg);
  check_overlay (r);
  check_syscalls (r, &f.syscalls);
  f.idmap = check_idmap (r, state_root);
  f.sys_resource = check_sys_resource (r);
  judge_profiles (r, &f);
  return 0;
}
