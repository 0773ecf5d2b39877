/* features: the runtime-spec features document (`hako features`). */
#include <ctype.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>

#include "lib/util.h"
#include "oci/json.h"
#include "oci/spec_common.h"
#include "oci/state.h"

/* Architecture names libseccomp may know; those this libseccomp resolves are
 * listed, as SCMP_ARCH_<NAME>. */
static const char *const seccomp_arch_names[] = {
  "x86",    "x86_64",    "x32",    "arm",      "aarch64",     "loongarch64", "m68k",  "mips",
  "mips64", "mips64n32", "mipsel", "mipsel64", "mipsel64n32", "ppc",         "ppc64", "ppc64le",
  "s390",   "s390x",     "parisc", "parisc64", "riscv64",     "sh",          "sheb",
};

static const char *const seccomp_actions[] = {
  "SCMP_ACT_ALLOW",
  "SCMP_ACT_ERRNO",
  "SCMP_ACT_KILL",
#ifdef SCMP_ACT_KILL_PROCESS
  "SCMP_ACT_KILL_PROCESS",
#endif
#ifdef SCMP_ACT_KILL_THREAD
  "SCMP_ACT_KILL_THREAD",
#endif
#ifdef SCMP_ACT_LOG
  "SCMP_ACT_LOG",
#endif
  /* SCMP_ACT_NOTIFY is left out: it needs a listener (listenerPath), which
   * hako does not implement, and create refuses it. */
  "SCMP_ACT_TRACE",
  "SCMP_ACT_TRAP",
};

static const char *const seccomp_operators[] = {
  "SCMP_CMP_EQ", "SCMP_CMP_GE",        "SCMP_CMP_GT", "SCMP_CMP_LE",
  "SCMP_CMP_LT", "SCMP_CMP_MASKED_EQ", "SCMP_CMP_NE",
};

static void
gen_list (struct json_out *o, const char *key, const char *const *v, size_t n)
{
  json_key (o, key);
  json_arr_open (o);
  for (size_t i = 0; i < n; i++)
    json_str (o, v[i]);
  json_arr_close (o);
}

static void
str_upper (char *s)
{
  for (; *s; s++)
    *s = toupper ((unsigned char)*s);
}

/* Every capability libcap can name ("CAP_CHOWN", ...); numbers it cannot
 * name are left out. */
static void
gen_capabilities (struct json_out *o)
{
  json_key (o, "capabilities");
  json_arr_open (o);
  for (cap_value_t c = 0; c < (cap_value_t)cap_max_bits (); c++)
    {
      char *name = cap_to_name (c);
      if (name == NULL)
        continue;
      if (strncmp (name, "cap_", 4) == 0)
        {
          cleanup_free char *upper = xstrdup (name);
          str_upper (upper);
          json_str (o, upper);
        }
      cap_free (name);
    }
  json_arr_close (o);
}

static void
gen_seccomp (struct json_out *o, const struct oci_features_host *host)
{
  json_key (o, "seccomp");
  json_obj_open (o);
  json_kbool (o, "enabled", true);
  gen_list (o, "actions", seccomp_actions, sizeof seccomp_actions / sizeof *seccomp_actions);
  gen_list (o, "operators", seccomp_operators, sizeof seccomp_operators / sizeof *seccomp_operators);
  json_key (o, "archs");
  json_arr_open (o);
  for (size_t i = 0; i < sizeof seccomp_arch_names / sizeof *seccomp_arch_names; i++)
    if (seccomp_arch_resolve_name (seccomp_arch_names[i]) != 0)
      {
        cleanup_free char *name = xasprintf ("SCMP_ARCH_%s", seccomp_arch_names[i]);
        str_upper (name);
        json_str (o, name);
      }
  json_arr_close (o);
  if (host)
    {
      json_kstrv (o, "knownFlags", host->seccomp_known_flags);
      json_kstrv (o, "supportedFlags", host->seccomp_supported_flags);
    }
  json_obj_close (o);
}

