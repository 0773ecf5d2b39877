/* learn (oci): what a `run --learn` saw turned into a profile, the config
 * edits of learning mode, and `--profile-file` applied to a config
 * (hako-learn(7)). */
#ifndef HAKO_OCI_LEARN_H
#define HAKO_OCI_LEARN_H

#include <stdbool.h>
#include <stddef.h>

#include "lib/err.h"

/* One thing the sandbox did.  kind: 'r' read PATH, 'w' write the existing
 * file PATH, 'c' create or remove the entry PATH (which needs its directory),
 * 'x' execute PATH, 't' TCP connect to port VALUE, 'b' TCP bind port VALUE,
 * 's' the syscall named VALUE, 'h' HOST:PORT reached through the proxy (an
 * opaque tunnel), 'q' "METHOD SCHEME://HOST:PORT/PATH" a request the proxy
 * saw (plain HTTP, or inside an intercepted tunnel).
 * note: who did it first, for the side file. */
struct learn_rec
{
  char kind;
  char *value;
  char *note;
};

/* A directory is granted whole once this many of its entries are granted
 * (documented in hako-learn(7)). */
#define LEARN_DIR_THRESHOLD 4

/* Merge what was seen into the profile at PATH (created when missing),
 * collapsing paths into the shortest rule set, and write PATH.notes saying
 * where each rule came from.  seccomp: the syscalls were observed (write a
 * sandbox.seccomp allow-list).  *added: one line per rule that is new
 * ("landlock.read /usr/lib"), NULL-terminated. */
int oci_learn_update (const char *path, const struct learn_rec *recs, size_t n, bool seccomp,
                      const char *command, char ***added, hk_err *err);

/* Learning mode's config: sandbox.landlock dropped (the learned dimensions
 * are observed, not enforced) and an earlier profile's
 * sandbox.seccomp too (linux.seccomp, hako's filter, stays), and the
 * annotation org.hako.learn set to note (what `hako state` shows). */
int oci_spec_learn_edit (const char *json, size_t len, const char *note, char **out, size_t *out_len,
                         hk_err *err);

/* The config with a learned profile (the file's text) enforced: its
 * landlock rules replace sandbox.landlock (derive off: only what was
 * learned), its network allow-list becomes sandbox.network, its seccomp
 * allow-list becomes sandbox.seccomp.allow, which narrows linux.seccomp
 * (kept).  What learning never writes is refused naming the field
 * (ERR_INVALID_CONFIG): a network mode but allowlist, a loopback,
 * link-local or private destination, a Landlock rule on "/", a member
 * of sandbox other than landlock, network and seccomp. */
int oci_spec_apply_profile (const char *json, size_t len, const char *profile, size_t plen, char **out,
                            size_t *out_len, hk_err *err);

/* A decision line of the proxy's (oci/report/proxy_log.h, what
 * `hako logs --network` prints) as an observation: 'h' or 'q' with *value
 * (as learn_rec's), or 0 for a line that records nothing (a refusal, the
 * CONNECT of an intercepted tunnel, whose requests are lines of their own). */
char oci_learn_decision (const char *line, size_t len, char **value);
/* Request rules ("METHODS URL") as one profile writes them: one rule per
 * path with its methods together, and siblings (one method, one parent)
 * from LEARN_DIR_THRESHOLD on as "*" for their last segment — the
 * narrowest rules that cover what was seen.  *from[i]: the index in in of
 * one rule the i-th covers.  A new NULL-terminated vector. */
char **oci_learn_request_rules (char *const *in, size_t **from);

/* Why HOST:PORT needs the CLI user's consent ("loopback", "link-local",
 * "private": an IP literal of those ranges, or localhost), or NULL. */
const char *oci_learn_needs_consent (const char *hostport);
/* The same for a rule learning writes: HOST:PORT, or a request rule
 * ("METHODS URL") by its URL's host. */
const char *oci_learn_rule_needs_consent (const char *rule);
/* S with control bytes, DEL, bytes past ASCII and '\\' as \\xNN (caller
 * frees): for names the sandbox chose, printed to the notes or a terminal. */
char *oci_learn_escape (const char *s);

#endif
