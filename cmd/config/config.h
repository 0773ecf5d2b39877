/* config: the room cmd/config/ — a sandbox's config as create, run and spec
 * make it.  Its source (a bundle's config.json, a profile, an image, a
 * snapshot: source.c, image_sandbox.c), then what the command line adds —
 * a learned profile (profile.c), the shared flags (overrides.c), devices
 * (devices.c), learning mode — each written into the config text and the
 * text parsed again, so the frozen config.json says what the sandbox runs
 * with.  The verbs parse their flags with cmd_override_option and make the
 * config with one call, cmd_config_load (config.c); internal.h is for this
 * room's files.  It calls cmd/'s reporting, store and option helpers, never
 * a verb. */
#ifndef HAKO_CMD_CONFIG_H
#define HAKO_CMD_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include "lib/err.h"
#include "oci/spec.h"

/* A sandbox's config: its text, its parse, and what came with its source. */
struct img_store;
struct config_src
{
  char *bundle;    /* absolute, or NULL for the host profile */
  bool cwd_bundle; /* run's fallback found ./config.json and took the cwd as the bundle */
  char *json;
  size_t len;
  struct oci_spec *spec;
  /* From an image: the store (held shared until the sandbox is made), its
   * layer dirs top first, its manifest digest. */
  struct img_store *images;
  char **layers;
  char *image_id;
  /* From a snapshot (--from-snapshot): its data dir, to seed the new
   * sandbox's writable state with; else NULL. */
  char *snapshot_data;
};

/* --network MODE, --allow RULE, --deny RULE and --secret SPEC (create, run,
 * spec). */
struct cmd_net
{
  const char *mode;
  char **allow, **deny;
  struct oci_secret_arg *secrets;
  size_t n_secrets;
};
#define CMD_OPT_DENY 0x4601
#define CMD_OPT_SECRET 0x4602
/* Record option opt ('N' --network, 'A' --allow, CMD_OPT_DENY,
 * CMD_OPT_SECRET) into n; -1 after a usage error (reported).  create, run
 * and spec through the override table; update for a running sandbox's
 * policy. */
int cmd_net_option (struct cmd_net *n, int opt, const char *arg, const char *verb);
void cmd_net_free (struct cmd_net *n);

/* --device NAME (create, run, spec; devices.c): a CDI device
 * (vendor.com/class=name) or a host node (/dev/fuse), repeatable. */
#define CMD_OPT_DEVICE 0x4401

struct port_map;
/* ---- the flags run, create and spec share (overrides.c) ---- */
struct cmd_overrides
{
  struct cmd_net net; /* --network, --allow */
  const char *disk;   /* --disk */
  const char *user;   /* -u, resolved against the sandbox's root when applied */
  char **devices;     /* --device (cmd/devices.c) */
  bool interactive;   /* -i: docker's keep-stdin-open (a foreground sandbox has it) */
  struct oci_overrides o;
  /* -p (run and create list it, spec does not): ports to publish, kept in
   * the state dir rather than the config (runtime/proxy/ports.h). */
  struct port_map *ports;
  size_t n_ports;
};
enum
{
  CMD_OPT_MEMORY = 0x1000,
  CMD_OPT_MEMORY_SWAP,
  CMD_OPT_CPUS,
  CMD_OPT_PIDS,
  CMD_OPT_ENV_FILE,
  CMD_OPT_TMPFS,
  CMD_OPT_HOSTNAME,
  CMD_OPT_TIMEOUT,
  CMD_OPT_READ_ONLY,
  CMD_OPT_LABEL,
};
/* Their getopt_long entries and short options, for each verb's tables. */
#define CMD_OVERRIDE_SHORTOPTS "e:v:w:u:it"
/* clang-format off */
#define CMD_OVERRIDE_OPTIONS \
  { "network", required_argument, NULL, 'N' }, \
  { "allow", required_argument, NULL, 'A' }, \
  { "deny", required_argument, NULL, CMD_OPT_DENY }, \
  { "secret", required_argument, NULL, CMD_OPT_SECRET }, \
  { "disk", required_argument, NULL, 'D' }, \
  { "memory", required_argument, NULL, CMD_OPT_MEMORY }, \
  { "memory-swap", required_argument, NULL, CMD_OPT_MEMORY_SWAP }, \
  { "cpus", required_argument, NULL, CMD_OPT_CPUS }, \
  { "pids-limit", required_argument, NULL, CMD_OPT_PIDS }, \
  { "env", required_argument, NULL, 'e' }, \
  { "env-file", required_argument, NULL, CMD_OPT_ENV_FILE }, \
  { "volume", required_argument, NULL, 'v' }, \
  { "tmpfs", required_argument, NULL, CMD_OPT_TMPFS }, \
  { "workdir", required_argument, NULL, 'w' }, \
  { "user", required_argument, NULL, 'u' }, \
  { "hostname", required_argument, NULL, CMD_OPT_HOSTNAME }, \
  { "timeout", required_argument, NULL, CMD_OPT_TIMEOUT }, \
  { "read-only", no_argument, NULL, CMD_OPT_READ_ONLY }, \
  { "interactive", no_argument, NULL, 'i' }, \
  { "tty", no_argument, NULL, 't' }, \
  { "label", required_argument, NULL, CMD_OPT_LABEL }, \
  { "device", required_argument, NULL, CMD_OPT_DEVICE }
