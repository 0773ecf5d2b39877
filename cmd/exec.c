/* exec: run one more command in a running sandbox, with its own exit status,
 * or with --json one object that says how it ended and what it wrote. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "lib/log.h"
#include "lib/util.h"
#include "oci/json.h"
#include "oci/report/exec_result.h"
#include "runtime/exec/exec.h"
#include "runtime/exec/procs.h"

/* What --json keeps of each stream when --max-output does not say: enough
 * for any sensible result, and a bound on hako's memory (hako-exec(8)). */
#define JSON_DEFAULT_CAP (16u << 20)

static const char exec_help[]
    = "Usage: hako exec [OPTIONS] ID [--] CMD [ARG...]\n\n"
      "Run CMD inside the running sandbox ID, with the namespaces, cgroup, capabilities,\n"
      "no_new_privs, Landlock and seccomp of its process.  Exits with CMD's status\n"
      "(128+N for signal N); 126 not executable, 127 not found, 125 hako failed.\n\n"
      "  -e, --env K=V           set an environment variable (repeatable)\n"
      "  -w, --cwd, --workdir DIR  working directory inside the sandbox (absolute)\n"
      "  -u, --user USER[:GROUP] name (from the sandbox's /etc/passwd, /etc/group) or number\n"
      "      --timeout DUR       kill CMD and every process it started after DUR (500ms, 30s, 5m)\n"
      "      --max-output N      pass on at most N bytes of stdout and of stderr (k, m, g)\n"
      "      --json              print one JSON object with the exit status and the output\n"
      "                          (--format json is the same)\n"
      "      --status-fd N       stream stdout and stderr; write the pid, then the JSON result\n"
      "                          (or the error) to fd N, one object a line\n"
      "  -d, --detach            return once CMD is running, print its process id: a kept\n"
      "                          process (hako ps --detached, logs/kill/wait --process,\n"
      "                          stdin, resize); with --pid-file, --console-socket,\n"
      "                          --process or --preserve-fds, runc's: CMD keeps our stdio\n"
      "      --pid-file FILE     write CMD's host pid to FILE\n"
      "  -t, --tty               a new terminal inside the sandbox, relayed to ours\n"
      "      --tty-size RxC      its size, ROWSxCOLS (default: our terminal's)\n"
      "  -i, --interactive       a kept process: its stdin stays open for `hako stdin`;\n"
      "                          else accepted for docker's -it (stdin is always passed\n"
      "                          on; with -t, stdin must be a terminal)\n"
      "      --log-size N        a kept process's log: keep the newest N bytes (default 4m)\n"
      "      --console-socket S  send the terminal's master to the unix socket S (runc's protocol)\n"
      "  -p, --process FILE      an OCI process JSON (args, env, cwd, user, capabilities, ...);\n"
      "                          the options here override it\n"
      "      --preserve-fds N    pass fds 3 to 3+N-1 on to CMD\n"
      "      --cap CAP           add CAP (CAP_NET_RAW or NET_RAW) to CMD's effective and permitted\n"
      "                          sets; only within the sandbox's bounding set (repeatable)\n"
      "  -g, --additional-gids G add group G (a number) to CMD's groups (repeatable)\n"
      "      --ignore-paused     a paused sandbox too: CMD starts once it is resumed\n"
      "      --learn FILE        observe instead of confine: CMD runs without the sandbox's\n"
      "                          Landlock; what it touches is learned into FILE (hako-learn(7))\n"
      "      --learn-seccomp     with --learn: also learn a seccomp allow-list (within\n"
      "                          hako's filter, which stays)\n"
      "      --learn-on-failure  with --learn: merge a command that exits non-zero too\n"
      "  -h, --help              this text\n";

struct exec_cli
{
  struct exec_opts o;
  char **env;
  size_t n_env;
  char **caps;
  size_t n_caps;
  gid_t *gids;
  size_t n_gids;
  bool json, has_max_output, interactive;
  struct proc_opts keep; /* a kept process's (exec --detach without runc's options) */
  int status_fd;         /* --status-fd, or -1 */
  const char *process_file;
  struct oci_process *process;
  struct cmd_learn learn; /* --learn, --learn-seccomp */
};

