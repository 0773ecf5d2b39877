/* tap: a minimal TAP producer for the C unit tests (one binary per module). */
#ifndef HAKO_TESTS_TAP_H
#define HAKO_TESTS_TAP_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int tap_n, tap_failed;

#define ok(cond, ...)                                                          \
  do                                                                           \
    {                                                                          \
      int _c = (cond);                                                         \
      printf ("%s %d - ", _c ? "ok" : "not ok", ++tap_n);                      \
      printf (__VA_ARGS__);                                                    \
      printf ("\n");                                                           \
      if (!_c)                                                                 \
        {                                                                      \
          tap_failed++;                                                        \
          printf ("#   failed at %s:%d: %s\n", __FILE__, __LINE__, #cond);     \
        }                                                                      \
    }                                                                          \
  while (0)

#define is_str(a, b, ...)                                                      \
  do                                                                           \
    {                                                                          \
      const char *_a = (a), *_b = (b);                                         \
      int _c = (_a && _b) ? strcmp (_a, _b) == 0 : _a == _b;                   \
      ok (_c, __VA_ARGS__);                                                    \
      if (!_c)                                                                 \
        printf ("#   got '%s', want '%s'\n", _a ? _a : "(null)", _b ? _b : "(null)"); \
    }                                                                          \
  while (0)

#define skip(reason, ...)                                                      \
  do                                                                           \
    {                                                                          \
      printf ("ok %d - ", ++tap_n);                                            \
      printf (__VA_ARGS__);                                                    \
      printf (" # skip %s\n", reason);                                         \
    }                                                                          \
  while (0)

static inline int
tap_done (void)
{
  printf ("1..%d\n", tap_n);
  return tap_failed ? 1 : 0;
}

#endif
