/* kept: a kept process's record (`hako exec --detach`, runtime/exec/procs.h) and
 * its JSON, as `ps --detached --format json` and `wait --process --json`
 * print it. */
#ifndef HAKO_OCI_KEPT_H
#define HAKO_OCI_KEPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "lib/err.h"

enum oci_kept_state
{
  OCI_KEPT_RUNNING,
  OCI_KEPT_EXITED,
  OCI_KEPT_LOST /* its holder was killed: nobody saw its end (it died with it) */
};

struct oci_kept
{
  pid_t pid;      /* its id: the host pid */
  pid_t ns_pid;   /* its pid inside the sandbox's pid namespace (0: unknown) */
  uint64_t start; /* its start time (clock ticks since boot) */
  char **argv;
  bool tty;
  enum oci_kept_state state;
  uint64_t started_ms, ended_ms; /* wall clock, ms since the epoch (ended: 0 while running) */
  /* When it has exited: */
  int exit_code; /* 128+N for signal N */
  int signal;
  char reason[24]; /* exited, signaled, timeout, oom, sandbox_timeout, stopped, deleted */
  bool timed_out;
  bool truncated[2]; /* stdout, stderr passed its max_output */
  bool has_oom_kills;
  uint64_t oom_kills;
  bool has_usage;
  uint64_t user_us, system_us, peak_rss_kib;
};

void oci_kept_free (struct oci_kept *p);
void oci_kepts_free (struct oci_kept *p, size_t n);
const char *oci_kept_state_name (enum oci_kept_state s);

/* One object and a newline:
 *   {"pid":434,"ns_pid":2,"command":["sh","-c","..."],"tty":false,
 *    "state":"exited","started":"2026-12-07T14:44:04.073Z","ended":"...",
 *    "exit_code":3,"signal":null,"reason":"exited","timed_out":false,
 *    "stdout_truncated":false,"stderr_truncated":false,"oom_kills":0,
 *    "user_cpu_us":860,"system_cpu_us":1240,"peak_rss_bytes":2859008}
 * (ended, exit_code, reason... null while it runs); the list: an array of
 * them.  The command is valid JSON whatever bytes it holds (jsonstr). */
int oci_kept_write (const struct oci_kept *p, FILE *f, hk_err *err);
int oci_kept_list_write (const struct oci_kept *p, size_t n, FILE *f, hk_err *err);

#endif
