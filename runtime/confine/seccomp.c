/* seccomp: the spec's linux.seccomp compiled to BPF in the parent (never in
 * the child's hot path) and installed by the child as the very last step. */
#include "runtime/confine/seccomp.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "lib/log.h"
#include "lib/syscalls.h"
#include "lib/util.h"

struct seccomp_prog
{
  struct sock_filter *insns;
  unsigned short len;
  unsigned int flags; /* SECCOMP_FILTER_FLAG_*, passed to seccomp(2) */
  /* No set-id files (a read-write idmapped bind: attach_setid), installed
   * before this one; NULL when absent. */
  struct seccomp_prog *setid;
  /* sandbox.seccomp.allow compiled: installed after this one (see
   * seccomp_install); NULL when absent. */
  struct seccomp_prog *narrow;
};

/* The kernel refuses longer programs (BPF_MAXINSNS); say so at create. */
#define MAX_INSNS 4096

/* ---- names --------------------------------------------------------------- */

struct action_name
{
  const char *name;
  uint32_t action; /* libseccomp's value, which is the kernel's SECCOMP_RET_* */
  bool with_errno; /* errnoRet becomes the action's data */
};

/* SCMP_ACT_KILL is the old name of KILL_THREAD.  SCMP_ACT_NOTIFY is absent:
 * it needs a listener (listenerPath) to hand the notification fd to, which
 * hako does not have; prepare names it instead of calling it unknown. */
static const struct action_name actions[] = {
  { "SCMP_ACT_KILL", SCMP_ACT_KILL_THREAD, false },
  { "SCMP_ACT_KILL_THREAD", SCMP_ACT_KILL_THREAD, false },
  { "SCMP_ACT_KILL_PROCESS", SCMP_ACT_KILL_PROCESS, false },
  { "SCMP_ACT_TRAP", SCMP_ACT_TRAP, false },
  { "SCMP_ACT_ERRNO", SCMP_ACT_ERRNO (0), true },
  { "SCMP_ACT_TRACE", SCMP_ACT_TRACE (0), true },
  { "SCMP_ACT_ALLOW", SCMP_ACT_ALLOW, false },
  { "SCMP_ACT_LOG", SCMP_ACT_LOG, false },
};

static const struct
{
  const char *name;
  enum scmp_compare op;
} operators[] = {
  { "SCMP_CMP_NE", SCMP_CMP_NE },
  { "SCMP_CMP_LT", SCMP_CMP_LT },
  { "SCMP_CMP_LE", SCMP_CMP_LE },
  { "SCMP_CMP_EQ", SCMP_CMP_EQ },
  { "SCMP_CMP_GE", SCMP_CMP_GE },
  { "SCMP_CMP_GT", SCMP_CMP_GT },
  { "SCMP_CMP_MASKED_EQ", SCMP_CMP_MASKED_EQ },
};

/* WAIT_KILLABLE_RECV only changes how a notifying syscall waits for its
 * listener; with NOTIFY refused it has nothing to act on and is accepted as
 * a no-op (the kernel would refuse it without a listener). */
static const struct
{
  const char *name;
  unsigned int flag;
} filter_flags[] = {
  { "SECCOMP_FILTER_FLAG_TSYNC", SECCOMP_FILTER_FLAG_TSYNC },
  { "SECCOMP_FILTER_FLAG_LOG", SECCOMP_FILTER_FLAG_LOG },
  { "SECCOMP_FILTER_FLAG_SPEC_ALLOW", SECCOMP_FILTER_FLAG_SPEC_ALLOW },
  { "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV", 0 },
};

#define N_OF(a) (sizeof (a) / sizeof *(a))

/* PATH.FIELD is the JSON path for messages: ".linux.seccomp.syscalls[3]"
 * and "action", or ".linux.seccomp" and "defaultAction". */
static int
parse_action (const char *path, const char *field, const char *name, const char *errno_field, bool has_errno,
              unsigned int errno_ret, uint32_t *out, hk_err *err)
{
  if (strcmp (name, "SCMP_ACT_NOTIFY") == 0)
    return err_set (err, ENOTSUP,
                    "%s.%s: SCMP_ACT_NOTIFY needs a seccomp agent (listenerPath), which hako does "
                    "not support",
                    path, field);
  for (size_t i = 0; i < N_OF (actions); i++)
    {
      if (strcmp (name, actions[i].name) != 0)
        continue;
      *out = actions[i].action;
      /* As runc: errnoRet is the data of ERRNO and TRACE (EPERM when
       * absent) and means nothing to the other actions. */
      if (actions[i].with_errno)
        {
          /* The kernel clamps a larger value to MAX_ERRNO: refuse rather
           * than return something else than asked. */
          if (has_errno && errno_ret > 4095)
            return err_set (err, EINVAL, "%s.%s: %u is not an errno (at most 4095)", path, errno_field,
                            errno_ret);
          *out |= has_errno ? errno_ret : EPERM;
        }
      return 0;
    }
  return err_set (err, EINVAL, "%s.%s: unknown action \"%s\"", path, field, name);
}

