/* spec: the OCI runtime config plus hako's `sandbox` object, as plain structs.
 * Parsed once (oci_spec_parse); the runtime only walks these, never JSON. */
#ifndef HAKO_OCI_SPEC_H
#define HAKO_OCI_SPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/err.h"
#include "oci/netrule.h"

/* -std=gnu11 predefines the old `linux` macro (use __linux__ instead); it
 * would clobber the spec's `linux` member. */
#undef linux

/* A NULL-terminated array of strings; NULL means "absent". */
typedef char **strv;
size_t strv_len (char *const *v);
void strv_free (char **v);
char **strv_dup (char *const *v);
bool strv_contains (char *const *v, const char *s);
/* The value of NAME in a K=V vector (an environment), or NULL.  Allocates
 * nothing (exec's command calls it in memory it shares with hako). */
const char *strv_env (char *const *env, const char *name);

struct oci_kv
{
  char *key;
  char *value;
};

struct oci_idmap
{
  uint32_t container_id;
  uint32_t host_id;
  uint32_t size;
};

struct oci_mount
{
  char *destination;
  char *type; /* NULL: bind when options has bind/rbind */
  char *source;
  char **options; /* raw option strings, e.g. "nosuid", "ro", "rbind", "mode=755" */
  /* Decoded from options by the parser: */
  unsigned long flags;       /* MS_* to set (MS_RDONLY, MS_NOSUID, MS_BIND, MS_REC, ...) */
  unsigned long clear_flags; /* MS_* explicitly cleared ("rw", "suid", "dev", "exec", ...) */
  unsigned long propagation; /* MS_PRIVATE|MS_SLAVE|MS_SHARED|MS_UNBINDABLE (+MS_REC), 0 none */
  char *data;                /* the options that are not flags, joined with ',' (fs data) */
  bool is_bind;
  /* An idmapped bind (runtime-spec 1.1): the "idmap" or "ridmap" option, or
   * uidMappings/gidMappings given (as runc takes them).  Its files are shown
   * through a user namespace of these mappings (n 0: the sandbox's own,
   * linux.uidMappings), so that what id N owns on disk, id N owns inside.
   * idmap_recursive ("ridmap"): every mount of an rbind's tree, not only the
   * top one.  The parser makes such a bind nosuid and nodev. */
  bool idmap, idmap_recursive;
  struct oci_idmap *uid_mappings, *gid_mappings;
  size_t n_uid_mappings, n_gid_mappings;
};

struct oci_rlimit
{
  int resource; /* RLIMIT_* */
  char *type;   /* "RLIMIT_NOFILE" as written */
  uint64_t soft;
  uint64_t hard;
};

struct oci_user
{
  uid_t uid;
  gid_t gid;
  bool has_umask;
  mode_t umask;
  gid_t *additional_gids;
  size_t n_additional_gids;
  char *username; /* Windows-only in OCI; kept for completeness */
};

struct oci_caps
{
  /* Each set: NULL-terminated names ("CAP_NET_RAW"); NULL when absent. */
  char **bounding, **effective, **inheritable, **permitted, **ambient;
};

struct oci_process
{
  bool terminal;
  unsigned int console_height, console_width;
  struct oci_user user;
  char **args; /* non-empty */
  char **env;  /* "K=V" */
  char *cwd;   /* absolute */
  struct oci_caps caps;
  bool has_caps;
  struct oci_rlimit *rlimits;
  size_t n_rlimits;
  bool no_new_privileges;
  char *apparmor_profile;
  char *selinux_label;
  bool has_oom_score_adj;
  int oom_score_adj;
};

enum oci_ns_type
{
  OCI_NS_PID,
  OCI_NS_NETWORK,
  OCI_NS_MOUNT,
  OCI_NS_IPC,
  OCI_NS_UTS,
  OCI_NS_USER,
  OCI_NS_CGROUP,
  OCI_NS_TIME,
  OCI_NS_COUNT
};

struct oci_namespace
{
  enum oci_ns_type type;
  char *path; /* NULL: create a new one; else join this one */
};

struct oci_device
{
  char type; /* 'c', 'b', 'u', 'p' */
  char *path;
  int64_t major, minor;
  bool has_file_mode;
  mode_t file_mode;
  bool has_uid, has_gid;
  uid_t uid;
  gid_t gid;
  /* hako's hostPath: the host node a user namespace binds (NULL: path), as
   * a CDI deviceNode's hostPath (oci/cdi.c). */
  char *host_path;
};

