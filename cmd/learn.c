/* learn: `run --learn OUT` (the learner process and the config edits) and
 * `--profile-file FILE` (a learned profile enforced).  hako-learn(7). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "lib/log.h"
#include "lib/trust.h"
#include "lib/util.h"
#include "oci/learn.h"
#include "oci/state.h"
#include "runtime/learn.h"
#include "runtime/sbxstate.h"

static char *
join_command (char *const *command)
{
  size_t len = 1;
  for (size_t i = 0; command && command[i]; i++)
    len += strlen (command[i]) + 1;
  char *s = xcalloc (1, len), *p = s;
  for (size_t i = 0; command && command[i]; i++)
    p += sprintf (p, "%s%s", i ? " " : "", command[i]);
  return s;
}

/* How the observed run ended: the status its hako sends (foreground), or
 * for a detached run its state's, once the monitor has it (5 s at most);
 * -1 if unknown (a detached exec's command: nothing records it). */
static int
observed_status (int verdict, const char *verb, const char *id)
{
  int status;
  if (read (verdict, &status, sizeof status) == (ssize_t)sizeof status)
    return status;
  if (strcmp (verb, "run") != 0)
    return -1;
  struct store st = { 0 };
  hk_err err = { 0 };
  status = -1;
  if (cmd_store (&st, &err) == 0)
    for (int i = 0; i < 100 && status < 0; i++)
      {
        struct oci_state *s = NULL;
        if (sbx_state (&st, id, &s, &err) == 0 && s->has_exit)
          status = s->exit_status;
        oci_state_free (s);
        if (status < 0)
          usleep (50 * 1000);
      }
  store_fini (&st);
  return status;
}

/* A failed run's accesses are those of a run that did not do its job (a
 * missing file, a refused connect it then gave up on): merged only when
 * asked, so a profile is not widened by what a broken run tried.  True to
 * go on and merge. */
static bool
merge_verdict (const struct cmd_learn *l, int status, const char *verb, const char *id)
{
  if (status == 0 || (status > 0 && l->on_failure))
    return true;
  if (status < 0)
    {
      fprintf (stderr,
               "hako %s: %s: learn: the command's exit status is not known here (detached): what it did "
               "is merged into %s; check the rules below\n",
               verb, id, l->out);
      return true;
    }
  fprintf (stderr,
           "hako %s: %s: learn: the observed run exited %d: nothing learned into %s (a failed run's "
           "accesses are not merged; --learn-on-failure merges them)\n",
           verb, id, status, l->out);
  return false;
}

/* The learner: answer the sandbox's notifications until its last process is
 * gone, then merge what it saw into the profile and say what is new. */
static void __attribute__ ((noreturn))
learner_main (const struct cmd_learn *l, int sock, int net_fd, int verdict, const char *verb, const char *id,
              const char *command)
{
  hk_err err = { 0 };
  struct learn_obs obs = { 0 };
  char **added = NULL;
  /* ^C reaches the whole process group: the sandbox ends on it, and the
   * learner then still has to write down what it saw. */
  signal (SIGINT, SIG_IGN);
  signal (SIGTERM, SIG_IGN);
  signal (SIGHUP, SIG_IGN);
  signal (SIGQUIT, SIG_IGN);
  signal (SIGPIPE, SIG_IGN);
  prctl (PR_SET_NAME, "hako-learn", 0, 0, 0);
  /* Its report goes to stderr; holding stdout would keep a reader of a
   * detached run's output waiting for the sandbox's end. */
  int null = open ("/dev/null", O_WRONLY | O_CLOEXEC);
  if (null >= 0)
    {
      dup2 (null, 1);
      close (null);
    }
  int r = learn_serve (sock, &obs, &err);
  if (r < 0)
    {
      fprintf (stderr, "hako %s: %s: learn: %s\n", verb, id, err.msg);
      _exit (EXIT_HAKO);
    }
  if (r == 0)
    _exit (0); /* the sandbox never started: nothing learned, nothing written */
  /* No process of the sandbox is left, so none can ask the proxy for more. */
  learn_net_collect (net_fd, &obs);
  if (!merge_verdict (l, observed_status (verdict, verb, id), verb, id))
    _exit (0);
  if (oci_learn_update (l->out, obs.recs, obs.n, l->seccomp, command, &added, &err) < 0)
    {
      fprintf (stderr, "hako %s: %s: learn: %s\n", verb, id, err.msg);
      _exit (EXIT_HAKO);
    }
  size_t n = 0;
  while (added[n])
    n++;
  if (n == 0)
    fprintf (
        stderr,
        "hako %s: %s: learned nothing new; %s is unchanged in its rules (%s.notes says why each is there)\n",
        verb, id, l->out, l->out);
  else
    {
      fprintf (stderr, "hako %s: %s: learned %zu new rule(s) into %s (%s.notes says why each is there):\n",
               verb, id, n, l->out, l->out);
      for (size_t i = 0; i < n; i++)
        if (added[i][0] == '!')
          fprintf (stderr, "  ! %s\n", added[i] + 1);
        else
          fprintf (stderr, "  + %s\n", added[i]);
    }
  _exit (0);
}

