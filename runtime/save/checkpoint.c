/* checkpoint: CRIU dump and restore of a whole sandbox — criu for the
 * processes, a snapshot for the files (criu does not save a root
 * filesystem), hako's state dir, cgroups and overlay around them. */
#include "runtime/save/checkpoint.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/util.h"
#include "oci/spec.h"
#include "oci/state.h"
#include "runtime/build/rootfs_image.h"
#include "runtime/cgroup/cgroup.h"
#include "runtime/save/snapshot.h"
#include "runtime/state/pidinfo.h"
#include "runtime/state/sbxstate.h"

char *
ckpt_cache_path (const struct store *st)
{
  return st && st->data_root ? xasprintf ("%s/criu-check", st->data_root) : NULL;
}

/* The bind mounts' destinations (and sources): criu's external mounts. */
static void
bind_mounts (const struct oci_spec *spec, char ***dests, char ***srcs)
{
  size_t n = 0;
  *dests = xcalloc (spec->n_mounts + 1, sizeof **dests);
  *srcs = xcalloc (spec->n_mounts + 1, sizeof **srcs);
  for (size_t i = 0; i < spec->n_mounts; i++)
    if (spec->mounts[i].is_bind && spec->mounts[i].source)
      {
        (*dests)[n] = xstrdup (spec->mounts[i].destination);
        (*srcs)[n++] = xstrdup (spec->mounts[i].source);
      }
}

static int
load_spec (const struct store_entry *e, struct oci_spec **spec, hk_err *err)
{
  cleanup_free char *path = store_path (e, "config.json");
  cleanup_free char *text = NULL;
  size_t len;
  if (file_read_all (path, 64u << 20, &text, &len, err) < 0)
    return -1;
  return oci_spec_parse (text, len, spec, err);
}

static const char *
freezer_dir (const struct cg_sandbox *cg)
{
  for (size_t i = 0; i < cg->n; i++)
    if (cg->dirs[i].made && (cg->dirs[i].v2 || strstr (cg->dirs[i].hier, "freezer")))
      return cg->dirs[i].path;
  return NULL;
}

static int
dump (const struct store *st, const char *id, const struct criu_opts *o, const char *binary, hk_err *err)
{
  struct store_entry e;
  if (store_open (st, id, true, &e, err) < 0)
    return -1;
  struct oci_state *s = NULL;
  struct oci_spec *spec = NULL;
  struct cg_sandbox cg = { 0 };
  char **dests = NULL, **srcs = NULL, **argv = NULL;
  cleanup_free char *record = store_path (&e, "cgroups");
  cleanup_free char *root_file = xasprintf ("%s/%s", o->image_path, CKPT_ROOT);
  cleanup_free char *log = xasprintf ("%s/dump.log", o->work_path ? o->work_path : o->image_path);
  int r = -1;
  if (sbx_state (st, id, &s, err) < 0 || load_spec (&e, &spec, err) < 0)
    goto out;
  if (s->status != OCI_STATUS_RUNNING || s->pid <= 0)
    {
      err_set (err, EINVAL, "sandbox %s is %s: only a running sandbox can be checkpointed", id,
               oci_status_name (s->status));
      goto out;
    }
  /* criu would have to dump and restore the host's mount table. */
  if (oci_spec_ns (spec, OCI_NS_MOUNT) == NULL)
    {
      err_set (err, ENOTSUP,
               "sandbox %s has no mount namespace of its own (it runs chrooted in the "
               "host's): it cannot be checkpointed",
               id);
      goto out;
    }
  hk_err ignored;
  if (cg_load (record, &cg, &ignored) < 0)
    cg = (struct cg_sandbox){ 0 };
  /* The root the processes see, for restore to mount again. */
  if (s->rootfs && file_write_atomic (root_file, s->rootfs, strlen (s->rootfs), 0600, err) < 0)
    goto out;
  bind_mounts (spec, &dests, &srcs);
  struct criu_target t = { .pid = s->pid, .freezer = freezer_dir (&cg), .mounts = dests };
  argv = criu_dump_argv (binary, o, &t);
  r = criu_exec (argv, log, err);
out:
  strv_free (argv);
  strv_free (dests);
  strv_free (srcs);
  cg_sandbox_free (&cg);
  oci_spec_free (spec);
  oci_state_free (s);
  store_close (&e);
  return r;
}

