/* policy: the trust policy (hako-policy(5), the containers-policy.json shape)
 * and the "simple signing" payload a signature carries, parsed strictly. */
#ifndef HAKO_OCI_POLICY_H
#define HAKO_OCI_POLICY_H

#include <stddef.h>

#include "lib/err.h"

enum oci_req_type
{
  OCI_REQ_ACCEPT,    /* insecureAcceptAnything */
  OCI_REQ_REJECT,    /* reject */
  OCI_REQ_SIGNED_BY, /* signedBy, keyType GPGKeys */
};

enum oci_ident_type
{
  OCI_IDENT_MATCH_REPO_DIGEST_OR_EXACT, /* the default */
  OCI_IDENT_MATCH_EXACT,
  OCI_IDENT_MATCH_REPOSITORY,
  OCI_IDENT_EXACT_REFERENCE,
  OCI_IDENT_EXACT_REPOSITORY,
};

struct oci_requirement
{
  enum oci_req_type type;
  char **key_paths; /* keyPath / keyPaths */
  char *key_data;   /* keyData, base64 */
  enum oci_ident_type ident;
  char *ident_ref; /* dockerReference / dockerRepository */
};

struct oci_req_list
{
  char *scope; /* NULL for "default" */
  struct oci_requirement *reqs;
  size_t n;
};

struct oci_policy
{
  struct oci_req_list def;
  struct oci_req_list *scopes; /* from every transport's map */
  size_t n_scopes;
};

int oci_policy_parse (const char *text, size_t len, struct oci_policy *out, hk_err *err);
void oci_policy_free (struct oci_policy *p);

/* The JSON payload of a simple-signing signature. */
struct oci_simple_sig
{
  char *digest;   /* critical.image.docker-manifest-digest */
  char *identity; /* critical.identity.docker-reference */
};

/* Strict: critical.type must be "atomic container signature"; unknown keys
 * under critical and duplicate keys anywhere are refused. */
int oci_simple_sig_parse (const char *text, size_t len, struct oci_simple_sig *out, hk_err *err);
void oci_simple_sig_free (struct oci_simple_sig *s);

#endif