/* exec's options. */
enum
{
  OPT_FORMAT = 256,
  OPT_TIMEOUT,
  OPT_MAX_OUTPUT,
  OPT_JSON,
  OPT_PID_FILE,
  OPT_STATUS_FD,
  OPT_CONSOLE,
  OPT_PRESERVE,
  OPT_CAP,
  OPT_IGNORE_PAUSED,
  OPT_LEARN,
  OPT_LEARN_SECCOMP,
  OPT_TTY_SIZE,
  OPT_LOG_SIZE
};
static const struct option opts[] = {
  { "env", required_argument, NULL, 'e' },
  { "cwd", required_argument, NULL, 'w' },
  { "workdir", required_argument, NULL, 'w' },
  { "interactive", no_argument, NULL, 'i' },
  { "format", required_argument, NULL, OPT_FORMAT },
  { "user", required_argument, NULL, 'u' },
  { "timeout", required_argument, NULL, OPT_TIMEOUT },
  { "max-output", required_argument, NULL, OPT_MAX_OUTPUT },
  { "json", no_argument, NULL, OPT_JSON },
  { "detach", no_argument, NULL, 'd' },
  { "pid-file", required_argument, NULL, OPT_PID_FILE },
  { "status-fd", required_argument, NULL, OPT_STATUS_FD },
  { "tty", no_argument, NULL, 't' },
  { "tty-size", required_argument, NULL, OPT_TTY_SIZE },
  { "log-size", required_argument, NULL, OPT_LOG_SIZE },
  { "console-socket", required_argument, NULL, OPT_CONSOLE },
  { "process", required_argument, NULL, 'p' },
  { "preserve-fds", required_argument, NULL, OPT_PRESERVE },
  { "cap", required_argument, NULL, OPT_CAP },
  { "additional-gids", required_argument, NULL, 'g' },
  { "ignore-paused", no_argument, NULL, OPT_IGNORE_PAUSED },
  { "learn", required_argument, NULL, OPT_LEARN },
  { "learn-seccomp", no_argument, NULL, OPT_LEARN_SECCOMP },
  { "learn-on-failure", no_argument, NULL, CMD_OPT_LEARN_ON_FAILURE },
  { "help", no_argument, NULL, 'h' },
  { NULL, 0, NULL, 0 },
};

/* --status-fd optarg. */
static int
parse_status_fd (struct exec_cli *c)
{
  char *end;
  errno = 0;
  long fd = strtol (optarg, &end, 10);
  if (optarg[0] < '0' || optarg[0] > '9' || *end || errno || fd < 3 || fd > INT32_MAX)
    return cmd_usage ("exec", "--status-fd \"%s\": expected a file descriptor number, 3 or more", optarg), -1;
  /* The command must not inherit it: code in the sandbox could
   * otherwise write a forged result for its caller to trust. */
  if (fcntl ((int)fd, F_SETFD, FD_CLOEXEC) < 0)
    return cmd_usage ("exec", "--status-fd %ld: not an open file descriptor", fd), -1;
  c->status_fd = (int)fd;
  return 0;
}

/* --detach keeps the process (a log, an id, a holder), unless one of
 * runc's options says a shim (containerd's, conmon) is the caller: that
 * one expects the command to have its stdio and nothing on stdout. */
static bool
kept (const struct exec_cli *c)
{
  return c->o.detach && c->o.pid_file == NULL && c->o.console_socket == NULL && c->process_file == NULL
         && c->o.preserve_fds == 0;
}