static void
gen_enabled (struct json_out *o, const char *key, bool enabled)
{
  json_key (o, key);
  json_obj_open (o);
  json_kbool (o, "enabled", enabled);
  json_obj_close (o);
}

static void
gen_linux (struct json_out *o, const struct oci_features_host *host)
{
  json_key (o, "linux");
  json_obj_open (o);
  json_key (o, "namespaces");
  json_arr_open (o);
  for (int t = 0; t < OCI_NS_COUNT; t++)
    json_str (o, oci_ns_name (t));
  json_arr_close (o);
  gen_capabilities (o);
  json_key (o, "cgroup");
  json_obj_open (o);
  json_kbool (o, "v1", true);
  json_kbool (o, "v2", true);
  json_kbool (o, "systemd", false);
  json_kbool (o, "systemdUser", false);
  json_obj_close (o);
  gen_seccomp (o, host);
  gen_enabled (o, "apparmor", false);
  gen_enabled (o, "selinux", false);
  gen_enabled (o, "intelRdt", false);
  /* The "idmap" and "ridmap" mount options and mounts' uidMappings:
   * idmapped binds (as root, in a user namespace: hako-spec(5)). */
  json_key (o, "mountExtensions");
  json_obj_open (o);
  gen_enabled (o, "idmap", true);
  json_obj_close (o);
  json_obj_close (o);
}

/* Landlock has no place in the runtime-spec's document: hako's annotations
 * say what it enforces (sandbox.landlock, hako-spec(5)) and on which ABI. */
static void
gen_landlock_annotations (struct json_out *o, const struct oci_features_host *host)
{
  char buf[32];
  json_kstr (o, "io.hako.landlock.enabled", "true");
  json_kstr (o, "io.hako.landlock.rules", "fs,tcp_bind,tcp_connect,scoped");
  snprintf (buf, sizeof buf, "%d", host->landlock_abi_used);
  json_kstr (o, "io.hako.landlock.abi.max", buf);
  snprintf (buf, sizeof buf, "%d", host->landlock_abi);
  json_kstr (o, "io.hako.landlock.abi", buf);
  /* The profiles' "scoped": true (required) needs this ABI. */
  json_kstr (o, "io.hako.landlock.abi.profiles", "6");
}

int
oci_features_json (const struct oci_features_host *host, char **out, size_t *len, hk_err *err)
{
  struct json_out o;
  json_out_init (&o, "  ");
  json_obj_open (&o);
  json_kstr (&o, "ociVersionMin", "1.0.0");
  json_kstr (&o, "ociVersionMax", "1.2.0");
  json_key (&o, "hooks");
  json_arr_open (&o);
  for (int k = 0; k < OCI_HOOK_COUNT; k++)
    json_str (&o, spec_hook_name (k));
  json_arr_close (&o);
  json_key (&o, "mountOptions");
  json_arr_open (&o);
  for (size_t i = 0; spec_mount_option_name (i); i++)
    json_str (&o, spec_mount_option_name (i));
  json_arr_close (&o);
  gen_linux (&o, host);
  json_key (&o, "annotations");
  json_obj_open (&o);
  json_kstr (&o, "io.hako.version", HAKO_VERSION);
  const struct scmp_version *v = seccomp_version ();
  if (v)
    {
      char buf[64];
      snprintf (buf, sizeof buf, "%u.%u.%u", v->major, v->minor, v->micro);
      json_kstr (&o, "io.github.seccomp.libseccomp.version", buf);
    }
  if (host)
    gen_landlock_annotations (&o, host);
  /* Whether `hako checkpoint` / `restore` can work here (criu check). */
  if (host && host->criu)
    {
      json_kstr (&o, "io.hako.criu", host->criu);
      json_kstr (&o, "io.hako.criu.version", host->criu_version);
      json_kstr (&o, "io.hako.criu.reason", host->criu_reason);
    }
  /* CDI devices `--device` can name here. */
  if (host && host->cdi_devices)
    json_kstr (&o, "io.hako.cdi.devices", host->cdi_devices);
  json_obj_close (&o);
  json_obj_close (&o);
  return json_out_finish (&o, out, len, err);
}
