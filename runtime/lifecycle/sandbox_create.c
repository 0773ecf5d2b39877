/* sandbox_create: validating a spec for a sandbox and building one — the
 * state dir, data dir, cgroups, spawn and the monitor (sbx_create).  The
 * other lifecycle verbs are in sandbox.c. */
#include "runtime/lifecycle/sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/syscalls.h"
#include "lib/trace.h"
#include "lib/util.h"
#include "runtime/build/console.h"
#include "runtime/build/disk.h"
#include "runtime/build/hooks.h"
#include "runtime/build/idmap.h"
#include "runtime/build/mntns.h"
#include "runtime/build/mount.h"
#include "runtime/build/rootfs_image.h"
#include "runtime/build/validate.h"
#include "runtime/cgroup/cgroup.h"
#include "runtime/confine/process.h"
#include "runtime/lifecycle/fork.h"
#include "runtime/node/admission.h"
#include "runtime/node/consent.h"
#include "runtime/proxy/egress.h"
#include "runtime/proxy/netpolicy.h"
#include "runtime/proxy/ports.h"
#include "runtime/save/snapshot.h"
#include "runtime/state/deadline.h"
#include "runtime/state/monitor.h"
#include "runtime/state/pidinfo.h"
#include "runtime/state/sbxlog.h"

/* The pid file beside state.json.  Written first, so even a sandbox whose
 * state.json is damaged can still be found and killed. */
static int
write_pid_record (const struct store_entry *e, pid_t pid, uint64_t start, hk_err *err)
{
  cleanup_free char *path = store_path (e, "pid");
  return pid_record_write (path, pid, start, false, err);
}

/* ---- create ------------------------------------------------------------------ */

struct build
{
  struct store_entry entry;
  char *data_dir; /* set when we made it */
  struct spawn_child child;
  struct landlock_plan *landlock;
  struct seccomp_prog *seccomp;
  struct cg_sandbox cgroups;     /* decided before anything is built; made just before clone */
  bool restart;                  /* start of a stopped sandbox: its state dir and data dir are kept */
  struct rootfs_overlay overlay; /* image sandboxes: the root's overlay */
  struct sbxlog_pipes log;       /* run --detach: the process's stdio (log_cap > 0) */
  uint64_t log_cap;
  uint64_t disk_size;     /* the disk limit, decided before anything is built; 0: none */
  struct port_map *ports; /* published ports, bound before anything is built */
  int *port_fds;
  size_t n_ports;
};

static void
build_free (struct build *b)
{
  free (b->data_dir);
  rootfs_overlay_free (&b->overlay);
  landlock_plan_free (b->landlock);
  seccomp_prog_free (b->seccomp);
  b->data_dir = NULL;
  b->landlock = NULL;
  b->seccomp = NULL;
  cg_sandbox_free (&b->cgroups);
  sbxlog_pipes_close (&b->log);
  ports_close (b->port_fds, b->n_ports);
  free (b->port_fds);
  free (b->ports);
  b->port_fds = NULL;
  b->ports = NULL;
  b->n_ports = 0;
}

/* Undo a failed create: the process, the data dir (and its disk) and the state dir. */
static void
build_abort (const struct store *st, const struct sbx_create_opts *o, struct build *b)
{
  const char *id = o->id;
  hk_err ignored;
  if (b->entry.dir)
    {
      proxy_stop (&b->entry);
      ports_stop (&b->entry);
    }
  spawn_abort (&b->child);
  spawn_close (&b->child);
  cg_remove (&b->cgroups, &ignored);
  if (b->data_dir && !b->restart)
    {
      disk_release (st, id, &ignored);
      rm_rf (b->data_dir, &ignored);
    }
  /* Never remove the state dir over a tree still mounted there.  A fork's
   * child's stays for the fork's guard, whose delete also takes the data
   * the fork made for it (its snapshot, its name in the family's image),
   * which this create may not have reached yet: without the dir, the
   * guard found no sandbox to delete and left them. */
  bool released = b->entry.dir == NULL || mntns_release (&b->entry, &ignored) == 0;
  if (b->entry.dir && !b->restart && !o->reserved && released)
    store_remove (&b->entry, &ignored);
  store_close (&b->entry);
  build_free (b);
}

