/* egress: the documents of a sandbox's egress proxy that are not the
 * spec — its secrets' values (kept in the state dir, 0600, for the proxy
 * only) and a live policy update (`hako update --allow/--deny/--secret`),
 * sent to the running proxy over its control socket. */
#ifndef HAKO_OCI_EGRESS_H
#define HAKO_OCI_EGRESS_H

#include <stddef.h>

#include "lib/err.h"
#include "oci/spec.h"

/* A secret's value, by the secret's name. */
struct oci_secret_value
{
  char *name;
  char *value;
};

/* {"secrets": {"NAME": "VALUE", ...}} (malloc'd). */
char *oci_secret_values_text (const struct oci_secret_value *v, size_t n);
/* Its parse; the error names what is wrong (never a value). */
int oci_secret_values_parse (const char *text, size_t len, struct oci_secret_value **out, size_t *n,
                             hk_err *err);
void oci_secret_values_free (struct oci_secret_value *v, size_t n);

/* A live update: the sandbox object's network member as it now is, and the
 * secrets' values: {"network": {...}, "secrets": {...}}. */
char *oci_egress_update_text (const char *config_json, size_t config_len, const struct oci_secret_value *v,
                              size_t n, hk_err *err);
/* Its parse: *sb gets the network (mode, rules, secrets, parsed as the
 * spec's are), *values the secrets' values. */
int oci_egress_update_parse (const char *text, size_t len, struct hako_sandbox *sb,
                             struct oci_secret_value **values, size_t *n, hk_err *err);

#endif
