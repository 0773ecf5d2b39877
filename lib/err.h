/* err: the one error type threaded through every fallible call. */
#ifndef HAKO_LIB_ERR_H
#define HAKO_LIB_ERR_H

#include <stdarg.h>
#include <stdint.h>

/* What kind of failure, for programs that branch on it (--log-format json
 * prints the word; hako(8) lists them).  The words are a stable interface:
 * add kinds, never rename one.  ERR_KIND_UNSET means "derive it from errnum"
 * (err_kind_of). */
enum err_kind
{
  ERR_KIND_UNSET = 0,
  ERR_NOT_FOUND,        /* no such sandbox, image, file, user */
  ERR_EXISTS,           /* the id or the name is taken */
  ERR_NOT_RUNNING,      /* the verb needs a running (or created) sandbox */
  ERR_INVALID_CONFIG,   /* config.json (or a config a flag rewrote) is wrong */
  ERR_INVALID_ARGUMENT, /* the command line is wrong */
  ERR_UNSUPPORTED,      /* this host (or this hako) cannot enforce what was asked */
  ERR_PERMISSION,       /* refused by the kernel or by the trust policy */
  ERR_BUSY,             /* held by another verb or another sandbox */
  ERR_ADMISSION,        /* the node's pool has no room */
  ERR_NO_SPACE,         /* a disk or quota is full */
  ERR_TIMEOUT,          /* a deadline passed */
  ERR_INTERNAL,         /* anything else: a bug or an unexpected host failure */
};

/* A failed call returns -1 and fills an hk_err.  The message says what failed
 * and on what; errnum keeps the errno that caused it (0 when none); kind is
 * set where the failure's kind is known (err_kind).  Fixed size, no
 * allocation: it is filled in processes that share hako's memory. */
#define ERR_MAX_NUMS 4
typedef struct hk_err
{
  int errnum;
  enum err_kind kind;
  char msg[2048];
  /* Numbers a program may branch on besides the message (an admission
   * refusal's requested, reserved and capacity bytes): --log-format json
   * gives each as a member of the error's line.  Keys are static strings. */
  int n_nums;
  const char *num_keys[ERR_MAX_NUMS];
  uint64_t nums[ERR_MAX_NUMS];
} hk_err;

/* Set the error from a printf format that says everything itself; errnum is
 * only recorded.  Always returns -1 so callers can `return err_set (...)`. */
int err_set (hk_err *err, int errnum, const char *fmt, ...) __attribute__ ((format (printf, 3, 4)));
/* Same, and ": strerror(errnum)" is appended (a system call's failure). */
int err_code (hk_err *err, int errnum, const char *fmt, ...) __attribute__ ((format (printf, 3, 4)));
/* err_code with errno. */
int err_sys (hk_err *err, const char *fmt, ...) __attribute__ ((format (printf, 2, 3)));
/* Put "CONTEXT: " in front of the message already in err.  Returns -1. */
int err_prefix (hk_err *err, const char *fmt, ...) __attribute__ ((format (printf, 2, 3)));
void err_clear (hk_err *err);
/* Attach the number value as key (a static string) to the error already in
 * err; a new error (err_set...) has none.  Returns -1. */
int err_num (hk_err *err, const char *key, uint64_t value);

/* Say what kind of failure the error already in err is.  Returns -1. */
int err_kind (hk_err *err, enum err_kind kind);
/* err_kind, unless a kind is already set (a deeper call knew better). */
int err_kind_default (hk_err *err, enum err_kind kind);
/* err_set with a kind. */
int err_setk (hk_err *err, enum err_kind kind, int errnum, const char *fmt, ...)
    __attribute__ ((format (printf, 4, 5)));
/* The kind: the one set, else one derived from errnum (ENOENT not_found,
 * EEXIST exists, EACCES/EPERM permission, EBUSY busy, ENOSPC/EDQUOT
 * no_space, ETIMEDOUT timeout, ENOTSUP/ENOSYS unsupported, ESRCH
 * not_running, else internal). */
enum err_kind err_kind_of (const hk_err *err);
/* Its stable word: "not_found", "exists", ... */
const char *err_kind_name (enum err_kind kind);

#endif
