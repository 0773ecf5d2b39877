/* Unit tests for lib/: errors, parsers, whole-file I/O, rm_rf. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/err.h"
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
  char *tmp = xasprintf ("%s.tmp.%d", f, (int) getpid ());
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
    { "/a/./b/../c", "a/c", false }, { "a//b/", "a/b", false },   { "/", "", false },
    { "/work/../etc", "etc", false }, { "../x", "x", true },       { "a/../../b", "b", true },
    { "a/b/../..", "", false },      { "./.", "", false },
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

int
main (void)
{
  char tmpl[] = "/tmp/hako-unit-util.XXXXXX";
  char *dir = mkdtemp (tmpl);
  test_err ();
  test_duration ();
  test_size ();
  test_path_lexical ();
  test_files (dir);
  hk_err err;
  rm_rf (dir, &err);
  return tap_done ();
}