/* Refuse, before criu runs, a sandbox whose checkpoint restore could not
 * use (restore_check and make_image say why), so a checkpoint never stops
 * a sandbox that can then not come back: a host-profile sandbox, and an
 * image sandbox in a user namespace. */
static int
restorable (const struct store *st, const char *id, hk_err *err)
{
  struct store_entry e;
  if (store_open (st, id, false, &e, err) < 0)
    return -1;
  struct oci_state *s = NULL;
  struct oci_spec *spec = NULL;
  cleanup_free char *data_dir = store_data_dir (st, id);
  cleanup_free char *image_record = xasprintf ("%s/%s", data_dir, ROOTFS_IMAGE_RECORD);
  int r = -1;
  if (sbx_state (st, id, &s, err) < 0 || load_spec (&e, &spec, err) < 0)
    goto out;
  if (s->workdir)
    err_set (err, ENOTSUP,
             "sandbox %s is a host-profile sandbox: restore cannot rebuild its root (the "
             "host's directories, bound in a namespace), so it is not checkpointed; "
             "`hako snapshot` keeps its /work",
             id);
  else if (access (image_record, F_OK) == 0 && oci_spec_ns (spec, OCI_NS_USER))
    err_set (err, ENOTSUP,
             "sandbox %s is an image sandbox in a user namespace: restore cannot mount its "
             "idmapped layers yet, so it is not checkpointed; `hako snapshot` keeps its "
             "writable layer",
             id);
  else
    r = 0;
out:
  oci_spec_free (spec);
  oci_state_free (s);
  store_close (&e);
  return r;
}

int
ckpt_checkpoint (const struct store *st, const char *id, const struct criu_opts *o, hk_err *err)
{
  cleanup_free char *cache = ckpt_cache_path (st);
  cleanup_free char *fs = xasprintf ("%s/%s", o->image_path, CKPT_SNAPSHOT);
  struct criu_verdict v = { 0 };
  struct stat sb;
  int r = -1;
  if (restorable (st, id, err) < 0)
    goto out;
  criu_probe (cache, &v);
  if (!v.works)
    {
      err_set (err, ENOTSUP, "CRIU cannot work on this host: criu check failed: %s", v.reason);
      goto out;
    }
  if (lstat (fs, &sb) == 0)
    {
      err_set (err, EEXIST, "%s already holds a checkpoint (%s): give a new --image-path", o->image_path,
               CKPT_SNAPSHOT);
      goto out;
    }
  if (mkdir_p (o->image_path, 0700, err) < 0 || (o->work_path && mkdir_p (o->work_path, 0700, err) < 0))
    goto out;
  /* criu freezes the tree for the dump; the files are copied after it
   * (the processes gone, or with --leave-running frozen again by the
   * snapshot), so memory and files describe the same moment as closely as
   * two tools can. */
  if (dump (st, id, o, v.binary, err) < 0 || snapshot_take (st, id, fs, err) < 0)
    goto out;
  r = 0;
out:
  criu_verdict_free (&v);
  return r;
}

/* ---- restore ---- */

struct restore
{
  struct store_entry e;
  bool entry;
  char *data_dir;
  char *rootfs; /* mounted here (image) */
  bool mounted;
  bool made_data;
  struct cg_sandbox cg;
  bool made_cg;
};

/* An image sandbox's root: the image's layers under the saved writable
 * layer, mounted on <root>/<id>/rootfs in hako's own mount namespace, where
 * criu finds it with --root. */
