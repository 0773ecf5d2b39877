/* err: the one error type threaded through every fallible call. */
#ifndef HAKO_LIB_ERR_H
#define HAKO_LIB_ERR_H

#include <stdarg.h>

/* A failed call returns -1 and fills an hk_err.  The message says what failed
 * and on what; errnum keeps the errno that caused it (0 when none). */
typedef struct hk_err {
  int errnum;
  char msg[2048];
} hk_err;

/* Set the error from a printf format that says everything itself; errnum is
 * only recorded.  Always returns -1 so callers can `return err_set (...)`. */
int err_set (hk_err *err, int errnum, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));
/* Same, and ": strerror(errnum)" is appended (a system call's failure). */
int err_code (hk_err *err, int errnum, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));
/* err_code with errno. */
int err_sys (hk_err *err, const char *fmt, ...) __attribute__ ((format (printf, 2, 3)));
/* Put "CONTEXT: " in front of the message already in err.  Returns -1. */
int err_prefix (hk_err *err, const char *fmt, ...) __attribute__ ((format (printf, 2, 3)));
void err_clear (hk_err *err);

#endif
