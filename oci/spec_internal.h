/* spec_internal: the config.json parser's parts, shared between oci/spec*.c. */
#ifndef HAKO_OCI_SPEC_INTERNAL_H
#define HAKO_OCI_SPEC_INTERNAL_H

#include "oci/json.h"
#include "oci/spec.h"

/* spec_linux.c: the "linux" object. */
int spec_parse_linux (yajl_val root, struct oci_linux *l, hk_err *err);
void spec_free_linux (struct oci_linux *l);
/* A linux.resources object (errors say ".linux.resources..."), and freeing one. */
int spec_parse_resources (yajl_val res, struct oci_resources *r, hk_err *err);
void spec_free_resources (struct oci_resources *r);

/* spec_sandbox.c: hako's "sandbox" object. */
int spec_parse_sandbox (yajl_val root, struct hako_sandbox *sb, hk_err *err);
/* The sandbox object's "network" member (its errors say ".sandbox.network..."). */
int spec_parse_network (yajl_val network, struct hako_sandbox *sb, hk_err *err);
void spec_free_sandbox (struct hako_sandbox *sb);
void spec_free_landlock (struct hako_landlock *l);

/* annotations.c: the org.hako.* annotations mapped onto s->sandbox (after
 * the whole config is parsed), with the sandbox object's validation; and
 * their names, one by one (NULL past the last). */
int spec_parse_annotations (struct oci_spec *s, hk_err *err);
const char *spec_annotation_name (size_t i);

/* spec.c: "rprivate" -> MS_PRIVATE|MS_REC, ...; false for other names. */
bool spec_propagation (const char *name, unsigned long *flags);

/* The mount option names the parser decodes (flags and propagation), one by
 * one: NULL past the last.  For `hako features`. */
const char *spec_mount_option_name (size_t i);
/* "prestart", "createRuntime", ... */

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

#endif
