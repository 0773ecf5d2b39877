/* run: create + start in one go; in the foreground, wait and exit with the
 * process's own status. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "cmd/config/config.h"
#include "lib/log.h"
#include "lib/util.h"
#include "oci/state.h"
#include "runtime/lifecycle/sandbox.h"
#include "runtime/state/sbxlog.h"

static const char run_help[]
    = "Usage: hako run [OPTIONS] ID [-- CMD...]\n\n"
      "Create and start a sandbox.  In the foreground, wait for its process and exit\n"
      "with its status (128+N for signal N).  With a command after -- and no\n"
      "config.json in the bundle directory, the host profile is used: no bundle needed.\n\n"
      "  -b, --bundle DIR        bundle with config.json (default: current directory)\n"
      "      --config FILE       read the config from FILE instead of the bundle's config.json\n"
      "      --profile P         use profile P (host, default) instead of config.json\n"
      "      --image NAME        the root (and, without --bundle, the config) from an image\n"
      "      --from-snapshot DIR the config and writable state of a `hako snapshot` copy\n"
      "                          (its own process: no CMD)\n"
      "      --rm                delete the sandbox when its process has exited\n"
      "  -d, --detach            return once the process has started; its stdout and\n"
      "                          stderr go to its log (hako logs), its stdin is /dev/null\n"
      "      --stdio MODE        detached: log (the default) or inherit (the process\n"
      "                          keeps hako's stdin, stdout and stderr)\n"
      "      --log-size SIZE     detached: keep at most SIZE of output (default 16m;\n"
      "                          the oldest goes first)\n"
      "      --pid-file FILE     write the sandbox process's host pid to FILE\n" CMD_PUBLISH_HELP
          CMD_OVERRIDES_HELP
      "      --console-socket S  with process.terminal: send the pty's master to the unix socket S\n"
      "                          (without it, in the foreground, hako relays its own terminal)\n"
      "      --preserve-fds N    pass fds 3 to 3+N-1 on to the process\n"
      "      --no-monitor        detached: no monitor process, the caller reaps the\n"
      "                          sandbox's process (a subreaper)\n"
      "      --keep              accepted for runc compatibility (the default)\n"
      "      --learn FILE        observe instead of confine: no Landlock filesystem or TCP\n"
      "                          rules; what the command does is merged into the profile\n"
      "                          FILE (hako-learn(7))\n"
      "      --learn-seccomp     with --learn: also learn a seccomp allow-list (within\n"
      "                          hako's filter, which stays)\n"
      "      --learn-on-failure  with --learn: merge a run that exits non-zero too (by default\n"
      "                          a failed run's accesses are not merged)\n"
      "      --profile-file FILE enforce a profile --learn wrote\n"
      "      --name ID           the sandbox's ID, as docker's --name (instead of the operand)\n"
      "      --json              in the foreground: print the sandbox's state (exitStatus,\n"
      "                          reason) as JSON when its process has ended, as wait --json\n"
      "      --format F          text (the default) or json (the same as --json)\n"
      "  -h, --help              this text\n";

struct run_opts
{
  const char *bundle, *profile, *pid_file, *console, *image, *from, *name, *config_file;
  unsigned int preserve;
  bool rm, detach, no_monitor, stdio_inherit, json;
  uint64_t log_cap;
  struct cmd_overrides ov;
  const char *profile_file;
  struct cmd_learn learn;
};

/* run's options. */
static const struct option opts[] = {
  { "bundle", required_argument, NULL, 'b' },
  { "config", required_argument, NULL, 'C' },
  { "profile", required_argument, NULL, 'P' },
  { "image", required_argument, NULL, 'I' },
  { "pid-file", required_argument, NULL, CMD_OPT_PID_FILE },
  { "publish", required_argument, NULL, CMD_OPT_PUBLISH },
  { "rm", no_argument, NULL, 'r' },
  { "detach", no_argument, NULL, 'd' },
  { "keep", no_argument, NULL, 'k' },
  { "no-monitor", no_argument, NULL, 'M' },
  { "no-new-keyring", no_argument, NULL, 'n' },
  { "console-socket", required_argument, NULL, 'c' },
  { "preserve-fds", required_argument, NULL, 'f' },
  { "from-snapshot", required_argument, NULL, 'S' },
  { "stdio", required_argument, NULL, 'O' },
  { "log-size", required_argument, NULL, 'L' },
  { "learn", required_argument, NULL, 'E' },
  { "learn-seccomp", no_argument, NULL, 'Q' },
  { "learn-on-failure", no_argument, NULL, CMD_OPT_LEARN_ON_FAILURE },
  { "profile-file", required_argument, NULL, 'F' },
  { "name", required_argument, NULL, CMD_OPT_NAME },
  { "json", no_argument, NULL, 'j' },
  { "format", required_argument, NULL, 'T' },
  { "help", no_argument, NULL, 'h' },
  CMD_OVERRIDE_OPTIONS,
  { NULL, 0, NULL, 0 },
};

