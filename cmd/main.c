/* main: the global options, the verb table, and main: one verb run on its
 * own argv.  Nothing of cmd/ calls back into it: the helpers the verbs share
 * are verb.c's, the reporting report.c's and usage.c's. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "lib/log.h"
#include "lib/trace.h"
#include "lib/util.h"
#include "oci/cdi.h"
#include "runtime/node/admission.h"

struct verb
{
  const char *name;
  verb_fn fn;
  const char *summary;
};

static const struct verb verbs[] = {
  { "spec", cmd_spec, "write a config.json (profiles: default, host)" },
  { "create", cmd_create, "build a sandbox; its process waits for start" },
  { "start", cmd_start, "start a created sandbox's process" },
  { "run", cmd_run, "create and start a sandbox, wait for it" },
  { "exec", cmd_exec, "run one more command in a running sandbox" },
  { "put", cmd_put, "write standard input to a file inside a sandbox" },
  { "get", cmd_get, "write a file inside a sandbox to standard output" },
  { "cp", cmd_cp, "copy files and trees between a sandbox and the host" },
  { "fs", cmd_fs, "stat, list, remove, make, rename and watch files inside a sandbox" },
  { "state", cmd_state, "print a sandbox's state as JSON" },
  { "wait", cmd_wait, "wait for a sandbox's process to end, exit with its status" },
  { "logs", cmd_logs, "print the output of a detached sandbox or kept process" },
  { "stdin", cmd_stdin, "send standard input to a kept process (exec --detach)" },
  { "resize", cmd_resize, "set the terminal size of a kept process (exec --detach --tty)" },
  { "list", cmd_list, "list sandboxes" },
  { "kill", cmd_kill, "send a signal to a sandbox" },
  { "delete", cmd_delete, "remove sandboxes and everything they hold (alias: rm)" },
  { "features", cmd_features, "print the OCI features JSON" },
  { "doctor", cmd_doctor, "what this host can enforce, and why not" },
  { "pause", cmd_pause, "freeze every process of a sandbox" },
  { "resume", cmd_resume, "thaw a paused sandbox" },
  { "ps", cmd_ps, "list a sandbox's processes" },
  { "update", cmd_update, "change a sandbox's limits" },
  { "events", cmd_events, "a sandbox's usage and OOM events as JSON" },
  { "stop", cmd_stop, "end every process of a sandbox, keep its filesystem" },
  { "reset", cmd_reset, "a sandbox started afresh, its writable state new and empty" },
  { "image", cmd_image, "import, list, inspect, remove and verify images" },
  { "snapshot", cmd_snapshot, "copy a sandbox's writable state, frozen, into a directory" },
  { "fork", cmd_fork, "new sandboxes from one instant of a sandbox's writable state" },
  { "hibernate", cmd_hibernate, "run a checkpoint command inside, then stop the sandbox" },
  { "wake", cmd_wake, "start a stopped sandbox, then run a restore command inside" },
  { "checkpoint", cmd_checkpoint, "dump a running sandbox's processes with CRIU" },
  { "restore", cmd_restore, "restore a sandbox from a CRIU checkpoint" },
  { "port", cmd_port, "list a sandbox's published ports, or publish one more" },
};

static void
usage (FILE *out)
{
  fputs ("Usage: hako [GLOBAL OPTIONS] VERB [OPTIONS] [ID] [-- CMD...]\n\n"
         "A sandbox runtime for untrusted code.\n\nVerbs:\n",
         out);
  for (size_t i = 0; i < sizeof verbs / sizeof *verbs; i++)
    fprintf (out, "  %-10s %s\n", verbs[i].name, verbs[i].summary);
  fputs ("\nGlobal options:\n"
         "  --root DIR          state directory (default /run/hako; for an ordinary\n"
         "                      user $XDG_RUNTIME_DIR/hako)\n"
         "  --data-root DIR     data directory (default /var/lib/hako; for an ordinary\n"
         "                      user ~/.local/share/hako)\n"
         "  --log FILE          also write errors to FILE\n"
         "  --log-format F      text or json (one JSON object per line)\n"
         "  --debug             debug messages on stderr\n"
         "  --node-config FILE  node config for admission (default /etc/hako/node.json)\n"
         "  --cdi-spec-dir DIR  read CDI specs from DIR (repeatable; default /etc/cdi,\n"
         "                      /var/run/cdi, or the node config's cdi_spec_dirs)\n"
         "  --systemd-cgroup    accepted for runc compatibility; a systemd cgroupsPath\n"
         "                      (slice:prefix:name) is the unit's path where systemd runs\n"
         "  --cgroup-manager M  accepted for crun compatibility (cgroupfs, systemd: as\n"
         "                      --systemd-cgroup)\n"
         "  --rootless V        accepted for runc compatibility (true, false, auto);\n"
         "                      hako decides from its uid\n"
         "  --version           print the version\n"
         "  --help              this text; `hako VERB --help` for a verb\n"
         "\nSee hako(8) and hako-VERB(8).\n",
         out);
}

/* --log-format F, or HAKO_LOG_FORMAT: in force at once, so that the
 * errors about the other global options are in that format too. */
