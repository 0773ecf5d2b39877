/* validate: the checks a spec passes before anything of a sandbox is built
 * (sbx_validate), and the network namespace its network mode decides.  The
 * lifecycle's create and exec's plan both run it on the same config, so an
 * exec sees the namespaces its sandbox was built with. */
#include "runtime/build/validate.h"

#include <errno.h>
#include <linux/capability.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "lib/util.h"
#include "runtime/build/mntns.h"
#include "runtime/confine/caps.h"
#include "runtime/confine/process.h"
#include "runtime/proxy/netpolicy.h"

static void
ns_remove (struct oci_spec *spec, enum oci_ns_type t)
{
  size_t j = 0;
  for (size_t i = 0; i < spec->linux.n_namespaces; i++)
    {
      if (spec->linux.namespaces[i].type == t)
        free (spec->linux.namespaces[i].path);
      else
        spec->linux.namespaces[j++] = spec->linux.namespaces[i];
    }
  spec->linux.n_namespaces = j;
}

static void
ns_add (struct oci_spec *spec, enum oci_ns_type t)
{
  if (oci_spec_ns (spec, t))
    return;
  spec->linux.namespaces
      = xrealloc (spec->linux.namespaces, (spec->linux.n_namespaces + 1) * sizeof *spec->linux.namespaces);
  spec->linux.namespaces[spec->linux.n_namespaces++] = (struct oci_namespace){ .type = t };
}

/* sandbox.network.mode decides the network namespace, whatever linux.namespaces says. */
static int
apply_network_mode (struct oci_spec *spec, hk_err *err)
{
  switch (spec->sandbox.net_mode)
    {
    case HAKO_NET_UNSET: return 0;
    case HAKO_NET_NONE:
      ns_remove (spec, OCI_NS_NETWORK);
      ns_add (spec, OCI_NS_NETWORK);
      return 0;
    case HAKO_NET_HOST: ns_remove (spec, OCI_NS_NETWORK); return 0;
    case HAKO_NET_ALLOWLIST:
    case HAKO_NET_DENYLIST:
      /* A pod's container shares the pod's netns, its proxy included. */
      if (spec->sandbox.net_join)
        {
          const struct oci_namespace *ns = oci_spec_ns (spec, OCI_NS_NETWORK);
          if (ns == NULL || ns->path == NULL)
            return err_set (err, EINVAL, "sandbox.network: no pod network namespace to join");
          if (netpolicy_check_joined (ns->path, err) < 0)
            return -1;
          return netpolicy_prepare (spec, err);
        }
      ns_remove (spec, OCI_NS_NETWORK);
      ns_add (spec, OCI_NS_NETWORK);
      return netpolicy_prepare (spec, err);
    default: return err_set (err, EINVAL, "sandbox.network.mode: unknown mode");
    }
}

/* Whether hako is in the host's user namespace, which maps every id onto
 * itself (uid 0 of another, rootless podman's, is no host root). */
static bool
in_initial_userns (void)
{
  unsigned in = 1, out = 1, count = 0;
  FILE *f = fopen ("/proc/self/uid_map", "re");
  if (f == NULL)
    return true; /* no procfs to say otherwise: the kernel will */
  int n = fscanf (f, "%u %u %u", &in, &out, &count);
  fclose (f);
  return n == 3 && in == 0 && out == 0 && count == 4294967295u;
}

/* Idmapped binds (hako-spec(5)): the parser checked their options and
 * mappings; what this host and this config must add is checked here. */
static int
check_idmapped_binds (const struct oci_spec *spec, hk_err *err)
{
  size_t i = 0;
  while (i < spec->n_mounts && !spec->mounts[i].idmap)
    i++;
  if (i == spec->n_mounts)
    return 0;
  const char *dst = spec->mounts[i].destination;
  /* The kernel lets only real root idmap a host filesystem. */
  if (geteuid () != 0 || !in_initial_userns ())
    return err_set (err, ENOTSUP,
                    ".mounts[%zu] (%s): an idmapped bind needs hako to run as root%s (rootless, the "
                    "caller's own files are already the sandbox root's: drop idmap)",
                    i, dst, geteuid () == 0 ? ", not as uid 0 of a user namespace" : "");
  /* Its tree is cloned in the sandbox's own mount namespace before the
   * sandbox is set up (mount_src.c), where the host's mount flags are
   * locked: one joined by path, or none, has no such moment. */
  const struct oci_namespace *mnt = oci_spec_ns (spec, OCI_NS_MOUNT);
  if (mnt == NULL || mnt->path)
    return err_set (err, ENOTSUP, ".mounts[%zu] (%s): an idmapped bind needs a mount namespace of its own%s",
                    i, dst, mnt ? " (not one joined by path)" : "");
  /* A file capability written through a read-write one is stored with the
   * host's root as its owner (v3, rootid 0), and honoured when anyone on
   * the host runs the file: a sandbox that can set one could leave a
   * privileged program behind.  seccomp cannot see an xattr's name, so the
   * capability is what is refused (set-id modes: seccomp.c's filter). */
  const struct oci_mount *rw = oci_spec_rw_idmap (spec);
  if (rw && spec->process->has_caps && caps_any_has (&spec->process->caps, CAP_SETFCAP))
    return err_set (err, EINVAL,
                    ".process.capabilities: CAP_SETFCAP with the read-write idmapped bind on %s: a file "
                    "capability set through it would be honoured on the host; drop CAP_SETFCAP "
                    "(podman: --cap-drop SETFCAP) or make the bind read-only",
                    rw->destination);
  return 0;
}

static int sbx_validate_spec (struct oci_spec *spec, hk_err *err);

int
sbx_validate (struct oci_spec *spec, hk_err *err)
{
  if (sbx_validate_spec (spec, err) == 0)
    return 0;
  /* What the host cannot do is unsupported (ENOTSUP, from errnum); any
   * other refusal here is the config's. */
  return err->errnum == EINVAL ? err_kind_default (err, ERR_INVALID_CONFIG) : -1;
}

static int
sbx_validate_spec (struct oci_spec *spec, hk_err *err)
{
  if (spec->process == NULL)
    return err_set (err, EINVAL, ".process: required to create a sandbox");
  if (spec->process->has_caps && caps_validate (&spec->process->caps, err) < 0)
    return -1;
  if (proc_apparmor_check (spec->process, err) < 0)
    return -1;
  if (apply_network_mode (spec, err) < 0)
    return -1;
  /* A joined mount namespace is checked before clone (mntns_before_clone). */
  if (mntns_validate (spec, err) < 0)
    return -1;
  const struct oci_namespace *user = oci_spec_ns (spec, OCI_NS_USER);
  if (user && user->path)
    return err_set (err, ENOTSUP,
                    ".linux.namespaces: joining an existing user namespace is not "
                    "supported yet");
  if (user && (spec->linux.n_uid_mappings == 0 || spec->linux.n_gid_mappings == 0))
    return err_set (err, EINVAL, ".linux.uidMappings: a user namespace needs uid and gid mappings");
  if (!user && (spec->linux.n_uid_mappings || spec->linux.n_gid_mappings))
    return err_set (err, EINVAL, ".linux.uidMappings: mappings given without a user namespace");
  if ((spec->hostname || spec->domainname) && !oci_spec_ns (spec, OCI_NS_UTS))
    return err_set (err, EINVAL, ".hostname: setting a hostname needs a uts namespace");
  if (proc_sysctls_check (spec, err) < 0 || check_idmapped_binds (spec, err) < 0)
    return -1;
  return 0;
}
