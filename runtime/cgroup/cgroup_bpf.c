/* cgroup_bpf: the eBPF device filter of cgroup v2.  cgroup v2 has no devices
 * controller: the kernel asks a BPF_PROG_TYPE_CGROUP_DEVICE program attached
 * to the cgroup on every open and mknod of a device node.  That check is what
 * keeps a sandbox that can make nodes (CAP_MKNOD) or was given one by a bind
 * from reaching a disk or /dev/mem its rules deny. */
#include "runtime/cgroup/cgroup_bpf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lib/util.h"

/* The registers: r1 the context, r2 the device type, r3 the access asked,
 * r4 the major, r5 the minor, r0 and r6 scratch (r0 the result). */
enum
{
  R0,
  R1,
  R_TYPE,
  R_ACC,
  R_MAJ,
  R_MIN,
  R6
};

struct prog
{
  struct bpf_insn *v;
  size_t n, cap;
};

static size_t
emit (struct prog *p, uint8_t code, uint8_t dst, uint8_t src, int16_t off, int32_t imm)
{
  if (p->n == p->cap)
    {
      p->cap = p->cap ? p->cap * 2 : 64;
      p->v = xrealloc (p->v, p->cap * sizeof *p->v);
    }
  p->v[p->n] = (struct bpf_insn){ .code = code, .dst_reg = dst, .src_reg = src, .off = off, .imm = imm };
  return p->n++;
}

static bool
set_jump (struct prog *p, size_t at, size_t target)
{
  long off = (long)target - (long)at - 1;
  if (off > INT16_MAX)
    return false;
  p->v[at].off = (int16_t)off;
  return true;
}

static bool
unconditional (const struct cg_dev_rule *r)
{
  return r->type == 'a' && r->major < 0 && r->minor < 0;
}

/* r0 |= (reg ^ value), in 32 bits (majors and minors are 32-bit in the
 * context); the first term moves instead of or-ing. */
static void
emit_differs (struct prog *p, int reg, int32_t value, bool first)
{
  int dst = first ? R0 : R6;
  emit (p, BPF_ALU | BPF_MOV | BPF_X, dst, reg, 0, 0);
  emit (p, BPF_ALU | BPF_XOR | BPF_K, dst, 0, 0, value);
  if (!first)
    emit (p, BPF_ALU | BPF_OR | BPF_X, R0, R6, 0, 0);
}

/* One rule's test for one access: jumps past itself when the device does not
 * match; then allows (jump to the next access) or denies (return 0).  Its
 * "allowed" jump is added to *fix for the caller to aim.
 *
 * The test is one jump on r0 = (type ^ T) | (major ^ M) | (minor ^ N), not a
 * jump per number: a jump on the device's own registers teaches the verifier
 * their values on one side, so it would check every later rule once more for
 * each way the earlier ones were left (runc's default rules: 572 insns
 * processed for 128, a millisecond of BPF_PROG_LOAD, most of a sandbox's
 * start).  r0 and r6 are written afresh by each rule: nothing is learnt. */
