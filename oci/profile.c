/* profile: the config.json texts `hako spec` writes and `run --profile` uses.
 * "default" is `runc spec` made quieter (no terminal, a cgroup namespace, no
 * network); "host" needs no image: the host's system directories bound
 * read-only on an empty tmpfs root, a fresh /tmp and a persistent /work. */
#include <errno.h>
#include <linux/netlink.h>
#include <sched.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/util.h"
#include "oci/image_spec.h"
#include "oci/json.h"
#include "oci/node.h"
#include "oci/spec.h"

int
oci_profile_from_name (const char *name)
{
  if (name && strcmp (name, "default") == 0)
    return OCI_PROFILE_DEFAULT;
  if (name && strcmp (name, "host") == 0)
    return OCI_PROFILE_HOST;
  if (name && strcmp (name, "runc") == 0)
    return OCI_PROFILE_RUNC;
  return -1;
}

/* "runc": what runc 1.1's `runc spec` writes (and a final newline) (a terminal, no
 * user or cgroup namespace, no limits, no sandbox block), for tools and test
 * suites that edit runc's default with jq and expect its shape. */
static const char runc_default[]
    = "{\n"
      "\t\"ociVersion\": \"1.0.2-dev\",\n"
      "\t\"process\": {\n"
      "\t\t\"terminal\": true,\n"
      "\t\t\"user\": {\n"
      "\t\t\t\"uid\": 0,\n"
      "\t\t\t\"gid\": 0\n"
      "\t\t},\n"
      "\t\t\"args\": [\n"
      "\t\t\t\"sh\"\n"
      "\t\t],\n"
      "\t\t\"env\": [\n"
      "\t\t\t\"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\",\n"
      "\t\t\t\"TERM=xterm\"\n"
      "\t\t],\n"
      "\t\t\"cwd\": \"/\",\n"
      "\t\t\"capabilities\": {\n"
      "\t\t\t\"bounding\": [\n"
      "\t\t\t\t\"CAP_AUDIT_WRITE\",\n"
      "\t\t\t\t\"CAP_KILL\",\n"
      "\t\t\t\t\"CAP_NET_BIND_SERVICE\"\n"
      "\t\t\t],\n"
      "\t\t\t\"effective\": [\n"
      "\t\t\t\t\"CAP_AUDIT_WRITE\",\n"
      "\t\t\t\t\"CAP_KILL\",\n"
      "\t\t\t\t\"CAP_NET_BIND_SERVICE\"\n"
      "\t\t\t],\n"
      "\t\t\t\"permitted\": [\n"
      "\t\t\t\t\"CAP_AUDIT_WRITE\",\n"
      "\t\t\t\t\"CAP_KILL\",\n"
      "\t\t\t\t\"CAP_NET_BIND_SERVICE\"\n"
      "\t\t\t],\n"
      "\t\t\t\"ambient\": [\n"
      "\t\t\t\t\"CAP_AUDIT_WRITE\",\n"
      "\t\t\t\t\"CAP_KILL\",\n"
      "\t\t\t\t\"CAP_NET_BIND_SERVICE\"\n"
      "\t\t\t]\n"
      "\t\t},\n"
      "\t\t\"rlimits\": [\n"
      "\t\t\t{\n"
      "\t\t\t\t\"type\": \"RLIMIT_NOFILE\",\n"
      "\t\t\t\t\"hard\": 1024,\n"
      "\t\t\t\t\"soft\": 1024\n"
      "\t\t\t}\n"
      "\t\t],\n"
      "\t\t\"noNewPrivileges\": true\n"
      "\t},\n"
      "\t\"root\": {\n"
      "\t\t\"path\": \"rootfs\",\n"
      "\t\t\"readonly\": true\n"
      "\t},\n"
      "\t\"hostname\": \"runc\",\n"
      "\t\"mounts\": [\n"
      "\t\t{\n"
      "\t\t\t\"destination\": \"/proc\",\n"
      "\t\t\t\"type\": \"proc\",\n"
      "\t\t\t\"source\": \"proc\"\n"
      "\t\t},\n"
      "\t\t{\n"
      "\t\t\t\"destination\": \"/dev\",\n"
      "\t\t\t\"type\": \"tmpfs\",\n"
      "\t\t\t\"source\": \"tmpfs\",\n"
      "\t\t\t\"options\": [\n"
      "\t\t\t\t\"nosuid\",\n"
      "\t\t\t\t\"strictatime\",\n"
      "\t\t\t\t\"mode=755\",\n"
      "\t\t\t\t\"size=65536k\"\n"
      "\t\t\t]\n"
      "\t\t},\n"
      "\t\t{\n"
      "\t\t\t\"destination\": \"/dev/pts\",\n"
      "\t\t\t\"type\": \"devpts\",\n"
      "\t\t\t\"source\": \"devpts\",\n"
      "\t\t\t\"options\": [\n"
      "\t\t\t\t\"nosuid\",\n"
      "\t\t\t\t\"noexec\",\n"
      "\t\t\t\t\"newinstance\",\n"
      "\t\t\t\t\"ptmxmode=0666\",\n"
      "\t\t\t\t\"mode=0620\",\n"
      "\t\t\t\t\"gid=5\"\n"
      "\t\t\t]\n"
      "\t\t},\n"
      "\t\t{\n"
      "\t\t\t\"destination\": \"/dev/shm\",\n"
      "\t\t\t\"type\": \"tmpfs\",\n"
      "\t\t\t\"source\": \"shm\",\n"
      "\t\t\t\"options\": [\n"
      "\t\t\t\t\"nosuid\",\n"
      "\t\t\t\t\"noexec\",\n"
      "\t\t\t\t\"nodev\",\n"
      "\t\t\t\t\"mode=1777\",\n"
      "\t\t\t\t\"size=65536k\"\n"
      "\t\t\t]\n"
      "\t\t},\n"
      "\t\t{\n"
      "\t\t\t\"destination\": \"/dev/mqueue\",\n"
      "\t\t\t\"type\": \"mqueue\",\n"
      "\t\t\t\"source\": \"mqueue\",\n"
      "\t\t\t\"options\": [\n"
      "\t\t\t\t\"nosuid\",\n"
      "\t\t\t\t\"noexec\",\n"
      "\t\t\t\t\"nodev\"\n"
      "\t\t\t]\n"
      "\t\t},\n"
      "\t\t{\n"
      "\t\t\t\"destination\": \"/sys\",\n"
      "\t\t\t\"type\": \"sysfs\",\n"
      "\t\t\t\"source\": \"sysfs\",\n"
      "\t\t\t\"options\": [\n"
      "\t\t\t\t\"nosuid\",\n"
      "\t\t\t\t\"noexec\",\n"
      "\t\t\t\t\"nodev\",\n"
      "\t\t\t\t\"ro\"\n"
      "\t\t\t]\n"
      "\t\t},\n"
      "\t\t{\n"
      "\t\t\t\"destination\": \"/sys/fs/cgroup\",\n"
      "\t\t\t\"type\": \"cgroup\",\n"
      "\t\t\t\"source\": \"cgroup\",\n"
      "\t\t\t\"options\": [\n"
      "\t\t\t\t\"nosuid\",\n"
      "\t\t\t\t\"noexec\",\n"
      "\t\t\t\t\"nodev\",\n"
      "\t\t\t\t\"relatime\",\n"
      "\t\t\t\t\"ro\"\n"
      "\t\t\t]\n"
      "\t\t}\n"
      "\t],\n"
      "\t\"linux\": {\n"
      "\t\t\"resources\": {\n"
      "\t\t\t\"devices\": [\n"
      "\t\t\t\t{\n"
      "\t\t\t\t\t\"allow\": false,\n"
      "\t\t\t\t\t\"access\": \"rwm\"\n"
      "\t\t\t\t}\n"
      "\t\t\t]\n"
      "\t\t},\n"
      "\t\t\"namespaces\": [\n"
      "\t\t\t{\n"
      "\t\t\t\t\"type\": \"pid\"\n"
      "\t\t\t},\n"
      "\t\t\t{\n"
      "\t\t\t\t\"type\": \"network\"\n"
      "\t\t\t},\n"
      "\t\t\t{\n"
      "\t\t\t\t\"type\": \"ipc\"\n"
      "\t\t\t},\n"
      "\t\t\t{\n"
      "\t\t\t\t\"type\": \"uts\"\n"
      "\t\t\t},\n"
      "\t\t\t{\n"
      "\t\t\t\t\"type\": \"mount\"\n"
      "\t\t\t}\n"
      "\t\t],\n"
      "\t\t\"maskedPaths\": [\n"
      "\t\t\t\"/proc/acpi\",\n"
      "\t\t\t\"/proc/asound\",\n"
      "\t\t\t\"/proc/kcore\",\n"
      "\t\t\t\"/proc/keys\",\n"
      "\t\t\t\"/proc/latency_stats\",\n"
      "\t\t\t\"/proc/timer_list\",\n"
      "\t\t\t\"/proc/timer_stats\",\n"
      "\t\t\t\"/proc/sched_debug\",\n"
      "\t\t\t\"/sys/firmware\",\n"
      "\t\t\t\"/proc/scsi\"\n"
      "\t\t],\n"
      "\t\t\"readonlyPaths\": [\n"
      "\t\t\t\"/proc/bus\",\n"
      "\t\t\t\"/proc/fs\",\n"
      "\t\t\t\"/proc/irq\",\n"
      "\t\t\t\"/proc/sys\",\n"
      "\t\t\t\"/proc/sysrq-trigger\"\n"
      "\t\t]\n"
      "\t}\n"
      "}";

