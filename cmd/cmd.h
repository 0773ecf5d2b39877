/* cmd: the verb table's shared pieces — global options, errors, the store,
 * shared option values.  A sandbox's config is cmd/config/'s (config.h). */
#ifndef HAKO_CMD_H
#define HAKO_CMD_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "lib/err.h"
#include "oci/spec.h"
#include "runtime/state/store.h"

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
int cmd_reset (int argc, char **argv);
int cmd_exec (int argc, char **argv);
int cmd_put (int argc, char **argv);
int cmd_get (int argc, char **argv);
int cmd_cp (int argc, char **argv);
int cmd_fs (int argc, char **argv);
int cmd_ps (int argc, char **argv);
int cmd_update (int argc, char **argv);
int cmd_events (int argc, char **argv);
int cmd_image (int argc, char **argv);
int cmd_snapshot (int argc, char **argv);
int cmd_fork (int argc, char **argv);
int cmd_hibernate (int argc, char **argv);
int cmd_wake (int argc, char **argv);
int cmd_checkpoint (int argc, char **argv);
int cmd_restore (int argc, char **argv);
int cmd_port (int argc, char **argv);
int cmd_stdin (int argc, char **argv);
int cmd_resize (int argc, char **argv);

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
/* After create: the sandbox has its end.  wait: also wait for the learner
 * (foreground, once the sandbox has ended) so its report comes last, after
 * telling it the run's exit status (a failed run's rules are not merged
 * without --learn-on-failure); without wait the learner finds it out. */
void cmd_learn_end (struct cmd_learn *l, bool wait, int status);
/* --preserve-fds ARG: a count of fds from 3 up, each open in the caller and
 * not close-on-exec.  0, or -1 after a usage error (reported). */
int cmd_preserve_fds (const char *verb, const char *arg, unsigned int *n);

/* --process P (logs, kill, wait, stdin, resize): a kept process's id,
 * checked (runtime/exec/procs.h); -1 after a usage error (reported). */
int cmd_process_id (const char *verb, const char *arg, pid_t *pid);

/* --format F: 1 for json, 0 for text (or table), -1 after a usage error
 * (reported).  json_only: the verb prints JSON whatever, and refuses text. */
int cmd_format (const char *verb, const char *arg, bool json_only);

static inline void
cmd_strv_freep (char ***v)
{
  strv_free (*v);
}
#define cleanup_strv __attribute__ ((cleanup (cmd_strv_freep)))

/* Split argv at "--": *cmd points after it (NULL if absent) and argc shrinks. */
void cmd_split_dashdash (int *argc, char **argv, char ***cmd);

/* --learn-on-failure (run, exec): see struct cmd_learn. */
#define CMD_OPT_LEARN_ON_FAILURE 0x4502
/* -p, --publish SPEC (run, create; cmd/port.c): a port to publish,
 * appended to *v (runtime/proxy/ports.h); -1 after a usage error (reported). */
#define CMD_OPT_PUBLISH 'p'
#define CMD_OPT_PID_FILE 0x4503
struct port_map;
int cmd_publish_option (struct port_map **v, size_t *n, const char *arg, const char *verb);
#define CMD_PUBLISH_HELP                                                                                     \
  "  -p, --publish SPEC      publish a TCP port of the sandbox on the host (hako-port(8)):\n"                \
  "                          [HOSTIP:]HOSTPORT:PORT, HOSTIP::PORT or PORT (any free host\n"                  \
  "                          port); HOSTIP defaults to 127.0.0.1; needs a network namespace\n"               \
  "                          of its own (--network none or allowlist) (repeatable)\n"

/* --name ID (run, create): docker's spelling of the sandbox's ID. */
#define CMD_OPT_NAME 0x4501
/* The sandbox ID of run/create: the one operand, or --name's (name may be
 * NULL); NULL after a usage error (reported). */
const char *cmd_sandbox_id (const char *verb, int argc, char **argv, const char *name);
/* docker's -it: with -t and -i, stdin must be a terminal (unless the pty
 * goes to a console socket); -1 after a usage error (reported). */
int cmd_check_interactive (const char *verb, bool interactive, bool tty, const char *console);

#endif
