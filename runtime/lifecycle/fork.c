/* fork: children of a sandbox from one instant of its writable state (see
 * fork.h): the checks, the guard that removes a half-made fork, the
 * snapshot (or the copy) while the parent is frozen, and the children's
 * creation. */
#include "runtime/lifecycle/fork.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/util.h"
#include "oci/spec.h"
#include "runtime/build/disk.h"
#include "runtime/build/disk_btrfs.h"
#include "runtime/build/rootfs_image.h"
#include "runtime/lifecycle/sandbox.h"
#include "runtime/save/snapshot.h"
#include "runtime/state/sbxlog.h"
#include "runtime/state/sbxstate.h"

/* ---- the parent ------------------------------------------------------------- */

struct parent
{
  struct oci_state *state;
  char *config;
  size_t config_len;
  char **layers; /* image sandboxes: the layer dirs, top first */
  char *image_id;
  uint64_t log_cap;
};

static void
parent_free (struct parent *p)
{
  if (p->state)
    oci_state_free (p->state);
  free (p->config);
  strv_free (p->layers);
  free (p->image_id);
  *p = (struct parent){ 0 };
}

/* The image record's layers (rootfs_image.h): the image id, then one layer
 * dir a line. */
static int
read_layers (const char *record, struct parent *p, hk_err *err)
{
  cleanup_free char *text = NULL;
  if (file_read_all (record, 1 << 20, &text, NULL, err) < 0)
    return -1;
  size_t n = 0;
  for (char *c = text; *c; c++)
    n += *c == '\n';
  p->layers = xcalloc (n + 1, sizeof *p->layers);
  char *save = NULL;
  char *line = strtok_r (text, "\n", &save);
  p->image_id = xstrdup (line ? line : "");
  for (size_t i = 0; (line = strtok_r (NULL, "\n", &save)) != NULL && i < n; i++)
    p->layers[i] = xstrdup (line);
  if (p->layers[0] == NULL)
    return err_set (err, EINVAL, "%s: no image layers", record);
  return 0;
}

/* What a child cannot take from its parent's config is refused before
 * anything is made: a terminal needs a console socket of its own, and a
 * cgroup the config names is the parent's alone. */
static int
check_config (const char *id, const struct parent *p, hk_err *err)
{
  struct oci_spec *spec = NULL;
  if (oci_spec_parse (p->config, p->config_len, &spec, err) < 0)
    return err_prefix (err, "sandbox %s's config.json", id);
  int r = 0;
  if (spec->process && spec->process->terminal)
    r = err_setk (err, ERR_UNSUPPORTED, ENOTSUP,
                  "sandbox %s's process has a terminal (process.terminal): a fork's children run "
                  "detached, with no console socket to hand a terminal to",
                  id);
  else if (spec->linux.cgroups_path)
    r = err_setk (err, ERR_UNSUPPORTED, ENOTSUP,
                  "sandbox %s's config names its cgroup (linux.cgroupsPath %s), which its children "
                  "cannot share",
                  id, spec->linux.cgroups_path);
  oci_spec_free (spec);
  return r;
}