void
oci_profile_limits (const struct oci_node *node, uint64_t ram, struct oci_profile_limits *out)
{
  /* Half the machine leaves the host room to kill a runaway sandbox; 4 GiB
   * is what most builds and test suites fit in. */
  uint64_t half = (ram / 2) & ~((UINT64_C (1) << 20) - 1);
  int64_t mem = half && half < (uint64_t)OCI_PROFILE_MEMORY_MAX ? (int64_t)half : OCI_PROFILE_MEMORY_MAX;
  *out = (struct oci_profile_limits){ .memory = mem, .pids = OCI_PROFILE_PIDS };
  if (node && node->default_memory)
    out->memory = node->default_memory;
  if (node && node->default_pids)
    out->pids = node->default_pids;
}

/* runc's defaults: the capabilities a shell in a box usually needs, nothing
 * that reaches outside it. */
static char *const default_caps[] = { "CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE", NULL };

static char *const masked_paths[] = {
  "/proc/acpi",
  "/proc/asound",
  "/proc/kcore",
  "/proc/keys",
  "/proc/latency_stats",
  "/proc/timer_list",
  "/proc/timer_stats",
  "/proc/sched_debug",
  "/sys/firmware",
  "/proc/scsi",
  NULL,
};

static char *const readonly_paths[] = {
  "/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger", NULL,
};

