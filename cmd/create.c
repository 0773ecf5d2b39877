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
#include "runtime/admission.h"
#include "runtime/sandbox.h"
#include "runtime/snapshot.h"

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

/* create/run --config FILE (crun's): the config read instead of the bundle's
 * config.json; the bundle stays what it was (the root is relative to it). */
static const char *config_file;

void
cmd_config_file (const char *file)
{
  config_file = file;
}

int
cmd_load_config (const char *bundle, const char *profile, char *const *args, bool host_fallback,
                 struct config_src *out, hk_err *err)
{
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
          || oci_profile_generate (p, geteuid () != 0, args, &lim, &out->json, err) < 0)
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

static void
strv_push (char ***v, const char *s)
{
  size_t k = strv_len (*v);
  *v = xrealloc (*v, (k + 2) * sizeof **v);
  (*v)[k] = xstrdup (s);
  (*v)[k + 1] = NULL;
}

/* --secret: checked now, so that a value that is not there fails before
 * anything is made (create reads it again, into the state dir). */
static int
secret_option (struct cmd_net *n, const char *arg, const char *verb)
{
  struct oci_secret_arg a;
  hk_err err = { 0 };
  if (oci_secret_arg_parse (arg, &a, &err) < 0)
    return cmd_usage (verb, "--secret %s", err.msg), -1;
  const char *missing = NULL;
  if (str_has_prefix (a.from, "env:") && getenv (a.from + 4) == NULL)
    missing = "is not set in hako's environment";
  else if (str_has_prefix (a.from, "file:") && access (a.from + 5, R_OK) < 0)
    missing = "cannot be read";
  if (missing)
    {
      cmd_usage (verb, "--secret %s: %s %s", a.name, a.from + (a.from[0] == 'e' ? 4 : 5), missing);
      oci_secret_arg_free (&a);
      return -1;
    }
  n->secrets = xrealloc (n->secrets, (n->n_secrets + 1) * sizeof *n->secrets);
  n->secrets[n->n_secrets++] = a;
  return 0;
}

