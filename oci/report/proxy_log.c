/* proxy_log: one JSON line per decision of a sandbox's network proxy. */
#include "oci/report/proxy_log.h"

#include <stdlib.h>

#include "lib/util.h"
#include "oci/json.h"

static void
names (struct json_out *o, const char *key, const char *const *v)
{
  if (v == NULL || v[0] == NULL)
    return;
  json_key (o, key);
  json_arr_open (o);
  for (size_t i = 0; v[i]; i++)
    json_str (o, v[i]);
  json_arr_close (o);
}

char *
oci_proxy_log_line (const struct oci_proxy_event *ev)
{
  struct json_out o;
  char *text = NULL;
  hk_err err;
  json_out_init (&o, NULL);
  json_obj_open (&o);
  json_kstr (&o, "time", ev->time);
  json_kstr (&o, "sandbox", ev->sandbox);
  json_kstr (&o, "method", ev->method);
  json_kstr (&o, "scheme", ev->scheme);
  json_kstr (&o, "host", ev->host);
  if (ev->port)
    json_kuint (&o, "port", ev->port);
  json_kstr (&o, "path", ev->path);
  json_kstr (&o, "target", ev->target);
  json_kstr (&o, "verdict", ev->verdict);
  json_kstr (&o, "rule", ev->rule && ev->rule[0] ? ev->rule : NULL);
  json_kstr (&o, "reason", ev->reason && ev->reason[0] ? ev->reason : NULL);
  json_kstr (&o, "address", ev->address && ev->address[0] ? ev->address : NULL);
  json_kstr (&o, "tunnel", ev->tunnel);
  if (ev->status)
    json_kint (&o, "status", ev->status);
  if (ev->has_bytes)
    {
      json_kuint (&o, "sent", ev->sent);
      json_kuint (&o, "received", ev->received);
    }
  names (&o, "secrets", ev->secrets);
  names (&o, "unreplaced", ev->unreplaced);
  json_obj_close (&o);
  if (json_out_finish (&o, &text, NULL, &err) < 0)
    return NULL;
  char *line = xasprintf ("%s\n", text);
  free (text);
  return line;
}
