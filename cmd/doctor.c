/* doctor: what this host can enforce, why not, and what it means for each profile. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "cmd/config/config.h"
#include "lib/util.h"
#include "oci/cdi.h"
#include "runtime/build/disk.h"
#include "runtime/doctor/doctor.h"
#include "runtime/node/admission.h"
#include "runtime/save/checkpoint.h"

static const char doctor_help[]
    = "Usage: hako doctor [--format text|json]\n\n"
      "Probe what this host can enforce (user namespaces, Landlock, seccomp,\n"
      "cgroups, overlayfs and idmapped mounts in a user namespace, clone3, pidfd,\n"
      "openat2, mount_setattr, CAP_SYS_RESOURCE, CRIU, CDI devices, network namespaces)\n"
      "and say, for each profile, whether it works here or what is missing, and\n"
      "which network modes (none, host, allowlist) work with it for this user, or\n"
      "why not.  Exits 0 when the probes ran.\n"
      "  -f, --format F   text (default) or json (one object)\n"
      "      --json       the same as --format json\n";

static void
print_text (const struct doctor_report *r)
{
  printf ("hako %s on Linux %s, as uid %u\n\n", HAKO_VERSION, r->kernel, r->euid);
  for (size_t i = 0; i < r->n_items; i++)
    {
      const struct doctor_item *it = &r->items[i];
      printf ("%-38s %-3s  %s\n", it->label, it->available ? "yes" : "no", it->detail ? it->detail : "");
    }
  printf ("\nprofiles:\n");
  for (size_t i = 0; i < r->n_profiles; i++)
    {
      const struct doctor_profile *p = &r->profiles[i];
      if (p->works)
        printf ("  %-9s works here\n", p->name);
      else
        {
          printf ("  %-9s fails:", p->name);
          for (char **m = p->missing; m && *m; m++)
            printf ("%s %s", m == p->missing ? "" : ";", *m);
          printf ("\n");
        }
      for (char **n = p->notes; n && *n; n++)
        printf ("  %-9s   note: %s\n", "", *n);
      for (size_t j = 0; j < p->n_networks; j++)
        printf ("  %-9s   network %-9s %-3s  %s\n", "", p->networks[j].mode,
                p->networks[j].works ? "yes" : "no", p->networks[j].why ? p->networks[j].why : "");
    }
}

/* `checkpoint` / `restore`: does `criu check` pass, and if not, criu's own
 * words for why. */
static void
add_criu (const struct store *st, struct doctor_report *r, char **criu_failed)
{
  cleanup_free char *cache = st->data_root ? ckpt_cache_path (st) : NULL;
  struct criu_verdict v;
  criu_probe (cache, &v);
  *criu_failed = v.works ? NULL : xstrdup (v.reason ? v.reason : "criu check failed");
  char *detail = v.works ? xasprintf ("criu %s: criu check passed", v.version ? v.version : "")
                         : xasprintf ("%s%s%scriu check failed: %s", v.binary ? "criu " : "",
                                      v.binary && v.version ? v.version : "", v.binary ? ": " : "", v.reason);
  struct doctor_item *it = doctor_add_item (r, "criu", "CRIU checkpoint/restore", v.works, detail);
  doctor_field_str (it, "binary", v.binary);
  doctor_field_str (it, "version", v.version);
  doctor_field_str (it, "reason", v.reason);
  criu_verdict_free (&v);
}

/* sandbox.limits.disk: what bounds a sandbox's data dir under this data
 * root, and the limit a sandbox that sets none gets (node.json's
 * default_disk, else hako's own). */
static void
add_disk (const struct store *st, struct doctor_report *r)
{
  char *why = NULL;
  enum disk_kind k = st->data_root ? disk_mechanism (st->data_root, &why) : DISK_NONE;
  if (why == NULL)
    why = xstrdup ("no data root");
  struct oci_node node;
  bool present = false;
  hk_err err = { 0 };
  bool node_ok = admission_load_node (&node, &present, &err) == 0;
  bool from_node = node_ok && present && node.has_default_disk;
  uint64_t dflt = node_ok ? oci_node_default_disk (present ? &node : NULL) : 0;
  char *detail;
  if (!node_ok)
    detail = xasprintf ("%s; default limit unknown: %s", why, err.msg);
  else if (dflt == 0)
    detail = xasprintf ("%s; no default limit (node.json default_disk \"none\")", why);
  else
    detail
        = xasprintf ("%s; default limit %" PRIu64 " MiB (%s)%s", why, dflt >> 20,
                     from_node ? "node.json default_disk" : "hako's own; node.json default_disk sets another",
                     k == DISK_NONE && !from_node ? ", not applied here: sandboxes run unbounded" : "");
  free (why);
  struct doctor_item *it
      = doctor_add_item (r, "disk_limit", "disk limit (sandbox.limits.disk)", k != DISK_NONE, detail);
  doctor_field_str (it, "mechanism", disk_kind_name (k));
  cleanup_free char *not_btrfs = NULL;
  doctor_field_str (it, "filesystem", k == DISK_LOOP ? disk_fs_name (disk_loop_fs (&not_btrfs)) : NULL);
  doctor_field_str (it, "data_root", st->data_root);
  doctor_field_int (it, "default", (int64_t)dflt);
  doctor_field_str (it, "default_from", from_node ? "node.json" : "hako");
}

