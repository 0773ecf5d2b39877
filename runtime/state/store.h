/* store: the state tree <root>/<id>/ — id validation, per-sandbox flock,
 * atomic state.json, and the data root's per-sandbox directories. */

/* The room runtime/state/ (this is its main header): what a sandbox is and
 * how it ended — the state tree and its locks (store), a process named by pid
 * and start time (pidinfo), the state as it is now (sbxstate), the monitor
 * and the exit record it writes (monitor), sandbox.limits.timeout's watchdog
 * and its records (deadline), a detached sandbox's log (sbxlog), and `wait`
 * and `logs` over them (sbxwait).  It may use runtime/cgroup/ and nothing
 * else of runtime/ (tests/style/layers.sh). */
#ifndef HAKO_RUNTIME_STORE_H
#define HAKO_RUNTIME_STORE_H

#include <stdbool.h>

#include "lib/err.h"
#include "oci/state.h"

struct store
{
  char *root;      /* state root: /run/hako */
  char *data_root; /* data root: /var/lib/hako */
};

/* A locked sandbox directory.  While it is open, no other hako verb changes
 * this sandbox: they wait on the same flock. */
struct store_entry
{
  char *id;
  char *dir; /* <root>/<id> */
  int lock_fd;
};

/* [A-Za-z0-9][A-Za-z0-9_.-]{0,63}: checked before any path is built from it. */
bool store_id_valid (const char *id);

/* Defaults: /run/hako and /var/lib/hako for root; $XDG_RUNTIME_DIR/hako and
 * ~/.local/share/hako otherwise.  Either may be overridden (NULL: default).
 * Root of a user namespace that cannot write /run (rootless podman's:
 * store_userns_root) gets an ordinary user's defaults. */
int store_init (struct store *st, const char *root, const char *data_root, hk_err *err);
/* The same paths, nothing made (for verbs that only read, like features). */
void store_paths (struct store *st, const char *root, const char *data_root);
void store_fini (struct store *st);
/* Whether the caller, as uid 0, is the root of a user namespace other than
 * the initial one (uid_map, normally /proc/self/uid_map, is not
 * "0 0 4294967295") that cannot make run_dir/hako (normally /run/hako:
 * it exists and is not writable, or run_dir is not).  1 with *host_uid
 * the uid that 0 maps to in the parent namespace (the user who made it),
 * else 0. */
int store_userns_root (const char *uid_map, const char *run_dir, unsigned *host_uid);

/* Make <root>/<id> and lock it.  An existing id fails with EEXIST and
 * "sandbox ID already exists". */
int store_create (const struct store *st, const char *id, struct store_entry *out, hk_err *err);
/* Open an existing sandbox; with lock, wait for other verbs and hold its flock.
 * Readers (state, list) pass lock=false: state.json is replaced atomically.
 * A missing one fails with ENOENT and "sandbox ID does not exist". */
int store_open (const struct store *st, const char *id, bool lock, struct store_entry *out, hk_err *err);
void store_close (struct store_entry *e);

/* Path of a file in the sandbox directory (caller frees). */
char *store_path (const struct store_entry *e, const char *name);
/* <data_root>/sandboxes/<id> (caller frees). */
char *store_data_dir (const struct store *st, const char *id);
/* Make it, 0711, below a data root and sandboxes/ that every kind of
 * sandbox can pass through: the host profile's user namespace reaches its
 * /work there as an unprivileged host id, so neither may be 0700 (what is
 * private inside is 0700 itself: an image's rootfs/, images/). */
int store_data_dir_make (const struct store *st, const char *id, hk_err *err);

int store_read_state (const struct store_entry *e, struct oci_state **out, hk_err *err);
int store_write_state (const struct store_entry *e, const struct oci_state *s, hk_err *err);

/* Remove the sandbox directory (the entry stays locked until store_close). */
int store_remove (struct store_entry *e, hk_err *err);

/* Sorted ids of every sandbox directory under the root (NULL-terminated). */
int store_list (const struct store *st, char ***ids, hk_err *err);

#endif
