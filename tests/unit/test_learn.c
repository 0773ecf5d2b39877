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

/* --profile-file refuses what learning never writes, naming the field. */
static void
refused (const char *cfg, const char *profile, const char *field)
{
  hk_err err = { 0 };
  char *out = NULL;
  size_t out_len;
  int r = oci_spec_apply_profile (cfg, strlen (cfg), profile, strlen (profile), &out, &out_len, &err);
  ok (r < 0 && out == NULL && err.kind == ERR_INVALID_CONFIG && strstr (err.msg, field),
      "refused, naming %s: %s", field, err.msg);
  free (out);
}

static void
test_refused (const char *cfg)
{
  refused (cfg, "{\"sandbox\":{\"network\":{\"mode\":\"host\"}}}", ".sandbox.network.mode");
  refused (cfg, "{\"sandbox\":{\"landlock\":{\"write\":[\"/\"]}}}", ".sandbox.landlock.write[0]");
  refused (cfg, "{\"sandbox\":{\"landlock\":{\"read\":[\"/usr\",\"/.//\"]}}}", ".sandbox.landlock.read[1]");
  refused (cfg, "{\"sandbox\":{\"landlock\":{\"exec\":[\"/usr/..\"]}}}", ".sandbox.landlock.exec[0]");
  refused (cfg, "{\"sandbox\":{\"network\":{\"mode\":\"allowlist\",\"allow\":[\"169.254.169.254:80\"]}}}",
           ".sandbox.network.allow[0]");
  refused (cfg, "{\"sandbox\":{\"network\":{\"allow\":[\"example.org:443\",\"[::1]:22\"]}}}",
           ".sandbox.network.allow[1]");
  refused (cfg, "{\"sandbox\":{\"network\":{\"mode\":\"allowlist\",\"join\":true}}}",
           ".sandbox.network.join");
  refused (cfg, "{\"sandbox\":{\"limits\":{\"disk\":-1}}}", ".sandbox.limits");
  refused (cfg, "{\"sandbox\":{\"network\":{\"allow\":[\"0.0.0.0/0\"]}}}", ".sandbox.network.allow[0]");
  refused (cfg, "{\"sandbox\":{\"network\":{\"allow\":[\"example.org\"]}}}", ".sandbox.network.allow[0]");
  refused (cfg, "{\"sandbox\":{\"network\":{\"allow\":[\"*.example.org:443\"]}}}",
           ".sandbox.network.allow[0]");
  refused (cfg, "{\"sandbox\":{\"network\":{\"allow\":[\"http://127.0.0.1:80\"]}}}",
           ".sandbox.network.allow[0]");
  refused (cfg, "{\"sandbox\":{\"network\":{\"allow\":[\"127.1:80\"]}}}", ".sandbox.network.allow[0]");
  refused (cfg, "{\"sandbox\":{\"seccomp\":{\"allow\":[3]}}}", ".sandbox.seccomp.allow[0]");
}

