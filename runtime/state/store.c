/* store: the state tree <root>/<id>/ — id validation, per-sandbox flock,
 * atomic state.json, and the data root's per-sandbox directories. */
#include "runtime/state/store.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/util.h"

bool
store_id_valid (const char *id)
{
  size_t n = 0;
  if (id == NULL)
    return false;
  for (const char *p = id; *p; p++, n++)
    {
      char c = *p;
      bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
      if (!alnum && (n == 0 || (c != '_' && c != '.' && c != '-')))
        return false;
    }
  return n >= 1 && n <= 64;
}

/* dir exists, is a directory (not a link to one) and is ours. */
static bool
dir_is_ours (const char *dir)
{
  struct stat sb;
  return dir && *dir == '/' && lstat (dir, &sb) == 0 && S_ISDIR (sb.st_mode) && sb.st_uid == geteuid ();
}

/* The user's home: $HOME when it is theirs, else the passwd entry's (sudo -u
 * and runuser may leave root's HOME behind); NULL when neither is. */
static const char *
user_home (unsigned uid)
{
  const char *home = getenv ("HOME");
  if (dir_is_ours (home))
    return home;
  /* uid: the user's own, also as root of its user namespace (where the
   * passwd entry of uid 0 is the real root's): podman's cleanup runs
   * without HOME and must still find the data root create chose. */
  struct passwd *pw = getpwuid (uid);
  return pw && dir_is_ours (pw->pw_dir) ? pw->pw_dir : NULL;
}

/* An ordinary user's state root without $XDG_RUNTIME_DIR (sudo -u, runuser,
 * cron): /run/user/UID/hako when that runtime dir is the user's and
 * writable (what a login session would have set), else a private directory
 * of the user's own: $XDG_CACHE_HOME/hako/run or ~/.cache/hako/run, and
 * without a home /tmp/hako-UID/run.  uid names the user's directories
 * (geteuid (), or the host uid of a user namespace's root: store_userns_root).
 * *private is the directory that must be 0700 and the user's (made so by
 * store_init).  Chosen, never made here, so read-only verbs find what
 * create made. */
static char *
user_default_root (unsigned uid, char **private)
{
  cleanup_free char *run = xasprintf ("/run/user/%u", uid);
  *private = NULL;
  if (dir_is_ours (run) && access (run, W_OK | X_OK) == 0)
    return xasprintf ("%s/hako", run);
  const char *cache = getenv ("XDG_CACHE_HOME");
  const char *home = user_home (uid);
  if (dir_is_ours (cache))
    *private = xasprintf ("%s/hako", cache);
  else if (home)
    *private = xasprintf ("%s/.cache/hako", home);
  else
    *private = xasprintf ("/tmp/hako-%u", uid);
  return xasprintf ("%s/run", *private);
}

int
store_userns_root (const char *uid_map, const char *run_dir, unsigned *host_uid)
{
  /* The initial user namespace maps all of 0..2^32-2 onto itself. */
  unsigned in, out, count, found = 0;
  bool initial = false, mapped = false;
  FILE *f = fopen (uid_map, "re");
  if (f == NULL)
    return 0;
  while (fscanf (f, "%u %u %u", &in, &out, &count) == 3)
    {
      initial |= in == 0 && out == 0 && count == 4294967295u;
      if (!mapped && in == 0 && count > 0)
        {
          mapped = true;
          found = out;
        }
    }
  fclose (f);
  if (initial || !mapped)
    return 0;
  /* Root of a user namespace that may still write the real root's run
   * dir (a container runtime's, a userns-remapped daemon's) keeps it. */
  cleanup_free char *own = xasprintf ("%s/hako", run_dir);
  if (access (own, F_OK) == 0 ? access (own, W_OK | X_OK) == 0 : access (run_dir, W_OK | X_OK) == 0)
    return 0;
  *host_uid = found;
  return 1;
}

/* Whether an ordinary user's defaults apply, and *uid the user's: any uid
 * but 0; and uid 0 of a user namespace that cannot make /run/hako —
 * rootless podman's (and `podman unshare`'s), where hako's "root" is the
 * user who made the namespace, whose uid names the directories.  podman
 * sets XDG_RUNTIME_DIR for every runtime call, its cleanup's too, so each
 * finds the same state there. */
static bool
user_defaults (unsigned *uid)
{
  *uid = (unsigned)geteuid ();
  return *uid != 0 || store_userns_root ("/proc/self/uid_map", "/run", uid) == 1;
}

static char *
default_root (char **private)
{
  const char *xdg = getenv ("XDG_RUNTIME_DIR");
  unsigned uid;
  *private = NULL;
  if (!user_defaults (&uid))
    return xstrdup ("/run/hako");
  if (xdg && *xdg)
    return xasprintf ("%s/hako", xdg);
  return user_default_root (uid, private);
}

/* ~/.local/share/hako for an ordinary user; without a home of theirs,
 * /tmp/hako-UID/data (*private as for the state root). */
