/* The hardening sequence's order (runtime/confine/process.c), for a process with and
 * without no_new_privs: the order both the sandbox's process and every exec
 * take, since both run proc_harden_prepare. */
#include <string.h>

#include "runtime/confine/process.h"
#include "tests/unit/tap.h"

static void
plan_is (bool nnp, const char *want)
{
  struct oci_process p = { .no_new_privileges = nnp };
  const char *names[16];
  size_t n = proc_harden_plan (&p, names, 16);
  char got[256] = "";
  for (size_t i = 0; i < n; i++)
    {
      if (i)
        strcat (got, " ");
      strcat (got, names[i]);
    }
  is_str (got, want, "hardening order with noNewPrivileges %s", nnp ? "true" : "false");
}

/* Where each step stands in the plan, or -1. */
static int
position (bool nnp, const char *step)
{
  struct oci_process p = { .no_new_privileges = nnp };
  const char *names[16];
  size_t n = proc_harden_plan (&p, names, 16);
  for (size_t i = 0; i < n; i++)
    if (strcmp (names[i], step) == 0)
      return (int)i;
  return -1;
}

int
main (void)
{
  plan_is (true,
           "rlimits oom_score_adj apparmor cwd precheck user and caps no_new_privs chdir landlock build");
  plan_is (false, "rlimits oom_score_adj apparmor cwd precheck seccomp user and caps chdir landlock build");
  /* Without no_new_privs, loading a filter needs CAP_SYS_ADMIN: it must go
   * in before the drop, or it would not go in at all. */
  ok (position (false, "seccomp") >= 0 && position (false, "seccomp") < position (false, "user and caps"),
      "without no_new_privs, seccomp goes in before the capability drop");
  /* With it, the filter goes in in proc_harden_final, after execve's last
   * preparations: never in the setup. */
  ok (position (true, "seccomp") < 0, "with no_new_privs, seccomp waits for proc_harden_final");
  /* rlimits and AppArmor need the privileges the drop removes. */
  ok (position (true, "rlimits") < position (true, "user and caps")
          && position (true, "apparmor") < position (true, "user and caps"),
      "rlimits and AppArmor before the user switch");
  ok (position (true, "no_new_privs") > position (true, "user and caps"),
      "no_new_privs after the switch (setuid binaries in the setup are none)");
  ok (position (true, "chdir") > position (true, "user and caps"), "chdir as the process's own user");
  const char *few[2];
  struct oci_process p = { 0 };
  ok (proc_harden_plan (&p, few, 2) == 2, "the plan stops at max");
  return tap_done ();
}
