/* ps: the processes of a sandbox, as a table or JSON; or its kept
 * processes (exec --detach) with their state and exit. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "lib/util.h"
#include "oci/report/kept.h"
#include "runtime/exec/procs.h"
#include "runtime/lifecycle/limits.h"

static const char ps_help[]
    = "Usage: hako ps [--format table|json|json-full] ID [PS-ARGS...]\n"
      "       hako ps --detached [--format table|json] ID\n\n"
      "List the sandbox's processes (those in its cgroup).  With PS-ARGS, the lines of\n"
      "`ps PS-ARGS` (ps(1) on the host) whose PID is one of them, as runc's ps.\n"
      "  -f, --format F   table (default: `ps -ef`'s lines, or without ps(1) UID PID PPID\n"
      "                   STAT STIME TIME CMD),\n"
      "                   json (an array of host pids, as runc's), or json-full\n"
      "                   (a list of {pid, ppid, ns_pid, user, uid, state, cpu_ms, command})\n"
      "      --json       the same as --format json\n"
      "  -d, --detached   the kept processes started by `hako exec --detach` instead, running\n"
      "                   or ended, with how they ended: a table, or with --format json a\n"
      "                   list of {pid, ns_pid, command, tty, state, started, ended,\n"
      "                   exit_code, signal, reason, ...}\n";

enum ps_format
{
  PS_TABLE,
  PS_JSON,
  PS_JSON_FULL
};

static void
print_table (const struct oci_proc *p, size_t n)
{
  printf ("%-10s %-8s %-8s %-4s %-6s %-9s %s\n", "UID", "PID", "PPID", "STAT", "STIME", "TIME", "CMD");
  for (size_t i = 0; i < n; i++)
    {
      uint64_t s = p[i].cpu_ms / 1000;
      printf ("%-10s %-8d %-8d %-4c %-6s %02" PRIu64 ":%02" PRIu64 ":%02" PRIu64 " %s\n", p[i].user,
              (int)p[i].pid, (int)p[i].ppid, p[i].state, p[i].start, s / 3600, s / 60 % 60, s % 60,
              p[i].command);
    }
}

/* Whether ps(1) is in PATH: the table is its -ef then, as runc's; hako's
 * own columns otherwise. */
static bool
have_ps (void)
{
  const char *path = getenv ("PATH");
  if (path == NULL)
    path = "/usr/bin:/bin";
  for (const char *d = path; *d;)
    {
      size_t len = strcspn (d, ":");
      cleanup_free char *f = xasprintf ("%.*s/ps", (int)len, d);
      if (len && access (f, X_OK) == 0)
        return true;
      d += len;
      if (*d == ':')
        d++;
    }
  return false;
}

/* Whether pid is one of the sandbox's. */
static bool
has_pid (const struct oci_proc *p, size_t n, long pid)
{
  for (size_t i = 0; i < n; i++)
    if (p[i].pid == pid)
      return true;
  return false;
}

/* runc's ps with ps(1) arguments: run `ps ARGS...`, print its header and
 * the lines whose PID column is one of the sandbox's.  Returns the exit
 * status. */
static int
ps_fail (const char *id, int errnum, const char *msg)
{
  hk_err err = { 0 };
  if (errnum)
    {
      errno = errnum;
      err_sys (&err, "%s", msg);
    }
  else
    err_set (&err, EINVAL, "%s", msg);
  return cmd_fail ("ps", id, &err);
}

static int
print_ps_lines (char **args, int nargs, const char *id, const struct oci_proc *p, size_t n)
{
  int fds[2];
  if (pipe (fds) < 0)
    return ps_fail (id, errno, "pipe");
  fflush (stdout);
  pid_t child = fork ();
  if (child < 0)
    {
      int e = errno;
      close (fds[0]);
      close (fds[1]);
      return ps_fail (id, e, "fork");
    }
  if (child == 0)
    {
      char **argv = xcalloc ((size_t)nargs + 2, sizeof *argv);
      argv[0] = (char *)"ps";
      for (int i = 0; i < nargs; i++)
        argv[i + 1] = args[i];
      dup2 (fds[1], 1);
      close (fds[0]);
      close (fds[1]);
      execvp ("ps", argv);
      _exit (127);
    }
  close (fds[1]);
  FILE *in = fdopen (fds[0], "r");
  char *line = NULL;
  size_t cap = 0;
  int col = -1, status = 0;
  for (bool header = true; in && getline (&line, &cap, in) >= 0; header = false)
    {
      /* The column whose header is PID, counted in blank-separated words. */
      int w = 0;
      long pid = -1;
      for (char *q = line; *q;)
        {
          while (*q == ' ' || *q == '\t')
            q++;
          if (*q == '\0' || *q == '\n')
            break;
          char *start = q;
          while (*q && *q != ' ' && *q != '\t' && *q != '\n')
            q++;
          if (header && q - start == 3 && strncmp (start, "PID", 3) == 0)
            col = w;
          if (!header && w == col)
            pid = strtol (start, NULL, 10);
          w++;
        }
      if (header && col < 0)
        {
          status = ps_fail (id, 0, "no PID column in the output of ps(1)");
          break;
        }
      if (header || has_pid (p, n, pid))
        fputs (line, stdout);
    }
  free (line);
  if (in)
    fclose (in);
  else
    close (fds[0]);
  int ws;
  while (waitpid (child, &ws, 0) < 0 && errno == EINTR)
    ;
  if (status == 0 && !(WIFEXITED (ws) && WEXITSTATUS (ws) == 0))
    status = ps_fail (id, 0, "ps(1) failed (is procps installed?)");
  return status;
}

