/* fs: files inside a sandbox without a shell in it — stat, ls, rm, mkdir, mv
 * and watch (runtime/files/fsops.h), as text or JSON for programs (the SDK). */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "lib/jsonstr.h"
#include "lib/util.h"
#include "runtime/files/fsops.h"

static const char fs_help[]
    = "Usage: hako fs stat  [-u USER] [--format text|json] ID PATH\n"
      "       hako fs ls    [-u USER] [--format text|json] [-d N] ID PATH\n"
      "       hako fs rm    [-u USER] [-r] [-f] ID PATH\n"
      "       hako fs mkdir [-u USER] [-p] [--mode MODE] [--format text|json] ID PATH\n"
      "       hako fs mv    [-u USER] [--format text|json] ID PATH NEWPATH\n"
      "       hako fs watch [-u USER] [-r] [--timeout DUR] [--sync] [--format text|json] ID PATH\n\n"
      "Files inside the sandbox ID (running or stopped; watch: running), by hako's own\n"
      "code acting as the sandbox's process would, as USER: no shell or tool is needed\n"
      "inside.  PATH is absolute; it and every symlink on the way resolve inside the\n"
      "sandbox's root.  stat, rm and mv act on a symlink itself; ls and watch follow one\n"
      "at PATH, and never one below it.\n\n"
      "  stat   one entry: type, size, mode, owner, mtime, symlink target\n"
      "  ls     a directory's entries, and theirs down to depth N (default 1)\n"
      "  rm     a file or link; -r: a directory and everything in it, on its mount only\n"
      "  mkdir  a directory; -p: its missing parents too, and no error if it exists\n"
      "  mv     rename(2): replaces a file, never copies between mounts\n"
      "  watch  changes in a directory as events, until --timeout, a signal, or the\n"
      "         reader of its output goes away (JSON: one object a line, the first\n"
      "         {\"type\":\"ready\"} once the watch is in place)\n\n"
      "  -u, --user USER[:GROUP]  act as this user, a name from the sandbox's /etc/passwd\n"
      "                           or a number (default: the sandbox's root)\n"
      "  -f, --format F           text (default) or json (one object a line)\n"
      "  -d, --depth N            ls: how deep (1: the directory's own entries)\n"
      "  -r, --recursive          rm: directories too; watch: every directory below\n"
      "  -f, --force              rm: nothing at PATH is no error\n"
      "  -p, --parents            mkdir: missing parents too (0755)\n"
      "      --mode MODE          mkdir: permissions, octal (default 0755)\n"
      "      --timeout DUR        watch: end after DUR (500ms, 30s, 5m)\n"
      "      --sync               watch: answer each line read on standard input, once\n"
      "                           every change made before it is reported, with the\n"
      "                           event \"sync\"; the end of standard input ends the watch\n"
      "  -h, --help               this text\n";

static const char *const fs_subs[] = { "stat", "ls", "rm", "mkdir", "mv", "watch" };

struct fs_out
{
  bool json;
  int fd;
};

/* ---- output (in the helper: each line one write, no stdio buffer) ------------ */

static const char *
type_word (mode_t m)
{
  switch (m & S_IFMT)
    {
    case S_IFREG: return "file";
    case S_IFDIR: return "dir";
    case S_IFLNK: return "symlink";
    case S_IFIFO: return "fifo";
    case S_IFSOCK: return "socket";
    case S_IFCHR: return "char";
    case S_IFBLK: return "block";
    default: return "unknown";
    }
}

/* "drwxr-xr-x", as ls -l writes it. */
static void
perm_string (mode_t m, char out[11])
{
  static const char types[]
      = { [S_IFREG >> 12] = '-',  [S_IFDIR >> 12] = 'd', [S_IFLNK >> 12] = 'l', [S_IFIFO >> 12] = 'p',
          [S_IFSOCK >> 12] = 's', [S_IFCHR >> 12] = 'c', [S_IFBLK >> 12] = 'b' };
  char t = types[(m & S_IFMT) >> 12];
  out[0] = t ? t : '?';
  const char *rwx = "rwxrwxrwx";
  for (int i = 0; i < 9; i++)
    out[1 + i] = (m & (0400 >> i)) ? rwx[i] : '-';
  if (m & S_ISUID)
    out[3] = (m & S_IXUSR) ? 's' : 'S';
  if (m & S_ISGID)
    out[6] = (m & S_IXGRP) ? 's' : 'S';
  if (m & S_ISVTX)
    out[9] = (m & S_IXOTH) ? 't' : 'T';
  out[10] = '\0';
}