/* "SCMP_ARCH_X86_64" -> libseccomp's token; 0 when unknown. */
static uint32_t
arch_token (const char *name)
{
  if (!str_has_prefix (name, "SCMP_ARCH_") || strlen (name) > 40)
    return 0;
  char lower[48];
  size_t n = 0;
  for (const char *s = name + strlen ("SCMP_ARCH_"); *s; s++)
    lower[n++] = (char)tolower ((unsigned char)*s);
  lower[n] = '\0';
  return n ? seccomp_arch_resolve_name (lower) : 0;
}

/* ---- what this kernel can do --------------------------------------------- */

/* Fail closed, before clone: an action the kernel lacks would otherwise
 * surface as a load error in the child, or not at all. */
static int
check_kernel_action (const char *path, const char *field, const char *name, uint32_t action, hk_err *err)
{
  uint32_t ret = action & SECCOMP_RET_ACTION_FULL;
  if (sys_seccomp (SECCOMP_GET_ACTION_AVAIL, 0, &ret) == 0)
    return 0;
  if (errno == ENOSYS)
    return err_set (err, ENOSYS, "%s: this kernel has no seccomp filter support", path);
  return err_code (err, errno, "%s.%s: this kernel cannot enforce %s", path, field, name);
}

/* A filter load with a NULL program fails with EFAULT once the flags are
 * understood, EINVAL when they are not: a probe that installs nothing. */
static int
check_kernel_flags (unsigned int flags, hk_err *err)
{
  if (flags == 0 || (sys_seccomp (SECCOMP_SET_MODE_FILTER, flags, NULL) < 0 && errno == EFAULT))
    return 0;
  return err_code (err, errno, ".linux.seccomp.flags: this kernel does not support flags 0x%x", flags);
}

/* ---- compile --------------------------------------------------------------- */

static int
add_architectures (scmp_filter_ctx ctx, char *const *archs, hk_err *err)
{
  for (size_t i = 0; archs && archs[i]; i++)
    {
      int rc = seccomp_arch_add (ctx, arch_token (archs[i]));
      if (rc < 0 && rc != -EEXIST)
        return err_code (err, -rc, ".linux.seccomp.architectures[%zu]: add %s", i, archs[i]);
    }
  return 0;
}

static int
parse_flags (char *const *names, unsigned int *flags, hk_err *err)
{
  *flags = 0;
  for (size_t i = 0; names && names[i]; i++)
    {
      size_t j = 0;
      while (j < N_OF (filter_flags) && strcmp (names[i], filter_flags[j].name) != 0)
        j++;
      if (j == N_OF (filter_flags))
        return err_set (err, EINVAL, ".linux.seccomp.flags[%zu]: unknown flag \"%s\"", i, names[i]);
      *flags |= filter_flags[j].flag;
    }
  return 0;
}

static int
parse_conditions (const struct oci_seccomp_rule *r, const char *path, struct scmp_arg_cmp *conds,
                  bool *same_arg_twice, hk_err *err)
{
  unsigned int seen = 0;
  *same_arg_twice = false;
  for (size_t i = 0; i < r->n_args; i++)
    {
      const struct oci_seccomp_arg *a = &r->args[i];
      size_t j = 0;
      while (j < N_OF (operators) && strcmp (a->op, operators[j].name) != 0)
        j++;
      if (j == N_OF (operators))
        return err_set (err, EINVAL, "%s.args[%zu].op: unknown operator \"%s\"", path, i, a->op);
      if (a->index > 5)
        return err_set (err, EINVAL, "%s.args[%zu].index: %u is not an argument (0 to 5)", path, i, a->index);
      if (seen & (1U << a->index))
        *same_arg_twice = true;
      seen |= 1U << a->index;
      /* MASKED_EQ: (arg & value) == valueTwo; the others compare with value. */
      conds[i] = (struct scmp_arg_cmp){
        .arg = a->index, .op = operators[j].op, .datum_a = a->value, .datum_b = a->value_two
      };
    }
  return 0;
}

/* One syscalls[] entry: its action and conditions (conds has n_args
 * slots). */
static int
parse_rule (const struct oci_seccomp_rule *r, const char *path, uint32_t *action, struct scmp_arg_cmp *conds,
            bool *split, hk_err *err)
{
  if (parse_action (path, "action", r->action, "errnoRet", r->has_errno_ret, r->errno_ret, action, err) < 0)
    return -1;
  return parse_conditions (r, path, conds, split, err);
}

