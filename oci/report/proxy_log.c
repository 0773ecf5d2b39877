/* proxy_log: one JSON line per decision of a sandbox's network proxy. */
#include "oci/report/proxy_log.h"

#include <stdlib.h>

#include "lib/util.h"
#include "oci/json.h"

char *
oci_proxy_log_line (const struct oci_proxy_event *ev)
{
  struct json_out o;
  char *text = NULL;
  hk_err err;
  json_out_init (&o, NULL);
  json_obj_open (&o);
  json_kstr (&o, "time", ev->time);
  json_kstr (&o, "method", ev->method);
  json_kstr (&o, "target", ev->target);
  json_kstr (&o, "verdict", ev->verdict);
  json_kstr (&o, "reason", ev->reason);
  json_kstr (&o, "address", ev->address);
  json_obj_close (&o);
  if (json_out_finish (&o, &text, NULL, &err) < 0)
    return NULL;
  char *line = xasprintf ("%s\n", text);
  free (text);
  return line;
}