/* --tty-size ROWSxCOLS, each 1 to 65535. */
static int
parse_tty_size (struct exec_cli *c, const char *arg)
{
  char *x = NULL, *end = NULL;
  unsigned long rows = 0, cols = 0;
  if (arg[0] >= '1' && arg[0] <= '9')
    rows = strtoul (arg, &x, 10);
  if (x && (*x == 'x' || *x == 'X') && x[1] >= '1' && x[1] <= '9')
    cols = strtoul (x + 1, &end, 10);
  if (end == NULL || *end || rows > 65535 || cols > 65535)
    return cmd_usage ("exec", "--tty-size \"%s\": expected ROWSxCOLS, such as 24x80", arg), -1;
  c->o.tty_size = (struct winsize){ .ws_row = (unsigned short)rows, .ws_col = (unsigned short)cols };
  return 0;
}

/* The options that exclude or need each other. */
static int
check_combinations (const struct exec_cli *c)
{
  if (c->o.detach && (c->json || c->status_fd >= 0))
    return cmd_usage ("exec", "--detach cannot be combined with --json or --status-fd"), -1;
  if (c->o.detach && !kept (c) && (c->o.timeout_ms || c->has_max_output))
    return cmd_usage ("exec",
                      "--detach with --pid-file, --console-socket, --process or --preserve-fds (runc's "
                      "detached exec) cannot be combined with --timeout or --max-output"),
           -1;
  if (!kept (c) && c->keep.log_cap)
    return cmd_usage ("exec", "--log-size needs --detach (without --pid-file, --console-socket, --process, "
                              "--preserve-fds)"),
           -1;
  if (kept (c) && c->learn.out)
    return cmd_usage ("exec", "--learn cannot be combined with a kept process (--detach without --pid-file)"),
           -1;
  if (c->o.tty_size.ws_row && !c->o.tty)
    return cmd_usage ("exec", "--tty-size needs --tty"), -1;
  if (c->status_fd >= 0 && (c->json || c->o.tty))
    return cmd_usage ("exec", "--status-fd cannot be combined with --json or --tty"), -1;
  if (c->o.tty && (c->json || c->has_max_output))
    return cmd_usage ("exec", "--tty cannot be combined with --json or --max-output"), -1;
  if ((c->learn.seccomp || c->learn.on_failure) && c->learn.out == NULL)
    return cmd_usage ("exec", "%s needs --learn FILE",
                      c->learn.seccomp ? "--learn-seccomp" : "--learn-on-failure"),
           -1;
  if (c->o.tty && c->o.detach && !kept (c) && c->o.console_socket == NULL)
    return cmd_usage ("exec", "--tty with runc's --detach (--pid-file, --process) needs --console-socket"),
           -1;
  return 0;
}

/* -g G: one more group number. */
static int
add_gid (struct exec_cli *c, const char *arg)
{
  char *end;
  errno = 0;
  unsigned long g = strtoul (arg, &end, 10);
  if (arg[0] < '0' || arg[0] > '9' || *end || errno || g > UINT32_MAX - 1)
    return cmd_usage ("exec", "--additional-gids \"%s\": expected a group number", arg), -1;
  c->gids = xrealloc (c->gids, (c->n_gids + 1) * sizeof *c->gids);
  c->gids[c->n_gids++] = (gid_t)g;
  return 0;
}

/* --cap CAP: CAP_X or X, any case. */
static void
add_cap (struct exec_cli *c, const char *arg)
{
  char *name = str_has_prefix (arg, "CAP_") || str_has_prefix (arg, "cap_") ? xstrdup (arg)
                                                                            : xasprintf ("CAP_%s", arg);
  for (char *q = name; *q; q++)
    *q = (char)(*q >= 'a' && *q <= 'z' ? *q - 'a' + 'A' : *q);
  c->caps = xrealloc (c->caps, (c->n_caps + 2) * sizeof *c->caps);
  c->caps[c->n_caps++] = name;
  c->caps[c->n_caps] = NULL;
}