/* The host directories the host profile binds read-only, when they exist here. */
static const char *const host_dirs[] = {
  "/usr", "/etc", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
};

static const char *const path_env = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

static void
gen_process (struct json_out *o, enum oci_profile p, char *const *args, const struct oci_image_process *ip)
{
  static char *const sh[] = { "sh", NULL };
  static char *const env_default[] = { (char *)path_env, "TERM=xterm", NULL };
  static char *const env_host[] = { (char *)path_env, "HOME=/work", "TERM=xterm", NULL };
  json_key (o, "process");
  json_obj_open (o);
  json_kbool (o, "terminal", false);
  json_key (o, "user");
  json_obj_open (o);
  json_kint (o, "uid", ip ? ip->uid : 0);
  json_kint (o, "gid", ip ? ip->gid : 0);
  json_obj_close (o);
  if (ip)
    {
      json_kstrv (o, "args", ip->args);
      json_kstrv (o, "env", ip->env);
      json_kstr (o, "cwd", ip->cwd);
    }
  else
    {
      /* The host profile without a command is a session: no args, and
       * hako's init as pid 1 (gen_sandbox), waiting for exec. */
      if (args && args[0])
        json_kstrv (o, "args", args);
      else if (p != OCI_PROFILE_HOST)
        json_kstrv (o, "args", sh);
      json_kstrv (o, "env", p == OCI_PROFILE_HOST ? env_host : env_default);
      json_kstr (o, "cwd", p == OCI_PROFILE_HOST ? "/work" : "/");
    }
  json_key (o, "capabilities");
  json_obj_open (o);
  json_kstrv (o, "bounding", default_caps);
  json_kstrv (o, "effective", default_caps);
  json_kstrv (o, "permitted", default_caps);
  json_obj_close (o);
  json_key (o, "rlimits");
  json_arr_open (o);
  json_obj_open (o);
  json_kstr (o, "type", "RLIMIT_NOFILE");
  json_kint (o, "hard", 1024);
  json_kint (o, "soft", 1024);
  json_obj_close (o);
  json_arr_close (o);
  json_kbool (o, "noNewPrivileges", true);
  json_obj_close (o);
}

/* One mount; OPTS is NULL-terminated (NULL: no options). */
static void
gen_mount (struct json_out *o, const char *dest, const char *type, const char *src, char *const *opts)
{
  json_obj_open (o);
  json_kstr (o, "destination", dest);
  json_kstr (o, "type", type);
  json_kstr (o, "source", src);
  json_kstrv (o, "options", opts);
  json_obj_close (o);
}

/* /proc, /dev, /dev/pts, /dev/shm, /dev/mqueue and /sys, as runc writes them.
 * Rootless: devpts cannot use gid=5 (tty is not mapped), and sysfs cannot be
 * mounted without owning the network namespace, so /sys is bound instead. */
