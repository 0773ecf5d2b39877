/* egress_update: `hako update --allow/--deny/--revoke/--secret/--network` —
 * the sandbox's config and kept secrets rewritten under its lock, then its
 * running proxy told over its control socket (proxy_ctl.c), so that the
 * next request, and every connection open now, meets the new policy. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/util.h"
#include "runtime/proxy/egress.h"
#include "runtime/proxy/netpolicy.h"
#include "runtime/proxy/proxy.h"
#include "runtime/proxy/proxy_ctl.h"
#include "runtime/state/sbxstate.h"

/* The kept values, with the secrets given now read from their sources
 * (replacing one of the same name), and those the config no longer names
 * dropped. */
static int
merge_values (const struct store_entry *e, const struct oci_spec *spec, const struct egress_change *ch,
              struct oci_secret_value **out, size_t *n, hk_err *err)
{
  struct oci_secret_value *kept;
  size_t nk;
  if (egress_load_values (e, &kept, &nk, err) < 0)
    return -1;
  const struct hako_sandbox *sb = &spec->sandbox;
  *out = xcalloc (sb->n_secrets + 1, sizeof **out);
  *n = 0;
  int r = 0;
  for (size_t i = 0; r == 0 && i < sb->n_secrets; i++)
    {
      const char *name = sb->secrets[i].name;
      char *value = NULL;
      size_t j = 0;
      while (j < ch->n_secrets && strcmp (ch->secrets[j].name, name) != 0)
        j++;
      if (j < ch->n_secrets)
        r = egress_read_value (name, ch->secrets[j].from, &value, err);
      else
        {
          for (size_t k = 0; k < nk && value == NULL; k++)
            if (strcmp (kept[k].name, name) == 0)
              value = xstrdup (kept[k].value);
          if (value == NULL)
            r = egress_read_value (name, sb->secrets[i].from, &value, err);
        }
      if (r == 0)
        {
          (*out)[*n].name = xstrdup (name);
          (*out)[(*n)++].value = value;
        }
    }
  oci_secret_values_free (kept, nk);
  if (r < 0)
    {
      oci_secret_values_free (*out, *n);
      *out = NULL;
      *n = 0;
    }
  return r;
}

/* The new config's text, checked: proxied, parsed, and asking for no
 * interception a sandbox made without its CA could give. */
static int
new_config (const struct store_entry *e, const char *text, size_t len, const struct egress_change *ch,
            char **out, size_t *out_len, struct oci_spec **spec, hk_err *err)
{
  /* The mode first: rules for a sandbox without the proxy are refused as
   * such, not as a config error. */
  struct oci_spec *old = NULL;
  if (oci_spec_parse (text, len, &old, err) < 0)
    return -1;
  bool proxied = netpolicy_proxied (old);
  oci_spec_free (old);
  if (!proxied)
    return err_setk (
        err, ERR_INVALID_ARGUMENT, EINVAL,
        "the sandbox's network is not through the proxy (mode allowlist or denylist): its rules and "
        "secrets are set at create (--network, --allow)");
  struct oci_net_edit ed = { .mode = ch->mode,
                             .allow = ch->allow,
                             .deny = ch->deny,
                             .revoke = ch->revoke,
                             .secrets = ch->secrets,
                             .n_secrets = ch->n_secrets,
                             .keep_placeholders = true };
  if (oci_spec_set_network (text, len, &ed, out, out_len, err) < 0
      || oci_spec_parse (*out, *out_len, spec, err) < 0)
    return -1;
  if (!netpolicy_proxied (*spec))
    return err_setk (
        err, ERR_INVALID_ARGUMENT, EINVAL,
        "the sandbox's network is not through the proxy (mode allowlist or denylist): its rules and "
        "secrets are set at create (--network, --allow)");
  cleanup_free char *key = store_path (e, EGRESS_CA_KEY);
  if (egress_intercepts (*spec) && access (key, F_OK) < 0)
    return err_setk (err, ERR_INVALID_ARGUMENT, EINVAL,
                     "the sandbox was created without interception, so its trust has no CA of its own: https "
                     "request rules and secrets need one from create on (create it with one)");
  return 0;
}

static int
update_locked (const struct store_entry *e, const struct egress_change *ch, size_t *cut, hk_err *err)
{
  cleanup_free char *config = store_path (e, "config.json");
  cleanup_free char *text = NULL, *out = NULL;
  size_t len, out_len;
  struct oci_spec *spec = NULL;
  struct oci_secret_value *v = NULL;
  size_t n = 0;
  *cut = 0;
  if (file_read_all (config, 1 << 24, &text, &len, err) < 0)
    return err_prefix (err, "the sandbox's config");
  int r = new_config (e, text, len, ch, &out, &out_len, &spec, err);
  if (r == 0)
    r = merge_values (e, spec, ch, &v, &n, err);
  if (r == 0 && spec->sandbox.n_secrets)
    r = egress_store_values (e, v, n, err);
  if (r == 0)
    r = file_write_atomic (config, out, out_len, 0600, err);
  if (r == 0 && sbx_proxy_pid (e) > 0)
    {
      char *msg = oci_egress_update_text (out, out_len, v, n, err);
      r = msg ? proxy_ctl_update (e, msg, strlen (msg), cut, err) : -1;
      if (r < 0)
        err_prefix (err, "its config is updated (a restart has the new policy), its running proxy is not");
      if (msg)
        explicit_bzero (msg, strlen (msg));
      free (msg);
    }
  oci_secret_values_free (v, n);
  if (spec)
    oci_spec_free (spec);
  return r;
}

int
sbx_update_network (const struct store *st, const char *id, const struct egress_change *ch, size_t *cut,
                    hk_err *err)
{
  struct store_entry e;
  if (store_open (st, id, true, &e, err) < 0)
    return -1;
  int r = update_locked (&e, ch, cut, err);
  store_close (&e);
  return r;
}