static int
set_log_format (const char *value, const char *what)
{
  if (strcmp (value, "text") != 0 && strcmp (value, "json") != 0)
    return cmd_usage ("hako", "%s: \"%s\" is not text or json", what, value), -1;
  globals.log_format = value;
  log_set_format (strcmp (value, "json") == 0 ? LOG_JSON : LOG_TEXT);
  return 0;
}

static int
parse_globals (int argc, char **argv)
{
  enum
  {
    OPT_ROOT = 256,
    OPT_DATA_ROOT,
    OPT_LOG,
    OPT_LOG_FORMAT,
    OPT_DEBUG,
    OPT_VERSION,
    OPT_HELP,
    OPT_IGNORED,
    OPT_NODE_CONFIG,
    OPT_ROOTLESS,
    OPT_CDI_SPEC_DIR,
    OPT_CGROUP_MANAGER
  };
  static const struct option opts[] = {
    { "root", required_argument, NULL, OPT_ROOT },
    { "data-root", required_argument, NULL, OPT_DATA_ROOT },
    { "log", required_argument, NULL, OPT_LOG },
    { "log-format", required_argument, NULL, OPT_LOG_FORMAT },
    { "debug", no_argument, NULL, OPT_DEBUG },
    { "node-config", required_argument, NULL, OPT_NODE_CONFIG },
    { "cdi-spec-dir", required_argument, NULL, OPT_CDI_SPEC_DIR },
    { "version", no_argument, NULL, OPT_VERSION },
    { "help", no_argument, NULL, OPT_HELP },
    /* runc globals shims pass; hako has nothing to change for them. */
    { "systemd-cgroup", no_argument, NULL, OPT_IGNORED },
    { "rootless", required_argument, NULL, OPT_ROOTLESS },
    /* crun's global; hako has no other manager to choose. */
    { "cgroup-manager", required_argument, NULL, OPT_CGROUP_MANAGER },
    { NULL, 0, NULL, 0 },
  };
  int c;
  while ((c = getopt_long (argc, argv, "+hv", opts, NULL)) != -1)
    switch (c)
      {
      case OPT_ROOT: globals.root = optarg; break;
      case OPT_DATA_ROOT: globals.data_root = optarg; break;
      case OPT_LOG: globals.log = optarg; break;
      case OPT_LOG_FORMAT:
        if (set_log_format (optarg, "--log-format") < 0)
          return -1;
        break;
      case OPT_DEBUG: globals.debug = true; break;
      case OPT_NODE_CONFIG: admission_set_config (optarg); break;
      case OPT_CDI_SPEC_DIR: cdi_add_dir (optarg); break;
      case 'v':
      case OPT_VERSION: printf ("hako version %s\nspec: 1.2.0\n", HAKO_VERSION); exit (0);
      case 'h':
      case OPT_HELP: usage (stdout); exit (0);
      case OPT_IGNORED: break;
      /* hako decides rootless mode from its uid; the value is checked only. */
      case OPT_ROOTLESS:
        if (strcmp (optarg, "true") != 0 && strcmp (optarg, "false") != 0 && strcmp (optarg, "auto") != 0)
          return cmd_usage ("hako", "--rootless: \"%s\" is not true, false or auto", optarg), -1;
        break;
      /* cgroupfs is what hako does; systemd is --systemd-cgroup (the
       * cgroupsPath's form decides); crun's "disabled" would leave a sandbox
       * outside any cgroup, with no limits: refused. */
      case OPT_CGROUP_MANAGER:
        if (strcmp (optarg, "cgroupfs") != 0 && strcmp (optarg, "systemd") != 0)
          return cmd_usage ("hako",
                            "--cgroup-manager: \"%s\" is not cgroupfs or systemd (hako always "
                            "puts a sandbox in a cgroup of its own)",
                            optarg),
                 -1;
        break;
      default: return cmd_bad_option ("hako", argv, opts), -1;
      }
  return optind;
}

