/* exec_internal: hako's side of one exec, shared by the planning
 * (exec_plan.c) and the waiting (exec.c).  For runtime/exec/exec*.c only. */
#ifndef HAKO_RUNTIME_EXEC_INTERNAL_H
#define HAKO_RUNTIME_EXEC_INTERNAL_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/err.h"
#include "oci/spec.h"
#include "oci/state.h"
#include "runtime/build/console.h"
#include "runtime/cgroup/cgroup.h"
#include "runtime/confine/userdb.h"
#include "runtime/exec/exec.h"
#include "runtime/exec/exec_enter.h"
#include "runtime/exec/exec_tree.h"
#include "runtime/state/store.h"

/* What an exec result says the command used (wall time, CPU, peak memory,
 * OOM kills: issue 36) costs a few reads of cgroup files a command, and an
 * exec slot (runtime/cgroup/cgroup_slot.c) where the memory controller is
 * v1.  -DHAKO_NO_EXEC_ACCOUNTING compiles it out, for the bench row that
 * measures that cost (tests/bench/exec.sh, `make bench`'s
 * tests/bench/hako-noacct); never in a hako that is installed. */
#ifdef HAKO_NO_EXEC_ACCOUNTING
#define EXEC_ACCOUNTING 0
#else
#define EXEC_ACCOUNTING 1
#endif

/* hako's side of one exec. */
struct exec_ctx
{
  const struct exec_opts *o; /* &opts */
  struct exec_opts opts;     /* the caller's, with the sandbox's defaults (max_output) */
  struct exec_plan plan;
  struct oci_state *state;
  struct oci_spec *spec;
  struct userdb_user user;
  char **env;         /* the merged environment (plan.proc.env) */
  char **cap_sets[3]; /* --cap: effective, permitted, ambient as planned */
  gid_t *gids;        /* --additional-gids with the user's groups */
  struct landlock_plan *landlock;
  struct seccomp_prog *seccomp;
  char *state_dir; /* <root>/<id>: the deadline's and stop's records */
  /* The oom_kill count read before and after (exec_watch says how). */
  char *oom_dir;
  bool oom_v2, oom_slot;
  uint64_t oom_before;
  struct cg_mem_slot slot; /* the command's own v1 memory cgroup, held; fd -1: none */
  uint64_t paused_ms;      /* --ignore-paused: how long the sandbox stayed paused first */
  /* Running: */
  uint64_t t0;
  pid_t child; /* hako's child: subreaper, or (--detach) command */
  int child_pidfd;
  int cmd_pidfd; /* the command's, for passing signals on */
  int sigfd;
  bool masked;
  sigset_t oldmask;
  uint64_t seen[2];   /* bytes read from stdout, stderr */
  bool failed;        /* errp brought a setup failure */
  bool helper_killed; /* the subreaper was SIGKILLed from inside */
  struct enter_err failure;
  int console_hako;           /* relay: hako's end of the terminal's socket, or -1 */
  struct console_relay relay; /* relay.master -1: none */
  char *tree;                 /* no mount namespace of its own: where hako built its root */
  /* An attached command's tree in a cgroup of its own, in place of the
   * subreaper (runtime/exec_tree.h); pt.dir_fd -1 when it has none. */
  struct exec_tree pt;
};

/* Open the sandbox, check it runs, and decide everything the joiner needs:
 * x->plan, the cgroups, the process, the terminal and the root. */
int plan_exec (const struct store *st, struct exec_ctx *x, hk_err *err);
/* The oom_kill count w names (exec_watch), false when there is none. */
bool exec_oom_count (const struct exec_watch *w, uint64_t *n);

#endif