static void
gen_system_mounts (struct json_out *o, bool rootless)
{
  static char *const dev[] = { "nosuid", "strictatime", "mode=755", "size=65536k", NULL };
  static char *const pts[]
      = { "nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620", "gid=5", NULL };
  static char *const shm[] = { "nosuid", "noexec", "nodev", "mode=1777", "size=65536k", NULL };
  static char *const mqueue[] = { "nosuid", "noexec", "nodev", NULL };
  static char *const sys[] = { "nosuid", "noexec", "nodev", "ro", NULL };
  static char *const sys_bind[] = { "rbind", "nosuid", "noexec", "nodev", "ro", NULL };
  gen_mount (o, "/proc", "proc", "proc", NULL);
  gen_mount (o, "/dev", "tmpfs", "tmpfs", dev);
  char *pts_opts[sizeof pts / sizeof *pts];
  memcpy (pts_opts, pts, sizeof pts);
  if (rootless)
    pts_opts[5] = NULL; /* drop "gid=5" */
  gen_mount (o, "/dev/pts", "devpts", "devpts", pts_opts);
  gen_mount (o, "/dev/shm", "tmpfs", "shm", shm);
  gen_mount (o, "/dev/mqueue", "mqueue", "mqueue", mqueue);
  if (rootless)
    gen_mount (o, "/sys", "bind", "/sys", sys_bind);
  else
    gen_mount (o, "/sys", "sysfs", "sysfs", sys);
}

static void
gen_mounts (struct json_out *o, enum oci_profile p, bool rootless)
{
  static char *const cgroup[] = { "nosuid", "noexec", "nodev", "relatime", "ro", NULL };
  static char *const ro_bind[] = { "rbind", "ro", "nosuid", "nodev", NULL };
  static char *const tmp[] = { "nosuid", "nodev", "mode=1777", "size=512m", NULL };
  json_key (o, "mounts");
  json_arr_open (o);
  gen_system_mounts (o, rootless);
  if (p == OCI_PROFILE_DEFAULT && !rootless)
    gen_mount (o, "/sys/fs/cgroup", "cgroup", "cgroup", cgroup);
  if (p == OCI_PROFILE_HOST)
    {
      /* Decided now, on the host the sandbox will run on: on a merged-/usr
       * system /bin is a symlink and its bind shows /usr/bin there. */
      struct stat st;
      for (size_t i = 0; i < sizeof host_dirs / sizeof *host_dirs; i++)
        if (stat (host_dirs[i], &st) == 0 && S_ISDIR (st.st_mode))
          gen_mount (o, host_dirs[i], "bind", host_dirs[i], ro_bind);
      gen_mount (o, "/tmp", "tmpfs", "tmpfs", tmp);
    }
  json_arr_close (o);
}

static void
gen_idmap (struct json_out *o, const char *key, unsigned id, unsigned size)
{
  json_key (o, key);
  json_arr_open (o);
  json_obj_open (o);
  json_kint (o, "containerID", 0);
  json_kint (o, "hostID", id);
  json_kint (o, "size", size);
  json_obj_close (o);
  json_arr_close (o);
}

/* ---- seccomp: hako's default filter (documented in hako-spec(5)) ---- */

/* The architecture hako is built for: the only one whose syscalls the
 * default filter lets through (any other entry, int 0x80 or x32 on x86_64,
 * kills the process: see runtime/confine/seccomp.c). */
#if defined(__x86_64__) && defined(__ILP32__)
#define SECCOMP_NATIVE_ARCH "SCMP_ARCH_X32"
#elif defined(__x86_64__)
#define SECCOMP_NATIVE_ARCH "SCMP_ARCH_X86_64"
#elif defined(__i386__)
#define SECCOMP_NATIVE_ARCH "SCMP_ARCH_X86"
#elif defined(__aarch64__)
#define SECCOMP_NATIVE_ARCH "SCMP_ARCH_AARCH64"
#elif defined(__arm__)
#define SECCOMP_NATIVE_ARCH "SCMP_ARCH_ARM"
#elif defined(__riscv) && __riscv_xlen == 64
#define SECCOMP_NATIVE_ARCH "SCMP_ARCH_RISCV64"
#elif defined(__powerpc64__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define SECCOMP_NATIVE_ARCH "SCMP_ARCH_PPC64LE"
#elif defined(__powerpc64__)
#define SECCOMP_NATIVE_ARCH "SCMP_ARCH_PPC64"
#elif defined(__s390x__)
#define SECCOMP_NATIVE_ARCH "SCMP_ARCH_S390X"
#elif defined(__loongarch64)
#define SECCOMP_NATIVE_ARCH "SCMP_ARCH_LOONGARCH64"
#else
#error "hako's default seccomp filter does not know this architecture's SCMP_ARCH_ name"
#endif

