/* report: how a verb says what went wrong — one line naming the verb, the
 * sandbox and the cause ("hako: VERB ID: MSG"), or with --log-format json
 * one object with the error's kind; a usage error's line with its hint to
 * --help; and a verb's help text.  Every verb, usage.c and main.c report
 * through here; it calls nothing of cmd/. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"
#include "lib/log.h"

/* The error's fields for --log-format json: an image verb's operand is an
 * image (or a source), not a sandbox. */
static struct log_fields
fields (const char *verb, const char *id, enum err_kind kind)
{
  bool image = strncmp (verb, "image", 5) == 0;
  return (struct log_fields){
    .kind = err_kind_name (kind), .verb = verb, .id = image ? NULL : id, .image = image ? id : NULL
  };
}

static int
fail_with (const struct log_fields *f, const char *verb, const char *id, const char *msg)
{
  if (id)
    log_error_fields (f, "%s %s: %s", verb, id, msg);
  else
    log_error_fields (f, "%s: %s", verb, msg);
  return EXIT_HAKO;
}

int
cmd_fail_kind (const char *verb, const char *id, enum err_kind kind, const char *msg)
{
  struct log_fields f = fields (verb, id, kind);
  return fail_with (&f, verb, id, msg);
}

void
cmd_not_run (const char *verb, const char *id, int status, const char *msg)
{
  cmd_fail_kind (verb, id, status == 127 ? ERR_NOT_FOUND : ERR_PERMISSION, msg);
}

int
cmd_fail (const char *verb, const char *id, const hk_err *err)
{
  struct log_fields f = fields (verb, id, err_kind_of (err));
  f.n_nums = err->n_nums;
  f.num_keys = err->num_keys;
  f.nums = err->nums;
  return fail_with (&f, verb, id, err->msg);
}

int
cmd_usage (const char *verb, const char *fmt, ...)
{
  char msg[1024];
  va_list ap;
  va_start (ap, fmt);
  vsnprintf (msg, sizeof msg, fmt, ap);
  va_end (ap);
  /* "hako" is the global options' verb: no verb to name. */
  if (strcmp (verb, "hako") == 0)
    {
      struct log_fields f = { .kind = err_kind_name (ERR_INVALID_ARGUMENT) };
      log_error_fields (&f, "%s (see `hako --help`)", msg);
      return EXIT_HAKO;
    }
  struct log_fields f = fields (verb, NULL, ERR_INVALID_ARGUMENT);
  log_error_fields (&f, "%s: %s (see `hako %s --help`)", verb, msg, verb);
  return EXIT_HAKO;
}

int
cmd_help (const char *text)
{
  fputs (text, stdout);
  return 0;
}