/* 0: go on; 1: help was printed; -1: usage error (already reported). */
static int
parse_args (int argc, char **argv, struct exec_cli *c)
{
  int ch, idx = 0;
  /* "+": options end at the ID, so `exec ID ls -l` needs no "--", as in runc. */
  while ((ch = getopt_long (argc, argv, "+e:u:w:idtp:g:h", opts, &idx)) != -1)
    switch (ch)
      {
      case 'e':
        if (strchr (optarg, '=') == NULL || optarg[0] == '=')
          return cmd_usage ("exec", "--env \"%s\": expected K=V", optarg), -1;
        c->env = xrealloc (c->env, (c->n_env + 2) * sizeof *c->env);
        c->env[c->n_env++] = optarg;
        c->env[c->n_env] = NULL;
        break;
      case 'w':
        if (optarg[0] != '/')
          return cmd_usage ("exec", "--cwd \"%s\": must be an absolute path", optarg), -1;
        c->o.cwd = optarg;
        break;
      case 'i': c->interactive = true; break;
      case OPT_FORMAT:
        if (strcmp (optarg, "json") != 0 && strcmp (optarg, "text") != 0)
          return cmd_usage ("exec", "--format \"%s\": expected text or json", optarg), -1;
        c->json = strcmp (optarg, "json") == 0;
        break;
      case 'u': c->o.user = optarg; break;
      case OPT_TIMEOUT:
        if (parse_duration_ms (optarg, &c->o.timeout_ms) < 0 || c->o.timeout_ms == 0)
          return cmd_usage ("exec", "--timeout \"%s\": expected a duration such as 500ms, 30s or 5m", optarg),
                 -1;
        break;
      case OPT_MAX_OUTPUT:
        if (parse_size (optarg, &c->o.max_output) < 0)
          return cmd_usage ("exec", "--max-output \"%s\": expected a byte count such as 1000 or 1m", optarg),
                 -1;
        c->has_max_output = true;
        break;
      case OPT_JSON: c->json = true; break;
      case 'd': c->o.detach = true; break;
      case OPT_PID_FILE: c->o.pid_file = optarg; break;
      case OPT_STATUS_FD:
        if (parse_status_fd (c) < 0)
          return -1;
        break;
      case 't': c->o.tty = true; break;
      case OPT_CONSOLE: c->o.console_socket = optarg; break;
      case OPT_TTY_SIZE:
        if (parse_tty_size (c, optarg) < 0)
          return -1;
        break;
      case OPT_LOG_SIZE:
        if (parse_size (optarg, &c->keep.log_cap) < 0 || c->keep.log_cap < SBXLOG_MIN_CAP)
          return cmd_usage ("exec", "--log-size \"%s\": expected a size of 64k or more", optarg), -1;
        break;
      case 'p': c->process_file = optarg; break;
      case OPT_PRESERVE:
        if (cmd_preserve_fds ("exec", optarg, &c->o.preserve_fds) < 0)
          return -1;
        break;
      case OPT_CAP: add_cap (c, optarg); break;
      case 'g':
        if (add_gid (c, optarg) < 0)
          return -1;
        break;
      case OPT_IGNORE_PAUSED: c->o.ignore_paused = true; break;
      case OPT_LEARN: c->learn.out = optarg; break;
      case OPT_LEARN_SECCOMP: c->learn.seccomp = true; break;
      case CMD_OPT_LEARN_ON_FAILURE: c->learn.on_failure = true; break;
      case 'h': cmd_help (exec_help); return 1;
      default: cmd_bad_option ("exec", argv, opts); return -1;
      }
  /* A kept process's -i keeps its stdin for `hako stdin`: our terminal is
   * not its. */
  if (!kept (c) && cmd_check_interactive ("exec", c->interactive, c->o.tty, c->o.console_socket) < 0)
    return -1;
  c->o.caps = c->caps;
  c->o.additional_gids = c->gids;
  c->o.n_additional_gids = c->n_gids;
  return check_combinations (c);
}