static int
resolve_rootfs (const struct sbx_create_opts *o, struct build *b, char **rootfs, hk_err *err)
{
  const struct oci_spec *spec = o->spec;
  if (o->image_layers || spec->sandbox.image)
    {
      /* A restart keeps the mount point; the layers come from the record. */
      if (b->restart)
        {
          *rootfs = store_path (&b->entry, "rootfs");
          return 0;
        }
      return rootfs_image_dir (&b->entry, o->image_layers, spec, rootfs, err);
    }
  if (spec->sandbox.root == HAKO_ROOT_TMPFS)
    {
      *rootfs = store_path (&b->entry, "rootfs");
      if (mkdir (*rootfs, 0755) < 0 && !(errno == EEXIST && b->restart))
        return err_sys (err, "mkdir %s", *rootfs);
      return 0;
    }
  if (spec->root_path == NULL)
    return err_set (err, EINVAL, ".root.path: required");
  cleanup_free char *joined = spec->root_path[0] == '/' || o->bundle == NULL
                                  ? xstrdup (spec->root_path)
                                  : xasprintf ("%s/%s", o->bundle, spec->root_path);
  char *real = realpath (joined, NULL);
  struct stat sb;
  /* The default profile names its bundle's rootfs/: which is rarely there
   * for someone trying it in a directory of their own. */
  if (real == NULL && errno == ENOENT && spec->sandbox.profile
      && strcmp (spec->sandbox.profile, "default") == 0)
    return err_set (err, ENOENT,
                    "root.path %s: No such file or directory: the default profile runs the root "
                    "filesystem of a bundle (its rootfs/): give --bundle DIR of one, --image NAME, or "
                    "--profile host to run on the host's own directories",
                    joined);
  if (real == NULL)
    return err_sys (err, "root.path %s", joined);
  if (stat (real, &sb) < 0 || !S_ISDIR (sb.st_mode))
    {
      free (real);
      return err_set (err, ENOTDIR, "root.path %s: not a directory", joined);
    }
  *rootfs = real;
  return 0;
}

/* Whether the sandbox keeps a data dir: a persistent work dir, or an image's writable layer. */
static bool
has_data_dir (const struct sbx_create_opts *o, bool restart)
{
  return o->spec->sandbox.workdir_persist || o->image_layers || (restart && o->spec->sandbox.image);
}

/* The data dir: on a disk limit, a filesystem of its own (disk.c), made
 * here or, on a restart, mounted again if a reboot unmounted it. */
static int
prepare_data_dir (const struct store *st, const struct sbx_create_opts *o, struct build *b, hk_err *err)
{
  if (!has_data_dir (o, b->restart))
    return 0;
  b->data_dir = store_data_dir (st, o->id);
  if (b->restart)
    return disk_remount (st, o->id, err);
  if (o->data_ready)
    return 0;
  /* A leftover from an interrupted delete must not leak into a new sandbox;
   * a restarted one keeps its own. */
  if (disk_release (st, o->id, err) < 0 || rm_rf (b->data_dir, err) < 0
      || store_data_dir_make (st, o->id, err) < 0
      || (b->disk_size && disk_create (st, o->id, b->disk_size, err) < 0))
    return -1;
  test_stall_forever ("after-disk", b->entry.dir);
  return 0;
}

/* The data dir (its /work, its writable layer) closed to the host's other
 * users: they could pass through it (0711) to read the sandbox's files by
 * path (its ids are in every `ps`), where its /work is 0755.  Only its
 * root's host group may pass, which its mounts and a stopped sandbox's
 * helper need (mapped root looks the path up); without a user namespace
 * the sandbox is real root, and the dir is 0700. */
static int
gate_data_dir (const struct sbx_create_opts *o, const struct build *b, hk_err *err)
{
  if (b->data_dir == NULL || geteuid () != 0)
    return 0; /* rootless: the data root is the user's own */
  uint32_t gid = 0;
  if (oci_spec_ns (o->spec, OCI_NS_USER)
      && !idmap_to_host (o->spec->linux.gid_mappings, o->spec->linux.n_gid_mappings, 0, &gid))
    return 0; /* no root inside to pass: left as it was made */
  /* A root of a user namespace of its own (rootless podman's) may not map
   * that group: its data root is its user's already. */
  if (chown (b->data_dir, 0, (gid_t)gid) < 0)
    return errno == EINVAL || errno == EPERM ? 0 : err_sys (err, "close %s to other users", b->data_dir);
  if (chmod (b->data_dir, gid ? 0710 : 0700) < 0)
    return err_sys (err, "close %s to other users", b->data_dir);
  return 0;
}

