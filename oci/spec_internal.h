/* spec_internal: the config.json parser's sections, one file each — spec.c
 * puts them together; resources.c (linux.resources for update) and node.c
 * (the annotations' names) reuse one, and annotations.c parses the
 * annotations as a sandbox object with spec_sandbox.c's parser, so that
 * each value gets the same checks.  What the sections share is
 * spec_common.h's. */
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

#endif
