/* reset: a sandbox back to how create left it, for its next user (hako
 * reset; the SDK's warm pools): every process of the last run killed, its
 * writable state — an image's writable layer, the host profile's /work —
 * new and empty, its log gone, and its own process started again from the
 * config frozen at create. */
#include "runtime/lifecycle/sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/trace.h"
#include "lib/util.h"
#include "runtime/build/rootfs_image.h"
#include "runtime/state/store.h"

/* The last run's files in the state dir that a next user must not read:
 * its output (hako logs; runtime/sbxlog.c's log and log.1), its kept
 * processes' records (their commands and their logs: ps --detached, logs
 * --process), its network decisions (logs --network: the hosts and paths
 * it asked for).  The stop before waited for the kept processes' holders,
 * and the proxy went with the process. */
static int
forget_output (const struct store_entry *e, hk_err *err)
{
  static const char *const names[] = { "log", "log.1", "proxy.log" };
  for (size_t i = 0; i < sizeof names / sizeof *names; i++)
    {
      cleanup_free char *path = store_path (e, names[i]);
      if (unlink (path) < 0 && errno != ENOENT)
        return err_sys (err, "remove %s", path);
    }
  cleanup_free char *procs = store_path (e, "procs");
  return rm_rf (procs, err);
}

/* Under the sandbox's lock, stopped by hako: the writable state renamed
 * into a new directory *aside in the data dir (none: NULL), which the
 * sandbox's mounts never show.  /work is made again, empty and with its
 * owner, by the restart (as create makes it); the writable layer here. */
static int
set_aside (const struct store *st, const char *id, char **aside, hk_err *err)
{
  struct store_entry e;
  struct oci_state *s = NULL;
  struct oci_spec *spec = NULL;
  *aside = NULL;
  if (store_open (st, id, true, &e, err) < 0)
    return -1;
  int r = store_read_state (&e, &s, err);
  if (r == 0 && !(s->status == OCI_STATUS_STOPPED && s->restartable))
    r = err_setk (err, ERR_BUSY, EBUSY, "cannot reset sandbox %s: it is %s again (started meanwhile?)", id,
                  oci_status_name (s->status));
  cleanup_free char *data = store_data_dir (st, id);
  cleanup_free char *work = xasprintf ("%s/work", data);
  cleanup_free char *config = store_path (&e, "config.json");
  cleanup_free char *json = NULL;
  size_t len;
  if (r == 0)
    r = forget_output (&e, err);
  if (r == 0 && access (data, F_OK) == 0)
    {
      char *dir = xasprintf ("%s/.reset.XXXXXX", data);
      if (mkdtemp (dir) == NULL)
        {
          r = err_sys (err, "make a directory in %s", data);
          free (dir);
        }
      else
        *aside = dir;
    }
  if (r == 0 && *aside)
    {
      cleanup_free char *old_work = xasprintf ("%s/work", *aside);
      if (rename (work, old_work) < 0 && errno != ENOENT)
        r = err_sys (err, "set %s aside", work);
      if (r == 0
          && (file_read_all (config, 16 << 20, &json, &len, err) < 0
              || oci_spec_parse (json, len, &spec, err) < 0))
        r = err_prefix (err, "%s", config);
      if (r == 0)
        r = rootfs_image_reset (data, spec, *aside, err);
    }
  if (spec)
    oci_spec_free (spec);
  oci_state_free (s);
  store_close (&e);
  return r;
}

int
sbx_reset (const struct store *st, const char *id, uint64_t timeout_ms, hk_err *err)
{
  cleanup_free char *aside = NULL;
  trace_mark ("reset: stop");
  if (sbx_stop (st, id, timeout_ms, err) < 0)
    return -1;
  trace_mark ("reset: set aside");
  if (set_aside (st, id, &aside, err) < 0)
    return -1;
  trace_mark ("reset: start");
  int r = sbx_start (st, id, err);
  /* The old state goes once the sandbox runs again: its size is no
   * part of the wait for the new one (a delete meanwhile takes it with the
   * data dir). */
  trace_mark ("reset: remove the old state");
  hk_err ignored;
  if (aside)
    rm_rf (aside, &ignored);
  return r;
}
