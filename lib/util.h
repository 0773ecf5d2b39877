/* util: memory, cleanup attributes, whole-file I/O, directory helpers, small parsers. */
#ifndef HAKO_LIB_UTIL_H
#define HAKO_LIB_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/err.h"

void cleanup_freep (void *p);
void cleanup_closep (int *fd);
#define cleanup_free __attribute__ ((cleanup (cleanup_freep)))
#define cleanup_close __attribute__ ((cleanup (cleanup_closep)))

/* Allocation failure is not recoverable in a short-lived CLI: abort loudly. */
/* Nonzero while a child runs in hako's own memory (exec's command until its
 * execve: runtime/exec/exec_enter.c, clone_running).  The x* allocators below
 * abort while it is set, naming the cause: code in the sandbox may SIGKILL
 * that child at any instruction, and a kill inside malloc would leave
 * hako's heap half-updated behind it (exec.bats checks the guard). */
extern volatile int hk_no_alloc;
void *xmalloc (size_t n);
void *xcalloc (size_t n, size_t size);
void *xrealloc (void *p, size_t n);
char *xstrdup (const char *s);
char *xstrndup (const char *s, size_t n);
char *xasprintf (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));

/* Take ownership of *p and leave NULL behind (for returning cleanup_free values). */
#define steal_pointer(pp)                                                                                    \
  ({                                                                                                         \
    __typeof__ (*(pp)) _v = *(pp);                                                                           \
    *(pp) = NULL;                                                                                            \
    _v;                                                                                                      \
  })
#define steal_fd(fdp)                                                                                        \
  ({                                                                                                         \
    int _f = *(fdp);                                                                                         \
    *(fdp) = -1;                                                                                             \
    _f;                                                                                                      \
  })

bool str_has_prefix (const char *s, const char *prefix);
/* path is on a filesystem of this type (statfs f_type, e.g. PROC_SUPER_MAGIC). */
bool fs_has_magic (const char *path, long magic);
/* path made absolute against the current directory (caller frees). */
char *path_absolute (const char *path);
/* PATH's components with "." dropped and each ".." taking the one before it,
 * lexically, joined by '/' without a leading one ("" for the top).  A ".."
 * above the top is dropped (as the kernel does at /) and sets *above. */
char *path_lexical (const char *path, bool *above);
/* PATH has a ".." component. */
bool path_has_dotdot (const char *path);
/* PATH names DIR ("/dev", "dev/" and "//dev" all name /dev), or, with
 * under, a path below it too.  Lexical: no "." or ".." handling. */
bool path_within (const char *path, const char *dir, bool under);
bool str_has_suffix (const char *s, const char *suffix);
/* s made safe to print on a terminal, in place, byte for byte: each byte of
 * a control character — C0 (but those in keep), DEL, C1 (U+0080..U+009F,
 * whose CSI begins an escape sequence on xterm and VTE as ESC [ does) — and
 * each byte that is not valid UTF-8 (a lone 0x9b is CSI to an 8-bit
 * terminal) becomes '?'.  For text a sandbox chose: its names, its users'. */
void text_sanitize (char *s, const char *keep);

/* Test hook for the crash tests: true when HAKO_TEST_STALL names POINT, after
 * creating DIR/stalled, so the test knows the process is at POINT (to kill
 * it there, or to send it a signal). */
bool test_stall_reached (const char *point, const char *dir);
/* test_stall_reached, then wait there for good. */
void test_stall_forever (const char *point, const char *dir);

/* FNV-1a, for names and cache keys (not for anything an attacker may
 * choose to collide): 32 bits over a string, 64 bits over bytes from H
 * (FNV1A64_BASIS to start). */
uint32_t fnv1a32 (const char *s);
uint64_t fnv1a64 (uint64_t h, const void *data, size_t n);
#define FNV1A64_BASIS 0xcbf29ce484222325ULL

/* Read a whole file (at most max bytes; more is an error).  *out is
 * NUL-terminated; *len (if not NULL) excludes the NUL. */
int file_read_all (const char *path, size_t max, char **out, size_t *len, hk_err *err);
int fd_read_all (int fd, size_t max, char **out, size_t *len, hk_err *err);
/* Write all of buf, retrying on EINTR and short writes. */
int fd_write_all (int fd, const void *buf, size_t len);
/* Close every fd from first up except those in keep (any order; negative
 * entries ignored; keep is sorted in place): what a process must not take
 * into a sandbox or through an exec. */
void fd_close_all_but (unsigned int first, int *keep, size_t n);
/* A helper that outlives its caller and serves a sandbox (the egress proxy,
 * a port's forwarder): no signal blocked, its own session, no parent-death
 * signal, stdio on /dev/null, only the fds in keep (from 3), and its open
 * files' limit raised to the hard one (each connection costs several). */
void fd_detach_helper (int *keep, size_t n);
/* Where a non-blocking connect on fd stands once its poll woke: 0
 * connected, EINPROGRESS not yet (woken by something else), else the
 * connect's errno. */
int fd_connect_result (int fd);
/* Write path through a temporary file in the same directory, then rename: a
 * reader, or a hako killed half-way, sees the old contents or the new ones,
 * never half.  No fsync: this is for the state tree, which lives on tmpfs
 * (/run) and need not survive a power loss; it costs ~1 ms a call on disk. */
int file_write_atomic (const char *path, const char *data, size_t len, mode_t mode, hk_err *err);
/* --pid-file: PID in decimal, written atomically (a reader never sees half
 * of it); a relative PATH is taken against the current directory. */
int pid_file_write (const char *path, pid_t pid, hk_err *err);
/* Create path (it must not exist) and write data: for files written once
 * into a directory nobody reads before they are complete. */
int file_write_new (const char *path, const char *data, size_t len, mode_t mode, hk_err *err);
/* mkdir -p with mode for the created components. */
int mkdir_p (const char *path, mode_t mode, hk_err *err);
/* rm -rf that never crosses a mount point (so a stale bind mount's target is left
 * alone, not emptied) and never follows symlinks.  A missing path is success. */
int rm_rf (const char *path, hk_err *err);
/* rm_rf of name in dirfd, no symlink followed, no mount point crossed. */
int rm_rf_in (int dirfd, const char *name, hk_err *err);

/* "500ms", "30s", "5m", "1h", "2" (seconds).  Returns -1 on bad input. */
int parse_duration_ms (const char *s, uint64_t *ms);
/* Decimal, with an optional k/m/g (binary) suffix. */
int parse_size (const char *s, uint64_t *bytes);

/* Monotonic milliseconds. */
uint64_t now_ms (void);
/* The time now as RFC 3339 UTC with nanoseconds ("2026-11-29T12:00:00.000000000Z"). */
char *time_rfc3339_now (void);

#endif
