/* Unit tests for lib/: errors and their kinds, JSON strings, parsers, whole-file I/O, rm_rf, trust. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/err.h"
#include "lib/inroot.h"
#include "lib/jsonstr.h"
#include "lib/trust.h"
#include "lib/util.h"
#include "tests/unit/tap.h"

static void
test_err (void)
{
  hk_err err = { 0 };
  ok (err_set (&err, EINVAL, "bad %s", "x") == -1, "err_set returns -1");
  is_str (err.msg, "bad x", "err_set adds nothing to a message that says it all");
  ok (err.errnum == EINVAL, "err_set records the code");
  ok (err_code (&err, ENOENT, "open %s", "/x") == -1, "err_code returns -1");
  is_str (err.msg, "open /x: No such file or directory", "err_code appends strerror");
  ok (err.errnum == ENOENT, "err_code keeps the code");
  err_prefix (&err, "bundle %s", "b");
  is_str (err.msg, "bundle b: open /x: No such file or directory", "err_prefix puts context in front");
  err_set (&err, 0, "plain");
  is_str (err.msg, "plain", "errnum 0 adds nothing");
}

static void
test_err_kind (void)
{
  hk_err err = { 0 };
  err_set (&err, ENOENT, "x");
  is_str (err_kind_name (err_kind_of (&err)), "not_found", "ENOENT is not_found when no kind is set");
  static const struct
  {
    int errnum;
    const char *kind;
  } derived[] = {
    { EEXIST, "exists" },      { EACCES, "permission" }, { EPERM, "permission" },  { EBUSY, "busy" },
    { ENOSPC, "no_space" },    { EDQUOT, "no_space" },   { ETIMEDOUT, "timeout" }, { ENOTSUP, "unsupported" },
    { ENOSYS, "unsupported" }, { ESRCH, "not_running" }, { EINVAL, "internal" },   { 0, "internal" },
  };
  for (size_t i = 0; i < sizeof derived / sizeof *derived; i++)
    {
      err_set (&err, derived[i].errnum, "x");
      is_str (err_kind_name (err_kind_of (&err)), derived[i].kind, "errno %d derives %s", derived[i].errnum,
              derived[i].kind);
    }
  ok (err_setk (&err, ERR_ADMISSION, EBUSY, "pool full") == -1, "err_setk returns -1");
  is_str (err_kind_name (err_kind_of (&err)), "admission", "a kind set wins over errnum");
  err_prefix (&err, "create a");
  is_str (err_kind_name (err_kind_of (&err)), "admission", "err_prefix keeps the kind");
  err_kind_default (&err, ERR_INVALID_CONFIG);
  is_str (err_kind_name (err_kind_of (&err)), "admission", "err_kind_default does not override");
  err_set (&err, EINVAL, "new");
  ok (err.kind == ERR_KIND_UNSET, "a new error forgets the old kind");
  err_kind_default (&err, ERR_INVALID_CONFIG);
  is_str (err_kind_name (err_kind_of (&err)), "invalid_config", "err_kind_default sets an unset kind");
  is_str (err_kind_name ((enum err_kind)999), "internal", "an out-of-range kind is internal");
}

/* jsonstr_append: valid JSON for any bytes, and cut only between pieces. */
static void
test_jsonstr (void)
{
  char buf[64];
  size_t n = 0;
  jsonstr_append (buf, sizeof buf, &n, "a\"b\\c\n\001\xff\xe2\x80\xa8\xc3\xa9");
  is_str (buf, "\"a\\\"b\\\\c\\n\\u0001\\ufffd\\u2028\xc3\xa9\"", "escapes, U+FFFD, U+2028, UTF-8 kept");
  ok (n == strlen (buf), "the length is advanced");
  for (size_t size = 3; size < 24; size++)
    {
      char small[24];
      size_t k = 0;
      jsonstr_append (small, size, &k, "abc\n\xc3\xa9\xc3\xa9\\\"xyz");
      bool bad = k >= size || small[0] != '"' || small[k - 1] != '"' || small[k] != '\0';
      /* Never a half escape: an odd run of backslashes before the closing quote. */
      size_t bs = 0;
      for (size_t j = k - 1; j > 0 && small[j - 1] == '\\'; j--)
        bs++;
      bad |= bs % 2 == 1;
      /* Never half a character: the byte before the quote is not a lead byte. */
      bad |= k >= 2 && ((unsigned char)small[k - 2] & 0xc0) == 0xc0;
      ok (!bad, "cut short at %zu bytes: still one quoted string (%s)", size, small);
    }
  n = 0;
  buf[0] = 'x';
  jsonstr_append (buf, 2, &n, "abc");
  ok (n == 0 && buf[0] == 'x', "nothing is written when not even the quotes fit");
}

