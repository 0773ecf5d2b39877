/* init: hako's built-in pid 1 (init/hako-init.c, "sandbox": {"init": true}),
 * embedded at build time and executed from a sealed memfd.
 *
 * CVE-2019-5736: a sandbox's pid 1 that were the hako binary (or any host
 * file) would give root inside a handle on it through /proc/1/exe, to
 * overwrite the runtime every later create and exec runs.  The init is a
 * separate program, copied into a memfd sealed against every change, so
 * /proc/1/exe is an anonymous read-only file that leads nowhere. */
#include "runtime/build/init.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "lib/syscalls.h"
#include "lib/util.h"

#ifndef MFD_EXEC
#define MFD_EXEC 0x0010U
#endif

/* init_blob.c: the bytes of init/hako-init, placed there by the assembler. */
extern const unsigned char hako_init_bin[], hako_init_end[];

int
init_memfd (hk_err *err)
{
  /* MFD_EXEC (Linux 6.3) keeps the memfd executable where vm.memfd_noexec
   * would otherwise make it noexec; older kernels refuse the flag. */
  int fd = memfd_create ("hako-init", MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_EXEC);
  if (fd < 0 && errno == EINVAL)
    fd = memfd_create ("hako-init", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0)
    return err_sys (err, "init: memfd_create");
  size_t len = (size_t)(hako_init_end - hako_init_bin);
  if (fd_write_all (fd, hako_init_bin, len) < 0
      || fcntl (fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0)
    {
      int e = errno;
      close (fd);
      return err_code (err, e, "init: seal the memfd");
    }
  return fd;
}

int
init_exec (int memfd, const struct oci_process *p, const char *path, unsigned int preserve_fds, int *status,
           hk_err *err)
{
  size_t n = strv_len (p->args);
  char **argv = xcalloc (n + 3, sizeof *argv);
  argv[0] = (char *)"hako-init";
  if (n)
    {
      argv[1] = (char *)path;
      for (size_t i = 0; i < n; i++)
        argv[2 + i] = p->args[i];
    }
  /* No host fd survives into the sandbox (CVE-2024-21626) but the caller's
   * preserved ones; the memfd is close-on-exec. */
  unsigned int first = 3 + preserve_fds;
  if ((unsigned int)memfd > first)
    sys_close_range (first, (unsigned int)memfd - 1, 0);
  sys_close_range ((unsigned int)memfd + 1, ~0U, 0);
  syscall (SYS_execveat, memfd, "", argv, p->env ? p->env : (char *[]){ NULL }, AT_EMPTY_PATH);
  *status = 126;
  free (argv);
  return err_sys (err, "exec hako's init");
}