/* linux.resources.devices[] (cgroup device rules) */
struct oci_device_rule
{
  bool allow;
  char type;            /* 'a', 'c', 'b'; 0 when absent (= 'a') */
  int64_t major, minor; /* -1 = wildcard */
  char *access;         /* "rwm" */
};

/* linux.resources.blockIO's per-device lists: throttle{Read,Write}{Bps,IOPS}Device[]
 * (value: the rate) and weightDevice[] (value: the weight). */
enum oci_blkio_kind
{
  OCI_BLKIO_READ_BPS,
  OCI_BLKIO_WRITE_BPS,
  OCI_BLKIO_READ_IOPS,
  OCI_BLKIO_WRITE_IOPS,
  OCI_BLKIO_WEIGHT,
};

struct oci_blkio_device
{
  enum oci_blkio_kind kind;
  int64_t major, minor;
  uint64_t value;
};

/* Every limit has a has_ flag: absent means "leave the kernel's default".
 * The one-value knobs are rows of oci/knobs.c's table too (a new one: a
 * member here and a row there). */
struct oci_resources
{
  bool has_memory_limit, has_memory_reservation, has_memory_swap, has_memory_kernel, has_memory_kernel_tcp;
  int64_t memory_limit, memory_reservation, memory_swap, memory_kernel, memory_kernel_tcp;
  bool has_memory_swappiness;
  uint64_t memory_swappiness;
  bool disable_oom_killer;
  bool has_cpu_shares, has_cpu_quota, has_cpu_period, has_cpu_realtime_runtime, has_cpu_realtime_period;
  uint64_t cpu_shares, cpu_period, cpu_realtime_period;
  int64_t cpu_quota, cpu_realtime_runtime;
  char *cpu_cpus, *cpu_mems;
  bool has_pids_limit;
  int64_t pids_limit;
  bool has_blkio_weight;
  uint16_t blkio_weight;
  struct oci_blkio_device *blkio_devices; /* blockIO.throttle*Device and weightDevice, in order */
  size_t n_blkio_devices;
  struct oci_device_rule *devices;
  size_t n_devices;
  struct oci_kv *hugepage_limits; /* key: page size ("2MB"), value: limit as decimal */
  size_t n_hugepage_limits;
  struct oci_kv *unified; /* cgroup v2 file -> value */
  size_t n_unified;
};

struct oci_seccomp_arg
{
  unsigned int index;
  uint64_t value, value_two;
  char *op; /* "SCMP_CMP_EQ", ... */
};

struct oci_seccomp_rule
{
  char **names;
  char *action; /* "SCMP_ACT_ERRNO", ... */
  bool has_errno_ret;
  unsigned int errno_ret;
  struct oci_seccomp_arg *args;
  size_t n_args;
};

struct oci_seccomp
{
  char *default_action;
  bool has_default_errno_ret;
  unsigned int default_errno_ret;
  char **architectures;
  char **flags;
  char *listener_path;
  char *listener_metadata;
  struct oci_seccomp_rule *syscalls;
  size_t n_syscalls;
};

struct oci_linux
{
  struct oci_namespace *namespaces;
  size_t n_namespaces;
  struct oci_idmap *uid_mappings, *gid_mappings;
  size_t n_uid_mappings, n_gid_mappings;
  struct oci_kv *sysctl;
  size_t n_sysctl;
  struct oci_device *devices;
  size_t n_devices;
  bool has_resources;
  struct oci_resources resources;
  char *cgroups_path;
  unsigned long rootfs_propagation; /* MS_* (with MS_REC); 0 when absent */
  char **masked_paths;
  char **readonly_paths;
  char *mount_label;
  struct oci_seccomp *seccomp; /* NULL when absent */
};

struct oci_hook
{
  char *path;
  char **args;
  char **env;
  bool has_timeout;
  int timeout; /* seconds, > 0 */
};

enum oci_hook_kind
{
  OCI_HOOK_PRESTART,
  OCI_HOOK_CREATE_RUNTIME,
  OCI_HOOK_CREATE_CONTAINER,
  OCI_HOOK_START_CONTAINER,
  OCI_HOOK_POSTSTART,
  OCI_HOOK_POSTSTOP,
  OCI_HOOK_COUNT
};

