/* test_limits: the eBPF device filter's semantics (its instructions run by a
 * small interpreter here and compared with the rules' meaning, and loaded
 * into the kernel's verifier when this process may), `update -r` parsing,
 * merging and the rewritten config, and the events and ps JSON. */
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/util.h"
#include "oci/report/stats.h"
#include "oci/resources.h"
#include "runtime/cgroup/cgroup_bpf.h"
#include "runtime/cgroup/cgroup_internal.h"
#include "tests/unit/helpers.h"
#include "tests/unit/tap.h"

/* ---- the device filter ----------------------------------------------------------- */

/* Runs the instructions cg_bpf_devices_prog emits (loads from the context,
 * 64-bit mov/and/rsh, 32-bit mov/xor/or, jeq/jne/ja, exit) on one request;
 * -1 for anything else, a backward or out-of-range jump, or falling off
 * the end. */
static int
interpret (const struct bpf_insn *p, size_t n, uint32_t access_type, uint32_t major, uint32_t minor)
{
  struct bpf_cgroup_dev_ctx ctx = { access_type, major, minor };
  uint64_t r[11] = { 0 };
  for (size_t pc = 0; pc < n; pc++)
    {
      const struct bpf_insn *i = &p[pc];
      unsigned cls = BPF_CLASS (i->code), op = BPF_OP (i->code);
      if (cls == BPF_LDX)
        {
          if (i->src_reg != 1 || BPF_SIZE (i->code) != BPF_W || i->off < 0 || i->off > 8)
            return -1;
          uint32_t v;
          memcpy (&v, (char *)&ctx + i->off, sizeof v);
          r[i->dst_reg] = v;
        }
      else if (cls == BPF_ALU64)
        {
          uint64_t v = BPF_SRC (i->code) == BPF_X ? r[i->src_reg] : (uint64_t)(int64_t)i->imm;
          if (op == BPF_MOV)
            r[i->dst_reg] = v;
          else if (op == BPF_AND)
            r[i->dst_reg] &= v;
          else if (op == BPF_RSH)
            r[i->dst_reg] >>= v;
          else
            return -1;
        }
      else if (cls == BPF_ALU)
        {
          /* 32 bits, the result zero-extended, as the kernel does. */
          uint32_t v = BPF_SRC (i->code) == BPF_X ? (uint32_t)r[i->src_reg] : (uint32_t)i->imm;
          uint32_t d = (uint32_t)r[i->dst_reg];
          if (op == BPF_MOV)
            d = v;
          else if (op == BPF_XOR)
            d ^= v;
          else if (op == BPF_OR)
            d |= v;
          else
            return -1;
          r[i->dst_reg] = d;
        }
      else if (cls == BPF_JMP || cls == BPF_JMP32)
        {
          if (op == BPF_EXIT)
            return (int)r[0];
          bool jump;
          uint64_t a = cls == BPF_JMP32 ? (uint32_t)r[i->dst_reg] : r[i->dst_reg];
          uint64_t b = cls == BPF_JMP32 ? (uint32_t)i->imm : (uint64_t)(int64_t)i->imm;
          if (op == BPF_JA)
            jump = true;
          else if (op == BPF_JEQ)
            jump = a == b;
          else if (op == BPF_JNE)
            jump = a != b;
          else
            return -1;
          if (i->off < 0 || pc + 1 + (size_t)i->off > n)
            return -1;
          if (jump)
            pc += (size_t)i->off;
        }
      else
        return -1;
    }
  return -1;
}

/* What the rules mean: for each access asked, the last rule that matches the
 * device and names the access decides; none: allowed. */
static bool
meaning (const struct cg_dev_rule *rules, size_t n, char type, uint32_t major, uint32_t minor, unsigned acc)
{
  for (unsigned bit = 1; bit <= CG_DEV_M; bit <<= 1)
    {
      if (!(acc & bit))
        continue;
      bool allow = true;
      for (size_t i = 0; i < n; i++)
        {
          const struct cg_dev_rule *x = &rules[i];
          if ((x->type == 'a' || x->type == type) && (x->major < 0 || x->major == major)
              && (x->minor < 0 || x->minor == minor) && (x->access & bit))
            allow = x->allow;
        }
      if (!allow)
        return false;
    }
  return true;
}

static uint32_t
ctx_access (char type, unsigned acc)
{
  uint32_t a = ((acc & CG_DEV_M) ? BPF_DEVCG_ACC_MKNOD : 0) | ((acc & CG_DEV_R) ? BPF_DEVCG_ACC_READ : 0)
               | ((acc & CG_DEV_W) ? BPF_DEVCG_ACC_WRITE : 0);
  return a << 16 | (type == 'b' ? BPF_DEVCG_DEV_BLOCK : BPF_DEVCG_DEV_CHAR);
}

