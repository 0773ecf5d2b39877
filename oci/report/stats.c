/* stats: usage and process records, written as runc's events and ps JSON. */
#include "oci/report/stats.h"

#include <stdio.h>
#include <stdlib.h>

#include "lib/util.h"
#include "oci/json.h"

void
oci_stats_free (struct oci_stats *s)
{
  for (size_t i = 0; i < s->n_mem_raw; i++)
    free (s->mem_raw[i].key);
  free (s->mem_raw);
  free (s->cpu_percpu_ns);
  *s = (struct oci_stats){ 0 };
}

void
oci_stats_add_raw (struct oci_stats *s, const char *key, uint64_t value)
{
  s->mem_raw = xrealloc (s->mem_raw, (s->n_mem_raw + 1) * sizeof *s->mem_raw);
  s->mem_raw[s->n_mem_raw++] = (struct oci_kv_u64){ xstrdup (key), value };
}

static void
mem_entry (struct json_out *o, const char *key, const struct oci_mem_entry *e)
{
  json_key (o, key);
  json_obj_open (o);
  json_kuint (o, "limit", e->limit);
  json_kuint (o, "usage", e->usage);
  json_kuint (o, "max", e->max);
  json_kuint (o, "failcnt", e->failcnt);
  json_obj_close (o);
}

static void
write_cpu (struct json_out *o, const struct oci_stats *s)
{
  json_key (o, "cpu");
  json_obj_open (o);
  if (s->has_cpu)
    {
      json_key (o, "usage");
      json_obj_open (o);
      json_kuint (o, "total", s->cpu_total_ns);
      if (s->n_percpu)
        {
          json_key (o, "percpu");
          json_arr_open (o);
          for (size_t i = 0; i < s->n_percpu; i++)
            json_uint (o, s->cpu_percpu_ns[i]);
          json_arr_close (o);
        }
      json_kuint (o, "kernel", s->cpu_kernel_ns);
      json_kuint (o, "user", s->cpu_user_ns);
      json_obj_close (o);
    }
  if (s->cpu_limit_milli)
    {
      char n[32];
      snprintf (n, sizeof n, "%llu.%03llu", (unsigned long long)(s->cpu_limit_milli / 1000),
                (unsigned long long)(s->cpu_limit_milli % 1000));
      json_key (o, "limit");
      json_number (o, n);
    }
  if (s->has_throttling)
    {
      json_key (o, "throttling");
      json_obj_open (o);
      json_kuint (o, "periods", s->periods);
      json_kuint (o, "throttledPeriods", s->throttled_periods);
      json_kuint (o, "throttledTime", s->throttled_ns);
      json_obj_close (o);
    }
  json_obj_close (o);
}

static void
write_memory (struct json_out *o, const struct oci_stats *s)
{
  json_key (o, "memory");
  json_obj_open (o);
  if (s->has_memory)
    {
      mem_entry (o, "usage", &s->mem);
      if (s->has_swap)
        mem_entry (o, "swap", &s->swap);
      json_key (o, "raw");
      json_obj_open (o);
      for (size_t i = 0; i < s->n_mem_raw; i++)
        json_kuint (o, s->mem_raw[i].key, s->mem_raw[i].value);
      json_obj_close (o);
    }
  if (s->mem_total)
    json_kuint (o, "total", s->mem_total);
  json_obj_close (o);
}

static void
write_disk (struct json_out *o, const struct oci_stats *s)
{
  if (!s->has_disk)
    return;
  json_key (o, "disk");
  json_obj_open (o);
  json_kuint (o, "usage", s->disk_used);
  json_kuint (o, "limit", s->disk_total);
  json_obj_close (o);
}

int
oci_stats_event_json (const char *id, const struct oci_stats *s, char **out, size_t *len, hk_err *err)
{
  struct json_out o;
  json_out_init (&o, NULL);
  json_obj_open (&o);
  json_kstr (&o, "type", "stats");
  json_kstr (&o, "id", id);
  json_key (&o, "data");
  json_obj_open (&o);
  write_cpu (&o, s);
  write_memory (&o, s);
  json_key (&o, "pids");
  json_obj_open (&o);
  if (s->has_pids)
    {
      json_kuint (&o, "current", s->pids_current);
      json_kuint (&o, "limit", s->pids_limit);
    }
  json_obj_close (&o);
  write_disk (&o, s);
  json_obj_close (&o);
  json_obj_close (&o);
  return json_out_finish (&o, out, len, err);
}

int
oci_event_json (const char *type, const char *id, char **out, size_t *len, hk_err *err)
{
  struct json_out o;
  json_out_init (&o, NULL);
  json_obj_open (&o);
  json_kstr (&o, "type", type);
  json_kstr (&o, "id", id);
  json_obj_close (&o);
  return json_out_finish (&o, out, len, err);
}

void
oci_procs_free (struct oci_proc *p, size_t n)
{
  for (size_t i = 0; i < n; i++)
    {
      free (p[i].user);
      free (p[i].start);
      free (p[i].command);
    }
  free (p);
}

int
oci_pids_json (const struct oci_proc *p, size_t n, char **out, size_t *len, hk_err *err)
{
  struct json_out o;
  json_out_init (&o, NULL);
  json_arr_open (&o);
  for (size_t i = 0; i < n; i++)
    json_int (&o, p[i].pid);
  json_arr_close (&o);
  return json_out_finish (&o, out, len, err);
}

int
oci_procs_json (const struct oci_proc *p, size_t n, char **out, size_t *len, hk_err *err)
{
  struct json_out o;
  json_out_init (&o, NULL);
  json_arr_open (&o);
  for (size_t i = 0; i < n; i++)
    {
      char st[2] = { p[i].state, '\0' };
      json_obj_open (&o);
      json_kint (&o, "pid", p[i].pid);
      json_kint (&o, "ppid", p[i].ppid);
      if (p[i].ns_pid)
        json_kint (&o, "ns_pid", p[i].ns_pid);
      json_kstr (&o, "user", p[i].user);
      json_kuint (&o, "uid", p[i].uid);
      json_kstr (&o, "state", st);
      json_kuint (&o, "cpu_ms", p[i].cpu_ms);
      json_kstr (&o, "command", p[i].command);
      json_obj_close (&o);
    }
  json_arr_close (&o);
  return json_out_finish (&o, out, len, err);
}