struct oci_hooks
{
  struct oci_hook *list[OCI_HOOK_COUNT];
  size_t n[OCI_HOOK_COUNT];
};

/* "prestart", "createRuntime", ...: the kind's key in .hooks. */
const char *spec_hook_name (enum oci_hook_kind k);

/* hako's `sandbox` object. */
enum hako_net_mode
{
  HAKO_NET_UNSET = 0, /* follow linux.namespaces */
  HAKO_NET_NONE,
  HAKO_NET_HOST,
  HAKO_NET_ALLOWLIST, /* through the proxy: what the allow rules name, less the deny rules */
  HAKO_NET_DENYLIST   /* through the proxy: every public destination but the deny rules' */
};

/* A secret the proxy adds to requests (sandbox.network.secrets): the
 * sandbox's environment has NAME set to the placeholder; the proxy puts the
 * value (read from `from` at create, kept in the state dir) in its place in
 * requests to host:port over TLS it verified, and nowhere else. */
struct hako_secret
{
  char *name;        /* the environment variable inside */
  char *from;        /* "env:VAR" (hako's environment) or "file:PATH" */
  char *host;        /* a host name (normalized) or a literal address, no brackets */
  uint16_t port;     /* 443 unless given */
  char *placeholder; /* what NAME holds inside; NULL until create writes one */
  bool query;        /* also in the request's query string, not only its headers */
};

enum hako_root_kind
{
  HAKO_ROOT_BUNDLE = 0, /* root.path, relative to the bundle */
  HAKO_ROOT_TMPFS       /* an empty tmpfs: the host profile builds its root from mounts */
};

struct hako_landlock
{
  bool present;
  char **read, **write, **exec;
  uint16_t *tcp_connect, *tcp_bind;
  size_t n_tcp_connect, n_tcp_bind;
  bool scoped;
  bool required; /* default true: no silent downgrade */
  bool derive;   /* default false: also grant what the mounts allow (runtime/confine/landlock.c) */
  /* default false: a read/write/exec path that is not there gets no rule
   * instead of failing create (learned profiles: a file the run made). */
  bool missing_ok;
};

#define HAKO_DISK_MIN (16ull << 20)
/* The disk limit of a sandbox that keeps a data dir when neither its spec
 * nor node.json's default_disk says (hako-spec(5), DISK LIMIT). */
#define HAKO_DISK_DEFAULT (10ull << 30)

struct hako_sandbox
{
  bool present;
  enum hako_root_kind root;
  enum hako_net_mode net_mode;
  /* The rules as written (sandbox.network.allow and .deny) and parsed. */
  char **net_allow, **net_deny;
  struct net_rules allow_rules, deny_rules;
  struct hako_secret *secrets;
  size_t n_secrets;
  char *profile; /* "host", "default", or NULL */
  struct hako_landlock landlock;
  bool has_timeout;
  uint64_t timeout_ms;
  bool has_max_output;
  uint64_t max_output;
  /* limits.disk: the bytes the sandbox may keep under the data root (its
   * writable layer and work dir together); -1 ("none") asks for no limit,
   * even over the node's default_disk.  At least HAKO_DISK_MIN when set. */
  bool has_disk;
  int64_t disk;
  char *image;
  /* workdir: a directory under the data root that survives stop/start,
   * mounted at workdir_path (default /work) when workdir_persist is set. */
  bool workdir_persist;
  char *workdir_path;
  /* idmap: the rootfs is mounted idmapped to the sandbox's user namespace,
   * so the image's on-disk owners (root) are its owners inside (root). */
  bool idmap;
  /* pid 1 is hako's minimal init: it reaps orphans, starts process.args (if
   * any) as its child and exits with its status, else waits for SIGTERM. */
  bool init;
  /* devices: CDI names (vendor.com/class=name) and host nodes asked for;
   * devices_applied: the requests whose edits are in this config already
   * (oci/cdi.c); cdi_devices: the qualified names they resolved to, what
   * admission counts and `hako list` shows. */
  char **devices, **devices_applied, **cdi_devices;
  /* Set by the annotations (oci/annotations.c): a pod's container in
   * allowlist mode that joins the pod's network namespace, whose proxy is
   * the pod's sandbox container's, instead of one of its own. */
  bool net_join;
  /* seccomp.allow (a learned profile's, hako-learn(7)): a second filter
   * that denies (EPERM) every syscall not named, installed with
   * linux.seccomp's, so that it only narrows it: the kernel takes the most
   * restrictive answer of the two, and linux.seccomp's argument rules
   * (socket families, clone flags, clone3) still hold for what it names.
   * NULL when absent; an empty list denies everything. */
  char **seccomp_allow;
};

