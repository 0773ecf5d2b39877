/* landlock: the sandbox.landlock rules (and those derived from the mounts),
 * checked against the kernel's ABI in the parent and enforced by the child.
 *
 * The parent turns the spec into a plan — path rules, port rules, handled
 * rights — and refuses it, or records what it drops, when the kernel's ABI
 * is too old.  The child, after pivot_root, opens each path and fills a
 * ruleset; after the wait for start it restricts itself, and everything it
 * execs stays in that Landlock domain.  What the rights mean and what derive
 * grants is documented in hako-spec(5), section "sandbox.landlock". */
#include "runtime/confine/landlock.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/syscalls.h"
#include "lib/util.h"
#include "runtime/proxy/netpolicy.h"

/* LANDLOCK_RULE_NET_PORT and its attribute (ABI 4), missing from Debian 12's
 * header; the kernel UAPI's values. */
#define HK_LANDLOCK_RULE_NET_PORT 2
struct hk_landlock_net_port_attr
{
  uint64_t allowed_access;
  uint64_t port;
};

/* struct landlock_ruleset_attr as of ABI 6.  The kernel takes a shorter one
 * from older callers, so the size passed follows the ABI (see build). */
struct hk_landlock_ruleset_attr
{
  uint64_t handled_access_fs;
  uint64_t handled_access_net; /* ABI 4 */
  uint64_t scoped;             /* ABI 6 */
};

/* The rights hako speaks in.  "exec" includes reading the file: the kernel
 * opens a program for read and execute both (open_exec), so execute alone
 * could run nothing.  "write" includes read: a directory one may fill but
 * not list helps nobody.  Creating device nodes (MAKE_CHAR, MAKE_BLOCK) is
 * handled and never granted. */
#define LL_READ (LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR)
#define LL_EXEC (LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_READ_FILE)
#define LL_WRITE                                                                                             \
  (LL_READ | LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE  \
   | LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG | LANDLOCK_ACCESS_FS_MAKE_SOCK                \
   | LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_SYM | LANDLOCK_ACCESS_FS_REFER                   \
   | LANDLOCK_ACCESS_FS_TRUNCATE | LANDLOCK_ACCESS_FS_IOCTL_DEV)
/* A plain device node: read and write, no ioctl. */
#define LL_DEV (LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_TRUNCATE)
/* The rights the kernel accepts on a rule for a file that is not a directory. */
#define LL_FILE_RIGHTS                                                                                       \
  (LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_READ_FILE                 \
   | LANDLOCK_ACCESS_FS_TRUNCATE | LANDLOCK_ACCESS_FS_IOCTL_DEV)

struct ll_path_rule
{
  char *path;         /* absolute, cleaned: no "//", no trailing "/" */
  uint64_t access;    /* LL_* bits, before masking by what the ABI handles */
  bool optional;      /* derived: a path that is not there is skipped */
  const char *origin; /* for messages: "sandbox.landlock.write" */
};

struct ll_port_rule
{
  uint16_t port;
  uint64_t access;
};

struct landlock_plan
{
  int abi;
  uint64_t handled_fs, handled_net, scoped;
  struct ll_path_rule *paths;
  size_t n_paths;
  struct ll_port_rule *ports;
  size_t n_ports;
  char *skipped; /* NULL: nothing let go */
};

/* ---- paths ---------------------------------------------------------------- */

/* "/a//b/" -> "/a/b"; "/" stays "/"; "tmp" (a mount destination relative to
 * the root) -> "/tmp". */
static char *
path_clean (const char *path)
{
  char *out = xmalloc (strlen (path) + 2), *o = out;
  *o++ = '/';
  for (const char *p = path; *p; p++)
    if (*p != '/' || o[-1] != '/')
      *o++ = *p;
  if (o > out + 1 && o[-1] == '/')
    o--;
  *o = '\0';
  return out;
}

/* Add ACCESS on PATH; a second rule on the same path merges into the first. */
static void
plan_add_path (struct landlock_plan *p, const char *path, uint64_t access, bool optional, const char *origin)
{
  cleanup_free char *clean = path_clean (path);
  for (size_t i = 0; i < p->n_paths; i++)
    if (strcmp (p->paths[i].path, clean) == 0)
      {
        p->paths[i].access |= access;
        if (!optional && p->paths[i].optional)
          {
            p->paths[i].optional = false;
            p->paths[i].origin = origin;
          }
        return;
      }
  p->paths = xrealloc (p->paths, (p->n_paths + 1) * sizeof *p->paths);
  p->paths[p->n_paths++] = (struct ll_path_rule){
    .path = steal_pointer (&clean), .access = access, .optional = optional, .origin = origin
  };
}

