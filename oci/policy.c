/* policy: the trust policy and the simple-signing payload, parsed strictly —
 * an unknown key is an error, never silently ignored, since ignoring a
 * requirement one misspelled would accept what it meant to refuse. */
#include "oci/policy.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util.h"
#include "oci/json.h"
#include "oci/spec.h"

/* Every key of OBJ is in ALLOWED (NULL-terminated) and none repeats. */
static int
check_keys (yajl_val obj, const char *path, const char *const *allowed, hk_err *err)
{
  size_t n = obj->u.object.len;
  for (size_t i = 0; i < n; i++)
    {
      const char *k = obj->u.object.keys[i];
      bool ok = allowed == NULL;
      for (size_t j = 0; allowed && allowed[j]; j++)
        ok |= strcmp (k, allowed[j]) == 0;
      if (!ok)
        return json_error (err, path, k, "unknown key");
      for (size_t j = 0; j < i; j++)
        if (strcmp (k, obj->u.object.keys[j]) == 0)
          return json_error (err, path, k, "given twice");
    }
  return 0;
}

static int
parse_identity (yajl_val v, const char *path, struct oci_requirement *r, hk_err *err)
{
  static const char *const keys[] = { "type", "dockerReference", "dockerRepository", NULL };
  cleanup_free char *type = NULL;
  if (check_keys (v, path, keys, err) < 0 || json_get_string (v, path, "type", &type, err) < 0)
    return -1;
  if (type == NULL)
    return json_error (err, path, "type", "required");
  const char *refkey = NULL;
  if (strcmp (type, "matchRepoDigestOrExact") == 0)
    r->ident = OCI_IDENT_MATCH_REPO_DIGEST_OR_EXACT;
  else if (strcmp (type, "matchExact") == 0)
    r->ident = OCI_IDENT_MATCH_EXACT;
  else if (strcmp (type, "matchRepository") == 0)
    r->ident = OCI_IDENT_MATCH_REPOSITORY;
  else if (strcmp (type, "exactReference") == 0)
    r->ident = OCI_IDENT_EXACT_REFERENCE, refkey = "dockerReference";
  else if (strcmp (type, "exactRepository") == 0)
    r->ident = OCI_IDENT_EXACT_REPOSITORY, refkey = "dockerRepository";
  else
    return json_error (err, path, "type",
                       "\"%s\" is not supported (matchRepoDigestOrExact, "
                       "matchExact, matchRepository, exactReference, exactRepository)",
                       type);
  if (refkey && json_get_string (v, path, refkey, &r->ident_ref, err) < 0)
    return -1;
  if (refkey && r->ident_ref == NULL)
    return json_error (err, path, refkey, "required for %s", type);
  return 0;
}