/* --process FILE: the process to run, parsed as config.json's .process. */
static int
load_process (struct exec_cli *c, hk_err *err)
{
  cleanup_free char *text = NULL;
  size_t len;
  if (c->process_file == NULL)
    return 0;
  if (file_read_all (c->process_file, 1 << 20, &text, &len, err) < 0
      || oci_process_parse (text, len, &c->process, err) < 0)
    return err_prefix (err, "--process %s", c->process_file);
  c->o.process = c->process;
  return 0;
}

static void
cli_free (struct exec_cli *c)
{
  free (c->env);
  for (size_t i = 0; i < c->n_caps; i++)
    free (c->caps[i]);
  free (c->caps);
  free (c->gids);
  if (c->process)
    oci_process_free (c->process);
}

/* --max-output without --json: the capped streams go to ours. */
struct passthrough
{
  bool broken[3]; /* a reader went away: keep draining, stop writing */
};

static void
sink_pass (void *ctx, int stream, const char *buf, size_t n)
{
  struct passthrough *p = ctx;
  if (!p->broken[stream] && fd_write_all (stream, buf, n) < 0)
    p->broken[stream] = true;
}

/* --json: the capped streams are kept for the object. */
struct capture
{
  char *buf[3];
  size_t len[3], cap[3];
};

static void
capture_append (struct capture *c, int stream, const char *buf, size_t n)
{
  if (c->len[stream] + n > c->cap[stream])
    {
      size_t want = c->cap[stream] ? c->cap[stream] : 4096;
      while (want < c->len[stream] + n)
        want *= 2;
      c->buf[stream] = xrealloc (c->buf[stream], want);
      c->cap[stream] = want;
    }
  memcpy (c->buf[stream] + c->len[stream], buf, n);
  c->len[stream] += n;
}

static void
sink_json (void *ctx, int stream, const char *buf, size_t n)
{
  capture_append (ctx, stream, buf, n);
}

/* 126/127's kind: what a program branches on (hako-exec(8), JSON RESULT). */
static const char *
not_run_kind (const struct exec_result *res)
{
  if (res->not_run == NULL)
    return NULL;
  if (res->status == 127)
    return "not_found";
  return res->not_run_errno == EACCES || res->not_run_errno == EPERM ? "permission" : "not_executable";
}

/* The result's fields the JSON object and the status fd's line share. */
static struct oci_exec_result
result_object (const struct exec_result *res)
{
  return (struct oci_exec_result){
    .exit_code = res->status,
    .signal = res->signal,
    .reason = exec_reason_name (res->reason),
    .timed_out = res->timed_out,
    .duration_ms = res->duration_ms,
    .has_oom_kills = res->has_oom_kills,
    .oom_kills = res->oom_kills,
    .warning = res->warning,
    .has_usage = res->has_usage,
    .user_cpu_us = res->user_us,
    .system_cpu_us = res->system_us,
    .peak_rss_bytes = res->peak_rss_kib * 1024,
    .error_kind = not_run_kind (res),
    .error_message = res->not_run,
    .out = { .data = "", .truncated = res->truncated[0] },
    .err = { .data = "", .truncated = res->truncated[1] },
  };
}

/* 126/127 is in the object's error, not in the command's stderr, which
 * holds only what the command wrote. */
static int
print_json (const struct exec_result *res, struct capture *c, const char *id)
{
  hk_err err = { 0 };
  struct oci_exec_result r = result_object (res);
  r.out.data = c->buf[1], r.out.len = c->len[1];
  r.err.data = c->buf[2], r.err.len = c->len[2];
  if (r.out.data == NULL)
    r.out.data = "";
  if (r.err.data == NULL)
    r.err.data = "";
  if (oci_exec_result_write (&r, stdout, &err) < 0)
    return cmd_fail ("exec", id, &err);
  return res->status;
}

/* --status-fd: one JSON object a line, written whole (a reader takes each
 * line as it comes). */
static void
status_line (int fd, const char *text, size_t len)
{
  cleanup_free char *line = xasprintf ("%.*s\n", (int)len, text);
  (void)fd_write_all (fd, line, len + 1); /* a reader gone is not our failure */
}

