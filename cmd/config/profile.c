/* profile: the config edits of a learned profile — --profile-file enforces
 * one (hako-learn(7)), and run --learn's learning mode leaves the learned
 * dimensions unenforced and says so.  The learner itself is cmd/learn.c's. */
#include <stdio.h>

#include "cmd/cmd.h"
#include "cmd/config/internal.h"
#include "lib/trust.h"
#include "lib/util.h"
#include "oci/learn.h"

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
