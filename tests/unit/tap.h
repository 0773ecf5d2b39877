/* tap: a minimal TAP producer for the C unit tests (one binary per module). */
#ifndef HAKO_TESTS_TAP_H
#define HAKO_TESTS_TAP_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int tap_n, tap_failed;

static inline int __attribute__ ((format (printf, 4, 5)))
tap_ok (int cond, const char *file, int line, const char *fmt, ...)
{
  va_list ap;
  printf ("%s %d - ", cond ? "ok" : "not ok", ++tap_n);
  va_start (ap, fmt);
  vprintf (fmt, ap);
  va_end (ap);
  printf ("\n");
  if (!cond)
    {
      tap_failed++;
      printf ("#   failed at %s:%d\n", file, line);
    }
  return cond;
}

static inline int
tap_str_eq (const char *a, const char *b)
{
  int eq = (a && b) ? strcmp (a, b) == 0 : a == b;
  if (!eq)
    printf ("#   got '%s', want '%s'\n", a ? a : "(null)", b ? b : "(null)");
  return eq;
}

#define ok(cond, ...) tap_ok (!!(cond), __FILE__, __LINE__, __VA_ARGS__)
#define is_str(a, b, ...) tap_ok (tap_str_eq ((a), (b)), __FILE__, __LINE__, __VA_ARGS__)

static inline void __attribute__ ((format (printf, 2, 3))) skip (const char *reason, const char *fmt, ...)
{
  va_list ap;
  printf ("ok %d - ", ++tap_n);
  va_start (ap, fmt);
  vprintf (fmt, ap);
  va_end (ap);
  printf (" # skip %s\n", reason);
}

static inline int
tap_done (void)
{
  printf ("1..%d\n", tap_n);
  return tap_failed ? 1 : 0;
}

#endif
