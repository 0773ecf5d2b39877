/* log: messages for people (stderr) and for shims (--log FILE, text or JSON lines). */
#ifndef HAKO_LIB_LOG_H
#define HAKO_LIB_LOG_H

#include <stdbool.h>

enum log_format { LOG_TEXT, LOG_JSON };

/* Open FILE (may be NULL: stderr only).  Returns -1 with errno on failure. */
int log_init (const char *file, enum log_format format, bool debug);
/* An error: always on stderr as "hako: MSG", and in the log file when one is set. */
void log_error (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));
void log_warn (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));
/* Only with --debug. */
void log_debug (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));
bool log_debug_enabled (void);

#endif
