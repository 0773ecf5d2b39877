/* trust: may this image be imported?  The trust policy's requirements for
 * its name, and "simple signing" signatures verified with gpgme against only
 * the keys the policy names. */
#include <errno.h>
#include <gpgme.h>
#include <nettle/base64.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "images/internal.h"
#include "lib/util.h"
#include "oci/policy.h"

#define MAX_SIGNATURE (1u << 20)
#define MAX_LOOKASIDE 64

/* ---- policy ---- */

static int
load_policy (const char *path, struct oci_policy *p, hk_err *err)
{
  cleanup_free char *text = NULL;
  size_t len;
  if (access (path, F_OK) < 0 && errno == ENOENT)
    return err_set (err, EACCES,
                    "no trust policy at %s, so every image is refused: write one (see "
                    "hako-policy(5)), e.g. {\"default\": [{\"type\": \"insecureAcceptAnything\"}]} to "
                    "accept unsigned images, or give --policy FILE",
                    path);
  if (file_read_all (path, 1 << 20, &text, &len, err) < 0)
    return err_prefix (err, "trust policy");
  if (oci_policy_parse (text, len, p, err) < 0)
    return err_prefix (err, "trust policy %s", path);
  return 0;
}

/* The name without its tag. */
static char *
repo_of (const char *name)
{
  const char *slash = strrchr (name, '/');
  const char *colon = strchr (slash ? slash : name, ':');
  return colon ? xstrndup (name, colon - name) : xstrdup (name);
}

/* The most specific scope: "reg/a/b:tag", "reg/a/b", "reg/a", "reg", then
 * default. */
static const struct oci_req_list *
pick_scope (const struct oci_policy *p, const char *name)
{
  cleanup_free char *s = xstrdup (name);
  for (;;)
    {
      for (size_t i = 0; i < p->n_scopes; i++)
        if (strcmp (p->scopes[i].scope, s) == 0)
          return &p->scopes[i];
      char *slash = strrchr (s, '/');
      char *colon = strchr (slash ? slash : s, ':');
      if (colon)
        *colon = '\0';
      else if (slash)
        *slash = '\0';
      else
        break;
    }
  return &p->def;
}

/* ---- gpgme ---- */

struct keyring
{
  gpgme_ctx_t ctx;
  char *home;
  char **trusted; /* primary key fingerprints the policy names */
  size_t n;
};

static void
keyring_free (struct keyring *k)
{
  if (k->ctx)
    gpgme_release (k->ctx);
  if (k->home)
    {
      hk_err ignored;
      rm_rf (k->home, &ignored);
    }
  free (k->home);
  for (size_t i = 0; i < k->n; i++)
    free (k->trusted[i]);
  free (k->trusted);
  *k = (struct keyring){ 0 };
}

static int
gpg_fail (hk_err *err, gpgme_error_t e, const char *what)
{
  return err_set (err, EINVAL, "%s: %s", what, gpgme_strerror (e));
}

static int
import_keys (struct keyring *k, const char *data, size_t len, const char *label, hk_err *err)
{
  gpgme_data_t d;
  gpgme_error_t e = gpgme_data_new_from_mem (&d, data, len, 0);
  if (e)
    return gpg_fail (err, e, label);
  e = gpgme_op_import (k->ctx, d);
  gpgme_data_release (d);
  if (e)
    return gpg_fail (err, e, label);
  gpgme_import_result_t res = gpgme_op_import_result (k->ctx);
  size_t before = k->n;
  for (gpgme_import_status_t s = res ? res->imports : NULL; s; s = s->next)
    if (s->result == GPG_ERR_NO_ERROR && s->fpr)
      {
        k->trusted = xrealloc (k->trusted, (k->n + 1) * sizeof *k->trusted);
        k->trusted[k->n++] = xstrdup (s->fpr);
      }
  if (k->n == before)
    return err_set (err, EINVAL, "%s: no OpenPGP public key in it", label);
  return 0;
}