static int
load_parent (const struct store *st, const char *id, struct parent *p, hk_err *err)
{
  *p = (struct parent){ 0 };
  struct store_entry e;
  if (store_open (st, id, false, &e, err) < 0)
    return -1;
  cleanup_free char *config = store_path (&e, "config.json");
  cleanup_free char *marker = store_path (&e, SBXLOG_MARKER);
  cleanup_free char *data = store_data_dir (st, id);
  cleanup_free char *record = xasprintf ("%s/%s", data, ROOTFS_IMAGE_RECORD);
  cleanup_free char *cap = NULL;
  hk_err ignored;
  int r = -1;
  if (sbx_state (st, id, &p->state, err) < 0
      || file_read_all (config, 16 << 20, &p->config, &p->config_len, err) < 0)
    goto out;
  if (p->state->status == OCI_STATUS_CREATING)
    {
      err_setk (err, ERR_BUSY, EBUSY, "sandbox %s is being created: fork it once create is done", id);
      goto out;
    }
  bool image = access (record, F_OK) == 0;
  if (image && read_layers (record, p, err) < 0)
    goto out;
  if (!image && p->state->workdir == NULL)
    {
      err_setk (err, ERR_UNSUPPORTED, ENOTSUP,
                "sandbox %s keeps no writable state of its own (no image layer, no sandbox.workdir): "
                "it writes to its bundle's rootfs, which its children could not share apart",
                id);
      goto out;
    }
  if (check_config (id, p, err) < 0)
    goto out;
  /* The parent's detached log cap; a parent whose output went to its
   * creator's stdio gives its children the default log. */
  p->log_cap = SBXLOG_DEFAULT_CAP;
  if (file_read_all (marker, 64, &cap, NULL, &ignored) == 0)
    parse_size (cap, &p->log_cap);
  r = 0;
out:
  store_close (&e);
  return r;
}

/* ---- the guard ------------------------------------------------------------------
 *
 * A fork makes several sandboxes one after the other; hako killed halfway
 * (SIGKILL, or a SIGTERM it does not hold off) would leave some of them.
 * So a guard, forked first, makes each child's state dir itself (no moment
 * where one exists that nobody would remove) and the copy's staging dir,
 * then waits on a socket: "done" and it goes; EOF (hako died, or gave up)
 * and it deletes every child it reserved, as `delete --force` would, and
 * the staging dir, then goes.  hako waits for it either way. */

enum
{
  GUARD_RESERVE = 'R',
  GUARD_STAGING = 'S',
  GUARD_DONE = 'D',
};

struct guard_msg
{
  char op;
  char id[80];
};

struct guard_reply
{
  int errnum;
  char name[PATH_MAX];
};

struct guard
{
  pid_t pid;
  int fd;
};

struct guard_book
{
  char **ids;
  size_t n;
  char *staging;
};

/* A child's state dir, marked as the fork's with the parent's id. */
static int
guard_reserve (const struct store *st, const char *parent, const char *id, struct guard_book *b)
{
  struct store_entry e;
  hk_err err;
  if (store_create (st, id, &e, &err) < 0)
    return err.errnum ? err.errnum : EIO;
  cleanup_free char *marker = store_path (&e, FORK_MARKER);
  if (file_write_new (marker, parent, strlen (parent), 0600, &err) < 0)
    {
      store_remove (&e, &err);
      store_close (&e);
      return EIO;
    }
  store_close (&e);
  b->ids = xrealloc (b->ids, (b->n + 1) * sizeof *b->ids);
  b->ids[b->n++] = xstrdup (id);
  return 0;
}

/* <data-root>/forks/<parent>.XXXXXX, for a copy. */
static int
guard_staging (const struct store *st, const char *parent, struct guard_book *b, struct guard_reply *rep)
{
  cleanup_free char *dir = xasprintf ("%s/forks", st->data_root);
  hk_err err;
  if (mkdir_p (dir, 0700, &err) < 0)
    return err.errnum ? err.errnum : EIO;
  char *tmp = xasprintf ("%s/%s.XXXXXX", dir, parent);
  if (mkdtemp (tmp) == NULL)
    {
      int e = errno;
      free (tmp);
      return e;
    }
  b->staging = tmp;
  snprintf (rep->name, sizeof rep->name, "%s", tmp);
  return 0;
}