static void
json_field (FILE *f, const char *key, const char *value)
{
  fprintf (f, ",\"%s\":", key);
  if (value)
    jsonstr_fput (f, value, strlen (value));
  else
    fputs ("null", f);
}

static void
entry_json (FILE *f, const struct fs_entry *e, bool rel)
{
  char perms[11], when[64];
  perm_string (e->st.st_mode, perms);
  struct tm tm;
  time_t sec = e->st.st_mtim.tv_sec;
  gmtime_r (&sec, &tm);
  size_t n = strftime (when, sizeof when, "%Y-%m-%dT%H:%M:%S", &tm);
  snprintf (when + n, sizeof when - n, ".%09ldZ", (long)e->st.st_mtim.tv_nsec);
  fputs ("{\"name\":", f);
  jsonstr_fput (f, e->name, strlen (e->name));
  json_field (f, "path", e->path);
  if (rel)
    json_field (f, "rel", e->rel);
  fprintf (f, ",\"type\":\"%s\",\"size\":%lld,\"mode\":%u,\"permissions\":\"%s\",\"uid\":%u,\"gid\":%u",
           type_word (e->st.st_mode), (long long)e->st.st_size, (unsigned)(e->st.st_mode & 07777), perms,
           (unsigned)e->st.st_uid, (unsigned)e->st.st_gid);
  json_field (f, "owner", e->owner);
  json_field (f, "group", e->group);
  fprintf (f, ",\"mtime\":\"%s\",\"mtime_ns\":%lld", when,
           (long long)e->st.st_mtim.tv_sec * 1000000000LL + e->st.st_mtim.tv_nsec);
  json_field (f, "symlink_target", e->target);
  if (e->target)
    {
      json_field (f, "resolved_path", e->resolved);
      json_field (f, "resolved_type", e->resolved ? type_word (e->resolved_st.st_mode) : NULL);
    }
  if (e->created >= 0)
    fprintf (f, ",\"created\":%s", e->created ? "true" : "false");
  fputs ("}\n", f);
}

/* A name as text: a control character is '?', as ls writes to a terminal.
 * The sandbox chose the name: raw, an escape sequence in it would be sent
 * to the caller's terminal (to retitle it, move the cursor over earlier
 * lines, or worse on some emulators), and a newline would forge a line;
 * C1's CSI (U+009B) is one in UTF-8 too (text_sanitize). */
static void
put_name (FILE *f, const char *s)
{
  cleanup_free char *shown = xstrdup (s);
  text_sanitize (shown, NULL);
  fputs (shown, f);
}

static void
entry_text (FILE *f, const struct fs_entry *e, const char *name)
{
  char perms[11], when[32], owner[32], group[32];
  perm_string (e->st.st_mode, perms);
  struct tm tm;
  time_t sec = e->st.st_mtim.tv_sec;
  localtime_r (&sec, &tm);
  strftime (when, sizeof when, "%Y-%m-%d %H:%M", &tm);
  /* Names from the sandbox's passwd and group files: its own text too. */
  if (e->owner)
    snprintf (owner, sizeof owner, "%s", e->owner);
  else
    snprintf (owner, sizeof owner, "%u", (unsigned)e->st.st_uid);
  if (e->group)
    snprintf (group, sizeof group, "%s", e->group);
  else
    snprintf (group, sizeof group, "%u", (unsigned)e->st.st_gid);
  text_sanitize (owner, NULL);
  text_sanitize (group, NULL);
  fprintf (f, "%s %-8s %-8s %10lld %s ", perms, owner, group, (long long)e->st.st_size, when);
  put_name (f, name);
  if (e->target)
    {
      fputs (" -> ", f);
      put_name (f, e->target);
    }
  fputc ('\n', f);
}