/* What no sandboxed program needs, and each a way out of the box or into
 * the kernel's less-trodden paths: EPERM.  Names a kernel or libseccomp does
 * not know (clock_settime64 on 64-bit) are skipped when compiled. */
static char *const seccomp_denied[] = {
  /* The mount table: remounting, revealing or escaping the root. */
  "mount",
  "umount",
  "umount2",
  "pivot_root",
  "chroot",
  "fsopen",
  "fsconfig",
  "fsmount",
  "fspick",
  "open_tree",
  "move_mount",
  "mount_setattr",
  /* New namespaces, where root inside gets the capabilities the sandbox
   * was denied (and the kernel surface that comes with them). */
  "unshare",
  "setns",
  /* The host itself: swap, reboot, kernels and modules, accounting, quotas,
   * the clock, the kernel log, I/O ports. */
  "swapon",
  "swapoff",
  "reboot",
  "kexec_load",
  "kexec_file_load",
  "init_module",
  "finit_module",
  "delete_module",
  "acct",
  "quotactl",
  "quotactl_fd",
  "settimeofday",
  "stime",
  "clock_settime",
  "clock_settime64",
  "adjtimex",
  "clock_adjtime",
  "clock_adjtime64",
  "syslog",
  "iopl",
  "ioperm",
  /* Kernel attack surface with a record of exploits and no everyday use:
   * eBPF, perf, the keyring (not namespaced), userfaultfd (stalls kernel
   * accesses at will), io_uring (bypasses seccomp for the syscalls it runs). */
  "bpf",
  "perf_event_open",
  "keyctl",
  "add_key",
  "request_key",
  "userfaultfd",
  "io_uring_setup",
  "io_uring_enter",
  "io_uring_register",
  /* File handles reach files by inode, past the mount namespace and the root
   * (the "shocker" escape). */
  "open_by_handle_at",
  "name_to_handle_at",
  /* ptrace, and what works like it on another process: memory, fds, kcmp. */
  "ptrace",
  "process_vm_readv",
  "process_vm_writev",
  "pidfd_getfd",
  "kcmp",
  /* Obsolete. */
  "lookup_dcookie",
  "nfsservctl",
  "uselib",
  NULL,
};

static void
gen_seccomp_rule (struct json_out *o, char *const *names, unsigned errno_ret)
{
  json_kstrv (o, "names", names);
  json_kstr (o, "action", "SCMP_ACT_ERRNO");
  json_kuint (o, "errnoRet", errno_ret);
}

/* One "args" condition: (arg[index] & mask) == value.  Several on the same
 * argument are ORed (runc's and hako's reading). */
static void
gen_seccomp_masked (struct json_out *o, unsigned index, uint64_t mask, uint64_t value)
{
  json_obj_open (o);
  json_kuint (o, "index", index);
  json_kuint (o, "value", mask);
  json_kuint (o, "valueTwo", value);
  json_kstr (o, "op", "SCMP_CMP_MASKED_EQ");
  json_obj_close (o);
}

/* personality(2) with anything but 0 (PER_LINUX), 8 (PER_LINUX32, which only
 * changes uname's machine) or 0xffffffff (the query): EPERM, which keeps
 * ADDR_NO_RANDOMIZE, READ_IMPLIES_EXEC, MMAP_PAGE_ZERO and the like out.
 * "Not one of three values" is a union of masked tests: a 32-bit x outside
 * {0, 8, ~0} has a bit i set whose next bit (cyclically) is clear — i != 3,
 * or, when 3 is its only such bit, x has bits 2 and 3 set and 4 clear.  The
 * kernel reads the argument as 32 bits, so the upper half is not tested. */
static void
gen_seccomp_personality (struct json_out *o)
{
  static char *const names[] = { "personality", NULL };
  json_obj_open (o);
  gen_seccomp_rule (o, names, EPERM);
  json_key (o, "args");
  json_arr_open (o);
  for (unsigned i = 0; i < 32; i++)
    if (i != 3)
      gen_seccomp_masked (o, 0, (1ULL << i) | (1ULL << ((i + 1) % 32)), 1ULL << i);
  gen_seccomp_masked (o, 0, 0x1c, 0x0c);
  json_arr_close (o);
  json_obj_close (o);
}