/* Everything a profile can get wrong, on any kernel, before anything is
 * compiled: the first malformed entry is the error. */
static int
validate (const struct oci_seccomp *s, uint32_t *default_action, unsigned int *flags, hk_err *err)
{
  if (parse_action (".linux.seccomp", "defaultAction", s->default_action, "defaultErrnoRet",
                    s->has_default_errno_ret, s->default_errno_ret, default_action, err)
          < 0
      || parse_flags (s->flags, flags, err) < 0)
    return -1;
  for (size_t i = 0; s->architectures && s->architectures[i]; i++)
    if (arch_token (s->architectures[i]) == 0)
      return err_set (err, EINVAL, ".linux.seccomp.architectures[%zu]: unknown architecture \"%s\"", i,
                      s->architectures[i]);
  for (size_t i = 0; i < s->n_syscalls; i++)
    {
      const struct oci_seccomp_rule *r = &s->syscalls[i];
      cleanup_free char *path = xasprintf (".linux.seccomp.syscalls[%zu]", i);
      cleanup_free struct scmp_arg_cmp *conds = xcalloc (r->n_args ? r->n_args : 1, sizeof *conds);
      uint32_t action;
      bool split;
      if (parse_rule (r, path, &action, conds, &split, err) < 0)
        return -1;
    }
  return 0;
}

/* One syscalls[] entry, validated.  Its conditions are ANDed, except that
 * several on the same argument become one rule each (ORed), which libseccomp
 * cannot express otherwise and which is what runc and crun do: profiles
 * written for them mean it. */
static int
add_rule (scmp_filter_ctx ctx, uint32_t default_action, const struct oci_seccomp_rule *r, size_t idx,
          hk_err *err)
{
  cleanup_free char *path = xasprintf (".linux.seccomp.syscalls[%zu]", idx);
  cleanup_free struct scmp_arg_cmp *conds = xcalloc (r->n_args ? r->n_args : 1, sizeof *conds);
  uint32_t action;
  bool split;
  if (parse_rule (r, path, &action, conds, &split, err) < 0
      || check_kernel_action (path, "action", r->action, action, err) < 0)
    return -1;
  /* libseccomp refuses a rule whose action is the default one; it would
   * change nothing (runc skips it the same way). */
  if (action == default_action)
    return 0;
  for (size_t n = 0; r->names[n]; n++)
    {
      int nr = seccomp_syscall_resolve_name (r->names[n]);
      if (nr == __NR_SCMP_ERROR)
        {
          /* As runc: a profile names syscalls of newer kernels and other
           * architectures; those this libseccomp does not know are skipped. */
          log_debug ("%s: unknown syscall \"%s\" skipped", path, r->names[n]);
          continue;
        }
      int rc = 0;
      if (!split)
        rc = seccomp_rule_add_array (ctx, action, nr, r->n_args, conds);
      else
        for (size_t i = 0; i < r->n_args && rc == 0; i++)
          rc = seccomp_rule_add_array (ctx, action, nr, 1, &conds[i]);
      if (rc < 0)
        return err_code (err, -rc, "%s: syscall \"%s\"", path, r->names[n]);
    }
  return 0;
}

/* libseccomp 2.5 exports only to an fd: a memfd, read back. */
static int
export_bpf (scmp_filter_ctx ctx, struct seccomp_prog *p, hk_err *err)
{
  cleanup_close int fd = memfd_create ("hako-seccomp", MFD_CLOEXEC);
  if (fd < 0)
    return err_sys (err, "seccomp: memfd_create");
  int rc = seccomp_export_bpf (ctx, fd);
  if (rc < 0)
    return err_code (err, -rc, "seccomp: export the filter");
  struct stat st;
  if (fstat (fd, &st) < 0)
    return err_sys (err, "seccomp: fstat");
  size_t len = (size_t)st.st_size / sizeof (struct sock_filter);
  if (len == 0 || len * sizeof (struct sock_filter) != (size_t)st.st_size)
    return err_set (err, EINVAL, "seccomp: the exported filter has a bad size (%lld bytes)",
                    (long long)st.st_size);
  if (len > MAX_INSNS)
    return err_set (err, E2BIG,
                    ".linux.seccomp: the filter compiles to %zu BPF instructions, more than the "
                    "kernel's limit of %d",
                    len, MAX_INSNS);
  p->insns = xmalloc (len * sizeof *p->insns);
  size_t got = 0;
  while (got < (size_t)st.st_size)
    {
      ssize_t n = pread (fd, (char *)p->insns + got, st.st_size - got, got);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return err_sys (err, "seccomp: read the exported filter");
      got += n;
    }
  p->len = (unsigned short)len;
  return 0;
}

