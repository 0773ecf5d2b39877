/* spec_common: what the config parser's sections (spec.c, spec_linux.c,
 * spec_sandbox.c, annotations.c) share, so that each depends on this and
 * not on another's file: a path check, the refusal of SELinux labels, and
 * the mount options and propagations by name (spec_common.c). */
#ifndef HAKO_OCI_SPEC_COMMON_H
#define HAKO_OCI_SPEC_COMMON_H

#include <stdbool.h>
#include <stddef.h>

#include "oci/json.h"
#include "oci/spec.h"

/* Why an SELinux label fails parsing: hako applies none, and a sandbox that
 * relies on one would run unconfined. */
#define SPEC_NO_LABELS                                                                                       \
  "hako does not apply SELinux labels, and will not run the sandbox without the confinement asked for"

/* An absolute path: starts with '/'. */
static inline bool
spec_is_abs (const char *p)
{
  return p && p[0] == '/';
}

/* "rprivate" -> MS_PRIVATE|MS_REC, ...; false for other names. */
bool spec_propagation (const char *name, unsigned long *flags);
/* A mount option of runc's table ("ro", "nosuid", "rbind", ...) applied to
 * m's flags and clear_flags (the last one given wins); false for any other
 * name. */
bool spec_mount_flag (struct oci_mount *m, const char *opt);
/* OBJ's KEY (PATH names OBJ in messages: ".linux", ".mounts[2]"), an array
 * of id mappings, into *out and *n: each entry complete, within the 32-bit
 * ids, none overlapping another on either side, at most the kernel's 340.
 * 1 when present, 0 when absent, -1 on error. */
int spec_parse_idmaps (yajl_val obj, const char *path, const char *key, struct oci_idmap **out, size_t *n,
                       hk_err *err);
/* The mount option names the parser decodes (flags and propagation), one by
 * one: NULL past the last.  For `hako features`. */
const char *spec_mount_option_name (size_t i);

#endif