/* Every request over a small world of devices: how many the program
 * decides differently from the rules' meaning (or cannot run). */
static int
mismatches (const struct cg_dev_rule *rules, size_t n, const struct bpf_insn *p, size_t len)
{
  static const char types[] = { 'b', 'c' };
  static const uint32_t nums[] = { 0, 1, 3, 8, 136 };
  int bad = 0;
  for (size_t t = 0; t < 2; t++)
    for (size_t ma = 0; ma < 5; ma++)
      for (size_t mi = 0; mi < 5; mi++)
        for (unsigned acc = 1; acc <= 7; acc++)
          {
            int got = interpret (p, len, ctx_access (types[t], acc), nums[ma], nums[mi]);
            int want = meaning (rules, n, types[t], nums[ma], nums[mi], acc);
            if (got != want)
              {
                if (bad++ == 0)
                  printf ("#   %c %u:%u acc %u: program %d, rules %d\n", types[t], nums[ma], nums[mi], acc,
                          got, want);
              }
          }
  return bad;
}

static int verifier = -1; /* -1 unknown, 0 not permitted here, 1 loads */

static void
check_rules (const struct cg_dev_rule *rules, size_t n, const char *what)
{
  struct bpf_insn *p = NULL;
  size_t len;
  hk_err err = { 0 };
  if (cg_bpf_devices_prog (rules, n, &p, &len, &err) < 0)
    {
      ok (0, "%s: %s", what, err.msg);
      return;
    }
  ok (mismatches (rules, n, p, len) == 0, "%s: the program decides as the rules say (%zu instructions)", what,
      len);
  if (verifier != 0)
    {
      int fd;
      if (cg_bpf_devices_load (p, len, &fd, &err) == 0)
        {
          verifier = 1;
          close (fd);
          ok (1, "%s: the kernel's verifier accepts it", what);
        }
      else if (err.errnum == EPERM || err.errnum == EACCES)
        verifier = 0;
      else
        ok (0, "%s: the verifier refuses it: %s", what, err.msg);
    }
  free (p);
}

#define R(allow, type, maj, min, acc)                                                                        \
  {                                                                                                          \
    allow, type, maj, min, acc                                                                               \
  }
enum
{
  RWM = CG_DEV_R | CG_DEV_W | CG_DEV_M,
  RW = CG_DEV_R | CG_DEV_W
};