static int
parse_requirement (yajl_val v, const char *path, struct oci_requirement *r, hk_err *err)
{
  static const char *const signed_keys[]
      = { "type", "keyType", "keyPath", "keyPaths", "keyData", "signedIdentity", NULL };
  static const char *const plain_keys[] = { "type", NULL };
  cleanup_free char *type = NULL, *key_type = NULL, *key_path = NULL;
  yajl_val ident = NULL;
  if (!YAJL_IS_OBJECT (v))
    return json_error (err, path, NULL, "must be an object");
  if (json_get_string (v, path, "type", &type, err) < 0)
    return -1;
  if (type == NULL)
    return json_error (err, path, "type", "required");
  if (strcmp (type, "insecureAcceptAnything") == 0 || strcmp (type, "reject") == 0)
    {
      r->type = type[0] == 'i' ? OCI_REQ_ACCEPT : OCI_REQ_REJECT;
      return check_keys (v, path, plain_keys, err);
    }
  if (strcmp (type, "signedBy") != 0)
    return json_error (err, path, "type",
                       "\"%s\" is not supported (insecureAcceptAnything, reject, "
                       "signedBy)",
                       type);
  r->type = OCI_REQ_SIGNED_BY;
  if (check_keys (v, path, signed_keys, err) < 0 || json_get_string (v, path, "keyType", &key_type, err) < 0
      || json_get_string (v, path, "keyPath", &key_path, err) < 0
      || json_get_strv (v, path, "keyPaths", &r->key_paths, err) < 0
      || json_get_string (v, path, "keyData", &r->key_data, err) < 0
      || json_get_object (v, path, "signedIdentity", &ident, err) < 0)
    return -1;
  if (key_type == NULL || strcmp (key_type, "GPGKeys") != 0)
    return json_error (err, path, "keyType", "must be \"GPGKeys\"");
  int sources = (key_path != NULL) + (r->key_paths != NULL) + (r->key_data != NULL);
  if (sources != 1)
    return json_error (err, path, NULL, "signedBy needs exactly one of keyPath, keyPaths, keyData");
  if (key_path)
    {
      r->key_paths = xcalloc (2, sizeof *r->key_paths);
      r->key_paths[0] = steal_pointer (&key_path);
    }
  if (r->key_paths && r->key_paths[0] == NULL)
    return json_error (err, path, "keyPaths", "must not be empty");
  cleanup_free char *ipath = json_path (path, "signedIdentity");
  return ident ? parse_identity (ident, ipath, r, err) : 0;
}

static int
parse_list (yajl_val v, const char *path, const char *scope, struct oci_req_list *l, hk_err *err)
{
  if (!YAJL_IS_ARRAY (v) || json_len (v) == 0)
    return json_error (err, path, NULL, "must be a non-empty array of requirements");
  l->scope = scope ? xstrdup (scope) : NULL;
  l->n = json_len (v);
  l->reqs = xcalloc (l->n, sizeof *l->reqs);
  for (size_t i = 0; i < l->n; i++)
    {
      cleanup_free char *p = json_index (path, i);
      if (parse_requirement (json_at (v, i), p, &l->reqs[i], err) < 0)
        return -1;
    }
  return 0;
}

static int
parse_transports (yajl_val t, struct oci_policy *p, hk_err *err)
{
  if (check_keys (t, ".transports", NULL, err) < 0)
    return -1;
  for (size_t i = 0; i < t->u.object.len; i++)
    {
      yajl_val scopes = t->u.object.values[i];
      cleanup_free char *tpath = json_path (".transports", t->u.object.keys[i]);
      if (!YAJL_IS_OBJECT (scopes))
        return json_error (err, tpath, NULL, "must be an object of scopes");
      if (check_keys (scopes, tpath, NULL, err) < 0)
        return -1;
      for (size_t j = 0; j < scopes->u.object.len; j++)
        {
          const char *scope = scopes->u.object.keys[j];
          for (size_t k = 0; k < p->n_scopes; k++)
            if (strcmp (p->scopes[k].scope, scope) == 0)
              return json_error (err, tpath, scope,
                                 "the scope is given in two transports: hako "
                                 "matches scopes by image name, whatever the transport");
          cleanup_free char *spath = json_path (tpath, scope);
          p->scopes = xrealloc (p->scopes, (p->n_scopes + 1) * sizeof *p->scopes);
          p->scopes[p->n_scopes] = (struct oci_req_list){ 0 };
          if (parse_list (scopes->u.object.values[j], spath, scope, &p->scopes[p->n_scopes++], err) < 0)
            return -1;
        }
    }
  return 0;
}

int
oci_policy_parse (const char *text, size_t len, struct oci_policy *out, hk_err *err)
{
  static const char *const keys[] = { "default", "transports", NULL };
  yajl_val root = NULL, transports = NULL;
  *out = (struct oci_policy){ 0 };
  if (json_parse (text, len, &root, err) < 0)
    return -1;
  int r = -1;
  yajl_val def = json_get (root, "default");
  if (!YAJL_IS_OBJECT (root))
    json_error (err, "", NULL, "must be an object");
  else if (check_keys (root, "", keys, err) < 0)
    ;
  else if (def == NULL)
    json_error (err, "", "default", "required (a list of requirements, e.g. [{\"type\": \"reject\"}])");
  else if (parse_list (def, ".default", NULL, &out->def, err) == 0
           && json_get_object (root, "", "transports", &transports, err) >= 0
           && (transports == NULL || parse_transports (transports, out, err) == 0))
    r = 0;
  json_free (root);
  if (r < 0)
    oci_policy_free (out);
  return r;
}