static void
plan_add_port (struct landlock_plan *p, uint16_t port, uint64_t access)
{
  for (size_t i = 0; i < p->n_ports; i++)
    if (p->ports[i].port == port)
      {
        p->ports[i].access |= access;
        return;
      }
  p->ports = xrealloc (p->ports, (p->n_ports + 1) * sizeof *p->ports);
  p->ports[p->n_ports++] = (struct ll_port_rule){ .port = port, .access = access };
}

/* ---- derive: rights from the mounts ------------------------------------------ */

/* The device nodes hako puts in a tmpfs /dev, and the sandbox's own devpts.
 * Granted whenever the filesystem is restricted: without /dev/null and
 * friends ordinary programs fail.  No ioctl on /dev/tty: with "terminal":
 * false it is the controlling terminal hako was started from, and TIOCSTI on
 * it would type commands into the host's shell. */
static const struct
{
  const char *path;
  uint64_t access;
} std_devices[] = {
  { "/dev/null", LL_DEV },
  { "/dev/zero", LL_DEV },
  { "/dev/full", LL_DEV },
  { "/dev/random", LL_DEV },
  { "/dev/urandom", LL_DEV },
  { "/dev/tty", LL_DEV },
  { "/dev/pts", LL_READ | LL_DEV | LANDLOCK_ACCESS_FS_IOCTL_DEV },
  { "/dev/ptmx", LL_DEV | LANDLOCK_ACCESS_FS_IOCTL_DEV },
};

static bool
type_is (const struct oci_mount *m, const char *type)
{
  return m->type && !m->is_bind && strcmp (m->type, type) == 0;
}

/* What a mount gets: what its flags let through.  proc and cgroup are
 * read-only views (magic links in /proc resolve to the file they name, which
 * its own rule covers); a tmpfs /dev is only listed, its nodes get
 * std_devices and linux.devices. */
static uint64_t
mount_access (const struct oci_mount *m)
{
  if (type_is (m, "proc") || type_is (m, "cgroup"))
    return LL_READ;
  cleanup_free char *dest = path_clean (m->destination);
  if (strcmp (dest, "/dev") == 0 && type_is (m, "tmpfs"))
    return LL_READ;
  uint64_t a = (m->flags & MS_RDONLY) ? LL_READ : LL_WRITE;
  if (!(m->flags & MS_NOEXEC))
    a |= LL_EXEC;
  return a;
}

/* A mount hidden by a later one on the same path or above it gets nothing:
 * a rule there would land on whatever the later mount shows. */
static bool
mount_covered (const struct oci_spec *spec, size_t i)
{
  cleanup_free char *dest = path_clean (spec->mounts[i].destination);
  for (size_t j = i + 1; j < spec->n_mounts; j++)
    {
      if (spec->mounts[j].destination == NULL)
        continue;
      cleanup_free char *later = path_clean (spec->mounts[j].destination);
      if (path_within (dest, later, true))
        return true;
    }
  return false;
}

static void
derive_rules (struct landlock_plan *p, const struct oci_spec *spec)
{
  static const char origin[] = "sandbox.landlock.derive";
  plan_add_path (p, "/", spec->root_readonly ? LL_READ | LL_EXEC : LL_WRITE | LL_EXEC, true, origin);
  for (size_t i = 0; i < spec->n_mounts; i++)
    {
      const struct oci_mount *m = &spec->mounts[i];
      if (m->destination == NULL || m->destination[0] == '\0' || mount_covered (spec, i))
        continue;
      plan_add_path (p, m->destination, mount_access (m), true, origin);
    }
  /* The persistent work dir: read-write, as mount_workdir binds it. */
  if (spec->sandbox.workdir_persist)
    plan_add_path (p, spec->sandbox.workdir_path ? spec->sandbox.workdir_path : "/work", LL_WRITE | LL_EXEC,
                   true, origin);
  /* The spec asked for these devices, so the sandbox may use them. */
  for (size_t i = 0; i < spec->linux.n_devices; i++)
    if (spec->linux.devices[i].path && spec->linux.devices[i].path[0])
      plan_add_path (p, spec->linux.devices[i].path, LL_DEV | LANDLOCK_ACCESS_FS_IOCTL_DEV, true, origin);
}