static void __attribute__ ((noreturn)) guard_main (int fd, const struct store *st, const char *parent)
{
  setsid ();
  int null = open ("/dev/null", O_RDWR | O_CLOEXEC);
  for (int i = 0; null >= 0 && i < 3; i++)
    dup2 (null, i);
  struct guard_book b = { 0 };
  struct guard_msg m;
  ssize_t n;
  hk_err ignored;
  for (;;)
    {
      do
        n = recv (fd, &m, sizeof m, 0);
      while (n < 0 && errno == EINTR);
      if (n <= 0 || m.op == GUARD_DONE)
        break;
      struct guard_reply rep = { 0 };
      m.id[sizeof m.id - 1] = '\0';
      rep.errnum = m.op == GUARD_RESERVE   ? guard_reserve (st, parent, m.id, &b)
                   : m.op == GUARD_STAGING ? guard_staging (st, parent, &b, &rep)
                                           : EINVAL;
      if (send (fd, &rep, sizeof rep, MSG_NOSIGNAL) != (ssize_t)sizeof rep)
        break;
    }
  /* Not done: every child goes, the last made first. */
  if (!(n > 0 && m.op == GUARD_DONE))
    for (size_t i = b.n; i-- > 0;)
      sbx_delete (st, b.ids[i], true, &ignored);
  if (b.staging)
    rm_rf (b.staging, &ignored);
  _exit (0);
}

static int
guard_start (struct guard *g, const struct store *st, const char *parent, hk_err *err)
{
  int sp[2];
  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0)
    return err_sys (err, "socketpair");
  pid_t pid = fork ();
  if (pid < 0)
    {
      close (sp[0]);
      close (sp[1]);
      return err_sys (err, "fork the fork's guard");
    }
  if (pid == 0)
    {
      close (sp[1]);
      guard_main (sp[0], st, parent);
    }
  close (sp[0]);
  *g = (struct guard){ .pid = pid, .fd = sp[1] };
  return 0;
}

/* One request; the guard's errno (0: done), *rep its reply. */
static int
guard_ask (struct guard *g, char op, const char *id, struct guard_reply *rep)
{
  struct guard_msg m = { .op = op };
  if (id)
    snprintf (m.id, sizeof m.id, "%s", id);
  if (send (g->fd, &m, sizeof m, MSG_NOSIGNAL) != (ssize_t)sizeof m
      || recv (g->fd, rep, sizeof *rep, 0) != (ssize_t)sizeof *rep)
    return EPIPE;
  return rep->errnum;
}

/* done: the children stay; else the guard removes them.  Waits for it. */
static void
guard_finish (struct guard *g, bool done)
{
  if (g->pid <= 0)
    return;
  if (done)
    {
      struct guard_msg m = { .op = GUARD_DONE };
      send (g->fd, &m, sizeof m, MSG_NOSIGNAL);
    }
  close (g->fd);
  while (waitpid (g->pid, NULL, 0) < 0 && errno == EINTR)
    ;
  *g = (struct guard){ .pid = -1, .fd = -1 };
}

int
fork_take_reserved (const struct store *st, const char *id, struct store_entry *e, hk_err *err)
{
  if (store_open (st, id, true, e, err) < 0)
    return -1;
  cleanup_free char *marker = store_path (e, FORK_MARKER);
  cleanup_free char *state = store_path (e, "state.json");
  if (access (marker, F_OK) < 0 || access (state, F_OK) == 0)
    {
      store_close (e);
      return err_setk (err, ERR_EXISTS, EEXIST, "sandbox %s already exists (not the fork's reservation)", id);
    }
  return 0;
}

/* ---- the instant ------------------------------------------------------------- */

struct fork_run
{
  const struct store *st;
  const struct sbx_fork_opts *o;
  struct parent p;
  struct guard guard;
  bool snapshot;
  struct disk_family fam; /* snapshot: the parent's image */
  int member;             /* snapshot: the parent's data dir, a subvolume root */
  char *staging;          /* copy: <data-root>/forks/<parent>.XXXXXX */
  char *why_copy;
  uint64_t t0, frozen_us;
};