/* runc's ENOSYS stub: with a defaultAction that is an errno, a native
 * syscall numbered above every syscall the rules name (one newer than the
 * profile) fails with ENOSYS instead, so that a libc trying a new syscall
 * (clone3, openat2, faccessat2) falls back to the old one rather than
 * taking EPERM as the answer.  It is denied either way: the stub only
 * changes the errno of calls the filter would refuse, and it leaves other
 * architectures' entries and the x32 range to the filter. */
static int
prepend_enosys (const struct oci_seccomp *s, uint32_t def, struct seccomp_prog *p, hk_err *err)
{
#if defined(__x86_64__)
  if ((def & SECCOMP_RET_ACTION_FULL) != SECCOMP_RET_ERRNO)
    return 0;
  int max = -1;
  for (size_t i = 0; i < s->n_syscalls; i++)
    for (char **n = s->syscalls[i].names; n && *n; n++)
      {
        int nr = seccomp_syscall_resolve_name_arch (SCMP_ARCH_X86_64, *n);
        if (nr > max)
          max = nr;
      }
  if (max < 0)
    return 0;
  const struct sock_filter stub[] = {
    BPF_STMT (BPF_LD | BPF_W | BPF_ABS, 4), /* seccomp_data.arch */
    BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 0, 4),
    BPF_STMT (BPF_LD | BPF_W | BPF_ABS, 0),                 /* seccomp_data.nr */
    BPF_JUMP (BPF_JMP | BPF_JGE | BPF_K, 0x40000000, 2, 0), /* x32: the filter's */
    BPF_JUMP (BPF_JMP | BPF_JGT | BPF_K, (uint32_t)max, 0, 1),
    BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
  };
  size_t n = sizeof stub / sizeof *stub;
  if (p->len + n > MAX_INSNS)
    return err_set (err, E2BIG,
                    ".linux.seccomp: the filter compiles to more than the kernel's limit of %d "
                    "BPF instructions",
                    MAX_INSNS);
  struct sock_filter *all = xmalloc ((p->len + n) * sizeof *all);
  memcpy (all, stub, sizeof stub);
  memcpy (all + n, p->insns, p->len * sizeof *all);
  free (p->insns);
  p->insns = all;
  p->len = (unsigned short)(p->len + n);
#else
  (void)s, (void)def, (void)p, (void)err;
#endif
  return 0;
}

static int
compile (const struct oci_seccomp *s, struct seccomp_prog *p, hk_err *err)
{
  uint32_t def;
  if (validate (s, &def, &p->flags, err) < 0
      || check_kernel_action (".linux.seccomp", "defaultAction", s->default_action, def, err) < 0
      || check_kernel_flags (p->flags, err) < 0)
    return -1;
  scmp_filter_ctx ctx = seccomp_init (def);
  if (ctx == NULL)
    return err_set (err, EINVAL, ".linux.seccomp.defaultAction: libseccomp refuses \"%s\"",
                    s->default_action);
  int rc;
  /* A syscall made through another architecture's entry (int 0x80 on
   * x86_64, the x32 bit) would otherwise slip past rules written for the
   * native numbers; whatever defaultAction says, a foreign architecture not
   * listed in "architectures" kills the process.  Binary-tree dispatch
   * keeps the per-syscall cost flat as the rules grow. */
  if ((rc = seccomp_attr_set (ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS)) < 0
      || (rc = seccomp_attr_set (ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2)) < 0)
    {
      seccomp_release (ctx);
      return err_code (err, -rc, "seccomp: filter attributes");
    }
  int r = add_architectures (ctx, s->architectures, err);
  for (size_t i = 0; r == 0 && i < s->n_syscalls; i++)
    r = add_rule (ctx, def, &s->syscalls[i], i, err);
  if (r == 0)
    r = export_bpf (ctx, p, err);
  if (r == 0)
    r = prepend_enosys (s, def, p, err);
  seccomp_release (ctx);
  return r;
}

/* A listenerPath is an agent waiting for the filter's notification fd:
 * refused, not ignored, so that the agent is not left waiting forever. */
static int
check_listener (const struct oci_seccomp *s, hk_err *err)
{
  if (s->listener_path && s->listener_path[0])
    return err_set (err, ENOTSUP,
                    ".linux.seccomp.listenerPath: hako does not hand a seccomp notification fd to an "
                    "agent (not supported)");
  return 0;
}