/* clone with a CLONE_NEW* flag: EPERM (the flags are argument 1 on s390).
 * clone3 passes its flags in memory, out of a filter's reach: ENOSYS, which
 * makes glibc fall back to clone. */
static void
gen_seccomp_clone (struct json_out *o)
{
  static char *const clone[] = { "clone", NULL };
  static char *const clone3[] = { "clone3", NULL };
  static const uint64_t ns_flags[] = { CLONE_NEWNS,   CLONE_NEWCGROUP, CLONE_NEWUTS, CLONE_NEWIPC,
                                       CLONE_NEWUSER, CLONE_NEWPID,    CLONE_NEWNET };
#if defined(__s390__) || defined(__s390x__)
  const unsigned flags_arg = 1;
#else
  const unsigned flags_arg = 0;
#endif
  json_obj_open (o);
  gen_seccomp_rule (o, clone, EPERM);
  json_key (o, "args");
  json_arr_open (o);
  for (size_t i = 0; i < sizeof ns_flags / sizeof *ns_flags; i++)
    gen_seccomp_masked (o, flags_arg, ns_flags[i], ns_flags[i]);
  json_arr_close (o);
  json_obj_close (o);
  json_obj_open (o);
  gen_seccomp_rule (o, clone3, ENOSYS);
  json_obj_close (o);
}

/* Socket families.  A network namespace isolates IPv4, IPv6, packet and
 * netlink sockets and the unix sockets' abstract names; the other families
 * reach what no namespace separates — AF_VSOCK the hypervisor and its
 * services (CID 2 on a VM), AF_BLUETOOTH, AF_CAN, AF_NFC, AF_IEEE802154 and
 * the like the host's hardware, AF_KEY and AF_ALG kernel state shared with
 * it — and each family a program asks for is loaded as a module if need be,
 * old and rarely audited code (DCCP- and RDS-style exploits).  No sandboxed
 * program needs them: socket() and socketpair() with any family but these
 * are EAFNOSUPPORT, what a kernel without the family says.  Argument 0 is
 * tested on its low 32 bits, which are all the kernel reads. */
static const unsigned socket_families[] = { AF_UNIX, AF_INET, AF_INET6, AF_NETLINK, AF_PACKET };

/* Netlink protocols: those the network namespace keeps to itself (routes
 * and links for ip and glibc's getifaddrs, sock_diag for ss, xfrm,
 * fib_lookup, nftables, generic netlink, whose families the kernel keeps to
 * the initial namespace unless they are namespaced) and user-to-user
 * messages.  The rest reach host state: audit, the SELinux events, the
 * connector (process events, Hyper-V's KVP), uevents of the host's devices,
 * iSCSI, SCSI transport, RDMA, crypto_user's algorithm list, SMC: refused
 * as the families are, EAFNOSUPPORT.  (libaudit, libudev and the rest read
 * it as "not in this kernel".) */
static const unsigned netlink_protocols[]
    = { NETLINK_ROUTE,      NETLINK_USERSOCK,  NETLINK_SOCK_DIAG, NETLINK_XFRM,
        NETLINK_FIB_LOOKUP, NETLINK_NETFILTER, NETLINK_GENERIC };

/* The kernel refuses families from AF_MAX (46 in Linux 6.x) and netlink
 * protocols from MAX_LINKS (32) on its own: past these bounds nothing needs
 * refusing, and a family a later kernel adds below 64 is refused already. */
#define SOCKET_FAMILY_LIMIT 64u
#define NETLINK_PROTOCOL_LIMIT 32u

static bool
listed (unsigned v, const unsigned *list, size_t n)
{
  for (size_t i = 0; i < n; i++)
    if (list[i] == v)
      return true;
  return false;
}

/* Every value in [0, limit) but the listed ones, as few aligned blocks as
 * CIDR prefixes make: the block [start, start + size) is (x & ~(size - 1))
 * == start on x's low 32 bits.  Calls emit (o, ctx, mask, start) for each;
 * limit is a power of two. */
static void
gen_blocks_but (struct json_out *o, const void *ctx, unsigned limit, const unsigned *allowed, size_t n,
                void (*emit) (struct json_out *, const void *, uint64_t, uint64_t))
{
  for (unsigned v = 0; v < limit;)
    {
      if (listed (v, allowed, n))
        {
          v++;
          continue;
        }
      unsigned size = 1;
      for (;;)
        {
          unsigned next = size * 2;
          bool clear = v % next == 0 && v + next <= limit;
          for (unsigned u = v + size; clear && u < v + next; u++)
            clear = !listed (u, allowed, n);
          if (!clear)
            break;
          size = next;
        }
      emit (o, ctx, 0xffffffffu & ~(uint64_t)(size - 1), v);
      v += size;
    }
}

