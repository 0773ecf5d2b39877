/* log: stderr for people, JSON lines for programs, and --log FILE in text or
 * runc's JSON-lines shape. */
#include "lib/log.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/jsonstr.h"
#include "lib/util.h"

static int log_fd = -1;
static enum log_format log_fmt = LOG_TEXT;
static bool log_dbg = false;

void
log_set_format (enum log_format format)
{
  log_fmt = format;
}

int
log_init (const char *file, enum log_format format, bool debug)
{
  log_fmt = format;
  log_dbg = debug;
  if (file == NULL)
    return 0;
  log_fd = open (file, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  return log_fd < 0 ? -1 : 0;
}

bool
log_debug_enabled (void)
{
  return log_dbg;
}

/* Append the literal lit to line[*n], if it fits whole (size keeps room for
 * the closing "}\n" and the NUL). */
static void
put_lit (char *line, size_t size, size_t *n, const char *lit)
{
  size_t l = strlen (lit);
  if (*n + l < size)
    {
      memcpy (line + *n, lit, l + 1);
      *n += l;
    }
}

static void
put_field (char *line, size_t size, size_t *n, const char *key, const char *value)
{
  if (value == NULL)
    return;
  put_lit (line, size, n, key);
  jsonstr_append (line, size, n, value);
}

/* One JSON object and a newline in line: runc's shape (level, msg, time)
 * with hako's fields.  Every string goes through the escaper, so a message
 * holding a path of any bytes still makes one valid line. */
static size_t
json_line (char *line, size_t size, const char *level, const struct log_fields *f, const char *msg,
           bool with_time)
{
  size_t n = 0, body = size - 3; /* room for "}\n" and the NUL */
  line[0] = '\0';
  put_lit (line, body, &n, "{\"level\":");
  jsonstr_append (line, body, &n, level);
  put_field (line, body, &n, ",\"kind\":", f ? f->kind : NULL);
  put_field (line, body, &n, ",\"msg\":", msg);
  put_field (line, body, &n, ",\"verb\":", f ? f->verb : NULL);
  put_field (line, body, &n, ",\"id\":", f ? f->id : NULL);
  put_field (line, body, &n, ",\"image\":", f ? f->image : NULL);
  for (int i = 0; f && i < f->n_nums; i++)
    {
      char num[32];
      put_lit (line, body, &n, ",");
      jsonstr_append (line, body, &n, f->num_keys[i]);
      snprintf (num, sizeof num, ":%" PRIu64, f->nums[i]);
      put_lit (line, body, &n, num);
    }
  if (with_time)
    {
      char stamp[96];
      struct timespec ts;
      struct tm tm;
      clock_gettime (CLOCK_REALTIME, &ts);
      gmtime_r (&ts.tv_sec, &tm);
      size_t k = strftime (stamp, sizeof stamp, ",\"time\":\"%Y-%m-%dT%H:%M:%S", &tm);
      snprintf (stamp + k, sizeof stamp - k, ".%09ldZ\"", ts.tv_nsec);
      put_lit (line, body, &n, stamp);
    }
  memcpy (line + n, "}\n", 3);
  return n + 2;
}

static void
write_all (int fd, const char *buf, size_t n)
{
  while (n > 0)
    {
      ssize_t w = write (fd, buf, n);
      if (w <= 0)
        return;
      buf += w;
      n -= (size_t)w;
    }
}

static void
log_to_file (const char *level, const struct log_fields *f, const char *msg)
{
  char line[8192];
  size_t n;
  if (log_fd < 0)
    return;
  if (log_fmt == LOG_JSON)
    n = json_line (line, sizeof line, level, f, msg, true);
  else
    {
      int k = snprintf (line, sizeof line, "%s: %s\n", level, msg);
      n = k < 0 ? 0 : (size_t)k >= sizeof line ? sizeof line - 1 : (size_t)k;
    }
  write_all (log_fd, line, n);
}

static void
log_to_stderr (const char *level, const struct log_fields *f, const char *msg)
{
  char line[8192];
  if (log_fmt == LOG_JSON)
    {
      fflush (stderr);
      write_all (2, line, json_line (line, sizeof line, level, f, msg, false));
      return;
    }
  /* A message can hold names a sandbox chose (a file below a directory
   * hako fs removed): its escape sequences must not reach the caller's
   * terminal, which they could retitle, scroll or overwrite. */
  char shown[4096];
  snprintf (shown, sizeof shown, "%s", msg);
  text_sanitize (shown, "\n\t");
  fprintf (stderr, "hako: %s%s\n", strcmp (level, "warning") == 0 ? "warning: " : "", shown);
}

static void __attribute__ ((format (printf, 3, 0)))
log_emit (const char *level, const struct log_fields *f, const char *fmt, va_list ap)
{
  char msg[4096];
  if (fmt == NULL) /* never, but GCC's sanitizer build cannot prove it */
    fmt = "";
  vsnprintf (msg, sizeof msg, fmt, ap);
  log_to_stderr (level, f, msg);
  log_to_file (level, f, msg);
}

void
log_error_fields (const struct log_fields *f, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  log_emit ("error", f, fmt, ap);
  va_end (ap);
}

void
log_error (const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  log_emit ("error", NULL, fmt, ap);
  va_end (ap);
}

void
log_warn (const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  log_emit ("warning", NULL, fmt, ap);
  va_end (ap);
}

void
log_debug (const char *fmt, ...)
{
  va_list ap;
  if (!log_dbg)
    return;
  va_start (ap, fmt);
  log_emit ("debug", NULL, fmt, ap);
  va_end (ap);
}
