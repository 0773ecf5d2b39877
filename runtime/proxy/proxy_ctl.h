/* proxy_ctl: a running proxy's policy changed live, over a unix socket in
 * the sandbox's state dir (proxy_ctl.c says why a socket). */
#ifndef HAKO_RUNTIME_PROXY_CTL_H
#define HAKO_RUNTIME_PROXY_CTL_H

#include <stddef.h>

#include "lib/err.h"
#include "runtime/state/store.h"

/* hako, before forking the proxy: the listening socket (non-blocking,
 * close-on-exec), <state>/proxy.sock, mode 0600. */
int proxy_ctl_listen (const struct store_entry *e, hk_err *err);
/* hako update: send text (oci_egress_update_text) and wait for the proxy's
 * answer; *cut: the connections it cut. */
int proxy_ctl_update (const struct store_entry *e, const char *text, size_t len, size_t *cut, hk_err *err);

#endif