static int
prepare_main (const struct oci_spec *spec, struct seccomp_prog **out, hk_err *err)
{
  *out = NULL;
  if (spec->linux.seccomp == NULL)
    return 0;
  if (check_listener (spec->linux.seccomp, err) < 0)
    return -1;
  struct seccomp_prog *p = xcalloc (1, sizeof *p);
  if (compile (spec->linux.seccomp, p, err) < 0)
    {
      seccomp_prog_free (p);
      return -1;
    }
  log_debug ("seccomp: %u BPF instructions, flags 0x%x", p->len, p->flags);
  *out = p;
  return 0;
}

/* linux.seccomp's unconditional errno rules for the syscalls allow does
 * not name, appended to rules: the narrowing filter gives those syscalls
 * the errno hako's filter gives them (clone3's ENOSYS, which glibc falls
 * back to clone from) rather than EPERM, which would win the tie. */
static size_t
mirror_denials (const struct oci_seccomp *base, char *const *allow, struct oci_seccomp_rule *rules, size_t n)
{
  for (size_t i = 0; base && i < base->n_syscalls; i++)
    {
      const struct oci_seccomp_rule *r = &base->syscalls[i];
      if (r->n_args != 0 || strcmp (r->action, "SCMP_ACT_ERRNO") != 0)
        continue;
      size_t k = 0, m = 0;
      while (r->names[k])
        k++;
      char **names = xcalloc (k + 1, sizeof *names);
      for (k = 0; r->names[k]; k++)
        if (!strv_contains (allow, r->names[k]))
          names[m++] = xstrdup (r->names[k]);
      if (m == 0)
        {
          free (names);
          continue;
        }
      rules[n++] = (struct oci_seccomp_rule){
        .names = names, .action = r->action, .has_errno_ret = r->has_errno_ret, .errno_ret = r->errno_ret
      };
    }
  return n;
}

/* A learned profile's allow-list (sandbox.seccomp.allow) as a filter of its
 * own: EPERM for every syscall it does not name (ENOSYS past the highest it
 * names, as runc's stub), the native architecture only.  Installed after
 * linux.seccomp rather than merged into it: one libseccomp filter cannot
 * say "allowed unless these arguments" under a deny-by-default (an
 * unconditional rule replaces a syscall's conditional ones), and a bare
 * list in place of hako's filter lost its argument rules — AF_VSOCK opened
 * and clone3 made a user and network namespace under a learned profile. */
static int
attach_narrow (const struct oci_spec *spec, struct seccomp_prog **out, hk_err *err)
{
  char **allow = spec->sandbox.seccomp_allow;
  if (allow == NULL)
    return 0;
  const struct oci_seccomp *base = spec->linux.seccomp;
  struct oci_seccomp_rule *rules = xcalloc (1 + (base ? base->n_syscalls : 0), sizeof *rules);
  size_t n = 0;
  if (allow[0])
    rules[n++] = (struct oci_seccomp_rule){ .names = allow, .action = (char *)"SCMP_ACT_ALLOW" };
  size_t own = n;
  n = mirror_denials (base, allow, rules, n);
  struct oci_seccomp s = { .default_action = (char *)"SCMP_ACT_ERRNO",
                           .has_default_errno_ret = true,
                           .default_errno_ret = EPERM,
                           .syscalls = rules,
                           .n_syscalls = n };
  struct seccomp_prog *p = xcalloc (1, sizeof *p);
  int r = compile (&s, p, err);
  for (size_t i = own; i < n; i++)
    strv_free (rules[i].names);
  free (rules);
  if (r < 0)
    {
      seccomp_prog_free (p);
      seccomp_prog_free (*out);
      *out = NULL;
      return err_prefix (err, ".sandbox.seccomp.allow");
    }
  if (*out == NULL)
    *out = xcalloc (1, sizeof **out);
  (*out)->narrow = p;
  return 0;
}

/* ---- no set-id files: a read-write idmapped bind ----------------------------- */

/* What a sandbox writes through a read-write idmapped bind is owned on the
 * host by the files' own owners: root's, in a directory of root's.  A
 * set-id program made there would run with that owner's privileges for
 * anyone on the host who runs it (the bind is nosuid inside only), so such
 * a sandbox makes no set-id file anywhere: each call that puts a mode on a
 * file fails with EPERM when the mode has S_ISUID or S_ISGID.  (A file
 * capability is the other way: validate.c refuses CAP_SETFCAP.) */
static const struct
{
  const char *name;
  unsigned mode_arg;
  int flags_arg; /* the open flags, which decide whether mode counts; -1: it always does */
} setid_calls[] = {
  { "chmod", 1, -1 },   { "fchmod", 1, -1 }, { "fchmodat", 2, -1 }, { "mknod", 1, -1 },
  { "mknodat", 2, -1 }, { "creat", 1, -1 },  { "open", 2, 1 },      { "openat", 3, 2 },
};