static void
test_device_filter (void)
{
  static const struct cg_dev_rule runc_default[] = {
    R (false, 'a', -1, -1, RWM), R (true, 'c', 1, 3, RWM),    R (true, 'c', 1, 8, RWM),
    R (true, 'c', 5, 0, RWM),    R (true, 'c', 136, -1, RWM),
  };
  check_rules (runc_default, 5, "deny all, then allow null, random, tty and the ptys");
  /* What every sandbox of runc's default config loads: the spec's deny-all,
   * hako's implicit one, /dev's 8 nodes.  The verifier's time (most of a
   * sandbox's start once it was) follows the instructions it walks: each
   * should be walked about once, not once per way the rules before it
   * could have been left. */
  static const struct cg_dev_rule every_sandbox[] = {
    R (false, 'a', -1, -1, RWM), R (false, 'a', -1, -1, RWM), R (true, 'c', 1, 3, RWM),
    R (true, 'c', 1, 5, RWM),    R (true, 'c', 1, 7, RWM),    R (true, 'c', 1, 8, RWM),
    R (true, 'c', 1, 9, RWM),    R (true, 'c', 5, 0, RWM),    R (true, 'c', 5, 2, RWM),
    R (true, 'c', 136, -1, RWM),
  };
  struct bpf_insn *wp = NULL;
  size_t wlen = 0;
  hk_err werr;
  long work
      = cg_bpf_devices_prog (every_sandbox, 10, &wp, &wlen, &werr) == 0 ? cg_bpf_devices_walk (wp, wlen) : -1;
  if (work < 0)
    skip ("BPF_PROG_LOAD not permitted here", "the verifier walks each instruction about once");
  else
    ok ((size_t)work <= wlen + wlen / 4, "the verifier walks each instruction about once (%ld for %zu)", work,
        wlen);
  free (wp);
  static const struct cg_dev_rule carve[] = {
    R (true, 'a', -1, -1, RWM),
    R (false, 'c', 1, 3, CG_DEV_W),
    R (false, 'b', 8, -1, RWM),
  };
  check_rules (carve, 3, "allow all, then deny writes to c 1:3 and all of b 8:* (beyond v1)");
  static const struct cg_dev_rule layered[] = {
    R (false, 'a', -1, -1, RWM), R (true, 'c', -1, -1, CG_DEV_R), R (false, 'c', 1, -1, CG_DEV_R),
    R (true, 'c', 1, 3, RW),     R (true, 'b', 8, 0, CG_DEV_M),
  };
  check_rules (layered, 5, "later rules override earlier ones access by access");
  check_rules (NULL, 0, "no rules: everything allowed");
  static const struct cg_dev_rule unreachable[] = {
    R (true, 'c', 1, 3, RWM),
    R (false, 'a', -1, -1, RWM),
  };
  check_rules (unreachable, 2, "a deny-all last hides what came before");
  struct bpf_insn *p = NULL;
  size_t len;
  hk_err err;
  cg_bpf_devices_prog (unreachable, 2, &p, &len, &err);
  ok (interpret (p, len, ctx_access ('c', CG_DEV_R), 1, 3) == 0,
      "  c 1:3 read is denied by the later deny-all");
  free (p);

  /* Random rule lists over the same small world. */
  static const int64_t nums[] = { -1, 0, 1, 3, 8, 136 };
  static const char types[] = { 'a', 'b', 'c' };
  unsigned seed = 12345;
  int bad = 0, lists = 300, refused = 0;
  for (int l = 0; l < lists; l++)
    {
      struct cg_dev_rule rules[12];
      size_t n = (size_t)(rand_r (&seed) % 12);
      for (size_t i = 0; i < n; i++)
        rules[i] = (struct cg_dev_rule){ .allow = rand_r (&seed) % 2,
                                         .type = types[rand_r (&seed) % 3],
                                         .major = nums[rand_r (&seed) % 6],
                                         .minor = nums[rand_r (&seed) % 6],
                                         .access = 1 + (unsigned)rand_r (&seed) % 7 };
      int fd;
      if (cg_bpf_devices_prog (rules, n, &p, &len, &err) < 0)
        bad++;
      else
        bad += mismatches (rules, n, p, len) != 0;
      if (verifier == 1 && p)
        {
          if (cg_bpf_devices_load (p, len, &fd, &err) < 0)
            refused++;
          else
            close (fd);
        }
      free (p);
      p = NULL;
    }
  ok (bad == 0, "%d random rule lists: the program always decides as the rules say", lists);
  if (verifier == 1)
    ok (refused == 0, "  and the verifier accepts every one (%d refused)", refused);
  if (verifier == 0)
    skip ("BPF_PROG_LOAD not permitted here", "the kernel's verifier accepts the programs");
}

/* The program attached to a real cgroup2 directory: on this hybrid host
 * the unified hierarchy has no controllers, but the kernel runs a cgroup's
 * device programs on every open of a node by its processes all the same. */
static const char *
cgroup2_mount (void)
{
  if (fs_has_magic ("/sys/fs/cgroup", CGROUP2_SUPER_MAGIC))
    return "/sys/fs/cgroup";
  if (fs_has_magic ("/sys/fs/cgroup/unified", CGROUP2_SUPER_MAGIC))
    return "/sys/fs/cgroup/unified";
  return NULL;
}

/* In a child placed in dir: bit 0 set if /dev/kmsg opens for reading, bit 1
 * if for writing, bit 2 if /dev/null opens for writing. */
static int
probe_in (const char *dir)
{
  pid_t pid = fork ();
  if (pid == 0)
    {
      hk_err e;
      if (cg_writef (dir, "cgroup.procs", &e, "%d", (int)getpid ()) < 0)
        _exit (100);
      int bits = 0, fd;
      if ((fd = open ("/dev/kmsg", O_RDONLY | O_NONBLOCK)) >= 0)
        bits |= 1, close (fd);
      if ((fd = open ("/dev/kmsg", O_WRONLY)) >= 0)
        bits |= 2, close (fd);
      if ((fd = open ("/dev/null", O_WRONLY)) >= 0)
        bits |= 4, close (fd);
      _exit (bits);
    }
  int st;
  waitpid (pid, &st, 0);
  return WIFEXITED (st) ? WEXITSTATUS (st) : -1;
}