static int
mount_image_root (struct restore *x, const struct snapshot_src *snap, const struct oci_spec *spec,
                  hk_err *err)
{
  struct rootfs_overlay ov = { 0 };
  cleanup_free char *saved = xasprintf ("%s/%s", snap->dir, SNAPSHOT_DATA);
  cleanup_free char *upper = NULL;
  cleanup_close int cwd = -1;
  int r = -1;
  /* An image sandbox in a user namespace stands on idmapped layers that
   * only create's child attaches (rootfs_image.h); a plain overlay here
   * would show the restored processes the image's ids unshifted. */
  if (oci_spec_ns (spec, OCI_NS_USER))
    return err_set (err, ENOTSUP,
                    "restoring an image sandbox with a user namespace is not supported "
                    "yet (its layers are idmapped at create)");
  x->made_data = true;
  if (rootfs_image_prepare (x->data_dir, snap->layers, snap->image_id, spec, &ov, err) < 0)
    goto out;
  upper = xasprintf ("%s/upper", ov.dir);
  if (snapshot_copy_tree (saved, upper, err) < 0)
    goto out;
  x->rootfs = store_path (&x->e, "rootfs");
  if (mkdir (x->rootfs, 0755) < 0)
    {
      err_sys (err, "mkdir %s", x->rootfs);
      goto out;
    }
  /* The options name the layers relative to ov.dir (rootfs_image.h). */
  cwd = open (".", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (cwd < 0 || chdir (ov.dir) < 0)
    {
      err_sys (err, "chdir %s", ov.dir);
      goto out;
    }
  int m = mount ("overlay", x->rootfs, "overlay", 0, ov.opts);
  int saved_errno = errno;
  if (fchdir (cwd) < 0)
    {
      err_sys (err, "fchdir back");
      goto out;
    }
  if (m < 0)
    {
      errno = saved_errno;
      err_sys (err, "mount overlay on %s", x->rootfs);
      goto out;
    }
  x->mounted = true;
  r = 0;
out:
  rootfs_overlay_free (&ov);
  return r;
}

static void
restore_undo (struct restore *x)
{
  hk_err ignored;
  if (x->mounted)
    umount2 (x->rootfs, MNT_DETACH);
  if (x->made_cg)
    cg_remove (&x->cg, &ignored);
  if (x->made_data)
    rm_rf (x->data_dir, &ignored);
  if (x->entry)
    store_remove (&x->e, &ignored);
}

static int
record_running (struct restore *x, const struct oci_spec *spec, const char *id, const char *root, hk_err *err)
{
  cleanup_free char *pidfile = store_path (&x->e, "criu.pid");
  cleanup_free char *text = NULL;
  if (file_read_all (pidfile, 64, &text, NULL, err) < 0)
    return -1;
  struct oci_state s = { .oci_version = spec->oci_version,
                         .id = (char *)id,
                         .status = OCI_STATUS_RUNNING,
                         .pid = (pid_t)atoi (text) };
  if (s.pid <= 0 || pid_stat (s.pid, &s.pid_start_time, NULL) < 0)
    return err_set (err, ESRCH, "criu restored no process (pid file says \"%s\")", text);
  cleanup_free char *now = time_rfc3339_now ();
  s.created = now;
  s.started = now;
  s.rootfs = (char *)root;
  return store_write_state (&x->e, &s, err);
}

/* The checkpoint, if this host's CRIU can restore it: its snapshot, config
 * and (bundle sandboxes) the root it had. */
static int
open_checkpoint (const char *cache, const struct criu_opts *o, struct criu_verdict *v,
                 struct snapshot_src *snap, struct oci_spec **spec, const char *root_file, char **old_root,
                 hk_err *err)
{
  cleanup_free char *fs = xasprintf ("%s/%s", o->image_path, CKPT_SNAPSHOT);
  criu_probe (cache, v);
  if (!v->works)
    {
      err_set (err, ENOTSUP, "CRIU cannot work on this host: criu check failed: %s", v->reason);
      return -1;
    }
  if (snapshot_open (fs, snap, err) < 0 || oci_spec_parse (snap->config, snap->config_len, spec, err) < 0)
    {
      err_prefix (err, "checkpoint %s", o->image_path);
      return -1;
    }
  if (strcmp (snap->kind, "image") != 0 && file_read_all (root_file, 4096, old_root, NULL, err) < 0)
    return -1;
  if (strcmp (snap->kind, "workdir") == 0)
    {
      err_set (err, ENOTSUP,
               "restore of a host-profile sandbox is not supported (its root is "
               "the host's directories, bound in a namespace criu would have to rebuild)");
      return -1;
    }
  return 0;
}

int
ckpt_restore (const struct store *st, const char *id, const struct criu_opts *o, hk_err *err)
{
  cleanup_free char *cache = ckpt_cache_path (st);
  struct criu_verdict v;
  struct snapshot_src snap = { 0 };
  struct oci_spec *spec = NULL;
  struct restore x = { 0 };
  char **dests = NULL, **srcs = NULL, **argv = NULL;
  cleanup_free char *root_file = xasprintf ("%s/%s", o->image_path, CKPT_ROOT);
  cleanup_free char *old_root = NULL, *config = NULL, *record = NULL, *pidfile = NULL;
  cleanup_free char *cgroot = NULL;
  cleanup_free char *log = xasprintf ("%s/restore.log", o->work_path ? o->work_path : o->image_path);
  const struct cg_host *host;
  int r = -1;
  if (open_checkpoint (cache, o, &v, &snap, &spec, root_file, &old_root, err) < 0)
    goto out;
  if (store_create (st, id, &x.e, err) < 0)
    goto out;
  x.entry = true;
  x.data_dir = store_data_dir (st, id);
  config = store_path (&x.e, "config.json");
  if (file_write_new (config, snap.config, snap.config_len, 0600, err) < 0)
    goto fail;
  /* A bundle's rootfs is the user's, as runc has it: restored into, as it
   * is now (the saved copy is in hako-snapshot/data for whoever wants it). */
  if (strcmp (snap.kind, "image") == 0
          ? mount_image_root (&x, &snap, spec, err) < 0
          : access (old_root, F_OK) < 0 && err_sys (err, "rootfs %s", old_root) < 0)
    goto fail;
  record = store_path (&x.e, "cgroups");
  if (cg_host_get (&host, err) < 0 || cg_prepare (host, spec, id, st->root, &x.cg, err) < 0)
    goto fail;
  x.made_cg = true;
  if (cg_create (&x.cg, spec, record, err) < 0)
    goto fail;
  bind_mounts (spec, &dests, &srcs);
  pidfile = store_path (&x.e, "criu.pid");
  const char *root = x.rootfs ? x.rootfs : old_root;
  if (x.cg.n > 0)
    cgroot = xstrdup (x.cg.dirs[0].path + strlen (x.cg.dirs[0].mount));
  struct criu_target t
      = { .root = root, .pidfile = pidfile, .mounts = dests, .sources = srcs, .cgroup_root = cgroot };
  argv = criu_restore_argv (v.binary, o, &t);
  if (criu_exec (argv, log, err) < 0 || record_running (&x, spec, id, root, err) < 0)
    goto fail;
  /* The restored processes hold the root in the mount namespace criu made
   * for them; hako's own copy of the mount goes, as after a create (where
   * only the sandbox's namespace ever has it), so delete finds none. */
  if (x.mounted)
    umount2 (x.rootfs, MNT_DETACH);
  r = 0;
  goto out;
fail:
  restore_undo (&x);
out:
  if (x.entry)
    store_close (&x.e);
  cg_sandbox_free (&x.cg);
  free (x.data_dir);
  free (x.rootfs);
  strv_free (argv);
  strv_free (dests);
  strv_free (srcs);
  oci_spec_free (spec);
  snapshot_src_free (&snap);
  criu_verdict_free (&v);
  return r;
}
