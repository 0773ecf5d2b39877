/* test_idmap: when the id maps need newuidmap/newgidmap, and (as root) a
 * user namespace held by an fd, with the maps it was given. */
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/util.h"
#include "runtime/idmap.h"
#include "tests/unit/tap.h"

static void
test_needs_helper (void)
{
  struct oci_idmap own = { 0, 1000, 1 };
  struct oci_idmap other = { 0, 1001, 1 };
  struct oci_idmap wide = { 0, 1000, 2 };
  struct oci_idmap two[] = { { 0, 1000, 1 }, { 1, 200000, 65536 } };
  ok (!idmap_needs_helper (&own, 1, 1000, false), "the caller's own id, alone: written directly");
  ok (idmap_needs_helper (&other, 1, 1000, false), "another id: newuidmap");
  ok (idmap_needs_helper (&wide, 1, 1000, false), "more than one id: newuidmap");
  ok (idmap_needs_helper (two, 2, 1000, false), "two ranges (podman's layout): newuidmap");
  ok (!idmap_needs_helper (two, 2, 1000, true), "as root: always written directly");
}

/* The maps of the namespace behind fd, as a child that joins it reads them. */
static void
read_maps (int fd, char *buf, size_t size)
{
  int p[2];
  buf[0] = '\0';
  if (pipe (p) < 0)
    return;
  pid_t pid = fork ();
  if (pid == 0)
    {
      close (p[0]);
      if (setns (fd, CLONE_NEWUSER) < 0)
        _exit (1);
      cleanup_free char *text = NULL;
      hk_err err;
      if (file_read_all ("/proc/self/uid_map", 4096, &text, NULL, &err) == 0)
        (void)!write (p[1], text, strlen (text));
      _exit (0);
    }
  close (p[1]);
  ssize_t n = read (p[0], buf, size - 1);
  buf[n > 0 ? n : 0] = '\0';
  close (p[0]);
  waitpid (pid, NULL, 0);
}

static void
test_userns_open (void)
{
  if (geteuid () != 0)
    {
      printf ("ok %d - # SKIP a user namespace with maps from outside needs root\n", ++tap_n);
      return;
    }
  struct oci_idmap m = { 0, 1000000000, 65536 };
  hk_err err = { 0 };
  int fd = idmap_userns_open (&m, 1, &m, 1, &err);
  ok (fd >= 0, "a user namespace held by an fd (%s)", fd < 0 ? err.msg : "ok");
  if (fd < 0)
    return;
  char maps[256];
  read_maps (fd, maps, sizeof maps);
  unsigned a = 0, b = 0, c = 0;
  ok (sscanf (maps, "%u %u %u", &a, &b, &c) == 3 && a == 0 && b == 1000000000 && c == 65536,
      "with the maps given (%s)", maps);
  close (fd);
}

int
main (void)
{
  test_needs_helper ();
  test_userns_open ();
  return tap_done ();
}