static void
emit_family (struct json_out *o, const void *ctx, uint64_t mask, uint64_t start)
{
  (void)ctx;
  gen_seccomp_masked (o, 0, mask, start);
}

/* One rule a block: socket (AF_NETLINK, any type, protocol in the block). */
static void
emit_netlink (struct json_out *o, const void *ctx, uint64_t mask, uint64_t start)
{
  json_obj_open (o);
  gen_seccomp_rule (o, ctx, EAFNOSUPPORT);
  json_key (o, "args");
  json_arr_open (o);
  gen_seccomp_masked (o, 0, 0xffffffffu, AF_NETLINK);
  gen_seccomp_masked (o, 2, mask, start);
  json_arr_close (o);
  json_obj_close (o);
}

static void
gen_seccomp_sockets (struct json_out *o)
{
  static char *const both[] = { "socket", "socketpair", NULL };
  static char *const socket_only[] = { "socket", NULL };
  json_obj_open (o);
  gen_seccomp_rule (o, both, EAFNOSUPPORT);
  json_key (o, "args");
  json_arr_open (o);
  gen_blocks_but (o, NULL, SOCKET_FAMILY_LIMIT, socket_families,
                  sizeof socket_families / sizeof *socket_families, emit_family);
  json_arr_close (o);
  json_obj_close (o);
  gen_blocks_but (o, socket_only, NETLINK_PROTOCOL_LIMIT, netlink_protocols,
                  sizeof netlink_protocols / sizeof *netlink_protocols, emit_netlink);
}

/* Everything allowed but a deny-list: the default profiles run arbitrary
 * programs, and a syscall added by a newer kernel is not known to be bad. */
static void
gen_seccomp (struct json_out *o)
{
  static char *const archs[] = { SECCOMP_NATIVE_ARCH, NULL };
  json_key (o, "seccomp");
  json_obj_open (o);
  json_kstr (o, "defaultAction", "SCMP_ACT_ALLOW");
  json_kstrv (o, "architectures", archs);
  json_key (o, "syscalls");
  json_arr_open (o);
  json_obj_open (o);
  gen_seccomp_rule (o, seccomp_denied, EPERM);
  json_obj_close (o);
  gen_seccomp_clone (o);
  gen_seccomp_personality (o);
  gen_seccomp_sockets (o);
  json_arr_close (o);
  json_obj_close (o);
}

/* The profiles' user namespace, when hako runs as root: the sandbox's
 * ids 0..65535 are host ids HOST_ID_BASE.. — ids no account and no
 * /etc/subuid range of Debian's uses — so root inside is nobody outside: the
 * host's /etc/shadow and every root-only file bound in stay unreadable. */
#define HOST_ID_BASE 1000000000u
#define HOST_ID_SIZE 65536u

/* The profiles' limits (oci_profile_limits): a fork bomb stops at the pids
 * limit and a memory hog at the memory limit, inside the sandbox, instead
 * of taking the host's tasks and memory.  The devices are runc spec's
 * deny-all, which the nodes of hako's /dev are allowed after. */
static void
gen_resources (struct json_out *o, const struct oci_profile_limits *lim)
{
  json_key (o, "resources");
  json_obj_open (o);
  json_key (o, "memory");
  json_obj_open (o);
  json_kint (o, "limit", lim->memory);
  json_obj_close (o);
  json_key (o, "pids");
  json_obj_open (o);
  json_kint (o, "limit", lim->pids);
  json_obj_close (o);
  json_key (o, "devices");
  json_arr_open (o);
  json_obj_open (o);
  json_kbool (o, "allow", false);
  json_kstr (o, "access", "rwm");
  json_obj_close (o);
  json_arr_close (o);
  json_obj_close (o);
}

