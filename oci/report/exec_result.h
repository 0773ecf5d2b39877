/* exec_result: the one JSON object `hako exec --json` prints, from a plain struct. */
#ifndef HAKO_OCI_EXEC_RESULT_H
#define HAKO_OCI_EXEC_RESULT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "lib/err.h"

struct oci_exec_stream
{
  const char *data; /* raw bytes, any encoding; may hold NULs */
  size_t len;
  bool truncated;
};

struct oci_exec_result
{
  int exit_code; /* the exit status: 128+N when killed by signal N, 124 by the timeout */
  int signal;    /* N, or 0 when the command exited (written as null) */
  /* "exited", "signaled", "timeout", "oom", "sandbox_timeout", "stopped", "deleted" */
  const char *reason;
  bool timed_out;
  struct oci_exec_stream out, err;
  uint64_t duration_ms;
  bool has_oom_kills; /* else oom_kills is written as null (no memory counter) */
  uint64_t oom_kills;
  const char *warning; /* hako's own diagnostic, kept out of the streams; NULL: null */
  /* What the command's processes used; has_usage false: each written as null. */
  bool has_usage;
  uint64_t user_cpu_us, system_cpu_us;
  uint64_t peak_rss_bytes;
  /* 126/127: why the command could not be executed, as
   * {"kind":"not_found"|"permission"|"not_executable","message":"..."};
   * NULL error_kind: null. */
  const char *error_kind;
  const char *error_message;
};

/* Write the object and a newline to f:
 *   {"exit_code":0,"signal":null,"reason":"exited","timed_out":false,
 *    "stdout":"...","stderr":"...","stdout_truncated":false,
 *    "stderr_truncated":false,"duration_ms":12,"oom_kills":0,"warning":null,
 *    "user_cpu_us":1500,"system_cpu_us":900,"peak_rss_bytes":1703936,"error":null}
 * The output is valid JSON whatever bytes the streams hold: valid UTF-8 is
 * kept (U+2028 and U+2029 escaped), control characters are escaped, and each
 * invalid sequence (a maximal subpart, as Unicode recommends) becomes
 * \ufffd.  Strings are escaped straight into f, so memory does not grow with
 * the output.  Fails only when writing to f fails. */
int oci_exec_result_write (const struct oci_exec_result *r, FILE *f, hk_err *err);

#endif
