/* files_cp: `hako cp`'s host side (files.h): the host's end of the tar
 * stream, in a fork of hako acting as the caller, beside the helper that
 * acts for the sandbox (files.c).  Out, this is a write as host root into a
 * directory the sandbox may share: see host_dest and tc_extract's host. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/inroot.h"
#include "lib/util.h"
#include "runtime/files/files_internal.h"
#include "runtime/files/tarcopy.h"

/* "/a/b/." -> "/a/b" and true: docker cp's "the directory's entries". */
static char *
strip_contents (const char *path, bool *contents)
{
  size_t n = strlen (path);
  *contents = n >= 2 && strcmp (path + n - 2, "/.") == 0;
  return *contents ? xstrndup (path, n - 1) : xstrdup (path);
}

/* The host directory a copy out goes in, opened from "/" through no
 * symlink at all: the destination is often a directory the sandbox can
 * write (a -v bind), where it may have planted one (a subdirectory swapped
 * for a link to /root/.ssh), and hako, as host root, would write wherever
 * it leads.  *leaf is the last component, to be made or found beneath. */
static int
host_dest (const char *host, const char *rel, char **leaf, hk_err *err)
{
  const char *slash = strrchr (rel, '/');
  cleanup_free char *dir = slash ? xstrndup (rel, (size_t)(slash - rel)) : xstrdup (".");
  *leaf = xstrdup (slash ? slash + 1 : rel[0] ? rel : ".");
  cleanup_close int root = open ("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  int fd = root < 0 ? -1 : inroot_beneath (root, dir, O_PATH | O_DIRECTORY);
  if (fd < 0 && errno == ELOOP)
    {
      cleanup_free char *abs = xasprintf ("/%s", dir);
      cleanup_free char *real = realpath (abs, NULL);
      return err_set (err, ELOOP,
                      "%s: a symlink on the way is not followed (cp writes on the host through "
                      "real directories only%s%s)",
                      host, real ? "; its directory is " : "", real ? real : "");
    }
  if (fd < 0)
    return err_sys (err, "/%s", strcmp (dir, ".") == 0 ? "" : dir);
  return fd;
}

/* The host's end, in a fork of hako acting as the caller.  In, the host
 * path is resolved from "/" as the caller names it (a read of what the
 * caller may read), then below it as tarcopy does (no link in the copied
 * tree followed); out, see host_dest and tc_extract's host. */
static int
host_side (const struct job *j, const char *host, bool contents, int fd, int go, hk_err *err)
{
  const struct files_cp_opts *o = j->cp;
  cleanup_free char *abs = path_absolute (host);
  bool above;
  cleanup_free char *rel = path_lexical (abs, &above);
  if (!o->out)
    {
      cleanup_close int root = open ("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
      if (root < 0)
        return err_sys (err, "/");
      const char *slash = strrchr (rel, '/');
      const char *top = rel[0] == '\0' ? "." : slash ? slash + 1 : rel;
      return tc_write (root, rel[0] ? rel : ".", top, contents || rel[0] == '\0', j->proc_fd, fd, err);
    }
  cleanup_free char *leaf = NULL;
  cleanup_close int dirfd = host_dest (host, rel, &leaf, err);
  if (dirfd < 0)
    return -1;
  const struct oci_linux *l = &j->v.spec->linux;
  bool mapped = oci_spec_ns (j->v.spec, OCI_NS_USER) != NULL;
  struct tc_extract_opts x = { .archive = o->archive,
                               .uid_map = mapped ? l->uid_mappings : NULL,
                               .n_uid_map = l->n_uid_mappings,
                               .gid_map = mapped ? l->gid_mappings : NULL,
                               .n_gid_map = l->n_gid_mappings,
                               .uid = (uid_t)-1,
                               .gid = (gid_t)-1,
                               .strip_setid = !(o->archive && o->keep_setid),
                               .host = true,
                               .max_bytes = j->cp_max,
                               .bound_name = j->cp_bound,
                               .commit_fd = go,
                               .proc_fd = j->proc_fd };
  /* A rootless stopped sandbox's helper is the caller, on the host's ids. */
  if (j->v.state->status == OCI_STATUS_STOPPED && geteuid () != 0)
    x.uid_map = x.gid_map = NULL;
  return tc_extract (dirfd, leaf, fd, &x, err);
}

/* The bound of a copy out: --max-bytes, else the sandbox's disk limit (its
 * spec's, or the size of its data dir when that is a mount of its own: the
 * default limit, node.json's default_disk or HAKO_DISK_DEFAULT), else
 * FILES_CP_MAX_DEFAULT.  A sandbox whose files cost it 64 MiB should not
 * cost the host 2 GiB. */
static void
cp_bound (const struct store *st, struct job *j)
{
  const struct files_cp_opts *o = j->cp;
  const struct hako_sandbox *sb = &j->v.spec->sandbox;
  cleanup_free char *dd = store_data_dir (st, j->v.id);
  cleanup_free char *parent = xasprintf ("%s/..", dd);
  struct stat a, b;
  struct statvfs fs;
  j->cp_bound = "the sandbox's disk limit; --max-bytes sets another";
  if (o->max_bytes)
    {
      j->cp_max = o->max_bytes == UINT64_MAX ? 0 : o->max_bytes;
      j->cp_bound = "--max-bytes";
    }
  else if (sb->has_disk && sb->disk > 0)
    j->cp_max = (uint64_t)sb->disk;
  else if (stat (dd, &a) == 0 && stat (parent, &b) == 0 && a.st_dev != b.st_dev && statvfs (dd, &fs) == 0)
    j->cp_max = (uint64_t)fs.f_blocks * fs.f_frsize;
  else
    {
      j->cp_max = FILES_CP_MAX_DEFAULT;
      j->cp_bound = "cp's default bound for a sandbox without a disk limit; --max-bytes sets another";
    }
}

/* The host side's fork and its pipes, as the parent holds them. */
struct host_end
{
  pid_t pid;
  int errfd; /* its error, when it fails */
  int gofd;  /* out: "y" once the sandbox's side has succeeded, else closed */
};

/* The fds of the host side's fork: its end of the stream, its error pipe
 * and (out) the go-ahead pipe's read end; the rest, closed in it. */
struct host_fds
{
  int data, err, go;
  int close[2];
};

static pid_t
host_fork (const struct job *j, const char *host, bool contents, const struct host_fds *f)
{
  pid_t pid = fork ();
  if (pid != 0)
    return pid;
  /* The helper's end and the go-ahead's: held here, the stream would never
   * end nor the go-ahead be seen missing. */
  for (int i = 0; i < 2; i++)
    if (f->close[i] >= 0)
      close (f->close[i]);
  signal (SIGPIPE, SIG_IGN);
  prctl (PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  hk_err err = { 0 };
  int r = host_side (j, host, contents, f->data, f->go, &err);
  if (r < 0)
    {
      struct stopped_err m = { .errnum = err.errnum };
      snprintf (m.msg, sizeof m.msg, "%s", err.msg);
      if (write (f->err, &m, sizeof m) != (ssize_t)sizeof m)
        _exit (126);
    }
  _exit (r < 0 ? 125 : 0);
}

static int
host_start (struct job *j, const char *host, bool contents, struct host_end *h, hk_err *err)
{
  const struct files_cp_opts *o = j->cp;
  int p[2] = { -1, -1 }, ep[2] = { -1, -1 }, gp[2] = { -1, -1 };
  if (pipe2 (p, O_CLOEXEC) < 0 || pipe2 (ep, O_CLOEXEC) < 0 || (o->out && pipe2 (gp, O_CLOEXEC) < 0))
    {
      int e = errno;
      for (int i = 0; i < 2; i++)
        {
          if (p[i] >= 0)
            close (p[i]);
          if (ep[i] >= 0)
            close (ep[i]);
        }
      errno = e;
      return err_sys (err, "pipe");
    }
  /* out: the helper writes p[1], the host side reads p[0]; in, the other way. */
  int mine = o->out ? p[0] : p[1], theirs = o->out ? p[1] : p[0];
  struct host_fds f = { .data = mine, .err = ep[1], .go = gp[0], .close = { theirs, gp[1] } };
  h->pid = host_fork (j, host, contents, &f);
  int e = errno;
  close (mine);
  close (ep[1]);
  if (gp[0] >= 0)
    close (gp[0]);
  h->errfd = ep[0];
  h->gofd = gp[1];
  j->cp_fd = theirs;
  errno = e;
  return h->pid < 0 ? err_sys (err, "fork") : 0;
}

/* The go-ahead (the sandbox's side succeeded: r), then the host side's
 * end.  An error writing the stream (EPIPE) only says the reader stopped:
 * the other side's error is the cause; of two others, the writer's. */
static int
host_finish (struct host_end *h, bool host_writes, int r, hk_err *err)
{
  if (h->gofd >= 0)
    {
      if (r == 0 && write (h->gofd, "y", 1) != 1)
        r = err_sys (err, "the host side of the copy");
      close (h->gofd);
    }
  struct stopped_err m;
  ssize_t n = -1;
  int ws = 0;
  if (h->pid > 0)
    {
      do
        n = read (h->errfd, &m, sizeof m);
      while (n < 0 && errno == EINTR);
      while (waitpid (h->pid, &ws, 0) < 0 && errno == EINTR)
        ;
    }
  close (h->errfd);
  if (h->pid <= 0)
    return r;
  bool host_failed = n == (ssize_t)sizeof m, host_pipe = host_failed && m.errnum == EPIPE;
  if (host_failed && (r == 0 || err->errnum == EPIPE || (host_writes && !host_pipe)))
    {
      m.msg[sizeof m.msg - 1] = '\0';
      return err_set (err, m.errnum, "%s", m.msg);
    }
  if (r == 0 && (!WIFEXITED (ws) || WEXITSTATUS (ws) != 0))
    return err_set (err, EPIPE, "the host side of the copy ended with status %d", ws);
  return r;
}

int
files_cp (const struct store *st, const struct files_cp_opts *o, hk_err *err)
{
  struct job j;
  bool host_contents = false;
  cleanup_free char *path = strip_contents (o->path, &(bool){ false });
  bool contents = strlen (o->path) >= 2 && strcmp (o->path + strlen (o->path) - 2, "/.") == 0;
  cleanup_free char *host = o->host ? strip_contents (o->host, &host_contents) : NULL;
  int r = job_open (st, o->id, path, &j, err);
  j.cp = o;
  j.v.write = !o->out;
  j.contents = contents;
  j.cp_fd = o->fd;
  if (r == 0 && o->out)
    cp_bound (st, &j);
  struct host_end h = { .pid = -1, .errfd = -1, .gofd = -1 };
  if (r == 0 && host)
    r = host_start (&j, host, host_contents, &h, err);
  if (r == 0)
    r = job_go (st, &j, NULL, j.cp_fd, err);
  if (host && j.cp_fd >= 0)
    close (j.cp_fd);
  if (host && h.errfd >= 0)
    r = host_finish (&h, !o->out, r, err);
  job_free (&j);
  return r;
}