static void
test_duration (void)
{
  uint64_t ms = 0;
  ok (parse_duration_ms ("500ms", &ms) == 0 && ms == 500, "500ms");
  ok (parse_duration_ms ("30s", &ms) == 0 && ms == 30000, "30s");
  ok (parse_duration_ms ("5m", &ms) == 0 && ms == 300000, "5m");
  ok (parse_duration_ms ("2", &ms) == 0 && ms == 2000, "bare number is seconds");
  ok (parse_duration_ms ("1.5s", &ms) == 0 && ms == 1500, "fractions");
  ok (parse_duration_ms ("-1s", &ms) < 0, "negative refused");
  ok (parse_duration_ms ("10x", &ms) < 0, "unknown unit refused");
  ok (parse_duration_ms ("", &ms) < 0, "empty refused");
  ok (parse_duration_ms ("nan", &ms) < 0 && parse_duration_ms ("inf", &ms) < 0, "nan and inf refused");
}

static void
test_size (void)
{
  uint64_t b = 0;
  ok (parse_size ("1024", &b) == 0 && b == 1024, "plain bytes");
  ok (parse_size ("2k", &b) == 0 && b == 2048, "k suffix");
  ok (parse_size ("3M", &b) == 0 && b == 3u << 20, "M suffix");
  ok (parse_size ("1g", &b) == 0 && b == 1u << 30, "g suffix");
  ok (parse_size ("12q", &b) < 0, "bad suffix refused");
  ok (parse_size ("-1", &b) < 0, "negative refused");
  ok (parse_size ("99999999999999999999g", &b) < 0, "overflow refused");
}

static void
test_files (const char *dir)
{
  hk_err err = { 0 };
  char *path = xasprintf ("%s/a/b/c", dir);
  ok (mkdir_p (path, 0755, &err) == 0, "mkdir_p makes every component");
  ok (mkdir_p (path, 0755, &err) == 0, "mkdir_p of an existing path succeeds");
  char *f = xasprintf ("%s/file", path);
  ok (file_write_atomic (f, "hello", 5, 0600, &err) == 0, "atomic write");
  char *buf = NULL;
  size_t len = 0;
  ok (file_read_all (f, 100, &buf, &len, &err) == 0 && len == 5 && strcmp (buf, "hello") == 0,
      "read back what was written");
  free (buf);
  ok (file_read_all (f, 3, &buf, &len, &err) < 0 && err.errnum == EFBIG, "read cap enforced");
  struct stat st;
  ok (stat (f, &st) == 0 && (st.st_mode & 0777) == 0600, "atomic write keeps the mode");
  char *tmp = xasprintf ("%s.tmp.%d", f, (int)getpid ());
  ok (access (tmp, F_OK) < 0, "no temporary file left behind");
  char *top = xasprintf ("%s/a", dir);
  char *link = xasprintf ("%s/a/link", dir);
  ok (symlink ("/etc", link) == 0, "symlink to /etc planted");
  ok (rm_rf (top, &err) == 0 && access (top, F_OK) < 0, "rm_rf removes the tree");
  ok (access ("/etc/passwd", F_OK) == 0, "rm_rf did not follow the symlink");
  ok (rm_rf (top, &err) == 0, "rm_rf of a missing path succeeds");
  free (path), free (f), free (tmp), free (top), free (link);
}

