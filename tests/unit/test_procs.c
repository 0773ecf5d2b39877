/* test_procs: kept processes' ids (what --process accepts), their records
 * in the state tree written and read back (running, exited, lost, pruned
 * names ignored), and the JSON of `ps --detached` (valid whatever bytes
 * the command line holds). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/util.h"
#include "oci/json.h"
#include "oci/report/kept.h"
#include "runtime/exec/procs.h"
#include "runtime/state/pidinfo.h"
#include "tests/unit/tap.h"

static void
test_ids (void)
{
  static const char *const good[] = { "1", "42", "32768", "4194304" };
  static const char *const bad[] = { "",    "0",       "01",          "-1",   "+1",  " 1",   "1 ", "abc",
                                     "1.5", "4194305", "99999999999", "../1", "1/2", "0x10", "1e3" };
  for (size_t i = 0; i < sizeof good / sizeof *good; i++)
    {
      pid_t pid = 0;
      hk_err err = { 0 };
      ok (proc_parse_id (good[i], &pid, &err) == 0 && pid == atoi (good[i]), "process id \"%s\" is taken",
          good[i]);
    }
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
    {
      pid_t pid = 0;
      hk_err err = { 0 };
      ok (proc_parse_id (bad[i], &pid, &err) < 0 && err_kind_of (&err) == ERR_INVALID_ARGUMENT
              && strstr (err.msg, "expected a process id"),
          "process id \"%s\" is refused, invalid_argument", bad[i]);
    }
}

/* <root>/box/procs/<pid>/ with info and cmdline, and exit when ended. */
static void
make_record (const char *root, struct oci_kept *p, bool ended, bool holder)
{
  hk_err err = { 0 };
  cleanup_free char *dir = xasprintf ("%s/box/procs/%d", root, (int)p->pid);
  mkdir_p (dir, 0700, &err);
  cleanup_close int fd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ok (proc_record_start (fd, p, &err) == 0, "the record of %d is written", (int)p->pid);
  if (ended)
    ok (proc_record_exit (fd, p, &err) == 0, "its exit is written");
  if (holder)
    {
      /* This test's own process stands for a live holder. */
      cleanup_free char *rec = xasprintf ("%s/holder", dir);
      pid_record_write (rec, getpid (), 0, false, &err);
    }
}

static void
test_records (void)
{
  char root[] = "/tmp/hako-test-procs.XXXXXX";
  if (mkdtemp (root) == NULL)
    {
      ok (0, "mkdtemp");
      return;
    }
  struct store st = { .root = root, .data_root = root };
  char *argv1[] = { (char *)"sh", (char *)"-c", (char *)"echo \"hi\"; exit 3", NULL };
  char *argv2[] = { (char *)"sleep", (char *)"1", NULL };
  struct oci_kept a = { .pid = 101,
                        .ns_pid = 5,
                        .start = 777,
                        .argv = argv1,
                        .started_ms = 1000,
                        .ended_ms = 3500,
                        .exit_code = 3,
                        .has_usage = true,
                        .user_us = 10,
                        .peak_rss_kib = 2,
                        .truncated = { true, false } };
  snprintf (a.reason, sizeof a.reason, "exited");
  struct oci_kept b = { .pid = 102, .argv = argv2, .started_ms = 2000, .tty = true };
  struct oci_kept c = { .pid = 103, .argv = argv2, .started_ms = 3000 };
  make_record (root, &a, true, false);
  make_record (root, &b, false, true);
  make_record (root, &c, false, false);
  hk_err err = { 0 };
  cleanup_free char *tmp = xasprintf ("%s/box/procs/.new-999", root);
  mkdir_p (tmp, 0700, &err); /* a holder still starting: no record yet */
  struct oci_kept *p = NULL;
  size_t n = 0;
  ok (proc_list (&st, "box", &p, &n, &err) == 0 && n == 3, "three records listed, not the one being made");
  if (n == 3)
    {
      ok (p[0].pid == 101 && p[1].pid == 102 && p[2].pid == 103, "oldest first");
      ok (p[0].state == OCI_KEPT_EXITED && p[0].exit_code == 3 && strcmp (p[0].reason, "exited") == 0
              && p[0].ended_ms == 3500 && p[0].truncated[0] && !p[0].truncated[1] && p[0].has_usage
              && p[0].peak_rss_kib == 2,
          "an ended one: its exit, read back");
      ok (p[0].argv && p[0].argv[2] && strcmp (p[0].argv[2], "echo \"hi\"; exit 3") == 0
              && p[0].argv[3] == NULL,
          "its command line, read back");
      ok (p[1].state == OCI_KEPT_RUNNING && p[1].tty, "one whose holder lives: running, with its terminal");
      ok (p[2].state == OCI_KEPT_LOST, "one whose holder is gone and wrote no exit: lost");
    }
  oci_kepts_free (p, n);
  struct oci_kept one = { 0 };
  ok (proc_get (&st, "box", 104, &one, &err) < 0 && err_kind_of (&err) == ERR_NOT_FOUND,
      "an unknown one: not_found");
  ok (proc_list (&st, "nobox", &p, &n, &err) < 0 && err_kind_of (&err) == ERR_NOT_FOUND,
      "no such sandbox: not_found");
  rm_rf (root, &err);
}