static char *
default_data_root (char **private)
{
  unsigned uid;
  *private = NULL;
  if (!user_defaults (&uid))
    return xstrdup ("/var/lib/hako");
  const char *home = user_home (uid);
  if (home)
    return xasprintf ("%s/.local/share/hako", home);
  *private = xasprintf ("/tmp/hako-%u", uid);
  return xasprintf ("%s/data", *private);
}

void
store_paths (struct store *st, const char *root, const char *data_root)
{
  cleanup_free char *private = NULL, *data_private = NULL;
  st->root = root ? path_absolute (root) : default_root (&private);
  st->data_root = data_root ? path_absolute (data_root) : default_data_root (&data_private);
}

/* The fallback root's private parent: made 0700, or, existing (in /tmp,
 * where anyone may make it first), a directory of ours that nobody else may
 * enter, or someone else could read and swap the sandboxes' state. */
static int
make_private (const char *dir, hk_err *err)
{
  cleanup_free char *parent = xstrdup (dir);
  *strrchr (parent, '/') = '\0';
  if (mkdir_p (parent, 0700, err) < 0 || (mkdir (dir, 0700) < 0 && errno != EEXIST))
    return err_sys (err, "mkdir %s", dir);
  struct stat sb;
  if (lstat (dir, &sb) < 0)
    return err_sys (err, "stat %s", dir);
  if (!S_ISDIR (sb.st_mode) || sb.st_uid != geteuid () || (sb.st_mode & 077) != 0)
    return err_set (err, EPERM, "%s is not a private directory of uid %u (mode %03o, owner %u)", dir,
                    (unsigned)geteuid (), sb.st_mode & 07777, (unsigned)sb.st_uid);
  return 0;
}

int
store_init (struct store *st, const char *root, const char *data_root, hk_err *err)
{
  cleanup_free char *private = NULL, *data_private = NULL;
  st->root = root ? path_absolute (root) : default_root (&private);
  st->data_root = data_root ? path_absolute (data_root) : default_data_root (&data_private);
  if (data_private && make_private (data_private, err) < 0)
    {
      cleanup_free char *why = xstrdup (err->msg);
      return err_set (err, err->errnum,
                      "data root: uid %u has no home directory of its own, and %s: "
                      "set HOME to one, or give --data-root DIR",
                      (unsigned)geteuid (), why);
    }
  /* 0711: others may pass through (a sandbox in a user namespace reaches
   * its root mount point here as an unprivileged host id) but not list; the
   * files inside are 0600, the exec fifo has no read bit for others. */
  if ((private && make_private (private, err) < 0) || mkdir_p (st->root, 0711, err) < 0)
    {
      unsigned uid;
      if (root || !user_defaults (&uid))
        return err_prefix (err, "state root");
      /* The default of an ordinary user: say how to choose another. */
      cleanup_free char *why = xstrdup (err->msg);
      return err_set (err, err->errnum,
                      "state root: %s: set XDG_RUNTIME_DIR to a directory of yours, "
                      "or give --root DIR",
                      why);
    }
  return 0;
}

void
store_fini (struct store *st)
{
  free (st->root);
  free (st->data_root);
  st->root = st->data_root = NULL;
}

static int
lock_entry (struct store_entry *e, hk_err *err)
{
  cleanup_free char *path = store_path (e, "lock");
  /* O_CREAT for existing sandboxes too: a create killed between its mkdir
   * and its lock file leaves a directory only `delete --force` can clear.
   * If the directory itself is gone, this still fails with ENOENT. */
  e->lock_fd = open (path, O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_CREAT, 0600);
  if (e->lock_fd < 0)
    {
      if (errno == ENOENT)
        return err_setk (err, ERR_NOT_FOUND, ENOENT, "sandbox %s does not exist", e->id);
      return err_sys (err, "open %s", path);
    }
  while (flock (e->lock_fd, LOCK_EX) < 0)
    if (errno != EINTR)
      return err_sys (err, "lock %s", path);
  /* The sandbox may have been deleted while we waited for its lock. */
  struct stat sb;
  if (fstat (e->lock_fd, &sb) < 0)
    return err_sys (err, "stat %s", path);
  if (sb.st_nlink == 0)
    return err_setk (err, ERR_NOT_FOUND, ENOENT, "sandbox %s does not exist", e->id);
  return 0;
}

static void
entry_init (const struct store *st, const char *id, struct store_entry *e)
{
  e->id = xstrdup (id);
  e->dir = xasprintf ("%s/%s", st->root, id);
  e->lock_fd = -1;
}

int
store_create (const struct store *st, const char *id, struct store_entry *out, hk_err *err)
{
  if (!store_id_valid (id))
    return err_setk (err, ERR_INVALID_ARGUMENT, EINVAL,
                     "invalid sandbox id \"%s\": must match [A-Za-z0-9][A-Za-z0-9_.-]{0,63}", id);
  entry_init (st, id, out);
  /* mkdir is the arbiter: of two concurrent creates of one id exactly one wins. */
  if (mkdir (out->dir, 0711) < 0)
    {
      int e = errno;
      store_close (out);
      if (e == EEXIST)
        return err_setk (err, ERR_EXISTS, EEXIST, "sandbox %s already exists", id);
      return err_code (err, e, "mkdir %s/%s", st->root, id);
    }
  if (lock_entry (out, err) < 0)
    {
      rmdir (out->dir);
      store_close (out);
      return -1;
    }
  return 0;
}