static void
test_path_lexical (void)
{
  static const struct
  {
    const char *in, *want;
    bool above;
  } cases[] = {
    { "/a/./b/../c", "a/c", false },  { "a//b/", "a/b", false }, { "/", "", false },
    { "/work/../etc", "etc", false }, { "../x", "x", true },     { "a/../../b", "b", true },
    { "a/b/../..", "", false },       { "./.", "", false },
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
    {
      bool above;
      char *got = path_lexical (cases[i].in, &above);
      ok (strcmp (got, cases[i].want) == 0 && above == cases[i].above,
          "path_lexical %s -> \"%s\"%s (got \"%s\")", cases[i].in, cases[i].want,
          cases[i].above ? ", above the top" : "", got);
      free (got);
    }
}

/* The in-root resolver: a symlink planted in the root, absolute or "..",
 * resolves inside it, and mkdir -p through one lands inside too. */
static void
test_inroot (const char *dir)
{
  char *root = xasprintf ("%s/root", dir), *outside = xasprintf ("%s/outside", dir);
  mkdir (root, 0755);
  mkdir (outside, 0755);
  int rfd = open (root, O_PATH | O_DIRECTORY);
  char *up = xasprintf ("%s/up", root), *abs = xasprintf ("%s/abs", root);
  ok (symlink ("../outside", up) == 0 && symlink (outside, abs) == 0, "inroot: links planted");
  char *inner = xasprintf ("%s/inner", root), *lnk = xasprintf ("%s/lnk", root);
  mkdir (inner, 0755);
  ok (symlink ("/inner", lnk) == 0, "inroot: an absolute link to a directory of the root");
  ok (inroot_open (rfd, "/up", O_PATH, 0) < 0 && errno == ENOENT,
      "inroot: \"../outside\" from the top is <root>/outside, not the host's");
  ok (inroot_open (rfd, "abs", O_PATH, 0) < 0 && errno == ENOENT,
      "inroot: an absolute link resolves inside the root");
  int fd = inroot_open (rfd, "lnk", O_PATH | O_DIRECTORY, 0);
  struct stat a, b;
  ok (fd >= 0 && fstat (fd, &a) == 0 && stat (inner, &b) == 0 && a.st_ino == b.st_ino,
      "inroot: /inner is the root's inner");
  close (fd);
  char *at = NULL;
  fd = inroot_mkdir_p (rfd, "lnk/x//y", O_PATH, 0, 0755, (uid_t)-1, (gid_t)-1, &at);
  char *made = xasprintf ("%s/x/y", inner);
  ok (fd >= 0 && access (made, F_OK) == 0,
      "inroot: mkdir -p through the link makes the tree inside the root");
  close (fd);
  ok ((fd = inroot_mkdir_p (rfd, "lnk/x/y", O_PATH, 0, 0755, (uid_t)-1, (gid_t)-1, NULL)) >= 0,
      "inroot: mkdir -p of what exists");
  close (fd);
  char *file = xasprintf ("%s/f", root);
  close (open (file, O_CREAT | O_WRONLY, 0644));
  ok (inroot_mkdir_p (rfd, "f/z", O_PATH, 0, 0755, (uid_t)-1, (gid_t)-1, &at) < 0 && errno == ENOTDIR && at
          && strcmp (at, "f/z") == 0,
      "inroot: a file in the way fails (ENOTDIR), naming the path");
  free (at);
  /* Beneath: no symlink at all on the way, none at the end unless asked
   * for as itself, no ".." out. */
  ok (inroot_beneath (rfd, "lnk/x", O_PATH) < 0 && errno == ELOOP, "beneath: a symlink on the way is ELOOP");
  ok (inroot_beneath (rfd, "lnk", O_PATH | O_DIRECTORY) < 0 && errno == ELOOP,
      "beneath: a symlink at the end is ELOOP");
  fd = inroot_beneath (rfd, "lnk", O_PATH | O_NOFOLLOW);
  ok (fd >= 0 && fstat (fd, &a) == 0 && S_ISLNK (a.st_mode),
      "beneath: O_PATH | O_NOFOLLOW opens the link itself");
  close (fd);
  ok (inroot_beneath (rfd, "inner/../..", O_PATH) < 0 && errno == EXDEV,
      "beneath: \"..\" above the top is EXDEV");
  fd = inroot_beneath (rfd, "inner/x/y", O_PATH | O_DIRECTORY);
  ok (fd >= 0, "beneath: real directories resolve");
  close (fd);
  close (rfd);
  free (root), free (outside), free (up), free (abs), free (made), free (file), free (inner), free (lnk);
}

static void
test_fnv (void)
{
  ok (fnv1a32 ("") == 2166136261u && fnv1a32 ("a") == 0xe40c292cu, "fnv1a32: the reference values");
  ok (fnv1a64 (FNV1A64_BASIS, "a", 1) == 0xaf63dc4c8601ec8cULL, "fnv1a64: the reference value");
  ok (path_has_dotdot ("a/../b") && path_has_dotdot ("..") && !path_has_dotdot ("a/..b/.c")
          && !path_has_dotdot (""),
      "path_has_dotdot: components only");
}

/* trust_open's rule on files made here (dir is root's, 0700, under /tmp). */
static void
test_trust (const char *dir)
{
  hk_err err = { 0 };
  char *buf = NULL;
  char *f = xasprintf ("%s/t.json", dir), *open_dir = xasprintf ("%s/open", dir);
  char *in_open = xasprintf ("%s/open/t.json", dir), *sticky = xasprintf ("%s/sticky", dir);
  char *below = xasprintf ("%s/sticky/d", dir), *in_below = xasprintf ("%s/sticky/d/t.json", dir);
  char *fifo = xasprintf ("%s/fifo", dir);
  ok (file_write_new (f, "{}", 2, 0644, &err) == 0, "trust: a root file 0644");
  ok (trust_read_all (f, 100, &buf, NULL, &err) == 0 && strcmp (buf, "{}") == 0,
      "trust: root's 0644 is read");
  free (buf);
  chmod (f, 0666);
  ok (trust_read_all (f, 100, &buf, NULL, &err) < 0 && err_kind_of (&err) == ERR_PERMISSION
          && strstr (err.msg, "is writable by every user (mode 0666)"),
      "trust: world-writable refused (%s)", err.msg);
  chmod (f, 0664);
  ok (trust_read_all (f, 100, &buf, NULL, &err) < 0 && strstr (err.msg, "writable by its group"),
      "trust: group-writable refused (%s)", err.msg);
  chmod (f, 0644);
  if (geteuid () == 0)
    {
      ok (chown (f, 65534, 65534) == 0, "trust: chown to another user");
      ok (trust_read_all (f, 100, &buf, NULL, &err) < 0 && strstr (err.msg, "owned by uid 65534, not root"),
          "trust: another user's file refused (%s)", err.msg);
      chown (f, 0, 0);
    }
  mkdir (open_dir, 0777);
  chmod (open_dir, 0777);
  ok (file_write_new (in_open, "{}", 2, 0644, &err) == 0, "trust: a root file in a 0777 dir");
  ok (trust_read_all (in_open, 100, &buf, NULL, &err) < 0 && strstr (err.msg, open_dir)
          && strstr (err.msg, "writable by every user (mode 0777)"),
      "trust: a directory above that others can write is refused, named (%s)", err.msg);
  mkdir (sticky, 0755);
  chmod (sticky, 01777);
  mkdir (below, 0755);
  ok (file_write_new (in_below, "{}", 2, 0644, &err) == 0, "trust: a file below root's sticky dir");
  ok (trust_read_all (in_below, 100, &buf, NULL, &err) == 0, "trust: root's sticky dir above is let through");
  free (buf);
  ok (trust_open (sticky, O_RDONLY | O_DIRECTORY, &err) < 0 && strstr (err.msg, "mode 1777"),
      "trust: a sticky dir is refused as the directory itself (%s)", err.msg);
  ok (mkfifo (fifo, 0600) == 0, "trust: a fifo");
  ok (trust_read_all (fifo, 100, &buf, NULL, &err) < 0 && strstr (err.msg, "not a regular file"),
      "trust: a fifo is refused, not waited on (%s)", err.msg);
  int d = trust_open (dir, O_RDONLY | O_DIRECTORY, &err);
  ok (d >= 0, "trust: the test dir opens");
  char *link = xasprintf ("%s/link", dir);
  ok (symlink (f, link) == 0 && trust_openat (d, "link", link, O_RDONLY, &err) < 0,
      "trust_openat follows no symlink (%s)", err.msg);
  close (d);
  free (f), free (open_dir), free (in_open), free (sticky), free (below), free (in_below), free (fifo);
  free (link);
}

/* What a sandbox names, made safe for a terminal (cmd/fs.c, ps --detached, the log). */
static void
test_text_sanitize (void)
{
  struct
  {
    const char *in, *keep, *want, *what;
  } cases[] = {
    { "plain name.txt", NULL, "plain name.txt", "text as it is" },
    { "caf\xc3\xa9 \xe6\x97\xa5\xf0\x9f\x98\x80", NULL, "caf\xc3\xa9 \xe6\x97\xa5\xf0\x9f\x98\x80",
      "UTF-8 as it is" },
    { "a\x1b]0;owned\x07"
      "b\nc\x7f",
      NULL, "a?]0;owned?b?c?", "C0 controls and DEL" },
    { "x\xc2\x9b"
      "2Jy\xc2\x85",
      NULL, "x??2Jy??", "C1 controls in UTF-8 (CSI, NEL)" },
    { "\x9b"
      "31mlone\xff\xc3",
      NULL, "?31mlone??", "bytes that are not UTF-8" },
    { "\xe0\x80\x9b \xed\xa0\x80", NULL, "??? ???", "overlong forms and surrogates" },
    { "line\n\tnext\r", "\n\t", "line\n\tnext?", "what keep names stays" },
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
    {
      char *s = xstrdup (cases[i].in);
      text_sanitize (s, cases[i].keep);
      is_str (s, cases[i].want, "text_sanitize: %s", cases[i].what);
      free (s);
    }
}

int
main (void)
{
  char tmpl[] = "/tmp/hako-unit-util.XXXXXX";
  char *dir = mkdtemp (tmpl);
  test_err ();
  test_err_kind ();
  test_jsonstr ();
  test_duration ();
  test_size ();
  test_path_lexical ();
  test_files (dir);
  test_inroot (dir);
  test_trust (dir);
  test_fnv ();
  test_text_sanitize ();
  hk_err err;
  rm_rf (dir, &err);
  return tap_done ();
}
