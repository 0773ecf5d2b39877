/* kept: a kept process's record and its JSON (oci/report/kept.h). */
#include "oci/report/kept.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/jsonstr.h"
#include "oci/spec.h"

void
oci_kept_free (struct oci_kept *p)
{
  strv_free (p->argv);
  p->argv = NULL;
}

void
oci_kepts_free (struct oci_kept *p, size_t n)
{
  for (size_t i = 0; i < n; i++)
    oci_kept_free (&p[i]);
  free (p);
}

const char *
oci_kept_state_name (enum oci_kept_state s)
{
  switch (s)
    {
    case OCI_KEPT_EXITED: return "exited";
    case OCI_KEPT_LOST: return "lost";
    case OCI_KEPT_RUNNING:
    default: return "running";
    }
}

/* ms since the epoch as RFC 3339 in UTC, or null for 0. */
static void
put_time (FILE *f, uint64_t ms)
{
  if (ms == 0)
    {
      fputs ("null", f);
      return;
    }
  time_t t = (time_t)(ms / 1000);
  struct tm tm;
  char buf[32];
  gmtime_r (&t, &tm);
  strftime (buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  fprintf (f, "\"%s.%03uZ\"", buf, (unsigned)(ms % 1000));
}

static void
put_bool (FILE *f, const char *key, bool v)
{
  fprintf (f, ",\"%s\":%s", key, v ? "true" : "false");
}

static void
put_u64_or_null (FILE *f, const char *key, bool has, uint64_t v)
{
  if (has)
    fprintf (f, ",\"%s\":%llu", key, (unsigned long long)v);
  else
    fprintf (f, ",\"%s\":null", key);
}

static void
put_object (const struct oci_kept *p, FILE *f)
{
  bool ended = p->state == OCI_KEPT_EXITED;
  fprintf (f, "{\"pid\":%d,\"ns_pid\":", (int)p->pid);
  if (p->ns_pid > 0)
    fprintf (f, "%d", (int)p->ns_pid);
  else
    fputs ("null", f);
  fputs (",\"command\":[", f);
  for (size_t i = 0; p->argv && p->argv[i]; i++)
    {
      if (i)
        fputc (',', f);
      jsonstr_fput (f, p->argv[i], strlen (p->argv[i]));
    }
  fprintf (f, "],\"tty\":%s,\"state\":\"%s\",\"started\":", p->tty ? "true" : "false",
           oci_kept_state_name (p->state));
  put_time (f, p->started_ms);
  fputs (",\"ended\":", f);
  put_time (f, ended ? p->ended_ms : 0);
  if (ended)
    {
      fprintf (f, ",\"exit_code\":%d,\"signal\":", p->exit_code);
      if (p->signal)
        fprintf (f, "%d", p->signal);
      else
        fputs ("null", f);
      fputs (",\"reason\":", f);
      jsonstr_fput (f, p->reason, strlen (p->reason));
    }
  else
    fputs (",\"exit_code\":null,\"signal\":null,\"reason\":null", f);
  put_bool (f, "timed_out", ended && p->timed_out);
  put_bool (f, "stdout_truncated", p->truncated[0]);
  put_bool (f, "stderr_truncated", p->truncated[1]);
  put_u64_or_null (f, "oom_kills", ended && p->has_oom_kills, p->oom_kills);
  put_u64_or_null (f, "user_cpu_us", ended && p->has_usage, p->user_us);
  put_u64_or_null (f, "system_cpu_us", ended && p->has_usage, p->system_us);
  put_u64_or_null (f, "peak_rss_bytes", ended && p->has_usage, p->peak_rss_kib * 1024);
  fputc ('}', f);
}

static int
finish (FILE *f, hk_err *err)
{
  fputc ('\n', f);
  if (fflush (f) != 0 || ferror (f))
    return err_sys (err, "write");
  return 0;
}

int
oci_kept_write (const struct oci_kept *p, FILE *f, hk_err *err)
{
  put_object (p, f);
  return finish (f, err);
}

int
oci_kept_list_write (const struct oci_kept *p, size_t n, FILE *f, hk_err *err)
{
  fputc ('[', f);
  for (size_t i = 0; i < n; i++)
    {
      if (i)
        fputc (',', f);
      put_object (&p[i], f);
    }
  fputc (']', f);
  return finish (f, err);
}