int
store_open (const struct store *st, const char *id, bool lock, struct store_entry *out, hk_err *err)
{
  if (!store_id_valid (id))
    return err_setk (err, ERR_INVALID_ARGUMENT, EINVAL,
                     "invalid sandbox id \"%s\": must match [A-Za-z0-9][A-Za-z0-9_.-]{0,63}", id);
  entry_init (st, id, out);
  if (!lock)
    {
      struct stat sb;
      if (stat (out->dir, &sb) == 0 && S_ISDIR (sb.st_mode))
        return 0;
      store_close (out);
      return err_setk (err, ERR_NOT_FOUND, ENOENT, "sandbox %s does not exist", id);
    }
  if (lock_entry (out, err) < 0)
    {
      store_close (out);
      return -1;
    }
  return 0;
}

void
store_close (struct store_entry *e)
{
  if (e->lock_fd >= 0)
    close (e->lock_fd);
  free (e->id);
  free (e->dir);
  e->id = e->dir = NULL;
  e->lock_fd = -1;
}

char *
store_path (const struct store_entry *e, const char *name)
{
  return xasprintf ("%s/%s", e->dir, name);
}

char *
store_data_dir (const struct store *st, const char *id)
{
  return xasprintf ("%s/sandboxes/%s", st->data_root, id);
}

/* dir with at least search for everyone: made so, or, when it is ours and
 * lacks it, given it (search only: nobody may list it).  An older hako, or
 * an image import, made the data root and sandboxes/ 0700. */
static int
data_dir_passable (const char *dir, hk_err *err)
{
  struct stat sb;
  if (mkdir_p (dir, 0711, err) < 0)
    return -1;
  if (stat (dir, &sb) < 0)
    return err_sys (err, "stat %s", dir);
  if (sb.st_uid == geteuid () && (sb.st_mode & 0011) != 0011 && chmod (dir, (sb.st_mode & 07777) | 0011) < 0)
    return err_sys (err, "chmod %s", dir);
  return 0;
}

int
store_data_dir_make (const struct store *st, const char *id, hk_err *err)
{
  cleanup_free char *sandboxes = xasprintf ("%s/sandboxes", st->data_root);
  cleanup_free char *dir = store_data_dir (st, id);
  if (data_dir_passable (st->data_root, err) < 0 || data_dir_passable (sandboxes, err) < 0)
    return err_prefix (err, "data root");
  if (mkdir (dir, 0711) < 0 && errno != EEXIST)
    return err_sys (err, "mkdir %s", dir);
  return 0;
}

int
store_read_state (const struct store_entry *e, struct oci_state **out, hk_err *err)
{
  cleanup_free char *path = store_path (e, "state.json");
  cleanup_free char *buf = NULL;
  size_t len;
  if (file_read_all (path, 1 << 20, &buf, &len, err) < 0)
    {
      if (err->errnum == ENOENT)
        return err_set (err, ENOENT,
                        "sandbox %s has no state.json (a create was interrupted; "
                        "`hako delete --force %s` removes it)",
                        e->id, e->id);
      return -1;
    }
  if (oci_state_parse (buf, len, out, err) < 0)
    return err_prefix (err, "%s", path);
  return 0;
}

int
store_write_state (const struct store_entry *e, const struct oci_state *s, hk_err *err)
{
  cleanup_free char *path = store_path (e, "state.json");
  cleanup_free char *json = NULL;
  size_t len;
  if (oci_state_to_json (s, false, &json, &len, err) < 0)
    return -1;
  return file_write_atomic (path, json, len, 0600, err);
}

int
store_remove (struct store_entry *e, hk_err *err)
{
  return rm_rf (e->dir, err);
}

static int
cmp_str (const void *a, const void *b)
{
  return strcmp (*(char *const *)a, *(char *const *)b);
}

int
store_list (const struct store *st, char ***ids, hk_err *err)
{
  DIR *d = opendir (st->root);
  size_t n = 0, cap = 16;
  char **v = xcalloc (cap + 1, sizeof *v);
  if (d == NULL)
    {
      *ids = v;
      return errno == ENOENT ? 0 : err_sys (err, "open %s", st->root);
    }
  struct dirent *de;
  while ((de = readdir (d)) != NULL)
    {
      if (!store_id_valid (de->d_name) || de->d_type != DT_DIR)
        continue;
      if (n == cap)
        {
          cap *= 2;
          v = xrealloc (v, (cap + 1) * sizeof *v);
        }
      v[n++] = xstrdup (de->d_name);
    }
  closedir (d);
  v[n] = NULL;
  qsort (v, n, sizeof *v, cmp_str);
  *ids = v;
  return 0;
}
