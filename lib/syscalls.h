/* syscalls: thin wrappers for the syscalls glibc 2.36 does not wrap. */
#ifndef HAKO_LIB_SYSCALLS_H
#define HAKO_LIB_SYSCALLS_H

#include <linux/landlock.h>
#include <linux/mount.h>
#include <linux/openat2.h>
#include <linux/sched.h>
#include <signal.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

static inline long
sys_clone3 (struct clone_args *args)
{
  return syscall (SYS_clone3, args, sizeof *args);
}

static inline int
sys_pidfd_open (pid_t pid, unsigned int flags)
{
  return (int)syscall (SYS_pidfd_open, pid, flags);
}

static inline int
sys_pidfd_send_signal (int pidfd, int sig, siginfo_t *info, unsigned int flags)
{
  return (int)syscall (SYS_pidfd_send_signal, pidfd, sig, info, flags);
}

static inline int
sys_openat2 (int dirfd, const char *path, struct open_how *how)
{
  return (int)syscall (SYS_openat2, dirfd, path, how, sizeof *how);
}

static inline int
sys_close_range (unsigned int first, unsigned int last, unsigned int flags)
{
  return (int)syscall (SYS_close_range, first, last, flags);
}

static inline int
sys_pivot_root (const char *new_root, const char *put_old)
{
  return (int)syscall (SYS_pivot_root, new_root, put_old);
}

static inline int
sys_mount_setattr (int dirfd, const char *path, unsigned int flags, struct mount_attr *attr)
{
  return (int)syscall (SYS_mount_setattr, dirfd, path, flags, attr, sizeof *attr);
}

static inline int
sys_open_tree (int dirfd, const char *path, unsigned int flags)
{
  return (int)syscall (SYS_open_tree, dirfd, path, flags);
}

static inline int
sys_move_mount (int from_dirfd, const char *from_path, int to_dirfd, const char *to_path, unsigned int flags)
{
  return (int)syscall (SYS_move_mount, from_dirfd, from_path, to_dirfd, to_path, flags);
}

/* The new mount API: a filesystem configured one parameter at a time (so
 * no option string to escape) and mounted detached, to be attached later. */
static inline int
sys_fsopen (const char *fs_name, unsigned int flags)
{
  return (int)syscall (SYS_fsopen, fs_name, flags);
}

static inline int
sys_fsconfig (int fd, unsigned int cmd, const char *key, const void *value, int aux)
{
  return (int)syscall (SYS_fsconfig, fd, cmd, key, value, aux);
}

static inline int
sys_fsmount (int fd, unsigned int flags, unsigned int attr_flags)
{
  return (int)syscall (SYS_fsmount, fd, flags, attr_flags);
}

static inline int
sys_landlock_create_ruleset (const struct landlock_ruleset_attr *attr, size_t size, uint32_t flags)
{
  return (int)syscall (SYS_landlock_create_ruleset, attr, size, flags);
}

static inline int
sys_landlock_add_rule (int ruleset_fd, enum landlock_rule_type type, const void *attr, uint32_t flags)
{
  return (int)syscall (SYS_landlock_add_rule, ruleset_fd, type, attr, flags);
}

static inline int
sys_landlock_restrict_self (int ruleset_fd, uint32_t flags)
{
  return (int)syscall (SYS_landlock_restrict_self, ruleset_fd, flags);
}

static inline int
sys_seccomp (unsigned int op, unsigned int flags, void *args)
{
  return (int)syscall (SYS_seccomp, op, flags, args);
}

#endif
