/* consent: the node's consent to what a pod's annotations widen — the
 * org.hako.* annotations that would give a pod more than the node gives it
 * without them need node.json's annotations.allow (hako-node(5)). */
#ifndef HAKO_RUNTIME_CONSENT_H
#define HAKO_RUNTIME_CONSENT_H

#include "lib/err.h"
#include "oci/node.h"
#include "oci/spec.h"

/* Refuse (EPERM, naming the annotation, its value and the node setting)
 * each org.hako.* annotation of spec that widens and that node (NULL: no
 * node config) does not list: org.hako.network "host" over the config's
 * own network namespace; an org.hako.allow entry naming a loopback,
 * link-local, private or reserved address or range (net_class); an
 * org.hako.disk of -1 or above the node's default disk limit (its
 * default_disk, else HAKO_DISK_DEFAULT).  Everything else an
 * annotation sets only narrows (a netns of its own, an allow-list, Landlock,
 * a timeout, an output cap), and unknown names are refused by the parser.
 * spec is the config as parsed, before sbx_validate rewrites its
 * namespaces. */
int consent_check (const struct oci_spec *spec, const struct oci_node *node, hk_err *err);

/* consent_check with the node config admission_load_node reads. */
int consent_check_node (const struct oci_spec *spec, hk_err *err);

#endif