static void
status_started (void *ctx, pid_t pid)
{
  char buf[48];
  int n = snprintf (buf, sizeof buf, "{\"pid\":%d}", (int)pid);
  status_line (*(int *)ctx, buf, (size_t)n);
}

/* The result without the streams, which were passed on as they came. */
static int
status_result (int fd, const struct exec_result *res, const char *id)
{
  hk_err err = { 0 };
  struct oci_exec_result r = result_object (res);
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream (&text, &len);
  if (f == NULL)
    return err_sys (&err, "--status-fd"), cmd_fail ("exec", id, &err);
  int w = oci_exec_result_write (&r, f, &err);
  if (fclose (f) != 0 && w == 0)
    w = err_sys (&err, "--status-fd");
  if (w == 0)
    (void)fd_write_all (fd, text, len);
  free (text);
  return w < 0 ? cmd_fail ("exec", id, &err) : res->status;
}

/* hako failed: the error's kind and message, as --log-format json has them. */
static void
status_error (int fd, const hk_err *e)
{
  struct json_out o;
  json_out_init (&o, NULL);
  json_obj_open (&o);
  json_key (&o, "error");
  json_obj_open (&o);
  json_kstr (&o, "kind", err_kind_name (err_kind_of (e)));
  json_kstr (&o, "msg", e->msg);
  json_obj_close (&o);
  json_obj_close (&o);
  char *text = NULL;
  size_t len = 0;
  hk_err err = { 0 };
  if (json_out_finish (&o, &text, &len, &err) == 0)
    status_line (fd, text, len);
  free (text);
}

static void
report_truncation (const struct exec_result *res, const char *id)
{
  static const char *const names[] = { "stdout", "stderr" };
  for (int s = 0; s < 2; s++)
    if (res->truncated[s])
      log_warn ("exec %s: %s truncated after %llu bytes (--max-output, or the sandbox's max_output)", id,
                names[s], (unsigned long long)res->max_output);
}

/* What exec runs and where its output goes. */
static void
set_output (struct exec_cli *c, const char *id, char **command, struct passthrough *pass, struct capture *cap)
{
  c->o.id = id;
  c->o.args = command[0] ? command : NULL;
  c->o.env = c->env;
  c->o.capture = c->json || c->has_max_output || c->status_fd >= 0;
  c->o.max_output_set = c->has_max_output;
  if (c->json && !c->has_max_output)
    c->o.max_output = JSON_DEFAULT_CAP;
  if (c->status_fd >= 0)
    {
      if (!c->has_max_output)
        c->o.max_output = UINT64_MAX; /* passed on as it comes: nothing is held */
      c->o.started = status_started;
      c->o.started_ctx = &c->status_fd;
    }
  c->o.sink = c->json ? sink_json : sink_pass;
  c->o.sink_ctx = c->json ? (void *)cap : (void *)pass;
}

/* A kept process: started by its holder, its id printed. */
static int
start_kept (struct exec_cli *c, const struct store *st, struct exec_result *res, hk_err *err)
{
  c->keep.keep_stdin = c->interactive;
  /* A terminal nobody watches has no window to take its size from: a new
   * pty's 0x0 would leave programs without columns. */
  if (c->o.tty && c->o.tty_size.ws_row == 0)
    c->o.tty_size = (struct winsize){ .ws_row = 24, .ws_col = 80 };
  c->keep.timeout_ms = c->o.timeout_ms;
  c->keep.max_output = c->has_max_output ? c->o.max_output : UINT64_MAX;
  if (c->keep.log_cap == 0)
    c->keep.log_cap = PROC_LOG_DEFAULT_CAP;
  /* The holder keeps the timeout and the cap: the command's exec is
   * runc's detached one, with the holder as its parent. */
  c->o.timeout_ms = 0;
  c->o.capture = false;
  c->o.max_output = UINT64_MAX;
  c->o.max_output_set = true;
  if (proc_start (st, &c->o, &c->keep, res, err) < 0)
    return -1;
  if (res->not_run == NULL)
    {
      printf ("%d\n", (int)res->pid);
      fflush (stdout);
    }
  return 0;
}