static int
import_key_data (struct keyring *k, const char *b64, hk_err *err)
{
  size_t n = strlen (b64);
  size_t len = BASE64_DECODE_LENGTH (n);
  cleanup_free uint8_t *raw = xmalloc (len + 1);
  struct base64_decode_ctx ctx;
  base64_decode_init (&ctx);
  if (n % 4 != 0 || !base64_decode_update (&ctx, &len, raw, n, b64) || !base64_decode_final (&ctx))
    return err_set (err, EINVAL, "trust policy: keyData is not base64");
  return import_keys (k, (const char *)raw, len, "trust policy keyData", err);
}

/* A temporary GNUPGHOME holding only the requirement's keys: no key of the
 * host's keyrings can vouch for an image. */
static int
keyring_open (struct img_store *st, const struct oci_requirement *req, struct keyring *k, hk_err *err)
{
  *k = (struct keyring){ 0 };
  gpgme_check_version (NULL);
  cleanup_free char *tmp = xasprintf ("%s/tmp", st->dir);
  if (mkdir_p (tmp, 0700, err) < 0)
    return -1;
  k->home = xasprintf ("%s/gpg-XXXXXX", tmp);
  if (mkdtemp (k->home) == NULL)
    {
      free (k->home);
      k->home = NULL;
      return err_sys (err, "create a temporary GNUPGHOME");
    }
  gpgme_error_t e = gpgme_new (&k->ctx);
  if (!e)
    e = gpgme_set_protocol (k->ctx, GPGME_PROTOCOL_OpenPGP);
  if (!e)
    e = gpgme_ctx_set_engine_info (k->ctx, GPGME_PROTOCOL_OpenPGP, NULL, k->home);
  if (e)
    return gpg_fail (err, e, "gpgme");
  if (req->key_data)
    return import_key_data (k, req->key_data, err);
  for (size_t i = 0; req->key_paths[i]; i++)
    {
      cleanup_free char *data = NULL;
      size_t len;
      if (file_read_all (req->key_paths[i], 1 << 20, &data, &len, err) < 0)
        return err_prefix (err, "trust policy keyPath");
      if (import_keys (k, data, len, req->key_paths[i], err) < 0)
        return -1;
    }
  return 0;
}

static bool
trusted (const struct keyring *k, const char *fpr)
{
  for (size_t i = 0; i < k->n; i++)
    if (strcasecmp (k->trusted[i], fpr) == 0)
      return true;
  return false;
}

/* Verify one signature: a binary OpenPGP signed message, exactly one good
 * signature, by a key the policy names (a subkey counts as its primary).
 * *payload gets the signed text. */
