/* source: where a sandbox's config comes from — a bundle's config.json (or
 * --config FILE), a profile, a snapshot — and the config text kept with its
 * parse: every edit replaces the text and parses it again. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "cmd/config/internal.h"
#include "images/image.h"
#include "lib/util.h"
#include "runtime/node/admission.h"
#include "runtime/save/snapshot.h"

static int
replace_args (struct oci_spec *spec, char *const *args, hk_err *err)
{
  if (args == NULL)
    return 0;
  if (args[0] == NULL)
    return err_setk (err, ERR_INVALID_ARGUMENT, EINVAL, "no command after --");
  if (spec->process == NULL)
    return err_setk (err, ERR_INVALID_CONFIG, EINVAL, ".process: required to create a sandbox");
  strv_free (spec->process->args);
  spec->process->args = strv_dup (args);
  return 0;
}

int
cmd_load_config (const struct cmd_config_req *r, bool host_fallback, struct config_src *out, hk_err *err)
{
  const char *bundle = r->bundle, *profile = r->profile, *config_file = r->config_file;
  char *const *args = r->args;
  *out = (struct config_src){ 0 };
  out->bundle = path_absolute (bundle ? bundle : ".");
  /* As crun: a relative FILE is from the cwd, except config.json itself,
   * which is the bundle's. */
  bool own = config_file && strcmp (config_file, "config.json") != 0;
  if (config_file && profile)
    return err_setk (err, ERR_INVALID_ARGUMENT, EINVAL, "--config and --profile cannot be combined");
  cleanup_free char *path = own ? path_absolute (config_file) : xasprintf ("%s/config.json", out->bundle);
  if (profile == NULL && host_fallback && bundle == NULL && config_file == NULL && access (path, F_OK) < 0)
    profile = "host";
  out->cwd_bundle = profile == NULL && host_fallback && bundle == NULL;
  if (profile)
    {
      int p = oci_profile_from_name (profile);
      if (p < 0)
        return err_setk (err, ERR_INVALID_ARGUMENT, EINVAL,
                         "--profile: unknown profile \"%s\" (default, host, runc)", profile);
      if (p == OCI_PROFILE_HOST && bundle == NULL)
        {
          free (out->bundle);
          out->bundle = NULL;
        }
      struct oci_profile_limits lim;
      if (admission_profile_limits (&lim, err) < 0
          || oci_profile_generate (p, r->to_file ? r->rootless : geteuid () != 0, args, &lim, &out->json, err)
                 < 0)
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

/* The config text replaced by json (an edit of it), parsed again. */
int
cmd_replace_config (struct config_src *cfg, char *json, size_t len, char *const *args, hk_err *err)
{
  struct oci_spec *spec;
  if (oci_spec_parse (json, len, &spec, err) < 0)
    {
      free (json);
      return -1;
    }
  free (cfg->json);
  cfg->json = json;
  cfg->len = len;
  oci_spec_free (cfg->spec);
  cfg->spec = spec;
  return replace_args (cfg->spec, args, err);
}

void
cmd_config_free (struct config_src *c)
{
  free (c->bundle);
  free (c->json);
  free (c->snapshot_data);
  if (c->spec)
    oci_spec_free (c->spec);
  cmd_image_free (c);
  *c = (struct config_src){ 0 };
}

void
cmd_image_free (struct config_src *c)
{
  if (c->images)
    {
      img_store_close (c->images);
      free (c->images);
    }
  strv_free (c->layers);
  free (c->image_id);
  c->images = NULL;
  c->layers = NULL;
  c->image_id = NULL;
}

static int
load_snapshot (const char *dir, struct snapshot_src *snap, struct config_src *out, hk_err *err)
{
  *out = (struct config_src){ 0 };
  if (snapshot_open (dir, snap, err) < 0)
    return -1;
  /* A bundle sandbox's root is the bundle's own directory, which a branch
   * cannot share without seeing the other's writes. */
  if (strcmp (snap->kind, "bundle") == 0)
    return err_set (err, ENOTSUP, "snapshot %s is of a bundle sandbox: make a bundle from its data/ instead",
                    dir);
  out->json = xmalloc (snap->config_len + 1);
  memcpy (out->json, snap->config, snap->config_len + 1);
  out->len = snap->config_len;
  if (oci_spec_parse (out->json, out->len, &out->spec, err) < 0)
    return err_prefix (err, "snapshot %s: config.json", dir);
  if (snap->layers)
    {
      size_t n = 0;
      while (snap->layers[n])
        n++;
      out->layers = xcalloc (n + 1, sizeof *out->layers);
      for (size_t i = 0; i < n; i++)
        out->layers[i] = xstrdup (snap->layers[i]);
      out->image_id = xstrdup (snap->image_id);
    }
  out->snapshot_data = xasprintf ("%s/%s", snap->dir, SNAPSHOT_DATA);
  return 0;
}

int
cmd_load_snapshot (const char *dir, struct config_src *out, hk_err *err)
{
  struct snapshot_src snap = { 0 };
  int r = load_snapshot (dir, &snap, out, err);
  snapshot_src_free (&snap);
  return r;
}