static void
test_attach (void)
{
  const char *mnt = cgroup2_mount ();
  if (mnt == NULL || geteuid () != 0 || verifier != 1 || access ("/dev/kmsg", R_OK) < 0)
    {
      skip ("no cgroup2 hierarchy, not root, or BPF_PROG_LOAD not permitted", "filter attached to a cgroup");
      return;
    }
  char *dir = xasprintf ("%s/hako-unit-bpf-%d", mnt, (int)getpid ());
  if (mkdir (dir, 0755) < 0)
    {
      skip (strerror (errno), "filter attached to a cgroup");
      free (dir);
      return;
    }
  ok (probe_in (dir) == 7, "without a filter, /dev/kmsg opens for reading and writing");
  const char *json
      = "{\"ociVersion\":\"1.2.0\",\"root\":{\"path\":\"r\"},\"process\":{\"args\":[\"sh\"],"
        "\"cwd\":\"/\"},\"linux\":{\"resources\":{\"devices\":[{\"allow\":false,\"access\":\"rwm\"},"
        "{\"allow\":true,\"type\":\"c\",\"major\":1,\"minor\":11,\"access\":\"rw\"},"
        "{\"allow\":false,\"type\":\"c\",\"major\":1,\"access\":\"w\"}]}}}";
  struct oci_spec *spec = spec_json (json);
  hk_err err = { 0 };
  int r = spec ? cg_bpf_devices_attach (dir, spec, &err) : -1;
  ok (r == 0, "the filter attaches to %s: %s", dir, r ? err.msg : "");
  /* deny all; allow c 1:11 rw; deny c 1:* w — then hako's allow of c 1:3. */
  ok (probe_in (dir) == (1 | 4), "with it: /dev/kmsg reads, its write is denied, /dev/null (hako's) writes");
  oci_spec_free (spec);
  rmdir (dir);
  free (dir);
}

/* ---- update's resources --------------------------------------------------------------- */

static void
test_resources (void)
{
  hk_err err = { 0 };
  struct oci_resources r;
  const char *ok_json = "{\"memory\":{\"limit\":67108864,\"swap\":-1},\"pids\":{\"limit\":32},"
                        "\"cpu\":{\"quota\":50000,\"period\":100000,\"cpus\":\"0\"}}";
  ok (oci_resources_parse (ok_json, strlen (ok_json), &r, &err) == 0 && r.has_memory_limit
          && r.memory_limit == 67108864 && r.has_pids_limit && r.pids_limit == 32 && r.cpu_quota == 50000
          && r.cpu_cpus && strcmp (r.cpu_cpus, "0") == 0,
      "a runc update -r file parses");
  const char *bad[] = { "{\"hugepageLimits\":[{\"pageSize\":\"2MB\",\"limit\":1}]}",
                        "{\"blockIO\":{\"weight\":100}}", "[1]", "{\"memory\":{\"limit\":\"x\"}}" };
  const char *msg[] = { "hugepageLimits", "blockIO", "object", ".linux.resources.memory.limit" };
  for (size_t i = 0; i < 4; i++)
    {
      struct oci_resources x;
      ok (oci_resources_parse (bad[i], strlen (bad[i]), &x, &err) < 0 && strstr (err.msg, msg[i]),
          "refused: %s (%s)", bad[i], err.msg);
    }

  /* Device rules: the sandbox's own pass (containerd's CRI sends them
   * back), others are refused. */
  {
    const char *cur_json = "{\"devices\":[{\"allow\":false,\"access\":\"rwm\"},"
                           "{\"allow\":true,\"type\":\"c\",\"major\":1,\"minor\":3,\"access\":\"rwm\"}]}";
    const char *other = "{\"devices\":[{\"allow\":true,\"access\":\"rwm\"}],\"memory\":{\"limit\":1048576}}";
    struct oci_resources cur, same, diff;
    ok (oci_resources_parse (cur_json, strlen (cur_json), &cur, &err) == 0
            && oci_resources_parse (cur_json, strlen (cur_json), &same, &err) == 0
            && oci_resources_parse (other, strlen (other), &diff, &err) == 0,
        "an update may carry device rules");
    ok (oci_resources_check_devices (&cur, &same, &err) == 0, "the sandbox's own device rules pass");
    ok (oci_resources_check_devices (&cur, &diff, &err) < 0 && strstr (err.msg, ".linux.resources.devices"),
        "other device rules are refused (%s)", err.msg);
    oci_resources_free (&cur);
    oci_resources_free (&same);
    oci_resources_free (&diff);
  }

  struct oci_resources base
      = { .has_memory_limit = true, .memory_limit = 1 << 30, .has_cpu_shares = true, .cpu_shares = 512 };
  base.cpu_mems = xstrdup ("0");
  oci_resources_merge (&base, &r);
  ok (base.memory_limit == 67108864 && base.has_memory_swap && base.memory_swap == -1
          && base.cpu_shares == 512 && base.has_pids_limit && strcmp (base.cpu_cpus, "0") == 0
          && strcmp (base.cpu_mems, "0") == 0,
      "merge: the update's fields replace, the others stay");

  const char *config
      = "{\"ociVersion\":\"1.2.0\",\"root\":{\"path\":\"rootfs\"},\"process\":{\"args\":[\"sh\"],\"cwd\":\"/"
        "\"},\"linux\":{\"namespaces\":"
        "[{\"type\":\"pid\"}],\"resources\":{\"devices\":[{\"allow\":false,\"access\":\"rwm\"}],"
        "\"memory\":{\"limit\":1073741824,\"disableOOMKiller\":false},\"cpu\":{\"shares\":512}}},"
        "\"annotations\":{\"a\":\"1.50\"}}";
  char *out = NULL;
  size_t len;
  int rc = oci_config_set_resources (config, strlen (config), &base, &out, &len, &err);
  ok (rc == 0, "config rewritten");
  struct oci_spec *spec = NULL;
  rc = out ? oci_spec_parse (out, len, &spec, &err) : -1;
  ok (rc == 0, "  and it parses: %s", rc ? err.msg : "");
  if (spec)
    {
      const struct oci_resources *n = &spec->linux.resources;
      ok (n->memory_limit == 67108864 && n->pids_limit == 32 && n->cpu_shares == 512 && n->cpu_quota == 50000
              && n->n_devices == 1 && spec->linux.n_namespaces == 1 && spec->n_annotations == 1 && n->cpu_cpus
              && strcmp (n->cpu_cpus, "0") == 0 && n->cpu_mems && strcmp (n->cpu_mems, "0") == 0
              && n->has_memory_swap && n->memory_swap == -1,
          "  with the new limits and everything else kept");
      ok (strstr (out, "\"disableOOMKiller\":false") != NULL, "  memory's other members kept as written");
      oci_spec_free (spec);
    }
  free (out);
  oci_resources_free (&base);
  oci_resources_free (&r);
}

