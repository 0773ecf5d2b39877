/* test_cgroup: the cgroup backends against fake cgroupfs trees in a temp dir
 * (this host has no writable cgroup v2 controllers): probing, paths,
 * refusals, limits as written, the record, freezing, killing, removal, and
 * the v1 device rules. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/util.h"
#include "oci/knobs.h"
#include "oci/resources.h"
#include "oci/spec.h"
#include "runtime/cgroup/cgroup.h"
#include "runtime/cgroup/cgroup_internal.h"
#include "tests/unit/helpers.h"
#include "tests/unit/tap.h"

/* A pid no process has (pid_max is at most 2^22): kills sent to it go nowhere. */
#define NO_PID 4194400

static char *tmp;

static void
put (const char *dir, const char *file, const char *text)
{
  char *path = xasprintf ("%s/%s", dir, file);
  hk_err err;
  unlink (path);
  if (file_write_new (path, text, strlen (text), 0644, &err) < 0)
    {
      printf ("# %s\n", err.msg);
      abort ();
    }
  free (path);
}

/* The file's text, without a trailing newline; "" when missing. */
static char *
get (const char *dir, const char *file)
{
  static char buf[4096];
  hk_err err;
  if (cg_read (dir, file, buf, sizeof buf, &err) < 0)
    buf[0] = '\0';
  return buf;
}

static struct oci_spec *
spec_of (const char *linux_json, const char *extra)
{
  char *json = xasprintf ("{\"ociVersion\":\"1.2.0\",\"root\":{\"path\":\"rootfs\"},\"process\":{\"args\":["
                          "\"sh\"],\"cwd\":\"/\"%s},"
                          "\"linux\":%s}",
                          extra ? extra : "", linux_json);
  struct oci_spec *spec = spec_json (json);
  if (spec == NULL)
    abort (); /* a bad test spec: spec_json said why */
  free (json);
  return spec;
}

/* A fresh cgroup2 tree: a root offering every controller hako knows. */
static char *
fake_v2 (const char *name)
{
  char *root = xasprintf ("%s/%s", tmp, name);
  mkdir (root, 0755);
  put (root, "cgroup.controllers", "cpuset cpu io memory hugetlb pids rdma\n");
  put (root, "cgroup.subtree_control", "");
  return root;
}

/* After mkdir, the files the kernel would show in a sandbox's v2 cgroup. */
static void
populate_v2_leaf (const char *dir)
{
  static const char *const files[]
      = { "memory.max",  "memory.low",   "memory.swap.max", "pids.max",    "cpu.weight",
          "cpu.max",     "cpuset.cpus",  "cpuset.mems",     "io.weight",   "hugetlb.2MB.max",
          "memory.high", "cgroup.procs", "cgroup.freeze",   "cgroup.kill", "io.max" };
  for (size_t i = 0; i < sizeof files / sizeof *files; i++)
    put (dir, files[i], "");
  put (dir, "cgroup.events", "populated 0\nfrozen 0\n");
}

static void
test_probe (void)
{
  hk_err err;
  struct cg_host h;
  char *root = fake_v2 ("probe2");
  ok (cg_host_probe (root, CG_UNIFIED, "0::/user.slice/s1\n", &h, &err) == 0, "probe a fake v2 tree");
  ok (h.layout == CG_UNIFIED && h.n_hier == 1 && h.hier[0].v2, "v2: one hierarchy");
  ok (h.n_hier == 1 && h.hier[0].ctls == (CG_CPUSET | CG_CPU | CG_BLKIO | CG_MEMORY | CG_HUGETLB | CG_PIDS),
      "v2: controllers from cgroup.controllers (unknown ones ignored)");
  is_str (h.n_hier ? h.hier[0].self : NULL, "/user.slice/s1", "v2: own cgroup from the 0:: line");
  cg_host_free (&h);
  free (root);

  /* Hybrid: v1 controller dirs, a named hierarchy, a symlink, and unified. */
  root = xasprintf ("%s/probe1", tmp);
  mkdir (root, 0755);
  static const char *const dirs[] = { "memory", "cpu,cpuacct", "freezer", "systemd", "unified" };
  for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++)
    {
      char *d = xasprintf ("%s/%s", root, dirs[i]);
      mkdir (d, 0755);
      free (d);
    }
  char *link = xasprintf ("%s/cpu", root);
  symlink ("cpu,cpuacct", link);
  free (link);
  const char *self = "9:name=systemd:/\n4:memory:/process_api/x\n2:cpu,cpuacct:/\n6:freezer:/\n0::/\n";
  ok (cg_host_probe (root, CG_HYBRID, self, &h, &err) == 0, "probe a fake hybrid tree");
  ok (h.n_hier == 4, "hybrid: cpu,cpuacct + freezer + memory + unified (not systemd, not the symlink): %zu",
      h.n_hier);
  bool seen_cpu = false, seen_mem = false;
  for (size_t i = 0; i < h.n_hier; i++)
    {
      if (strcmp (h.hier[i].name, "cpu,cpuacct") == 0)
        seen_cpu = h.hier[i].ctls == (CG_CPU | CG_CPUACCT) && strcmp (h.hier[i].self, "/") == 0;
      if (strcmp (h.hier[i].name, "memory") == 0)
        seen_mem = h.hier[i].self && strcmp (h.hier[i].self, "/process_api/x") == 0;
    }
  ok (seen_cpu, "hybrid: a co-mounted hierarchy carries both controllers");
  ok (seen_mem, "hybrid: each hierarchy has its own path of hako's cgroup");

  /* What hybrid chooses, and what it refuses. */
  struct cg_sandbox cg;
  struct oci_spec *spec = spec_of ("{\"resources\":{\"memory\":{\"limit\":1048576}}}", NULL);
  ok (cg_prepare (&h, spec, "box", "/run/hako", &cg, &err) == 0, "hybrid: memory limit accepted");
  bool mem_req = false, no_freezer = true, uni_opt = false, cpu_opt = false;
  for (size_t i = 0; i < cg.n; i++)
    {
      char *want = xasprintf ("%s/%s/hako/box", root, cg.dirs[i].hier);
      if (strcmp (cg.dirs[i].path, want) != 0)
        printf ("# path %s, want %s\n", cg.dirs[i].path, want);
      free (want);
      if (strcmp (cg.dirs[i].hier, "memory") == 0)
        mem_req = cg.dirs[i].required;
      if (strcmp (cg.dirs[i].hier, "freezer") == 0)
        no_freezer = false; /* hybrid: the cgroup2 dir freezes */
      if (strcmp (cg.dirs[i].hier, "unified") == 0)
        uni_opt = !cg.dirs[i].required && cg.dirs[i].v2;
      if (strcmp (cg.dirs[i].hier, "cpu,cpuacct") == 0)
        cpu_opt = !cg.dirs[i].required;
    }
  ok (cg.n == 3 && mem_req && no_freezer && uni_opt && cpu_opt,
      "hybrid: memory (required), cpu (optional: for a later update), unified (optional, it "
      "freezes and carries the device filter), no v1 freezer");
  cg_sandbox_free (&cg);
  oci_spec_free (spec);

  spec = spec_of ("{\"resources\":{\"pids\":{\"limit\":64}}}", NULL);
  ok (cg_prepare (&h, spec, "box", "/run/hako", &cg, &err) < 0 && strstr (err.msg, "\"pids\"")
          && strstr (err.msg, "not mounted"),
      "hybrid without a pids hierarchy: a pids limit is refused, naming it: %s", err.msg);
  oci_spec_free (spec);

  spec = spec_of ("{\"resources\":{\"unified\":{\"memory.high\":\"1000\"}}}", NULL);
  ok (cg_prepare (&h, spec, "box", "/run/hako", &cg, &err) < 0 && strstr (err.msg, "memory.high")
          && strstr (err.msg, "cgroup v2"),
      "hybrid: a unified key is refused, naming it: %s", err.msg);
  oci_spec_free (spec);

  spec = spec_of ("{\"cgroupsPath\":\"rel/x\",\"resources\":{\"memory\":{\"limit\":1048576}}}", NULL);
  ok (cg_prepare (&h, spec, "box", "/run/hako", &cg, &err) == 0, "hybrid: relative cgroupsPath");
  char *want = xasprintf ("%s/memory/process_api/x/rel/x", root);
  bool found = false;
  for (size_t i = 0; i < cg.n; i++)
    found |= strcmp (cg.dirs[i].path, want) == 0;
  ok (found, "relative paths are under hako's own cgroup of each hierarchy");
  free (want);
  cg_sandbox_free (&cg);
  oci_spec_free (spec);
  cg_host_free (&h);
  free (root);
}

