/* test_criu: criu's reason is read out of its output; dump and restore get
 * runc's flags in criu's spelling; the cached verdict of a stand-in criu. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/util.h"
#include "oci/spec.h"
#include "runtime/save/criu.h"
#include "tests/unit/tap.h"

static char *
joined (char *const *v)
{
  size_t len = 1;
  for (size_t i = 0; v[i]; i++)
    len += strlen (v[i]) + 1;
  char *s = xcalloc (len, 1);
  for (size_t i = 0; v[i]; i++)
    {
      if (i)
        strcat (s, " ");
      strcat (s, v[i]);
    }
  return s;
}

static void
test_reason (void)
{
  const char *out = "Error (criu/vdso.c:381): vdso: Unexpected rt vDSO area bounds\n"
                    "Error (criu/vdso.c:613): vdso: Failed to fill self vdso symtable\n"
                    "Warn  (criu/kerndat.c:1): something\n";
  cleanup_free char *r = criu_reason (out);
  is_str (r, "vdso: Unexpected rt vDSO area bounds; vdso: Failed to fill self vdso symtable",
          "criu's Error lines, their source positions stripped, joined");
  cleanup_free char *r2 = criu_reason ("Looks good but some kernel features are missing\n");
  is_str (r2, "Looks good but some kernel features are missing", "no Error line: the last line");
  cleanup_free char *r3 = criu_reason ("");
  ok (strstr (r3, "without saying why") != NULL, "nothing said: says so");
}

static void
test_argv (void)
{
  char *const mounts[] = { (char *)"/data", (char *)"/etc/resolv.conf", NULL };
  char *const sources[] = { (char *)"/srv/data", (char *)"/run/resolv.conf", NULL };
  struct criu_opts o = { .image_path = "/ck",
                         .leave_running = true,
                         .tcp_established = true,
                         .file_locks = true,
                         .manage_cgroups_mode = "full" };
  struct criu_target t = { .pid = 42, .freezer = "/sys/fs/cgroup/freezer/hako/x", .mounts = mounts };
  char **a = criu_dump_argv ("/usr/sbin/criu", &o, &t);
  cleanup_free char *s = joined (a);
  is_str (s,
          "/usr/sbin/criu dump --tree 42 --images-dir /ck --work-dir /ck --log-file dump.log -v4 "
          "--tcp-established --file-locks --manage-cgroups=full "
          "--external mnt[/data]:/data --external mnt[/etc/resolv.conf]:/etc/resolv.conf "
          "--freeze-cgroup /sys/fs/cgroup/freezer/hako/x --leave-running",
          "dump: the tree, images, runc's flags, bind mounts external, the freezer");
  strv_free (a);
  struct criu_opts r = { .image_path = "/ck", .work_path = "/w" };
  struct criu_target rt = { .root = "/run/hako/x/rootfs",
                            .pidfile = "/run/hako/x/criu.pid",
                            .mounts = mounts,
                            .sources = sources,
                            .cgroup_root = "/hako/x" };
  a = criu_restore_argv ("criu", &r, &rt);
  cleanup_free char *s2 = joined (a);
  is_str (s2,
          "criu restore --images-dir /ck --work-dir /w --log-file restore.log -v4 "
          "--manage-cgroups=soft --external mnt[/data]:/srv/data "
          "--external mnt[/etc/resolv.conf]:/run/resolv.conf --root /run/hako/x/rootfs "
          "--restore-detached --pidfile /run/hako/x/criu.pid --cgroup-root /hako/x",
          "restore: external mounts mapped to their sources, detached, the root, soft cgroups");
  strv_free (a);
  ok (criu_cgroups_mode_valid ("strict") && !criu_cgroups_mode_valid ("hard"),
      "cgroups modes: criu's four only");
}

/* A stand-in criu: `check` fails (or passes) and counts its runs. */
static void
test_probe_cache (void)
{
  char dir[] = "/tmp/test_criu.XXXXXX";
  if (mkdtemp (dir) == NULL)
    {
      skip ("no temp dir", "probe and cache");
      return;
    }
  cleanup_free char *bin = xasprintf ("%s/criu", dir);
  cleanup_free char *count = xasprintf ("%s/count", dir);
  cleanup_free char *cache = xasprintf ("%s/cache", dir);
  FILE *f = fopen (bin, "w");
  fprintf (f,
           "#!/bin/sh\n[ \"$1\" = --version ] && { echo 'Version: 9.9'; exit 0; }\n"
           "echo x >> %s\necho 'Error (criu/x.c:1): x: no such feature' >&2\nexit 1\n",
           count);
  fclose (f);
  chmod (bin, 0755);
  setenv ("HAKO_CRIU", bin, 1);
  struct criu_verdict v;
  criu_probe (cache, &v);
  ok (!v.works, "a failing criu check: does not work");
  is_str (v.reason, "x: no such feature", "its reason");
  is_str (v.version, "9.9", "its version");
  criu_verdict_free (&v);
  criu_probe (cache, &v);
  is_str (v.reason, "x: no such feature", "the cached verdict keeps the reason");
  criu_verdict_free (&v);
  struct stat sb;
  ok (stat (count, &sb) == 0 && sb.st_size == 2, "criu check ran once: the second verdict was cached");
  /* A new binary (another size) decides anew. */
  f = fopen (bin, "w");
  fprintf (f, "#!/bin/sh\nexit 0\n");
  fclose (f);
  criu_probe (cache, &v);
  ok (v.works && v.reason == NULL, "a changed criu is checked again, and passes");
  criu_verdict_free (&v);
  setenv ("HAKO_CRIU", "/nonexistent/criu", 1);
  criu_probe (NULL, &v);
  ok (!v.works && strstr (v.reason, "not installed"), "no criu: not installed, said so");
  criu_verdict_free (&v);
  unsetenv ("HAKO_CRIU");
  hk_err err;
  rm_rf (dir, &err);
}

int
main (void)
{
  test_reason ();
  test_argv ();
  test_probe_cache ();
  return tap_done ();
}