static int
unknown_verb (const char *name)
{
  const char *names[sizeof verbs / sizeof *verbs];
  for (size_t i = 0; i < sizeof verbs / sizeof *verbs; i++)
    names[i] = verbs[i].name;
  const char *s = cmd_suggest (name, names, sizeof verbs / sizeof *verbs);
  struct log_fields f = { .kind = err_kind_name (ERR_INVALID_ARGUMENT) };
  if (s)
    log_error_fields (&f, "unknown verb \"%s\"; did you mean \"%s\"? (see `hako --help`)", name, s);
  else
    log_error_fields (&f, "unknown verb \"%s\" (see `hako --help`)", name);
  return EXIT_HAKO;
}

/* copy_argv's copy, held for the process's life: volatile, or the compiler
 * drops a store nothing reads and LeakSanitizer takes the copy for a leak. */
static char **volatile argv_copy;

/* argv and its strings, copied to the heap.  Every pointer a verb derives
 * from its arguments (getopt's optarg, an exec's command) then points here,
 * never into the strings the kernel shows as /proc/PID/cmdline: an exec's
 * subreaper blanks those (host paths among them) before it forks the
 * command in its own memory, and the command still has its arguments
 * (runtime/exec/exec_enter.c, hide_arguments). */
static char **
copy_argv (int argc, char **argv)
{
  size_t n = 0;
  for (int i = 0; i < argc; i++)
    n += strlen (argv[i]) + 1;
  char **v = malloc ((size_t)(argc + 1) * sizeof *v + n);
  if (v == NULL)
    return argv;
  char *s = (char *)(v + argc + 1);
  for (int i = 0; i < argc; i++)
    {
      size_t len = strlen (argv[i]) + 1;
      v[i] = memcpy (s, argv[i], len);
      s += len;
    }
  v[argc] = NULL;
  return argv_copy = v;
}

int
main (int argc, char **argv)
{
  argv = copy_argv (argc, argv);
  /* Every usage error is hako's own line, naming the verb (usage.c). */
  opterr = 0;
  const char *env_format = getenv ("HAKO_LOG_FORMAT");
  if (env_format && *env_format && set_log_format (env_format, "HAKO_LOG_FORMAT") < 0)
    return EXIT_HAKO;
  int first = parse_globals (argc, argv);
  if (first < 0)
    return EXIT_HAKO;
  bool json = globals.log_format && strcmp (globals.log_format, "json") == 0;
  if (log_init (globals.log, json ? LOG_JSON : LOG_TEXT, globals.debug) < 0)
    {
      fprintf (stderr, "hako: --log %s: %s\n", globals.log, strerror (errno));
      return EXIT_HAKO;
    }
  trace_init (globals.debug);
  trace_mark ("main");
  if (first >= argc)
    {
      usage (stderr);
      return EXIT_HAKO;
    }
  const char *name = argv[first];
  /* docker's and podman's spelling of a verb, where it means the same. */
  static const char *const aliases[][2] = { { "rm", "delete" } };
  for (size_t i = 0; i < sizeof aliases / sizeof *aliases; i++)
    if (strcmp (aliases[i][0], name) == 0)
      name = aliases[i][1];
  for (size_t i = 0; i < sizeof verbs / sizeof *verbs; i++)
    if (strcmp (verbs[i].name, name) == 0)
      {
        optind = 1; /* each verb runs its own getopt over its own argv */
        return verbs[i].fn (argc - first, argv + first);
      }
  return unknown_verb (name);
}
