/* consent: the node's consent to what a pod's annotations widen.
 *
 * A pod author writes org.hako.* annotations (containerd's pod_annotations
 * and container_annotations pass them on, docs/kubernetes.md) but is not
 * the node's administrator: PodSecurity may forbid them hostNetwork, and
 * the proxy of an allow-list runs in the node's network namespace, where
 * 127.0.0.1 is the node's own services and 169.254.169.254 its cloud's
 * metadata.  So an annotation may only narrow what the runtime does
 * without it; what widens is refused unless node.json lists that name and
 * value (hako-node(5), "annotations"). */
#include "runtime/node/consent.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/netclass.h"
#include "runtime/node/admission.h"

#define CONSENT_HINT "; a pod may set it only where the node config (hako-node(5)) lists it: "

/* subject: what is refused ("annotation NAME=\"VALUE\""); the hint names
 * the node setting that would consent to value. */
static int
refuse (hk_err *err, const char *subject, const char *why, const char *name, const char *value)
{
  err_set (err, EPERM, "%s: %s" CONSENT_HINT "\"annotations\": {\"allow\": {\"%s\": [\"%s\"]}}", subject, why,
           name, value);
  return err_kind_default (err, ERR_INVALID_CONFIG);
}

static int
refuse_value (hk_err *err, const char *name, const char *value, const char *why)
{
  char subject[512];
  snprintf (subject, sizeof subject, "annotation %s=\"%s\"", name, value);
  return refuse (err, subject, why, name, value);
}

/* host drops the network namespace containerd made for the pod (and, on
 * the pause container, the whole pod's): the container would run in the
 * node's.  A config with no network namespace (a hostNetwork pod) is in
 * the node's already, so host widens nothing there. */
static int
check_network (const struct oci_spec *spec, const struct oci_node *node, hk_err *err)
{
  static const char name[] = "org.hako.network";
  struct hako_sandbox a;
  int r = oci_annotation_sandbox (spec, name, &a, err);
  if (r <= 0)
    return r;
  bool host = a.net_mode == HAKO_NET_HOST;
  oci_sandbox_free (&a);
  const char *value = oci_annotation_value (spec, name);
  if (!host || oci_spec_ns (spec, OCI_NS_NETWORK) == NULL || oci_node_consents (node, name, value))
    return 0;
  return refuse_value (
      err, name, value,
      "it puts the container in the node's network namespace, out of the one its pod was given");
}

/* An allow rule that names a loopback, link-local, private or reserved
 * address opens it from the proxy, in the node's network namespace: the
 * node's 127.0.0.1, its cloud's metadata service, its cluster.  A host name
 * is no way round: the proxy refuses a name that resolves to such an
 * address unless a rule names it (policy_address), and a metadata
 * service's name unless a rule names it exactly — which is a widening too.
 * Deny rules only narrow: org.hako.deny needs no consent. */
static int
check_allow (const struct oci_spec *spec, const struct oci_node *node, hk_err *err)
{
  static const char name[] = "org.hako.allow";
  struct hako_sandbox a;
  int r = oci_annotation_sandbox (spec, name, &a, err);
  if (r <= 0)
    return r;
  r = 0;
  for (size_t i = 0; r == 0 && i < a.allow_rules.n; i++)
    {
      const struct net_rule *e = &a.allow_rules.v[i];
      bool metadata = e->kind == NR_NAME && oci_net_is_metadata_name (e->name);
      if (!((e->kind == NR_NET && e->special) || metadata) || oci_node_consents (node, name, e->text))
        continue;
      char subject[512], why[256];
      snprintf (subject, sizeof subject, "annotation %s: entry \"%s\"", name, e->text);
      snprintf (why, sizeof why, "%s, which the proxy reaches from the node's network namespace",
                metadata ? "a cloud metadata service's name" : net_class_name (net_class (e->addr)));
      r = refuse (err, subject, why, name, e->text);
    }
  oci_sandbox_free (&a);
  return r;
}

/* -1, or more than the node's default disk limit (default_disk, else
 * HAKO_DISK_DEFAULT: a node without node.json has one too), lifts the limit
 * the node puts on a sandbox that sets none. */
static int
check_disk (const struct oci_spec *spec, const struct oci_node *node, hk_err *err)
{
  static const char name[] = "org.hako.disk";
  struct hako_sandbox a;
  int r = oci_annotation_sandbox (spec, name, &a, err);
  if (r <= 0)
    return r;
  int64_t disk = a.disk;
  oci_sandbox_free (&a);
  uint64_t dflt = oci_node_default_disk (node);
  const char *value = oci_annotation_value (spec, name);
  if (dflt == 0 || (disk != -1 && (uint64_t)disk <= dflt) || oci_node_consents (node, name, value))
    return 0;
  return refuse_value (err, name, value,
                       disk == -1 ? "it lifts the node's default_disk"
                                  : "it is more than the node's default_disk");
}

int
consent_check (const struct oci_spec *spec, const struct oci_node *node, hk_err *err)
{
  if (check_network (spec, node, err) < 0 || check_allow (spec, node, err) < 0
      || check_disk (spec, node, err) < 0)
    return err_kind_default (err, ERR_INVALID_CONFIG);
  return 0;
}

int
consent_check_node (const struct oci_spec *spec, hk_err *err)
{
  bool any = false;
  for (size_t i = 0; i < spec->n_annotations && !any; i++)
    any = strncmp (spec->annotations[i].key, "org.hako.", 9) == 0;
  if (!any)
    return 0;
  struct oci_node node;
  bool present;
  if (admission_load_node (&node, &present, err) < 0)
    return -1;
  return consent_check (spec, present ? &node : NULL, err);
}