/* One line, written whole: the helper writes while hako waits. */
static int
write_line (int fd, char *buf, size_t len, hk_err *err)
{
  int r = fd_write_all (fd, buf, len) < 0 ? err_sys (err, "write the output") : 0;
  free (buf);
  return r;
}

struct entry_ctx
{
  struct fs_out out;
  enum fs_op op;
};

static int
on_entry (void *ctx, const struct fs_entry *e, hk_err *err)
{
  const struct entry_ctx *c = ctx;
  /* mkdir and mv say nothing unless asked for JSON, as mkdir(1) and mv(1). */
  if (!c->out.json && (c->op == FS_MKDIR || c->op == FS_RENAME))
    return 0;
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream (&buf, &len);
  if (f == NULL)
    return err_sys (err, "open_memstream");
  if (c->out.json)
    entry_json (f, e, c->op == FS_LIST);
  else
    entry_text (f, e, c->op == FS_LIST ? e->rel : e->path);
  fclose (f);
  return write_line (c->out.fd, buf, len, err);
}

static int
on_event (void *ctx, const struct fs_event *ev, hk_err *err)
{
  const struct fs_out *o = ctx;
  if (!o->json && ev->type == FS_EV_READY)
    return 0;
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream (&buf, &len);
  if (f == NULL)
    return err_sys (err, "open_memstream");
  if (o->json)
    {
      fprintf (f, "{\"type\":\"%s\",\"name\":", fs_event_name (ev->type));
      jsonstr_fput (f, ev->name, strlen (ev->name));
      fprintf (f, ",\"dir\":%s}\n", ev->dir ? "true" : "false");
    }
  else
    {
      fprintf (f, "%s ", fs_event_name (ev->type));
      put_name (f, ev->name[0] ? ev->name : ".");
      fputs (ev->dir ? "/\n" : "\n", f);
    }
  fclose (f);
  return write_line (o->fd, buf, len, err);
}

/* ---- options ------------------------------------------------------------------- */

enum
{
  OPT_MODE = 256,
  OPT_TIMEOUT,
  OPT_SYNC,
};

/* Which subcommand takes which option (a letter or OPT_*). */
static bool
takes (enum fs_op op, int opt)
{
  switch (opt)
    {
    case 'd': return op == FS_LIST;
    case 'r': return op == FS_REMOVE || op == FS_WATCH;
    case 'p':
    case OPT_MODE: return op == FS_MKDIR;
    case OPT_TIMEOUT:
    case OPT_SYNC: return op == FS_WATCH;
    case 'f': return op != FS_REMOVE;
    case 'F': return op == FS_REMOVE;
    default: return true;
    }
}

static int
parse_option (const char *verb, struct fs_opts *o, struct fs_out *out, int c)
{
  switch (c)
    {
    case 'u': o->user = optarg; return 0;
    case 'r': o->recursive = true; return 0;
    case 'p': o->parents = true; return 0;
    case 'F': o->force = true; return 0;
    case 'f':
      if (strcmp (optarg, "json") != 0 && strcmp (optarg, "text") != 0)
        return cmd_usage (verb, "--format: \"%s\" is not text or json", optarg);
      out->json = strcmp (optarg, "json") == 0;
      return 0;
    case 'd':
      {
        char *end;
        unsigned long d = strtoul (optarg, &end, 10);
        if (*optarg < '1' || *optarg > '9' || *end != '\0' || d > 4096)
          return cmd_usage (verb, "--depth \"%s\": expected a number from 1 to 4096", optarg);
        o->depth = (unsigned)d;
        return 0;
      }
    case OPT_MODE:
      {
        char *end;
        unsigned long m = strtoul (optarg, &end, 8);
        if (*optarg == '\0' || *end != '\0' || m > 07777)
          return cmd_usage (verb, "--mode \"%s\": expected octal permissions such as 0755", optarg);
        o->mode = (mode_t)m;
        o->has_mode = true;
        return 0;
      }
    case OPT_TIMEOUT:
      if (parse_duration_ms (optarg, &o->timeout_ms) < 0 || o->timeout_ms == 0)
        return cmd_usage (verb, "--timeout \"%s\": expected a duration such as 500ms, 30s or 5m", optarg);
      return 0;
    case OPT_SYNC: o->sync_fd = STDIN_FILENO; return 0;
    default: return cmd_usage (verb, "bad option");
    }
}

