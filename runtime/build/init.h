/* init: hako's built-in pid 1 (init/hako-init.c, "sandbox": {"init": true}),
 * embedded at build time and executed from a sealed memfd. */
#ifndef HAKO_RUNTIME_INIT_H
#define HAKO_RUNTIME_INIT_H

#include "lib/err.h"
#include "oci/spec.h"

/* A sealed, close-on-exec memfd holding the init program. */
int init_memfd (hk_err *err);
/* Close every fd above 2 but the first preserve_fds, then execute the init
 * from memfd with p's environment; it runs path (argv p->args) as its child,
 * or nothing when p->args is empty.  Returns only on failure (*status 126). */
int init_exec (int memfd, const struct oci_process *p, const char *path, unsigned int preserve_fds,
               int *status, hk_err *err);

#endif
