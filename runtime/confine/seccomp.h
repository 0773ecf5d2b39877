/* seccomp: the spec's linux.seccomp compiled to BPF in the parent (never in
 * the child's hot path) and installed by the child as the very last step. */
#ifndef HAKO_RUNTIME_SECCOMP_H
#define HAKO_RUNTIME_SECCOMP_H

#include <stdbool.h>
#include <stddef.h>

#include "lib/err.h"
#include "oci/spec.h"

struct seccomp_prog;

/* Parent, before clone: compile spec->linux.seccomp, and
 * spec->sandbox.seccomp_allow as a second program installed after it.
 * *out is NULL when the spec has neither.  A malformed profile is an error naming the
 * entry (".linux.seccomp.syscalls[3].action: unknown action \"X\""), and so
 * is an action or flag this kernel cannot enforce.  Syscall names this
 * libseccomp does not know are skipped, as runc does. */
int seccomp_prepare (const struct oci_spec *spec, struct seccomp_prog **out, hk_err *err);
/* seccomp_prepare through a cache of compiled programs, by content, in
 * DATA_ROOT/cache/seccomp (DATA_ROOT NULL: no cache).  What can be cached
 * was valid: a bad profile is still an error naming the entry. */
int seccomp_prepare_cached (const struct oci_spec *spec, const char *data_root, struct seccomp_prog **out,
                            hk_err *err);
/* Child, right before execve (or, without no_new_privs, before the
 * capability drop: see spawn.c).  p may be NULL. */
int seccomp_install (const struct seccomp_prog *p, hk_err *err);
/* The linux.seccomp.flags names hako recognises; supported_only: only those
 * this kernel accepts too.  NULL-terminated, the strings are static (free
 * only the array). */
char **seccomp_flag_names (bool supported_only);
/* Only linux.seccomp's program is left (exec --learn: the learner's
 * hand-over runs after the filters, and what the command needs beyond a
 * learned allow-list is what is being learned). */
void seccomp_prog_drop_narrow (struct seccomp_prog *p);
void seccomp_prog_free (struct seccomp_prog *p);
/* The program's length in BPF instructions (0 for NULL): for tests and --debug. */
size_t seccomp_prog_len (const struct seccomp_prog *p);

#endif
