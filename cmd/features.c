/* features: the OCI runtime features JSON. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "cmd/config/config.h"
#include "lib/util.h"
#include "oci/cdi.h"
#include "oci/state.h"
#include "runtime/confine/landlock.h"
#include "runtime/confine/seccomp.h"
#include "runtime/save/checkpoint.h"

static char *
cdi_names_joined (void)
{
  hk_err err = { 0 };
  struct cdi_registry reg;
  if (cmd_cdi_dirs (&err) < 0 || cdi_load (NULL, &reg, &err) < 0)
    return xstrdup ("");
  char **names = cdi_registry_names (&reg);
  size_t len = 1;
  for (size_t i = 0; names[i]; i++)
    len += strlen (names[i]) + 1;
  char *s = xcalloc (1, len);
  for (size_t i = 0; names[i]; i++)
    strcat (strcat (s, i ? "," : ""), names[i]);
  strv_free (names);
  cdi_registry_free (&reg);
  return s;
}

int
cmd_features (int argc, char **argv)
{
  static const struct option opts[] = { { "format", required_argument, NULL, 'f' },
                                        { "help", no_argument, NULL, 'h' },
                                        { NULL, 0, NULL, 0 } };
  int c;
  while ((c = getopt_long (argc, argv, "f:h", opts, NULL)) != -1)
    if (c == 'h')
      return cmd_help ("Usage: hako features [--format json]\n\n"
                       "Print what this hako supports, as OCI features JSON.\n");
    else if (c != 'f')
      return cmd_bad_option ("features", argv, opts);
    else if (cmd_format ("features", optarg, true) < 0)
      return EXIT_HAKO;
  if (argc > optind)
    return cmd_usage ("features", "takes no arguments");
  hk_err err = { 0 };
  cleanup_free char *json = NULL;
  size_t len;
  cleanup_free char **known = seccomp_flag_names (false);
  cleanup_free char **supported = seccomp_flag_names (true);
  struct store st = { 0 };
  struct criu_verdict criu;
  /* Makes nothing: clients call features before anything else, maybe as
   * a user who cannot create the state root. */
  cmd_store_paths (&st);
  cleanup_free char *cache = ckpt_cache_path (&st);
  criu_probe (cache, &criu);
  struct oci_features_host host = {
    .landlock_abi = landlock_abi (),
    .landlock_abi_used = LANDLOCK_ABI_USED,
    .seccomp_known_flags = known,
    .seccomp_supported_flags = supported,
    .criu = criu.works ? "true" : "false",
    .criu_version = criu.version,
    .criu_reason = criu.reason,
  };
  /* The CDI devices found; an unreadable spec dir lists none. */
  cleanup_free char *cdi = cdi_names_joined ();
  host.cdi_devices = cdi;
  int r = oci_features_json (&host, &json, &len, &err) < 0 ? cmd_fail ("features", NULL, &err) : 0;
  if (r == 0)
    printf ("%s\n", json);
  criu_verdict_free (&criu);
  store_fini (&st);
  return r;
}
