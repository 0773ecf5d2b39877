/* cmd: the verb table's shared pieces — global options, errors, config loading. */
#ifndef HAKO_CMD_H
#define HAKO_CMD_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "lib/err.h"
#include "oci/spec.h"
#include "runtime/store.h"

struct globals
{
  const char *root;
  const char *data_root;
  const char *log;
  const char *log_format;
  bool debug;
};

extern struct globals globals;

/* A verb: argv[0] is the verb name; returns the process exit status. */
typedef int (*verb_fn) (int argc, char **argv);

int cmd_spec (int argc, char **argv);
int cmd_create (int argc, char **argv);
int cmd_start (int argc, char **argv);
int cmd_run (int argc, char **argv);
int cmd_state (int argc, char **argv);
int cmd_wait (int argc, char **argv);
int cmd_logs (int argc, char **argv);
int cmd_list (int argc, char **argv);
int cmd_kill (int argc, char **argv);
int cmd_delete (int argc, char **argv);
int cmd_features (int argc, char **argv);
int cmd_doctor (int argc, char **argv);
int cmd_pause (int argc, char **argv);
int cmd_resume (int argc, char **argv);
int cmd_stop (int argc, char **argv);
int cmd_exec (int argc, char **argv);
int cmd_put (int argc, char **argv);
int cmd_get (int argc, char **argv);
int cmd_cp (int argc, char **argv);
int cmd_ps (int argc, char **argv);
int cmd_update (int argc, char **argv);
int cmd_events (int argc, char **argv);
int cmd_image (int argc, char **argv);
int cmd_snapshot (int argc, char **argv);
int cmd_hibernate (int argc, char **argv);
int cmd_wake (int argc, char **argv);
int cmd_checkpoint (int argc, char **argv);
int cmd_restore (int argc, char **argv);

#define EXIT_HAKO 125
/* exec --timeout: the deadline killed the command (timeout(1)'s status). */
#define EXIT_TIMEOUT 124

/* "hako: VERB ID: MSG" on stderr and in the log; returns 125.  With
 * --log-format json, one object with the error's kind (err_kind_of), the
 * verb and the id (an image verb's operand is "image" instead). */
int cmd_fail (const char *verb, const char *id, const hk_err *err);
/* The same for a message with a kind of its own. */
int cmd_fail_kind (const char *verb, const char *id, enum err_kind kind, const char *msg);
/* The command could not be executed (status 126: kind permission; 127:
 * not_found): reported as an error; the exit status stays the command's. */
void cmd_not_run (const char *verb, const char *id, int status, const char *msg);
/* Usage error: "hako: VERB: MSG" plus a hint to --help, kind
 * invalid_argument; returns 125. */
int cmd_usage (const char *verb, const char *fmt, ...) __attribute__ ((format (printf, 2, 3)));
/* getopt_long returned '?' (opterr is 0): a usage error saying which option
 * of argv was wrong and how, with a "did you mean" for a long option that is
 * a typo of one of opts.  Returns 125. */
struct option;
int cmd_bad_option (const char *verb, char **argv, const struct option *opts);
/* The one of names[n] a typo of word most likely meant, or NULL. */
const char *cmd_suggest (const char *word, const char *const *names, size_t n);
/* Print a verb's help text (usage line + options) to stdout and return 0. */
int cmd_help (const char *text);

int cmd_store (struct store *st, hk_err *err);
/* A state as state, list and wait show it: a stopped sandbox's pid is 0, as
 * runc's (its process is gone, and the number may be another's by now). */
void cmd_state_shown (struct oci_state *s);
/* The store's paths from the global options, nothing made. */
void cmd_store_paths (struct store *st);

/* A verb that takes only --help and one sandbox ID and calls fn on it
 * (start, pause, resume): parse, run, report.  Returns the exit status. */
typedef int (*sandbox_fn) (const struct store *st, const char *id, hk_err *err);
int cmd_on_sandbox (int argc, char **argv, const char *help, sandbox_fn fn);