static void
fs_rules (struct landlock_plan *p, const struct oci_spec *spec)
{
  const struct hako_landlock *l = &spec->sandbox.landlock;
  /* missing_ok: a path that is not there gets no rule, so no access. */
  for (char **s = l->read; s && *s; s++)
    plan_add_path (p, *s, LL_READ, l->missing_ok, "sandbox.landlock.read");
  for (char **s = l->write; s && *s; s++)
    plan_add_path (p, *s, LL_WRITE, l->missing_ok, "sandbox.landlock.write");
  for (char **s = l->exec; s && *s; s++)
    plan_add_path (p, *s, LL_EXEC, l->missing_ok, "sandbox.landlock.exec");
  if (l->derive)
    derive_rules (p, spec);
  for (size_t i = 0; i < sizeof std_devices / sizeof *std_devices; i++)
    plan_add_path (p, std_devices[i].path, std_devices[i].access, true, "sandbox.landlock");
  /* With a terminal of its own (a new session whose controlling terminal is
   * the sandbox's pty), /dev/tty is that pty: job control needs its ioctls. */
  if (spec->process && spec->process->terminal)
    plan_add_path (p, "/dev/tty", LL_DEV | LANDLOCK_ACCESS_FS_IOCTL_DEV, true, "sandbox.landlock");
}

/* ---- prepare: the plan, checked against the ABI ------------------------------- */

/* Every filesystem right this ABI knows, handled (denied unless granted). */
static uint64_t
fs_handled_for (int abi)
{
  uint64_t m = (LANDLOCK_ACCESS_FS_MAKE_SYM << 1) - 1; /* ABI 1: bits 0 to 12 */
  if (abi >= 2)
    m |= LANDLOCK_ACCESS_FS_REFER;
  if (abi >= 3)
    m |= LANDLOCK_ACCESS_FS_TRUNCATE;
  if (abi >= 5)
    m |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
  return m;
}

/* Can this ABI enforce FIELD (which needs ABI need)?  If not: an error when
 * required, else a note in p->skipped and false. */
static int
abi_allows (struct landlock_plan *p, bool required, const char *field, int need, hk_err *err)
{
  if (p->abi >= need)
    return 1;
  if (required)
    {
      if (p->abi == 0)
        return err_set (err, ENOTSUP, "%s: needs Landlock ABI %d, this kernel has no Landlock", field, need);
      return err_set (err, ENOTSUP, "%s: needs Landlock ABI %d, this kernel has %d", field, need, p->abi);
    }
  char *s
      = xasprintf ("%s%s%s needs ABI %d", p->skipped ? p->skipped : "", p->skipped ? ", " : "", field, need);
  free (p->skipped);
  p->skipped = s;
  return 0;
}

static int
plan_build (struct landlock_plan *p, const struct oci_spec *spec, hk_err *err)
{
  const struct hako_landlock *l = &spec->sandbox.landlock;
  bool fs = l->derive || l->read || l->write || l->exec;
  int r = 0;
  /* Filesystem rules need Landlock at all (ABI 1). */
  if (fs && (r = abi_allows (p, l->required, "sandbox.landlock", 1, err)) < 0)
    return -1;
  if (fs && r)
    {
      p->handled_fs = fs_handled_for (p->abi);
      fs_rules (p, spec);
    }
  /* A port list, even an empty one, handles that right: what is not listed
   * is denied.  No list: TCP is not Landlock's business. */
  if (l->tcp_connect && (r = abi_allows (p, l->required, "sandbox.landlock.tcp_connect", 4, err)) < 0)
    return -1;
  if (l->tcp_connect && r)
    {
      p->handled_net |= LANDLOCK_ACCESS_NET_CONNECT_TCP;
      for (size_t i = 0; i < l->n_tcp_connect; i++)
        plan_add_port (p, l->tcp_connect[i], LANDLOCK_ACCESS_NET_CONNECT_TCP);
    }
  /* The proxied modes' proxy must stay reachable whatever the spec's
   * tcp_connect list says: it is the sandbox's one way out. */
  if (netpolicy_proxied (spec) && (p->handled_net & LANDLOCK_ACCESS_NET_CONNECT_TCP))
    plan_add_port (p, NETPOLICY_PROXY_PORT, LANDLOCK_ACCESS_NET_CONNECT_TCP);
  /* No TCP rules of hako's own in any network mode.  In a private netns
   * ("none", "allowlist") the only TCP peers are the sandbox's own processes
   * on its lo and the proxy: denying them would stop no attack, only every
   * test suite's local server.  In the host's netns ("host", or no network
   * namespace) TCP is what the user asked for; ports are restricted there
   * only where the spec lists them. */
  if (l->tcp_bind && (r = abi_allows (p, l->required, "sandbox.landlock.tcp_bind", 4, err)) < 0)
    return -1;
  if (l->tcp_bind && r)
    {
      p->handled_net |= LANDLOCK_ACCESS_NET_BIND_TCP;
      for (size_t i = 0; i < l->n_tcp_bind; i++)
        plan_add_port (p, l->tcp_bind[i], LANDLOCK_ACCESS_NET_BIND_TCP);
    }
  if (l->scoped && (r = abi_allows (p, l->required, "sandbox.landlock.scoped", 6, err)) < 0)
    return -1;
  if (l->scoped && r)
    p->scoped = LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | LANDLOCK_SCOPE_SIGNAL;
  if (p->skipped)
    {
      char *s = p->abi ? xasprintf ("%s (this kernel has ABI %d)", p->skipped, p->abi)
                       : xasprintf ("%s (this kernel has no Landlock)", p->skipped);
      free (p->skipped);
      p->skipped = s;
    }
  return 0;
}

