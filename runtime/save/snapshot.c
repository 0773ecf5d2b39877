/* snapshot: a sandbox's writable state, copied while it is frozen.
 *
 * The copy is libarchive's disk reader feeding its disk writer (what
 * `bsdtar -cf - | bsdtar -xpf -` does, without the archive in between):
 * owners, modes, times, xattrs, ACLs, device nodes, sparse files and, with a
 * link resolver, hardlinks, all by a library the image code already uses. */
#include "runtime/save/snapshot.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <nettle/sha2.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/disk_walk.h"
#include "lib/trust.h"
#include "lib/util.h"
#include "oci/json.h"
#include "oci/state.h"
#include "runtime/build/rootfs_image.h"
#include "runtime/cgroup/cgroup.h"
#include "runtime/state/sbxstate.h"

struct copy_walk
{
  struct archive *wr;
  struct archive_entry_linkresolver *lr;
  const char *dst;
};

static int
write_fail (struct archive *wr, const char *path, hk_err *err)
{
  if (archive_errno (wr) > 0)
    return err_code (err, archive_errno (wr), "write %s: %s", path, archive_error_string (wr));
  return err_set (err, EIO, "write %s: %s", path, archive_error_string (wr));
}

static int
copy_entry (struct archive *rd, struct archive_entry *entry, const char *rel, void *arg, hk_err *err)
{
  struct copy_walk *w = arg;
  cleanup_free char *to = rel[0] ? xasprintf ("%s/%s", w->dst, rel) : xstrdup (w->dst);
  archive_entry_set_pathname (entry, to);
  struct archive_entry *e = entry, *sparse = NULL;
  archive_entry_linkify (w->lr, &e, &sparse);
  if (e == NULL)
    return 0;
  if (archive_write_header (w->wr, e) < ARCHIVE_WARN)
    return write_fail (w->wr, to, err);
  if (archive_entry_filetype (e) == AE_IFREG && archive_entry_hardlink (e) == NULL
      && archive_entry_size (e) > 0)
    {
      const void *buf;
      size_t n;
      la_int64_t off;
      int d;
      /* A failed write(2) (ENOSPC on a disk-limited branch) is only
       * ARCHIVE_WARN here: every data block must be ARCHIVE_OK. */
      while ((d = archive_read_data_block (rd, &buf, &n, &off)) == ARCHIVE_OK)
        if (archive_write_data_block (w->wr, buf, n, off) != ARCHIVE_OK)
          return write_fail (w->wr, to, err);
      if (d != ARCHIVE_EOF)
        return err_set (err, archive_errno (rd) ? archive_errno (rd) : EIO, "read %s: %s", to,
                        archive_error_string (rd));
    }
  if (archive_write_finish_entry (w->wr) < ARCHIVE_WARN)
    return write_fail (w->wr, to, err);
  return 0;
}

int
snapshot_copy_tree (const char *src, const char *dst, hk_err *err)
{
  /* The sandbox wrote what is copied: disk_walk keeps the reader in the
   * tree; SECURE_SYMLINKS refuses to write through a symlink and
   * SECURE_NODOTDOT a path with "..", so the writer stays in dst. */
  const int flags = ARCHIVE_EXTRACT_OWNER | ARCHIVE_EXTRACT_PERM | ARCHIVE_EXTRACT_TIME
                    | ARCHIVE_EXTRACT_XATTR | ARCHIVE_EXTRACT_ACL | ARCHIVE_EXTRACT_SPARSE
                    | ARCHIVE_EXTRACT_SECURE_NODOTDOT | ARCHIVE_EXTRACT_SECURE_SYMLINKS;
  struct copy_walk w
      = { .wr = archive_write_disk_new (), .lr = archive_entry_linkresolver_new (), .dst = dst };
  if (w.wr == NULL || w.lr == NULL)
    abort ();
  archive_entry_linkresolver_set_strategy (w.lr, ARCHIVE_FORMAT_TAR_GNUTAR);
  archive_write_disk_set_options (w.wr, flags);
  int r = disk_walk (src, 0, copy_entry, &w, err);
  /* Directories get their modes and times here, after their contents. */
  if (r == 0 && archive_write_close (w.wr) != ARCHIVE_OK)
    r = write_fail (w.wr, dst, err);
  archive_entry_linkresolver_free (w.lr);
  archive_write_free (w.wr);
  return r;
}

