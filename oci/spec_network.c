/* spec_network: `--network`, `--allow` (and `--disk`) written into the config
 * text, so the config frozen at create (and read again by exec and a later
 * start) is the one the sandbox runs with. */
#include <errno.h>
#include <string.h>

#include "lib/util.h"
#include "oci/json.h"
#include "oci/spec.h"

/* The network object: mode (given, else the old one), allow (old + added). */
struct net_edit
{
  const char *mode;
  char *const *allow;
};

static void
emit_network (struct json_out *o, yajl_val old, const void *arg)
{
  const struct net_edit *e = arg;
  yajl_val old_mode = json_get (old, "mode"), old_allow = json_get (old, "allow");
  json_obj_open (o);
  for (size_t i = 0; YAJL_IS_OBJECT (old) && i < old->u.object.len; i++)
    {
      const char *k = old->u.object.keys[i];
      if (strcmp (k, "mode") != 0 && strcmp (k, "allow") != 0)
        {
          json_key (o, k);
          json_value (o, old->u.object.values[i]);
        }
    }
  if (e->mode)
    json_kstr (o, "mode", e->mode);
  else if (YAJL_IS_STRING (old_mode))
    json_kstr (o, "mode", old_mode->u.string);
  json_key (o, "allow");
  json_arr_open (o);
  for (size_t i = 0; YAJL_IS_ARRAY (old_allow) && i < old_allow->u.array.len; i++)
    json_value (o, old_allow->u.array.values[i]);
  for (size_t i = 0; e->allow && e->allow[i]; i++)
    json_str (o, e->allow[i]);
  json_arr_close (o);
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
      yajl_tree_free (root);
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
  yajl_tree_free (root);
  return json_out_finish (&o, out, out_len, err);
}

int
oci_spec_set_network (const char *json, size_t len, const char *mode, char *const *allow, char **out,
                      size_t *out_len, hk_err *err)
{
  struct net_edit e = { .mode = mode, .allow = allow };
  return edit_sandbox (json, len, "network", emit_network, &e, out, out_len, err);
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
