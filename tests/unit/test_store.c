/* Unit tests for runtime/state/store: id validation, create/open/lock, state I/O, list. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/util.h"
#include "runtime/state/store.h"
#include "tests/unit/tap.h"

static void
test_ids (void)
{
  const char *good[] = { "a", "box1", "A.b-c_d", "0", NULL };
  const char *bad[] = { "", "../x", ".hidden", "-x", "_x", "a/b", "a b", "x\n", "é", "..", NULL };
  for (int i = 0; good[i]; i++)
    ok (store_id_valid (good[i]), "id \"%s\" accepted", good[i]);
  for (int i = 0; bad[i]; i++)
    ok (!store_id_valid (bad[i]), "bad id #%d refused", i);
  char long_id[66];
  memset (long_id, 'a', 64);
  long_id[64] = '\0';
  ok (store_id_valid (long_id), "64 characters accepted");
  long_id[64] = 'a';
  long_id[65] = '\0';
  ok (!store_id_valid (long_id), "65 characters refused");
  ok (!store_id_valid (NULL), "NULL refused");
}

static void
test_lifecycle (const char *dir)
{
  hk_err err = { 0 };
  struct store st;
  char *root = xasprintf ("%s/state", dir);
  ok (store_init (&st, root, dir, &err) == 0, "store_init makes the root");
  struct store_entry e, e2;
  ok (store_create (&st, "../x", &e, &err) < 0 && strstr (err.msg, "invalid sandbox id"),
      "a bad id is refused before any path is built");
  ok (store_create (&st, "box", &e, &err) == 0, "create box");
  ok (store_create (&st, "box", &e2, &err) < 0 && err.errnum == EEXIST && strstr (err.msg, "already exists"),
      "second create of the same id fails with 'already exists'");
  struct oci_state s = { .oci_version = "1.2.0",
                         .id = "box",
                         .status = OCI_STATUS_CREATED,
                         .pid = 42,
                         .pid_start_time = 7,
                         .bundle = "/b" };
  ok (store_write_state (&e, &s, &err) == 0, "write state");
  store_close (&e);
  ok (store_open (&st, "box", true, &e, &err) == 0, "open locked");
  struct oci_state *back = NULL;
  ok (store_read_state (&e, &back, &err) == 0 && back->pid == 42 && back->pid_start_time == 7
          && back->status == OCI_STATUS_CREATED,
      "state round trip");
  if (back)
    oci_state_free (back);

  pid_t child = fork ();
  if (child == 0)
    {
      /* The lock is held by the parent: a non-blocking attempt must not get it. */
      struct store_entry c;
      hk_err e3;
      alarm (2);
      _exit (store_open (&st, "box", true, &c, &e3) == 0 ? 0 : 1);
    }
  int ws;
  waitpid (child, &ws, 0);
  ok (WIFSIGNALED (ws) && WTERMSIG (ws) == SIGALRM, "a second verb waits on the sandbox's lock");

  char **ids = NULL;
  ok (store_list (&st, &ids, &err) == 0 && ids[0] && strcmp (ids[0], "box") == 0 && ids[1] == NULL,
      "list shows box");
  for (size_t i = 0; ids && ids[i]; i++)
    free (ids[i]);
  free (ids);
  ok (store_remove (&e, &err) == 0, "remove");
  store_close (&e);
  ok (store_open (&st, "box", true, &e, &err) < 0 && strstr (err.msg, "does not exist"),
      "a removed sandbox does not exist");
  ok (store_open (&st, "nope", false, &e, &err) < 0 && err.errnum == ENOENT,
      "unlocked open of a missing id fails too");
  store_fini (&st);
  free (root);
}

static void
test_concurrent_create (const char *dir)
{
  hk_err err;
  struct store st;
  store_init (&st, dir, dir, &err);
  int wins = 0;
  pid_t kids[8];
  for (int i = 0; i < 8; i++)
    if ((kids[i] = fork ()) == 0)
      {
        struct store_entry e;
        hk_err e2;
        _exit (store_create (&st, "race", &e, &e2) == 0 ? 0 : 1);
      }
  for (int i = 0; i < 8; i++)
    {
      int ws;
      waitpid (kids[i], &ws, 0);
      wins += WIFEXITED (ws) && WEXITSTATUS (ws) == 0;
    }
  ok (wins == 1, "8 concurrent creates of one id: exactly one wins (%d)", wins);
  store_fini (&st);
}

/* store_userns_root: uid 0 of a user namespace that cannot make
 * RUN/hako (rootless podman's) takes an ordinary user's defaults, named by
 * the uid its 0 maps to; real root and a namespace root that may write
 * RUN keep /run/hako. */
static void
test_userns_root (const char *dir)
{
  char *map = xasprintf ("%s/uid_map", dir);
  char *missing = xasprintf ("%s/no-run", dir);
  hk_err err;
  struct
  {
    const char *text;
    const char *run;
    int want;
    unsigned uid;
    const char *what;
  } cases[] = {
    { "         0          0 4294967295\n", missing, 0, 0, "the initial namespace: real root" },
    { "         0       1001          1\n", dir, 0, 0,
      "a namespace's root that may write the run dir keeps it" },
    { "         0       1001          1\n         1  300000000      65536\n", missing, 1, 1001,
      "podman's map, the run dir not writable: the user's defaults, uid 1001" },
    { "         1       1001          1\n", missing, 0, 0, "uid 0 not mapped: not a namespace's root" },
    { "         0          0      65536\n", missing, 1, 0,
      "0 maps to 0, but not the whole range: not initial" },
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
    {
      unsigned uid = 4242;
      ok (file_write_new (map, cases[i].text, strlen (cases[i].text), 0600, &err) == 0, "write map %zu", i);
      int r = store_userns_root (map, cases[i].run, &uid);
      ok (r == cases[i].want && (r == 0 || uid == cases[i].uid), "%s (%d, uid %u)", cases[i].what, r, uid);
      unlink (map);
    }
  unsigned uid = 4242;
  ok (store_userns_root (missing, missing, &uid) == 0 && uid == 4242,
      "no uid_map to read: real root's defaults");
  free (map);
  free (missing);
}

int
main (void)
{
  char tmpl[] = "/tmp/hako-unit-store.XXXXXX";
  char *dir = mkdtemp (tmpl);
  test_ids ();
  test_lifecycle (dir);
  test_concurrent_create (dir);
  test_userns_root (dir);
  hk_err err;
  rm_rf (dir, &err);
  return tap_done ();
}