/* ---- JSON out ---------------------------------------------------------------------- */

static void
test_json (void)
{
  hk_err err;
  struct oci_stats s = { .has_memory = true,
                         .mem = { .usage = 4096, .limit = 1 << 20 },
                         .has_pids = true,
                         .pids_current = 2,
                         .pids_limit = 64,
                         .has_cpu = true,
                         .cpu_total_ns = 5 };
  oci_stats_add_raw (&s, "rss", 4096);
  char *out = NULL;
  int r = oci_stats_event_json ("box", &s, &out, NULL, &err);
  ok (r == 0
          && strcmp (out, "{\"type\":\"stats\",\"id\":\"box\",\"data\":{\"cpu\":{\"usage\":{\"total\":5,"
                          "\"kernel\":0,\"user\":0}},\"memory\":{\"usage\":{\"limit\":1048576,\"usage\":4096,"
                          "\"max\":0,\"failcnt\":0},\"raw\":{\"rss\":4096}},\"pids\":{\"current\":2,"
                          "\"limit\":64}}}")
                 == 0,
      "stats in runc's events shape: %s", out ? out : "(none)");
  free (out);
  oci_stats_free (&s);
  ok (oci_event_json ("oom", "box", &out, NULL, &err) == 0
          && strcmp (out, "{\"type\":\"oom\",\"id\":\"box\"}") == 0,
      "an oom event");
  free (out);
  struct oci_proc p = {
    .pid = 10, .ppid = 1, .ns_pid = 1, .uid = 0, .user = "root", .state = 'S', .command = "sleep \"1\""
  };
  r = oci_procs_json (&p, 1, &out, NULL, &err);
  ok (r == 0
          && strcmp (out, "[{\"pid\":10,\"ppid\":1,\"ns_pid\":1,\"user\":\"root\",\"uid\":0,\"state\":\"S\","
                          "\"cpu_ms\":0,\"command\":\"sleep \\\"1\\\"\"}]")
                 == 0,
      "ps JSON: %s", out ? out : "(none)");
  free (out);
  struct oci_proc two[] = { p, { .pid = 11, .ppid = 10, .user = "root", .command = "sh" } };
  r = oci_pids_json (two, 2, &out, NULL, &err);
  ok (r == 0 && strcmp (out, "[10,11]") == 0, "ps JSON as runc's, pids only: %s", out ? out : "(none)");
  free (out);
  r = oci_pids_json (NULL, 0, &out, NULL, &err);
  ok (r == 0 && strcmp (out, "[]") == 0, "no process: an empty array: %s", out ? out : "(none)");
  free (out);
}

int
main (void)
{
  test_device_filter ();
  test_attach ();
  test_resources ();
  test_json ();
  return tap_done ();
}
