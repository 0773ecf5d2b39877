/* test_learn: observations collapsed into a learned profile (the
 * directory threshold, symlink-free cases, creates, built programs, /proc,
 * ports), a second run merged with the first, and the profile applied to
 * a config. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/util.h"
#include "oci/learn.h"
#include "oci/spec.h"
#include "tests/unit/tap.h"

static char *
slurp (const char *path)
{
  hk_err err = { 0 };
  char *text = NULL;
  size_t len;
  if (file_read_all (path, 1 << 20, &text, &len, &err) < 0)
    return xstrdup ("");
  return text;
}

static size_t
count (char **v)
{
  size_t n = 0;
  while (v && v[n])
    n++;
  return n;
}

#define REC(k, v)                                                                                            \
  {                                                                                                          \
    .kind = (k), .value = (char *)(v), .note = (char *)"/usr/bin/test"                                       \
  }

int
main (void)
{
  char dir[] = "/tmp/test_learn.XXXXXX";
  if (mkdtemp (dir) == NULL)
    return 1;
  cleanup_free char *path = xasprintf ("%s/p.json", dir);
  cleanup_free char *notes = xasprintf ("%s/p.json.notes", dir);
  hk_err err = { 0 };
  char **added = NULL;

  struct learn_rec first[] = {
    REC ('r', "/in/a/1"),    REC ('r', "/in/a/2"),       REC ('r', "/in/a/3"),     REC ('r', "/in/a/4"),
    REC ('r', "/in/b/1"),    REC ('r', "/proc/12/maps"), REC ('r', "/dev/null"),   REC ('c', "/out/new"),
    REC ('r', "/out/old"),   REC ('w', "/etc/x"),        REC ('x', "/usr/bin/sh"), REC ('c', "/work/prog"),
    REC ('x', "/work/prog"), REC ('t', "8000"),          REC ('b', "0"),
  };
  ok (oci_learn_update (path, first, sizeof first / sizeof *first, false, "cmd", &added, &err) == 0,
      "learned: %s", err.msg);
  cleanup_free char *text = slurp (path);
  ok (strstr (text, "\"/in/a\"") && !strstr (text, "\"/in/a/1\""),
      "4 entries of one directory: the directory");
  ok (strstr (text, "\"/in/b/1\""), "1 entry: the file");
  ok (strstr (text, "\"/proc\"") && !strstr (text, "/proc/12"), "/proc is one rule");
  ok (!strstr (text, "/dev/null"), "std devices need no rule");
  ok (strstr (text, "\"/out\"") && !strstr (text, "\"/out/old\""),
      "a create grants its directory, which covers reads");
  ok (strstr (text, "\"/work\""), "a program the run built: execute on its directory");
  ok (!strstr (text, "\"/\""), "never the root from the threshold");
  ok (!strstr (text, "seccomp"), "no seccomp unless learned");
  ok (count (added) > 5, "everything is new the first time");
  strv_free (added);
  cleanup_free char *n1 = slurp (notes);
  ok (strstr (n1, "landlock.read /in/a: 4 path(s)") != NULL, "notes say why");

  struct learn_rec second[] = { REC ('r', "/in/a/5"), REC ('r', "/other"), REC ('s', "read") };
  ok (oci_learn_update (path, second, 3, true, "cmd", &added, &err) == 0, "merged: %s", err.msg);
  ok (count (added) == 2 && strcmp (added[0], "landlock.read /other") == 0
          && strcmp (added[1], "seccomp.allow read") == 0,
      "a second run reports only what is new");
  strv_free (added);
  cleanup_free char *t2 = slurp (path);
  ok (strstr (t2, "\"/in/b/1\"") && strstr (t2, "\"/etc/x\""), "the old rules stay");

  /* Applied to a config: landlock replaced, derive off, seccomp an allow-list. */
  const char *cfg = "{\"ociVersion\":\"1.0.0\",\"root\":{\"path\":\"rootfs\"},\"process\":{\"args\":[\"sh\"]}"
                    ",\"linux\":{},"
                    "\"sandbox\":{\"landlock\":{\"derive\":true,\"scoped\":true}}}";
  char *out = NULL;
  size_t out_len;
  ok (oci_spec_apply_profile (cfg, strlen (cfg), t2, strlen (t2), &out, &out_len, &err) == 0, "applied: %s",
      err.msg);
  struct oci_spec *spec = NULL;
  ok (out && oci_spec_parse (out, out_len, &spec, &err) == 0, "the result parses: %s", err.msg);
  if (spec)
    {
      ok (!spec->sandbox.landlock.derive && spec->sandbox.landlock.scoped
              && spec->sandbox.landlock.missing_ok,
          "derive off, scoped kept, missing_ok on");
      ok (spec->linux.seccomp != NULL, "linux.seccomp from the allow-list");
      ok (spec->sandbox.landlock.n_tcp_bind == 1 && spec->sandbox.landlock.tcp_bind[0] == 0,
          "tcp_bind 0 kept");
      oci_spec_free (spec);
    }
  free (out);
  ok (oci_spec_apply_profile (cfg, strlen (cfg), "{\"sandbox\":3}", 13, &out, &out_len, &err) < 0
          && strstr (err.msg, "expected"),
      "a profile of the wrong shape is refused: %s", err.msg);

  unlink (path);
  unlink (notes);
  rmdir (dir);
  return tap_done ();
}
