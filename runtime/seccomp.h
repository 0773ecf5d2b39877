/* seccomp: the spec's linux.seccomp compiled to BPF in the parent (never in
 * the child's hot path) and installed by the child as the very last step. */
#ifndef HAKO_RUNTIME_SECCOMP_H
#define HAKO_RUNTIME_SECCOMP_H

#include "lib/err.h"
#include "oci/spec.h"

struct seccomp_prog;

/* Parent, before clone: compile spec->linux.seccomp.  *out is NULL when the
 * spec has no seccomp section.  A malformed profile is an error naming the
 * entry (".linux.seccomp.syscalls[3].action: unknown action \"X\""). */
int seccomp_prepare (const struct oci_spec *spec, struct seccomp_prog **out, hk_err *err);
/* Child, after everything else, right before execve.  p may be NULL. */
int seccomp_install (const struct seccomp_prog *p, hk_err *err);
void seccomp_prog_free (struct seccomp_prog *p);

#endif
