/* test_idmap: when the id maps need newuidmap/newgidmap, (as root) a user
 * namespace held by an fd with the maps it was given, id translation, and
 * the up-front check that the sandbox's root can reach a path. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/util.h"
#include "oci/spec.h"
#include "runtime/build/idmap.h"
#include "tests/unit/helpers.h"
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

static const char userns_spec[]
    = "{\"ociVersion\":\"1.2.0\",\"process\":{\"args\":[\"sh\"],\"cwd\":\"/"
      "\",\"user\":{\"uid\":0,\"gid\":0}},"
      "\"root\":{\"path\":\"rootfs\"},\"linux\":{\"namespaces\":[{\"type\":\"mount\"},{\"type\":\"user\"}],"
      "\"uidMappings\":[{\"containerID\":0,\"hostID\":1000000000,\"size\":65536}],"
      "\"gidMappings\":[{\"containerID\":0,\"hostID\":1000000000,\"size\":65536}]}}";

static void
test_translate (void)
{
  const struct oci_idmap m[] = { { 0, 1000, 1 }, { 1, 100000, 65536 } };
  uint32_t h = 0;
  ok (idmap_to_host (m, 2, 0, &h) && h == 1000, "sandbox 0 is host 1000");
  ok (idmap_to_host (m, 2, 1, &h) && h == 100000, "sandbox 1 is the start of the second range");
  ok (idmap_to_host (m, 2, 65536, &h) && h == 165535, "the last id of the second range");
  ok (!idmap_to_host (m, 2, 65537, &h), "past the ranges: not mapped");
  ok (idmap_has_host (m, 2, 1000) && idmap_has_host (m, 2, 165535), "mapped host ids are found");
  ok (!idmap_has_host (m, 2, 0) && !idmap_has_host (m, 2, 165536), "host root and beyond are not");
  const struct oci_idmap wrap[] = { { 4294967000u, 10, 1000 } };
  ok (!idmap_to_host (wrap, 1, 5, &h), "no wrap-around below a range's start");
}

static void
test_reachable (void)
{
  struct oci_spec *s = spec_json (userns_spec);
  char tmpl[] = "/tmp/hako-idmap.XXXXXX";
  char *top = mkdtemp (tmpl);
  ok (s && top, "setup");
  if (!s || !top)
    return;
  cleanup_free char *mid = xasprintf ("%s/mid", top);
  cleanup_free char *leaf = xasprintf ("%s/mid/rootfs", top);
  mkdir (mid, 0755);
  mkdir (leaf, 0755);
  hk_err err = { 0 };
  chmod (top, 0711);
  ok (idmap_check_reachable (s, leaf, &err) == 0, "o+x all the way: reachable");
  chmod (top, 0700);
  ok (idmap_check_reachable (s, leaf, &err) < 0 && err.errnum == EACCES, "a 0700 parent stops it");
  ok (strstr (err.msg, top) && strstr (err.msg, "1000000000") && strstr (err.msg, "chmod o+x"),
      "the message names the directory, the host uid and the fix: %s", err.msg);
  /* Owned by ids mapped into the namespace: its root's capabilities apply. */
  if (chown (top, 1000000005, 1000000005) == 0)
    ok (idmap_check_reachable (s, leaf, &err) == 0, "owned by mapped ids: reachable at 0700");
  if (chown (top, 1000000000, 0) == 0)
    ok (idmap_check_reachable (s, leaf, &err) == 0, "owned by the sandbox's root, u+x: reachable");
  chmod (top, 0070);
  if (chown (top, 0, 1000000000) == 0)
    ok (idmap_check_reachable (s, leaf, &err) == 0, "group is the sandbox's root's, g+x: reachable");
  /* No user namespace: nothing to check. */
  struct oci_spec *plain
      = spec_json ("{\"ociVersion\":\"1.2.0\",\"process\":{\"args\":[\"sh\"],\"cwd\":\"/\","
                   "\"user\":{\"uid\":0,\"gid\":0}},\"root\":{\"path\":\"r\"},"
                   "\"linux\":{\"namespaces\":[{\"type\":\"mount\"}]}}");
  chmod (top, 0700);
  ok (plain && idmap_check_reachable (plain, leaf, &err) == 0, "without a user namespace: no check");
  rmdir (leaf);
  rmdir (mid);
  rmdir (top);
  oci_spec_free (plain);
  oci_spec_free (s);
}

int
main (void)
{
  test_needs_helper ();
  test_userns_open ();
  test_translate ();
  test_reachable ();
  return tap_done ();
}