int
landlock_abi (void)
{
  int abi = sys_landlock_create_ruleset (NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
  return abi > 0 ? abi : 0; /* ENOSYS: not built in; EOPNOTSUPP: disabled at boot */
}

int
landlock_prepare_abi (const struct oci_spec *spec, int abi, struct landlock_plan **out, hk_err *err)
{
  *out = NULL;
  if (!spec->sandbox.landlock.present)
    return 0;
  struct landlock_plan *p = xcalloc (1, sizeof *p);
  p->abi = abi > 0 ? abi : 0;
  if (plan_build (p, spec, err) < 0)
    {
      landlock_plan_free (p);
      return -1;
    }
  *out = p;
  return 0;
}

int
landlock_prepare (const struct oci_spec *spec, struct landlock_plan **out, hk_err *err)
{
  *out = NULL;
  if (!spec->sandbox.landlock.present)
    return 0;
  return landlock_prepare_abi (spec, landlock_abi (), out, err);
}

/* ---- build and enforce (the child) ------------------------------------------ */

/* PATH as the sandbox sees it.  Magic links are refused: a hostile image's
 * symlink through /proc/self/fd must not aim a rule at a file of the host. */
static int
open_rule_path (const char *path)
{
  struct open_how how = { .flags = O_PATH | O_CLOEXEC, .resolve = RESOLVE_NO_MAGICLINKS };
  int fd, tries = 0;
  do
    fd = sys_openat2 (AT_FDCWD, path, &how);
  while (fd < 0 && errno == EAGAIN && ++tries < 16);
  return fd;
}

static int
add_path_rule (int ruleset, const struct ll_path_rule *r, uint64_t handled, hk_err *err)
{
  cleanup_close int fd = open_rule_path (r->path);
  struct stat st;
  if (fd < 0 && r->optional && (errno == ENOENT || errno == ENOTDIR))
    return 0;
  if (fd < 0 || fstat (fd, &st) < 0)
    return err_sys (err, "%s: %s", r->origin, r->path);
  uint64_t access = r->access & handled;
  if (!S_ISDIR (st.st_mode))
    access &= LL_FILE_RIGHTS;
  if (access == 0)
    return 0;
  struct landlock_path_beneath_attr a = { .allowed_access = access, .parent_fd = fd };
  if (sys_landlock_add_rule (ruleset, LANDLOCK_RULE_PATH_BENEATH, &a, 0) < 0)
    return err_sys (err, "%s: %s: add Landlock rule", r->origin, r->path);
  return 0;
}

static int
add_port_rule (int ruleset, const struct ll_port_rule *r, uint64_t handled, hk_err *err)
{
  struct hk_landlock_net_port_attr a = { .allowed_access = r->access & handled, .port = r->port };
  if (a.allowed_access == 0)
    return 0;
  if (sys_landlock_add_rule (ruleset, (enum landlock_rule_type)HK_LANDLOCK_RULE_NET_PORT, &a, 0) < 0)
    return err_sys (err, "sandbox.landlock: TCP port %u: add Landlock rule", r->port);
  return 0;
}

/* The files hako was handed as stdin, stdout and stderr may be reopened
 * (/dev/stderr, /proc/self/fd/1) with the access the fd already has: `echo >
 * /dev/stderr` on a terminal or a log file would fail otherwise, since those
 * files live outside every rule.  Only a regular file, a device or a fifo,
 * and the rule covers that one file; never a directory: a directory fd
 * leaked in as stdin (CVE-2024-21626) must stay useless. */
static void
add_stdio_rules (int ruleset, uint64_t handled)
{
  for (int fd = 0; fd <= 2; fd++)
    {
      struct stat st;
      int fl = fcntl (fd, F_GETFL);
      if (fl < 0 || (fl & O_PATH) || fstat (fd, &st) < 0
          || !(S_ISREG (st.st_mode) || S_ISCHR (st.st_mode) || S_ISFIFO (st.st_mode)))
        continue;
      uint64_t access = 0;
      if ((fl & O_ACCMODE) == O_RDONLY || (fl & O_ACCMODE) == O_RDWR)
        access |= LANDLOCK_ACCESS_FS_READ_FILE;
      if ((fl & O_ACCMODE) == O_WRONLY || (fl & O_ACCMODE) == O_RDWR)
        access |= LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_TRUNCATE;
      struct landlock_path_beneath_attr a = { .allowed_access = access & handled, .parent_fd = fd };
      /* Pipes and sockets are refused (EBADFD): the kernel lets them be
       * reopened anyway, having no path to check. */
      if (a.allowed_access)
        sys_landlock_add_rule (ruleset, LANDLOCK_RULE_PATH_BENEATH, &a, 0);
    }
}

int
landlock_build (const struct landlock_plan *p, int *ruleset_fd, hk_err *err)
{
  *ruleset_fd = -1;
  if (p == NULL || (p->handled_fs == 0 && p->handled_net == 0 && p->scoped == 0))
    return 0;
  struct hk_landlock_ruleset_attr attr = {
    .handled_access_fs = p->handled_fs,
    .handled_access_net = p->handled_net,
    .scoped = p->scoped,
  };
  /* An older kernel takes the attr only as long as it knows it. */
  size_t size = p->abi >= 6   ? sizeof attr
                : p->abi >= 4 ? offsetof (struct hk_landlock_ruleset_attr, scoped)
                              : offsetof (struct hk_landlock_ruleset_attr, handled_access_net);
  cleanup_close int fd = sys_landlock_create_ruleset ((const struct landlock_ruleset_attr *)&attr, size, 0);
  if (fd < 0)
    return err_sys (err, "sandbox.landlock: create the ruleset (ABI %d)", p->abi);
  for (size_t i = 0; i < p->n_paths; i++)
    if (add_path_rule (fd, &p->paths[i], p->handled_fs, err) < 0)
      return -1;
  if (p->handled_fs)
    add_stdio_rules (fd, p->handled_fs);
  for (size_t i = 0; i < p->n_ports; i++)
    if (add_port_rule (fd, &p->ports[i], p->handled_net, err) < 0)
      return -1;
  *ruleset_fd = steal_fd (&fd);
  return 0;
}

int
landlock_enforce (int ruleset_fd, hk_err *err)
{
  if (ruleset_fd < 0)
    return 0;
  cleanup_close int fd = ruleset_fd;
  /* The kernel refuses landlock_restrict_self without no_new_privs (unless
   * CAP_SYS_ADMIN): a setuid program could otherwise run its privileged code
   * under rules it never expected.  So a sandbox with Landlock always has
   * no_new_privs, whatever process.noNewPrivileges says. */
  if (prctl (PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1 && prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
    return err_sys (err, "sandbox.landlock: prctl PR_SET_NO_NEW_PRIVS");
  if (sys_landlock_restrict_self (fd, 0) < 0)
    return err_sys (err, "sandbox.landlock: landlock_restrict_self");
  return 0;
}

/* ---- the plan, read back ------------------------------------------------------ */

const char *
landlock_plan_skipped (const struct landlock_plan *p)
{
  return p ? p->skipped : NULL;
}

uint64_t
landlock_plan_fs_access (const struct landlock_plan *p, const char *path)
{
  if (p == NULL)
    return 0;
  cleanup_free char *clean = path_clean (path);
  uint64_t a = 0;
  for (size_t i = 0; i < p->n_paths; i++)
    if (path_within (clean, p->paths[i].path, true))
      a |= p->paths[i].access;
  return a & p->handled_fs;
}

uint64_t
landlock_plan_port_access (const struct landlock_plan *p, uint16_t port)
{
  for (size_t i = 0; p && i < p->n_ports; i++)
    if (p->ports[i].port == port)
      return p->ports[i].access & p->handled_net;
  return 0;
}

void
landlock_plan_handled (const struct landlock_plan *p, uint64_t *fs, uint64_t *net, uint64_t *scoped)
{
  *fs = p ? p->handled_fs : 0;
  *net = p ? p->handled_net : 0;
  *scoped = p ? p->scoped : 0;
}

void
landlock_plan_free (struct landlock_plan *p)
{
  if (p == NULL)
    return;
  for (size_t i = 0; i < p->n_paths; i++)
    free (p->paths[i].path);
  free (p->paths);
  free (p->ports);
  free (p->skipped);
  free (p);
}
