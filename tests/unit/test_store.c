/* Unit tests for runtime/store: id validation, create/open/lock, state I/O, list. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/util.h"
#include "runtime/store.h"
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

int
main (void)
{
  char tmpl[] = "/tmp/hako-unit-store.XXXXXX";
  char *dir = mkdtemp (tmpl);
  test_ids ();
  test_lifecycle (dir);
  test_concurrent_create (dir);
  hk_err err;
  rm_rf (dir, &err);
  return tap_done ();
}
