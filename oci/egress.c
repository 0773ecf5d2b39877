/* egress: the documents of a sandbox's egress proxy that are not the
 * spec: its secrets' values, and a live policy update. */
#include "oci/egress.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util.h"
#include "oci/json.h"
#include "oci/spec_internal.h"

static void
emit_values (struct json_out *o, const struct oci_secret_value *v, size_t n)
{
  json_key (o, "secrets");
  json_obj_open (o);
  for (size_t i = 0; i < n; i++)
    json_kstr (o, v[i].name, v[i].value);
  json_obj_close (o);
}

char *
oci_secret_values_text (const struct oci_secret_value *v, size_t n)
{
  struct json_out o;
  char *text = NULL;
  hk_err err;
  json_out_init (&o, NULL);
  json_obj_open (&o);
  emit_values (&o, v, n);
  json_obj_close (&o);
  if (json_out_finish (&o, &text, NULL, &err) < 0)
    return NULL;
  return text;
}

static int
values_from (yajl_val root, struct oci_secret_value **out, size_t *n, hk_err *err)
{
  *out = NULL;
  *n = 0;
  yajl_val s = json_get (root, "secrets");
  if (s && !YAJL_IS_OBJECT (s))
    return err_set (err, EINVAL, ".secrets: must be an object");
  size_t len = s ? s->u.object.len : 0;
  *out = xcalloc (len + 1, sizeof **out);
  for (size_t i = 0; i < len; i++)
    {
      yajl_val v = s->u.object.values[i];
      if (!YAJL_IS_STRING (v))
        {
          cleanup_free char *p = json_path (".secrets", s->u.object.keys[i]);
          oci_secret_values_free (*out, *n);
          *out = NULL;
          *n = 0;
          return err_set (err, EINVAL, "%s: must be a string", p);
        }
      (*out)[*n].name = xstrdup (s->u.object.keys[i]);
      (*out)[*n].value = xstrdup (v->u.string);
      (*n)++;
    }
  return 0;
}

int
oci_secret_values_parse (const char *text, size_t len, struct oci_secret_value **out, size_t *n, hk_err *err)
{
  yajl_val root;
  if (json_parse (text, len, &root, err) < 0)
    return -1;
  int r = values_from (root, out, n, err);
  json_free (root);
  return r;
}

void
oci_secret_values_free (struct oci_secret_value *v, size_t n)
{
  for (size_t i = 0; v && i < n; i++)
    {
      free (v[i].name);
      if (v[i].value)
        explicit_bzero (v[i].value, strlen (v[i].value));
      free (v[i].value);
    }
  free (v);
}

char *
oci_egress_update_text (const char *config_json, size_t config_len, const struct oci_secret_value *v,
                        size_t n, hk_err *err)
{
  yajl_val root;
  if (json_parse (config_json, config_len, &root, err) < 0)
    return NULL;
  struct json_out o;
  char *text = NULL;
  json_out_init (&o, NULL);
  json_obj_open (&o);
  json_key (&o, "network");
  yajl_val net = json_get (json_get (root, "sandbox"), "network");
  if (net)
    json_value (&o, net);
  else
    json_null (&o);
  emit_values (&o, v, n);
  json_obj_close (&o);
  json_free (root);
  if (json_out_finish (&o, &text, NULL, err) < 0)
    return NULL;
  return text;
}

int
oci_egress_update_parse (const char *text, size_t len, struct hako_sandbox *sb,
                         struct oci_secret_value **values, size_t *n, hk_err *err)
{
  yajl_val root;
  *sb = (struct hako_sandbox){ 0 };
  *values = NULL;
  *n = 0;
  if (json_parse (text, len, &root, err) < 0)
    return -1;
  /* The network member, parsed as the spec's own (spec_sandbox.c). */
  yajl_val network = json_get (root, "network");
  int r = 0;
  if (!YAJL_IS_OBJECT (network))
    r = err_set (err, EINVAL, ".network: must be the sandbox's network object");
  if (r == 0)
    r = spec_parse_network (network, sb, err);
  if (r == 0)
    r = values_from (root, values, n, err);
  json_free (root);
  if (r < 0)
    spec_free_sandbox (sb);
  return r;
}
