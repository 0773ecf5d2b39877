/* spec: write a ready config.json from a profile. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "cmd/config/config.h"
#include "lib/util.h"

static const char spec_help[]
    = "Usage: hako spec [--profile default|host|runc] [--rootless] [--image NAME] [FLAGS]\n"
      "                 [--bundle DIR]\n\n"
      "Write DIR/config.json (default: ./config.json); an existing one is kept.\n"
      "  -p, --profile P         default (runc-like bundle with a rootfs/), host (no image)\n"
      "                          or runc (exactly what `runc spec` writes)\n"
      "      --rootless          add a user namespace mapping the caller to root\n"
      "      --image NAME        the default profile with the image's Entrypoint, Cmd, Env,\n"
      "                          WorkingDir and User, and sandbox.image\n"
      "  -b, --bundle DIR        where to write config.json\n"
      "FLAGS, written into it as `hako run` and `hako create` take them:\n" CMD_OVERRIDES_HELP;

/* The config of the profile (or image) with the flags written in, into
 * BUNDLE/config.json.  Returns the exit status. */
static int
spec_write (const char *profile, bool rootless, const char *image, const char *bundle,
            const struct cmd_overrides *ov, int operands)
{
  if (operands != 0)
    return cmd_usage ("spec", "takes no arguments");
  int p = oci_profile_from_name (profile);
  if (p < 0)
    return cmd_usage ("spec", "unknown profile \"%s\" (default, host, runc)", profile);
  if (image && (rootless || p != OCI_PROFILE_DEFAULT))
    return cmd_usage ("spec", "--image goes with the default profile only (no --rootless: an image "
                              "sandbox's layers are mounted idmapped, which needs root)");
  hk_err err = { 0 };
  struct config_src cfg = { 0 };
  cleanup_free char *path = xasprintf ("%s/config.json", bundle);
  cleanup_close int fd = -1;
  int status = EXIT_HAKO;
  /* The profile's limits are this machine's (or its node config's), now:
   * the file keeps them wherever it runs.  Without --image, -u NAME
   * resolves in the bundle's root, when it is there already. */
  struct cmd_config_req req = { .to_file = true, .rootless = rootless, .ov = ov };
  if (image)
    req.image = image;
  else
    {
      req.bundle = bundle;
      req.profile = profile;
    }
  if (cmd_config_load (&req, &cfg, &err) < 0)
    goto fail;
  /* O_EXCL: never overwrite a config someone edited (runc refuses too). */
  fd = open (path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0)
    {
      if (errno == EEXIST)
        err_set (&err, EEXIST, "%s already exists; remove it first", path);
      else
        err_sys (&err, "%s", path);
      goto fail;
    }
  if (fd_write_all (fd, cfg.json, cfg.len) < 0 || fd_write_all (fd, "\n", 1) < 0)
    {
      err_sys (&err, "write %s", path);
      goto fail;
    }
  status = 0;
  goto out;
fail:
  cmd_fail ("spec", NULL, &err);
out:
  cmd_config_free (&cfg);
  return status;
}

int
cmd_spec (int argc, char **argv)
{
  static const struct option opts[] = {
    { "profile", required_argument, NULL, 'p' },
    { "rootless", no_argument, NULL, 'r' },
    { "bundle", required_argument, NULL, 'b' },
    { "image", required_argument, NULL, 'I' },
    { "help", no_argument, NULL, 'h' },
    CMD_OVERRIDE_OPTIONS,
    { NULL, 0, NULL, 0 },
  };
  const char *profile = "default", *bundle = ".", *image = NULL;
  bool rootless = false;
  struct cmd_overrides ov = { 0 };
  int c, r;
  while ((c = getopt_long (argc, argv, "p:b:h" CMD_OVERRIDE_SHORTOPTS, opts, NULL)) != -1)
    switch (c)
      {
      case 'p': profile = optarg; break;
      case 'r': rootless = true; break;
      case 'b': bundle = optarg; break;
      case 'I': image = optarg; break;
      case 'h': cmd_overrides_free (&ov); return cmd_help (spec_help);
      default:
        r = cmd_override_option (&ov, c, optarg, "spec");
        if (r <= 0)
          {
            cmd_overrides_free (&ov);
            return r < 0 ? EXIT_HAKO : cmd_bad_option ("spec", argv, opts);
          }
      }
  int status = spec_write (profile, rootless, image, bundle, &ov, argc - optind);
  cmd_overrides_free (&ov);
  return status;
}
