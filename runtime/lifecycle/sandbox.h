/* sandbox: the lifecycle verbs over the state store and spawn — create, start,
 * wait, kill, delete, state.  cmd/ calls these; nothing here prints. */

/* The room runtime/lifecycle/ (this is its public header): the verbs of a
 * sandbox's life that cmd/ calls — create (sandbox_create), start, stop,
 * kill, delete, pause, resume, state (sandbox), and update, events and ps
 * (limits).  It may use every room below it (tests/style/layers.sh). */
#ifndef HAKO_RUNTIME_SANDBOX_H
#define HAKO_RUNTIME_SANDBOX_H

#include <stdbool.h>
#include <stdint.h>

#include "lib/err.h"
#include "oci/spec.h"
#include "oci/state.h"
#include "runtime/build/spawn.h"
#include "runtime/cgroup/cgroup.h"
#include "runtime/proxy/ports.h"
#include "runtime/state/sbxstate.h"
#include "runtime/state/store.h"

struct sbx_create_opts
{
  const char *id;
  const char *bundle;      /* absolute; NULL when the spec needs none (host profile) */
  const char *config_json; /* the config text, frozen into the state dir */
  size_t config_len;
  struct oci_spec *spec; /* parsed config_json; adjusted for the sandbox object */
  bool foreground;       /* run: the caller keeps the child and releases it */
  /* Detached without a monitor: the caller (a subreaper such as conmon or
   * containerd's shim) reaps the process; state then cannot say how it ended. */
  bool no_monitor;
  const char *pid_file;
  unsigned int preserve_fds; /* hako's fds 3..3+N-1 pass to the process */
  /* process.terminal: the pty's master goes to this unix socket; required
   * unless foreground, where hako relays between its terminal and the pty. */
  const char *console_socket;
  /* run --detach: the process's stdout and stderr go to its log, at most
   * this many bytes (runtime/state/sbxlog.h), its stdin is /dev/null; 0: it keeps
   * the caller's stdio (create, --stdio inherit).  Needs the monitor. */
  uint64_t log_cap;
  /* Start of a stopped sandbox (sbx_start): its state dir, locked by the
   * caller, and its created time, both kept. */
  const struct store_entry *restart;
  const char *created;
  /* From an image (cmd resolves it): its unpacked layer dirs, top first,
   * and its manifest digest, recorded so `image rm` knows it is in use. */
  char *const *image_layers;
  const char *image_id;
  /* create --from-snapshot: a snapshot's data dir, copied into the new
   * sandbox's work dir or writable layer (runtime/save/snapshot.h). */
  const char *from_snapshot;
  /* hako fork's children (runtime/fork.h): reserved, the state dir was made
   * by the fork (marked FORK_MARKER) and is taken over, not made; and with
   * data_ready, the data dir is already the child's, mounted, with its work
   * dir, writable layer and image record in it (a btrfs snapshot). */
  bool reserved;
  bool data_ready;
  /* run --learn: the learner's end for the sandbox's first process
   * (runtime/confine/learn.h); NULL: not learning. */
  const struct learn_link *learn;
  /* run/create -p: the ports to publish (runtime/proxy/ports.h); a restart
   * publishes those of its record instead. */
  const struct port_map *ports;
  size_t n_ports;
};

/* A foreground sandbox `run` is waiting on. */
struct sbx_fg
{
  char *id;
  struct spawn_child child;
  bool has_console; /* console: hako's end of the terminal's socket (relay) */
  int console;
  /* What create already knows, so run need not read it back from the
   * state dir before it releases the process: the cgroups it made, and
   * whether config.json has poststart hooks to load and run at all. */
  struct cg_sandbox cg;
  bool poststart;
  /* Set by sbx_run_wait: how many processes the OOM killer took in the
   * sandbox's memory cgroup while it ran (-1: no counter), and whether its
   * process ended by it (137 while that count rose: the record's "oom"). */
  int64_t oom_kills;
  bool oom;
};

/* Build the sandbox; its process waits for start.  Fails leaving nothing
 * behind; *status is 126/127 when the command cannot be run, else 125. */
int sbx_create (const struct store *st, const struct sbx_create_opts *o, struct sbx_fg *fg, int *status,
                hk_err *err);
/* Release a created sandbox's process; a stopped one gets fresh namespaces
 * and processes from its frozen config.json, on the filesystem it had. */
int sbx_start (const struct store *st, const char *id, hk_err *err);
/* SIGTERM every process, SIGKILL what is left after timeout_ms, wait until
 * the process is gone, remove the cgroups; keep the filesystem and the state
 * (status stopped, with how it ended).  A stopped sandbox is left as it is. */
int sbx_stop (const struct store *st, const char *id, uint64_t timeout_ms, hk_err *err);
/* Foreground: release the process, wait for it (forwarding the usual signals)
 * and, with record, write down how it ended (not worth it when the sandbox
 * is deleted next).  *status is the exit code or 128+N, 124 when the
 * sandbox's deadline (sandbox.limits.timeout) killed it. */
int sbx_run_wait (const struct store *st, struct sbx_fg *fg, bool record, int *status, hk_err *err);
void sbx_fg_free (struct sbx_fg *fg);
/* hako reset (runtime/lifecycle/reset.c): stop (SIGKILL at once with timeout_ms 0),
 * make the writable state new and empty (an image's writable layer, the
 * host profile's /work), forget the log, and start the sandbox again from
 * its config: nothing of the last run, process or file, survives.  The old
 * state is renamed aside, O(1), and removed once the sandbox runs. */
int sbx_reset (const struct store *st, const char *id, uint64_t timeout_ms, hk_err *err);
/* Signal the sandbox's process, or with all every process in it. */
int sbx_kill (const struct store *st, const char *id, int sig, bool all, hk_err *err);
/* Before `run --rm` deletes it: keep the sandbox's proxy log (allowlist
 * mode) as <data-root>/logs/ID.proxy.log; *kept is that path (to free),
 * NULL when there was none. */
int sbx_keep_proxy_log (const struct store *st, const char *id, char **kept, hk_err *err);
/* Remove everything the sandbox has.  A running one needs force (SIGKILL first). */
int sbx_delete (const struct store *st, const char *id, bool force, hk_err *err);
/* Freeze every process of the sandbox (status "paused"), returning once the
 * kernel reports them all frozen; resume thaws them. */
int sbx_pause (const struct store *st, const char *id, hk_err *err);
int sbx_resume (const struct store *st, const char *id, hk_err *err);
/* update --timeout: the sandbox's deadline becomes timeout_ms from now (0:
 * none), for this run only (config.json keeps what a restart gets).  For a
 * created, running or paused sandbox; a stopped one is not_running. */
int sbx_set_timeout (const struct store *st, const char *id, uint64_t timeout_ms, hk_err *err);

#endif
