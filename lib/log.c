/* log: stderr for people, and --log FILE in text or runc's JSON-lines shape. */
#include "lib/log.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int log_fd = -1;
static enum log_format log_fmt = LOG_TEXT;
static bool log_dbg = false;

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

/* Append MSG to OUT as a JSON string body (quotes excluded). */
static size_t
json_escape (char *out, size_t size, const char *msg)
{
  size_t n = 0;
  for (const unsigned char *p = (const unsigned char *) msg; *p && n + 7 < size; p++)
    {
      if (*p == '"' || *p == '\\')
        {
          out[n++] = '\\';
          out[n++] = *p;
        }
      else if (*p < 0x20)
        n += snprintf (out + n, size - n, "\\u%04x", *p);
      else
        out[n++] = *p;
    }
  out[n] = '\0';
  return n;
}

static void
log_to_file (const char *level, const char *msg)
{
  char line[8192];
  int n;
  if (log_fd < 0)
    return;
  if (log_fmt == LOG_JSON)
    {
      char esc[6144], stamp[64];
      struct timespec ts;
      struct tm tm;
      clock_gettime (CLOCK_REALTIME, &ts);
      gmtime_r (&ts.tv_sec, &tm);
      strftime (stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &tm);
      json_escape (esc, sizeof esc, msg);
      n = snprintf (line, sizeof line, "{\"level\":\"%s\",\"msg\":\"%s\",\"time\":\"%s.%09ldZ\"}\n",
                    level, esc, stamp, ts.tv_nsec);
    }
  else
    n = snprintf (line, sizeof line, "%s: %s\n", level, msg);
  if (n > 0)
    {
      if ((size_t) n >= sizeof line)
        n = sizeof line - 1;
      if (write (log_fd, line, n) < 0)
        return;
    }
}

static void __attribute__ ((format (printf, 3, 0)))
log_emit (const char *level, bool to_stderr, const char *fmt, va_list ap)
{
  char msg[4096];
  if (fmt == NULL)  /* never, but GCC's sanitizer build cannot prove it */
    fmt = "";
  vsnprintf (msg, sizeof msg, fmt, ap);
  if (to_stderr)
    fprintf (stderr, "hako: %s%s\n", strcmp (level, "warning") == 0 ? "warning: " : "", msg);
  log_to_file (level, msg);
}

void
log_error (const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  log_emit ("error", true, fmt, ap);
  va_end (ap);
}

void
log_warn (const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  log_emit ("warning", true, fmt, ap);
  va_end (ap);
}

void
log_debug (const char *fmt, ...)
{
  va_list ap;
  if (!log_dbg)
    return;
  va_start (ap, fmt);
  log_emit ("debug", true, fmt, ap);
  va_end (ap);
}
