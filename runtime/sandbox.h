/* sandbox: the lifecycle verbs over the state store and spawn — create, start,
 * wait, kill, delete, state.  cmd/ calls these; nothing here prints. */
#ifndef HAKO_RUNTIME_SANDBOX_H
#define HAKO_RUNTIME_SANDBOX_H

#include <stdbool.h>

#include "lib/err.h"
#include "oci/spec.h"
#include "oci/state.h"
#include "runtime/spawn.h"
#include "runtime/store.h"

struct sbx_create_opts
{
  const char *id;
  const char *bundle;       /* absolute; NULL when the spec needs none (host profile) */
  const char *config_json;  /* the config text, frozen into the state dir */
  size_t config_len;
  struct oci_spec *spec;    /* parsed config_json; adjusted for the sandbox object */
  bool foreground;          /* run: the caller keeps the child and releases it */
  const char *pid_file;
  /* From an image (cmd resolves it): its unpacked layer dirs, top first,
   * and its manifest digest, recorded so `image rm` knows it is in use. */
  char *const *image_layers;
  const char *image_id;
};

/* A foreground sandbox `run` is waiting on. */
struct sbx_fg
{
  char *id;
  struct spawn_child child;
};

/* Build the sandbox; its process waits for start.  Fails leaving nothing
 * behind; *status is 126/127 when the command cannot be run, else 125. */
int sbx_create (const struct store *st, const struct sbx_create_opts *o, struct sbx_fg *fg,
                int *status, hk_err *err);
/* Release a created sandbox's process. */
int sbx_start (const struct store *st, const char *id, hk_err *err);
/* Foreground: release the process, wait for it (forwarding the usual signals)
 * and, with record, write down how it ended (not worth it when the sandbox
 * is deleted next).  *status is the exit code or 128+N. */
int sbx_run_wait (const struct store *st, struct sbx_fg *fg, bool record, int *status, hk_err *err);
void sbx_fg_free (struct sbx_fg *fg);
/* Signal the sandbox's process, or with all every process in it. */
int sbx_kill (const struct store *st, const char *id, int sig, bool all, hk_err *err);
/* Remove everything the sandbox has.  A running one needs force (SIGKILL first). */
int sbx_delete (const struct store *st, const char *id, bool force, hk_err *err);
/* Freeze every process of the sandbox (status "paused"), returning once the
 * kernel reports them all frozen; resume thaws them. */
int sbx_pause (const struct store *st, const char *id, hk_err *err);
int sbx_resume (const struct store *st, const char *id, hk_err *err);
/* The state with its status refreshed from the process (a dead pid reads as stopped). */
int sbx_state (const struct store *st, const char *id, struct oci_state **out, hk_err *err);

/* Checks the runtime makes before anything is built (parse errors are oci/'s). */
int sbx_validate (struct oci_spec *spec, hk_err *err);

#endif
