/* process: the per-process settings applied in the child after pivot_root —
 * hostname, sysctls, rlimits, user, cwd — and the final execve. */

/* The room runtime/confine/ (this is its main header): what holds a process
 * in — capabilities (caps), Landlock (landlock), seccomp (seccomp), the user
 * it runs as, from the sandbox's own /etc/passwd (userdb), the one hardening
 * sequence every process of a sandbox goes through (process), and `run
 * --learn`'s observing filter and learner (learn, learn_probe).  It may use
 * the rooms below it: cgroup, state, node, proxy (tests/style/layers.sh). */
#ifndef HAKO_RUNTIME_PROCESS_H
#define HAKO_RUNTIME_PROCESS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "lib/err.h"
#include "oci/spec.h"
#include "runtime/confine/landlock.h"
#include "runtime/confine/seccomp.h"

int proc_set_hostname (const struct oci_spec *spec, hk_err *err);
/* runc's and crun's rule: an env without HOME gets the home of uid's entry in
 * the sandbox's /etc/passwd (read inside rootfd, an O_PATH fd of its /), or
 * "/" without one. */
void proc_env_default_home (int rootfd, uid_t uid, char ***env);
/* create's check of linux.sysctl: only namespaced sysctls, each with its
 * namespace in the config (kernel.hostname: use .hostname; kernel.domainname
 * must agree with .domainname). */
int proc_sysctls_check (const struct oci_spec *spec, hk_err *err);
/* Writes under /proc/sys of the sandbox's own /proc (call before mnt_finish
 * makes /proc/sys read-only). */
int proc_set_sysctls (const struct oci_spec *spec, hk_err *err);
/* A value above the current hard limit without CAP_SYS_RESOURCE is a clear
 * error naming the limit, not a crash. */
int proc_set_rlimits (const struct oci_process *p, hk_err *err);
int proc_set_oom_score_adj (const struct oci_process *p, hk_err *err);
/* In the parent, before anything is made: a p->apparmorProfile needs
 * AppArmor enabled on the host (else a clear error, never an unconfined
 * process).  In the child: the profile the execve will enter. */
int proc_apparmor_check (const struct oci_process *p, hk_err *err);
int proc_set_apparmor (const struct oci_process *p, hk_err *err);
/* Groups, gid, uid, with the capability sets applied around the switch. */
int proc_set_user_and_caps (const struct oci_process *p, hk_err *err);
/* p->cwd as checked inside the new root before a seccomp filter went in. */
struct proc_cwd
{
  bool checked;
  dev_t dev;
  ino_t ino;
};
/* chdir into p->cwd and check the result is inside the new root; pre (or
 * NULL) is what proc_cwd_precheck found, for when the filter denies getcwd. */
int proc_chdir (const struct oci_process *p, const struct proc_cwd *pre, hk_err *err);
/* Before a seccomp filter that stays for the setup goes in: the same check
 * as root, remembering the directory. */
int proc_cwd_precheck (const struct oci_process *p, struct proc_cwd *pre, hk_err *err);
/* The one hardening sequence, for the sandbox's process (spawn.c) and for
 * every exec (exec_enter.c), in the new root with the process's stdio set:
 *
 *   proc_harden_prepare: rlimits, oom_score_adj, AppArmor; the cwd
 *     check as root (a cwd only root may enter is entered then, as runc);
 *     without no_new_privs seccomp (loading a filter then needs
 *     CAP_SYS_ADMIN, which the drop takes away); user, groups and
 *     capabilities; no_new_privs; chdir; Landlock's ruleset built (a rule
 *     naming a missing path fails here, before anything runs).
 *   proc_harden_final, right before execve: Landlock enforced, then (with
 *     no_new_privs) seccomp, so the filter sees only execve.
 *
 * Allocates nothing: the exec child shares hako's memory (CLONE_VM). */
struct proc_harden
{
  const char *trace; /* HAKO_TRACE's "TRACE: STEP" lines; NULL: none */
  const struct oci_process *proc;
  const struct seccomp_prog *seccomp;   /* NULL: no filter */
  const struct landlock_plan *landlock; /* NULL: no Landlock */
  int ruleset_fd;                       /* proc_harden_prepare's; -1: none */
  struct proc_cwd pre;
};
int proc_harden_prepare (struct proc_harden *h, hk_err *err);
/* with_seccomp false: a builtin (get/put's helper) that runs hako's own code
 * under Landlock, not the command's filter. */
int proc_harden_final (struct proc_harden *h, bool with_seccomp, hk_err *err);
/* The names of the steps proc_harden_prepare takes for P, in order (at most
 * max): what its unit test checks. */
size_t proc_harden_plan (const struct oci_process *p, const char **names, size_t max);

/* Resolve args[0] through the process's PATH as execvp would, inside the new
 * root.  Returns a malloc'ed path, or NULL with err set and *status 127
 * (not found) or 126 (not executable). */
char *proc_find_exec (const struct oci_process *p, int *status, hk_err *err);
/* The same into buf (PATH_MAX is enough), allocating nothing: 0, or -1 as
 * above. */
int proc_find_exec_in (const struct oci_process *p, char *buf, size_t size, int *status, hk_err *err);
/* Close every fd above 2 but the first preserve_fds (3..3+N-1), then
 * execve.  Returns only on failure, with *status 126 or 127. */
int proc_exec (const struct oci_process *p, const char *path, unsigned int preserve_fds, int *status,
               hk_err *err);

#endif