static int
verify_one (struct keyring *k, const char *sig, size_t len, char **payload, size_t *plen, hk_err *err)
{
  /* Binary OpenPGP packets start with a tag byte whose top bit is set;
   * armored and clear-signed text ("-----BEGIN PGP ...") does not. */
  if (len == 0 || !((unsigned char)sig[0] & 0x80))
    return err_set (err, EINVAL,
                    "not a binary OpenPGP signed message (armored and clear-signed "
                    "signatures are refused)");
  gpgme_data_t d = NULL, plain = NULL;
  gpgme_error_t e = gpgme_data_new_from_mem (&d, sig, len, 0);
  if (!e)
    e = gpgme_data_new (&plain);
  if (!e)
    e = gpgme_op_verify (k->ctx, d, NULL, plain);
  gpgme_data_release (d);
  if (e)
    {
      gpgme_data_release (plain);
      return gpg_fail (err, e, "not a valid OpenPGP signed message");
    }
  size_t n = 0;
  char *mem = gpgme_data_release_and_get_mem (plain, &n);
  cleanup_free char *text = xmalloc (n + 1);
  if (n)
    memcpy (text, mem, n);
  text[n] = '\0';
  gpgme_free (mem);
  gpgme_verify_result_t res = gpgme_op_verify_result (k->ctx);
  gpgme_signature_t s = res ? res->signatures : NULL;
  if (s == NULL || s->next)
    return err_set (err, EINVAL, "the message must carry exactly one signature");
  gpgme_err_code_t code = gpgme_err_code (s->status);
  if (code == GPG_ERR_NO_PUBKEY)
    return err_set (err, EPERM, "signed by key %s, which the policy does not trust", s->fpr ? s->fpr : "?");
  if (code == GPG_ERR_BAD_SIGNATURE)
    return err_set (err, EPERM, "bad signature: the signed payload or the signature was altered");
  if (code != GPG_ERR_NO_ERROR)
    return err_set (err, EPERM, "signature not valid: %s", gpgme_strerror (s->status));
  if (s->summary & (GPGME_SIGSUM_KEY_REVOKED | GPGME_SIGSUM_KEY_EXPIRED | GPGME_SIGSUM_SIG_EXPIRED))
    return err_set (err, EPERM, "signature by a revoked or expired key, or expired itself");
  gpgme_key_t key = NULL;
  if (gpgme_get_key (k->ctx, s->fpr, &key, 0) != 0 || key == NULL)
    return err_set (err, EPERM, "signing key %s not found", s->fpr);
  bool ok = key->fpr && trusted (k, key->fpr);
  gpgme_key_unref (key);
  if (!ok)
    return err_set (err, EPERM, "signed by key %s, which the policy does not trust", s->fpr);
  *payload = steal_pointer (&text);
  *plen = n;
  return 0;
}

/* ---- identity ---- */

static int
check_identity (const struct oci_requirement *req, const struct oci_simple_sig *sig, const char *name,
                hk_err *err)
{
  cleanup_free char *ident = NULL;
  if (img_name_normalize (sig->identity, &ident, err) < 0)
    return err_prefix (err, "signature identity");
  cleanup_free char *repo_ident = repo_of (ident), *repo_name = repo_of (name);
  bool ok;
  switch (req->ident)
    {
    case OCI_IDENT_MATCH_REPOSITORY: ok = strcmp (repo_ident, repo_name) == 0; break;
    case OCI_IDENT_EXACT_REFERENCE: ok = strcmp (sig->identity, req->ident_ref) == 0; break;
    case OCI_IDENT_EXACT_REPOSITORY: ok = strcmp (repo_ident, req->ident_ref) == 0; break;
    default: ok = strcmp (ident, name) == 0; break;
    }
  if (!ok)
    return err_set (err, EPERM, "signature identity \"%s\" does not match %s", sig->identity,
                    req->ident == OCI_IDENT_EXACT_REFERENCE || req->ident == OCI_IDENT_EXACT_REPOSITORY
                        ? req->ident_ref
                        : name);
  return 0;
}

static int
accept_signature (struct keyring *k, const struct oci_requirement *req, const char *sig, size_t len,
                  const char *name, const char *digest, hk_err *err)
{
  cleanup_free char *payload = NULL;
  size_t plen = 0;
  struct oci_simple_sig s;
  if (verify_one (k, sig, len, &payload, &plen, err) < 0 || oci_simple_sig_parse (payload, plen, &s, err) < 0)
    return -1;
  int r = 0;
  if (strcmp (s.digest, digest) != 0)
    r = err_set (err, EPERM, "signature is for manifest %.19s.., not %.19s..", s.digest, digest);
  else
    r = check_identity (req, &s, name, err);
  oci_simple_sig_free (&s);
  return r;
}

/* ---- signatures ---- */

struct sigs
{
  char **data;
  size_t *len;
  char **label;
  size_t n;
};

static void
sigs_add (struct sigs *s, char *data, size_t len, char *label)
{
  s->data = xrealloc (s->data, (s->n + 1) * sizeof *s->data);
  s->len = xrealloc (s->len, (s->n + 1) * sizeof *s->len);
  s->label = xrealloc (s->label, (s->n + 1) * sizeof *s->label);
  s->data[s->n] = data;
  s->len[s->n] = len;
  s->label[s->n++] = label;
}

