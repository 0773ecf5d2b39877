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

/* A device admission counts (hako-node(5) "devices"): a CDI name and how
 * many sandboxes may hold it at once (exclusive: 1). */
#define OCI_NODE_MAX_DEVICES 32
#define OCI_NODE_MAX_NAME 128
#define OCI_NODE_MAX_CDI_DIRS 8
#define OCI_NODE_MAX_CONSENTS 32
#define OCI_NODE_MAX_PATH 256
struct oci_node_device
{
  char name[OCI_NODE_MAX_NAME];
  uint32_t slots;
  bool exclusive;
};

/* One value of an org.hako.* annotation a pod may set although it widens
 * what the node gives a pod (hako-node(5) "annotations"): the name in full
 * and the value as the pod must write it (for org.hako.allow, one entry). */
struct oci_node_consent
{
  char key[48];
  char value[256];
};

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
  /* sandbox.limits.disk of a spec without one: bytes, 0 for "none";
   * HAKO_DISK_DEFAULT unless has_default_disk. */
  bool has_default_disk;
  uint64_t default_disk;
  /* Devices with admission slots, and the CDI spec dirs (n 0: the defaults). */
  struct oci_node_device devices[OCI_NODE_MAX_DEVICES];
  size_t n_devices;
  char cdi_spec_dirs[OCI_NODE_MAX_CDI_DIRS][256];
  size_t n_cdi_spec_dirs;
  /* "annotations": {"allow": {NAME: [VALUE, ...]}}, flattened. */
  struct oci_node_consent consents[OCI_NODE_MAX_CONSENTS];
  size_t n_consents;
  /* "egress": the proxies' trust for origins they intercept (a PEM file of
   * CAs in place of the host's store; "" the host's), a hosts(5) file they
   * resolve with before DNS ("" none), and how long a client may take to
   * send a request head or finish a TLS handshake (0: 30 s). */
  char egress_trust[OCI_NODE_MAX_PATH];
  char egress_hosts[OCI_NODE_MAX_PATH];
  uint64_t egress_head_timeout_ms;
};

/* The disk limit a sandbox that sets none gets on this node (node may be
 * NULL: no node config): default_disk, else HAKO_DISK_DEFAULT; 0: none. */
uint64_t oci_node_default_disk (const struct oci_node *node);

/* Whether node.json's annotations.allow lists value for the annotation
 * name (node may be NULL: no node config, no consent). */
bool oci_node_consents (const struct oci_node *node, const char *name, const char *value);

/* Parse node.json's text.  Errors name the file and the field:
 * "/etc/hako/node.json: .memory_pool: ...".  Unknown fields are refused (a
 * misspelt "memory_pol" must not silently turn admission off). */
int oci_node_parse (const char *text, size_t len, const char *file, struct oci_node *out, hk_err *err);

#endif
