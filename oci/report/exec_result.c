/* exec_result: the one JSON object `hako exec --json` prints, from a plain struct.
 *
 * Written by hand rather than with yajl_gen: the two strings are a command's
 * raw output, up to the --max-output cap, and in no particular encoding
 * (lib/jsonstr.c says why yajl cannot write them).  Each string is escaped
 * as it is written, so hako's memory stays at the size of the captured
 * output.  The object is flat and its keys fixed, so there is no structure
 * to get wrong; the unit test parses the output back with yajl. */
#include "oci/report/exec_result.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "lib/jsonstr.h"

static void
put_count (FILE *f, const char *key, bool known, uint64_t v)
{
  if (known)
    fprintf (f, ",\"%s\":%" PRIu64, key, v);
  else
    fprintf (f, ",\"%s\":null", key);
}

static const char *const error_kinds[] = { "not_found", "permission", "not_executable" };

/* The kind as one of these words, never free text; NULL when unknown. */
static const char *
error_kind (const char *kind)
{
  for (size_t i = 0; kind && i < sizeof error_kinds / sizeof *error_kinds; i++)
    if (strcmp (kind, error_kinds[i]) == 0)
      return error_kinds[i];
  return NULL;
}

/* {"kind":K,"message":M} or null. */
static void
put_error (FILE *f, const struct oci_exec_result *r)
{
  fputs_unlocked (",\"error\":", f);
  if (r->error_kind == NULL)
    {
      fputs_unlocked ("null", f);
      return;
    }
  const char *m = r->error_message ? r->error_message : "";
  fprintf (f, "{\"kind\":\"%s\",\"message\":", error_kind (r->error_kind));
  jsonstr_fput (f, m, strlen (m));
  fputs_unlocked ("}", f);
}

static void
put_bool (FILE *f, const char *key, bool v)
{
  fprintf (f, ",\"%s\":%s", key, v ? "true" : "false");
}

int
oci_exec_result_write (const struct oci_exec_result *r, FILE *f, hk_err *err)
{
  static const char *const reasons[]
      = { "exited", "signaled", "timeout", "oom", "sandbox_timeout", "stopped", "deleted" };
  const char *reason = NULL;
  /* The reason is one of these words, never free text: anything else is
   * refused rather than written unescaped. */
  for (size_t i = 0; i < sizeof reasons / sizeof *reasons; i++)
    if (r->reason && strcmp (r->reason, reasons[i]) == 0)
      reason = reasons[i];
  if (reason == NULL)
    return err_set (err, EINVAL, "exec result: unknown reason \"%s\"", r->reason ? r->reason : "");
  if (r->error_kind && error_kind (r->error_kind) == NULL)
    return err_set (err, EINVAL, "exec result: unknown error kind \"%s\"", r->error_kind);
  fprintf (f, "{\"exit_code\":%d,\"signal\":", r->exit_code);
  if (r->signal > 0)
    fprintf (f, "%d", r->signal);
  else
    fputs_unlocked ("null", f);
  fprintf (f, ",\"reason\":\"%s\"", reason);
  put_bool (f, "timed_out", r->timed_out);
  fputs_unlocked (",\"stdout\":", f);
  jsonstr_fput (f, r->out.data, r->out.len);
  fputs_unlocked (",\"stderr\":", f);
  jsonstr_fput (f, r->err.data, r->err.len);
  put_bool (f, "stdout_truncated", r->out.truncated);
  put_bool (f, "stderr_truncated", r->err.truncated);
  fprintf (f, ",\"duration_ms\":%" PRIu64 ",\"oom_kills\":", r->duration_ms);
  if (r->has_oom_kills)
    fprintf (f, "%" PRIu64, r->oom_kills);
  else
    fputs_unlocked ("null", f);
  fputs_unlocked (",\"warning\":", f);
  if (r->warning)
    jsonstr_fput (f, r->warning, strlen (r->warning));
  else
    fputs_unlocked ("null", f);
  put_count (f, "user_cpu_us", r->has_usage, r->user_cpu_us);
  put_count (f, "system_cpu_us", r->has_usage, r->system_cpu_us);
  put_count (f, "peak_rss_bytes", r->has_usage, r->peak_rss_bytes);
  put_error (f, r);
  fputs_unlocked ("}\n", f);
  if (fflush (f) != 0 || ferror (f))
    return err_sys (err, "write the JSON result");
  return 0;
}