int
cmd_learn_begin (struct cmd_learn *l, const char *verb, const char *id, char *const *command, hk_err *err)
{
  l->pid = -1;
  l->sock = -1;
  l->verdict = -1;
  if (l->out == NULL)
    return 0;
  if (learn_check (err) < 0)
    return -1;
  if (command == NULL)
    return err_setk (err, ERR_INVALID_ARGUMENT, EINVAL,
                     "--learn needs the command after -- (the profile is learned from that command)");
  int sv[2], vp[2];
  if (pipe2 (vp, O_CLOEXEC) < 0)
    return err_sys (err, "--learn: pipe");
  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
    {
      close (vp[0]);
      close (vp[1]);
      return err_sys (err, "--learn: socketpair");
    }
  /* Where an allowlist sandbox's proxy records what it forwarded. */
  int net_fd = memfd_create ("hako-learn-net", MFD_CLOEXEC);
  if (net_fd < 0)
    {
      close (sv[0]);
      close (sv[1]);
      close (vp[0]);
      close (vp[1]);
      return err_sys (err, "--learn: memfd_create");
    }
  cleanup_free char *cmdline = join_command (command);
  fflush (NULL);
  pid_t pid = fork ();
  if (pid < 0)
    {
      close (sv[0]);
      close (sv[1]);
      close (vp[0]);
      close (vp[1]);
      close (net_fd);
      return err_sys (err, "--learn: fork the learner");
    }
  if (pid == 0)
    {
      close (sv[1]);
      close (vp[1]);
      learner_main (l, sv[0], net_fd, vp[0], verb, id, cmdline);
    }
  close (sv[0]);
  close (vp[0]);
  l->verdict = vp[1];
  l->pid = pid;
  l->sock = sv[1];
  l->link = xcalloc (1, sizeof *l->link);
  l->link->sock = sv[1];
  l->link->all = l->seccomp;
  l->link->net_fd = net_fd;
  return 0;
}

int
cmd_apply_learn (struct config_src *cfg, const struct cmd_learn *l, const char *verb, const char *id,
                 char *const *args, hk_err *err)
{
  if (l->out == NULL)
    return 0;
  bool net = cfg->spec
             && (cfg->spec->sandbox.net_mode == HAKO_NET_ALLOWLIST
                 || cfg->spec->sandbox.net_mode == HAKO_NET_DENYLIST);
  cleanup_free char *note = xasprintf (
      "learning into %s: unconfined in Landlock's filesystem and TCP rules%s (observed, not enforced)%s",
      l->out, net ? " and the network allow-list" : "",
      l->seccomp ? "; seccomp: hako's filter enforced, the syscalls it lets through observed" : "");
  char *json;
  size_t len;
  if (oci_spec_learn_edit (cfg->json, cfg->len, note, &json, &len, err) < 0
      || cmd_replace_config (cfg, json, len, args, err) < 0)
    return err_prefix (err, "--learn");
  fprintf (stderr,
           "hako %s: %s: warning: learning mode: the sandbox runs without Landlock's filesystem and TCP "
           "rules (its seccomp filter stays); what it does is recorded into %s, not confined\n",
           verb, id, l->out);
  if (net)
    fprintf (stderr,
             "hako %s: %s: warning: learning mode: the network is not confined: the proxy forwards every "
             "public destination (the host's loopback, link-local and private addresses only where "
             "--allow names them), sees inside every HTTPS connection (the sandbox trusts its CA), and "
             "records each request's method, host and path into %s\n",
             verb, id, l->out);
  return 0;
}

void
cmd_learn_end (struct cmd_learn *l, bool wait, int status)
{
  if (l->verdict >= 0 && wait)
    (void)!write (l->verdict, &status, sizeof status);
  if (l->verdict >= 0)
    close (l->verdict);
  l->verdict = -1;
  if (l->sock >= 0)
    close (l->sock);
  l->sock = -1;
  if (l->link && l->link->net_fd >= 0)
    close (l->link->net_fd);
  free (l->link);
  l->link = NULL;
  if (wait && l->pid > 0)
    {
      int st;
      while (waitpid (l->pid, &st, 0) < 0 && errno == EINTR)
        ;
    }
  l->pid = -1;
}

int
cmd_apply_profile_file (struct config_src *cfg, const char *file, char *const *args, hk_err *err)
{
  cleanup_free char *text = NULL;
  size_t tlen = 0;
  char *json;
  size_t len;
  if (file == NULL)
    return 0;
  /* The profile widens what the sandbox may do: one another user could
   * have written would let that user choose the sandbox's grants. */
  if (trust_read_all (file, 16 << 20, &text, &tlen, err) < 0)
    return err_prefix (err, "--profile-file");
  if (oci_spec_apply_profile (cfg->json, cfg->len, text, tlen, &json, &len, err) < 0
      || cmd_replace_config (cfg, json, len, args, err) < 0)
    return err_prefix (err, "--profile-file %s", file);
  return 0;
}