/* seccomp sees registers only: a mode in memory (openat2's struct open_how,
 * io_uring's submissions) cannot be checked, and fchmodat2 is newer than
 * Debian 12's libseccomp.  Those fail with ENOSYS, which libcs and io_uring
 * users fall back from (to openat, fchmodat, epoll), on every architecture
 * this host runs: their numbers are the same on each, x32's with bit 30. */
static const struct sock_filter setid_stub[] = {
  BPF_STMT (BPF_LD | BPF_W | BPF_ABS, 4), /* seccomp_data.arch */
  BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 4, 0),
  BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_I386, 3, 0),
  BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_AARCH64, 2, 0),
  BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_ARM, 1, 0),
  BPF_STMT (BPF_JMP | BPF_JA, 7),
  BPF_STMT (BPF_LD | BPF_W | BPF_ABS, 0), /* seccomp_data.nr */
  BPF_STMT (BPF_ALU | BPF_AND | BPF_K, ~0x40000000U),
  BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, 437 /* openat2 */, 3, 0),
  BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, 452 /* fchmodat2 */, 2, 0),
  BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, 425 /* io_uring_setup */, 1, 0),
  BPF_STMT (BPF_JMP | BPF_JA, 1),
  BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
};

/* One EPERM rule per set-id bit (and per creating open flag). */
static int
add_setid_rules (scmp_filter_ctx ctx, size_t i)
{
  static const unsigned bits[] = { S_ISUID, S_ISGID };
  static const unsigned creating[] = { O_CREAT, __O_TMPFILE };
  int nr = seccomp_syscall_resolve_name (setid_calls[i].name), rc = 0;
  if (nr == __NR_SCMP_ERROR)
    return 0;
  for (size_t b = 0; b < N_OF (bits) && rc == 0; b++)
    for (size_t f = 0; f < (setid_calls[i].flags_arg < 0 ? 1 : N_OF (creating)) && rc == 0; f++)
      {
        struct scmp_arg_cmp c[2] = {
          { .arg = setid_calls[i].mode_arg,
            .op = SCMP_CMP_MASKED_EQ,
            .datum_a = bits[b],
            .datum_b = bits[b] },
          { .arg = (unsigned)setid_calls[i].flags_arg,
            .op = SCMP_CMP_MASKED_EQ,
            .datum_a = creating[f],
            .datum_b = creating[f] },
        };
        rc = seccomp_rule_add_array (ctx, SCMP_ACT_ERRNO (EPERM), nr, setid_calls[i].flags_arg < 0 ? 1 : 2,
                                     c);
      }
  return rc;
}