/* The combinations run refuses, each reported; 0 when there is none. */
static int
run_check (int argc, char **argv, struct run_opts *o)
{
  if (cmd_sandbox_id ("run", argc, argv, o->name) == NULL
      || cmd_check_interactive ("run", o->ov.interactive && !o->detach, o->ov.o.terminal, o->console) < 0)
    return -1;
  if (cmd_listen_fds ("run", &o->preserve, &o->ov) < 0)
    return -1;
  if (o->from && (o->bundle || o->profile || o->image || o->ov.net.mode || o->ov.net.allow))
    {
      cmd_usage ("run", "--from-snapshot takes its config from the snapshot (no --bundle, --profile, "
                        "--image, --network, --allow)");
      return -1;
    }
  if ((o->learn.seccomp || o->learn.on_failure) && o->learn.out == NULL)
    {
      cmd_usage ("run", "%s needs --learn FILE", o->learn.seccomp ? "--learn-seccomp" : "--learn-on-failure");
      return -1;
    }
  if (o->rm && o->detach)
    {
      cmd_usage ("run", "--rm and --detach cannot be combined");
      return -1;
    }
  if (o->json && o->detach)
    {
      cmd_usage ("run", "--json is for a foreground run (for a detached one: hako wait --json ID)");
      return -1;
    }
  return 0;
}

/* 0: go on; 1: help was printed; -1: usage error (already reported). */
static int
run_parse (int argc, char **argv, struct run_opts *o)
{
  int c, r;
  while ((c = getopt_long (argc, argv, "b:dp:h" CMD_OVERRIDE_SHORTOPTS, opts, NULL)) != -1)
    switch (c)
      {
      case 'b': o->bundle = optarg; break;
      case 'C': o->config_file = optarg; break;
      case 'P': o->profile = optarg; break;
      case 'I': o->image = optarg; break;
      case CMD_OPT_PID_FILE: o->pid_file = optarg; break;
      case 'r': o->rm = true; break;
      case 'd': o->detach = true; break;
      case 'M': o->no_monitor = true; break;
      case 'S': o->from = optarg; break;
      case 'k':
      case 'n': break;
      case 'c': o->console = optarg; break;
      case 'O':
        if (strcmp (optarg, "log") != 0 && strcmp (optarg, "inherit") != 0)
          {
            cmd_usage ("run", "--stdio takes log or inherit");
            return -1;
          }
        o->stdio_inherit = strcmp (optarg, "inherit") == 0;
        break;
      case 'L':
        if (parse_size (optarg, &o->log_cap) < 0 || o->log_cap < SBXLOG_MIN_CAP)
          {
            cmd_usage ("run", "--log-size takes a size of at least 64k (bytes, or a k, m or g suffix)");
            return -1;
          }
        break;
      case 'f':
        if (cmd_preserve_fds ("run", optarg, &o->preserve) < 0)
          return -1;
        break;
      case 'E': o->learn.out = optarg; break;
      case 'Q': o->learn.seccomp = true; break;
      case CMD_OPT_LEARN_ON_FAILURE: o->learn.on_failure = true; break;
      case 'F': o->profile_file = optarg; break;
      case CMD_OPT_NAME: o->name = optarg; break;
      case 'j': o->json = true; break;
      case 'T':
        if ((r = cmd_format ("run", optarg, false)) < 0)
          return -1;
        o->json = r == 1;
        break;
      case 'h': cmd_help (run_help); return 1;
      default:
        r = cmd_override_option (&o->ov, c, optarg, "run");
        if (r == 0)
          cmd_bad_option ("run", argv, opts);
        if (r <= 0)
          return -1;
      }
  return run_check (argc, argv, o);
}

/* A detached run's output goes to its log unless asked otherwise, or unless
 * the caller reaps the process (--no-monitor: no monitor to copy it). */
static uint64_t
run_log_cap (const struct run_opts *o)
{
  if (!o->detach || o->stdio_inherit || o->no_monitor)
    return 0;
  return o->log_cap ? o->log_cap : SBXLOG_DEFAULT_CAP;
}

/* run's rule is runc's (the cwd is the bundle), with a fallback to the host
 * profile when there is no ./config.json: one that just happened to be there
 * and is no runtime config says where the config came from.  (One that
 * parses is a bundle, whose own errors say enough.) */
static void
note_cwd_bundle (const struct config_src *cfg, hk_err *err)
{
  if (!cfg->cwd_bundle)
    return;
  cleanup_free char *why = xstrdup (err->msg);
  enum err_kind kind = err_kind_of (err);
  err_setk (err, kind, err->errnum,
            "%s (./config.json was taken as the bundle, because no --bundle, "
            "--profile or --image was given; give --profile host to run the command in the host "
            "profile)",
            why);
}

/* --json: the state as wait --json has it, on one line (the last of our
 * stdout, after what the process wrote there), read before --rm deletes it. */
static void
print_state (const struct store *st, const char *id)
{
  struct oci_state *s = NULL;
  cleanup_free char *text = NULL;
  size_t len;
  hk_err err = { 0 };
  if (sbx_state (st, id, &s, &err) < 0
      || (cmd_state_shown (s), oci_state_to_json (s, false, &text, &len, &err)) < 0)
    cmd_fail ("run", id, &err);
  else
    printf ("%s\n", text);
  if (s)
    oci_state_free (s);
}

