/* checkpoint, restore: CRIU with runc's flags. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "lib/util.h"
#include "runtime/lifecycle/sandbox.h"
#include "runtime/save/checkpoint.h"

static const char checkpoint_help[]
    = "Usage: hako checkpoint [OPTIONS] ID\n\n"
      "Dump the running sandbox ID's processes with CRIU (`criu dump`) into the image\n"
      "path, and its writable state beside them; without --leave-running the\n"
      "processes end.  `hako restore` brings them back.  Runs `criu check` first and\n"
      "exits 125 quoting criu's reason when CRIU cannot work on this host.\n\n"
      "      --image-path DIR          criu's images (default ./checkpoint)\n"
      "      --work-path DIR           criu's logs and work files (default: image path)\n"
      "      --leave-running           keep the processes running after the dump\n"
      "      --tcp-established         dump established TCP connections\n"
      "      --ext-unix-sk             allow external unix sockets\n"
      "      --shell-job               allow a shell job (a controlling terminal)\n"
      "      --file-locks              dump file locks\n"
      "      --manage-cgroups-mode M   soft (default), full, strict or ignore\n";

static const char restore_help[]
    = "Usage: hako restore [OPTIONS] ID\n\n"
      "Make the sandbox ID from a checkpoint (`hako checkpoint`): its root (an image\n"
      "sandbox's layers under the saved writable layer; a bundle's rootfs as it is),\n"
      "its cgroups, then `criu restore` of its processes, detached.  Runs `criu check`\n"
      "first and exits 125 quoting criu's reason when CRIU cannot work on this host.\n\n"
      "      --image-path DIR          criu's images (default ./checkpoint)\n"
      "      --work-path DIR           criu's logs and work files (default: image path)\n"
      "      --tcp-established         restore established TCP connections\n"
      "      --ext-unix-sk             allow external unix sockets\n"
      "      --shell-job               allow a shell job (a controlling terminal)\n"
      "      --file-locks              restore file locks\n"
      "      --manage-cgroups-mode M   soft (default), full, strict or ignore\n"
      "  -b, --bundle DIR              accepted for runc compatibility (the checkpoint\n"
      "                                holds the config)\n"
      "  -d, --detach                  accepted: a restore is always detached\n"
      "      --pid-file FILE           write the restored first process's pid to FILE\n";

enum
{
  OPT_IMAGE = 256,
  OPT_WORK,
  OPT_LEAVE,
  OPT_TCP,
  OPT_UNIX,
  OPT_SHELL,
  OPT_LOCKS,
  OPT_CGMODE,
  OPT_PIDFILE,
};

static const struct option opts[] = {
  { "image-path", required_argument, NULL, OPT_IMAGE },
  { "work-path", required_argument, NULL, OPT_WORK },
  { "leave-running", no_argument, NULL, OPT_LEAVE },
  { "tcp-established", no_argument, NULL, OPT_TCP },
  { "ext-unix-sk", no_argument, NULL, OPT_UNIX },
  { "shell-job", no_argument, NULL, OPT_SHELL },
  { "file-locks", no_argument, NULL, OPT_LOCKS },
  { "manage-cgroups-mode", required_argument, NULL, OPT_CGMODE },
  { "bundle", required_argument, NULL, 'b' },
  { "detach", no_argument, NULL, 'd' },
  { "pid-file", required_argument, NULL, OPT_PIDFILE },
  { "help", no_argument, NULL, 'h' },
  { NULL, 0, NULL, 0 },
};

/* Parse both verbs' options; restore refuses --leave-running, checkpoint
 * the restore-only ones.  Returns -1 after printing usage (or help: *rc). */
static int
parse (int argc, char **argv, bool restore, struct criu_opts *o, const char **pid_file, int *rc)
{
  const char *verb = restore ? "restore" : "checkpoint";
  int c;
  while ((c = getopt_long (argc, argv, "b:dh", opts, NULL)) != -1)
    switch (c)
      {
      case OPT_IMAGE: o->image_path = optarg; break;
      case OPT_WORK: o->work_path = optarg; break;
      case OPT_LEAVE:
        if (restore)
          goto bad;
        o->leave_running = true;
        break;
      case OPT_TCP: o->tcp_established = true; break;
      case OPT_UNIX: o->ext_unix_sk = true; break;
      case OPT_SHELL: o->shell_job = true; break;
      case OPT_LOCKS: o->file_locks = true; break;
      case OPT_CGMODE:
        if (!criu_cgroups_mode_valid (optarg))
          {
            *rc = cmd_usage (verb, "--manage-cgroups-mode: \"%s\" is not soft, full, strict or ignore",
                             optarg);
            return -1;
          }
        o->manage_cgroups_mode = optarg;
        break;
      case 'b':
      case 'd':
        if (!restore)
          goto bad;
        break;
      case OPT_PIDFILE:
        if (!restore)
          goto bad;
        *pid_file = optarg;
        break;
      case 'h': *rc = cmd_help (restore ? restore_help : checkpoint_help); return -1;
      default: goto bad;
      }
  if (argc - optind != 1)
    {
      *rc = cmd_usage (verb, "expects one sandbox ID");
      return -1;
    }
  return 0;
bad:
  if (c == '?')
    *rc = cmd_bad_option (verb, argv, opts);
  else
    for (const struct option *opt = opts; opt->name; opt++)
      if (opt->val == c)
        *rc = cmd_usage (verb, "--%s is an option of %s only", opt->name, restore ? "checkpoint" : "restore");
  return -1;
}

static int
run (int argc, char **argv, bool restore)
{
  const char *verb = restore ? "restore" : "checkpoint";
  struct criu_opts o = { 0 };
  const char *pid_file = NULL;
  int rc = 0;
  if (parse (argc, argv, restore, &o, &pid_file, &rc) < 0)
    return rc;
  const char *id = argv[optind];
  cleanup_free char *image = path_absolute (o.image_path ? o.image_path : "checkpoint");
  cleanup_free char *work = o.work_path ? path_absolute (o.work_path) : NULL;
  o.image_path = image;
  o.work_path = work;
  hk_err err = { 0 };
  struct store st = { 0 };
  if (cmd_store (&st, &err) < 0 || !store_id_valid (id))
    {
      if (err.msg[0] == '\0')
        err_set (&err, EINVAL, "\"%s\" is not a valid sandbox id", id);
      rc = cmd_fail (verb, id, &err);
    }
  else if (restore ? ckpt_restore (&st, id, &o, &err) < 0 : ckpt_checkpoint (&st, id, &o, &err) < 0)
    rc = cmd_fail (verb, id, &err);
  else if (restore && pid_file)
    {
      /* runc's pid file: the number alone. */
      struct oci_state *s = NULL;
      cleanup_free char *abs = NULL, *text = NULL;
      if (sbx_state (&st, id, &s, &err) == 0)
        {
          abs = path_absolute (pid_file);
          text = xasprintf ("%d", (int)s->pid);
        }
      if (abs == NULL || file_write_atomic (abs, text, strlen (text), 0644, &err) < 0)
        rc = cmd_fail (verb, id, &err);
      oci_state_free (s);
    }
  store_fini (&st);
  return rc;
}

int
cmd_checkpoint (int argc, char **argv)
{
  return run (argc, argv, false);
}

int
cmd_restore (int argc, char **argv)
{
  return run (argc, argv, true);
}