/* Where a sandbox's config comes from: a bundle's config.json or a profile. */
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
};

/* profile may be NULL (bundle's config.json); args (may be NULL) replace
 * process.args.  host_fallback: with no profile and no BUNDLE/config.json,
 * use the host profile (run's "no bundle needed"). */
int cmd_load_config (const char *bundle, const char *profile, char *const *args, bool host_fallback,
                     struct config_src *out, hk_err *err);
void cmd_config_free (struct config_src *c);
/* create/run --config FILE: cmd_load_config reads FILE (relative to the cwd;
 * "config.json" is still the bundle's) instead of BUNDLE/config.json. */
void cmd_config_file (const char *file);
/* cmd_load_config, plus images (image_sandbox.c): with image and no bundle
 * the config is the default profile with the image's process (args replace
 * its Cmd); with a bundle, or a config naming sandbox.image, only the root
 * comes from the image. */
int cmd_load_source (const char *bundle, const char *profile, const char *image, char *const *args,
                     bool host_fallback, struct config_src *out, hk_err *err);
void cmd_image_free (struct config_src *c);
/* create/run --from-snapshot: the snapshot's config (and image layers);
 * *data is its data dir, to seed the new sandbox with. */
struct snapshot_src;
int cmd_load_snapshot (const char *dir, struct snapshot_src *snap, struct config_src *out, char **data,
                       hk_err *err);
/* The config.json text `hako spec --image` writes. */
int cmd_image_spec (const char *image, char *const *args, char **json, hk_err *err);

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
 * CMD_OPT_SECRET); -1 after a usage error (reported). */
int cmd_net_option (struct cmd_net *n, int opt, const char *arg, const char *verb);
/* Write them into the config text (so the frozen config.json says what the
 * sandbox runs with) and parse it again; args as for cmd_load_config. */
int cmd_apply_network (struct config_src *cfg, const struct cmd_net *n, char *const *args, hk_err *err);
void cmd_net_free (struct cmd_net *n);
/* --disk SIZE (create, run, spec): sandbox.limits.disk written into the
 * config text and parsed again (which checks SIZE); NULL: nothing. */
int cmd_apply_disk (struct config_src *cfg, const char *disk, char *const *args, hk_err *err);
/* The config text replaced by json (an edit of it, taken over), parsed
 * again; args as for cmd_load_config. */
int cmd_replace_config (struct config_src *cfg, char *json, size_t len, char *const *args, hk_err *err);

/* run --learn OUT (cmd/learn.c, hako-learn(7)): a learner process records
 * what the sandbox does and merges it into OUT when its last process is gone. */
struct learn_link;
struct cmd_learn
{
  const char *out; /* NULL: not learning */
  bool seccomp;    /* --learn-seccomp */
  bool on_failure; /* --learn-on-failure: merge what a failed run did too */
  pid_t pid;       /* the learner */
  int sock;        /* the sandbox's end of the learner's socket */
  int verdict;     /* to the learner: how the observed run ended (an int), or -1 */
  struct learn_link *link;
};
/* Check this host can observe, fork the learner.  A usage or host error is
 * reported and the exit status returned; 0 to go on. */
int cmd_learn_begin (struct cmd_learn *l, const char *verb, const char *id, char *const *command,
                     hk_err *err);
/* The config in learning mode: the learned dimensions not enforced, and said so. */
int cmd_apply_learn (struct config_src *cfg, const struct cmd_learn *l, const char *verb, const char *id,
                     char *const *args, hk_err *err);
/* After create: the sandbox has its end.  wait: also wait for the learner
 * (foreground, once the sandbox has ended) so its report comes last, after
 * telling it the run's exit status (a failed run's rules are not merged
 * without --learn-on-failure); without wait the learner finds it out. */
void cmd_learn_end (struct cmd_learn *l, bool wait, int status);
/* --profile-file FILE: a learned profile enforced (oci_spec_apply_profile). */
int cmd_apply_profile_file (struct config_src *cfg, const char *file, char *const *args, hk_err *err);
/* --preserve-fds ARG: a count of fds from 3 up, each open in the caller and
 * not close-on-exec.  0, or -1 after a usage error (reported). */
