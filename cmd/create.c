/* create: build a sandbox from a bundle or a profile; its process waits for start.
 * Also the config loading that create and run share. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "lib/util.h"
#include "runtime/sandbox.h"

static int
replace_args (struct oci_spec *spec, char *const *args, hk_err *err)
{
  if (args == NULL)
    return 0;
  if (args[0] == NULL)
    return err_set (err, EINVAL, "no command after --");
  if (spec->process == NULL)
    return err_set (err, EINVAL, ".process: required to create a sandbox");
  strv_free (spec->process->args);
  spec->process->args = strv_dup (args);
  return 0;
}

int
cmd_load_config (const char *bundle, const char *profile, char *const *args, bool host_fallback,
                 struct config_src *out, hk_err *err)
{
  *out = (struct config_src){ 0 };
  out->bundle = path_absolute (bundle ? bundle : ".");
  cleanup_free char *path = xasprintf ("%s/config.json", out->bundle);
  if (profile == NULL && host_fallback && bundle == NULL && access (path, F_OK) < 0)
    profile = "host";
  if (profile)
    {
      int p = oci_profile_from_name (profile);
      if (p < 0)
        return err_set (err, EINVAL, "--profile: unknown profile \"%s\" (default, host)", profile);
      if (p == OCI_PROFILE_HOST && bundle == NULL)
        {
          free (out->bundle);
          out->bundle = NULL;
        }
      if (oci_profile_generate (p, geteuid () != 0, args, &out->json, err) < 0)
        return -1;
      out->len = strlen (out->json);
      if (oci_spec_parse (out->json, out->len, &out->spec, err) < 0)
        return err_prefix (err, "profile %s", profile);
      return 0;
    }
  struct stat sb;
  if (stat (out->bundle, &sb) < 0)
    return err_sys (err, "bundle %s", out->bundle);
  if (file_read_all (path, 16 << 20, &out->json, &out->len, err) < 0)
    return -1;
  if (oci_spec_parse (out->json, out->len, &out->spec, err) < 0)
    return err_prefix (err, "%s", path);
  return replace_args (out->spec, args, err);
}

void
cmd_config_free (struct config_src *c)
{
  free (c->bundle);
  free (c->json);
  if (c->spec)
    oci_spec_free (c->spec);
  cmd_image_free (c);
  *c = (struct config_src){ 0 };
}

static const char create_help[] =
  "Usage: hako create [OPTIONS] ID\n\n"
  "Build a sandbox; its process waits until `hako start ID`.\n\n"
  "  -b, --bundle DIR        bundle with config.json (default: current directory)\n"
  "      --profile P         no bundle config: use profile P (host)\n"
  "      --image NAME        the root (and, without --bundle, the config) from an image\n"
  "      --pid-file FILE     write the sandbox process's host pid to FILE\n"
  "      --no-new-keyring    accepted for runc compatibility (no keyring is created)\n"
  "  -h, --help              this text\n";

int
cmd_create (int argc, char **argv)
{
  static const struct option opts[] = {
    { "bundle", required_argument, NULL, 'b' },
    { "profile", required_argument, NULL, 'P' },
    { "image", required_argument, NULL, 'i' },
    { "pid-file", required_argument, NULL, 'p' },
    { "no-new-keyring", no_argument, NULL, 'k' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  const char *bundle = NULL, *profile = NULL, *pid_file = NULL, *image = NULL;
  int c;
  while ((c = getopt_long (argc, argv, "b:h", opts, NULL)) != -1)
    switch (c)
      {
      case 'b': bundle = optarg; break;
      case 'P': profile = optarg; break;
      case 'i': image = optarg; break;
      case 'p': pid_file = optarg; break;
      case 'k': break;
      case 'h': return cmd_help (create_help);
      default: return cmd_usage ("create", "bad option");
      }
  if (argc - optind != 1)
    return cmd_usage ("create", "expects exactly one sandbox ID");
  const char *id = argv[optind];
  hk_err err = { 0 };
  struct store st = { 0 };
  struct config_src cfg = { 0 };
  int status = EXIT_HAKO;
  if (cmd_store (&st, &err) < 0 || cmd_load_source (bundle, profile, image, NULL, false, &cfg, &err) < 0)
    status = cmd_fail ("create", id, &err);
  else
    {
      struct sbx_create_opts o = { .id = id, .bundle = cfg.bundle, .config_json = cfg.json,
                                   .config_len = cfg.len, .spec = cfg.spec, .pid_file = pid_file,
                                   .image_layers = cfg.layers, .image_id = cfg.image_id };
      if (sbx_create (&st, &o, NULL, &status, &err) < 0)
        cmd_fail ("create", id, &err);
      else
        status = 0;
    }
  if (status != 0)
    status = EXIT_HAKO;  /* create only says whether it worked */
  cmd_config_free (&cfg);
  store_fini (&st);
  return status;
}