static void
sigs_free (struct sigs *s)
{
  for (size_t i = 0; i < s->n; i++)
    {
      free (s->data[i]);
      free (s->label[i]);
    }
  free (s->data);
  free (s->len);
  free (s->label);
}

/* --signature files, then the lookaside directory's
 * DIR/<name without tag>@sha256=<hex>/signature-1, -2, ... */
static int
gather (const struct img_import_opts *o, const char *name, const char *digest, struct sigs *s, hk_err *err)
{
  for (size_t i = 0; o->signatures && o->signatures[i]; i++)
    {
      char *data;
      size_t len;
      if (file_read_all (o->signatures[i], MAX_SIGNATURE, &data, &len, err) < 0)
        return err_prefix (err, "--signature");
      sigs_add (s, data, len, xstrdup (o->signatures[i]));
    }
  if (o->sigstore == NULL)
    return 0;
  cleanup_free char *repo = repo_of (name);
  for (int i = 1; i <= MAX_LOOKASIDE; i++)
    {
      char *path = xasprintf ("%s/%s@sha256=%s/signature-%d", o->sigstore, repo, digest + 7, i);
      char *data;
      size_t len;
      if (access (path, F_OK) < 0)
        {
          free (path);
          break;
        }
      if (file_read_all (path, MAX_SIGNATURE, &data, &len, err) < 0)
        {
          free (path);
          return -1;
        }
      sigs_add (s, data, len, path);
    }
  return 0;
}

static int
check_signed_by (struct img_store *st, const struct oci_requirement *req, const struct sigs *s,
                 const char *name, const char *digest, hk_err *err)
{
  if (s->n == 0)
    return err_set (err, EPERM,
                    "the trust policy requires a signature for %s: none found "
                    "(--signature FILE, or --signature-dir DIR holding DIR/<name>@sha256=<hex>/"
                    "signature-N)",
                    name);
  struct keyring k;
  if (keyring_open (st, req, &k, err) < 0)
    {
      keyring_free (&k);
      return -1;
    }
  hk_err first = { 0 };
  int r = -1;
  for (size_t i = 0; i < s->n && r < 0; i++)
    {
      hk_err e = { 0 };
      if (accept_signature (&k, req, s->data[i], s->len[i], name, digest, &e) == 0)
        r = 0;
      else if (first.msg[0] == '\0')
        {
          first = e;
          err_prefix (&first, "signature %s", s->label[i]);
        }
    }
  keyring_free (&k);
  if (r < 0)
    *err = first;
  return r;
}

int
img_trust_check (struct img_store *st, const struct img_import_opts *o, const char *name, const char *digest,
                 bool signable, hk_err *err)
{
  struct oci_policy p;
  struct sigs s = { 0 };
  if (load_policy (o->policy ? o->policy : IMG_DEFAULT_POLICY, &p, err) < 0)
    return -1;
  const struct oci_req_list *l = pick_scope (&p, name);
  int r = 0;
  for (size_t i = 0; r == 0 && i < l->n; i++)
    {
      const struct oci_requirement *req = &l->reqs[i];
      if (req->type == OCI_REQ_REJECT)
        r = err_set (err, EPERM, "the trust policy rejects %s (scope %s)", name,
                     l->scope ? l->scope : "default");
      else if (req->type == OCI_REQ_SIGNED_BY && !signable)
        r = err_set (err, EPERM,
                     "the trust policy requires a signature for %s, and a "
                     "docker-archive has no manifest a signature could name",
                     name);
      else if (req->type == OCI_REQ_SIGNED_BY)
        {
          if (s.n == 0 && (r = gather (o, name, digest, &s, err)) < 0)
            break;
          r = check_signed_by (st, req, &s, name, digest, err);
        }
    }
  if (r < 0)
    err_prefix (err, "trust");
  sigs_free (&s);
  oci_policy_free (&p);
  return r;
}