int cmd_preserve_fds (const char *verb, const char *arg, unsigned int *n);

/* --format F: 1 for json, 0 for text (or table), -1 after a usage error
 * (reported).  json_only: the verb prints JSON whatever, and refuses text. */
int cmd_format (const char *verb, const char *arg, bool json_only);

/* --device NAME (create, run, spec; cmd/devices.c): a CDI device
 * (vendor.com/class=name) or a host node (/dev/fuse), repeatable. */
#define CMD_OPT_DEVICE 0x4401
static inline void
cmd_strv_freep (char ***v)
{
  strv_free (*v);
}
#define cleanup_strv __attribute__ ((cleanup (cmd_strv_freep)))
/* Append arg to *devices; -1 after a usage error (reported). */
int cmd_device_option (char ***devices, const char *arg, const char *verb);
/* The node config's cdi_spec_dirs, given to oci/cdi.c (once). */
int cmd_cdi_dirs (hk_err *err);
/* The devices asked for (devices, .sandbox.devices, cdi.k8s.io/ annotations)
 * applied into the config text, parsed again; args as for cmd_load_config. */
int cmd_apply_devices (struct config_src *cfg, char *const *devices, char *const *args, hk_err *err);
/* hako spec --device: the names into .sandbox.devices of *json, checked. */
int cmd_spec_devices (char *const *devices, char **json, hk_err *err);

/* Split argv at "--": *cmd points after it (NULL if absent) and argc shrinks. */
void cmd_split_dashdash (int *argc, char **argv, char ***cmd);

/* ---- the flags run, create and spec share (cmd/overrides.c) ---- */
struct cmd_overrides
{
  struct cmd_net net; /* --network, --allow */
  const char *disk;   /* --disk */
  const char *user;   /* -u, resolved against the sandbox's root when applied */
  char **devices;     /* --device (cmd/devices.c) */
  bool interactive;   /* -i: docker's keep-stdin-open (a foreground sandbox has it) */
  struct oci_overrides o;
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
  "  -v, --volume SRC:DST[:ro|rw]  bind the existing path SRC at DST\n"                                      \
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
/* --learn-on-failure (run, exec): see struct cmd_learn. */
#define CMD_OPT_LEARN_ON_FAILURE 0x4502
/* --name ID (run, create): docker's spelling of the sandbox's ID. */
#define CMD_OPT_NAME 0x4501
/* The sandbox ID of run/create: the one operand, or --name's (name may be
 * NULL); NULL after a usage error (reported). */
const char *cmd_sandbox_id (const char *verb, int argc, char **argv, const char *name);
/* docker's -it: with -t and -i, stdin must be a terminal (unless the pty
 * goes to a console socket); -1 after a usage error (reported). */
int cmd_check_interactive (const char *verb, bool interactive, bool tty, const char *console);

/* run/create: LISTEN_FDS in hako's environment (systemd socket activation)
 * adds its fds to *preserve and LISTEN_FDS/LISTEN_PID=1 to ov's env
 * (options.c); -1 when reported. */
int cmd_listen_fds (const char *verb, unsigned int *preserve, struct cmd_overrides *ov);
/* Write them into the config text and parse it again; args as for
 * cmd_load_config. */
int cmd_apply_overrides (struct config_src *cfg, const struct cmd_overrides *ov, char *const *args,
                         hk_err *err);
void cmd_overrides_free (struct cmd_overrides *ov);
/* The config text replaced by json (an edit of it, taken), parsed again;
 * args as for cmd_load_config. */
int cmd_replace_config (struct config_src *cfg, char *json, size_t len, char *const *args, hk_err *err);
/* An O_PATH fd of the image layer (top first) whose etc/passwd the sandbox
 * sees, or -1 when none has one. */
int cmd_image_user_root (char *const *layers);

#endif
