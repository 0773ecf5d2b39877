/* err: formatting of the error type every fallible call fills. */
#include "lib/err.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* The English text of errnum without strerror's translation (a gettext
 * look-up under a lock) or its malloc'ed text for unknown numbers: errors
 * are formatted in processes that share hako's memory (exec_enter.c), where
 * neither may be left half-done. */
static const char *
errno_text (int errnum)
{
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 32))
  const char *d = strerrordesc_np (errnum);
  return d ? d : "Unknown error";
#else
  return strerror (errnum);
#endif
}

static int
err_vset (hk_err *err, int errnum, bool with_strerror, const char *fmt, va_list ap)
{
  int n = vsnprintf (err->msg, sizeof err->msg, fmt, ap);
  if (n < 0)
    n = 0;
  if (with_strerror && errnum != 0 && (size_t)n < sizeof err->msg)
    snprintf (err->msg + n, sizeof err->msg - n, ": %s", errno_text (errnum));
  err->errnum = errnum;
  err->kind = ERR_KIND_UNSET; /* a new error: its kind is said anew */
  err->n_nums = 0;
  return -1;
}

int
err_set (hk_err *err, int errnum, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  err_vset (err, errnum, false, fmt, ap);
  va_end (ap);
  return -1;
}

int
err_code (hk_err *err, int errnum, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  err_vset (err, errnum, true, fmt, ap);
  va_end (ap);
  return -1;
}

int
err_sys (hk_err *err, const char *fmt, ...)
{
  int saved = errno;
  va_list ap;
  va_start (ap, fmt);
  err_vset (err, saved, true, fmt, ap);
  va_end (ap);
  errno = saved;
  return -1;
}

int
err_prefix (hk_err *err, const char *fmt, ...)
{
  char old[sizeof err->msg];
  va_list ap;
  memcpy (old, err->msg, sizeof old);
  va_start (ap, fmt);
  int n = vsnprintf (err->msg, sizeof err->msg - 2, fmt, ap);
  va_end (ap);
  if (n < 0)
    n = 0;
  if ((size_t)n > sizeof err->msg - 3)
    n = sizeof err->msg - 3;
  err->msg[n++] = ':';
  err->msg[n++] = ' ';
  size_t room = sizeof err->msg - n - 1;
  size_t olen = strnlen (old, room);
  memcpy (err->msg + n, old, olen);
  err->msg[n + olen] = '\0';
  return -1;
}

void
err_clear (hk_err *err)
{
  err->errnum = 0;
  err->kind = ERR_KIND_UNSET;
  err->msg[0] = '\0';
  err->n_nums = 0;
}

int
err_num (hk_err *err, const char *key, uint64_t value)
{
  if (err->n_nums < 0 || err->n_nums >= ERR_MAX_NUMS)
    return -1;
  err->num_keys[err->n_nums] = key;
  err->nums[err->n_nums++] = value;
  return -1;
}

int
err_kind (hk_err *err, enum err_kind kind)
{
  err->kind = kind;
  return -1;
}

int
err_kind_default (hk_err *err, enum err_kind kind)
{
  if (err->kind == ERR_KIND_UNSET)
    err->kind = kind;
  return -1;
}

int
err_setk (hk_err *err, enum err_kind kind, int errnum, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  err_vset (err, errnum, false, fmt, ap);
  va_end (ap);
  err->kind = kind;
  return -1;
}

enum err_kind
err_kind_of (const hk_err *err)
{
  if (err->kind != ERR_KIND_UNSET)
    return err->kind;
  switch (err->errnum)
    {
    case ENOENT: return ERR_NOT_FOUND;
    case EEXIST: return ERR_EXISTS;
    case EACCES:
    case EPERM: return ERR_PERMISSION;
    case EBUSY: return ERR_BUSY;
    case ENOSPC:
    case EDQUOT: return ERR_NO_SPACE;
    case ETIMEDOUT: return ERR_TIMEOUT;
    case EOPNOTSUPP:
    case ENOSYS: return ERR_UNSUPPORTED;
    case ESRCH: return ERR_NOT_RUNNING;
    default: return ERR_INTERNAL;
    }
}

const char *
err_kind_name (enum err_kind kind)
{
  static const char *const names[] = {
    [ERR_KIND_UNSET] = "internal",
    [ERR_NOT_FOUND] = "not_found",
    [ERR_EXISTS] = "exists",
    [ERR_NOT_RUNNING] = "not_running",
    [ERR_INVALID_CONFIG] = "invalid_config",
    [ERR_INVALID_ARGUMENT] = "invalid_argument",
    [ERR_UNSUPPORTED] = "unsupported",
    [ERR_PERMISSION] = "permission",
    [ERR_BUSY] = "busy",
    [ERR_ADMISSION] = "admission",
    [ERR_NO_SPACE] = "no_space",
    [ERR_TIMEOUT] = "timeout",
    [ERR_INTERNAL] = "internal",
  };
  if ((unsigned)kind >= sizeof names / sizeof *names)
    return "internal";
  return names[kind];
}
