/* node: the node config (/etc/hako/node.json, hako-node(5)) — the memory pool
 * all sandboxes share, its overcommit factor, whether a limit is required,
 * the limits the profiles give a sandbox by default, and the default disk
 * limit. */
#ifndef HAKO_OCI_NODE_H
#define HAKO_OCI_NODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/err.h"

struct oci_node
{
  bool has_memory_pool;
  uint64_t memory_pool; /* bytes */
  double overcommit;    /* > 0; 1 when absent */
  bool require_memory_limit;
  /* The limits the profiles write (hako-spec(5)) in place of hako's own
   * defaults: 0 when not set, -1 for "no limit". */
  int64_t default_memory; /* bytes */
  int64_t default_pids;   /* tasks */
  uint64_t default_disk;  /* bytes; 0: none (sandbox.limits.disk of a spec without one) */
};

/* Parse node.json's text.  Errors name the file and the field:
 * "/etc/hako/node.json: .memory_pool: ...".  Unknown fields are refused (a
 * misspelt "memory_pol" must not silently turn admission off). */
int oci_node_parse (const char *text, size_t len, const char *file, struct oci_node *out, hk_err *err);

#endif