static void
test_consent (void)
{
  static const struct
  {
    const char *hostport, *why;
  } cases[] = {
    { "127.0.0.1:8000", "loopback" },
    { "127.1.2.3:1", "loopback" },
    { "[::1]:22", "loopback" },
    { "localhost:80", "loopback" },
    { "0.0.0.0:80", "loopback" },
    { "[::ffff:127.0.0.1]:80", "loopback" },
    { "169.254.169.254:80", "link-local" },
    { "[fe80::1]:80", "link-local" },
    { "10.1.2.3:443", "private" },
    { "172.16.0.1:443", "private" },
    { "172.31.255.255:443", "private" },
    { "192.168.1.1:443", "private" },
    { "100.64.0.1:443", "private" },
    { "[fd00::1]:443", "private" },
    { "172.32.0.1:443", NULL },
    { "203.0.113.7:443", NULL },
    { "example.org:443", NULL },
    { "127.1:80", "loopback" },
    { "2130706433:80", "loopback" },
    { "0x7f000001:80", "loopback" },
    { "LocalHost.:80", "loopback" },
    { "a.localhost:80", "loopback" },
    { "[64:ff9b::7f00:1]:80", "reserved" },
    { "224.0.0.1:80", "reserved" },
    { "[::ffff:169.254.169.254]:80", "link-local" },
    { "[fec0::1]:80", "private" },
    { "notlocalhost:80", NULL },
    { "[2001:db8::1]:443", NULL },
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
    {
      const char *got = oci_learn_needs_consent (cases[i].hostport);
      ok (got == cases[i].why || (got && cases[i].why && strcmp (got, cases[i].why) == 0), "%s: %s",
          cases[i].hostport, cases[i].why ? cases[i].why : "no consent needed");
    }
  cleanup_free char *e = oci_learn_escape ("a\nb\033[31m\\\x9b\xc3\xa9");
  ok (strcmp (e, "a\\x0ab\\x1b[31m\\x5c\\x9b\\xc3\\xa9") == 0, "escaped: %s", e);
}

/* Loopback and metadata destinations are withheld with a note; names the
 * sandbox chose reach the notes escaped. */
static void
test_withheld_and_escaped (const char *path, const char *notes)
{
  hk_err err = { 0 };
  char **added = NULL;
  unlink (path);
  struct learn_rec recs[] = {
    REC ('h', "127.0.0.1:8000"),
    REC ('h', "169.254.169.254:80"),
    REC ('h', "203.0.113.7:443"),
    { .kind = 'r', .value = (char *)"/in/evil\n\033[2Jname", .note = (char *)"/bin/\033]0;x\007sh" },
  };
  ok (oci_learn_update (path, recs, sizeof recs / sizeof *recs, false, "cmd\nforged", &added, &err) == 0,
      "learned: %s", err.msg);
  cleanup_free char *text = slurp (path), *n = slurp (notes);
  ok (strstr (text, "203.0.113.7:443") && !strstr (text, "127.0.0.1") && !strstr (text, "169.254"),
      "the allow-list keeps the public destination, not loopback or link-local");
  ok (strstr (n, "# not granted: network.allow 127.0.0.1:8000: a loopback destination")
          && strstr (n, "# not granted: network.allow 169.254.169.254:80: a link-local destination")
          && strstr (n, "--allow 169.254.169.254:80"),
      "the notes say which were not granted and how to grant them");
  ok (!strchr (n, '\033') && !strstr (n, "\nforged") && strstr (n, "/in/evil\\x0a\\x1b[2Jname"),
      "the notes carry no raw newline or escape from a name");
  size_t bangs = 0;
  for (size_t i = 0; added && added[i]; i++)
    bangs += added[i][0] == '!' && !strchr (added[i], '\033');
  ok (bangs == 2, "the report lists the 2 withheld destinations");
  strv_free (added);
}

/* The proxy's decision lines read back, and the request rules made of
 * them: methods together per path, siblings as "*", a '*' of a path kept
 * a character. */
static void
test_requests (const char *path)
{
  char *v = NULL;
  const char *l1 = "{\"method\":\"GET\",\"scheme\":\"https\",\"host\":\"api.example\",\"port\":443,"
                   "\"path\":\"/a/*b\",\"verdict\":\"learn\"}";
  ok (oci_learn_decision (l1, strlen (l1), &v) == 'q'
          && strcmp (v, "GET https://api.example:443/a/%2Ab") == 0,
      "a request line: 'q' %s", v ? v : "-");
  free (v);
  v = NULL; /* the next ok's message may be evaluated before its call */
  const char *l2
      = "{\"method\":\"CONNECT\",\"host\":\"::1\",\"port\":8443,\"tunnel\":\"opaque\",\"verdict\":\"allow\"}";
  ok (oci_learn_decision (l2, strlen (l2), &v) == 'h' && strcmp (v, "[::1]:8443") == 0,
      "an opaque tunnel: 'h' %s", v ? v : "-");
  free (v);
  v = NULL; /* the next ok's message may be evaluated before its call */
  const char *l3 = "{\"method\":\"CONNECT\",\"host\":\"a\",\"port\":443,\"tunnel\":\"intercepted\","
                   "\"verdict\":\"learn\"}";
  const char *l4 = "{\"method\":\"GET\",\"scheme\":\"https\",\"host\":\"a\",\"port\":443,\"path\":\"/"
                   "\",\"verdict\":\"deny\"}";
  ok (oci_learn_decision (l3, strlen (l3), &v) == 0 && oci_learn_decision (l4, strlen (l4), &v) == 0
          && oci_learn_decision ("{", 1, &v) == 0,
      "an intercepted CONNECT (its requests count), a refusal, a broken line: nothing");
  char *in[] = { "GET https://h:443/r/1", "GET https://h:443/r/2",       "GET https://h:443/r/3",
                 "GET https://h:443/r/4", "HEAD https://h:443/r/1",      "POST https://h:443/x",
                 "GET https://h:443/x",   "GET,PUT https://g:8443/a/**", NULL };
  size_t *from;
  char **out = oci_learn_request_rules (in, &from);
  ok (strv_len (out) == 4 && strcmp (out[0], "GET https://h:443/r/*") == 0
          && strcmp (out[1], "HEAD https://h:443/r/1") == 0
          && strcmp (out[2], "GET,POST https://h:443/x") == 0
          && strcmp (out[3], "GET,PUT https://g:8443/a/**") == 0,
      "4 siblings: \"*\"; methods of a path together; an old rule kept whole (%s, %s, %s, %s)", out[0],
      out[1], out[2], out[3]);
  strv_free (out);
  free (from);
  /* Learned on loopback: withheld, the hint quoted. */
  hk_err err = { 0 };
  char **added = NULL;
  unlink (path);
  struct learn_rec recs[]
      = { REC ('q', "GET http://127.0.0.1:80/x"), REC ('q', "GET https://api.example:443/y") };
  ok (oci_learn_update (path, recs, 2, false, "cmd", &added, &err) == 0, "learned: %s", err.msg);
  cleanup_free char *text = slurp (path);
  ok (strstr (text, "\"GET https://api.example:443/y\"") && !strstr (text, "127.0.0.1"),
      "the public request rule granted, the loopback one not");
  bool hint = false;
  for (size_t i = 0; added && added[i]; i++)
    hint |= strstr (added[i], "needs --allow 'GET http://127.0.0.1:80/x'") != NULL;
  ok (hint, "the report says how to grant it, quoted");
  strv_free (added);
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
      ok (spec->linux.seccomp == NULL && spec->sandbox.seccomp_allow && spec->sandbox.seccomp_allow[0]
              && strcmp (spec->sandbox.seccomp_allow[0], "read") == 0,
          "the allow-list is sandbox.seccomp.allow; linux.seccomp is left as it was");
      ok (spec->sandbox.landlock.n_tcp_bind == 1 && spec->sandbox.landlock.tcp_bind[0] == 0,
          "tcp_bind 0 kept");
      oci_spec_free (spec);
    }
  free (out);
  ok (oci_spec_apply_profile (cfg, strlen (cfg), "{\"sandbox\":3}", 13, &out, &out_len, &err) < 0
          && strstr (err.msg, "expected"),
      "a profile of the wrong shape is refused: %s", err.msg);

  test_refused (cfg);
  test_consent ();
  test_withheld_and_escaped (path, notes);
  test_requests (path);

  unlink (path);
  unlink (notes);
  rmdir (dir);
  return tap_done ();
}