int
snapshot_copy_tree_at (const char *src, int dirfd, const char *name, hk_err *err)
{
  /* The writer takes paths: relative ones, from a working directory that
   * is dirfd itself, resolve beneath it whatever becomes of its name. */
  cleanup_free char *abs = realpath (src, NULL);
  if (abs == NULL)
    return err_sys (err, "%s", src);
  cleanup_close int cwd = open (".", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (cwd < 0)
    return err_sys (err, "open the working directory");
  if (fchdir (dirfd) < 0)
    return err_sys (err, "fchdir");
  int r = snapshot_copy_tree (abs, name, err);
  if (fchdir (cwd) < 0 && r == 0)
    r = err_sys (err, "fchdir back");
  return r;
}

/* DEST's parent, opened once (every write of the snapshot is made beneath
 * it), and DEST's name in it.  The parent must be a directory root trusts
 * (lib/trust.h): in one the sandbox can write, the sandbox could swap the
 * snapshot for one it made, whose hooks `run --from-snapshot` would run as
 * root, or swap the half-made copy for a symlink into a host directory. */
static int
open_dest (const char *dest, int *dirfd, char **name, hk_err *err)
{
  cleanup_free char *a = xstrdup (dest), *b = xstrdup (dest);
  const char *base = basename (a);
  if (base[0] == '\0' || strcmp (base, ".") == 0 || strcmp (base, "..") == 0 || strcmp (base, "/") == 0)
    return err_set (err, EINVAL, "destination %s: not a new directory name", dest);
  *dirfd = trust_open (dirname (b), O_RDONLY | O_DIRECTORY, err);
  if (*dirfd < 0)
    return err_prefix (err, "destination %s", dest);
  *name = xstrdup (base);
  return 0;
}

/* "sha256:<hex>" of a snapshot's config (or image record), recorded in its
 * snapshot.json. */
static void
text_digest (const char *text, size_t len, char out[SNAPSHOT_DIGEST_LEN])
{
  struct sha256_ctx c;
  uint8_t md[SHA256_DIGEST_SIZE];
  sha256_init (&c);
  sha256_update (&c, len, (const uint8_t *)text);
  sha256_digest (&c, sizeof md, md);
  memcpy (out, "sha256:", 7);
  for (size_t i = 0; i < sizeof md; i++)
    snprintf (out + 7 + 2 * i, 3, "%02x", md[i]);
}

/* A new file name in dirfd (never through a symlink); shown in errors. */
static int
write_new_at (int dirfd, const char *name, const char *shown, const char *data, size_t len, hk_err *err)
{
  cleanup_close int fd = openat (dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0)
    return err_sys (err, "create %s/%s", shown, name);
  if (fd_write_all (fd, data, len) < 0)
    return err_sys (err, "write %s/%s", shown, name);
  return 0;
}

static void
meta_json (struct json_out *o, const char *id, const char *kind, const char *src, const char *digest,
           const char *image_id, const char *record_digest)
{
  cleanup_free char *created = time_rfc3339_now ();
  json_out_init (o, "  ");
  json_obj_open (o);
  json_kstr (o, "hakoVersion", HAKO_VERSION);
  json_kstr (o, "source", id);
  json_kstr (o, "sourcePath", src);
  json_kstr (o, "created", created);
  json_kstr (o, "kind", kind);
  json_kstr (o, "config", SNAPSHOT_CONFIG);
  json_kstr (o, "configDigest", digest);
  json_kstr (o, "data", SNAPSHOT_DATA);
  if (image_id)
    {
      json_key (o, "image");
      json_obj_open (o);
      json_kstr (o, "id", image_id);
      json_kstr (o, "record", ROOTFS_IMAGE_RECORD);
      json_kstr (o, "recordDigest", record_digest);
      json_obj_close (o);
    }
  json_obj_close (o);
}

static int
write_meta (int tmpfd, const char *shown, const char *id, const char *kind, const char *src,
            const struct store_entry *e, const char *image_record, hk_err *err)
{
  cleanup_free char *config_src = store_path (e, "config.json");
  cleanup_free char *config = NULL;
  size_t config_len = 0;
  if (file_read_all (config_src, 64u << 20, &config, &config_len, err) < 0)
    return -1;
  if (write_new_at (tmpfd, SNAPSHOT_CONFIG, shown, config, config_len, err) < 0)
    return -1;
  char digest[SNAPSHOT_DIGEST_LEN];
  text_digest (config, config_len, digest);
  cleanup_free char *image = NULL;
  cleanup_free char *image_id = NULL;
  char record_digest[SNAPSHOT_DIGEST_LEN];
  if (image_record)
    {
      if (file_read_all (image_record, 1 << 20, &image, NULL, err) < 0)
        return -1;
      if (write_new_at (tmpfd, ROOTFS_IMAGE_RECORD, shown, image, strlen (image), err) < 0)
        return -1;
      text_digest (image, strlen (image), record_digest);
      image_id = xstrdup (image);
      char *nl = strchr (image_id, '\n');
      if (nl)
        *nl = '\0';
    }
  struct json_out o;
  meta_json (&o, id, kind, src, digest, image_id, record_digest);
  cleanup_free char *text = NULL;
  size_t len;
  if (json_out_finish (&o, &text, &len, err) < 0)
    return -1;
  return write_new_at (tmpfd, SNAPSHOT_META, shown, text, len, err);
}

/* mkdtemp(3) for a template name in dirfd; -1 with errno. */
static int
mkdtemp_at (int dirfd, char *tmpl)
{
  static const char chars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  size_t n = strlen (tmpl);
  if (n < 6 || strcmp (tmpl + n - 6, "XXXXXX") != 0)
    {
      errno = EINVAL;
      return -1;
    }
  for (int tries = 0; tries < 100; tries++)
    {
      unsigned char rnd[6];
      if (getrandom (rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd)
        return -1;
      for (size_t i = 0; i < sizeof rnd; i++)
        tmpl[n - 6 + i] = chars[rnd[i] % (sizeof chars - 1)];
      if (mkdirat (dirfd, tmpl, 0700) == 0)
        return 0;
      if (errno != EEXIST)
        return -1;
    }
  return -1;
}

/* Test hook: HAKO_TEST_STALL=snapshot-frozen waits, once the sandbox is
 * frozen, for one of the held signals (at most 30 s), marking the state dir
 * so a test knows when to send it. */
static void
test_stall (const struct store_entry *e, const sigset_t *hold)
{
  if (!test_stall_reached ("snapshot-frozen", e->dir))
    return;
  for (int i = 0; i < 3000; i++)
    {
      sigset_t pending;
      sigpending (&pending);
      for (int sig = 1; sig < NSIG; sig++)
        if (sigismember (hold, sig) && sigismember (&pending, sig))
          return;
      usleep (10000);
    }
}

/* SIGKILL cannot be held off: a hako killed while the sandbox is frozen
 * would leave it frozen until someone ran `resume` — an agent's sandbox hung
 * for good because its orchestrator timed out a snapshot — and the half-made
 * copy beside DEST.  So a guard makes the copy's directory (no moment where
 * it exists and nobody would remove it), sends its name, and waits on a
 * socket: a byte means hako has cleaned up; EOF means hako died, and the
 * guard thaws what hako froze, puts the status back and removes the copy.
 * It holds the sandbox's lock (the inherited flock), so no verb sees the
 * sandbox before it is done. */
struct guard
{
  pid_t pid;
  int fd;
};

static void __attribute__ ((noreturn))
guard_main (int fd, const struct store_entry *e, struct oci_state *s, enum oci_status was,
            const struct cg_sandbox *cg, bool thaw, int tmp_dirfd, char *tmp)
{
  hk_err ignored;
  char c;
  ssize_t n;
  int made = tmp == NULL || mkdtemp_at (tmp_dirfd, tmp) == 0 ? 0 : errno;
  if (send (fd, &made, sizeof made, MSG_NOSIGNAL) == (ssize_t)sizeof made && made == 0 && tmp)
    send (fd, tmp, strlen (tmp), MSG_NOSIGNAL);
  if (made != 0)
    _exit (0);
  /* Out of hako's process group and off its terminal and pipes: a kill of
   * the group, or a caller waiting for hako's output to end, is hako's
   * alone.  SIGINT, SIGTERM and SIGHUP stay blocked, as in hako. */
  setsid ();
  int null = open ("/dev/null", O_RDWR | O_CLOEXEC);
  for (int i = 0; null >= 0 && i < 3; i++)
    dup2 (null, i);
  do
    n = read (fd, &c, 1);
  while (n < 0 && errno == EINTR);
  if (n == 1)
    _exit (0);
  if (thaw)
    {
      cg_freeze (cg, false, &ignored);
      s->status = was;
      store_write_state (e, s, &ignored);
    }
  if (tmp)
    rm_rf_in (tmp_dirfd, tmp, &ignored);
  _exit (0);
}

/* tmp (may be NULL): a mkdtemp template name in tmp_dirfd, the directory's
 * name on return; on failure it is emptied, so that nobody removes a path
 * that was never made. */
static int
guard_start (struct guard *g, const struct store_entry *e, struct oci_state *s, enum oci_status was,
             const struct cg_sandbox *cg, bool thaw, int tmp_dirfd, char *tmp, hk_err *err)
{
  int sp[2];
  if (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) < 0)
    return err_sys (err, "socketpair");
  pid_t pid = fork ();
  if (pid < 0)
    {
      err_sys (err, "fork the snapshot's guard");
      close (sp[0]);
      close (sp[1]);
      return -1;
    }
  if (pid == 0)
    {
      close (sp[1]);
      guard_main (sp[0], e, s, was, cg, thaw, tmp_dirfd, tmp);
    }
  close (sp[0]);
  g->pid = pid;
  g->fd = sp[1];
  int made = EPIPE;
  size_t len = tmp ? strlen (tmp) : 0;
  if (recv (g->fd, &made, sizeof made, MSG_WAITALL) != (ssize_t)sizeof made || made != 0
      || (tmp && recv (g->fd, tmp, len, MSG_WAITALL) != (ssize_t)len))
    {
      close (g->fd);
      waitpid (g->pid, NULL, 0);
      g->pid = -1;
      err_code (err, made ? made : EPIPE, "make the directory %s", tmp ? tmp : "(none)");
      if (tmp)
        tmp[0] = '\0';
      return -1;
    }
  return 0;
}

/* hako has cleaned up itself: the guard goes, and with it its hold on the
 * lock. */
static void
guard_stop (struct guard *g)
{
  if (g->pid <= 0)
    return;
  send (g->fd, "", 1, MSG_NOSIGNAL);
  close (g->fd);
  waitpid (g->pid, NULL, 0);
  g->pid = -1;
}

/* What a snapshot of the sandbox copies: its image layer's upper dir (with
 * the image it was made from), its work dir or its bundle's rootfs. */
static int
find_source (const char *id, const struct oci_state *s, const char *data_dir, char **image_record,
             char **image_id, char **src, const char **kind, hk_err *err)
{
  if (access (*image_record, F_OK) == 0)
    {
      *kind = "image";
      *src = xasprintf ("%s/rootfs/upper", data_dir);
      if (file_read_all (*image_record, 1 << 20, image_id, NULL, err) < 0)
        return -1;
      (*image_id)[strcspn (*image_id, "\n")] = '\0';
    }
  else
    {
      free (*image_record);
      *image_record = NULL;
      if (s->workdir)
        {
          *kind = "workdir";
          *src = xstrdup (s->workdir);
        }
      else if (s->bundle && s->rootfs)
        {
          *kind = "bundle";
          *src = xstrdup (s->rootfs);
        }
      else
        {
          err_set (err, ENOTSUP,
                   "sandbox %s has no writable state to copy (no image layer, work dir or bundle)", id);
          return -1;
        }
    }
  return 0;
}

/* Whether the sandbox's processes can be frozen for the copy: a running one
 * must be; a created one is copied unfrozen without a freezer. */
static int
freezable (const char *id, const struct oci_state *s, struct store_entry *e, struct cg_sandbox *cg,
           bool *frozen, hk_err *err)
{
  if (s->status == OCI_STATUS_RUNNING || s->status == OCI_STATUS_CREATED)
    {
      cleanup_free char *record = store_path (e, "cgroups");
      hk_err ignored;
      if (cg_load (record, cg, &ignored) < 0 || !cg_can_freeze (cg))
        {
          if (s->status == OCI_STATUS_RUNNING)
            {
              err_set (err, ENOTSUP,
                       "sandbox %s cannot be frozen (no freezer cgroup); stop or pause it first", id);
              return -1;
            }
        }
      else
        *frozen = true;
    }
  return 0;
}

static void
hold_signals (sigset_t *hold, sigset_t *old)
{
  sigemptyset (hold);
  sigaddset (hold, SIGINT);
  sigaddset (hold, SIGTERM);
  sigaddset (hold, SIGHUP);
  sigprocmask (SIG_BLOCK, hold, old);
}

/* Record the sandbox as paused, then freeze it (when *frozen). */
static int
mark_and_freeze (struct store_entry *e, struct oci_state *s, struct cg_sandbox *cg, enum oci_status was,
                 bool *frozen, bool *marked, hk_err *err)
{
  if (*frozen)
    {
      s->status = OCI_STATUS_PAUSED;
      if (store_write_state (e, s, err) < 0)
        {
          s->status = was;
          *frozen = false;
          return -1;
        }
      *marked = true;
    }
  if (*frozen && cg_freeze (cg, true, err) < 0)
    {
      hk_err ignored;
      cg_freeze (cg, false, &ignored);
      *frozen = false;
      err_prefix (err, "freeze");
      return -1;
    }
  return 0;
}

/* A SIGINT, SIGTERM or SIGHUP came while the signals were held. */
static bool
interrupted (hk_err *err)
{
  sigset_t pending;
  sigpending (&pending);
  if (sigismember (&pending, SIGINT) || sigismember (&pending, SIGTERM) || sigismember (&pending, SIGHUP))
    {
      err_set (err, EINTR, "interrupted");
      return true;
    }
  return false;
}

int
snapshot_frozen (const struct store *st, const char *id, const struct snapshot_ops *ops, hk_err *err)
{
  struct store_entry e;
  if (store_open (st, id, true, &e, err) < 0)
    return -1;
  struct oci_state *s = NULL;
  struct cg_sandbox cg = { 0 };
  cleanup_free char *data_dir = store_data_dir (st, id);
  cleanup_free char *image_record = xasprintf ("%s/%s", data_dir, ROOTFS_IMAGE_RECORD);
  cleanup_free char *image_id = NULL;
  cleanup_free char *src = NULL;
  const char *kind;
  bool frozen = false, blocked = false, marked = false;
  struct guard guard = { .pid = -1, .fd = -1 };
  enum oci_status was = OCI_STATUS_STOPPED;
  sigset_t hold, old;
  int r = -1;
  if (sbx_state (st, id, &s, err) < 0)
    goto out;
  if (find_source (id, s, data_dir, &image_record, &image_id, &src, &kind, err) < 0)
    goto out;
  struct snapshot_source view = {
    .id = id, .kind = kind, .src = src, .image_record = image_record, .image_id = image_id, .entry = &e
  };
  if (ops->check && ops->check (&view, ops->arg, err) < 0)
    goto out;

  /* Frozen, nothing inside can be half-way through a write(2) while the
   * copy reads: each file is copied as some whole-syscall prefix of it. */
  if (freezable (id, s, &e, &cg, &frozen, err) < 0)
    goto out;

  /* Hold off the signals that end hako while the sandbox is frozen: a hako
   * killed there would leave it frozen with nobody to thaw it. */
  hold_signals (&hold, &old);
  blocked = true;
  was = s->status;
  if (guard_start (&guard, &e, s, was, &cg, frozen, ops->tmp_dirfd, ops->tmp, err) < 0)
    goto out;
  /* Recorded as paused before the freeze, as `pause` does: should the
   * guard die too, a sandbox left frozen says paused, which `resume` thaws. */
  if (mark_and_freeze (&e, s, &cg, was, &frozen, &marked, err) < 0)
    goto out;
  test_stall (&e, &hold);
  int c = ops->frozen (&view, ops->arg, err);
  if (frozen)
    {
      frozen = false;
      if (cg_freeze (&cg, false, c < 0 ? &(hk_err){ 0 } : err) < 0 && c == 0)
        goto out;
    }
  if (c < 0)
    goto out;
  if (interrupted (err))
    goto out;
  if (ops->thawed && ops->thawed (&view, ops->arg, err) < 0)
    goto out;
  r = 0;
out:
  if (frozen)
    {
      hk_err ignored;
      cg_freeze (&cg, false, &ignored);
    }
  if (marked)
    {
      hk_err ignored;
      s->status = was;
      store_write_state (&e, s, &ignored);
    }
  if (r < 0 && ops->undo)
    ops->undo (ops->arg);
  guard_stop (&guard);
  if (blocked)
    {
      /* A pending SIGINT/SIGTERM is delivered here, after the undo. */
      sigprocmask (SIG_SETMASK, &old, NULL);
    }
  cg_sandbox_free (&cg);
  oci_state_free (s);
  store_close (&e);
  return r;
}

/* ---- snapshot ID DEST ---- */

struct take
{
  const char *dest;
  int dirfd;  /* DEST's parent */
  char *name; /* DEST's name in it */
  char *tmp;  /* the copy's name in it, until renamed to name */
  int tmpfd;
};

static int
take_copy (const struct snapshot_source *v, void *arg, hk_err *err)
{
  struct take *t = arg;
  t->tmpfd = openat (t->dirfd, t->tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (t->tmpfd < 0)
    return err_sys (err, "open %s's copy %s", t->dest, t->tmp);
  if (snapshot_copy_tree_at (v->src, t->tmpfd, SNAPSHOT_DATA, err) < 0)
    return err_prefix (err, "snapshot to %s", t->dest);
  return 0;
}

static int
take_commit (const struct snapshot_source *v, void *arg, hk_err *err)
{
  struct take *t = arg;
  if (write_meta (t->tmpfd, t->dest, v->id, v->kind, v->src, v->entry, v->image_record, err) < 0)
    return -1;
  if (renameat2 (t->dirfd, t->tmp, t->dirfd, t->name, RENAME_NOREPLACE) < 0)
    return err_sys (err, "rename to %s", t->dest);
  free (t->tmp);
  t->tmp = NULL;
  return 0;
}

static void
take_undo (void *arg)
{
  struct take *t = arg;
  if (t->tmpfd >= 0)
    close (t->tmpfd);
  t->tmpfd = -1;
  if (t->tmp == NULL)
    return;
  /* Still the template (its XXXXXX unreplaced), or emptied by a failed
   * guard: never made, nothing to remove. */
  size_t n = strlen (t->tmp);
  if (n > 6 && strcmp (t->tmp + n - 6, "XXXXXX") != 0)
    {
      hk_err ignored;
      rm_rf_in (t->dirfd, t->tmp, &ignored);
    }
  free (t->tmp);
  t->tmp = NULL;
}

int
snapshot_take (const struct store *st, const char *id, const char *dest, hk_err *err)
{
  struct take t = { .dest = dest, .dirfd = -1, .tmpfd = -1 };
  if (open_dest (dest, &t.dirfd, &t.name, err) < 0)
    return -1;
  struct stat sb;
  int r = -1;
  if (fstatat (t.dirfd, t.name, &sb, AT_SYMLINK_NOFOLLOW) == 0)
    err_set (err, EEXIST, "destination %s exists", dest);
  else
    {
      /* The guard makes the copy's directory from this template. */
      t.tmp = xasprintf ("%s.tmp-XXXXXX", t.name);
      struct snapshot_ops ops = { .frozen = take_copy,
                                  .thawed = take_commit,
                                  .undo = take_undo,
                                  .arg = &t,
                                  .tmp = t.tmp,
                                  .tmp_dirfd = t.dirfd };
      r = snapshot_frozen (st, id, &ops, err);
      take_undo (&t);
    }
  close (t.dirfd);
  free (t.name);
  return r;
}

/* ---- branching ---------------------------------------------------------- */

/* name in the snapshot's directory dirfd, read if root trusts it. */
static int
read_part (int dirfd, const char *dir, const char *name, size_t max, char **out, size_t *len, hk_err *err)
{
  cleanup_free char *shown = xasprintf ("%s/%s", dir, name);
  cleanup_close int fd = trust_openat (dirfd, name, shown, O_RDONLY, err);
  if (fd < 0 || fd_read_all (fd, max, out, len, err) < 0)
    return err_prefix (err, "snapshot %s", dir);
  return 0;
}

/* A part changed after `hako snapshot` wrote it is refused: the config's
 * hooks would run as root and its mounts be made by root, and the image
 * record names the directories mounted as the sandbox's layers. */
static int
check_digest (const char *dir, const char *part, const char *recorded, const char *text, size_t len,
              hk_err *err)
{
  char found[SNAPSHOT_DIGEST_LEN];
  if (recorded == NULL)
    return err_setk (err, ERR_INVALID_CONFIG, EINVAL,
                     "snapshot %s: %s records no digest of %s (an older hako made it): take the snapshot "
                     "again",
                     dir, SNAPSHOT_META, part);
  text_digest (text, len, found);
  if (strcmp (recorded, found) != 0)
    return err_setk (err, ERR_INVALID_CONFIG, EINVAL,
                     "snapshot %s: %s does not match the digest in %s (%s recorded, %s found): it was "
                     "changed after `hako snapshot` wrote it",
                     dir, part, SNAPSHOT_META, recorded, found);
  return 0;
}

/* snapshot.json's kind, its configDigest checked against the config, and
 * for an image the record's digest (*record_digest, checked later). */
static int
check_meta (const char *dir, const char *meta, const struct snapshot_src *s, char **kind,
            char **record_digest, hk_err *err)
{
  yajl_val root = NULL;
  cleanup_free char *digest = NULL;
  if (json_parse (meta, strlen (meta), &root, err) < 0 || json_get_string (root, "", "kind", kind, err) < 0
      || json_get_string (root, "", "configDigest", &digest, err) < 0
      || (json_get (root, "image")
          && json_get_string (json_get (root, "image"), ".image", "recordDigest", record_digest, err) < 0))
    {
      if (root)
        json_free (root);
      return err_prefix (err, "snapshot %s: %s", dir, SNAPSHOT_META);
    }
  json_free (root);
  if (*kind == NULL
      || (strcmp (*kind, "image") != 0 && strcmp (*kind, "workdir") != 0 && strcmp (*kind, "bundle") != 0))
    return err_setk (err, ERR_INVALID_CONFIG, EINVAL, "snapshot %s: %s: kind is not image, workdir or bundle",
                     dir, SNAPSHOT_META);
  return check_digest (dir, SNAPSHOT_CONFIG, digest, s->config, s->config_len, err);
}

/* The image record's layers: line 1 is the image id; one layer dir a line
 * follows, each of which must still be in the store. */
static int
read_layers (int dirfd, const char *dir, const char *digest, struct snapshot_src *out, hk_err *err)
{
  cleanup_free char *text = NULL;
  size_t len;
  if (read_part (dirfd, dir, ROOTFS_IMAGE_RECORD, 1 << 20, &text, &len, err) < 0
      || check_digest (dir, ROOTFS_IMAGE_RECORD, digest, text, len, err) < 0)
    return -1;
  size_t n = 0;
  for (char *p = strchr (text, '\n'); p && p[1]; p = strchr (p + 1, '\n'))
    n++;
  out->layers = xcalloc (n + 1, sizeof *out->layers);
  char *save = NULL;
  char *line = strtok_r (text, "\n", &save);
  out->image_id = xstrdup (line ? line : "");
  for (size_t i = 0; i < n && (line = strtok_r (NULL, "\n", &save)) != NULL; i++)
    {
      out->layers[i] = xstrdup (line);
      if (access (line, F_OK) < 0)
        return err_set (err, ENOENT, "snapshot %s: image %s is no longer in the store (layer %s)", dir,
                        out->image_id, line);
    }
  return 0;
}

/* Branching runs the snapshot's config as root (its hooks, its mounts), so
 * the snapshot must be root's: its directory, each one above it and each
 * file read from it owned by root and writable by nobody else, as
 * lib/trust.h checks; and its config the one `hako snapshot` wrote. */
int
snapshot_open (const char *dir, struct snapshot_src *out, hk_err *err)
{
  *out = (struct snapshot_src){ 0 };
  cleanup_close int dirfd = trust_open (dir, O_RDONLY | O_DIRECTORY, err);
  if (dirfd < 0)
    return err_prefix (err, "snapshot %s", dir);
  char real[PATH_MAX];
  if (realpath (dir, real) == NULL)
    return err_sys (err, "snapshot %s", dir);
  out->dir = xstrdup (real);
  cleanup_free char *meta = NULL, *record_digest = NULL;
  struct stat st;
  if (read_part (dirfd, dir, SNAPSHOT_META, 1 << 20, &meta, NULL, err) < 0
      || read_part (dirfd, dir, SNAPSHOT_CONFIG, 64u << 20, &out->config, &out->config_len, err) < 0
      || check_meta (dir, meta, out, &out->kind, &record_digest, err) < 0)
    goto fail;
  /* Not a symlink either: data/ is copied into the new sandbox. */
  if (fstatat (dirfd, SNAPSHOT_DATA, &st, AT_SYMLINK_NOFOLLOW) < 0)
    {
      err_sys (err, "snapshot %s: %s", dir, SNAPSHOT_DATA);
      goto fail;
    }
  if (!S_ISDIR (st.st_mode))
    {
      err_set (err, ENOTDIR, "snapshot %s: %s is not a directory", dir, SNAPSHOT_DATA);
      goto fail;
    }
  if (strcmp (out->kind, "image") == 0 && read_layers (dirfd, dir, record_digest, out, err) < 0)
    goto fail;
  return 0;
fail:
  snapshot_src_free (out);
  return -1;
}

void
snapshot_src_free (struct snapshot_src *s)
{
  free (s->dir);
  free (s->kind);
  free (s->config);
  free (s->image_id);
  if (s->layers)
    for (char **p = s->layers; *p; p++)
      free (*p);
  free (s->layers);
  *s = (struct snapshot_src){ 0 };
}