static void
test_paths (void)
{
  hk_err err;
  struct cg_host h;
  struct cg_sandbox cg;
  char *root = fake_v2 ("paths");
  cg_host_probe (root, CG_UNIFIED, "0::/user.slice/s1\n", &h, &err);
  struct oci_spec *spec = spec_of ("{}", NULL);

  ok (cg_prepare (&h, spec, "box", "/run/hako", &cg, &err) == 0 && cg.n == 1 && cg.shared_parent,
      "default path under the default state root");
  char *want = xasprintf ("%s/hako/box", root);
  is_str (cg.n ? cg.dirs[0].path : NULL, want, "  is ROOT/hako/ID");
  ok (cg.n == 1 && !cg.dirs[0].required, "  optional without limits");
  free (want);
  cg_sandbox_free (&cg);

  ok (cg_prepare (&h, spec, "box", "/tmp/other-root", &cg, &err) == 0, "another state root");
  char *prefix = xasprintf ("%s/hako-", root);
  ok (cg.n == 1 && str_has_prefix (cg.dirs[0].path, prefix) && str_has_suffix (cg.dirs[0].path, "/box")
          && strlen (cg.dirs[0].path) == strlen (prefix) + 8 + 4,
      "  is ROOT/hako-HASH/ID: %s", cg.n ? cg.dirs[0].path : "");
  char *first = cg.n ? xstrdup (cg.dirs[0].path) : NULL;
  cg_sandbox_free (&cg);
  cg_prepare (&h, spec, "box", "/tmp/third-root", &cg, &err);
  ok (first && cg.n && strcmp (first, cg.dirs[0].path) != 0, "  and differs between state roots");
  free (first);
  free (prefix);
  cg_sandbox_free (&cg);
  oci_spec_free (spec);

  static const struct
  {
    const char *path, *want; /* want NULL: refused, with this in the message */
    const char *msg;
  } cases[] = {
    { "/a//b/", "/a/b", NULL }, { "c", "/user.slice/s1/c", NULL }, { "/a/../b", NULL, "\"..\"" },
    { "./x", NULL, "\".\"" },   { "/", NULL, "root cgroup" },
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
    {
      char *lin = xasprintf ("{\"cgroupsPath\":\"%s\"}", cases[i].path);
      spec = spec_of (lin, NULL);
      int r = cg_prepare (&h, spec, "box", "/run/hako", &cg, &err);
      if (cases[i].want)
        {
          char *full = xasprintf ("%s%s", root, cases[i].want);
          ok (r == 0 && cg.n == 1 && strcmp (cg.dirs[0].path, full) == 0 && !cg.shared_parent,
              "cgroupsPath \"%s\" -> ROOT%s", cases[i].path, cases[i].want);
          free (full);
        }
      else
        ok (r < 0 && strstr (err.msg, cases[i].msg), "cgroupsPath \"%s\" refused: %s", cases[i].path,
            err.msg);
      cg_sandbox_free (&cg);
      oci_spec_free (spec);
      free (lin);
    }
  /* A systemd path: where systemd runs, the scope's path; elsewhere refused. */
  spec = spec_of ("{\"cgroupsPath\":\"system.slice:hako:box\"}", NULL);
  int r = cg_prepare (&h, spec, "box", "/run/hako", &cg, &err);
  if (access (SYSTEMD_RUNNING, F_OK) == 0)
    {
      char *full = xasprintf ("%s/system.slice/hako-box.scope", root);
      ok (r == 0 && cg.n == 1 && strcmp (cg.dirs[0].path, full) == 0, "systemd path (systemd runs here): %s",
          cg.n ? cg.dirs[0].path : err.msg);
      free (full);
    }
  else
    ok (r < 0 && strstr (err.msg, "systemd, which is not running"),
        "systemd path without systemd refused: %s", err.msg);
  cg_sandbox_free (&cg);
  oci_spec_free (spec);
  cg_host_free (&h);
  free (root);

  static const struct
  {
    const char *path, *want; /* want NULL: refused, with this in the message */
  } sd[] = {
    { "system.slice:hako:box", "system.slice/hako-box.scope" },
    { ":hako:box", "system.slice/hako-box.scope" },
    { "machine-pod1.slice:libpod:c1", "machine.slice/machine-pod1.slice/libpod-c1.scope" },
    { "a-b-c.slice::x", "a.slice/a-b.slice/a-b-c.slice/x.scope" },
    { "-.slice:p:n", "p-n.scope" },
    { "user.slice:p:a-sub.slice", "a.slice/a-sub.slice" },
    { "system:hako:box", "not a slice name" },
    { "system.slice:p:x-.slice", "not a valid slice name" },
    { "a--b.slice:p:n", "not a slice name" },
    { "-a.slice:p:n", "not a slice name" },
    { "system.slice:p:", "name not empty" },
    { "system.slice:p:x y", "unit name characters" },
    { "system.slice:p:n:extra", "slice:prefix:name" },
  };
  for (size_t i = 0; i < sizeof sd / sizeof *sd; i++)
    {
      char *got = NULL;
      int rr = cg_systemd_path (sd[i].path, &got, &err);
      if (strchr (sd[i].want, '/') || str_has_suffix (sd[i].want, ".scope"))
        ok (rr == 0 && strcmp (got, sd[i].want) == 0, "systemd \"%s\" -> %s: %s", sd[i].path, sd[i].want,
            rr == 0 ? got : err.msg);
      else
        ok (rr < 0 && strstr (err.msg, sd[i].want), "systemd \"%s\" refused: %s", sd[i].path,
            rr < 0 ? err.msg : got);
      free (got);
    }
}

static void
test_v2_refusals (void)
{
  hk_err err;
  struct cg_host h;
  struct cg_sandbox cg;
  char *root = fake_v2 ("refuse");
  put (root, "cgroup.controllers", "cpu memory pids\n");
  cg_host_probe (root, CG_UNIFIED, "0::/\n", &h, &err);
  static const struct
  {
    const char *res, *extra, *msg;
  } cases[] = {
    { "{\"hugepageLimits\":[{\"pageSize\":\"2MB\",\"limit\":1}]}", NULL, "\"hugetlb\"" },
    { "{\"cpu\":{\"cpus\":\"0\"}}", NULL, "\"cpuset\"" },
    { "{\"memory\":{\"swappiness\":10}}", NULL, "swappiness" },
    { "{\"memory\":{\"disableOOMKiller\":true}}", NULL, "disableOOMKiller" },
    { "{\"memory\":{\"kernel\":1048576}}", NULL, "memory.kernel" },
    { "{\"memory\":{\"limit\":2097152,\"kernel\":1048576}}", NULL, "memory.kernel" },
    { "{\"memory\":{\"kernelTCP\":1048576}}", NULL, "memory.kernelTCP" },
    { "{\"memory\":{\"limit\":2097152,\"kernelTCP\":1048576}}", NULL, "memory.kernelTCP" },
    { "{\"memory\":{\"swap\":1048576}}", NULL, "memory.swap" },
    { "{\"cpu\":{\"realtimeRuntime\":1000}}", NULL, "realtime" },
    { "{\"unified\":{\"cgroup.procs\":\"1\"}}", NULL, "cgroup.procs" },
    { "{\"unified\":{\"../x\":\"1\"}}", NULL, "not a cgroup file name" },
    { "{\"unified\":{\"rdma.max\":\"1\"}}", NULL, "rdma" },
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
    {
      char *lin = xasprintf ("{\"resources\":%s}", cases[i].res);
      struct oci_spec *spec = spec_of (lin, cases[i].extra);
      ok (cg_prepare (&h, spec, "box", "/run/hako", &cg, &err) < 0 && strstr (err.msg, cases[i].msg),
          "v2 refuses %s: %s", cases[i].res, err.msg);
      cg_sandbox_free (&cg);
      oci_spec_free (spec);
      free (lin);
    }
  /* Any device rules: v2 enforces them with an eBPF filter (test_limits
   * checks its semantics), also with CAP_MKNOD. */
  struct oci_spec *spec
      = spec_of ("{\"resources\":{\"devices\":[{\"allow\":false,\"access\":\"rwm\"},"
                 "{\"allow\":true,\"type\":\"b\",\"major\":8,\"minor\":0,\"access\":\"rwm\"},"
                 "{\"allow\":false,\"type\":\"b\",\"major\":8,\"access\":\"w\"}]}}",
                 ",\"capabilities\":{\"bounding\":[\"CAP_MKNOD\"]}");
  ok (cg_prepare (&h, spec, "box", "/run/hako", &cg, &err) == 0,
      "v2 accepts device rules v1 could not express, with CAP_MKNOD: %s", err.msg);
  cg_sandbox_free (&cg);
  oci_spec_free (spec);
  /* Kernel and socket memory count in memory.max: a limit no larger holds
   * memory.kernel and memory.kernelTCP. */
  spec = spec_of ("{\"resources\":{\"memory\":{\"limit\":1048576,\"kernel\":1048576,"
                  "\"kernelTCP\":2097152}}}",
                  NULL);
  ok (cg_prepare (&h, spec, "box", "/run/hako", &cg, &err) == 0,
      "v2 accepts memory.kernel and kernelTCP no smaller than the limit: %s", err.msg);
  cg_sandbox_free (&cg);
  oci_spec_free (spec);
  cg_host_free (&h);

  ok (cg_host_probe ("/nonexistent", CG_NONE, "", &h, &err) == 0 && h.layout == CG_NONE,
      "no cgroup filesystem: layout none");
  spec = spec_of ("{\"resources\":{\"pids\":{\"limit\":10}}}", NULL);
  ok (cg_prepare (&h, spec, "box", "/run/hako", &cg, &err) < 0 && strstr (err.msg, "no cgroup filesystem"),
      "  and a limit is refused: %s", err.msg);
  oci_spec_free (spec);
  spec = spec_of ("{}", NULL);
  ok (cg_prepare (&h, spec, "box", "/run/hako", &cg, &err) == 0 && cg.n == 0, "  but no limit is fine");
  oci_spec_free (spec);
  free (root);
}

static const char full_resources[]
    = "{\"cgroupsPath\":\"/sbx/box\",\"resources\":{"
      "\"memory\":{\"limit\":67108864,\"reservation\":33554432,\"swap\":134217728},"
      "\"pids\":{\"limit\":64},"
      "\"cpu\":{\"shares\":1024,\"quota\":50000,\"period\":100000,\"cpus\":\"0-1\",\"mems\":\"0\"},"
      "\"blockIO\":{\"weight\":500,\"throttleWriteIOPSDevice\":[{\"major\":8,\"minor\":16,\"rate\":300}]},"
      "\"hugepageLimits\":[{\"pageSize\":\"2MB\",\"limit\":4194304}],"
      "\"unified\":{\"memory.high\":\"60000000\"}}}";

static void
test_v2_lifecycle (void)
{
  hk_err err;
  struct cg_host h;
  struct cg_sandbox cg, back;
  char *root = fake_v2 ("life");
  cg_host_probe (root, CG_UNIFIED, "0::/\n", &h, &err);
  char *parent = xasprintf ("%s/sbx", root);
  mkdir (parent, 0755);
  put (parent, "cgroup.controllers", "cpuset cpu io memory hugetlb pids\n");
  put (parent, "cgroup.subtree_control", "memory");
  struct oci_spec *spec = spec_of (full_resources, NULL);
  char *record = xasprintf ("%s/record", tmp);

  ok (cg_prepare (&h, spec, "box", "/run/hako", &cg, &err) == 0 && cg.n == 1 && cg.dirs[0].required,
      "prepare every limit: %s", err.msg);
  ok (cg_record_write (&cg, record, false, &err) == 0, "record written before mkdir");
  ok (cg_load (record, &back, &err) == 0 && back.n == 1 && back.unsure && !back.dirs[0].made,
      "  a record without \"made\": unsure, nothing surely ours");
  cg_sandbox_free (&back);
  ok (cg_make_dirs (&cg, &err) == 0 && cg.dirs[0].made, "mkdir ROOT/sbx/box: %s", err.msg);
  char *leaf = xasprintf ("%s/box", parent);
  struct stat sb;
  ok (stat (leaf, &sb) == 0 && S_ISDIR (sb.st_mode), "  the leaf exists");
  ok (cg_record_write (&cg, record, true, &err) == 0 && cg_load (record, &back, &err) == 0 && !back.unsure
          && back.n == 1 && back.dirs[0].made && back.dirs[0].v2 && strcmp (back.dirs[0].path, leaf) == 0,
      "record round trip with \"made\"");
  cg_sandbox_free (&back);

  struct cg_sandbox again;
  cg_prepare (&h, spec, "box", "/run/hako", &again, &err);
  ok (cg_make_dirs (&again, &err) < 0 && err.errnum == EEXIST && strstr (err.msg, "already exists"),
      "an existing cgroup is never shared: %s", err.msg);
  ok (!again.dirs[0].made, "  and is not taken for ours");
  cg_sandbox_free (&again);

  populate_v2_leaf (leaf);
  /* The limits are written first; the device filter every sandbox gets
   * cannot be attached to a directory that is not a cgroup. */
  int applied = cg_apply (&cg, spec, &err);
  ok (applied == 0 || strstr (err.msg, "eBPF device filter"),
      "apply the limits (the fake tree takes no device filter): %s", err.msg);
  is_str (get (root, "cgroup.subtree_control"), "+cpu +cpuset +memory +io +pids +hugetlb",
          "controllers enabled at the root");
  is_str (get (parent, "cgroup.subtree_control"), "+cpu +cpuset +io +pids +hugetlb",
          "only the missing ones in the parent (memory was on)");
  is_str (get (leaf, "memory.max"), "67108864", "memory.max = limit");
  is_str (get (leaf, "memory.low"), "33554432", "memory.low = reservation");
  is_str (get (leaf, "memory.swap.max"), "67108864", "memory.swap.max = swap - limit");
  is_str (get (leaf, "pids.max"), "64", "pids.max");
  is_str (get (leaf, "cpu.weight"), "39", "cpu.weight from 1024 shares");
  is_str (get (leaf, "cpu.max"), "50000 100000", "cpu.max = quota period");
  is_str (get (leaf, "cpuset.cpus"), "0-1", "cpuset.cpus");
  is_str (get (leaf, "cpuset.mems"), "0", "cpuset.mems");
  is_str (get (leaf, "io.weight"), "default 4950", "io.weight from blkio weight 500");
  is_str (get (leaf, "io.max"), "8:16 wiops=300", "io.max from throttleWriteIOPSDevice");
  is_str (get (leaf, "hugetlb.2MB.max"), "4194304", "hugetlb.2MB.max");
  is_str (get (leaf, "memory.high"), "60000000", "unified key written as is");

  char *swap = xasprintf ("%s/memory.swap.max", leaf);
  unlink (swap);
  ok (cg_apply (&cg, spec, &err) < 0 && strstr (err.msg, "memory.swap.max"),
      "no swap accounting: refused, naming memory.swap.max: %s", err.msg);
  free (swap);

  ok (cg_enter (&cg, NO_PID, false, false, &err) == 0, "enter writes cgroup.procs");
  is_str (get (leaf, "cgroup.procs"), "4194400", "  with the pid");
  put (leaf, "cgroup.procs", "");
  ok (cg_enter (&cg, NO_PID, true, false, &err) == 0 && strcmp (get (leaf, "cgroup.procs"), "") == 0,
      "enter skips the cgroup2 dir clone3 already placed it in");
  int fd = cg_open_v2 (&cg);
  ok (fd >= 0, "an fd of the cgroup2 dir for CLONE_INTO_CGROUP");
  if (fd >= 0)
    close (fd);
  is_str (cg_v2_path (&cg), leaf, "the dir the sandbox sees at /sys/fs/cgroup");

  ok (cg_can_freeze (&cg), "v2 can freeze");
  put (leaf, "cgroup.events", "populated 1\nfrozen 1\n");
  ok (cg_freeze (&cg, true, &err) == 0 && strcmp (get (leaf, "cgroup.freeze"), "1") == 0,
      "freeze writes cgroup.freeze and waits for frozen 1: %s", err.msg);
  put (leaf, "cgroup.events", "populated 1\nfrozen 0\n");
  ok (cg_freeze (&cg, false, &err) == 0 && strcmp (get (leaf, "cgroup.freeze"), "0") == 0, "thaw");
  ok (cg_kill (&cg, &err) == 0 && strcmp (get (leaf, "cgroup.kill"), "1") == 0, "kill writes cgroup.kill");
  put (leaf, "cgroup.procs", "");
  ok (cg_signal (&cg, SIGTERM, &err) == 0, "signal reads cgroup.procs of the cgroup2 dir");

  uint64_t kills = 99;
  ok (cg_oom_kills (&cg, &kills, &err) == 0 && kills == 0, "no memory.events: no OOM kill counted");
  put (leaf, "memory.events", "low 0\nhigh 0\nmax 12\noom 3\noom_kill 2\noom_group_kill 0\n");
  ok (cg_oom_kills (&cg, &kills, &err) == 0 && kills == 2, "oom_kill read from memory.events");
  struct cg_sandbox none = { 0 };
  ok (cg_oom_kills (&none, &kills, &err) == 0 && kills == 0, "no cgroups: 0");
  ok (cg_signal (&none, SIGTERM, &err) < 0 && err.errnum == ENOENT, "no cgroups: nothing to signal through");
  err_clear (&err);

  /* The kernel would now empty the cgroup; rmdir of a fake one needs it empty. */
  static const char *const files[]
      = { "memory.max",  "memory.low",    "pids.max",        "cpu.weight",  "cpu.max",      "cpuset.cpus",
          "cpuset.mems", "io.weight",     "hugetlb.2MB.max", "memory.high", "cgroup.procs", "cgroup.freeze",
          "cgroup.kill", "cgroup.events", "memory.events",   "io.max" };
  for (size_t i = 0; i < sizeof files / sizeof *files; i++)
    {
      char *p = xasprintf ("%s/%s", leaf, files[i]);
      unlink (p);
      free (p);
    }
  ok (cg_remove (&cg, &err) == 0 && stat (leaf, &sb) < 0 && errno == ENOENT, "remove: %s", err.msg);
  ok (stat (parent, &sb) == 0, "  a cgroupsPath's parent is left alone");
  ok (cg_remove (&cg, &err) == 0, "  removing twice is fine");
  cg_sandbox_free (&cg);
  oci_spec_free (spec);

  /* The default path: its shared parent goes once empty. */
  spec = spec_of ("{}", NULL);
  cg_prepare (&h, spec, "box", "/run/hako", &cg, &err);
  ok (cg_make_dirs (&cg, &err) == 0, "no limits: make");
  applied = cg_apply (&cg, spec, &err);
  ok (applied == 0 || strstr (err.msg, "eBPF device filter"),
      "  nothing to enable or write but the default device filter: %s", err.msg);
  ok (cg_remove (&cg, &err) == 0, "remove");
  char *hako = xasprintf ("%s/hako", root);
  ok (stat (hako, &sb) < 0 && errno == ENOENT, "  and the empty shared parent hako/");
  free (hako);
  cg_sandbox_free (&cg);
  oci_spec_free (spec);

  /* Killed between the parent's mkdir and the leaf's: the record has no
   * "made", and removal still takes the empty parent. */
  spec = spec_of ("{}", NULL);
  cg_prepare (&h, spec, "box", "/run/hako", &cg, &err);
  cg_record_write (&cg, record, false, &err);
  hako = xasprintf ("%s/hako", root);
  mkdir (hako, 0755);
  ok (cg_load (record, &back, &err) == 0 && back.unsure && cg_remove (&back, &err) == 0
          && stat (hako, &sb) < 0 && errno == ENOENT,
      "an unsure record: the empty shared parent is removed too");
  free (hako);
  cg_sandbox_free (&back);
  cg_sandbox_free (&cg);
  oci_spec_free (spec);

  ok (cg_load ("/nonexistent/record", &back, &err) < 0 && err.errnum == ENOENT,
      "a missing record is ENOENT (nothing was made)");
  free (record);
  free (leaf);
  free (parent);
  cg_host_free (&h);
  free (root);
}

/* v1 (and hybrid): the OOM killer's count is memory.oom_control's oom_kill. */
static void
test_v1_oom_kills (void)
{
  hk_err err;
  struct cg_sandbox cg;
  char *mem = xasprintf ("%s/v1mem/hako/box", tmp);
  char *record = xasprintf ("%s/v1record", tmp);
  mkdir_p (mem, 0755, &err);
  char *text = xasprintf ("hako-cgroups 1 hybrid 1\nmemory\t%s/v1mem\t%s\nmade\n", tmp, mem);
  put (tmp, "v1record", text);
  uint64_t kills = 99;
  ok (cg_load (record, &cg, &err) == 0 && cg.n == 1, "load a v1 memory record: %s", err.msg);
  put (mem, "memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 4\n");
  ok (cg_oom_kills (&cg, &kills, &err) == 0 && kills == 4, "oom_kill read from memory.oom_control");

  /* The exec slots: an empty one is taken and held, a held or populated
   * one passed over; the sandbox's count adds the slots' (v1 counts a kill
   * in the victim's own cgroup only), not another child's. */
  char *s0 = xasprintf ("%s/hako-mem-0", mem), *s1 = xasprintf ("%s/hako-mem-1", mem);
  char *other = xasprintf ("%s/theirs", mem);
  mkdir (s0, 0755);
  mkdir (s1, 0755);
  mkdir (other, 0755);
  put (s0, "memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 2\n");
  put (s0, "cgroup.procs", "");
  put (s1, "memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 1\n");
  put (s1, "cgroup.procs", "4242\n");
  put (other, "memory.oom_control", "oom_kill 7\n");
  ok (cg_oom_kills (&cg, &kills, &err) == 0 && kills == 7, "the sandbox's count adds its slots' (4 + 2 + 1)");
  struct cg_mem_slot a, b;
  ok (cg_mem_slot_take (mem, &a) == 0 && a.fd >= 0 && a.before == 2 && strcmp (a.dir, s0) == 0,
      "an empty slot is taken, its count read");
  /* hako-mem-1 holds a process: passed over; hako-mem-2 is made, but a
   * fake tree's directory has no cgroup.procs: taken by nobody. */
  ok (cg_mem_slot_take (mem, &b) < 0 && b.fd < 0, "a held slot and a populated one are passed over");
  put (s0, "memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 5\n");
  ok (cg_mem_slot_oom_kills (&a, &kills) == 0 && kills == 3, "the slot's count since the take");
  cg_mem_slot_release (&a);
  ok (cg_mem_slot_take (mem, &b) == 0 && strcmp (b.dir, s0) == 0 && b.before == 5,
      "a released slot is taken again");
  cg_mem_slot_release (&b);
  cg_sandbox_free (&cg);
  free (s0);
  free (s1);
  free (other);
  free (text);
  free (record);
  free (mem);
}

static void
check_writes (const char *res, const char *nodes, const char *want, const char *what)
{
  hk_err err;
  char *lin = xasprintf ("{\"resources\":{\"devices\":%s}%s}", res, nodes ? nodes : "");
  struct oci_spec *spec = spec_of (lin, NULL);
  struct cg_dev_write *w = NULL;
  size_t n = 0;
  if (cg_v1_device_writes (spec, &w, &n, &err) < 0)
    {
      ok (want == NULL, "%s: refused: %s", what, err.msg);
      if (want)
        printf ("#   %s\n", err.msg);
    }
  else
    {
      char got[2048] = "";
      for (size_t i = 0; i < n; i++)
        snprintf (got + strlen (got), sizeof got - strlen (got), "%s%s %s", i ? "; " : "",
                  w[i].allow ? "allow" : "deny", w[i].line);
      if (want)
        is_str (got, want, "%s", what);
      else
        ok (0, "%s: should be refused, got %s", what, got);
    }
  free (w);
  oci_spec_free (spec);
  free (lin);
}

static void
test_v1_devices (void)
{
  check_writes ("[{\"allow\":false,\"access\":\"rwm\"}]", NULL,
                "deny a; allow c 1:3 rwm; allow c 1:5 rwm; allow c 1:7 rwm; allow c 1:8 rwm; "
                "allow c 1:9 rwm; allow c 5:0 rwm; allow c 5:2 rwm; allow c 136:* rwm",
                "runc spec's deny-all, then the nodes of /dev");
  check_writes ("[{\"allow\":false,\"access\":\"rwm\"}]",
                ",\"devices\":[{\"path\":\"/dev/fuse\",\"type\":\"c\",\"major\":10,\"minor\":229}]",
                "deny a; allow c 1:3 rwm; allow c 1:5 rwm; allow c 1:7 rwm; allow c 1:8 rwm; "
                "allow c 1:9 rwm; allow c 5:0 rwm; allow c 5:2 rwm; allow c 136:* rwm; allow c 10:229 m",
                "linux.devices nodes get mknod alone: the deny-all holds for reading and writing them "
                "(runc's \"device cgroup deny\")");
  check_writes ("[{\"allow\":false,\"type\":\"b\",\"major\":8,\"minor\":0,\"access\":\"w\"}]", NULL,
                "deny a; allow c 1:3 rwm; allow c 1:5 rwm; allow c 1:7 rwm; allow c 1:8 rwm; "
                "allow c 1:9 rwm; allow c 5:0 rwm; allow c 5:2 rwm; allow c 136:* rwm",
                "without a deny-all of its own, the implicit one first; a deny along it writes nothing");
  check_writes ("[]", NULL,
                "deny a; allow c 1:3 rwm; allow c 1:5 rwm; allow c 1:7 rwm; allow c 1:8 rwm; "
                "allow c 1:9 rwm; allow c 5:0 rwm; allow c 5:2 rwm; allow c 136:* rwm",
                "no rules: the default ones (deny-all, then the nodes of /dev), as runc's");
  check_writes ("[{\"allow\":true,\"access\":\"rwm\"}]", NULL, "allow a",
                "an allow-all (a privileged container) replaces the implicit deny-all");
  check_writes ("[{\"allow\":true,\"access\":\"w\"}]", NULL,
                "deny a; allow c *:* w; allow b *:* w; allow c 1:3 rwm; allow c 1:5 rwm; allow c 1:7 rwm; "
                "allow c 1:8 rwm; allow c 1:9 rwm; allow c 5:0 rwm; allow c 5:2 rwm; allow c 136:* rwm",
                "a partial 'a' rule becomes the same for 'c' and 'b', after the implicit deny-all");
  check_writes ("[{\"allow\":false,\"access\":\"rwm\"},{\"allow\":true,\"type\":\"c\",\"access\":\"rwm\"},"
                "{\"allow\":false,\"type\":\"c\",\"major\":1,\"minor\":3,\"access\":\"rwm\"}]",
                NULL, NULL, "deny of one device after allowing its wildcard");
  check_writes ("[{\"allow\":false,\"access\":\"rwm\"},{\"allow\":true,\"type\":\"c\",\"major\":4,"
                "\"minor\":1,\"access\":\"rwm\"},{\"allow\":false,\"type\":\"c\",\"major\":4,\"minor\":1,"
                "\"access\":\"w\"}]",
                NULL,
                "deny a; allow c 4:1 rwm; deny c 4:1 w; allow c 1:3 rwm; allow c 1:5 rwm; "
                "allow c 1:7 rwm; allow c 1:8 rwm; allow c 1:9 rwm; allow c 5:0 rwm; allow c 5:2 rwm; "
                "allow c 136:* rwm",
                "taking back part of an exact exception");
}

/* update, stats, the process list and OOM notifications on a v2 sandbox
 * made without limits (so no controller was enabled for it). */
static void
test_v2_update_stats (void)
{
  hk_err err = { 0 };
  struct cg_host h;
  struct cg_sandbox cg;
  char *root = fake_v2 ("upd");
  cg_host_probe (root, CG_UNIFIED, "0::/\n", &h, &err);
  struct oci_spec *spec = spec_of ("{}", NULL);
  cg_prepare (&h, spec, "box", "/run/hako", &cg, &err);
  cg_make_dirs (&cg, &err);
  char *leaf = xasprintf ("%s/hako/box", root), *parent = xasprintf ("%s/hako", root);
  put (parent, "cgroup.subtree_control", "");
  populate_v2_leaf (leaf);

  struct oci_resources upd = { .has_memory_limit = true,
                               .memory_limit = 33554432,
                               .has_pids_limit = true,
                               .pids_limit = 10,
                               .has_cpu_quota = true,
                               .cpu_quota = 20000 };
  struct oci_resources merged = upd;
  merged.has_cpu_period = true;
  merged.cpu_period = 100000;
  ok (cg_update (&cg, &upd, &merged, &err) == 0, "update a v2 sandbox made without limits: %s", err.msg);
  is_str (get (root, "cgroup.subtree_control"), "+cpu +memory +pids",
          "  the controllers enabled at the root");
  is_str (get (parent, "cgroup.subtree_control"), "+cpu +memory +pids", "  and in the parent");
  is_str (get (leaf, "memory.max"), "33554432", "  memory.max");
  is_str (get (leaf, "pids.max"), "10", "  pids.max");
  is_str (get (leaf, "cpu.max"), "20000 100000", "  cpu.max with the period in force");
  struct oci_resources unl = { .has_memory_limit = true, .memory_limit = -1 };
  put (leaf, "memory.max", ""); /* a fake file is not truncated by a write */
  ok (cg_update (&cg, &unl, &unl, &err) == 0 && strcmp (get (leaf, "memory.max"), "max") == 0,
      "  -1: no limit (\"max\")");

  put (leaf, "memory.current", "4096\n");
  put (leaf, "memory.events", "low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n");
  put (leaf, "memory.stat", "anon 4096\nfile 8192\n");
  put (leaf, "pids.current", "2\n");
  put (leaf, "cpu.stat",
       "usage_usec 1500\nuser_usec 1000\nsystem_usec 500\nnr_periods 4\nnr_throttled 1\n"
       "throttled_usec 20\n");
  struct oci_stats st;
  ok (cg_stats (&cg, &st, &err) == 0, "stats: %s", err.msg);
  ok (st.has_memory && st.mem.usage == 4096 && st.mem.limit == UINT64_MAX && st.mem.failcnt == 3
          && st.n_mem_raw == 2 && strcmp (st.mem_raw[1].key, "file") == 0 && st.mem_raw[1].value == 8192,
      "  memory: usage, limit (max), failcnt (memory.events max), raw memory.stat");
  ok (st.has_pids && st.pids_current == 2 && st.pids_limit == 10, "  pids: current and limit");
  ok (st.has_cpu && st.cpu_total_ns == 1500000 && st.cpu_user_ns == 1000000 && st.cpu_kernel_ns == 500000
          && st.has_throttling && st.periods == 4 && st.throttled_periods == 1 && st.throttled_ns == 20000,
      "  cpu: usage and throttling in ns");
  oci_stats_free (&st);

  put (leaf, "cgroup.procs", "12\n3\n");
  pid_t *pids = NULL;
  size_t n = 0;
  ok (cg_pids (&cg, &pids, &n, &err) == 0 && n == 2 && pids[0] == 3 && pids[1] == 12,
      "the processes from cgroup.procs, sorted");
  free (pids);

  struct cg_oom_watch w;
  uint64_t events = 0;
  ok (cg_oom_watch_open (&cg, &w, &err) == 0 && w.fd >= 0 && w.v2, "OOM watch: inotify on memory.events: %s",
      err.msg);
  put (leaf, "memory.events", "low 0\nhigh 0\nmax 5\noom 3\noom_kill 3\n");
  ok (w.fd >= 0 && cg_oom_watch_read (&w, &events, &err) == 0 && events == 2,
      "  two more oom_kill: 2 events");
  ok (cg_oom_watch_read (&w, &events, &err) == 0 && events == 0, "  none since");
  cg_oom_watch_close (&w);

  cg_sandbox_free (&cg);
  oci_spec_free (spec);
  cg_host_free (&h);
  free (leaf);
  free (parent);
  free (root);
}

/* Where the v2 filter cannot be had (rootless: no cgroup of its own, no
 * CAP_BPF), only rules that add nothing are accepted. */
static void
test_v2_devices_without_filter (void)
{
  static const struct
  {
    const char *devices, *extra;
    bool harmless;
  } cases[] = {
    { "[{\"allow\":false,\"access\":\"rwm\"},{\"allow\":true,\"type\":\"c\",\"major\":1,\"minor\":3,"
      "\"access\":\"rw\"}]",
      ",\"capabilities\":{\"bounding\":[\"CAP_KILL\"]}", true },
    { "[{\"allow\":false,\"access\":\"rwm\"}]", ",\"capabilities\":{\"bounding\":[\"CAP_MKNOD\"]}", false },
    { "[{\"allow\":true,\"access\":\"rwm\"}]", NULL, false },
    { "[{\"allow\":false,\"access\":\"rwm\"},{\"allow\":true,\"type\":\"b\",\"major\":8,\"minor\":0,"
      "\"access\":\"rwm\"}]",
      NULL, false },
    /* No rules: the default ones, which add nothing to /dev. */
    { "[]", NULL, true },
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
    {
      char *lin = xasprintf ("{\"resources\":{\"devices\":%s}}", cases[i].devices);
      struct oci_spec *spec = spec_of (lin, cases[i].extra);
      struct cg_dir skipped = { .path = "/nonexistent", .v2 = true, .skipped = true };
      struct cg_sandbox cg = { .layout = CG_UNIFIED, .dirs = &skipped, .n = 1 };
      hk_err err = { 0 };
      bool harmless = cg_v2_devices_harmless (spec);
      int r = cg_apply (&cg, spec, &err);
      ok (harmless == cases[i].harmless && (r == 0) == harmless, "%s without a cgroup of its own: %s %s",
          cases[i].devices, harmless ? "accepted" : "refused", err.msg);
      oci_spec_free (spec);
      free (lin);
    }
}

/* linux.devices: a node the rules deny is not "harmless" (without the
 * filter it would open), one they allow is; and the filter's rule list
 * starts with the implicit deny-all and gives listed nodes mknod alone. */
static void
test_listed_devices (void)
{
  static const char *const kmsg
      = ",\"devices\":[{\"path\":\"/dev/kmsg\",\"type\":\"c\",\"major\":1,\"minor\":11}]";
  char *lin = xasprintf ("{\"resources\":{\"devices\":[{\"allow\":false,\"access\":\"rwm\"}]}%s}", kmsg);
  struct oci_spec *spec = spec_of (lin, NULL);
  ok (!cg_v2_devices_harmless (spec), "deny-all with /dev/kmsg listed: the rules take something away");
  struct cg_dev_rule *rules = NULL;
  size_t n = 0;
  cg_device_rules (spec, &rules, &n);
  bool kmsg_open = false, kmsg_mknod = false;
  for (size_t i = 0; i < n; i++)
    if (rules[i].allow && rules[i].major == 1 && rules[i].minor == 11)
      {
        kmsg_open |= (rules[i].access & (CG_DEV_R | CG_DEV_W)) != 0;
        kmsg_mknod |= rules[i].access == CG_DEV_M;
      }
  ok (n == 11 && !rules[0].allow && rules[0].type == 'a' && !rules[1].allow && !kmsg_open && kmsg_mknod,
      "filter rules: implicit deny-all, the spec's deny-all, /dev's 8 nodes, the listed node's mknod and "
      "no more");
  free (rules);
  oci_spec_free (spec);
  free (lin);
  lin = xasprintf ("{\"resources\":{\"devices\":[{\"allow\":false,\"access\":\"rwm\"},{\"allow\":true,"
                   "\"type\":\"c\",\"major\":1,\"minor\":11,\"access\":\"rw\"}]}%s}",
                   kmsg);
  spec = spec_of (lin, NULL);
  ok (cg_v2_devices_harmless (spec), "  allowed by a rule: nothing taken away");
  oci_spec_free (spec);
  free (lin);
  lin = xasprintf ("{%s}", kmsg + 1);
  spec = spec_of (lin, NULL);
  ok (!cg_v2_devices_harmless (spec), "  no rules at all: the default deny-all takes it away");
  oci_spec_free (spec);
  free (lin);
}

/* The knob table (oci/knobs.h): every row is consistent, parses into its
 * own field alone, needs its own controller where it has a file, and update
 * merges it when it may change it. */
static void
test_knob_table (void)
{
  for (size_t i = 0; i < oci_n_knobs; i++)
    {
      const struct oci_knob *k = &oci_knobs[i];
      unsigned bit1 = cg_ctl_bit (k->ctl, strlen (k->ctl), false),
               bit2 = cg_ctl_bit (k->ctl, strlen (k->ctl), true);
      const char *v = k->type == OCI_KNOB_BOOL ? "true" : k->type == OCI_KNOB_STR ? "\"0\"" : "7";
      char *lin = xasprintf ("{\"resources\":{\"%s\":{\"%s\":%s}}}", k->obj, k->key, v);
      struct oci_spec *spec = spec_of (lin, NULL);
      const struct oci_resources *r = &spec->linux.resources;
      bool alone = true;
      for (size_t j = 0; j < oci_n_knobs; j++)
        alone = alone && oci_knob_is_set (&oci_knobs[j], r) == (j == i);
      ok (bit1 && bit2 && (k->v1_file == NULL) == (k->v1_conv == OCI_CONV_NONE)
              && (k->v2_file == NULL) == (k->v2_conv == OCI_CONV_NONE),
          "knob %s.%s: a known controller, a converter exactly where a file is", k->obj, k->key);
      ok (alone && cg_knob_ctls (r, false, false) == (k->v1_file ? bit1 : 0u)
              && cg_knob_ctls (r, true, false) == (k->v2_file ? bit2 : 0u)
              && cg_knob_ctls (r, true, true) == (k->v2_file && k->update ? bit2 : 0u),
          "knob %s.%s: parsed into its field alone, needing its controller", k->obj, k->key);
      struct oci_resources dst = { 0 };
      oci_resources_merge (&dst, r);
      ok (oci_knob_is_set (k, &dst) == k->update && oci_knobs_any (r, true) == k->update
              && (oci_knobs_unchangeable (r) == NULL) == k->update,
          "knob %s.%s: update %s it", k->obj, k->key, k->update ? "merges" : "refuses");
      oci_resources_free (&dst);
      oci_spec_free (spec);
      free (lin);
    }
  /* The converters, as the files get them. */
  static const struct
  {
    const char *res, *file, *want;
    bool v2;
  } cases[] = {
    { "{\"pids\":{\"limit\":0}}", "pids.max", "max", true },
    { "{\"pids\":{\"limit\":-1}}", "pids.max", "max", false },
    { "{\"pids\":{\"limit\":64}}", "pids.max", "64", false },
    { "{\"memory\":{\"limit\":-1}}", "memory.max", "max", true },
    { "{\"memory\":{\"limit\":-1}}", "memory.limit_in_bytes", "-1", false },
    { "{\"cpu\":{\"shares\":1024}}", "cpu.weight", "39", true },
    { "{\"cpu\":{\"shares\":1024}}", "cpu.shares", "1024", false },
    { "{\"memory\":{\"disableOOMKiller\":true}}", "memory.oom_control", "1", false },
    { "{\"cpu\":{\"cpus\":\"0-1\"}}", "cpuset.cpus", "0-1", true },
  };
  char *dir = xasprintf ("%s/knobs", tmp);
  mkdir (dir, 0755);
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
    {
      char *lin = xasprintf ("{\"resources\":%s}", cases[i].res);
      struct oci_spec *spec = spec_of (lin, NULL);
      hk_err err = { 0 };
      put (dir, cases[i].file, "");
      int rc = cg_write_knobs (dir, &spec->linux.resources, cases[i].v2, ~0u, &err);
      ok (rc == 0 && strcmp (get (dir, cases[i].file), cases[i].want) == 0, "v%d %s: %s is \"%s\" (%s)",
          cases[i].v2 ? 2 : 1, cases[i].res, cases[i].file, get (dir, cases[i].file),
          rc < 0 ? err.msg : "ok");
      oci_spec_free (spec);
      free (lin);
    }
  free (dir);
}

int
main (void)
{
  char tmpl[] = "/tmp/hako-unit-cgroup.XXXXXX";
  tmp = mkdtemp (tmpl);
  test_knob_table ();
  test_probe ();
  test_paths ();
  test_v2_refusals ();
  test_v2_lifecycle ();
  test_v1_devices ();
  test_v2_update_stats ();
  test_v2_devices_without_filter ();
  test_listed_devices ();
  test_v1_oom_kills ();
  hk_err err;
  rm_rf (tmp, &err);
  return tap_done ();
}
