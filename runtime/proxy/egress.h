/* egress: what a proxied sandbox gets at create beyond its proxy — a CA of
 * its own when a rule or a secret asks for interception (its key kept in
 * the state dir, 0600, root's; its certificate, with the host's bundle, in
 * the sandbox's trust), its secrets' values (read from hako's environment
 * or a file, kept in the state dir, 0600, for the proxy only) — and what
 * its processes' environment says: the placeholders and the trust
 * variables. */
#ifndef HAKO_RUNTIME_EGRESS_H
#define HAKO_RUNTIME_EGRESS_H

#include <stdbool.h>

#include "lib/err.h"
#include "oci/egress.h"
#include "oci/spec.h"
#include "runtime/state/store.h"

#define EGRESS_CA_KEY "egress-ca.key"
#define EGRESS_CA_CRT "egress-ca.crt"
#define EGRESS_CA_BUNDLE "egress-ca-bundle.crt" /* the host's bundle and the CA: mounted inside */
#define EGRESS_SECRETS "egress-secrets.json"
#define EGRESS_SECRET_MAX 8192 /* bytes of a secret's value, at most */
/* Where the bundle is inside, and what the trust variables name. */
#define EGRESS_BUNDLE_INSIDE "/etc/ssl/certs/ca-certificates.crt"
/* The host's bundle, to which the CA is added. */
#define EGRESS_HOST_BUNDLE "/etc/ssl/certs/ca-certificates.crt"

/* Whether spec's proxy terminates some CONNECTs: an https request rule
 * (allow or deny) or a secret. */
bool egress_intercepts (const struct oci_spec *spec);

/* At create, in the state dir: the CA and the bundle (when spec
 * intercepts; a restart keeps them), the secrets' values (a restart keeps
 * them: the environment they came from is gone).  A secret whose source is
 * missing or whose value no header could carry fails, named. */
int egress_prepare (const struct store_entry *e, const struct oci_spec *spec, bool restart, hk_err *err);

/* The secrets' values as spec names them, read from their sources now
 * (`update --secret`).  The error names the secret, never its value. */
int egress_read_values (const struct oci_spec *spec, struct oci_secret_value **out, size_t *n, hk_err *err);
/* One secret's value, read from from ("env:VAR", "file:PATH") now. */
int egress_read_value (const char *name, const char *from, char **out, hk_err *err);
/* The values kept in the state dir. */
int egress_load_values (const struct store_entry *e, struct oci_secret_value **out, size_t *n, hk_err *err);
/* ... and written there (0600, atomically). */
int egress_store_values (const struct store_entry *e, const struct oci_secret_value *v, size_t n,
                         hk_err *err);

/* env with each secret's NAME set to its placeholder and, when spec
 * intercepts, SSL_CERT_FILE, REQUESTS_CA_BUNDLE, NODE_EXTRA_CA_CERTS,
 * CURL_CA_BUNDLE, GIT_SSL_CAINFO and PIP_CERT naming the bundle inside
 * (a new vector; env is left as it is). */
char **egress_env (const struct oci_spec *spec, char *const *env);

/* When spec intercepts: the bundle bound read-only over the root's, added
 * to spec's mounts (after its own, so a user's bind of /etc does not hide
 * it): at EGRESS_BUNDLE_INSIDE always (an image's root gets the file if it
 * has none), and at the other distributions' bundle paths where the root
 * has a file there (the host's for the host profile, the bundle's rootfs;
 * an image's: only the first). */
int egress_mounts (const struct store_entry *e, struct oci_spec *spec, bool image, const char *rootfs,
                   hk_err *err);

/* `hako update` on a sandbox's network: what changes. */
struct egress_change
{
  const char *mode;   /* "allowlist" or "denylist"; NULL: as it is */
  char *const *allow; /* rules added */
  char *const *deny;
  char *const *revoke; /* rules removed, as written */
  const struct oci_secret_arg
      *secrets; /* added, or replacing one of the same name (which keeps its placeholder) */
  size_t n_secrets;
};
/* The change written into the sandbox's config (what exec and a restart
 * read) and kept secrets, then sent to its running proxy, which applies it
 * to every request from then on and cuts the connections it no longer lets
 * through (*cut: how many).  A sandbox that is not proxied, or one created
 * without interception asked to intercept, is refused and left as it was. */
int sbx_update_network (const struct store *st, const char *id, const struct egress_change *ch, size_t *cut,
                        hk_err *err);

#endif
