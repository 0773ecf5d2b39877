/* test_admission: node.json parsing, the admission decision, and the sum of
 * the live sandboxes' reservations over a state root built in a temp dir. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/util.h"
#include "oci/node.h"
#include "runtime/node/admission.h"
#include "runtime/state/pidinfo.h"
#include "tests/unit/tap.h"

#define MiB (1024ull * 1024)

/* The profiles' defaults: default_memory (a size, or -1) and default_pids. */
static void
test_parse_defaults (void)
{
  static const struct
  {
    const char *json;
    int64_t memory, pids;
  } v[] = {
    { "{}", 0, 0 },
    { "{\"default_memory\":\"512M\",\"default_pids\":64}", 512 * MiB, 64 },
    { "{\"default_memory\":1048576}", MiB, 0 },
    { "{\"default_memory\":-1,\"default_pids\":-1}", -1, -1 },
    { "{\"default_memory\":\"-1\",\"default_pids\":null}", -1, 0 },
  };
  for (size_t i = 0; i < sizeof v / sizeof *v; i++)
    {
      struct oci_node n;
      hk_err err = { 0 };
      int r = oci_node_parse (v[i].json, strlen (v[i].json), "node.json", &n, &err);
      ok (r == 0 && n.default_memory == v[i].memory && n.default_pids == v[i].pids, "defaults: %s %s",
          v[i].json, r ? err.msg : "");
    }
}