int
cmd_net_option (struct cmd_net *n, int opt, const char *arg, const char *verb)
{
  if (opt == 'N')
    {
      if (strcmp (arg, "none") != 0 && strcmp (arg, "host") != 0 && strcmp (arg, "allowlist") != 0
          && strcmp (arg, "denylist") != 0)
        {
          cmd_usage (verb, "--network: unknown mode \"%s\" (none, host, allowlist, denylist)", arg);
          return -1;
        }
      n->mode = arg;
      return 0;
    }
  if (opt == CMD_OPT_SECRET)
    return secret_option (n, arg, verb);
  struct net_rule r;
  hk_err err = { 0 };
  if (oci_net_rule_parse (arg, &r, &err) < 0)
    {
      cmd_usage (verb, "--%s: %s", opt == 'A' ? "allow" : "deny", err.msg);
      return -1;
    }
  oci_net_rule_free (&r);
  strv_push (opt == 'A' ? &n->allow : &n->deny, arg);
  return 0;
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

/* Whether the config has a secret that still needs its placeholder. */
static bool
needs_placeholders (const struct oci_spec *spec)
{
  for (size_t i = 0; spec && i < spec->sandbox.n_secrets; i++)
    if (spec->sandbox.secrets[i].placeholder == NULL)
      return true;
  return false;
}

int
cmd_apply_network (struct config_src *cfg, const struct cmd_net *n, char *const *args, hk_err *err)
{
  if (n->mode == NULL && n->allow == NULL && n->deny == NULL && n->n_secrets == 0
      && !needs_placeholders (cfg->spec))
    return 0;
  /* --allow alone means the allowlist mode, --deny alone the denylist
   * mode; a config already in one keeps it. */
  enum hako_net_mode now = cfg->spec ? cfg->spec->sandbox.net_mode : HAKO_NET_UNSET;
  bool proxied = now == HAKO_NET_ALLOWLIST || now == HAKO_NET_DENYLIST;
  const char *mode = n->mode;
  if (mode == NULL && !proxied)
    mode = n->allow ? "allowlist" : n->deny ? "denylist" : NULL;
  bool will = mode ? strcmp (mode, "allowlist") == 0 || strcmp (mode, "denylist") == 0 : proxied;
  if (n->n_secrets && !will)
    return err_setk (err, ERR_INVALID_ARGUMENT, EINVAL,
                     "--secret: the proxy puts secrets in requests: give --allow or --deny (or --network "
                     "allowlist or denylist)");
  struct oci_net_edit e = {
    .mode = mode, .allow = n->allow, .deny = n->deny, .secrets = n->secrets, .n_secrets = n->n_secrets
  };
  char *json;
  size_t len;
  if (oci_spec_set_network (cfg->json, cfg->len, &e, &json, &len, err) < 0)
    return err_prefix (err, "--network");
  if (cmd_replace_config (cfg, json, len, args, err) < 0)
    return err_prefix (err, "--network/--allow/--deny/--secret");
  return 0;
}

int
cmd_apply_disk (struct config_src *cfg, const char *disk, char *const *args, hk_err *err)
{
  char *json;
  size_t len;
  if (disk == NULL)
    return 0;
  if (oci_spec_set_disk (cfg->json, cfg->len, disk, &json, &len, err) < 0
      || cmd_replace_config (cfg, json, len, args, err) < 0)
    return err_prefix (err, "--disk %s", disk);
  return 0;
}

void
cmd_net_free (struct cmd_net *n)
{
  strv_free (n->allow);
  strv_free (n->deny);
  for (size_t i = 0; i < n->n_secrets; i++)
    oci_secret_arg_free (&n->secrets[i]);
  free (n->secrets);
  *n = (struct cmd_net){ 0 };
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

int
cmd_load_snapshot (const char *dir, struct snapshot_src *snap, struct config_src *out, char **data,
                   hk_err *err)
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
  *data = xasprintf ("%s/%s", snap->dir, SNAPSHOT_DATA);
  return 0;
}

static const char create_help[]
    = "Usage: hako create [OPTIONS] ID\n\n"
      "Build a sandbox; its process waits until `hako start ID`.\n\n"
      "      --name ID           the sandbox's ID, as docker's --name (instead of the operand)\n"
      "  -b, --bundle DIR        bundle with config.json (default: current directory)\n"
      "      --config FILE       read the config from FILE instead of the bundle's config.json\n"
      "      --profile P         no bundle config: use profile P (host)\n"
      "      --image NAME        the root (and, without --bundle, the config) from an image\n"
      "      --from-snapshot DIR the config and writable state of a `hako snapshot` copy\n"
      "      --pid-file FILE     write the sandbox process's host pid to FILE\n" CMD_OVERRIDES_HELP
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
  { "pid-file", required_argument, NULL, 'p' },
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
                const char *console, unsigned int preserve, bool no_monitor, const char *snap_data)
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
                               .from_snapshot = snap_data };
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
  const char *from = NULL, *name = NULL;
  unsigned int preserve = 0;
  struct cmd_overrides ov = { 0 };
  bool no_monitor = false;
  int c, r;
  while ((c = getopt_long (argc, argv, "b:h" CMD_OVERRIDE_SHORTOPTS, opts, NULL)) != -1)
    switch (c)
      {
      case 'b': bundle = optarg; break;
      case 'C': cmd_config_file (optarg); break;
      case 'P': profile = optarg; break;
      case 'I': image = optarg; break;
      case 'p': pid_file = optarg; break;
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
  struct snapshot_src snap = { 0 };
  cleanup_free char *snap_data = NULL;
  if (cmd_store (&st, &err) < 0
      || (from ? cmd_load_snapshot (from, &snap, &cfg, &snap_data, &err)
               : cmd_load_source (bundle, profile, image, NULL, false, &cfg, &err))
             < 0
      || cmd_apply_overrides (&cfg, &ov, NULL, &err) < 0)
    status = cmd_fail ("create", id, &err);
  else
    status = create_sandbox (&st, id, &cfg, pid_file, console, preserve, no_monitor, snap_data);
  if (status != 0)
    status = EXIT_HAKO; /* create only says whether it worked */
  cmd_config_free (&cfg);
  snapshot_src_free (&snap);
  cmd_overrides_free (&ov);
  store_fini (&st);
  return status;
}
