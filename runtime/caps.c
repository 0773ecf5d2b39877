/* caps: the process's five capability sets (libcap), applied in the child. */
#include "runtime/caps.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/prctl.h>

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
        return err_set (err, EINVAL, ".process.capabilities.%s[%zu]: unknown capability \"%s\"",
                        set, i, names[i]);
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

static bool
set_has (char *const *names, cap_value_t want)
{
  for (size_t i = 0; names && names[i]; i++)
    {
      cap_value_t v;
      if (cap_lookup (names[i], &v) == 0 && v == want)
        return true;
    }
  return false;
}

int
caps_drop_bounding (const struct oci_caps *caps, hk_err *err)
{
  int last = cap_max_bits ();
  for (cap_value_t c = 0; c < last; c++)
    {
      if (set_has (caps->bounding, c))
        continue;
      if (prctl (PR_CAPBSET_DROP, c, 0, 0, 0) < 0 && errno != EINVAL)
        return err_sys (err, "drop capability %s from the bounding set", cap_to_name (c));
    }
  return 0;
}

static int
fill_flag (cap_t c, cap_flag_t flag, char *const *names)
{
  for (size_t i = 0; names && names[i]; i++)
    {
      cap_value_t v;
      if (cap_lookup (names[i], &v) == 0 && cap_set_flag (c, flag, 1, &v, CAP_SET) < 0)
        return -1;
    }
  return 0;
}

/* After an EPERM from cap_set_proc: the first capability asked for that
 * this process does not hold (a host may withhold some from everything it
 * runs, as a bounding set without CAP_SYS_RESOURCE does), or NULL. */
static const char *
cap_not_held (const struct oci_caps *caps)
{
  char *const *sets[] = { caps->permitted, caps->effective, caps->inheritable };
  cap_t cur = cap_get_proc ();
  const char *missing = NULL;
  for (size_t s = 0; cur && missing == NULL && s < 3; s++)
    for (size_t i = 0; sets[s] && sets[s][i] && missing == NULL; i++)
      {
        cap_value_t v;
        cap_flag_value_t have = CAP_SET;
        if (cap_lookup (sets[s][i], &v) == 0 && cap_get_flag (cur, v, CAP_PERMITTED, &have) == 0
            && have != CAP_SET)
          missing = sets[s][i];
      }
  cap_free (cur);
  return missing;
}

int
caps_apply (const struct oci_caps *caps, hk_err *err)
{
  cap_t c = cap_init ();
  if (c == NULL)
    return err_sys (err, "cap_init");
  if (fill_flag (c, CAP_EFFECTIVE, caps->effective) < 0
      || fill_flag (c, CAP_PERMITTED, caps->permitted) < 0
      || fill_flag (c, CAP_INHERITABLE, caps->inheritable) < 0)
    {
      cap_free (c);
      return err_sys (err, "capability set");
    }
  int r = cap_set_proc (c);
  int e = errno;
  cap_free (c);
  errno = e;
  const char *missing = r < 0 && e == EPERM ? cap_not_held (caps) : NULL;
  if (missing)
    return err_set (err, EPERM,
                    "set capabilities: %s is not in hako's own permitted set (this host "
                    "withholds it), so the sandbox cannot have it",
                    missing);
  if (r < 0)
    return err_sys (err, "set capabilities");
  if (cap_reset_ambient () < 0 && errno != EINVAL)
    return err_sys (err, "reset ambient capabilities");
  for (size_t i = 0; caps->ambient && caps->ambient[i]; i++)
    {
      cap_value_t v;
      if (cap_lookup (caps->ambient[i], &v) < 0)
        continue;
      /* The kernel refuses an ambient cap that is not also permitted and
       * inheritable; runc ignores that case too. */
      if (cap_set_ambient (v, CAP_SET) < 0 && errno != EPERM)
        return err_sys (err, "raise ambient capability %s", caps->ambient[i]);
    }
  return 0;
}
