/* config: cmd_config_load, the one call create, run and spec make their
 * config with — its source, then each edit the command line asks for, in
 * the order that decides who wins. */
#include <string.h>

#include "cmd/cmd.h"
#include "cmd/config/internal.h"

/* The shared flags; for a config file (spec), --device's names are kept as
 * names, checked here but resolved on the host that runs it. */
static int
apply_flags (const struct cmd_config_req *r, struct config_src *cfg, hk_err *err)
{
  if (!r->to_file)
    {
      if (cmd_apply_overrides (cfg, r->ov, r->args, err) < 0)
        return -1;
      cmd_warn_volumes (cfg->spec, r->ov);
      return 0;
    }
  struct cmd_overrides rest = *r->ov;
  rest.devices = NULL;
  if (cmd_apply_overrides (cfg, &rest, r->args, err) < 0
      || cmd_spec_devices (r->ov->devices, &cfg->json, err) < 0)
    return -1;
  cfg->len = strlen (cfg->json);
  return 0;
}

int
cmd_config_load (const struct cmd_config_req *r, struct config_src *out, hk_err *err)
{
  if ((r->from_snapshot ? cmd_load_snapshot (r->from_snapshot, out, err) : cmd_load_source (r, out, err)) < 0)
    return -1;
  /* The profile first: what the command line asks for (--network, --allow a
   * loopback destination the profile withheld) is the user's explicit word,
   * applied over it. */
  if (cmd_apply_profile_file (out, r->profile_file, r->args, err) < 0)
    return -1;
  if (r->ov && apply_flags (r, out, err) < 0)
    return -1;
  if (r->learn && cmd_apply_learn (out, r->learn, r->verb, r->id, r->args, err) < 0)
    return -1;
  return 0;
}