static int
unknown_sub (const char *sub)
{
  const char *s = cmd_suggest (sub, fs_subs, sizeof fs_subs / sizeof *fs_subs);
  if (s)
    return cmd_usage ("fs", "unknown subcommand \"%s\"; did you mean \"%s\"?", sub, s);
  return cmd_usage ("fs", "unknown subcommand \"%s\" (stat, ls, rm, mkdir, mv, watch)", sub);
}

static int
op_of (const char *sub, enum fs_op *op)
{
  static const enum fs_op ops[] = { FS_STAT, FS_LIST, FS_REMOVE, FS_MKDIR, FS_RENAME, FS_WATCH };
  for (size_t i = 0; i < sizeof fs_subs / sizeof *fs_subs; i++)
    if (strcmp (sub, fs_subs[i]) == 0)
      {
        *op = ops[i];
        return 0;
      }
  return -1;
}

int
cmd_fs (int argc, char **argv)
{
  if (argc < 2 || strcmp (argv[1], "--help") == 0 || strcmp (argv[1], "-h") == 0)
    return argc < 2 ? cmd_usage ("fs", "expects a subcommand (stat, ls, rm, mkdir, mv, watch)")
                    : cmd_help (fs_help);
  const char *sub = argv[1];
  struct fs_opts o = { .depth = 1, .out_fd = STDOUT_FILENO, .sync_fd = -1 };
  if (op_of (sub, &o.op) < 0)
    return unknown_sub (sub);
  char verb[32];
  snprintf (verb, sizeof verb, "fs %s", sub);
  static const struct option opts[] = {
    { "user", required_argument, NULL, 'u' },
    { "format", required_argument, NULL, 'f' },
    { "depth", required_argument, NULL, 'd' },
    { "recursive", no_argument, NULL, 'r' },
    { "parents", no_argument, NULL, 'p' },
    { "force", no_argument, NULL, 'F' },
    { "mode", required_argument, NULL, OPT_MODE },
    { "timeout", required_argument, NULL, OPT_TIMEOUT },
    { "sync", no_argument, NULL, OPT_SYNC },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  struct fs_out out = { .fd = STDOUT_FILENO };
  argc--;
  argv++;
  optind = 0;
  int c;
  /* rm takes no --format: its -f is --force, as rm's. */
  const char *shorts = o.op == FS_REMOVE ? "u:d:rpfh" : "u:f:d:rph";
  int longi = -1;
  while ((c = getopt_long (argc, argv, shorts, opts, &longi)) != -1)
    {
      if (c == 'f' && o.op == FS_REMOVE && longi < 0)
        c = 'F';
      longi = -1;
      if (c == 'h')
        return cmd_help (fs_help);
      if (c == '?')
        return cmd_bad_option (verb, argv, opts);
      if (!takes (o.op, c))
        {
          const struct option *opt = opts;
          while (opt->name && opt->val != c)
            opt++;
          return cmd_usage (verb, "--%s is not an option of fs %s", opt->name, sub);
        }
      int r = parse_option (verb, &o, &out, c);
      if (r != 0)
        return r;
    }
  int want = o.op == FS_RENAME ? 3 : 2;
  if (argc - optind != want)
    return cmd_usage (verb, o.op == FS_RENAME ? "expects a sandbox ID, a PATH and a NEWPATH inside it"
                                              : "expects a sandbox ID and a PATH inside it");
  o.id = argv[optind];
  o.path = argv[optind + 1];
  o.to = o.op == FS_RENAME ? argv[optind + 2] : NULL;
  struct entry_ctx ec = { .out = out, .op = o.op };
  o.on_entry = on_entry;
  o.on_event = on_event;
  o.ctx = o.op == FS_WATCH ? (void *)&out : (void *)&ec;
  signal (SIGPIPE, SIG_IGN); /* a reader that goes away is a write error */
  hk_err err = { 0 };
  struct store st = { 0 };
  int r = 0;
  if (cmd_store (&st, &err) < 0 || fs_run (&st, &o, &err) < 0)
    r = cmd_fail (verb, o.id, &err);
  store_fini (&st);
  return r;
}