struct oci_spec
{
  char *oci_version;
  char *root_path; /* as written; relative to the bundle unless absolute */
  bool root_readonly;
  struct oci_mount *mounts;
  size_t n_mounts;
  struct oci_process *process; /* NULL when absent; its args may be empty only with sandbox.init */
  char *hostname;
  char *domainname;
  struct oci_linux linux;
  struct oci_hooks hooks;
  struct oci_kv *annotations;
  size_t n_annotations;
  struct hako_sandbox sandbox;
};

/* Parse config.json text.  Errors name the JSON path:
 * ".process.args: must be a non-empty array".  Unknown fields are ignored. */
int oci_spec_parse (const char *json, size_t len, struct oci_spec **out, hk_err *err);
int oci_spec_load (const char *path, struct oci_spec **out, hk_err *err);
/* --secret NAME=env:VARIABLE@HOST[:PORT][,query] or NAME=file:/PATH@...,
 * checked: its parts as written. */
struct oci_secret_arg
{
  char *name, *from, *host;
  bool query;
};
int oci_secret_arg_parse (const char *arg, struct oci_secret_arg *out, hk_err *err);
void oci_secret_arg_free (struct oci_secret_arg *a);
/* "hako-secret-" and 32 random hex digits. */
char *oci_secret_placeholder (void);
/* What `--network`, `--allow`, `--deny` and `--secret` change. */
struct oci_net_edit
{
  const char *mode;                     /* sandbox.network.mode, when not NULL */
  char *const *allow;                   /* appended to .allow */
  char *const *deny;                    /* appended to .deny */
  const struct oci_secret_arg *secrets; /* added to .secrets (replacing one of the same name) */
  size_t n_secrets;
  char *const *revoke;    /* rules removed from .allow and .deny, as written (one not there: an error) */
  bool keep_placeholders; /* a secret replaced keeps its placeholder (`update`: its processes hold it) */
};
/* The config text with e written into sandbox.network, and every secret
 * without a placeholder given a fresh one. */
int oci_spec_set_network (const char *json, size_t len, const struct oci_net_edit *e, char **out,
                          size_t *out_len, hk_err *err);
/* A secret's source ("env:VAR" or "file:/PATH") checked; the error names it. */
int oci_secret_check_from (const char *from, hk_err *err);
/* A secret's host, "HOST" or "HOST:PORT" (one name or address): *host the
 * normalized name or the address without brackets, *port 443 unless given. */
int oci_secret_parse_host (const char *text, char **host, uint16_t *port, hk_err *err);
/* The config text with sandbox.limits.disk set to size as written ("64m",
 * "-1"): `--disk`.  The caller parses the result, which checks the size. */
int oci_spec_set_disk (const char *json, size_t len, const char *size, char **out, size_t *out_len,
                       hk_err *err);
void oci_spec_free (struct oci_spec *spec);

/* The org.hako.* annotation name of s as written, or NULL. */
const char *oci_annotation_value (const struct oci_spec *s, const char *name);
/* What that annotation alone sets, parsed as the sandbox object is (an
 * org.hako.allow with its org.hako.network): 1 with *out filled (free it
 * with oci_sandbox_free), 0 when s has no such annotation, -1 when it is
 * bad (err names it). */
int oci_annotation_sandbox (const struct oci_spec *s, const char *name, struct hako_sandbox *out,
                            hk_err *err);
void oci_sandbox_free (struct hako_sandbox *sb);

/* run/create/spec's flags (--memory, -e, -v, --tmpfs, -w, -u, --hostname,
 * --timeout, --read-only, ...): what they set, already checked. */
struct oci_override_mount
{
  char *destination, *type, *source;
  char **options;
};