/* `hako fork`: a btrfs snapshot per child where the disk limit is a btrfs
 * image, else a copy; the children's processes start fresh, since copying
 * memory would need CRIU (criu_failed: why criu does not work here). */
static void
add_fork (const struct store *st, struct doctor_report *r, const char *criu_failed)
{
  cleanup_free char *why = NULL;
  cleanup_free char *not_btrfs = NULL;
  enum disk_kind k = st->data_root ? disk_mechanism (st->data_root, &why) : DISK_NONE;
  enum disk_fs fs = k == DISK_LOOP ? disk_loop_fs (&not_btrfs) : DISK_FS_NONE;
  bool snap = fs == DISK_FS_BTRFS;
  cleanup_free char *how
      = snap ? xstrdup (
            "each child is a btrfs snapshot of the parent's data dir (its disk limit's subvolume), in "
            "the parent's image: O(1) whatever the size")
             : xasprintf ("each child's writable state is copied, at a cost that grows with its size: %s",
                          k == DISK_LOOP    ? not_btrfs
                          : k == DISK_TMPFS ? "the data root is in memory (a tmpfs per sandbox)"
                                            : "no disk limit here, so no btrfs image");
  cleanup_free char *procs
      = criu_failed
            ? xasprintf ("processes start fresh in each child (copying them needs CRIU: %s)", criu_failed)
            : xstrdup ("processes start fresh in each child (hako does not copy them with CRIU yet)");
  char *detail = xasprintf ("%s; %s", how, procs); /* the report's now */
  struct doctor_item *it = doctor_add_item (r, "fork", "fork in O(1) (hako fork)", snap, detail);
  doctor_field_str (it, "mechanism", snap ? "snapshot" : "copy");
  doctor_field_str (it, "processes", "fresh");
  doctor_field_str (it, "criu", criu_failed ? criu_failed : "works");
}

/* CDI: the devices the spec dirs define, or why they cannot be read. */
static void
add_cdi (struct doctor_report *r)
{
  hk_err err = { 0 };
  struct cdi_registry reg;
  char **names = NULL;
  char *why;
  bool ok = cmd_cdi_dirs (&err) == 0 && cdi_load (NULL, &reg, &err) == 0;
  if (ok)
    {
      names = cdi_registry_names (&reg);
      size_t n = strv_len (names);
      why = xasprintf ("%zu device%s in %zu spec%s", n, n == 1 ? "" : "s", reg.n, reg.n == 1 ? "" : "s");
      for (size_t i = 0; i < n && i < 8; i++)
        {
          char *w = xasprintf ("%s%s %s", why, i ? "," : ":", names[i]);
          free (why);
          why = w;
        }
      if (n > 8)
        {
          char *w = xasprintf ("%s, ...", why);
          free (why);
          why = w;
        }
      cdi_registry_free (&reg);
    }
  else
    why = xstrdup (err.msg);
  struct doctor_item *it
      = doctor_add_item (r, "cdi", "CDI devices (--device)", ok && strv_len (names) > 0, why);
  doctor_field_strv (it, "spec_dirs", cdi_dirs ());
  doctor_field_strv (it, "devices", names);
  strv_free (names);
}

int
cmd_doctor (int argc, char **argv)
{
  static const struct option opts[] = {
    { "format", required_argument, NULL, 'f' },
    { "json", no_argument, NULL, 'J' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  const char *format = "text";
  int c;
  while ((c = getopt_long (argc, argv, "f:h", opts, NULL)) != -1)
    switch (c)
      {
      case 'f': format = optarg; break;
      case 'J': format = "json"; break;
      case 'h': return cmd_help (doctor_help);
      default: return cmd_bad_option ("doctor", argv, opts);
      }
  if (optind != argc)
    return cmd_usage ("doctor", "takes no arguments");
  if (strcmp (format, "text") != 0 && strcmp (format, "json") != 0)
    return cmd_usage ("doctor", "--format: \"%s\" is not text or json", format);
  hk_err err = { 0 };
  struct store st = { 0 };
  struct doctor_report r = { 0 };
  int rc = 0;
  /* The roots are only looked at (the state root's filesystem for
   * idmapped mounts, where it exists), never made: a diagnostic leaves
   * nothing behind, not even an ordinary user's /tmp/hako-UID. */
  cmd_store_paths (&st);
  bool probed = doctor_probe (st.root, &r, &err) == 0;
  if (probed)
    {
      cleanup_free char *criu_failed = NULL;
      add_criu (&st, &r, &criu_failed);
      add_disk (&st, &r);
      add_fork (&st, &r, criu_failed);
      add_cdi (&r);
    }
  if (!probed)
    rc = cmd_fail ("doctor", NULL, &err);
  else if (strcmp (format, "json") == 0)
    {
      cleanup_free char *json = NULL;
      if (doctor_report_json (&r, &json, &err) < 0)
        rc = cmd_fail ("doctor", NULL, &err);
      else
        printf ("%s\n", json);
    }
  else
    print_text (&r);
  doctor_report_free (&r);
  store_fini (&st);
  return rc;
}