static void
test_parse (void)
{
  static const struct
  {
    const char *json;
    bool pool;
    uint64_t bytes;
    double over;
    bool req;
  } good[] = {
    { "{}", false, 0, 1, false },
    { "{\"memory_pool\":268435456}", true, 256 * MiB, 1, false },
    { "{\"memory_pool\":\"256M\",\"overcommit\":1.5}", true, 256 * MiB, 1.5, false },
    { "{\"memory_pool\":\"2g\",\"overcommit\":2,\"require_memory_limit\":true}", true, 2048 * MiB, 2, true },
    { "{\"require_memory_limit\":true,\"overcommit\":null}", false, 0, 1, true },
  };
  for (size_t i = 0; i < sizeof good / sizeof *good; i++)
    {
      struct oci_node n;
      hk_err err = { 0 };
      int r = oci_node_parse (good[i].json, strlen (good[i].json), "node.json", &n, &err);
      ok (r == 0 && n.has_memory_pool == good[i].pool && n.memory_pool == good[i].bytes
              && n.overcommit == good[i].over && n.require_memory_limit == good[i].req,
          "parses %s %s", good[i].json, r ? err.msg : "");
    }
  static const struct
  {
    const char *json, *msg;
  } bad[] = {
    { "{\"memory_pool\":\"lots\"}", "node.json: .memory_pool: \"lots\" is not a size" },
    { "{\"memory_pool\":-1}", ".memory_pool" },
    { "{\"memory_pool\":0}", ".memory_pool: must be more than 0" },
    { "{\"overcommit\":0}", ".overcommit" },
    { "{\"overcommit\":\"2\"}", ".overcommit: must be a number" },
    { "{\"require_memory_limit\":1}", ".require_memory_limit" },
    { "{\"memory_pol\":1}", ".memory_pol: unknown field" },
    { "{\"default_memory\":0}", ".default_memory: must be more than 0 (or -1: no limit)" },
    { "{\"default_memory\":-2}", ".default_memory" },
    { "{\"default_memory\":\"big\"}", ".default_memory: \"big\" is not a size" },
    { "{\"default_pids\":0}", ".default_pids: must be a number of tasks above 0 (or -1: no limit)" },
    { "{\"default_pids\":\"64\"}", ".default_pids" },
    { "{\"default_disk\":\"8m\"}", ".default_disk: must be a size of at least 16M" },
    { "{\"default_disk\":\"big\"}", ".default_disk: must be a size" },
    { "{\"default_disk\":-2}", ".default_disk: must be a size" },
    { "[]", "node.json: must be a JSON object" },
    { "{", "node.json: invalid JSON" },
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
    {
      struct oci_node n;
      hk_err err = { 0 };
      ok (oci_node_parse (bad[i].json, strlen (bad[i].json), "node.json", &n, &err) < 0
              && strstr (err.msg, bad[i].msg),
          "refuses %s: %s", bad[i].json, err.msg);
    }
}

static void
test_default_disk (void)
{
  struct oci_node n;
  hk_err err = { 0 };
  const char *a = "{\"default_disk\":\"10g\"}", *b = "{\"default_disk\":33554432}";
  ok (oci_node_parse (a, strlen (a), "node.json", &n, &err) == 0 && n.default_disk == 10ull << 30,
      "default_disk \"10g\" %s", err.msg);
  ok (oci_node_parse (b, strlen (b), "node.json", &n, &err) == 0 && n.default_disk == 32 * MiB,
      "default_disk in bytes %s", err.msg);
  ok (oci_node_parse ("{}", 2, "node.json", &n, &err) == 0 && !n.has_default_disk
          && oci_node_default_disk (&n) == HAKO_DISK_DEFAULT
          && oci_node_default_disk (NULL) == HAKO_DISK_DEFAULT,
      "no default_disk: hako's default, 10 GiB");
  const char *c = "{\"default_disk\":\"none\"}", *d = "{\"default_disk\":-1}";
  ok (oci_node_parse (c, strlen (c), "node.json", &n, &err) == 0 && oci_node_default_disk (&n) == 0,
      "default_disk \"none\": no default limit %s", err.msg);
  ok (oci_node_parse (d, strlen (d), "node.json", &n, &err) == 0 && oci_node_default_disk (&n) == 0,
      "default_disk -1: no default limit %s", err.msg);
}

static void
test_check (void)
{
  struct oci_node n = { .has_memory_pool = true, .memory_pool = 256 * MiB, .overcommit = 1 };
  hk_err err = { 0 };
  ok (admission_check (&n, 0, 128 * MiB, true, &err) == 0, "128 MiB of an empty 256 MiB pool");
  ok (admission_check (&n, 128 * MiB, 128 * MiB, true, &err) == 0, "exactly filling the pool");
  ok (admission_check (&n, 256 * MiB, 128 * MiB, true, &err) < 0 && err.errnum == EBUSY
          && strstr (err.msg, "requested 134217728 (128 MiB)")
          && strstr (err.msg, "reserved by live sandboxes 268435456")
          && strstr (err.msg, "pool 268435456 (256 MiB) x overcommit 1 = 268435456"),
      "past it, refused with the numbers: %s", err.msg);
  ok (err.n_nums == 3 && strcmp (err.num_keys[0], "requested") == 0 && err.nums[0] == 128 * MiB
          && strcmp (err.num_keys[1], "reserved") == 0 && err.nums[1] == 256 * MiB
          && strcmp (err.num_keys[2], "capacity") == 0 && err.nums[2] == 256 * MiB,
      "  and the numbers as numbers, for --log-format json");
  ok (admission_check (&n, 0, 0, false, &err) == 0, "no limit reserves nothing");
  n.overcommit = 1.5;
  ok (admission_check (&n, 256 * MiB, 128 * MiB, true, &err) == 0, "overcommit 1.5: 384 MiB fit");
  ok (admission_check (&n, 384 * MiB, 1, true, &err) < 0, "  but not a byte more");
  n.require_memory_limit = true;
  ok (admission_check (&n, 0, 0, false, &err) < 0 && strstr (err.msg, "requires a memory limit"),
      "require_memory_limit refuses a sandbox without one: %s", err.msg);
  struct oci_node only_req = { .overcommit = 1, .require_memory_limit = true };
  ok (admission_check (&only_req, UINT64_MAX / 2, 1 * MiB, true, &err) == 0, "no pool: any limit will do");
}

/* A sandbox directory with a reservation and a state of the given status;
 * status NULL: no state.json (a create in progress, or a dead one). */
static void
fake_sandbox (const char *root, const char *id, const char *reservation, const char *status, pid_t pid)
{
  hk_err err;
  char *dir = xasprintf ("%s/%s", root, id);
  mkdir (dir, 0700);
  char *path = xasprintf ("%s/reservation", dir);
  if (reservation)
    file_write_atomic (path, reservation, strlen (reservation), 0600, &err);
  free (path);
  if (status)
    {
      uint64_t start = 0;
      char st;
      pid_stat (pid, &start, &st);
      char *json = xasprintf ("{\"ociVersion\":\"1.2.0\",\"id\":\"%s\",\"status\":\"%s\",\"pid\":%d,"
                              "\"pidStartTime\":%llu,\"bundle\":\"/b\"}",
                              id, status, (int)pid, (unsigned long long)start);
      path = xasprintf ("%s/state.json", dir);
      file_write_atomic (path, json, strlen (json), 0600, &err);
      free (path);
      free (json);
    }
  free (dir);
}

static void
test_sum (const char *tmp)
{
  hk_err err = { 0 };
  struct store st = { .root = xasprintf ("%s/state", tmp), .data_root = xasprintf ("%s/data", tmp) };
  mkdir (st.root, 0700);
  pid_t me = getpid ();
  fake_sandbox (st.root, "running", "100", "running", me);
  fake_sandbox (st.root, "paused", "20", "paused", me);
  fake_sandbox (st.root, "created", "3", "created", me);
  fake_sandbox (st.root, "stopped", "4000", "stopped", me);
  fake_sandbox (st.root, "dead", "50000", "running", 4194400); /* no such pid: reads as stopped */
  fake_sandbox (st.root, "nolimit", NULL, "running", me);
  fake_sandbox (st.root, "crashed", "600000", NULL, 0);   /* no state, lock free */
  fake_sandbox (st.root, "creating", "7000000", NULL, 0); /* no state, lock held */
  char *lock = xasprintf ("%s/creating/lock", st.root);
  int fd = open (lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  flock (fd, LOCK_EX);
  uint64_t sum = 0;
  ok (admission_reserved (&st, NULL, &sum, &err) == 0 && sum == 7000123,
      "live sandboxes count (running, paused, created, being created), stopped and dead ones do not: %llu",
      (unsigned long long)sum);
  ok (admission_reserved (&st, "running", &sum, &err) == 0 && sum == 7000023,
      "  and the one asking is left out");
  close (fd);
  ok (admission_reserved (&st, NULL, &sum, &err) == 0 && sum == 123,
      "a create that died (its lock free, no state) counts for nothing");
  /* Through admission_reserve, with a node config. */
  char *node = xasprintf ("%s/node.json", tmp);
  const char *text = "{\"memory_pool\":\"200\",\"overcommit\":1}";
  file_write_atomic (node, text, strlen (text), 0600, &err);
  admission_set_config (node);
  struct oci_spec spec = { 0 };
  spec.linux.resources.has_memory_limit = true;
  spec.linux.resources.memory_limit = 77;
  fake_sandbox (st.root, "new", NULL, NULL, 0);
  ok (admission_reserve (&st, "new", &spec, &err) == 0, "77 more fit in 200 with 123 reserved: %s", err.msg);
  char *rec = xasprintf ("%s/new/reservation", st.root), *got = NULL;
  ok (file_read_all (rec, 64, &got, NULL, &err) == 0 && strcmp (got, "77\n") == 0, "  and are recorded");
  free (got);
  fake_sandbox (st.root, "new", NULL, "created", me);
  fake_sandbox (st.root, "new2", NULL, NULL, 0);
  spec.linux.resources.memory_limit = 1;
  ok (admission_reserve (&st, "new2", &spec, &err) < 0 && err.errnum == EBUSY,
      "  then a byte more is refused");
  spec.linux.resources.memory_limit = 70;
  ok (admission_reserve (&st, "new", &spec, &err) == 0, "a sandbox's own record is replaced, not added to");
  admission_set_config ("/nonexistent/node.json");
  ok (admission_reserve (&st, "new2", &spec, &err) < 0 && strstr (err.msg, "/nonexistent/node.json"),
      "a node config named explicitly must exist: %s", err.msg);
  admission_set_config (NULL);
  free (rec);
  free (node);
  free (lock);
  free (st.root);
  free (st.data_root);
}

int
main (void)
{
  char tmpl[] = "/tmp/hako-unit-admission.XXXXXX";
  char *tmp = mkdtemp (tmpl);
  unsetenv ("HAKO_NODE_CONFIG");
  test_parse ();
  test_parse_defaults ();
  test_default_disk ();
  test_check ();
  test_sum (tmp);
  hk_err err;
  rm_rf (tmp, &err);
  return tap_done ();
}
