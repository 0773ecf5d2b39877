/* net: the sandbox's network namespace — for now, bringing up its loopback. */
#ifndef HAKO_RUNTIME_NET_H
#define HAKO_RUNTIME_NET_H

#include "lib/err.h"

/* Set IFF_UP on "lo" of the calling process's network namespace with one
 * ioctl: no `ip` helper process in the hot path. */
int net_loopback_up (hk_err *err);

#endif