static int
prepare_workdir (const struct sbx_create_opts *o, struct build *b, hk_err *err)
{
  if (!o->spec->sandbox.workdir_persist)
    return 0;
  cleanup_free char *work = xasprintf ("%s/work", b->data_dir);
  if (mkdir_p (work, 0755, err) < 0)
    return -1;
  if (o->from_snapshot && !b->restart && snapshot_copy_tree (o->from_snapshot, work, err) < 0)
    return err_prefix (err, "from snapshot");
  /* In a user namespace the work dir belongs to the host ids the process's
   * user maps to, or it could not write its own /work. */
  uid_t uid;
  gid_t gid;
  const struct oci_process *p = o->spec->process;
  if (oci_spec_ns (o->spec, OCI_NS_USER)
      && idmap_to_host (o->spec->linux.uid_mappings, o->spec->linux.n_uid_mappings, p->user.uid, &uid)
      && idmap_to_host (o->spec->linux.gid_mappings, o->spec->linux.n_gid_mappings, p->user.gid, &gid)
      && chown (work, uid, gid) < 0)
    return err_sys (err, "chown %s", work);
  /* The data root may be under a directory of the user's that its mapped
   * root cannot pass: say which, not "mount ...: Permission denied". */
  return idmap_check_reachable (o->spec, work, err) < 0 ? err_prefix (err, "work dir") : 0;
}

/* The persistent work dir; an image sandbox has a data dir without one. */
static char *
workdir_of (const struct sbx_create_opts *o, const struct build *b)
{
  return b->data_dir && o->spec->sandbox.workdir_persist ? xasprintf ("%s/work", b->data_dir) : NULL;
}

/* An image sandbox's writable layer, under its data dir (removed by delete). */
static int
prepare_image_layer (const struct sbx_create_opts *o, struct build *b, hk_err *err)
{
  if (o->image_layers == NULL && !(b->restart && o->spec->sandbox.image))
    return 0;
  /* A restart mounts the writable layer it kept, over the layers recorded;
   * a fork's child the one its snapshot holds. */
  if (b->restart || o->data_ready)
    return rootfs_image_reload (b->data_dir, &b->overlay, err);
  if (rootfs_image_prepare (b->data_dir, o->image_layers, o->image_id, o->spec, &b->overlay, err) < 0)
    return -1;
  cleanup_free char *upper = xasprintf ("%s/rootfs/upper", b->data_dir);
  if (o->from_snapshot && snapshot_copy_tree (o->from_snapshot, upper, err) < 0)
    return err_prefix (err, "from snapshot");
  return 0;
}

static int
record_state (struct build *b, const struct sbx_create_opts *o, enum oci_status status, const char *rootfs,
              hk_err *err)
{
  struct oci_state s = {
    .oci_version = o->spec->oci_version,
    .id = (char *)o->id,
    .status = status,
    .pid = b->child.pid,
    .pid_start_time = b->child.start_time,
    .bundle = (char *)o->bundle,
    .annotations = o->spec->annotations,
    .n_annotations = o->spec->n_annotations,
    .rootfs = (char *)rootfs,
    /* A restart's process, until start releases it: should that start fail,
     * the sandbox reads stopped and a start may try again. */
    .restartable = b->restart,
  };
  cleanup_free char *created = o->created ? xstrdup (o->created) : time_rfc3339_now ();
  cleanup_free char *work = workdir_of (o, b);
  s.created = created;
  cleanup_free char *now = status == OCI_STATUS_RUNNING ? time_rfc3339_now () : NULL;
  s.started = now;
  s.workdir = work;
  return store_write_state (&b->entry, &s, err);
}

/* The state the create-time hooks get on stdin: created, with the pid.  The
 * runtime-spec's lifecycle has the environment created (step 2) before these
 * hooks (steps 3-5), and the OCI validation suite checks prestart for
 * "created", as crun sends it; `hako state` says creating until create returns. */