struct oci_overrides
{
  bool has_memory, has_memory_swap, has_cpus, has_pids;
  int64_t memory;      /* linux.resources.memory.limit (-1: none) */
  int64_t memory_swap; /* linux.resources.memory.swap: memory + swap (-1: none) */
  int64_t cpu_quota;   /* linux.resources.cpu.quota and .period */
  uint64_t cpu_period;
  int64_t pids;                      /* linux.resources.pids.limit (-1: none) */
  char **env;                        /* K=V replacing K in process.env or added; each K once */
  struct oci_override_mount *mounts; /* appended to mounts, replacing one at the same destination */
  size_t n_mounts;
  const char *cwd; /* process.cwd */
  bool has_user;   /* process.user.uid and .gid (additionalGids dropped) */
  uint32_t uid, gid;
  const char *hostname;
  const char *timeout; /* sandbox.limits.timeout, as given */
  bool read_only;      /* root.readonly */
  bool terminal;       /* process.terminal */
  char **labels;       /* K=V: annotations OCI_LABEL_PREFIX K (replacing one of the same K) */
};
/* A label (run/create --label K=V) is the annotation of this prefix and K:
 * metadata only, which hako never interprets (org.hako.* it does). */
#define OCI_LABEL_PREFIX "io.hako.label."
/* The config text with ov written into it (the rest as it was). */
int oci_spec_override (const char *json, size_t len, const struct oci_overrides *ov, char **out,
                       size_t *out_len, hk_err *err);

/* A process object on its own (runc exec --process FILE), the fields and
 * errors of .process; args may be absent or empty (the command line's). */
int oci_process_parse (const char *json, size_t len, struct oci_process **out, hk_err *err);
void oci_process_free (struct oci_process *p);

const char *oci_ns_name (enum oci_ns_type t); /* "pid", "network", ... */
int oci_ns_from_name (const char *name);      /* -1 if unknown */
/* The CLONE_NEW* flag of a namespace type. */
unsigned long oci_ns_clone_flag (enum oci_ns_type t);
/* The spec's namespace entry of that type, or NULL. */
const struct oci_namespace *oci_spec_ns (const struct oci_spec *spec, enum oci_ns_type t);
/* The first read-write idmapped bind of the spec's mounts, or NULL: what
 * the sandbox writes there is owned on the host by the files' own owners
 * (root's, for a directory of root's), so it is held to no set-id files. */
const struct oci_mount *oci_spec_rw_idmap (const struct oci_spec *spec);

/* Profiles for `hako spec` and `run --profile`: complete config.json text. */
enum oci_profile
{
  OCI_PROFILE_DEFAULT, /* runc-like bundle: rootfs dir, all namespaces */
  OCI_PROFILE_HOST,    /* no image: host /usr,/lib*,/bin,/sbin,/etc read-only, tmpfs /tmp, /work */
  OCI_PROFILE_RUNC     /* runc spec's default config exactly (root only, no command) */
};
int oci_profile_from_name (const char *name); /* -1 if unknown */

/* The limits the profiles write into linux.resources (hako-spec(5)): each
 * above 0, or -1 for "no limit", which is only ever asked for (a node
 * default of -1). */
struct oci_profile_limits
{
  int64_t memory; /* bytes */
  int64_t pids;   /* tasks */
};
#define OCI_PROFILE_PIDS 4096
#define OCI_PROFILE_MEMORY_MAX (INT64_C (4) << 30)
struct oci_node;
/* The profiles' limits on a machine with ram bytes of memory: the node's
 * defaults (node may be NULL), else 4096 tasks and the smaller of 4 GiB or
 * half of ram (rounded down to a MiB). */
void oci_profile_limits (const struct oci_node *node, uint64_t ram, struct oci_profile_limits *out);

/* args: the process args (NULL: none, and the profile's sandbox.init runs
 * alone).  rootless adds a
 * user namespace mapping the caller's uid/gid to 0 and drops what needs real root
 * (linux.resources too: an unprivileged user cannot write cgroup limits).
 * lim: the limits to write (NULL: none, linux.resources stays absent). */
int oci_profile_generate (enum oci_profile profile, bool rootless, char *const *args,
                          const struct oci_profile_limits *lim, char **json_out, hk_err *err);

#endif