static void
list_free (struct oci_req_list *l)
{
  for (size_t i = 0; i < l->n; i++)
    {
      strv_free (l->reqs[i].key_paths);
      free (l->reqs[i].key_data);
      free (l->reqs[i].ident_ref);
    }
  free (l->reqs);
  free (l->scope);
}

void
oci_policy_free (struct oci_policy *p)
{
  list_free (&p->def);
  for (size_t i = 0; i < p->n_scopes; i++)
    list_free (&p->scopes[i]);
  free (p->scopes);
  *p = (struct oci_policy){ 0 };
}

/* ---- simple signing ---- */

int
oci_simple_sig_parse (const char *text, size_t len, struct oci_simple_sig *out, hk_err *err)
{
  static const char *const top_keys[] = { "critical", "optional", NULL };
  static const char *const crit_keys[] = { "type", "image", "identity", NULL };
  static const char *const image_keys[] = { "docker-manifest-digest", NULL };
  static const char *const ident_keys[] = { "docker-reference", NULL };
  yajl_val root = NULL, crit = NULL, image = NULL, ident = NULL, opt = NULL;
  cleanup_free char *type = NULL;
  *out = (struct oci_simple_sig){ 0 };
  if (json_parse (text, len, &root, err) < 0)
    return err_prefix (err, "signature payload");
  int r = -1;
  if (!YAJL_IS_OBJECT (root))
    {
      json_error (err, "signature payload", NULL, "must be an object");
      goto out;
    }
  if (check_keys (root, "signature payload", top_keys, err) < 0
      || json_get_object (root, "signature payload", "critical", &crit, err) < 0
      || json_get_object (root, "signature payload", "optional", &opt, err) < 0)
    goto out;
  if (crit == NULL)
    {
      json_error (err, "signature payload", "critical", "required");
      goto out;
    }
  if ((opt && check_keys (opt, "signature payload.optional", NULL, err) < 0)
      || check_keys (crit, "signature payload.critical", crit_keys, err) < 0
      || json_get_string (crit, "signature payload.critical", "type", &type, err) < 0
      || json_get_object (crit, "signature payload.critical", "image", &image, err) < 0
      || json_get_object (crit, "signature payload.critical", "identity", &ident, err) < 0)
    goto out;
  if (type == NULL || strcmp (type, "atomic container signature") != 0 || image == NULL || ident == NULL)
    {
      json_error (err, "signature payload.critical", NULL,
                  "needs type \"atomic container "
                  "signature\", image and identity");
      goto out;
    }
  if (check_keys (image, "signature payload.critical.image", image_keys, err) < 0
      || check_keys (ident, "signature payload.critical.identity", ident_keys, err) < 0
      || json_get_string (image, "signature payload.critical.image", "docker-manifest-digest", &out->digest,
                          err)
             < 0
      || json_get_string (ident, "signature payload.critical.identity", "docker-reference", &out->identity,
                          err)
             < 0)
    goto out;
  if (out->digest == NULL || out->identity == NULL)
    {
      json_error (err, "signature payload.critical", NULL,
                  "needs docker-manifest-digest and "
                  "docker-reference");
      goto out;
    }
  r = 0;
out:
  json_free (root);
  if (r < 0)
    oci_simple_sig_free (out);
  return r;
}

void
oci_simple_sig_free (struct oci_simple_sig *s)
{
  free (s->digest);
  free (s->identity);
  *s = (struct oci_simple_sig){ 0 };
}
