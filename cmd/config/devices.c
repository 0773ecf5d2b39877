/* devices: --device NAME (create, run, spec) — CDI devices and host nodes —
 * and the CDI spec dirs the node config names. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cmd/cmd.h"
#include "cmd/config/internal.h"
#include "lib/log.h"
#include "lib/util.h"
#include "oci/cdi.h"
#include "runtime/node/admission.h"

int
cmd_device_option (char ***devices, const char *arg, const char *verb)
{
  if (arg[0] == '\0')
    return cmd_usage (verb, "--device: expects a CDI name (vendor.com/class=name) or a host path"), -1;
  size_t n = strv_len (*devices);
  *devices = xrealloc (*devices, (n + 2) * sizeof **devices);
  (*devices)[n] = xstrdup (arg);
  (*devices)[n + 1] = NULL;
  return 0;
}

int
cmd_cdi_dirs (hk_err *err)
{
  static bool done;
  struct oci_node node;
  bool present;
  if (done)
    return 0;
  if (admission_load_node (&node, &present, err) < 0)
    return -1;
  done = true;
  if (!present || node.n_cdi_spec_dirs == 0)
    return 0;
  char *dirs[OCI_NODE_MAX_CDI_DIRS + 1] = { 0 };
  for (size_t i = 0; i < node.n_cdi_spec_dirs; i++)
    dirs[i] = node.cdi_spec_dirs[i];
  cdi_set_node_dirs (dirs);
  return 0;
}

static bool
asks_for_devices (const struct oci_spec *spec, char *const *devices)
{
  if (devices || (spec && spec->sandbox.devices))
    return true;
  for (size_t i = 0; spec && i < spec->n_annotations; i++)
    if (strncmp (spec->annotations[i].key, "cdi.k8s.io/", 11) == 0)
      return true;
  return false;
}

/* The host id is one the sandbox's user namespace maps (or there is none). */
static bool
id_mapped (const struct oci_idmap *m, size_t n, uint32_t id)
{
  for (size_t i = 0; i < n; i++)
    if (id >= m[i].host_id && id - m[i].host_id < m[i].size)
      return true;
  return false;
}

/* A host node is bound as it is in a user namespace: owned by an id the
 * sandbox does not map (root, shown as nobody) and with no access for
 * others, it is there but no process of the sandbox can open it.  Said at
 * create, not at the first open's EACCES deep inside a program. */
static void
warn_unusable_nodes (const struct oci_spec *spec, char *const *devices)
{
  const struct oci_linux *l = &spec->linux;
  if (l->n_uid_mappings == 0)
    return;
  for (size_t i = 0; devices && devices[i]; i++)
    {
      struct stat st;
      if (devices[i][0] != '/' || stat (devices[i], &st) < 0)
        continue;
      /* Named on the command line and in sandbox.devices: once. */
      if (devices != spec->sandbox.devices && strv_contains (spec->sandbox.devices, devices[i]))
        continue;
      bool owner = id_mapped (l->uid_mappings, l->n_uid_mappings, st.st_uid) && (st.st_mode & 0600);
      bool group = id_mapped (l->gid_mappings, l->n_gid_mappings, st.st_gid) && (st.st_mode & 0060);
      if (owner || group || (st.st_mode & 0006))
        continue;
      log_warn ("--device %s: the host node is mode %04o, owned by uid %u and gid %u, which the sandbox's "
                "user namespace does not map: no process in the sandbox can open it; give others access on "
                "the host (chmod 0666 %s; /dev/fuse is 0666 on most distributions), or run without a "
                "user namespace",
                devices[i], (unsigned)(st.st_mode & 07777), (unsigned)st.st_uid, (unsigned)st.st_gid,
                devices[i]);
    }
}

int
cmd_apply_devices (struct config_src *cfg, char *const *devices, char *const *args, hk_err *err)
{
  char *json = NULL;
  size_t len;
  if (!asks_for_devices (cfg->spec, devices))
    return 0;
  if (cmd_cdi_dirs (err) < 0 || cdi_apply_config (cfg->json, cfg->len, devices, &json, &len, err) < 0)
    return err_prefix (err, "devices");
  if (json == NULL)
    return 0;
  if (cmd_replace_config (cfg, json, len, args, err) < 0)
    return err_prefix (err, "devices");
  warn_unusable_nodes (cfg->spec, devices);
  warn_unusable_nodes (cfg->spec, cfg->spec->sandbox.devices);
  return 0;
}

int
cmd_spec_devices (char *const *devices, char **json, hk_err *err)
{
  cleanup_free char *out = NULL, *applied = NULL;
  size_t len, alen;
  if (devices == NULL)
    return 0;
  /* Resolved now too, so that a wrong name fails here; the file keeps the
   * names, resolved again on the host that runs it. */
  if (cdi_config_add_requests (*json, strlen (*json), devices, &out, &len, err) < 0 || cmd_cdi_dirs (err) < 0
      || cdi_apply_config (out, len, NULL, &applied, &alen, err) < 0)
    return err_prefix (err, "--device");
  free (*json);
  *json = steal_pointer (&out);
  return 0;
}
