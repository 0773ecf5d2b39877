/* spec: write a ready config.json from a profile. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "lib/util.h"
#include "runtime/admission.h"

static const char spec_help[]
    = "Usage: hako spec [--profile default|host] [--rootless] [--image NAME] [--disk SIZE]\n"
      "                 [--bundle DIR]\n\n"
      "Write DIR/config.json (default: ./config.json); an existing one is kept.\n"
      "  -p, --profile P   default (runc-like bundle with a rootfs/) or host (no image)\n"
      "      --rootless    add a user namespace mapping the caller to root\n"
      "      --image NAME  the default profile with the image's Entrypoint, Cmd, Env,\n"
      "                    WorkingDir and User, and sandbox.image\n"
      "      --disk SIZE   sandbox.limits.disk: bytes or a k/m/g suffix, -1 for none\n"
      "      --device NAME sandbox.devices: a CDI device or a host node (repeatable)\n"
      "  -b, --bundle DIR  where to write config.json\n";

/* --disk written into the generated config, which is parsed to check it. */
static int
spec_disk (const char *disk, char **json, hk_err *err)
{
  cleanup_free char *out = NULL;
  size_t len;
  struct oci_spec *spec = NULL;
  if (oci_spec_set_disk (*json, strlen (*json), disk, &out, &len, err) < 0
      || oci_spec_parse (out, len, &spec, err) < 0)
    return err_prefix (err, "--disk %s", disk);
  oci_spec_free (spec);
  free (*json);
  *json = steal_pointer (&out);
  return 0;
}

int
cmd_spec (int argc, char **argv)
{
  static const struct option opts[] = {
    { "profile", required_argument, NULL, 'p' },
    { "rootless", no_argument, NULL, 'r' },
    { "bundle", required_argument, NULL, 'b' },
    { "image", required_argument, NULL, 'i' },
    { "disk", required_argument, NULL, 'D' },
    { "device", required_argument, NULL, CMD_OPT_DEVICE },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  const char *profile = "default", *bundle = ".", *image = NULL, *disk = NULL;
  cleanup_strv char **devices = NULL;
  bool rootless = false;
  int c;
  while ((c = getopt_long (argc, argv, "p:b:h", opts, NULL)) != -1)
    switch (c)
      {
      case 'p': profile = optarg; break;
      case 'r': rootless = true; break;
      case 'b': bundle = optarg; break;
      case 'i': image = optarg; break;
      case 'D': disk = optarg; break;
      case CMD_OPT_DEVICE:
        if (cmd_device_option (&devices, optarg, "spec") < 0)
          return EXIT_HAKO;
        break;
      case 'h': return cmd_help (spec_help);
      default: return cmd_bad_option ("spec", argv, opts);
      }
  if (optind != argc)
    return cmd_usage ("spec", "takes no arguments");
  int p = oci_profile_from_name (profile);
  if (p < 0)
    return cmd_usage ("spec", "unknown profile \"%s\" (default, host)", profile);
  hk_err err = { 0 };
  cleanup_free char *json = NULL;
  cleanup_free char *path = xasprintf ("%s/config.json", bundle);
  if (image && (rootless || p != OCI_PROFILE_DEFAULT))
    return cmd_usage ("spec", "--image goes with the default profile only (no --rootless: an image "
                              "sandbox's layers are mounted idmapped, which needs root)");
  /* The limits of this machine (or of its node config), now: the file
   * keeps them wherever it runs. */
  struct oci_profile_limits lim;
  if (image ? cmd_image_spec (image, NULL, &json, &err) < 0
            : admission_profile_limits (&lim, &err) < 0
                  || oci_profile_generate (p, rootless, NULL, &lim, &json, &err) < 0)
    return cmd_fail ("spec", NULL, &err);
  if (disk && spec_disk (disk, &json, &err) < 0)
    return cmd_fail ("spec", NULL, &err);
  if (cmd_spec_devices (devices, &json, &err) < 0)
    return cmd_fail ("spec", NULL, &err);
  /* O_EXCL: never overwrite a config someone edited (runc refuses too). */
  cleanup_close int fd = open (path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0)
    {
      if (errno == EEXIST)
        err_set (&err, EEXIST, "%s already exists; remove it first", path);
      else
        err_sys (&err, "%s", path);
      return cmd_fail ("spec", NULL, &err);
    }
  if (fd_write_all (fd, json, strlen (json)) < 0 || fd_write_all (fd, "\n", 1) < 0)
    {
      err_sys (&err, "write %s", path);
      return cmd_fail ("spec", NULL, &err);
    }
  return 0;
}