static char *
render (const struct oci_kept *p, size_t n, bool list)
{
  char *text = NULL;
  size_t size = 0;
  FILE *f = open_memstream (&text, &size);
  hk_err err = { 0 };
  if ((list ? oci_kept_list_write (p, n, f, &err) : oci_kept_write (p, f, &err)) < 0)
    printf ("#   write failed: %s\n", err.msg);
  fclose (f);
  return text;
}

static void
test_json (void)
{
  /* Bytes a command line may hold: quotes, controls, invalid UTF-8. */
  char *argv[] = { (char *)"a\"b\\c", (char *)"\x01\n\t", (char *)"\xff\xfe ok \xe2\x82", NULL };
  struct oci_kept run = { .pid = 7, .ns_pid = 2, .argv = argv, .started_ms = 1796654644073 };
  struct oci_kept end = run;
  end.state = OCI_KEPT_EXITED;
  end.exit_code = 137;
  end.signal = 9;
  end.ended_ms = 1796654645074;
  snprintf (end.reason, sizeof end.reason, "timeout");
  end.timed_out = true;
  struct oci_kept both[] = { run, end };
  cleanup_free char *r = render (&run, 1, false);
  cleanup_free char *e = render (&end, 1, false);
  cleanup_free char *l = render (both, 2, true);
  char msg[256];
  yajl_val v = yajl_tree_parse (r, msg, sizeof msg);
  ok (v != NULL, "a running one: valid JSON (%s)", v ? "ok" : msg);
  const char *path_started[] = { "started", NULL }, *path_ended[] = { "ended", NULL },
             *path_code[] = { "exit_code", NULL };
  yajl_val started = v ? yajl_tree_get (v, path_started, yajl_t_string) : NULL;
  const char *when = started ? YAJL_GET_STRING (started) : NULL;
  is_str (when ? when : "(none)", "2026-12-07T14:44:04.073Z", "started: RFC 3339 with ms");
  ok (v && YAJL_IS_NULL (yajl_tree_get (v, path_ended, yajl_t_any))
          && YAJL_IS_NULL (yajl_tree_get (v, path_code, yajl_t_any)),
      "while it runs, ended and exit_code are null");
  yajl_tree_free (v);
  v = yajl_tree_parse (e, msg, sizeof msg);
  ok (v != NULL, "an ended one with odd bytes in its command: valid JSON");
  ok (strstr (e, "\"exit_code\":137,\"signal\":9,\"reason\":\"timeout\",\"timed_out\":true") != NULL,
      "its end, in order");
  ok (strstr (e, "\"command\":[\"a\\\"b\\\\c\",\"\\u0001\\n\\t\",\"\\ufffd\\ufffd ok \\ufffd\"]") != NULL,
      "the command escaped; invalid UTF-8 as U+FFFD");
  yajl_tree_free (v);
  v = yajl_tree_parse (l, msg, sizeof msg);
  ok (v != NULL && YAJL_IS_ARRAY (v) && YAJL_GET_ARRAY (v)->len == 2, "the list: an array of both");
  yajl_tree_free (v);
  cleanup_free char *empty = render (NULL, 0, true);
  is_str (empty, "[]\n", "no process: []");
}

int
main (void)
{
  test_ids ();
  test_records ();
  test_json ();
  return tap_done ();
}
