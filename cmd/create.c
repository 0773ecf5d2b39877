/* create: build a sandbox from a bundle or a profile; its process waits for start. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "cmd/config/config.h"
#include "lib/util.h"
#include "runtime/lifecycle/sandbox.h"

static const char create_help[]
    = "Usage: hako create [OPTIONS] ID\n\n"
      "Build a sandbox; its process waits until `hako start ID`.\n\n"
      "      --name ID           the sandbox's ID, as docker's --name (instead of the operand)\n"
      "  -b, --bundle DIR        bundle with config.json (default: current directory)\n"
      "      --config FILE       read the config from FILE instead of the bundle's config.json\n"
      "      --profile P         no bundle config: use profile P (host)\n"
      "      --image NAME        the root (and, without --bundle, the config) from an image\n"
      "      --from-snapshot DIR the config and writable state of a `hako snapshot` copy\n"
      "      --pid-file FILE     write the sandbox process's host pid to FILE\n" CMD_PUBLISH_HELP
          CMD_OVERRIDES_HELP
      "      --console-socket S  with process.terminal: send the pty's master to the unix socket S\n"
      "      --preserve-fds N    pass fds 3 to 3+N-1 on to the process\n"
      "      --no-monitor        no monitor process: the caller reaps the sandbox's\n"
      "                          process (a subreaper); state cannot say how it ended\n"
      "      --no-new-keyring    accepted for runc compatibility (no keyring is created)\n"
      "      --no-pivot          refused: the sandbox's root is always entered with pivot_root\n"
      "  -h, --help              this text\n";

/* create's options. */
static const struct option opts[] = {
  { "bundle", required_argument, NULL, 'b' },
  { "config", required_argument, NULL, 'C' },
  { "profile", required_argument, NULL, 'P' },
  { "image", required_argument, NULL, 'I' },
  { "pid-file", required_argument, NULL, CMD_OPT_PID_FILE },
  { "publish", required_argument, NULL, CMD_OPT_PUBLISH },
  { "no-new-keyring", no_argument, NULL, 'k' },
  { "no-pivot", no_argument, NULL, 'n' },
  { "console-socket", required_argument, NULL, 'c' },
  { "preserve-fds", required_argument, NULL, 'f' },
  { "no-monitor", no_argument, NULL, 'M' },
  { "from-snapshot", required_argument, NULL, 'S' },
  { "name", required_argument, NULL, CMD_OPT_NAME },
  { "help", no_argument, NULL, 'h' },
  CMD_OVERRIDE_OPTIONS,
  { NULL, 0, NULL, 0 },
};

/* Create the sandbox from its loaded config; create's exit status. */
static int
create_sandbox (const struct store *st, const char *id, const struct config_src *cfg, const char *pid_file,
                const char *console, unsigned int preserve, bool no_monitor, const struct cmd_overrides *ov)
{
  struct sbx_create_opts o = { .id = id,
                               .bundle = cfg->bundle,
                               .config_json = cfg->json,
                               .config_len = cfg->len,
                               .spec = cfg->spec,
                               .pid_file = pid_file,
                               .console_socket = console,
                               .preserve_fds = preserve,
                               .no_monitor = no_monitor,
                               .image_layers = cfg->layers,
                               .image_id = cfg->image_id,
                               .from_snapshot = cfg->snapshot_data,
                               .ports = ov->ports,
                               .n_ports = ov->n_ports };
  hk_err err = { 0 };
  int status = EXIT_HAKO;
  if (sbx_create (st, &o, NULL, &status, &err) < 0)
    cmd_fail ("create", id, &err);
  else
    status = 0;
  return status;
}

int
cmd_create (int argc, char **argv)
{
  const char *bundle = NULL, *profile = NULL, *pid_file = NULL, *console = NULL, *image = NULL;
  const char *from = NULL, *name = NULL, *config_file = NULL;
  unsigned int preserve = 0;
  struct cmd_overrides ov = { 0 };
  bool no_monitor = false;
  int c, r;
  while ((c = getopt_long (argc, argv, "b:p:h" CMD_OVERRIDE_SHORTOPTS, opts, NULL)) != -1)
    switch (c)
      {
      case 'b': bundle = optarg; break;
      case 'C': config_file = optarg; break;
      case 'P': profile = optarg; break;
      case 'I': image = optarg; break;
      case CMD_OPT_PID_FILE: pid_file = optarg; break;
      case 'k': break;
      /* runc's --no-pivot enters the root with MS_MOVE and chroot, which a
       * process with CAP_SYS_CHROOT escapes by chrooting again: refused. */
      case 'n':
        cmd_overrides_free (&ov);
        return cmd_usage ("create", "--no-pivot is not supported: hako enters the sandbox's root "
                                    "only with pivot_root (a chroot can be escaped)");
      case 'c': console = optarg; break;
      case 'f':
        if (cmd_preserve_fds ("create", optarg, &preserve) < 0)
          {
            cmd_overrides_free (&ov);
            return EXIT_HAKO;
          }
        break;
      case 'M': no_monitor = true; break;
      case 'S': from = optarg; break;
      case CMD_OPT_NAME: name = optarg; break;
      case 'h': cmd_overrides_free (&ov); return cmd_help (create_help);
      default:
        r = cmd_override_option (&ov, c, optarg, "create");
        if (r <= 0)
          {
            cmd_overrides_free (&ov);
            return r < 0 ? EXIT_HAKO : cmd_bad_option ("create", argv, opts);
          }
      }
  const char *id = cmd_sandbox_id ("create", argc, argv, name);
  if (id == NULL || cmd_listen_fds ("create", &preserve, &ov) < 0)
    {
      cmd_overrides_free (&ov);
      return EXIT_HAKO;
    }
  if (from && (bundle || profile || image || ov.net.mode || ov.net.allow))
    {
      cmd_overrides_free (&ov);
      return cmd_usage ("create", "--from-snapshot takes its config from the snapshot (no --bundle, "
                                  "--profile, --image, --network, --allow)");
    }
  hk_err err = { 0 };
  struct store st = { 0 };
  struct config_src cfg = { 0 };
  int status = EXIT_HAKO;
  struct cmd_config_req req = { .bundle = bundle,
                                .profile = profile,
                                .image = image,
                                .config_file = config_file,
                                .from_snapshot = from,
                                .ov = &ov };
  if (cmd_store (&st, &err) < 0 || cmd_config_load (&req, &cfg, &err) < 0)
    status = cmd_fail ("create", id, &err);
  else
    status = create_sandbox (&st, id, &cfg, pid_file, console, preserve, no_monitor, &ov);
  if (status != 0)
    status = EXIT_HAKO; /* create only says whether it worked */
  cmd_config_free (&cfg);
  cmd_overrides_free (&ov);
  store_fini (&st);
  return status;
}
