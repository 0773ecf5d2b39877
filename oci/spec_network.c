/* spec_network: `--network`, `--allow`, `--deny`, `--secret` (and `--disk`)
 * written into the config text, each secret given its placeholder, so the config frozen at create (and read
 * again by exec and a later start) is the one the sandbox runs with. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "lib/util.h"
#include "oci/json.h"
#include "oci/spec.h"

/* A fresh placeholder: 128 random bits, so no text the sandbox sends by
 * chance is one, and guessing another sandbox's tells nothing anyway. */
char *
oci_secret_placeholder (void)
{
  uint8_t r[16];
  size_t got = 0;
  while (got < sizeof r)
    {
      ssize_t n = getrandom (r + got, sizeof r - got, 0);
      if (n > 0)
        got += (size_t)n;
      else if (errno != EINTR)
        abort (); /* no randomness: nothing safe to hand out */
    }
  char hex[33];
  for (size_t i = 0; i < sizeof r; i++)
    snprintf (hex + 2 * i, 3, "%02x", r[i]);
  return xasprintf ("hako-secret-%s", hex);
}

int
oci_secret_arg_parse (const char *arg, struct oci_secret_arg *out, hk_err *err)
{
  *out = (struct oci_secret_arg){ 0 };
  const char *eq = strchr (arg, '=');
  const char *at = strrchr (arg, '@');
  if (eq == NULL || at == NULL || at < eq)
    return err_set (err, EINVAL, "\"%s\": expected NAME=env:VARIABLE@HOST or NAME=file:/PATH@HOST", arg);
  out->name = xstrndup (arg, (size_t)(eq - arg));
  out->from = xstrndup (eq + 1, (size_t)(at - eq - 1));
  const char *host = at + 1;
  size_t hlen = strlen (host);
  if (hlen > 6 && strcmp (host + hlen - 6, ",query") == 0)
    {
      out->query = true;
      hlen -= 6;
    }
  out->host = xstrndup (host, hlen);
  char *h = NULL;
  uint16_t port;
  int r = 0;
  const char *c = out->name;
  bool name_ok = c[0] && !(c[0] >= '0' && c[0] <= '9') && strlen (c) <= 128;
  for (; *c; c++)
    name_ok &= (*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '_';
  if (!name_ok)
    r = err_set (err, EINVAL, "\"%s\": NAME must be an environment variable's name ([A-Za-z_][A-Za-z0-9_]*)",
                 arg);
  else if (oci_secret_check_from (out->from, err) < 0
           || oci_secret_parse_host (out->host, &h, &port, err) < 0)
    r = err_prefix (err, "\"%s\"", arg);
  free (h);
  if (r < 0)
    oci_secret_arg_free (out);
  return r;
}

void
oci_secret_arg_free (struct oci_secret_arg *a)
{
  free (a->name);
  free (a->from);
  free (a->host);
  *a = (struct oci_secret_arg){ 0 };
}

static bool
revoked (yajl_val rule, char *const *revoke)
{
  for (size_t i = 0; YAJL_IS_STRING (rule) && revoke && revoke[i]; i++)
    if (strcmp (rule->u.string, revoke[i]) == 0)
      return true;
  return false;
}

/* The rules of old's key but the revoked ones, then the added ones. */
static void
emit_rules (struct json_out *o, const char *key, yajl_val old, char *const *added, char *const *revoke,
            bool always)
{
  yajl_val v = json_get (old, key);
  if (!always && json_len (v) == 0 && (added == NULL || added[0] == NULL))
    return;
  json_key (o, key);
  json_arr_open (o);
  for (size_t i = 0; YAJL_IS_ARRAY (v) && i < v->u.array.len; i++)
    if (!revoked (v->u.array.values[i], revoke))
      json_value (o, v->u.array.values[i]);
  for (size_t i = 0; added && added[i]; i++)
    json_str (o, added[i]);
  json_arr_close (o);
}

/* One secret object of the spec's, with a placeholder when it has none. */
static void
emit_old_secret (struct json_out *o, yajl_val s)
{
  static const char *const skip[] = { "placeholder", NULL };
  yajl_val ph = json_get (s, "placeholder");
  json_obj_open (o);
  json_members_but (o, s, skip);
  if (YAJL_IS_STRING (ph))
    json_kstr (o, "placeholder", ph->u.string);
  else
    {
      cleanup_free char *fresh = oci_secret_placeholder ();
      json_kstr (o, "placeholder", fresh);
    }
  json_obj_close (o);
}

static bool
secret_replaced (yajl_val s, const struct oci_secret_arg *added, size_t n)
{
  yajl_val name = json_get (s, "name");
  for (size_t i = 0; YAJL_IS_STRING (name) && i < n; i++)
    if (strcmp (added[i].name, name->u.string) == 0)
      return true;
  return false;
}

/* The placeholder the spec's secret of that name has, or NULL. */
static const char *
old_placeholder (yajl_val secrets, const char *name)
{
  for (size_t i = 0; YAJL_IS_ARRAY (secrets) && i < secrets->u.array.len; i++)
    {
      yajl_val s = secrets->u.array.values[i], n = json_get (s, "name"), ph = json_get (s, "placeholder");
      if (YAJL_IS_STRING (n) && strcmp (n->u.string, name) == 0 && YAJL_IS_STRING (ph))
        return ph->u.string;
    }
  return NULL;
}

static void
emit_secrets (struct json_out *o, yajl_val old, const struct oci_net_edit *e)
{
  const struct oci_secret_arg *added = e->secrets;
  size_t n = e->n_secrets;
  yajl_val v = json_get (old, "secrets");
  if (!YAJL_IS_ARRAY (v) && n == 0)
    {
      if (v)
        {
          json_key (o, "secrets");
          json_value (o, v); /* not an array: kept, for the parser to refuse */
        }
      return;
    }
  json_key (o, "secrets");
  json_arr_open (o);
  for (size_t i = 0; YAJL_IS_ARRAY (v) && i < v->u.array.len; i++)
    if (!secret_replaced (v->u.array.values[i], added, n))
      {
        if (YAJL_IS_OBJECT (v->u.array.values[i]))
          emit_old_secret (o, v->u.array.values[i]);
        else
          json_value (o, v->u.array.values[i]);
      }
  for (size_t i = 0; i < n; i++)
    {
      const char *kept = e->keep_placeholders ? old_placeholder (v, added[i].name) : NULL;
      cleanup_free char *ph = kept ? xstrdup (kept) : oci_secret_placeholder ();
      json_obj_open (o);
      json_kstr (o, "name", added[i].name);
      json_kstr (o, "from", added[i].from);
      json_kstr (o, "host", added[i].host);
      json_kstr (o, "placeholder", ph);
      if (added[i].query)
        json_kbool (o, "query", true);
      json_obj_close (o);
    }
  json_arr_close (o);
}

static void
emit_network (struct json_out *o, yajl_val old, const void *arg)
{
  const struct oci_net_edit *e = arg;
  static const char *const skip[] = { "mode", "allow", "deny", "secrets", NULL };
  yajl_val old_mode = json_get (old, "mode");
  json_obj_open (o);
  json_members_but (o, old, skip);
  if (e->mode)
    json_kstr (o, "mode", e->mode);
  else if (old_mode)
    {
      json_key (o, "mode");
      json_value (o, old_mode);
    }
  emit_rules (o, "allow", old, e->allow, e->revoke, true); /* written even when empty, as before */
  emit_rules (o, "deny", old, e->deny, e->revoke, false);
  emit_secrets (o, old, e);
  json_obj_close (o);
}

/* The config with sandbox.MEMBER replaced by what emit_member writes from the old one. */
static int
edit_sandbox (const char *json, size_t len, const char *member,
              void (*emit_member) (struct json_out *, yajl_val, const void *), const void *arg, char **out,
              size_t *out_len, hk_err *err)
{
  yajl_val root;
  if (json_parse (json, len, &root, err) < 0)
    return -1;
  if (!YAJL_IS_OBJECT (root))
    {
      json_free (root);
      return err_set (err, EINVAL, "the config must be a JSON object");
    }
  yajl_val sb = json_get (root, "sandbox");
  struct json_out o;
  json_out_init (&o, "  ");
  json_obj_open (&o);
  for (size_t i = 0; i < root->u.object.len; i++)
    if (strcmp (root->u.object.keys[i], "sandbox") != 0)
      {
        json_key (&o, root->u.object.keys[i]);
        json_value (&o, root->u.object.values[i]);
      }
  json_key (&o, "sandbox");
  json_obj_open (&o);
  for (size_t i = 0; YAJL_IS_OBJECT (sb) && i < sb->u.object.len; i++)
    if (strcmp (sb->u.object.keys[i], member) != 0)
      {
        json_key (&o, sb->u.object.keys[i]);
        json_value (&o, sb->u.object.values[i]);
      }
  json_key (&o, member);
  emit_member (&o, json_get (sb, member), arg);
  json_obj_close (&o);
  json_obj_close (&o);
  json_free (root);
  return json_out_finish (&o, out, out_len, err);
}

/* Each rule to revoke must be there: a misspelt one would leave the rule
 * in force while its user believes it gone. */
static int
check_revoke (const char *json, size_t len, char *const *revoke, hk_err *err)
{
  if (revoke == NULL || revoke[0] == NULL)
    return 0;
  yajl_val root;
  if (json_parse (json, len, &root, err) < 0)
    return -1;
  yajl_val net = json_get (json_get (root, "sandbox"), "network");
  int r = 0;
  for (size_t i = 0; r == 0 && revoke[i]; i++)
    {
      bool found = false;
      const char *keys[] = { "allow", "deny" };
      for (size_t k = 0; k < 2 && !found; k++)
        {
          yajl_val a = json_get (net, keys[k]);
          for (size_t j = 0; YAJL_IS_ARRAY (a) && j < a->u.array.len && !found; j++)
            found = revoked (a->u.array.values[j], (char *const[]){ revoke[i], NULL });
        }
      if (!found)
        r = err_set (err, EINVAL, "\"%s\" is not one of the sandbox's rules (give it as it is written there)",
                     revoke[i]);
    }
  json_free (root);
  return r;
}

int
oci_spec_set_network (const char *json, size_t len, const struct oci_net_edit *e, char **out, size_t *out_len,
                      hk_err *err)
{
  if (check_revoke (json, len, e->revoke, err) < 0)
    return -1;
  return edit_sandbox (json, len, "network", emit_network, e, out, out_len, err);
}

/* The limits object with disk set to the size as given. */
static void
emit_limits (struct json_out *o, yajl_val old, const void *arg)
{
  json_obj_open (o);
  for (size_t i = 0; YAJL_IS_OBJECT (old) && i < old->u.object.len; i++)
    if (strcmp (old->u.object.keys[i], "disk") != 0)
      {
        json_key (o, old->u.object.keys[i]);
        json_value (o, old->u.object.values[i]);
      }
  json_kstr (o, "disk", arg);
  json_obj_close (o);
}

int
oci_spec_set_disk (const char *json, size_t len, const char *size, char **out, size_t *out_len, hk_err *err)
{
  return edit_sandbox (json, len, "limits", emit_limits, size, out, out_len, err);
}