static int
compile_setid (struct seccomp_prog *p, hk_err *err)
{
  scmp_filter_ctx ctx = seccomp_init (SCMP_ACT_ALLOW);
  if (ctx == NULL)
    return err_set (err, ENOMEM, "seccomp: the set-id filter");
  /* Every architecture this host can run: one left out would be killed. */
  int rc = seccomp_attr_set (ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
#if defined(__x86_64__)
  if (rc == 0 && (rc = seccomp_arch_add (ctx, SCMP_ARCH_X86)) == -EEXIST)
    rc = 0;
  if (rc == 0 && (rc = seccomp_arch_add (ctx, SCMP_ARCH_X32)) == -EEXIST)
    rc = 0;
#elif defined(__aarch64__)
  if (rc == 0 && (rc = seccomp_arch_add (ctx, SCMP_ARCH_ARM)) == -EEXIST)
    rc = 0;
#endif
  for (size_t i = 0; rc == 0 && i < N_OF (setid_calls); i++)
    rc = add_setid_rules (ctx, i);
  int r = rc < 0 ? err_code (err, -rc, "seccomp: the set-id filter") : export_bpf (ctx, p, err);
  seccomp_release (ctx);
  if (r < 0)
    return -1;
  size_t n = N_OF (setid_stub);
  struct sock_filter *all = xmalloc ((p->len + n) * sizeof *all);
  memcpy (all, setid_stub, sizeof setid_stub);
  memcpy (all + n, p->insns, p->len * sizeof *all);
  free (p->insns);
  p->insns = all;
  p->len = (unsigned short)(p->len + n);
  return 0;
}

static int
attach_setid (const struct oci_spec *spec, struct seccomp_prog **out, hk_err *err)
{
  if (oci_spec_rw_idmap (spec) == NULL)
    return 0;
  struct seccomp_prog *p = xcalloc (1, sizeof *p);
  if (compile_setid (p, err) < 0)
    {
      seccomp_prog_free (p);
      seccomp_prog_free (*out);
      *out = NULL;
      return -1;
    }
  if (*out == NULL)
    *out = xcalloc (1, sizeof **out);
  (*out)->setid = p;
  return 0;
}

int
seccomp_prepare (const struct oci_spec *spec, struct seccomp_prog **out, hk_err *err)
{
  if (prepare_main (spec, out, err) < 0 || attach_setid (spec, out, err) < 0)
    return -1;
  return attach_narrow (spec, out, err);
}

/* ---- cache ------------------------------------------------------------------ */

/* Compiling the default profile costs ~0.5 ms in a fresh process, close to
 * a tenth of `hako run /bin/true`; a content-addressed cache in the data root
 * makes every create after the first read ~2 KB instead.  An entry holds the
 * exact inputs it was compiled from and is used only when they match byte
 * for byte, so a hash collision or a stale entry just means a recompile; a
 * checksum catches a damaged file.  Whoever can write the data root can
 * change what runs in every sandbox anyway (layers, work dirs), so the cache
 * adds no new trust.  Errors (a read-only data root) only skip the cache. */

#define CACHE_FORMAT "hako-seccomp-cache-2" /* 2: the ENOSYS stub */
#define CACHE_MAGIC "hakoSCMP"

struct cache_header
{
  char magic[8];
  uint32_t input_len;
  uint32_t n_insns;
  uint32_t flags;
  uint32_t pad;
  uint64_t sum; /* FNV-1a over the input and the instructions */
};

struct buf
{
  char *p;
  size_t len, cap;
};

static void
buf_put (struct buf *b, const void *data, size_t n)
{
  if (b->len + n > b->cap)
    {
      b->cap = (b->len + n) * 2 + 256;
      b->p = xrealloc (b->p, b->cap);
    }
  memcpy (b->p + b->len, data, n);
  b->len += n;
}

static void
buf_u64 (struct buf *b, uint64_t v)
{
  buf_put (b, &v, sizeof v);
}

/* Length-prefixed, so no two different inputs serialize alike. */
static void
buf_str (struct buf *b, const char *s)
{
  buf_u64 (b, s ? strlen (s) : UINT64_MAX);
  if (s)
    buf_put (b, s, strlen (s));
}

static void
buf_strv (struct buf *b, char *const *v)
{
  size_t n = 0;
  while (v && v[n])
    n++;
  buf_u64 (b, v ? n : UINT64_MAX);
  for (size_t i = 0; i < n; i++)
    buf_str (b, v[i]);
}

/* Everything the compiled program depends on: the profile, and what
 * compiled it for which kernel (libseccomp probes the kernel's API level,
 * and prepare checks the actions this kernel has). */
static void
cache_input (const struct oci_seccomp *s, struct buf *b)
{
  struct utsname u;
  const struct scmp_version *v = seccomp_version ();
  if (uname (&u) < 0)
    memset (&u, 0, sizeof u);
  buf_str (b, CACHE_FORMAT);
  buf_str (b, HAKO_VERSION);
  buf_u64 (b, ((uint64_t)v->major << 32) | (v->minor << 16) | v->micro);
  buf_str (b, u.release);
  buf_str (b, u.version);
  buf_str (b, u.machine);
  buf_str (b, s->default_action);
  buf_u64 (b, s->has_default_errno_ret ? s->default_errno_ret : UINT64_MAX);
  buf_strv (b, s->architectures);
  buf_strv (b, s->flags);
  buf_u64 (b, s->n_syscalls);
  for (size_t i = 0; i < s->n_syscalls; i++)
    {
      const struct oci_seccomp_rule *r = &s->syscalls[i];
      buf_strv (b, r->names);
      buf_str (b, r->action);
      buf_u64 (b, r->has_errno_ret ? r->errno_ret : UINT64_MAX);
      buf_u64 (b, r->n_args);
      for (size_t j = 0; j < r->n_args; j++)
        {
          buf_u64 (b, r->args[j].index);
          buf_u64 (b, r->args[j].value);
          buf_u64 (b, r->args[j].value_two);
          buf_str (b, r->args[j].op);
        }
    }
}

static struct seccomp_prog *
cache_load (const char *path, const struct buf *in)
{
  hk_err ignored;
  cleanup_close int fd = open (path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  cleanup_free char *data = NULL;
  size_t len = 0;
  struct cache_header h;
  if (fd < 0 || fd_read_all (fd, 1 << 20, &data, &len, &ignored) < 0 || len < sizeof h)
    return NULL;
  memcpy (&h, data, sizeof h);
  const char *input = data + sizeof h;
  if (memcmp (h.magic, CACHE_MAGIC, sizeof h.magic) != 0 || h.input_len != in->len || h.n_insns == 0
      || h.n_insns > MAX_INSNS
      || len != sizeof h + h.input_len + (size_t)h.n_insns * sizeof (struct sock_filter)
      || memcmp (input, in->p, in->len) != 0 || fnv1a64 (FNV1A64_BASIS, input, len - sizeof h) != h.sum)
    return NULL;
  struct seccomp_prog *p = xcalloc (1, sizeof *p);
  p->len = (unsigned short)h.n_insns;
  p->flags = h.flags;
  p->insns = xmalloc (p->len * sizeof *p->insns);
  memcpy (p->insns, input + h.input_len, p->len * sizeof *p->insns);
  return p;
}

static void
cache_store (const char *dir, const char *path, const struct buf *in, const struct seccomp_prog *p)
{
  hk_err err;
  struct cache_header h = { .input_len = in->len, .n_insns = p->len, .flags = p->flags };
  struct buf out = { 0 };
  memcpy (h.magic, CACHE_MAGIC, sizeof h.magic);
  buf_put (&out, &h, sizeof h);
  buf_put (&out, in->p, in->len);
  buf_put (&out, p->insns, p->len * sizeof *p->insns);
  h.sum = fnv1a64 (FNV1A64_BASIS, out.p + sizeof h, out.len - sizeof h);
  memcpy (out.p, &h, sizeof h);
  /* 0755 as the rest of the data root (prepare_workdir): the files are 0600. */
  if (mkdir_p (dir, 0755, &err) < 0 || file_write_atomic (path, out.p, out.len, 0600, &err) < 0)
    log_debug ("seccomp cache not written: %s", err.msg);
  free (out.p);
}

int
seccomp_prepare_cached (const struct oci_spec *spec, const char *data_root, struct seccomp_prog **out,
                        hk_err *err)
{
  *out = NULL;
  if (spec->linux.seccomp == NULL || data_root == NULL)
    return seccomp_prepare (spec, out, err);
  /* The cache holds linux.seccomp's program; the allow-list is compiled
   * each time (a list of names, no argument rules). */
  if (check_listener (spec->linux.seccomp, err) < 0)
    return -1;
  struct buf in = { 0 };
  cache_input (spec->linux.seccomp, &in);
  cleanup_free char *dir = xasprintf ("%s/cache/seccomp", data_root);
  cleanup_free char *path
      = xasprintf ("%s/%016llx", dir, (unsigned long long)fnv1a64 (FNV1A64_BASIS, in.p, in.len));
  *out = cache_load (path, &in);
  if (*out == NULL && prepare_main (spec, out, err) == 0)
    cache_store (dir, path, &in, *out);
  free (in.p);
  if (*out == NULL || attach_setid (spec, out, err) < 0)
    return -1;
  return attach_narrow (spec, out, err);
}

/* ---- install --------------------------------------------------------------- */

/* The narrowing filter goes in last (it refuses seccomp(2) itself, so
 * nothing could follow it).  Stacked filters all run and the most
 * restrictive action wins; between two errnos the filter installed last,
 * which is why it repeats hako's errno for what hako refuses outright. */
int
seccomp_install (const struct seccomp_prog *p, hk_err *err)
{
  if (p == NULL)
    return 0;
  /* The set-id filter first: a profile that refuses seccomp(2) itself
   * would refuse it after.  Stacked, its errno wins where the profile
   * allows the call. */
  if (seccomp_install (p->setid, err) < 0)
    return -1;
  struct sock_fprog prog = { .len = p->len, .filter = p->insns };
  if (p->len && sys_seccomp (SECCOMP_SET_MODE_FILTER, p->flags, &prog) < 0)
    {
      if (errno == EACCES)
        return err_sys (err, "seccomp: load the filter (no no_new_privs, and CAP_SYS_ADMIN is gone)");
      return err_sys (err, "seccomp: load the filter");
    }
  return seccomp_install (p->narrow, err);
}

char **
seccomp_flag_names (bool supported_only)
{
  char **v = xcalloc (N_OF (filter_flags) + 1, sizeof *v);
  size_t n = 0;
  hk_err ignored;
  for (size_t i = 0; i < N_OF (filter_flags); i++)
    if (!supported_only || check_kernel_flags (filter_flags[i].flag, &ignored) == 0)
      v[n++] = (char *)filter_flags[i].name;
  return v;
}

void
seccomp_prog_drop_narrow (struct seccomp_prog *p)
{
  if (p == NULL)
    return;
  seccomp_prog_free (p->narrow);
  p->narrow = NULL;
}

void
seccomp_prog_free (struct seccomp_prog *p)
{
  if (p == NULL)
    return;
  seccomp_prog_free (p->setid);
  seccomp_prog_free (p->narrow);
  free (p->insns);
  free (p);
}

size_t
seccomp_prog_len (const struct seccomp_prog *p)
{
  return p ? p->len + seccomp_prog_len (p->setid) + seccomp_prog_len (p->narrow) : 0;
}
