/* internal: what the files of cmd/config/ share, each a step of
 * cmd_config_load (config.c).  For this room only. */
#ifndef HAKO_CMD_CONFIG_INTERNAL_H
#define HAKO_CMD_CONFIG_INTERNAL_H

#include "cmd/config/config.h"

/* ---- source.c ---- */
/* The config from a bundle (r->config_file instead of its config.json when
 * given) or from r->profile (NULL: the bundle's); r->args (may be NULL)
 * replace process.args.  host_fallback: with no profile and no
 * BUNDLE/config.json, use the host profile (run's "no bundle needed"). */
int cmd_load_config (const struct cmd_config_req *r, bool host_fallback, struct config_src *out, hk_err *err);
/* --from-snapshot DIR's config (and image layers), and its data dir into
 * out->snapshot_data. */
int cmd_load_snapshot (const char *dir, struct config_src *out, hk_err *err);
/* The config text replaced by json (an edit of it, taken over), parsed
 * again; args as for cmd_load_config. */
int cmd_replace_config (struct config_src *cfg, char *json, size_t len, char *const *args, hk_err *err);

/* ---- image_sandbox.c ---- */
/* cmd_load_config, plus images: with req->image and no bundle the config is
 * the default profile with the image's process (args replace its Cmd); with
 * a bundle, or a config naming sandbox.image, only the root comes from the
 * image. */
int cmd_load_source (const struct cmd_config_req *req, struct config_src *out, hk_err *err);
/* An O_PATH fd of the image layer (top first) whose etc/passwd the sandbox
 * sees, or -1 when none has one. */
int cmd_image_user_root (char *const *layers);

/* ---- overrides.c ---- */
/* --network, --allow, --deny and --secret written into the config text (so the frozen
 * config.json says what the sandbox runs with), parsed again; args as for
 * cmd_load_config. */
int cmd_apply_network (struct config_src *cfg, const struct cmd_net *n, char *const *args, hk_err *err);
/* --disk SIZE (create, run, spec): sandbox.limits.disk written into the
 * config text and parsed again (which checks SIZE); NULL: nothing. */
int cmd_apply_disk (struct config_src *cfg, const char *disk, char *const *args, hk_err *err);
/* All of ov's flags written into the config text, which is parsed again;
 * args as for cmd_load_config. */
int cmd_apply_overrides (struct config_src *cfg, const struct cmd_overrides *ov, char *const *args,
                         hk_err *err);

/* ---- devices.c ---- */
/* Append arg to *devices; -1 after a usage error (reported). */
int cmd_device_option (char ***devices, const char *arg, const char *verb);
/* The devices asked for (devices, .sandbox.devices, cdi.k8s.io/ annotations)
 * applied into the config text, parsed again; args as for cmd_load_config. */
int cmd_apply_devices (struct config_src *cfg, char *const *devices, char *const *args, hk_err *err);
/* hako spec --device: the names into .sandbox.devices of *json, checked. */
int cmd_spec_devices (char *const *devices, char **json, hk_err *err);

/* ---- volumes.c ---- */
/* A warning for each of ov's -v binds (not idmapped) that the sandbox's
 * user, as the host sees it, cannot enter, read (":ro") or write. */
void cmd_warn_volumes (const struct oci_spec *spec, const struct cmd_overrides *ov);

/* ---- profile.c ---- */
/* The config in learning mode: the learned dimensions not enforced, and said so. */
int cmd_apply_learn (struct config_src *cfg, const struct cmd_learn *l, const char *verb, const char *id,
                     char *const *args, hk_err *err);
/* --profile-file FILE: a learned profile enforced (oci_spec_apply_profile). */
int cmd_apply_profile_file (struct config_src *cfg, const char *file, char *const *args, hk_err *err);

#endif