/* Foreground: start, wait, record, and with --rm delete.  Returns the exit status. */
static int
run_foreground (const struct store *st, struct sbx_fg *fg, const struct run_opts *o)
{
  hk_err err = { 0 };
  int status;
  bool rm = o->rm;
  /* --json reads the record: written also when the sandbox goes next. */
  bool waited = sbx_run_wait (st, fg, !rm || o->json, &status, &err) == 0;
  if (!waited)
    cmd_fail ("run", fg->id, &err);
  else if (fg->oom)
    /* 137 alone looks like any SIGKILL, and with --rm no state is left to
     * say otherwise. */
    log_warn ("run %s: the sandbox's process ended with 137 by the out-of-memory killer (OOM kills in "
              "its memory cgroup: %lld): its memory limit (--memory, linux.resources.memory.limit) is too "
              "small for what it ran",
              fg->id, (long long)fg->oom_kills);
  if (o->json && waited)
    print_state (st, fg->id);
  cleanup_free char *kept = NULL;
  if (rm && sbx_keep_proxy_log (st, fg->id, &kept, &err) < 0)
    cmd_fail ("run", fg->id, &err); /* the sandbox still goes */
  if (rm && sbx_delete (st, fg->id, true, &err) < 0)
    {
      cmd_fail ("run", fg->id, &err);
      if (status == 0)
        status = EXIT_HAKO;
    }
  return status;
}

/* What sbx_create gets for run's options and loaded config. */
static struct sbx_create_opts
create_opts (const struct run_opts *o, const struct config_src *cfg, const char *id)
{
  struct sbx_create_opts co = { .id = id,
                                .bundle = cfg->bundle,
                                .config_json = cfg->json,
                                .config_len = cfg->len,
                                .spec = cfg->spec,
                                .pid_file = o->pid_file,
                                .foreground = !o->detach,
                                .console_socket = o->console,
                                .preserve_fds = o->preserve,
                                .no_monitor = o->no_monitor,
                                .image_layers = cfg->layers,
                                .image_id = cfg->image_id,
                                .from_snapshot = cfg->snapshot_data,
                                .log_cap = run_log_cap (o),
                                .learn = o->learn.link,
                                .ports = o->ov.ports,
                                .n_ports = o->ov.n_ports };
  return co;
}

int
cmd_run (int argc, char **argv)
{
  char **command;
  struct run_opts o = { .learn = { .sock = -1, .pid = -1, .verdict = -1 } };
  cmd_split_dashdash (&argc, argv, &command);
  int r = run_parse (argc, argv, &o);
  if (r != 0)
    {
      cmd_overrides_free (&o.ov);
      return r > 0 ? 0 : EXIT_HAKO;
    }
  const char *id = o.name ? o.name : argv[optind];
  hk_err err = { 0 };
  struct store st = { 0 };
  struct config_src cfg = { 0 };
  struct sbx_fg fg = { 0 };
  int status = EXIT_HAKO;
  if (o.from && command)
    {
      status = cmd_usage ("run", "--from-snapshot runs the snapshot's own process (no command after --)");
      goto out;
    }
  /* The learner is forked first, holding nothing of hako's but stdio. */
  if (cmd_learn_begin (&o.learn, "run", id, command, &err) < 0)
    {
      status = cmd_fail ("run", id, &err);
      goto out;
    }
  struct cmd_config_req req = { .bundle = o.bundle,
                                .profile = o.profile,
                                .image = o.image,
                                .config_file = o.config_file,
                                .from_snapshot = o.from,
                                .args = command,
                                .host_fallback = true,
                                .profile_file = o.profile_file,
                                .ov = &o.ov,
                                .learn = &o.learn,
                                .verb = "run",
                                .id = id };
  if (cmd_store (&st, &err) < 0 || cmd_config_load (&req, &cfg, &err) < 0)
    {
      note_cwd_bundle (&cfg, &err);
      cmd_fail ("run", id, &err);
      goto out;
    }
  struct sbx_create_opts co = create_opts (&o, &cfg, id);
  int created = sbx_create (&st, &co, &fg, &status, &err);
  if (o.learn.sock >= 0)
    close (o.learn.sock); /* the sandbox's process has its own copy now */
  o.learn.sock = -1;
  /* The sandbox records its image now (image rm refuses while it does): the
   * image store need not stay locked while it runs. */
  cmd_image_free (&cfg);
  if (created < 0)
    cmd_fail ("run", id, &err);
  else if (o.detach)
    {
      status = 0;
      if (sbx_start (&st, id, &err) < 0)
        {
          status = cmd_fail ("run", id, &err);
          sbx_delete (&st, id, true, &err); /* a failed run leaves nothing behind */
        }
    }
  else
    status = run_foreground (&st, &fg, &o);
out:
  cmd_learn_end (&o.learn, !o.detach, status);
  sbx_fg_free (&fg);
  cmd_config_free (&cfg);
  cmd_overrides_free (&o.ov);
  store_fini (&st);
  return status;
}
