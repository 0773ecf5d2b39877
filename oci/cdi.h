/* cdi: the Container Device Interface — vendor specs (JSON or YAML) in
 * /etc/cdi and /var/run/cdi naming devices as vendor.com/class=name, and
 * their containerEdits applied onto a config's text before create. */
#ifndef HAKO_OCI_CDI_H
#define HAKO_OCI_CDI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/err.h"

/* The spec directories by default, lowest priority first. */
#define CDI_DEFAULT_DIRS "/etc/cdi:/var/run/cdi"

/* One device node, mount or hook of a containerEdits object. */
struct cdi_node
{
  char *path;      /* in the sandbox */
  char *host_path; /* NULL: path */
  char type;       /* 'c', 'b', 'u', 'p'; 0 when absent (the host node's) */
  bool has_major, has_minor, has_mode, has_uid, has_gid;
  int64_t major, minor;
  uint32_t mode; /* permission bits */
  uint32_t uid, gid;
  char *permissions; /* cgroup access, "rwm" subset; NULL: rwm */
};

struct cdi_mount
{
  char *host_path, *container_path, *type;
  char **options;
};

struct cdi_hook
{
  char *name; /* createRuntime, createContainer, startContainer, poststop, ... */
  char *path;
  char **args, **env;
  bool has_timeout;
  int timeout;
};

struct cdi_edits
{
  char **env; /* K=V */
  struct cdi_node *nodes;
  size_t n_nodes;
  struct cdi_mount *mounts;
  size_t n_mounts;
  struct cdi_hook *hooks;
  size_t n_hooks;
  uint32_t *gids;
  size_t n_gids;
};

struct cdi_device
{
  char *name;
  struct cdi_edits edits;
};

struct cdi_spec
{
  char *file;    /* where it was read from */
  int priority;  /* index of its directory: a later directory wins */
  char *version; /* cdiVersion */
  char *kind;    /* vendor.com/class */
  struct cdi_device *devices;
  size_t n_devices;
  struct cdi_edits edits; /* spec-wide */
};

struct cdi_registry
{
  struct cdi_spec **specs;
  size_t n;
};

/* Parse and validate one spec's text; yaml: the text is YAML (else JSON).
 * Errors name file and field (kind invalid_config). */
int cdi_spec_parse (const char *text, size_t len, const char *file, bool yaml, struct cdi_spec **out,
                    hk_err *err);
void cdi_spec_free (struct cdi_spec *s);

/* YAML text as JSON text (plain scalars typed: null, booleans, integers,
 * YAML 1.1 octals; anchors and aliases refused). */
int cdi_yaml_to_json (const char *text, size_t len, char **out, size_t *out_len, hk_err *err);

/* Spec directories: --cdi-spec-dir (cdi_add_dir, repeatable) replaces the
 * node config's cdi_spec_dirs (cdi_set_node_dirs), which replaces the
 * defaults.  cdi_dirs returns the list in force (NULL-terminated, static). */
void cdi_add_dir (const char *dir);
void cdi_set_node_dirs (char *const *dirs);
char *const *cdi_dirs (void);

/* Every *.json, *.yaml and *.yml of each directory (missing ones skipped),
 * in name order; dirs NULL: cdi_dirs ().  A spec that does not validate
 * fails the whole load, naming it. */
int cdi_load (char *const *dirs, struct cdi_registry *out, hk_err *err);
void cdi_registry_free (struct cdi_registry *r);

/* A resolved device: its spec and its entry. */
struct cdi_ref
{
  const struct cdi_spec *spec;
  const struct cdi_device *dev;
};

/* Whether name is a well-formed vendor.com/class=name; *kind_len is the
 * length of the kind part. */
bool cdi_is_qualified (const char *name, size_t *kind_len);
/* One request: "vendor.com/class=name", "vendor.com/class=all" (the
 * spec's device named all, else every device of the kind), or a bare name
 * found in exactly one spec.  Appends to *refs.  Errors: an unknown device
 * (not_found), an ambiguous one (invalid_config), a malformed name
 * (invalid_argument). */
int cdi_resolve (const struct cdi_registry *r, const char *request, struct cdi_ref **refs, size_t *n,
                 hk_err *err);

/* The devices a config asks for, applied: the requests are extra (the
 * command line's --device, may be NULL), .sandbox.devices and the values of
 * the cdi.k8s.io/... annotations (comma-separated), less those already in
 * .sandbox.devices_applied.  A request starting with '/' is a host device
 * node mirrored as it is.  The edits go into the config's text:
 * linux.devices and an allow rule each in linux.resources.devices, mounts,
 * process.env, hooks and process.user.additionalGids; .sandbox.devices_applied
 * gets the requests and .sandbox.cdi_devices the qualified names (what
 * admission counts).  *out NULL: nothing to apply. */
int cdi_apply_config (const char *json, size_t len, char *const *extra, char **out, size_t *out_len,
                      hk_err *err);

/* Every qualified name the registry defines, once each (doctor, features). */
char **cdi_registry_names (const struct cdi_registry *r);

/* The config text with devices appended to .sandbox.devices (hako spec
 * --device: resolved when the sandbox is made, on the host it runs on). */
int cdi_config_add_requests (const char *json, size_t len, char *const *devices, char **out, size_t *out_len,
                             hk_err *err);

#endif
