/* test_userdb: users and groups from a sandbox's /etc/passwd and /etc/group,
 * by name and number, and never through a symlink out of its root. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/util.h"
#include "runtime/confine/userdb.h"
#include "tests/unit/tap.h"

static const char passwd[] = "root:x:0:0:root:/root:/bin/sh\n"
                             "+nis::::::\n"
                             "broken line\n"
                             "bad:x:abc:1::/:/bin/sh\n"
                             "nobody:x:65534:65534:nobody:/nonexistent:/bin/false\n"
                             "alice:x:1000:1000::/home/alice:/bin/sh"; /* no final newline */

static const char group[] = "root:x:0:\n"
                            "wheel:x:10:alice,bob\n"
                            "staff:x:50:bob,alice\n"
                            "alice:x:1000:\n"
                            "nogroup:x:65534:\n";

static void
test_parsers (void)
{
  struct userdb_pw pw;
  ok (userdb_find_pw (passwd, "nobody", 0, &pw) == 1 && pw.uid == 65534 && pw.gid == 65534, "a user by name");
  is_str (pw.home, "/nonexistent", "with its home");
  userdb_pw_free (&pw);
  ok (userdb_find_pw (passwd, NULL, 1000, &pw) == 1, "a user by number, on the last line");
  is_str (pw.name, "alice", "with its name");
  userdb_pw_free (&pw);
  ok (userdb_find_pw (passwd, "bad", 0, &pw) == 0, "a line with a bad uid is skipped");
  ok (userdb_find_pw (passwd, "+nis", 0, &pw) == 0, "NIS compat lines name nobody");
  ok (userdb_find_pw (passwd, "root:x", 0, &pw) == 0, "a name never matches across fields");
  gid_t gid = 0;
  ok (userdb_find_group (group, "staff", 0, &gid) == 1 && gid == 50, "a group by name");
  gid_t *groups = NULL;
  size_t n = userdb_member_groups (group, "alice", &groups);
  ok (n == 2 && groups[0] == 10 && groups[1] == 50, "alice is in wheel and staff");
  free (groups);
  n = userdb_member_groups (group, "root", &groups);
  ok (n == 0, "root is in no group's member list");
  free (groups);
}

/* A fake sandbox root under dir, whose /etc/passwd links to an absolute path. */
static int
make_root (const char *dir)
{
  char path[4096];
  snprintf (path, sizeof path, "%s/etc", dir);
  mkdir (dir, 0755);
  mkdir (path, 0755);
  snprintf (path, sizeof path, "%s/real", dir);
  mkdir (path, 0755);
  snprintf (path, sizeof path, "%s/real/passwd", dir);
  FILE *f = fopen (path, "w");
  fputs ("inside:x:4242:4343::/in:/bin/sh\n", f);
  fclose (f);
  snprintf (path, sizeof path, "%s/etc/passwd", dir);
  /* Absolute: resolved in the sandbox's root it is <root>/real/passwd; on
   * the host it would be /real/passwd, which does not exist. */
  if (symlink ("/real/passwd", path) < 0)
    return -1;
  snprintf (path, sizeof path, "%s/real/group", dir);
  f = fopen (path, "w");
  fputs ("wheel:x:10:inside\nin:x:4343:\n", f);
  fclose (f);
  snprintf (path, sizeof path, "%s/etc/group", dir);
  /* ".." stops at the sandbox's root, as it does at /. */
  if (symlink ("../../../../../../real/group", path) < 0)
    return -1;
  return open (dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
}

static void
test_resolve (void)
{
  char dir[] = "/tmp/hako-userdb.XXXXXX";
  if (mkdtemp (dir) == NULL)
    {
      skip ("mkdtemp failed", "userdb_resolve");
      return;
    }
  cleanup_free char *root = xasprintf ("%s/root", dir);
  int fd = make_root (root);
  struct userdb_user u;
  hk_err err = { 0 };
  ok (fd >= 0 && userdb_resolve (fd, "inside", 7, &u, &err) == 0 && u.uid == 4242 && u.gid == 4343,
      "an absolute symlink is resolved inside the root");
  is_str (u.home, "/in", "home from the sandbox's passwd");
  userdb_user_free (&u);
  ok (userdb_resolve (fd, "root", 7, &u, &err) < 0 && strstr (err.msg, "no such user"),
      "the host's users are not the sandbox's");
  ok (userdb_resolve (fd, "1234", 7, &u, &err) == 0 && u.uid == 1234 && u.gid == 7 && !u.home,
      "an unknown number keeps the default gid");
  userdb_user_free (&u);
  ok (userdb_resolve (fd, "4242:99", 7, &u, &err) == 0 && u.uid == 4242 && u.gid == 99,
      "UID:GID by numbers, the group overriding passwd's");
  userdb_user_free (&u);
  ok (userdb_resolve (fd, "inside:wheel", 7, &u, &err) == 0 && u.gid == 10,
      "a group by name, through a symlink with .. that stays inside");
  ok (u.n_groups == 1 && u.groups[0] == 10, "supplementary groups from the member lists");
  userdb_user_free (&u);
  ok (userdb_resolve (fd, "inside:root", 7, &u, &err) < 0 && strstr (err.msg, "no such group"),
      "a group the sandbox does not have is an error");
  ok (userdb_resolve (fd, ":5", 7, &u, &err) < 0 && strstr (err.msg, "USER[:GROUP]"),
      "an empty user is a usage error");
  close (fd);
  cleanup_free char *cmd = xasprintf ("rm -rf %s", dir);
  if (system (cmd) != 0)
    printf ("# could not remove %s\n", dir);
}

int
main (void)
{
  test_parsers ();
  test_resolve ();
  return tap_done ();
}