static uint64_t
now_us (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

/* Before the freeze: what the parent has written so far goes to disk now,
 * so the snapshot taken frozen writes back only what came since. */
static int
fork_check (const struct snapshot_source *v, void *arg, hk_err *err)
{
  (void)v;
  (void)err;
  struct fork_run *r = arg;
  if (r->snapshot)
    syncfs (r->member);
  return 0;
}

static int
fork_frozen (const struct snapshot_source *v, void *arg, hk_err *err)
{
  struct fork_run *r = arg;
  r->t0 = now_us ();
  /* Checked frozen, so that none is made between the check and the
   * snapshot.  A copy would leave them out as well (snapshot_copy_tree does
   * not cross into another st_dev). */
  int nested = r->snapshot ? dbt_has_nested (r->member, err) : 0;
  if (nested < 0)
    return -1;
  if (nested)
    return err_setk (err, ERR_UNSUPPORTED, ENOTSUP,
                     "sandbox %s holds btrfs subvolumes it made (btrfs subvolume create, in its /work), "
                     "which a snapshot would leave empty: empty and rmdir them inside it, then fork",
                     r->o->parent);
  if (r->snapshot)
    return dbt_snapshot (r->fam.top, r->member, r->o->children[0], err);
  cleanup_free char *data = xasprintf ("%s/%s", r->staging, SNAPSHOT_DATA);
  return snapshot_copy_tree (v->src, data, err);
}

static int
fork_thawed (const struct snapshot_source *v, void *arg, hk_err *err)
{
  (void)v;
  (void)err;
  struct fork_run *r = arg;
  r->frozen_us = now_us () - r->t0;
  return 0;
}

/* ---- the children ------------------------------------------------------------- */

static int
check_ids (const struct sbx_fork_opts *o, hk_err *err)
{
  if (o->n == 0)
    return err_setk (err, ERR_INVALID_ARGUMENT, EINVAL, "no new sandbox ids");
  for (size_t i = 0; i < o->n; i++)
    {
      const char *id = o->children[i];
      if (!store_id_valid (id))
        return err_setk (err, ERR_INVALID_ARGUMENT, EINVAL,
                         "invalid sandbox id \"%s\" (letters, digits, '_', '.', '-'; at most 64, "
                         "starting with a letter or digit)",
                         id);
      if (strcmp (id, o->parent) == 0)
        return err_setk (err, ERR_INVALID_ARGUMENT, EINVAL, "%s is the sandbox forked, not a new id", id);
      for (size_t j = 0; j < i; j++)
        if (strcmp (o->children[j], id) == 0)
          return err_setk (err, ERR_INVALID_ARGUMENT, EINVAL, "%s is given twice", id);
    }
  return 0;
}

/* Every child's state dir, made by the guard; the first taken id fails all. */
static int
reserve (struct fork_run *r, hk_err *err)
{
  struct guard_reply rep;
  for (size_t i = 0; i < r->o->n; i++)
    {
      const char *id = r->o->children[i];
      int e = guard_ask (&r->guard, GUARD_RESERVE, id, &rep);
      if (e == EEXIST)
        return err_setk (err, ERR_EXISTS, EEXIST, "sandbox %s already exists", id);
      if (e != 0)
        return err_code (err, e, "reserve sandbox %s", id);
    }
  if (!r->snapshot)
    {
      int e = guard_ask (&r->guard, GUARD_STAGING, NULL, &rep);
      if (e != 0)
        return err_code (err, e, "make the copy's directory under %s/forks", r->st->data_root);
      r->staging = xstrdup (rep.name);
      return 0;
    }
  /* Each child's name in the parent's image, before its subvolume exists
   * (disk.h): after what an interrupted delete may have left of that id. */
  for (size_t i = 0; i < r->o->n; i++)
    {
      const char *id = r->o->children[i];
      cleanup_free char *data = store_data_dir (r->st, id);
      if (disk_release (r->st, id, err) < 0 || rm_rf (data, err) < 0
          || disk_fork_link (r->st, r->o->parent, id, err) < 0)
        return err_prefix (err, "sandbox %s", id);
    }
  return 0;
}

/* The other children as snapshots of the first (which nothing runs on
 * yet: the parent is not frozen for them), then every one mounted. */
static int
snapshot_rest (struct fork_run *r, hk_err *err)
{
  cleanup_close int first
      = openat (r->fam.top, r->o->children[0], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (first < 0)
    return err_sys (err, "open the snapshot %s", r->o->children[0]);
  for (size_t i = 1; i < r->o->n; i++)
    if (dbt_snapshot (r->fam.top, first, r->o->children[i], err) < 0)
      return -1;
  for (size_t i = 0; i < r->o->n; i++)
    if (disk_fork_mount (r->st, &r->fam, r->o->children[i], err) < 0)
      return err_prefix (err, "sandbox %s", r->o->children[i]);
  return 0;
}

/* One child: created from the parent's frozen config on its own data, as
 * `run --detach` (its output to its log), and started. */
static int
make_child (struct fork_run *r, const char *id, hk_err *err)
{
  struct oci_spec *spec = NULL;
  if (oci_spec_parse (r->p.config, r->p.config_len, &spec, err) < 0)
    return err_prefix (err, "sandbox %s's config.json", r->o->parent);
  cleanup_free char *from = r->staging ? xasprintf ("%s/%s", r->staging, SNAPSHOT_DATA) : NULL;
  struct sbx_create_opts co = { .id = id,
                                .bundle = r->p.state->bundle,
                                .config_json = r->p.config,
                                .config_len = r->p.config_len,
                                .spec = spec,
                                .log_cap = r->p.log_cap,
                                .image_layers = r->p.layers,
                                .image_id = r->p.image_id,
                                .from_snapshot = from,
                                .reserved = true,
                                .data_ready = r->snapshot };
  int status;
  int rc = sbx_create (r->st, &co, NULL, &status, err);
  oci_spec_free (spec);
  if (rc < 0 || sbx_start (r->st, id, err) < 0)
    return err_prefix (err, "sandbox %s", id);
  return 0;
}

static int
fork_children (struct fork_run *r, hk_err *err)
{
  struct snapshot_ops ops
      = { .check = fork_check, .frozen = fork_frozen, .thawed = fork_thawed, .arg = r, .tmp_dirfd = -1 };
  if (reserve (r, err) < 0)
    return -1;
  cleanup_free char *pdir = xasprintf ("%s/%s", r->st->root, r->o->parent);
  test_stall_forever ("fork-reserved", pdir);
  if (snapshot_frozen (r->st, r->o->parent, &ops, err) < 0)
    return -1;
  if (r->snapshot && snapshot_rest (r, err) < 0)
    return -1;
  for (size_t i = 0; i < r->o->n; i++)
    {
      if (make_child (r, r->o->children[i], err) < 0)
        return -1;
      if (i == 0)
        test_stall_forever ("fork-child", pdir);
    }
  return 0;
}

int
sbx_fork (const struct store *st, const struct sbx_fork_opts *o, struct sbx_fork_result *res, hk_err *err)
{
  *res = (struct sbx_fork_result){ 0 };
  struct fork_run r
      = { .st = st, .o = o, .guard = { .pid = -1, .fd = -1 }, .member = -1, .fam = { .top = -1 } };
  int rc = -1;
  if (check_ids (o, err) < 0 || load_parent (st, o->parent, &r.p, err) < 0)
    goto out;
  /* The guard first: nothing it must undo exists yet, and it holds none
   * of the fds opened next (the parent's data dir would stay busy). */
  if (guard_start (&r.guard, st, o->parent, err) < 0)
    goto out;
  int snap = disk_fork_open (st, o->parent, &r.fam, &r.member, &r.why_copy, err);
  if (snap < 0)
    goto out;
  r.snapshot = snap == 1;
  rc = fork_children (&r, err);
out:
  disk_family_close (&r.fam);
  if (r.member >= 0)
    close (r.member);
  guard_finish (&r.guard, rc == 0);
  parent_free (&r.p);
  free (r.staging);
  res->snapshot = r.snapshot;
  res->why_copy = r.why_copy;
  res->frozen_us = r.frozen_us;
  return rc;
}

void
sbx_fork_result_free (struct sbx_fork_result *res)
{
  free (res->why_copy);
  *res = (struct sbx_fork_result){ 0 };
}
