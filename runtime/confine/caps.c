/* caps: the process's five capability sets (names through libcap), applied
 * in the child with the raw calls, allocating nothing. */
#include "runtime/confine/caps.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lib/util.h"

static int
cap_lookup (const char *name, cap_value_t *out)
{
  /* libcap knows "cap_net_raw"; the spec writes "CAP_NET_RAW". */
  char lower[64];
  size_t n = strlen (name);
  if (n >= sizeof lower)
    return -1;
  for (size_t i = 0; i <= n; i++)
    lower[i] = (name[i] >= 'A' && name[i] <= 'Z') ? name[i] + 32 : name[i];
  return cap_from_name (lower, out);
}

static int
validate_set (char *const *names, const char *set, hk_err *err)
{
  for (size_t i = 0; names && names[i]; i++)
    {
      cap_value_t v;
      if (cap_lookup (names[i], &v) < 0)
        return err_set (err, EINVAL, ".process.capabilities.%s[%zu]: unknown capability \"%s\"", set, i,
                        names[i]);
    }
  return 0;
}

int
caps_validate (const struct oci_caps *caps, hk_err *err)
{
  if (validate_set (caps->bounding, "bounding", err) < 0
      || validate_set (caps->effective, "effective", err) < 0
      || validate_set (caps->inheritable, "inheritable", err) < 0
      || validate_set (caps->permitted, "permitted", err) < 0
      || validate_set (caps->ambient, "ambient", err) < 0)
    return -1;
  return 0;
}

bool
caps_any_has (const struct oci_caps *caps, int cap)
{
  char *const *sets[]
      = { caps->bounding, caps->effective, caps->inheritable, caps->permitted, caps->ambient };
  for (size_t s = 0; s < sizeof sets / sizeof *sets; s++)
    for (size_t i = 0; sets[s] && sets[s][i]; i++)
      {
        cap_value_t v;
        if (cap_lookup (sets[s][i], &v) == 0 && v == cap)
          return true;
      }
  return false;
}

/* The set of names as a mask, one look-up per name (not one per name and
 * capability); unknown names were refused by caps_validate. */
static uint64_t
set_mask (char *const *names)
{
  uint64_t m = 0;
  for (size_t i = 0; names && names[i]; i++)
    {
      cap_value_t v;
      if (cap_lookup (names[i], &v) == 0 && v >= 0 && v < 64)
        m |= UINT64_C (1) << v;
    }
  return m;
}

int
caps_drop_bounding (const struct oci_caps *caps, hk_err *err)
{
  int last = cap_max_bits ();
  uint64_t keep = set_mask (caps->bounding);
  for (cap_value_t c = 0; c < last && c < 64; c++)
    {
      if (keep & (UINT64_C (1) << c))
        continue;
      /* A number, not cap_to_name's string: nothing here allocates (exec's
       * command runs this in memory it shares with hako, see exec_enter.c). */
      if (prctl (PR_CAPBSET_DROP, c, 0, 0, 0) < 0 && errno != EINVAL)
        return err_sys (err, "drop capability %d from the bounding set", (int)c);
    }
  return 0;
}

/* After an EPERM from capset: the first capability asked for that this
 * process does not hold (a host may withhold some from everything it runs,
 * as a bounding set without CAP_SYS_RESOURCE does), or NULL.  capget, not
 * libcap's cap_get_proc: nothing here allocates (see caps_drop_bounding). */
static const char *
cap_not_held (const struct oci_caps *caps)
{
  char *const *sets[] = { caps->permitted, caps->effective, caps->inheritable };
  struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };
  struct __user_cap_data_struct data[2];
  if (syscall (SYS_capget, &hdr, data) < 0)
    return NULL;
  uint64_t have = data[0].permitted | ((uint64_t)data[1].permitted << 32);
  for (size_t s = 0; s < 3; s++)
    for (size_t i = 0; sets[s] && sets[s][i]; i++)
      {
        cap_value_t v;
        if (cap_lookup (sets[s][i], &v) == 0 && v >= 0 && v < 64 && !(have & (UINT64_C (1) << v)))
          return sets[s][i];
      }
  return NULL;
}

int
caps_apply (const struct oci_caps *caps, hk_err *err)
{
  /* capset itself rather than libcap's cap_t, which is malloc'ed: nothing
   * here allocates (see caps_drop_bounding). */
  uint64_t eff = set_mask (caps->effective), prm = set_mask (caps->permitted),
           inh = set_mask (caps->inheritable);
  struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };
  struct __user_cap_data_struct data[2] = {
    { .effective = (uint32_t)eff, .permitted = (uint32_t)prm, .inheritable = (uint32_t)inh },
    { .effective = (uint32_t)(eff >> 32),
      .permitted = (uint32_t)(prm >> 32),
      .inheritable = (uint32_t)(inh >> 32) },
  };
  if (syscall (SYS_capset, &hdr, data) < 0)
    {
      int e = errno;
      const char *missing = e == EPERM ? cap_not_held (caps) : NULL;
      if (missing)
        return err_set (err, EPERM,
                        "set capabilities: %s is not in hako's own permitted set (this host "
                        "withholds it), so the sandbox cannot have it",
                        missing);
      errno = e;
      return err_sys (err, "set capabilities");
    }
  /* One call (libcap's cap_reset_ambient asks about every capability
   * first); EINVAL: a kernel without ambient capabilities. */
  if (prctl (PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
    return err_sys (err, "reset ambient capabilities");
  /* The kernel refuses an ambient cap that is not also permitted and
   * inheritable; runc ignores that case too, and so it is not asked. */
  uint64_t raisable = prm & inh;
  for (size_t i = 0; caps->ambient && caps->ambient[i]; i++)
    {
      cap_value_t v;
      if (cap_lookup (caps->ambient[i], &v) < 0 || v < 0 || v >= 64 || !(raisable & (UINT64_C (1) << v)))
        continue;
      if (prctl (PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, (unsigned long)v, 0, 0) < 0 && errno != EPERM)
        return err_sys (err, "raise ambient capability %s", caps->ambient[i]);
    }
  return 0;
}
