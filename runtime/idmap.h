/* idmap: a user namespace's uid/gid mappings seen from the host — which host
 * id a sandbox id is, and whether the sandbox can reach a host path at all. */
#ifndef HAKO_RUNTIME_IDMAP_H
#define HAKO_RUNTIME_IDMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/err.h"
#include "oci/spec.h"

/* The host id that sandbox id maps to; false when it is not mapped. */
bool idmap_to_host (const struct oci_idmap *m, size_t n, uint32_t id, uint32_t *host);

/* Whether host id is mapped into the namespace (it has a sandbox id). */
bool idmap_has_host (const struct oci_idmap *m, size_t n, uint32_t host);

/* In a user namespace the sandbox's root is an unprivileged host id: each
 * directory on the way to path must be searchable by it, or the sandbox's
 * setup fails deep inside with a bare EACCES.  Checked up front so the error
 * names the directory and the id.  No-op without a user namespace. */
int idmap_check_reachable (const struct oci_spec *spec, const char *path, hk_err *err);

#endif