/* Every profile has a user namespace: root inside is never root outside. */
static void
gen_linux (struct json_out *o, bool rootless, const struct oci_profile_limits *lim)
{
  /* Rootless, like runc --rootless: no network namespace of its own
   * (sandbox.network still decides: "none" adds one back). */
  static const enum oci_ns_type ns[]
      = { OCI_NS_PID, OCI_NS_NETWORK, OCI_NS_IPC, OCI_NS_UTS, OCI_NS_MOUNT, OCI_NS_CGROUP, OCI_NS_USER };
  json_key (o, "linux");
  json_obj_open (o);
  if (rootless)
    {
      gen_idmap (o, "uidMappings", getuid (), 1);
      gen_idmap (o, "gidMappings", getgid (), 1);
    }
  else
    {
      gen_idmap (o, "uidMappings", HOST_ID_BASE, HOST_ID_SIZE);
      gen_idmap (o, "gidMappings", HOST_ID_BASE, HOST_ID_SIZE);
    }
  json_key (o, "namespaces");
  json_arr_open (o);
  for (size_t i = 0; i < sizeof ns / sizeof *ns; i++)
    {
      if (ns[i] == OCI_NS_NETWORK && rootless)
        continue;
      json_obj_open (o);
      json_kstr (o, "type", oci_ns_name (ns[i]));
      json_obj_close (o);
    }
  json_arr_close (o);
  if (lim && !rootless)
    gen_resources (o, lim);
  json_kstrv (o, "maskedPaths", masked_paths);
  json_kstrv (o, "readonlyPaths", readonly_paths);
  gen_seccomp (o);
  json_obj_close (o);
}

static void
gen_sandbox (struct json_out *o, enum oci_profile p, bool rootless, bool init, const char *image)
{
  json_key (o, "sandbox");
  json_obj_open (o);
  json_kstr (o, "profile", p == OCI_PROFILE_HOST ? "host" : "default");
  json_kstr (o, "image", image);
  if (p == OCI_PROFILE_HOST)
    json_kstr (o, "root", "tmpfs");
  json_key (o, "network");
  json_obj_open (o);
  json_kstr (o, "mode", "none");
  json_obj_close (o);
  /* Landlock from the mounts: what is mounted read-only stays so even for a
   * process that could remount it; abstract sockets and signals stay inside.
   * Required: a kernel without ABI 6 refuses, loudly. */
  json_key (o, "landlock");
  json_obj_open (o);
  json_kbool (o, "derive", true);
  json_kbool (o, "scoped", true);
  json_kbool (o, "required", true);
  json_obj_close (o);
  /* The bundle's rootfs, owned by root on the host, mounted idmapped: owned
   * by root inside too, though root inside is an unprivileged host id. */
  if (p == OCI_PROFILE_DEFAULT && !rootless && image == NULL)
    json_kbool (o, "idmap", true);
  if (p == OCI_PROFILE_HOST)
    {
      json_key (o, "workdir");
      json_obj_open (o);
      json_kbool (o, "persist", true);
      json_kstr (o, "path", "/work");
      json_obj_close (o);
    }
  if (init)
    json_kbool (o, "init", true);
  json_obj_close (o);
}

static int
generate (enum oci_profile profile, bool rootless, char *const *args, const struct oci_image_process *ip,
          const struct oci_profile_limits *lim, char **out, hk_err *err)
{
  if (profile == OCI_PROFILE_RUNC)
    {
      if (rootless || args || ip)
        return err_setk (err, ERR_INVALID_ARGUMENT, EINVAL,
                         "the runc profile is runc spec's default as it is: no --rootless, "
                         "command or image");
      *out = xstrdup (runc_default);
      return 0;
    }
  if (profile != OCI_PROFILE_DEFAULT && profile != OCI_PROFILE_HOST)
    return err_set (err, EINVAL, "unknown profile %d", (int)profile);
  struct json_out o;
  json_out_init (&o, "\t");
  json_obj_open (&o);
  json_kstr (&o, "ociVersion", "1.2.0");
  gen_process (&o, profile, args, ip);
  /* The host profile's root is a tmpfs (sandbox.root); root.path is kept
   * because a config without it is not a valid OCI config. */
  json_key (&o, "root");
  json_obj_open (&o);
  json_kstr (&o, "path", "rootfs");
  /* An image's root is its sandbox's own writable layer. */
  json_kbool (&o, "readonly", ip == NULL);
  json_obj_close (&o);
  json_kstr (&o, "hostname", "hako");
  gen_mounts (&o, profile, rootless);
  /* An image sandbox has one too: its layers are mounted idmapped. */
  gen_linux (&o, rootless, lim);
  gen_sandbox (&o, profile, rootless, ip == NULL && profile == OCI_PROFILE_HOST && !(args && args[0]),
               ip ? ip->image : NULL);
  json_obj_close (&o);
  return json_out_finish (&o, out, NULL, err);
}

int
oci_profile_generate (enum oci_profile profile, bool rootless, char *const *args,
                      const struct oci_profile_limits *lim, char **out, hk_err *err)
{
  return generate (profile, rootless, args, NULL, lim, out, err);
}

int
oci_profile_generate_image (const struct oci_image_process *ip, const struct oci_profile_limits *lim,
                            char **out, hk_err *err)
{
  return generate (OCI_PROFILE_DEFAULT, false, NULL, ip, lim, out, err);
}