/* clang-format on */
/* Their lines of each verb's --help. */
#define CMD_OVERRIDES_HELP                                                                                   \
  "      --network MODE      none, host, allowlist or denylist (sets sandbox.network.mode)\n"                \
  "      --allow RULE        allow a destination (HOST[:PORT], *.SUFFIX, CIDR) or requests\n"                \
  "                          ('GET,HEAD https://HOST/PATH/**') (repeatable; implies allowlist)\n"            \
  "      --deny RULE         deny them (repeatable; alone implies denylist: all else allowed)\n"             \
  "      --secret NAME=env:VAR@HOST  NAME inside holds a placeholder the proxy replaces by\n"                \
  "                          $VAR (or file:/PATH's content) in requests to HOST over TLS\n"                  \
  "      --disk SIZE         bound what it keeps under the data root (sandbox.limits.disk:\n"                \
  "                          bytes or a k/m/g suffix, none; default 10g or node.json's)\n"                   \
  "      --memory SIZE       memory limit (bytes or a k/m/g suffix, -1 for none)\n"                          \
  "      --memory-swap SIZE  memory + swap limit, at least --memory (-1: unlimited swap)\n"                  \
  "      --cpus N            CPU time, in CPUs (\"1.5\": a quota of 150 ms a 100 ms period)\n"               \
  "      --pids-limit N      most processes at once (-1 for none)\n"                                         \
  "  -e, --env K=V           set K in the environment (K alone: hako's own value)\n"                         \
  "      --env-file FILE     K=V lines (# comments) added as -e\n"                                           \
  "  -v, --volume SRC:DST[:ro|rw][,idmap]  bind the existing path SRC at DST (idmap: its host\n"             \
  "                          owners shown as they are, and the sandbox writes as them)\n"                    \
  "      --tmpfs DST[:size=N,mode=M,ro,exec]  a fresh tmpfs at DST (noexec unless exec)\n"                   \
  "  -w, --workdir DIR       the process's working directory\n"                                              \
  "  -u, --user U[:G]        a name (the sandbox's /etc/passwd) or a uid, and a group or gid\n"              \
  "      --hostname NAME     the sandbox's hostname\n"                                                       \
  "      --timeout DUR       sandbox.limits.timeout (\"500ms\", \"30s\", \"5m\", \"1h\" or seconds)\n"       \
  "      --read-only         the root filesystem read-only (mounts keep their own mode)\n"                   \
  "  -t, --tty               the process gets a terminal (process.terminal)\n"                               \
  "      --label K=V         a label (metadata: `list --filter label=K=V`) (repeatable)\n"                   \
  "  -i, --interactive       accepted for docker's -it: a foreground sandbox reads hako's\n"                 \
  "                          stdin; with -t, stdin must be a terminal\n"                                     \
  "      --device NAME       a CDI device (vendor.com/class=name, =all) or a host node\n"                    \
  "                          (/dev/fuse) (repeatable)\n"
/* An option of theirs into ov: 1 taken, 0 not one of theirs, -1 after a
 * usage error (reported: 125, naming the flag and the accepted form). */
int cmd_override_option (struct cmd_overrides *ov, int opt, const char *arg, const char *verb);
void cmd_overrides_free (struct cmd_overrides *ov);
/* run/create: LISTEN_FDS in hako's environment (systemd socket activation)
 * adds its fds to *preserve and LISTEN_FDS/LISTEN_PID=1 to ov's env; -1
 * when reported. */
int cmd_listen_fds (const char *verb, unsigned int *preserve, struct cmd_overrides *ov);

/* What a verb asks its config to be made of. */
struct cmd_learn;
struct cmd_config_req
{
  /* The source: from_snapshot's config; else image's (with bundle, or a
   * config naming sandbox.image: only the root), profile's or the bundle's
   * config.json — or config_file's (--config, crun's: relative to the cwd,
   * but "config.json" is still the bundle's; the bundle stays the root's
   * base). */
  const char *bundle;
  const char *profile;
  const char *image;
  const char *config_file;
  const char *from_snapshot;
  /* run's command after --: replaces process.args (NULL: none given). */
  char *const *args;
  /* run: with no profile and no BUNDLE/config.json, the host profile. */
  bool host_fallback;
  /* spec: a config for wherever it runs — rootless as --rootless says
   * (create and run: as the caller is, not root), and --device names kept
   * as names in .sandbox.devices, resolved on the host that runs it. */
  bool to_file;
  bool rootless;
  /* Then, in this order: --profile-file (run; NULL: none), the shared
   * flags (NULL: none), and learning mode (run --learn; NULL, or its out
   * NULL: not learning), whose warnings name verb and id. */
  const char *profile_file;
  const struct cmd_overrides *ov;
  const struct cmd_learn *learn;
  const char *verb;
  const char *id;
};
/* Make the config r asks for into *out (cmd_config_free it, also after a
 * failure). */
int cmd_config_load (const struct cmd_config_req *r, struct config_src *out, hk_err *err);
void cmd_config_free (struct config_src *c);
/* Release the image store (run: once the sandbox has recorded its image). */
void cmd_image_free (struct config_src *c);

/* The node config's cdi_spec_dirs, given to oci/cdi.c (once). */
int cmd_cdi_dirs (hk_err *err);

#endif