static struct oci_state
hook_state (const struct build *b, const struct sbx_create_opts *o, const char *rootfs)
{
  return (struct oci_state){ .oci_version = o->spec->oci_version,
                             .id = (char *)o->id,
                             .status = OCI_STATUS_CREATED,
                             .pid = b->child.pid,
                             .pid_start_time = b->child.start_time,
                             .bundle = (char *)o->bundle,
                             .annotations = o->spec->annotations,
                             .n_annotations = o->spec->n_annotations,
                             .rootfs = (char *)rootfs };
}

struct hook_arg
{
  const struct sbx_create_opts *o;
  const char *rootfs;
};

/* prestart (deprecated; run as createRuntime is) then createRuntime: in
 * hako's namespaces, the child cloned into its own but its root not built. */
static int
run_create_runtime_hooks (void *arg, pid_t pid, hk_err *err)
{
  const struct hook_arg *a = arg;
  struct build b = { .child = { .pid = pid } };
  pid_stat (pid, &b.child.start_time, NULL);
  struct oci_state s = hook_state (&b, a->o, a->rootfs);
  return hooks_run (a->o->spec, OCI_HOOK_PRESTART, &s, -1, false, err) < 0
                 || hooks_run (a->o->spec, OCI_HOOK_CREATE_RUNTIME, &s, -1, false, err) < 0
             ? -1
             : 0;
}

/* The sandbox's cgroups, listed in the state dir before the first is made. */
static int
create_cgroups (struct build *b, const struct sbx_create_opts *o, hk_err *err)
{
  cleanup_free char *record = store_path (&b->entry, "cgroups");
  trace_mark ("cgroup create");
  /* The device filter's load (the verifier's work) is attached while the
   * child builds the root: spawn's filter step (spawn.h). */
  b->cgroups.defer_filter = true;
  if (cg_create (&b->cgroups, o->spec, record, err) < 0)
    return -1;
  trace_mark ("spawn prep");
  test_stall_forever ("after-cgroups", b->entry.dir);
  return 0;
}

/* With v1 hierarchies, what a "cgroup" mount shows: each directory made for
 * the sandbox, named as the host names its hierarchy (mount.h).  NULL on a
 * unified host (the cgroup2 directory alone) or without cgroups. */
static struct mnt_cgroup *
cgroup_view (const struct cg_sandbox *cg, size_t *n)
{
  *n = 0;
  if (cg->layout != CG_V1 && cg->layout != CG_HYBRID)
    return NULL;
  struct mnt_cgroup *v = xcalloc (cg->n + 1, sizeof *v);
  for (size_t i = 0; i < cg->n; i++)
    if (cg->dirs[i].made && !cg->dirs[i].skipped && cg->dirs[i].mount)
      {
        const char *slash = strrchr (cg->dirs[i].mount, '/');
        v[*n].name = slash ? slash + 1 : cg->dirs[i].mount;
        v[(*n)++].dir = cg->dirs[i].path;
      }
  return v;
}

static int
place_in_cgroups (void *arg, pid_t pid, bool in_v2, hk_err *err)
{
  struct build *b = arg;
  return cg_enter (&b->cgroups, pid, in_v2, true, err);
}

static int
attach_filter (void *arg, const struct oci_spec *spec, hk_err *err)
{
  struct build *b = arg;
  test_stall_forever ("after-go", b->entry.dir);
  return cg_attach_filter (&b->cgroups, spec, err);
}

/* Where the pty's master goes: the console socket, or (foreground without
 * one) a pair whose other end run keeps for its relay.  As runc: a terminal
 * needs somewhere to go, a console socket needs a terminal. */
