/* log: messages for people (stderr) and for programs and shims (JSON lines,
 * --log FILE). */
#ifndef HAKO_LIB_LOG_H
#define HAKO_LIB_LOG_H

#include <stdbool.h>
#include <stdint.h>

enum log_format
{
  LOG_TEXT,
  LOG_JSON
};

/* The format of stderr and of the log file; may be called before log_init
 * (the global options are still being read). */
void log_set_format (enum log_format format);
/* Open FILE (may be NULL: stderr only).  Returns -1 with errno on failure. */
int log_init (const char *file, enum log_format format, bool debug);

/* What a program reads of an error besides its message: kind is a word of
 * hako(8)'s list; each may be NULL (then left out). */
struct log_fields
{
  const char *kind;
  const char *verb;
  const char *id;    /* the sandbox */
  const char *image; /* an image verb's operand */
  /* Numbers, each a member of the JSON line (hk_err's nums); n_nums 0: none. */
  int n_nums;
  const char *const *num_keys;
  const uint64_t *nums;
};

/* An error: always on stderr, and in the log file when one is set.  Text:
 * "hako: MSG".  JSON: one line, {"level":"error","kind":...,"msg":MSG,
 * "verb":...,"id":...,"image":...}, the file's line with "time" too. */
void log_error_fields (const struct log_fields *f, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));
void log_error (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));
void log_warn (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));
/* Only with --debug. */
void log_debug (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));
bool log_debug_enabled (void);

#endif
