/* state: the sandbox state record (OCI state fields + hako's) and its JSON. */
#ifndef HAKO_OCI_STATE_H
#define HAKO_OCI_STATE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/err.h"
#include "oci/spec.h"

/* status as stored; the runtime refines it (a dead pid reads as stopped). */
enum oci_status
{
  OCI_STATUS_CREATING,
  OCI_STATUS_CREATED,
  OCI_STATUS_RUNNING,
  OCI_STATUS_STOPPED,
  OCI_STATUS_PAUSED
};

struct oci_state
{
  char *oci_version;
  char *id;
  enum oci_status status;
  pid_t pid;               /* 0 when none */
  uint64_t pid_start_time; /* /proc/PID/stat field 22: pid + start time = identity */
  char *bundle;            /* absolute; may be NULL (host profile) */
  struct oci_kv *annotations;
  size_t n_annotations;
  char *created;   /* RFC 3339 UTC */
  char *started;   /* RFC 3339 UTC, when started */
  bool has_exit;   /* exit_status and reason are known */
  int exit_status; /* the process's status: code, or 128+N for signal N */
  int signal;      /* the signal that killed it, 0 if none */
  char *reason;    /* "exited", "signaled", "timeout", "oom" */
  /* With has_exit: the processes the OOM killer took in the sandbox's
   * memory cgroup while it ran ("oomKills"); unknown without a counter. */
  bool has_oom_kills;
  uint64_t oom_kills;
  /* With has_exit: what the process and every process it reaped used
   * (wait4's rusage: "userCpuUs", "systemCpuUs", and "peakRssBytes", the
   * largest one process's peak resident set); unknown without a monitor. */
  bool has_usage;
  uint64_t user_cpu_us, system_cpu_us, peak_rss_bytes;
  char *rootfs;    /* absolute path of the root (bundle rootfs or state dir mount) */
  char *workdir;   /* host path of the persistent work dir, or NULL */
  pid_t proxy_pid; /* allowlist network: the proxy's pid, 0 when none runs */
  /* sandbox.limits.timeout: when its deadline falls now (RFC 3339 UTC), for
   * `hako state` and `list` (sbx_state fills it, from <state>/deadline);
   * NULL when it has none or is stopped.  Never stored in state.json. */
  char *deadline;
  /* `hako hibernate` stopped it (status stays OCI's "stopped"); a start
   * writes a new state without it. */
  bool hibernated;
  /* hako stopped it (`hako stop`, hibernate), or it is the not yet released
   * process of a start of such a sandbox: `start` may run it again.  A
   * process that ended by itself leaves it false, and start then refuses,
   * as the runtime-spec says of a stopped container.  Cleared once a start
   * releases the new process. */
  bool restartable;
};

const char *oci_status_name (enum oci_status s);
int oci_status_from_name (const char *name); /* -1 if unknown */

/* The OCI state JSON (`hako state`), pretty when asked. */
int oci_state_to_json (const struct oci_state *st, bool pretty, char **out, size_t *len, hk_err *err);
int oci_state_parse (const char *json, size_t len, struct oci_state **out, hk_err *err);
void oci_state_free (struct oci_state *st);

/* What `hako features` adds from the runtime and this kernel (oci/ cannot
 * ask them itself).  NULL lists are written as absent. */
struct oci_features_host
{
  int landlock_abi;                     /* this kernel's ABI, 0 none */
  int landlock_abi_used;                /* the highest ABI whose rights hako uses */
  char *const *seccomp_known_flags;     /* the linux.seccomp.flags hako recognises */
  char *const *seccomp_supported_flags; /* ... and this kernel and libseccomp support */
  /* `criu check` (checkpoint/restore): NULL when not probed. */
  const char *criu;         /* "true" or "false" */
  const char *criu_version; /* may be NULL */
  const char *criu_reason;  /* why not, when "false" */
  /* CDI devices found (oci/cdi.c), comma-separated; NULL: not probed. */
  const char *cdi_devices;
};

/* `hako features` JSON; host may be NULL (a build-time document only). */
int oci_features_json (const struct oci_features_host *host, char **out, size_t *len, hk_err *err);

#endif
