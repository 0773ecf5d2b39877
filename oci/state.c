/* state: the sandbox state record (OCI state fields + hako's) to and from JSON. */
#include "oci/state.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util.h"
#include "oci/json.h"

static const char *const status_names[] = {
  [OCI_STATUS_CREATING] = "creating", [OCI_STATUS_CREATED] = "created", [OCI_STATUS_RUNNING] = "running",
  [OCI_STATUS_STOPPED] = "stopped",   [OCI_STATUS_PAUSED] = "paused",
};

#define N_STATUS (sizeof status_names / sizeof *status_names)

const char *
oci_status_name (enum oci_status s)
{
  return (unsigned)s < N_STATUS ? status_names[s] : NULL;
}

int
oci_status_from_name (const char *name)
{
  for (size_t i = 0; name && i < N_STATUS; i++)
    if (strcmp (status_names[i], name) == 0)
      return (int)i;
  return -1;
}

/* The version of the state format we write when the record carries none. */
#define STATE_OCI_VERSION "1.2.0"

static void
gen_annotations (struct json_out *o, const struct oci_kv *kv, size_t n)
{
  if (n == 0)
    return;
  json_key (o, "annotations");
  json_obj_open (o);
  for (size_t i = 0; i < n; i++)
    json_kstr (o, kv[i].key, kv[i].value ? kv[i].value : "");
  json_obj_close (o);
}

int
oci_state_to_json (const struct oci_state *st, bool pretty, char **out, size_t *len, hk_err *err)
{
  const char *status = oci_status_name (st->status);
  if (st->id == NULL)
    return err_set (err, EINVAL, "state: no id");
  if (status == NULL)
    return err_set (err, EINVAL, "state of %s: bad status %d", st->id, (int)st->status);
  struct json_out o;
  json_out_init (&o, pretty ? "  " : NULL);
  json_obj_open (&o);
  json_kstr (&o, "ociVersion", st->oci_version ? st->oci_version : STATE_OCI_VERSION);
  json_kstr (&o, "id", st->id);
  json_kstr (&o, "status", status);
  /* Always, 0 included: runc prints "pid": 0 for a stopped container. */
  json_kint (&o, "pid", st->pid);
  json_kstr (&o, "bundle", st->bundle);
  gen_annotations (&o, st->annotations, st->n_annotations);
  json_kstr (&o, "created", st->created);
  json_kstr (&o, "started", st->started);
  if (st->pid_start_time)
    json_kuint (&o, "pidStartTime", st->pid_start_time);
  if (st->has_exit)
    {
      json_kint (&o, "exitStatus", st->exit_status);
      if (st->signal > 0)
        json_kint (&o, "signal", st->signal);
      json_kstr (&o, "reason", st->reason);
      if (st->has_oom_kills)
        json_kuint (&o, "oomKills", st->oom_kills);
      if (st->has_usage)
        {
          json_kuint (&o, "userCpuUs", st->user_cpu_us);
          json_kuint (&o, "systemCpuUs", st->system_cpu_us);
          json_kuint (&o, "peakRssBytes", st->peak_rss_bytes);
        }
    }
  json_kstr (&o, "rootfs", st->rootfs);
  json_kstr (&o, "workdir", st->workdir);
  if (st->proxy_pid > 0)
    json_kint (&o, "proxy_pid", st->proxy_pid);
  if (st->deadline)
    json_kstr (&o, "deadline", st->deadline);
  if (st->hibernated)
    json_kbool (&o, "hibernated", true);
  if (st->restartable)
    json_kbool (&o, "restartable", true);
  json_obj_close (&o);
  return json_out_finish (&o, out, len, err);
}

static int
parse_id_status (yajl_val v, struct oci_state *st, hk_err *err)
{
  cleanup_free char *status = NULL;
  if (json_get_string (v, "", "id", &st->id, err) < 0 || json_get_string (v, "", "status", &status, err) < 0)
    return -1;
  if (st->id == NULL || st->id[0] == '\0')
    return json_error (err, "", "id", "required");
  if (status == NULL)
    return json_error (err, "", "status", "required");
  int s = oci_status_from_name (status);
  if (s < 0)
    return json_error (err, "", "status", "unknown status \"%s\"", status);
  st->status = s;
  return 0;
}

static int
parse_state (yajl_val v, struct oci_state *st, hk_err *err)
{
  int64_t pid = 0, status = 0, sig = 0;
  int has_exit = 0, has_oom = 0, has_usage = 0;
  if (!YAJL_IS_OBJECT (v))
    return err_set (err, EINVAL, "the state must be a JSON object");
  if (parse_id_status (v, st, err) < 0 || json_get_string (v, "", "ociVersion", &st->oci_version, err) < 0
      || json_get_i64 (v, "", "pid", 0, INT_MAX, &pid, err) < 0
      || json_get_u64 (v, "", "pidStartTime", UINT64_MAX, &st->pid_start_time, err) < 0
      || json_get_string (v, "", "bundle", &st->bundle, err) < 0
      || json_get_kv (v, "", "annotations", &st->annotations, &st->n_annotations, err) < 0
      || json_get_string (v, "", "created", &st->created, err) < 0
      || json_get_string (v, "", "started", &st->started, err) < 0
      || (has_exit = json_get_i64 (v, "", "exitStatus", 0, 255, &status, err)) < 0
      || json_get_i64 (v, "", "signal", 0, 64, &sig, err) < 0
      || json_get_string (v, "", "reason", &st->reason, err) < 0
      || (has_oom = json_get_u64 (v, "", "oomKills", UINT64_MAX, &st->oom_kills, err)) < 0
      || (has_usage = json_get_u64 (v, "", "userCpuUs", UINT64_MAX, &st->user_cpu_us, err)) < 0
      || json_get_u64 (v, "", "systemCpuUs", UINT64_MAX, &st->system_cpu_us, err) < 0
      || json_get_u64 (v, "", "peakRssBytes", UINT64_MAX, &st->peak_rss_bytes, err) < 0
      || json_get_string (v, "", "rootfs", &st->rootfs, err) < 0
      || json_get_string (v, "", "workdir", &st->workdir, err) < 0
      || json_get_bool (v, "", "hibernated", &st->hibernated, err) < 0
      || json_get_bool (v, "", "restartable", &st->restartable, err) < 0)
    return -1;
  st->pid = (pid_t)pid;
  st->has_exit = has_exit > 0;
  st->has_oom_kills = has_oom > 0;
  st->has_usage = has_usage > 0;
  st->exit_status = (int)status;
  st->signal = (int)sig;
  return 0;
}

int
oci_state_parse (const char *json, size_t len, struct oci_state **out, hk_err *err)
{
  yajl_val v = NULL;
  if (json_parse (json, len, &v, err) < 0)
    return -1;
  struct oci_state *st = xcalloc (1, sizeof *st);
  int r = parse_state (v, st, err);
  json_free (v);
  if (r < 0)
    {
      oci_state_free (st);
      return -1;
    }
  *out = st;
  return 0;
}

void
oci_state_free (struct oci_state *st)
{
  if (st == NULL)
    return;
  free (st->oci_version);
  free (st->id);
  free (st->bundle);
  json_kv_free (st->annotations, st->n_annotations);
  free (st->created);
  free (st->started);
  free (st->reason);
  free (st->rootfs);
  free (st->workdir);
  free (st->deadline);
  free (st);
}