/* ms since the epoch as local HH:MM:SS (today) or the date. */
static void
print_when (uint64_t ms)
{
  time_t t = (time_t)(ms / 1000), now = time (NULL);
  struct tm tm;
  char buf[32];
  localtime_r (&t, &tm);
  strftime (buf, sizeof buf, now - t < 86400 ? "%H:%M:%S" : "%Y-%m-%d", &tm);
  printf ("%-10s ", buf);
}

static void
print_kept (const struct oci_kept *p, size_t n)
{
  printf ("%-8s %-6s %-8s %-5s %-16s %-10s %s\n", "PID", "NSPID", "STATE", "EXIT", "REASON", "STARTED",
          "COMMAND");
  for (size_t i = 0; i < n; i++)
    {
      char code[16] = "-";
      bool ended = p[i].state == OCI_KEPT_EXITED;
      if (ended)
        snprintf (code, sizeof code, "%d", p[i].exit_code);
      printf ("%-8d %-6d %-8s %-5s %-16s ", (int)p[i].pid, (int)p[i].ns_pid, oci_kept_state_name (p[i].state),
              code, ended ? p[i].reason : "-");
      print_when (p[i].started_ms);
      /* One line a process: its words' newlines and escape sequences
       * (whoever chose them: an agent's command) are '?'. */
      for (size_t a = 0; p[i].argv && p[i].argv[a]; a++)
        {
          cleanup_free char *word = xstrdup (p[i].argv[a]);
          text_sanitize (word, NULL);
          printf ("%s%s", a ? " " : "", word);
        }
      putchar ('\n');
    }
}

/* ps --detached. */
static int
ps_kept (const char *id, bool json)
{
  hk_err err = { 0 };
  struct store st = { 0 };
  struct oci_kept *p = NULL;
  size_t n = 0;
  int r = 0;
  if (cmd_store (&st, &err) < 0 || proc_list (&st, id, &p, &n, &err) < 0
      || (json && oci_kept_list_write (p, n, stdout, &err) < 0))
    r = cmd_fail ("ps", id, &err);
  else if (!json)
    print_kept (p, n);
  oci_kepts_free (p, n);
  store_fini (&st);
  return r;
}

int
cmd_ps (int argc, char **argv)
{
  static const struct option opts[] = {
    { "format", required_argument, NULL, 'f' },
    { "json", no_argument, NULL, 'J' },
    { "detached", no_argument, NULL, 'd' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  enum ps_format format = PS_TABLE;
  bool detached = false;
  int c;
  while ((c = getopt_long (argc, argv, "+f:dh", opts, NULL)) != -1)
    switch (c)
      {
      case 'f':
        /* json is runc's plain array of pids: the shims that call
         * `ps --format json` parse exactly that. */
        if (strcmp (optarg, "json") == 0)
          format = PS_JSON;
        else if (strcmp (optarg, "json-full") == 0)
          format = PS_JSON_FULL;
        else if (strcmp (optarg, "table") == 0)
          format = PS_TABLE;
        else
          return cmd_usage ("ps", "--format: \"%s\" is not table, json or json-full", optarg);
        break;
      case 'J': format = PS_JSON; break;
      case 'd': detached = true; break;
      case 'h': return cmd_help (ps_help);
      default: return cmd_bad_option ("ps", argv, opts);
      }
  /* runc passes ps(1) options after the id. */
  if (argc - optind < 1)
    return cmd_usage ("ps", "expects a sandbox ID");
  if (argc - optind > 1 && format != PS_TABLE)
    return cmd_usage ("ps", "ps(1) arguments go with the table format only");
  const char *id = argv[optind];
  if (detached && (argc - optind > 1 || format == PS_JSON_FULL))
    return cmd_usage ("ps", "--detached lists kept processes as a table or as json (no ps(1) arguments)");
  if (detached)
    return ps_kept (id, format == PS_JSON);
  hk_err err = { 0 };
  struct store st = { 0 };
  struct oci_proc *procs = NULL;
  size_t n = 0;
  cleanup_free char *text = NULL;
  int r = 0;
  if (cmd_store (&st, &err) < 0 || sbx_ps (&st, id, &procs, &n, &err) < 0
      || (format == PS_JSON && oci_pids_json (procs, n, &text, NULL, &err) < 0)
      || (format == PS_JSON_FULL && oci_procs_json (procs, n, &text, NULL, &err) < 0))
    r = cmd_fail ("ps", id, &err);
  else if (format == PS_TABLE && argc - optind > 1)
    r = print_ps_lines (argv + optind + 1, argc - optind - 1, id, procs, n);
  else if (format == PS_TABLE && have_ps ())
    r = print_ps_lines ((char *[]){ (char *)"-ef" }, 1, id, procs, n); /* runc's default */
  else if (format == PS_TABLE)
    print_table (procs, n);
  else
    printf ("%s\n", text);
  oci_procs_free (procs, n);
  store_fini (&st);
  return r;
}