/* The command's result, as the options ask; exec's exit status. */
static int
report_result (const struct exec_cli *c, struct exec_result *res, struct capture *cap, const char *id)
{
  /* With --json and --status-fd the result carries it: hako's stderr is
     the command's there (the SDK reads it so), and must hold only what the
     command wrote. */
  if (res->warning && !c->json && c->status_fd < 0)
    log_warn ("exec %s: %s", id, res->warning);
  /* As timeout(1): 124 tells the deadline from a SIGKILL or an OOM kill (137). */
  if (res->reason == EXEC_TIMEOUT)
    res->status = EXIT_TIMEOUT;
  if (c->json)
    return print_json (res, cap, id);
  else
    {
      if (res->not_run && c->status_fd < 0) /* else the result's error says it */
        cmd_not_run ("exec", id, res->status, res->not_run);
      if (c->status_fd < 0) /* else the result says it */
        report_truncation (res, id);
      return c->status_fd >= 0 ? status_result (c->status_fd, res, id) : res->status;
    }
}

int
cmd_exec (int argc, char **argv)
{
  char **command;
  struct exec_cli c = { .status_fd = -1, .learn = { .sock = -1, .pid = -1, .verdict = -1 } };
  cmd_split_dashdash (&argc, argv, &command);
  int r = parse_args (argc, argv, &c);
  if (r != 0)
    {
      cli_free (&c);
      return r > 0 ? 0 : EXIT_HAKO;
    }
  if (optind >= argc)
    {
      cli_free (&c);
      return cmd_usage ("exec", "expects a sandbox ID and a command");
    }
  const char *id = argv[optind];
  /* The command after "--", or else the words after the ID. */
  if (command == NULL)
    command = argv + optind + 1;
  else if (argc - optind != 1)
    {
      cli_free (&c);
      return cmd_usage ("exec", "expects one sandbox ID before --");
    }
  if (command[0] == NULL && c.process_file == NULL)
    {
      cli_free (&c);
      return cmd_usage ("exec", "no command to run");
    }
  struct passthrough pass = { 0 };
  struct capture cap = { 0 };
  set_output (&c, id, command, &pass, &cap);
  signal (SIGPIPE, SIG_IGN); /* a closed stdout is a write error, not our death */

  hk_err err = { 0 };
  struct store st = { 0 };
  struct exec_result res = { 0 };
  int status = EXIT_HAKO;
  if (c.learn.out && c.o.args == NULL)
    {
      cli_free (&c);
      return cmd_usage ("exec", "--learn needs the command after the ID (not only --process)");
    }
  /* The learner is forked first, holding nothing of hako's but stdio. */
  int learning = cmd_learn_begin (&c.learn, "exec", id, command, &err);
  c.o.learn = c.learn.link;
  if (learning == 0 && c.learn.out)
    fprintf (stderr,
             "hako exec: %s: warning: learning mode: the command runs without the sandbox's Landlock "
             "rules (its seccomp filter stays); what it does is recorded into %s, not confined\n",
             id, c.learn.out);
  if (learning < 0 || load_process (&c, &err) < 0 || cmd_store (&st, &err) < 0
      || (kept (&c) ? start_kept (&c, &st, &res, &err) : exec_run (&st, &c.o, &res, &err)) < 0)
    {
      cmd_fail ("exec", id, &err);
      if (c.status_fd >= 0)
        status_error (c.status_fd, &err);
    }
  else
    {
      status = report_result (&c, &res, &cap, id);
    }
  /* The command has its end; the learner writes FILE once it and whatever
   * it started are gone (a detached command: later, by itself). */
  cmd_learn_end (&c.learn, !c.o.detach, status);
  exec_result_free (&res);
  for (int s = 1; s < 3; s++)
    free (cap.buf[s]);
  cli_free (&c);
  store_fini (&st);
  return status;
}