static int
open_console (const struct sbx_create_opts *o, int *child_end, int *hako_end, hk_err *err)
{
  bool terminal = o->spec->process->terminal;
  if (!terminal && o->console_socket)
    return err_set (err, EINVAL, "--console-socket given but .process.terminal is false");
  if (!terminal)
    return 0;
  if (o->console_socket)
    return console_connect (o->console_socket, child_end, err);
  if (!o->foreground)
    return err_set (err, EINVAL,
                    ".process.terminal is true: a detached sandbox needs "
                    "--console-socket to hand its terminal to");
  int sv[2];
  if (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
    return err_sys (err, "socketpair");
  *hako_end = sv[0];
  *child_end = sv[1];
  return 0;
}

static int
remove_stale (struct build *b, hk_err *err)
{
  /* What the last run left: its fifo, pid and exit records. */
  static const char *const stale[] = { "exec.fifo", "pid", "exit" };
  for (size_t i = 0; i < sizeof stale / sizeof *stale; i++)
    {
      cleanup_free char *path = store_path (&b->entry, stale[i]);
      if (unlink (path) < 0 && errno != ENOENT)
        return err_sys (err, "remove %s", path);
    }
  return 0;
}

/* exec.fifo, which `start` opens to release the process. */
static int
make_fifo (struct build *b, int *fifo_fd, hk_err *err)
{
  cleanup_free char *fifo = store_path (&b->entry, "exec.fifo");
  /* 0622: the sandbox's process may run as any uid by the time it opens it. */
  if (mkfifo (fifo, 0622) < 0 || chmod (fifo, 0622) < 0)
    return err_sys (err, "mkfifo %s", fifo);
  *fifo_fd = open (fifo, O_PATH | O_CLOEXEC);
  if (*fifo_fd < 0)
    return err_sys (err, "open %s", fifo);
  return 0;
}

/* spawn_clone with everything create prepared: the sandbox's cgroups (its
 * cgroup2 dir for clone3, the v1 ones' tasks files it joins by itself), its
 * view of them, the hooks before "go". */
static int
clone_child (const struct sbx_create_opts *o, struct build *b, const char *rootfs, int fifo_fd,
             int console_fd, const char *work, const char *tree, hk_err *err)
{
  cleanup_close int cgroup_fd = cg_open_v2 (&b->cgroups);
  int *v1_tasks = NULL;
  size_t n_v1_tasks = 0;
  if (cg_open_self_join (&b->cgroups, &v1_tasks, &n_v1_tasks, err) < 0)
    return -1;
  struct spawn_cgroup cgroup = { .v2_fd = cgroup_fd,
                                 .place = place_in_cgroups,
                                 .filter = attach_filter,
                                 .arg = b,
                                 .v1_tasks = v1_tasks,
                                 .n_v1_tasks = n_v1_tasks };
  size_t n_view;
  cleanup_free struct mnt_cgroup *view = cgroup_view (&b->cgroups, &n_view);
  struct spawn_cfg cfg = { .spec = o->spec,
                           .rootfs = rootfs,
                           .bundle = o->bundle,
                           .workdir = work,
                           .cgroup_dir = cg_v2_path (&b->cgroups),
                           .cgroups = view,
                           .n_cgroups = n_view,
                           .cgroup = &cgroup,
                           .fifo_fd = fifo_fd,
                           .landlock = b->landlock,
                           .seccomp = b->seccomp,
                           .preserve_fds = o->preserve_fds,
                           .console_fd = console_fd,
                           .overlay = b->overlay.opts,
                           .overlay_dir = b->overlay.dir,
                           .tree = tree,
                           .stdio_log = b->log_cap > 0,
                           .log_out = b->log.out[1],
                           .log_err = b->log.err[1],
                           .learn = o->learn,
                           .proxy_listener = netpolicy_has_proxy (o->spec),
                           .ns_fds = b->n_ports > 0 };
  struct hook_arg hook_arg = { .o = o, .rootfs = rootfs };
  cfg.before_go = run_create_runtime_hooks;
  cfg.before_go_arg = &hook_arg;
  cfg.wait_joined = o->spec->hooks.n[OCI_HOOK_PRESTART] || o->spec->hooks.n[OCI_HOOK_CREATE_RUNTIME];
  int cloned = spawn_clone (&cfg, &b->child, err);
  cg_close_self_join (v1_tasks, n_v1_tasks); /* the child's own copies join */
  return cloned;
}

static int
create_spawn (const struct sbx_create_opts *o, struct build *b, const char *rootfs, int *status, int *console,
              hk_err *err)
{
  cleanup_close int fifo_fd = -1;
  if (b->restart && remove_stale (b, err) < 0)
    return -1;
  cleanup_close int console_fd = -1;
  if (open_console (o, &console_fd, console, err) < 0)
    return -1;
  if (!o->foreground && make_fifo (b, &fifo_fd, err) < 0)
    return -1;
  cleanup_free char *work = workdir_of (o, b);
  cleanup_free char *tree = mntns_is_host (o->spec) ? mntns_tree_path (&b->entry) : NULL;
  if (tree && mntns_prepare_tree (&b->entry, err) < 0)
    return -1;
  if (clone_child (o, b, rootfs, fifo_fd, console_fd, work, tree, err) < 0)
    return -1;
  close (console_fd); /* the child's now */
  console_fd = -1;
  /* The child has its ends: EOF on the log's pipes comes when its last
   * process closes them. */
  if (b->log.out[1] >= 0)
    close (b->log.out[1]);
  if (b->log.err[1] >= 0)
    close (b->log.err[1]);
  b->log.out[1] = b->log.err[1] = -1;
  /* Record the pid before the child builds anything: a hako killed from here
   * on leaves what `delete --force` needs to clean up after it. */
  if (write_pid_record (&b->entry, b->child.pid, b->child.start_time, err) < 0
      || record_state (b, o, OCI_STATUS_CREATING, rootfs, err) < 0)
    return -1;
  trace_mark ("wait for ready");
  test_stall_forever ("after-clone", b->entry.dir);
  if (spawn_wait_ready (&b->child, status, err) < 0)
    return -1;
  /* createContainer in the sandbox's namespaces, its path from hako's; a
   * foreground run releases its process right away, so startContainer too. */
  struct oci_state hs = hook_state (b, o, rootfs);
  if (hooks_run (o->spec, OCI_HOOK_CREATE_CONTAINER, &hs, b->child.pid, true, err) < 0
      || (o->foreground && hooks_run_start (o->spec, &hs, b->child.pid, b->seccomp, err) < 0))
    return -1;
  /* A foreground run releases the process right away: record it as running
   * now rather than rewrite the state a moment later. */
  if (record_state (b, o, o->foreground ? OCI_STATUS_RUNNING : OCI_STATUS_CREATED, rootfs, err) < 0)
    return -1;
  trace_mark ("proxy, pid file");
  test_stall_forever ("after-ready", b->entry.dir);
  return 0;
}

/* run --detach: the process's stdio goes to its log, on every start (the
 * marker keeps the cap for a restart of the stopped sandbox).  Only a
 * monitor can copy it there, and a terminal is the console socket's. */
static int
prepare_log (const struct sbx_create_opts *o, struct build *b, bool monitored, hk_err *err)
{
  cleanup_free char *marker = store_path (&b->entry, SBXLOG_MARKER);
  uint64_t cap = o->log_cap;
  if (b->restart)
    {
      cleanup_free char *text = NULL;
      hk_err ignored;
      cap = 0;
      if (file_read_all (marker, 64, &text, NULL, &ignored) == 0 && parse_size (text, &cap) < 0)
        cap = SBXLOG_DEFAULT_CAP;
    }
  if (cap == 0 || !monitored || o->spec->process->terminal)
    return 0;
  if (!b->restart)
    {
      char text[32];
      int n = snprintf (text, sizeof text, "%llu", (unsigned long long)cap);
      if (file_write_new (marker, text, (size_t)n, 0600, err) < 0)
        return -1;
    }
  b->log_cap = cap;
  return sbxlog_pipes_open (&b->log, err);
}

/* sandbox.limits.timeout: counted from create (or the restart), held by a
 * watchdog that outlives whoever made the sandbox (runtime/state/deadline.h).  A
 * restart without one drops what `update --timeout` left of the last run. */
static int
arm_deadline (const struct sbx_create_opts *o, struct build *b, hk_err *err)
{
  const struct hako_sandbox *sb = &o->spec->sandbox;
  if (sb->has_timeout && sb->timeout_ms > 0)
    return deadline_set (b->entry.dir, b->child.pid, b->child.start_time, b->child.pidfd, sb->timeout_ms,
                         err);
  if (b->restart)
    {
      cleanup_free char *path = store_path (&b->entry, "deadline");
      unlink (path);
    }
  return 0;
}

/* Published ports (run/create -p, or a restart's record), bound first: a
 * host port in use or privileged fails create before anything but the state
 * dir (whose mkdir decides a race for the id) is made. */
static int
prepare_ports (const struct sbx_create_opts *o, struct build *b, hk_err *err)
{
  if (o->restart)
    {
      if (ports_read (o->restart, &b->ports, &b->n_ports, err) < 0)
        return -1;
    }
  else if (o->n_ports > 0)
    {
      b->ports = xcalloc (o->n_ports, sizeof *b->ports);
      memcpy (b->ports, o->ports, o->n_ports * sizeof *b->ports);
      b->n_ports = o->n_ports;
    }
  if (b->n_ports == 0)
    return 0;
  b->port_fds = xcalloc (b->n_ports, sizeof *b->port_fds);
  for (size_t i = 0; i < b->n_ports; i++)
    b->port_fds[i] = -1;
  if (ports_check_spec (o->spec, b->ports, b->n_ports, err) < 0)
    return -1;
  return ports_bind (b->ports, b->n_ports, b->port_fds, err);
}

/* The published ports' forwarder, into the namespaces spawn opened for it
 * (hako keeps them no longer: the sandbox's process holds them). */
static int
start_ports (struct build *b, hk_err *err)
{
  int r = ports_start (&b->entry, b->ports, b->port_fds, b->n_ports, b->child.pidfd, b->child.netns_fd,
                       b->child.userns_fd, true, err);
  if (b->child.netns_fd >= 0)
    close (steal_fd (&b->child.netns_fd));
  if (b->child.userns_fd >= 0)
    close (steal_fd (&b->child.userns_fd));
  return r;
}

/* The part of create after the checks: the state dir (kept on a restart),
 * the root, the work dir, the cgroups and the process. */
/* Whether the root is mounted from a tree hako opens as real root before the
 * sandbox's own process runs (an idmapped rootfs: idmap_open_tree; an image's
 * overlay in a user namespace), so the sandbox's mapped root never looks its
 * path up and the directories above it need not be searchable by it (a
 * bundle under a 0700 /root, podman's 0700 run dir). */
static bool
root_by_fd (const struct sbx_create_opts *o)
{
  return oci_spec_ns (o->spec, OCI_NS_USER) && o->spec->sandbox.root != HAKO_ROOT_TMPFS
         && (o->spec->sandbox.idmap || o->image_layers);
}

static int
build_sandbox (const struct store *st, const struct sbx_create_opts *o, struct build *b, char **rootfs,
               bool monitored, int *console, int *status, hk_err *err)
{
  if (b->restart)
    b->entry = (struct store_entry){ .id = xstrdup (o->restart->id),
                                     .dir = xstrdup (o->restart->dir),
                                     .lock_fd = -1 };
  else if ((o->reserved ? fork_take_reserved (st, o->id, &b->entry, err)
                        : store_create (st, o->id, &b->entry, err))
           < 0)
    return -1;
  trace_mark ("rootfs, workdir, config");
  test_stall_forever ("after-mkdir", b->entry.dir);
  cleanup_free char *config = store_path (&b->entry, "config.json");
  cleanup_free char *no_monitor = store_path (&b->entry, "no-monitor");
  if ((monitored && mon_record_self (b->entry.dir, err) < 0)
      || (!monitored && !o->foreground && !b->restart && file_write_new (no_monitor, "", 0, 0600, err) < 0))
    return -1;
  /* Admission first, under its own lock (a restart replaces its own record);
   * the proxy once the process is ready, so a restart gets a new one too. */
  if (prepare_ports (o, b, err) < 0 || admission_reserve (st, o->id, o->spec, err) < 0
      || resolve_rootfs (o, b, rootfs, err) < 0
      || (!root_by_fd (o) && idmap_check_reachable (o->spec, *rootfs, err) < 0)
      || (!b->restart && file_write_new (config, o->config_json, o->config_len, 0600, err) < 0)
      || egress_prepare (&b->entry, o->spec, b->restart, err) < 0
      || egress_mounts (&b->entry, o->spec, o->image_layers != NULL || o->spec->sandbox.image, *rootfs, err)
             < 0
      || prepare_log (o, b, monitored, err) < 0 || prepare_data_dir (st, o, b, err) < 0
      || gate_data_dir (o, b, err) < 0 || prepare_workdir (o, b, err) < 0
      || prepare_image_layer (o, b, err) < 0 || create_cgroups (b, o, err) < 0
      || create_spawn (o, b, *rootfs, status, console, err) < 0 || arm_deadline (o, b, err) < 0
      || proxy_start (&b->entry, o->spec, b->child.pidfd, &b->child.proxy_fd,
                      o->learn ? o->learn->net_fd : -1, err)
             < 0
      || start_ports (b, err) < 0 || (o->pid_file && pid_file_write (o->pid_file, b->child.pid, err) < 0))
    return -1;
  return 0;
}

/* In the monitor, once create is done: hand the caller its answer and stay
 * on as the parent of the sandbox's process. */
static void __attribute__ ((noreturn)) monitor_sandbox (struct build *b, struct mon_link *link)
{
  struct mon_watch w = { .pid = b->child.pid,
                         .start_time = b->child.start_time,
                         .state_dir = xstrdup (b->entry.dir),
                         .cg = b->cgroups,
                         .log_out = steal_fd (&b->log.out[0]),
                         .log_err = steal_fd (&b->log.err[0]),
                         .log_cap = b->log_cap };
  hk_err ignored;
  b->cgroups = (struct cg_sandbox){ 0 };
  cg_oom_kills (&w.cg, &w.oom_before, &ignored);
  spawn_close (&b->child);
  build_free (b);
  store_close (&b->entry);
  mon_run (link, &w);
}

int
sbx_create (const struct store *st, const struct sbx_create_opts *o, struct sbx_fg *fg, int *status,
            hk_err *err)
{
  struct build b
      = { .entry = { .lock_fd = -1 },
          .child = { .pid = -1, .pidfd = -1, .sync_fd = -1, .proxy_fd = -1, .netns_fd = -1, .userns_fd = -1 },
          .restart = o->restart != NULL,
          .log = { .out = { -1, -1 }, .err = { -1, -1 } } };
  cleanup_free char *rootfs = NULL;
  cleanup_close int console = -1;
  const struct cg_host *cg_host;
  *status = 125;
  trace_mark ("create: plan");
  /* Everything that can be decided without touching the host is decided
   * first: the Landlock plan, the seccomp program and the cgroups (which
   * hierarchies, which paths, whether this host can enforce the limits) are
   * ready before clone; first, that the node consents to what the pod's
   * annotations widen (consent.c), before the config's namespaces change. */
  if (consent_check_node (o->spec, err) < 0 || sbx_validate (o->spec, err) < 0
      || landlock_prepare (o->spec, &b.landlock, err) < 0
      || seccomp_prepare_cached (o->spec, st->data_root, &b.seccomp, err) < 0
      || cg_host_get (&cg_host, err) < 0
      || cg_prepare (cg_host, o->spec, o->id, st->root, &b.cgroups, err) < 0
      || (!b.restart && !o->data_ready
          && disk_plan (st, o->spec, has_data_dir (o, false), &b.disk_size, err) < 0))
    {
      build_free (&b);
      return -1;
    }
  /* A detached sandbox's process is the child of a monitor (monitor.c),
   * which does the rest of create and reports back here, unless the caller
   * reaps it: --no-monitor, or a subreaper parent (conmon, containerd's
   * shim, which pass --pid-file and nothing else to say so). */
  trace_mark ("monitor fork");
  bool monitored = !o->foreground && !o->no_monitor && !(o->pid_file && !o->restart && mon_caller_reaps ());
  struct mon_link link = { .pid = -1, .fd = -1 };
  if (monitored)
    {
      int r = mon_fork (&link, err);
      if (r != 0)
        {
          build_free (&b);
          trace_mark ("create: wait for the monitor");
          return r < 0 ? -1 : mon_wait (&link, status, err);
        }
    }
  trace_mark ("state dir");
  if (build_sandbox (st, o, &b, &rootfs, monitored, &console, status, err) < 0)
    {
      build_abort (st, o, &b);
      if (monitored)
        mon_fail (&link, *status, err);
      return -1;
    }
  trace_mark ("created");
  if (monitored)
    monitor_sandbox (&b, &link);
  if (o->foreground)
    {
      fg->cg = b.cgroups;
      b.cgroups = (struct cg_sandbox){ 0 };
    }
  build_free (&b);
  store_close (&b.entry);
  if (o->foreground)
    {
      fg->id = xstrdup (o->id);
      fg->child = b.child;
      fg->poststart = o->spec->hooks.n[OCI_HOOK_POSTSTART] > 0;
      fg->has_console = console >= 0;
      fg->console = steal_fd (&console);
    }
  else
    spawn_close (&b.child);
  return 0;
}