static void
emit_rule (struct prog *p, const struct cg_dev_rule *r, size_t **fix, size_t *n_fix)
{
  bool first = true;
  if (r->type != 'a')
    emit_differs (p, R_TYPE, r->type == 'b' ? BPF_DEVCG_DEV_BLOCK : BPF_DEVCG_DEV_CHAR, first), first = false;
  if (r->major >= 0)
    emit_differs (p, R_MAJ, (int32_t)r->major, first), first = false;
  if (r->minor >= 0)
    emit_differs (p, R_MIN, (int32_t)r->minor, first), first = false;
  if (!first)
    emit (p, BPF_JMP32 | BPF_JNE | BPF_K, R0, 0, (int16_t)(r->allow ? 1 : 2), 0);
  if (r->allow)
    {
      *fix = xrealloc (*fix, (*n_fix + 1) * sizeof **fix);
      (*fix)[(*n_fix)++] = emit (p, BPF_JMP | BPF_JA, 0, 0, 0, 0);
    }
  else
    {
      emit (p, BPF_ALU64 | BPF_MOV | BPF_K, R0, 0, 0, 0);
      emit (p, BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
    }
}

static const struct
{
  unsigned rule_bit;
  int32_t ctx_bit;
} accesses[] = {
  { CG_DEV_M, BPF_DEVCG_ACC_MKNOD },
  { CG_DEV_R, BPF_DEVCG_ACC_READ },
  { CG_DEV_W, BPF_DEVCG_ACC_WRITE },
};

int
cg_bpf_devices_prog (const struct cg_dev_rule *rules, size_t n, struct bpf_insn **out, size_t *len,
                     hk_err *err)
{
  struct prog p = { 0 };
  emit (&p, BPF_LDX | BPF_W | BPF_MEM, R_TYPE, R1, offsetof (struct bpf_cgroup_dev_ctx, access_type), 0);
  emit (&p, BPF_ALU64 | BPF_MOV | BPF_X, R_ACC, R_TYPE, 0, 0);
  emit (&p, BPF_ALU64 | BPF_RSH | BPF_K, R_ACC, 0, 0, 16);
  emit (&p, BPF_ALU64 | BPF_AND | BPF_K, R_TYPE, 0, 0, 0xffff);
  emit (&p, BPF_LDX | BPF_W | BPF_MEM, R_MAJ, R1, offsetof (struct bpf_cgroup_dev_ctx, major), 0);
  emit (&p, BPF_LDX | BPF_W | BPF_MEM, R_MIN, R1, offsetof (struct bpf_cgroup_dev_ctx, minor), 0);
  bool ok = true;
  for (size_t a = 0; a < sizeof accesses / sizeof *accesses && ok; a++)
    {
      cleanup_free size_t *fix = NULL;
      size_t n_fix = 0;
      /* Not asked for: nothing to decide. */
      emit (&p, BPF_ALU64 | BPF_MOV | BPF_X, R0, R_ACC, 0, 0);
      emit (&p, BPF_ALU64 | BPF_AND | BPF_K, R0, 0, 0, accesses[a].ctx_bit);
      fix = xmalloc (sizeof *fix);
      fix[n_fix++] = emit (&p, BPF_JMP | BPF_JEQ | BPF_K, R0, 0, 0, 0);
      /* Last match wins: test the rules from the last; an unconditional
       * one ends the list (those before it can never decide). */
      for (size_t i = n; i-- > 0;)
        {
          if (!(rules[i].access & accesses[a].rule_bit))
            continue;
          emit_rule (&p, &rules[i], &fix, &n_fix);
          if (unconditional (&rules[i]))
            break;
        }
      for (size_t i = 0; i < n_fix && ok; i++)
        ok = set_jump (&p, fix[i], p.n);
    }
  emit (&p, BPF_ALU64 | BPF_MOV | BPF_K, R0, 0, 0, 1);
  emit (&p, BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
  if (!ok || p.n > 4096)
    {
      free (p.v);
      return err_set (err, E2BIG, "linux.resources.devices: too many rules for the eBPF device filter");
    }
  *out = p.v;
  *len = p.n;
  return 0;
}

static int
sys_bpf (int cmd, union bpf_attr *attr)
{
  return (int)syscall (SYS_bpf, cmd, attr, sizeof *attr);
}

static void
load_attr (union bpf_attr *attr, const struct bpf_insn *prog, size_t len)
{
  memset (attr, 0, sizeof *attr);
  attr->prog_type = BPF_PROG_TYPE_CGROUP_DEVICE;
  attr->insns = (uintptr_t)prog;
  attr->insn_cnt = (uint32_t)len;
  attr->license = (uintptr_t) "GPL"; /* calls no helper: the license checks nothing */
}

long
cg_bpf_devices_walk (const struct bpf_insn *prog, size_t len)
{
  static char log[65536];
  union bpf_attr attr;
  load_attr (&attr, prog, len);
  attr.log_buf = (uintptr_t)log;
  attr.log_size = sizeof log;
  attr.log_level = 4; /* BPF_LOG_STATS: "processed N insns ..." */
  log[0] = '\0';
  int fd = sys_bpf (BPF_PROG_LOAD, &attr);
  if (fd < 0)
    return -1;
  close (fd);
  const char *at = strstr (log, "processed ");
  return at ? strtol (at + strlen ("processed "), NULL, 10) : -1;
}

int
cg_bpf_devices_load (const struct bpf_insn *prog, size_t len, int *fd, hk_err *err)
{
  static char log[16384];
  union bpf_attr attr;
  load_attr (&attr, prog, len);
  *fd = sys_bpf (BPF_PROG_LOAD, &attr);
  if (*fd >= 0)
    return 0;
  int e = errno;
  if (e == EPERM || e == EACCES)
    return err_code (err, e,
                     "linux.resources.devices: loading the eBPF device filter needs CAP_BPF and "
                     "CAP_SYS_ADMIN (or CAP_SYS_ADMIN)");
  /* Load again with the verifier's log, for its last line. */
  log[0] = '\0';
  attr.log_buf = (uintptr_t)log;
  attr.log_size = sizeof log;
  attr.log_level = 1;
  int again = sys_bpf (BPF_PROG_LOAD, &attr);
  if (again >= 0)
    {
      *fd = again;
      return 0;
    }
  size_t l = strlen (log);
  while (l && log[l - 1] == '\n')
    log[--l] = '\0';
  const char *last = strrchr (log, '\n');
  return err_code (err, e, "linux.resources.devices: the kernel refused the eBPF device filter (%s)",
                   last ? last + 1 : log);
}

int
cg_bpf_devices_attach (const char *dir, const struct oci_spec *spec, hk_err *err)
{
  cleanup_free struct cg_dev_rule *rules = NULL;
  cleanup_free struct bpf_insn *prog = NULL;
  size_t n, len;
  cleanup_close int prog_fd = -1, dir_fd = -1;
  if (cg_device_rules (spec, &rules, &n) < 0 || cg_bpf_devices_prog (rules, n, &prog, &len, err) < 0
      || cg_bpf_devices_load (prog, len, &prog_fd, err) < 0)
    return -1;
  dir_fd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0)
    return err_sys (err, "open %s", dir);
  union bpf_attr attr;
  memset (&attr, 0, sizeof attr);
  attr.target_fd = (uint32_t)dir_fd;
  attr.attach_bpf_fd = (uint32_t)prog_fd;
  attr.attach_type = BPF_CGROUP_DEVICE;
  attr.attach_flags = BPF_F_ALLOW_MULTI;
  if (sys_bpf (BPF_PROG_ATTACH, &attr) < 0)
    return err_sys (err, "linux.resources.devices: attach the eBPF device filter to %s", dir);
  /* Attached, the program lives as long as the cgroup; our fds may go. */
  return 0;
}
