/* strv: NULL-terminated string vectors, the namespace type table, and what
 * the runtime looks up in a parsed spec (a namespace, a writable idmapped bind). */
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>

#include "lib/util.h"
#include "oci/spec.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

size_t
strv_len (char *const *v)
{
  size_t n = 0;
  while (v && v[n])
    n++;
  return n;
}

void
strv_free (char **v)
{
  for (size_t i = 0; v && v[i]; i++)
    free (v[i]);
  free (v);
}

char **
strv_dup (char *const *v)
{
  if (v == NULL)
    return NULL;
  size_t n = strv_len (v);
  char **copy = xcalloc (n + 1, sizeof *copy);
  for (size_t i = 0; i < n; i++)
    copy[i] = xstrdup (v[i]);
  return copy;
}

/* Indexed by enum oci_ns_type: the spec's name and the clone flag. */
static const struct
{
  const char *name;
  unsigned long flag;
} ns_table[OCI_NS_COUNT] = {
  [OCI_NS_PID] = { "pid", CLONE_NEWPID },          [OCI_NS_NETWORK] = { "network", CLONE_NEWNET },
  [OCI_NS_MOUNT] = { "mount", CLONE_NEWNS },       [OCI_NS_IPC] = { "ipc", CLONE_NEWIPC },
  [OCI_NS_UTS] = { "uts", CLONE_NEWUTS },          [OCI_NS_USER] = { "user", CLONE_NEWUSER },
  [OCI_NS_CGROUP] = { "cgroup", CLONE_NEWCGROUP }, [OCI_NS_TIME] = { "time", CLONE_NEWTIME },
};

const char *
oci_ns_name (enum oci_ns_type t)
{
  return (unsigned)t < OCI_NS_COUNT ? ns_table[t].name : NULL;
}

int
oci_ns_from_name (const char *name)
{
  for (int t = 0; name && t < OCI_NS_COUNT; t++)
    if (strcmp (ns_table[t].name, name) == 0)
      return t;
  return -1;
}

unsigned long
oci_ns_clone_flag (enum oci_ns_type t)
{
  return (unsigned)t < OCI_NS_COUNT ? ns_table[t].flag : 0;
}

const struct oci_namespace *
oci_spec_ns (const struct oci_spec *spec, enum oci_ns_type t)
{
  for (size_t i = 0; i < spec->linux.n_namespaces; i++)
    if (spec->linux.namespaces[i].type == t)
      return &spec->linux.namespaces[i];
  return NULL;
}

const struct oci_mount *
oci_spec_rw_idmap (const struct oci_spec *spec)
{
  for (size_t i = 0; i < spec->n_mounts; i++)
    if (spec->mounts[i].idmap && !(spec->mounts[i].flags & MS_RDONLY))
      return &spec->mounts[i];
  return NULL;
}

bool
strv_contains (char *const *v, const char *s)
{
  for (size_t i = 0; v && v[i]; i++)
    if (strcmp (v[i], s) == 0)
      return true;
  return false;
}

const char *
strv_env (char *const *env, const char *name)
{
  size_t n = strlen (name);
  for (size_t i = 0; env && env[i]; i++)
    if (strncmp (env[i], name, n) == 0 && env[i][n] == '=')
      return env[i] + n + 1;
  return NULL;
}
