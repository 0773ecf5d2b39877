/* test_spec: config.json parsing, mount option decoding, profiles, namespace table. */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <unistd.h>

#include "lib/util.h"
#include "oci/node.h"
#include "oci/spec.h"
#include "tests/unit/helpers.h"
#include "tests/unit/tap.h"

/* `runc spec` (runc 1.1.5), verbatim but for tabs. */
static const char runc_spec[]
    = "{\n"
      "  \"ociVersion\": \"1.0.2-dev\",\n"
      "  \"process\": {\n"
      "    \"terminal\": true,\n"
      "    \"user\": {\n"
      "      \"uid\": 0,\n"
      "      \"gid\": 0\n"
      "    },\n"
      "    \"args\": [\n"
      "      \"sh\"\n"
      "    ],\n"
      "    \"env\": [\n"
      "      \"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\",\n"
      "      \"TERM=xterm\"\n"
      "    ],\n"
      "    \"cwd\": \"/\",\n"
      "    \"capabilities\": {\n"
      "      \"bounding\": [\n"
      "        \"CAP_AUDIT_WRITE\",\n"
      "        \"CAP_KILL\",\n"
      "        \"CAP_NET_BIND_SERVICE\"\n"
      "      ],\n"
      "      \"effective\": [\n"
      "        \"CAP_AUDIT_WRITE\",\n"
      "        \"CAP_KILL\",\n"
      "        \"CAP_NET_BIND_SERVICE\"\n"
      "      ],\n"
      "      \"permitted\": [\n"
      "        \"CAP_AUDIT_WRITE\",\n"
      "        \"CAP_KILL\",\n"
      "        \"CAP_NET_BIND_SERVICE\"\n"
      "      ],\n"
      "      \"ambient\": [\n"
      "        \"CAP_AUDIT_WRITE\",\n"
      "        \"CAP_KILL\",\n"
      "        \"CAP_NET_BIND_SERVICE\"\n"
      "      ]\n"
      "    },\n"
      "    \"rlimits\": [\n"
      "      {\n"
      "        \"type\": \"RLIMIT_NOFILE\",\n"
      "        \"hard\": 1024,\n"
      "        \"soft\": 1024\n"
      "      }\n"
      "    ],\n"
      "    \"noNewPrivileges\": true\n"
      "  },\n"
      "  \"root\": {\n"
      "    \"path\": \"rootfs\",\n"
      "    \"readonly\": true\n"
      "  },\n"
      "  \"hostname\": \"runc\",\n"
      "  \"mounts\": [\n"
      "    {\n"
      "      \"destination\": \"/proc\",\n"
      "      \"type\": \"proc\",\n"
      "      \"source\": \"proc\"\n"
      "    },\n"
      "    {\n"
      "      \"destination\": \"/dev\",\n"
      "      \"type\": \"tmpfs\",\n"
      "      \"source\": \"tmpfs\",\n"
      "      \"options\": [\n"
      "        \"nosuid\",\n"
      "        \"strictatime\",\n"
      "        \"mode=755\",\n"
      "        \"size=65536k\"\n"
      "      ]\n"
      "    },\n"
      "    {\n"
      "      \"destination\": \"/dev/pts\",\n"
      "      \"type\": \"devpts\",\n"
      "      \"source\": \"devpts\",\n"
      "      \"options\": [\n"
      "        \"nosuid\",\n"
      "        \"noexec\",\n"
      "        \"newinstance\",\n"
      "        \"ptmxmode=0666\",\n"
      "        \"mode=0620\",\n"
      "        \"gid=5\"\n"
      "      ]\n"
      "    },\n"
      "    {\n"
      "      \"destination\": \"/dev/shm\",\n"
      "      \"type\": \"tmpfs\",\n"
      "      \"source\": \"shm\",\n"
      "      \"options\": [\n"
      "        \"nosuid\",\n"
      "        \"noexec\",\n"
      "        \"nodev\",\n"
      "        \"mode=1777\",\n"
      "        \"size=65536k\"\n"
      "      ]\n"
      "    },\n"
      "    {\n"
      "      \"destination\": \"/dev/mqueue\",\n"
      "      \"type\": \"mqueue\",\n"
      "      \"source\": \"mqueue\",\n"
      "      \"options\": [\n"
      "        \"nosuid\",\n"
      "        \"noexec\",\n"
      "        \"nodev\"\n"
      "      ]\n"
      "    },\n"
      "    {\n"
      "      \"destination\": \"/sys\",\n"
      "      \"type\": \"sysfs\",\n"
      "      \"source\": \"sysfs\",\n"
      "      \"options\": [\n"
      "        \"nosuid\",\n"
      "        \"noexec\",\n"
      "        \"nodev\",\n"
      "        \"ro\"\n"
      "      ]\n"
      "    },\n"
      "    {\n"
      "      \"destination\": \"/sys/fs/cgroup\",\n"
      "      \"type\": \"cgroup\",\n"
      "      \"source\": \"cgroup\",\n"
      "      \"options\": [\n"
      "        \"nosuid\",\n"
      "        \"noexec\",\n"
      "        \"nodev\",\n"
      "        \"relatime\",\n"
      "        \"ro\"\n"
      "      ]\n"
      "    }\n"
      "  ],\n"
      "  \"linux\": {\n"
      "    \"resources\": {\n"
      "      \"devices\": [\n"
      "        {\n"
      "          \"allow\": false,\n"
      "          \"access\": \"rwm\"\n"
      "        }\n"
      "      ]\n"
      "    },\n"
      "    \"namespaces\": [\n"
      "      {\n"
      "        \"type\": \"pid\"\n"
      "      },\n"
      "      {\n"
      "        \"type\": \"network\"\n"
      "      },\n"
      "      {\n"
      "        \"type\": \"ipc\"\n"
      "      },\n"
      "      {\n"
      "        \"type\": \"uts\"\n"
      "      },\n"
      "      {\n"
      "        \"type\": \"mount\"\n"
      "      }\n"
      "    ],\n"
      "    \"maskedPaths\": [\n"
      "      \"/proc/acpi\",\n"
      "      \"/proc/asound\",\n"
      "      \"/proc/kcore\",\n"
      "      \"/proc/keys\",\n"
      "      \"/proc/latency_stats\",\n"
      "      \"/proc/timer_list\",\n"
      "      \"/proc/timer_stats\",\n"
      "      \"/proc/sched_debug\",\n"
      "      \"/sys/firmware\",\n"
      "      \"/proc/scsi\"\n"
      "    ],\n"
      "    \"readonlyPaths\": [\n"
      "      \"/proc/bus\",\n"
      "      \"/proc/fs\",\n"
      "      \"/proc/irq\",\n"
      "      \"/proc/sys\",\n"
      "      \"/proc/sysrq-trigger\"\n"
      "    ]\n"
      "  }\n"
      "}\n";

/* TEXT must fail with a message starting with WANT (on one line). */
static void
fails_with (const char *text, const char *want)
{
  hk_err err = { 0 };
  struct oci_spec *s = parse_q (text, &err);
  bool good = s == NULL && strncmp (err.msg, want, strlen (want)) == 0 && strchr (err.msg, '\n') == NULL;
  if (!good)
    printf ("#   got '%s'\n", s ? "(parsed)" : err.msg);
  ok (good, "rejected: %s", want);
  oci_spec_free (s);
}

static const struct oci_mount *
find_mount (const struct oci_spec *s, const char *dest)
{
  for (size_t i = 0; i < s->n_mounts; i++)
    if (strcmp (s->mounts[i].destination, dest) == 0)
      return &s->mounts[i];
  return NULL;
}

static bool
strv_has (char *const *v, const char *s)
{
  for (size_t i = 0; v && v[i]; i++)
    if (strcmp (v[i], s) == 0)
      return true;
  return false;
}

static void
test_strv_and_ns (void)
{
  char *v[] = { "a", "b", NULL };
  char **d = strv_dup (v);
  ok (strv_len (d) == 2 && strcmp (d[1], "b") == 0 && d[0] != v[0], "strv_dup copies");
  ok (strv_len (NULL) == 0 && strv_dup (NULL) == NULL, "NULL strv is absent");
  strv_free (d);
  strv_free (NULL);
  const char *names[] = { "pid", "network", "mount", "ipc", "uts", "user", "cgroup", "time" };
  const unsigned long flags[] = { CLONE_NEWPID, CLONE_NEWNET,  CLONE_NEWNS,     CLONE_NEWIPC,
                                  CLONE_NEWUTS, CLONE_NEWUSER, CLONE_NEWCGROUP, 0x80 };
  bool all = true;
  for (int i = 0; i < 8; i++)
    {
      int t = oci_ns_from_name (names[i]);
      all = all && t >= 0 && strcmp (oci_ns_name (t), names[i]) == 0 && oci_ns_clone_flag (t) == flags[i];
    }
  ok (all, "the eight namespace names map to their CLONE_NEW* flags");
  ok (oci_ns_from_name ("net") == -1 && oci_ns_from_name (NULL) == -1, "unknown namespace: -1");
}

static void
test_runc_spec (void)
{
  hk_err err = { 0 };
  struct oci_spec *s = NULL;
  int r = oci_spec_parse (runc_spec, strlen (runc_spec), &s, &err);
  ok (r == 0, "runc spec output parses (%s)", r ? err.msg : "ok");
  if (r)
    return;
  is_str (s->oci_version, "1.0.2-dev", "ociVersion");
  is_str (s->root_path, "rootfs", "root.path");
  ok (s->root_readonly, "root.readonly");
  is_str (s->hostname, "runc", "hostname");
  struct oci_process *p = s->process;
  ok (p && p->terminal && p->user.uid == 0 && p->user.gid == 0, "terminal and user");
  ok (strv_len (p->args) == 1 && strcmp (p->args[0], "sh") == 0, "args");
  ok (strv_len (p->env) == 2 && strcmp (p->env[1], "TERM=xterm") == 0, "env");
  is_str (p->cwd, "/", "cwd");
  ok (p->has_caps && strv_len (p->caps.bounding) == 3 && strv_len (p->caps.ambient) == 3
          && p->caps.inheritable == NULL,
      "capabilities (inheritable absent)");
  ok (p->n_rlimits == 1 && p->rlimits[0].resource == RLIMIT_NOFILE && p->rlimits[0].soft == 1024
          && p->rlimits[0].hard == 1024,
      "rlimits");
  ok (p->no_new_privileges, "noNewPrivileges");
  ok (s->n_mounts == 7, "seven mounts");
  const struct oci_mount *pts = find_mount (s, "/dev/pts");
  ok (pts && pts->flags == (MS_NOSUID | MS_NOEXEC) && !pts->is_bind
          && strcmp (pts->data, "newinstance,ptmxmode=0666,mode=0620,gid=5") == 0,
      "devpts options split into flags and data");
  const struct oci_mount *cg = find_mount (s, "/sys/fs/cgroup");
  ok (cg && cg->flags == (MS_NOSUID | MS_NOEXEC | MS_NODEV | MS_RELATIME | MS_RDONLY) && cg->data == NULL,
      "cgroup mount flags, no data");
  const struct oci_mount *proc = find_mount (s, "/proc");
  ok (proc && proc->flags == 0 && proc->options == NULL && proc->data == NULL, "a mount without options");
  ok (s->linux.has_resources && s->linux.resources.n_devices == 1 && !s->linux.resources.devices[0].allow
          && s->linux.resources.devices[0].major == -1
          && strcmp (s->linux.resources.devices[0].access, "rwm") == 0,
      "resources.devices: deny all");
  ok (s->linux.n_namespaces == 5 && oci_spec_ns (s, OCI_NS_NETWORK) && oci_spec_ns (s, OCI_NS_USER) == NULL,
      "namespaces");
  ok (strv_len (s->linux.masked_paths) == 10 && strv_len (s->linux.readonly_paths) == 5,
      "masked and read-only paths");
  ok (!s->sandbox.present && s->sandbox.net_mode == HAKO_NET_UNSET, "no sandbox object");
  oci_spec_free (s);
}

/* Every field the parser reads, with a value that is not the default. */
static const char full_config[]
    = "{'ociVersion':'1.2.0','unknownField':{'x':[1,2]},"
      "'root':{'path':'/abs/rootfs','readonly':false},"
      "'hostname':'box','domainname':'example.org',"
      "'process':{'terminal':true,'consoleSize':{'height':24,'width':80},"
      " 'user':{'uid':1000,'gid':1001,'umask':18,'additionalGids':[5,6],'username':'u'},"
      " 'args':['/bin/echo','hi'],'env':['A=1','B='],'cwd':'/srv',"
      " 'capabilities':{'bounding':['CAP_KILL'],'effective':['CAP_KILL'],'inheritable':[],"
      "  'permitted':['CAP_KILL'],'ambient':['CAP_KILL']},"
      " 'rlimits':[{'type':'RLIMIT_NOFILE','soft':10,'hard':20},"
      "  {'type':'RLIMIT_CORE','soft':0,'hard':18446744073709551615}],"
      " 'noNewPrivileges':true,'apparmorProfile':'','selinuxLabel':'','oomScoreAdj':-500},"
      "'mounts':[{'destination':'/data','type':'bind','source':'/srv/data','options':['ro']}],"
      "'hooks':{'prestart':[{'path':'/bin/true','args':['true','x'],'env':['H=1'],'timeout':5}],"
      " 'createRuntime':[{'path':'/a'}],'createContainer':[{'path':'/b'}],"
      " 'startContainer':[{'path':'/c'}],'poststart':[{'path':'/d'}],"
      " 'poststop':[{'path':'/e'},{'path':'/f','timeout':1}]},"
      "'annotations':{'org.example.k':'v','b':''},"
      "'linux':{'namespaces':[{'type':'pid'},{'type':'network','path':'/proc/1/ns/net'},"
      "  {'type':'mount'},{'type':'ipc'},{'type':'uts'},{'type':'user'},{'type':'cgroup'},"
      "  {'type':'time'}],"
      " 'uidMappings':[{'containerID':0,'hostID':100000,'size':65536}],"
      " 'gidMappings':[{'containerID':0,'hostID':200000,'size':1},"
      "  {'containerID':1,'hostID':300000,'size':10}],"
      " 'sysctl':{'net.ipv4.ip_forward':'1'},"
      " 'devices':[{'type':'c','path':'/dev/fuse','major':10,'minor':229,'fileMode':438,"
      "  'uid':0,'gid':0},{'type':'p','path':'/dev/fifo'}],"
      " 'resources':{'devices':[{'allow':false,'access':'rwm'},"
      "   {'allow':true,'type':'c','major':10,'minor':229,'access':'rw'}],"
      "  'memory':{'limit':536870912,'reservation':268435456,'swap':-1,'kernel':0,'kernelTCP':1048576,"
      "   'swappiness':60,'disableOOMKiller':true},"
      "  'cpu':{'shares':512,'quota':50000,'period':100000,'realtimeRuntime':950,"
      "   'realtimePeriod':1000,'cpus':'0-1','mems':'0'},"
      "  'pids':{'limit':64},'blockIO':{'weight':500,'weightDevice':[{'major':7,'minor':3,'weight':444}],"
      "    'throttleReadBpsDevice':[{'major':8,'minor':0,'rate':1048576}]},"
      "  'hugepageLimits':[{'pageSize':'2MB','limit':209715200}],"
      "  'unified':{'memory.high':'400M'}},"
      " 'cgroupsPath':'/hako/box','rootfsPropagation':'rslave',"
      " 'maskedPaths':['/proc/kcore'],'readonlyPaths':['/proc/sys'],'mountLabel':'',"
      " 'seccomp':{'defaultAction':'SCMP_ACT_ERRNO','defaultErrnoRet':1,"
      "  'architectures':['SCMP_ARCH_X86_64'],'flags':['SECCOMP_FILTER_FLAG_LOG'],"
      "  'listenerPath':'/run/l.sock','listenerMetadata':'md',"
      "  'syscalls':[{'names':['read','write'],'action':'SCMP_ACT_ALLOW'},"
      "   {'names':['personality'],'action':'SCMP_ACT_ERRNO','errnoRet':38,"
      "    'args':[{'index':0,'value':8,'valueTwo':0,'op':'SCMP_CMP_EQ'}]}]}},"
      "'sandbox':{'profile':'custom','root':'bundle',"
      " 'network':{'mode':'allowlist','allow':['pypi.org','*.pythonhosted.org','192.0.2.0/24']},"
      " 'landlock':{'read':['/usr'],'write':['/work','/tmp'],'exec':['/usr/bin'],"
      "  'tcp_connect':[443,80],'tcp_bind':[8080],'scoped':true,'required':false},"
      " 'limits':{'timeout':'1m','max_output':2097152},'image':'alpine:3',"
      " 'workdir':{'persist':true,'path':'/home/w'}}}";

static void
check_full_process (const struct oci_process *p)
{
  ok (p->terminal && p->console_height == 24 && p->console_width == 80, "terminal, consoleSize");
  ok (p->user.uid == 1000 && p->user.gid == 1001 && p->user.has_umask && p->user.umask == 18
          && p->user.n_additional_gids == 2 && p->user.additional_gids[1] == 6,
      "user uid, gid, umask, additionalGids");
  is_str (p->user.username, "u", "user.username");
  ok (strv_len (p->args) == 2 && strv_len (p->env) == 2, "args and env");
  is_str (p->cwd, "/srv", "cwd");
  ok (p->has_caps && p->caps.inheritable && strv_len (p->caps.inheritable) == 0
          && strv_has (p->caps.ambient, "CAP_KILL"),
      "capabilities: an empty set is present, not absent");
  ok (p->n_rlimits == 2 && p->rlimits[1].resource == RLIMIT_CORE && p->rlimits[1].hard == UINT64_MAX
          && p->rlimits[0].soft == 10,
      "rlimits up to 2^64-1 (unlimited)");
  ok (p->no_new_privileges && p->has_oom_score_adj && p->oom_score_adj == -500,
      "noNewPrivileges, oomScoreAdj");
  is_str (p->apparmor_profile, "", "apparmorProfile (empty: no profile)");
  is_str (p->selinux_label, "", "selinuxLabel (empty)");
}

static void
check_full_linux (const struct oci_linux *l)
{
  ok (l->n_namespaces == 8 && l->namespaces[1].type == OCI_NS_NETWORK
          && strcmp (l->namespaces[1].path, "/proc/1/ns/net") == 0 && l->namespaces[0].path == NULL,
      "namespaces, with a path to join");
  ok (l->n_uid_mappings == 1 && l->uid_mappings[0].host_id == 100000 && l->uid_mappings[0].size == 65536
          && l->n_gid_mappings == 2 && l->gid_mappings[1].container_id == 1,
      "id mappings");
  ok (l->n_sysctl == 1 && strcmp (l->sysctl[0].key, "net.ipv4.ip_forward") == 0, "sysctl");
  ok (l->n_devices == 2 && l->devices[0].type == 'c' && l->devices[0].major == 10
          && l->devices[0].minor == 229 && l->devices[0].has_file_mode && l->devices[0].file_mode == 0666
          && l->devices[0].has_uid && l->devices[1].type == 'p' && !l->devices[1].has_uid,
      "devices");
  const struct oci_resources *r = &l->resources;
  ok (l->has_resources && r->n_devices == 2 && r->devices[1].allow && r->devices[1].type == 'c'
          && r->devices[1].minor == 229 && strcmp (r->devices[1].access, "rw") == 0
          && r->devices[0].type == 0,
      "device rules");
  ok (r->has_memory_limit && r->memory_limit == 536870912 && r->has_memory_swap && r->memory_swap == -1
          && r->has_memory_kernel && r->has_memory_kernel_tcp && r->memory_kernel_tcp == 1048576
          && r->has_memory_swappiness && r->memory_swappiness == 60 && r->disable_oom_killer
          && r->has_memory_reservation,
      "memory");
  ok (r->has_cpu_shares && r->cpu_shares == 512 && r->cpu_quota == 50000 && r->cpu_period == 100000
          && r->has_cpu_realtime_runtime && r->cpu_realtime_period == 1000 && strcmp (r->cpu_cpus, "0-1") == 0
          && strcmp (r->cpu_mems, "0") == 0,
      "cpu");
  ok (r->has_pids_limit && r->pids_limit == 64 && r->has_blkio_weight && r->blkio_weight == 500,
      "pids, blockIO");
  ok (r->n_blkio_devices == 2 && r->blkio_devices[0].kind == OCI_BLKIO_READ_BPS
          && r->blkio_devices[0].value == 1048576 && r->blkio_devices[1].kind == OCI_BLKIO_WEIGHT
          && r->blkio_devices[1].major == 7 && r->blkio_devices[1].minor == 3
          && r->blkio_devices[1].value == 444,
      "blockIO per-device: throttle rate, weightDevice");
  ok (r->n_hugepage_limits == 1 && strcmp (r->hugepage_limits[0].value, "209715200") == 0 && r->n_unified == 1
          && strcmp (r->unified[0].value, "400M") == 0,
      "hugepageLimits, unified");
  is_str (l->cgroups_path, "/hako/box", "cgroupsPath");
  ok (l->rootfs_propagation == (MS_SLAVE | MS_REC), "rootfsPropagation rslave");
  ok (strv_len (l->masked_paths) == 1 && strv_len (l->readonly_paths) == 1, "masked, readonly");
  is_str (l->mount_label, "", "mountLabel (empty)");
  const struct oci_seccomp *sc = l->seccomp;
  ok (sc && strcmp (sc->default_action, "SCMP_ACT_ERRNO") == 0 && sc->has_default_errno_ret
          && sc->default_errno_ret == 1 && strv_len (sc->architectures) == 1 && strv_len (sc->flags) == 1
          && strcmp (sc->listener_path, "/run/l.sock") == 0 && strcmp (sc->listener_metadata, "md") == 0,
      "seccomp header");
  ok (sc && sc->n_syscalls == 2 && !sc->syscalls[0].has_errno_ret && sc->syscalls[1].has_errno_ret
          && sc->syscalls[1].errno_ret == 38 && sc->syscalls[1].n_args == 1
          && sc->syscalls[1].args[0].value == 8 && strcmp (sc->syscalls[1].args[0].op, "SCMP_CMP_EQ") == 0,
      "seccomp rules");
}

static void
check_full_sandbox (const struct hako_sandbox *b)
{
  ok (b->present && b->root == HAKO_ROOT_BUNDLE && strcmp (b->profile, "custom") == 0,
      "sandbox profile, root");
  ok (b->net_mode == HAKO_NET_ALLOWLIST && strv_len (b->net_allow) == 3, "network allowlist");
  const struct hako_landlock *l = &b->landlock;
  ok (l->present && strv_len (l->read) == 1 && strv_len (l->write) == 2 && strv_len (l->exec) == 1
          && l->n_tcp_connect == 2 && l->tcp_connect[0] == 443 && l->n_tcp_bind == 1 && l->tcp_bind[0] == 8080
          && l->scoped && !l->required,
      "landlock");
  ok (b->has_timeout && b->timeout_ms == 60000 && b->has_max_output && b->max_output == 2097152, "limits");
  is_str (b->image, "alpine:3", "image");
  ok (b->workdir_persist && strcmp (b->workdir_path, "/home/w") == 0, "workdir");
}

static void
test_full_config (void)
{
  hk_err err = { 0 };
  struct oci_spec *s = parse_q (full_config, &err);
  ok (s != NULL, "a config with every field parses (%s)", s ? "ok" : err.msg);
  if (s == NULL)
    return;
  ok (!s->root_readonly && strcmp (s->root_path, "/abs/rootfs") == 0, "root");
  ok (strcmp (s->hostname, "box") == 0 && strcmp (s->domainname, "example.org") == 0, "hostname, domainname");
  check_full_process (s->process);
  ok (s->n_mounts == 1 && s->mounts[0].is_bind && s->mounts[0].flags == (MS_BIND | MS_RDONLY),
      "a type bind mount is a bind");
  ok (s->hooks.n[OCI_HOOK_PRESTART] == 1 && s->hooks.list[OCI_HOOK_PRESTART][0].has_timeout
          && s->hooks.list[OCI_HOOK_PRESTART][0].timeout == 5
          && strv_len (s->hooks.list[OCI_HOOK_PRESTART][0].args) == 2
          && strv_len (s->hooks.list[OCI_HOOK_PRESTART][0].env) == 1,
      "prestart hook");
  bool kinds = true;
  for (int k = 0; k < OCI_HOOK_COUNT; k++)
    kinds = kinds && s->hooks.n[k] >= 1;
  ok (kinds && s->hooks.n[OCI_HOOK_POSTSTOP] == 2
          && strcmp (s->hooks.list[OCI_HOOK_POSTSTOP][1].path, "/f") == 0
          && !s->hooks.list[OCI_HOOK_POSTSTOP][0].has_timeout,
      "all six hook kinds");
  ok (s->n_annotations == 2 && strcmp (s->annotations[0].key, "org.example.k") == 0
          && strcmp (s->annotations[1].value, "") == 0,
      "annotations");
  check_full_linux (&s->linux);
  check_full_sandbox (&s->sandbox);
  oci_spec_free (s);
}

#define BASE "'ociVersion':'1.0.0','root':{'path':'rootfs'}"

static void
test_defaults_and_nulls (void)
{
  hk_err err = { 0 };
  struct oci_spec *s = parse_q ("{" BASE ",'process':{'args':['sh']},'linux':null,'hooks':null,"
                                "'sandbox':{'workdir':{},'landlock':{}},'mounts':null}",
                                &err);
  ok (s != NULL, "null fields read as absent (%s)", s ? "ok" : err.msg);
  if (s == NULL)
    return;
  ok (strcmp (s->process->cwd, "/") == 0 && s->process->user.uid == 0 && !s->process->has_caps
          && !s->process->user.has_umask,
      "process defaults: cwd /, uid 0, no capabilities object");
  ok (s->sandbox.present && s->sandbox.root == HAKO_ROOT_BUNDLE
          && strcmp (s->sandbox.workdir_path, "/work") == 0 && !s->sandbox.workdir_persist,
      "sandbox defaults: root bundle, workdir /work");
  ok (s->sandbox.landlock.present && s->sandbox.landlock.required && !s->sandbox.landlock.scoped,
      "landlock.required defaults to true");
  ok (s->n_mounts == 0 && s->linux.n_namespaces == 0 && s->linux.seccomp == NULL, "no mounts, no linux");
  oci_spec_free (s);

  s = parse_q ("{'ociVersion':'1.0.0','sandbox':{'root':'tmpfs','limits':{'timeout':1.5,"
               "'max_output':'64k'}}}",
               &err);
  ok (s != NULL && s->root_path == NULL && s->process == NULL,
      "sandbox.root tmpfs: no root.path needed, process optional (%s)", s ? "ok" : err.msg);
  ok (s && s->sandbox.timeout_ms == 1500 && s->sandbox.max_output == 65536,
      "timeout as seconds, max_output with a suffix");
  oci_spec_free (s);
  s = parse_q ("{" BASE ",'sandbox':{'limits':{'timeout':'500ms'}}}", &err);
  ok (s && s->sandbox.timeout_ms == 500, "timeout \"500ms\"");
  oci_spec_free (s);
  s = parse_q ("{" BASE ",'sandbox':{'limits':{'timeout':30,'max_output':0}}}", &err);
  ok (s && s->sandbox.timeout_ms == 30000 && s->sandbox.has_max_output && s->sandbox.max_output == 0,
      "timeout as an integer of seconds; max_output 0 is set, not absent");
  ok (s && !s->sandbox.has_disk, "no disk limit unless asked");
  oci_spec_free (s);
  s = parse_q ("{" BASE ",'sandbox':{'limits':{'disk':'10g'}}}", &err);
  ok (s && s->sandbox.has_disk && s->sandbox.disk == 10ll << 30, "disk \"10g\"");
  oci_spec_free (s);
  s = parse_q ("{" BASE ",'sandbox':{'limits':{'disk':16777216}}}", &err);
  ok (s && s->sandbox.has_disk && s->sandbox.disk == 16 << 20, "disk as a number of bytes (16m, the least)");
  oci_spec_free (s);
  s = parse_q ("{" BASE ",'sandbox':{'limits':{'disk':-1}}}", &err);
  ok (s && s->sandbox.has_disk && s->sandbox.disk == -1, "disk -1: no limit, asked for");
  oci_spec_free (s);
}

/* Each config and the start of the message it must fail with. */
static const struct
{
  const char *json;
  const char *want;
} malformed[] = {
  { "{", "invalid JSON: " },
  { "{'ociVersion':'1.0.0','root':{'pa", "invalid JSON: " },
  { "", "invalid JSON: the text is empty" },
  { "{" BASE "} trailing", "invalid JSON: " },
  { "{" BASE ",'hostname':'a\\u0000b'}", "invalid JSON: strings must not hold NUL" },
  { "[1,2]", "the config must be a JSON object" },
  { "{}", ".ociVersion: required" },
  { "{'ociVersion':1}", ".ociVersion: must be a string" },
  { "{'ociVersion':'1.0.0'}", ".root.path: required" },
  { "{" BASE ",'process':[]}", ".process: must be an object" },
  { "{" BASE ",'process':{'args':[]}}", ".process.args: must be a non-empty array" },
  { "{" BASE ",'process':{'args':'sh'}}", ".process.args: must be a non-empty array" },
  { "{" BASE ",'process':{'cwd':'/'}}", ".process.args: must be a non-empty array" },
  { "{" BASE ",'process':{'args':['sh',1]}}", ".process.args[1]: must be a string" },
  { "{" BASE ",'process':{'args':['sh'],'cwd':'tmp'}}", ".process.cwd: must be an absolute path" },
  { "{" BASE ",'process':{'args':['sh'],'env':['A=1','FOO']}}", ".process.env[1]: must be NAME=VALUE" },
  { "{" BASE ",'process':{'args':['sh'],'terminal':'yes'}}", ".process.terminal: must be true or false" },
  { "{" BASE ",'process':{'args':['sh'],'user':{'uid':-1}}}",
    ".process.user.uid: must be an integer between 0 and 4294967295" },
  { "{" BASE ",'process':{'args':['sh'],'user':{'gid':1.5}}}", ".process.user.gid: must be an integer" },
  { "{" BASE ",'process':{'args':['sh'],'user':{'umask':512}}}",
    ".process.user.umask: must be between 0 and 0777" },
  { "{" BASE ",'process':{'args':['sh'],'oomScoreAdj':2000}}",
    ".process.oomScoreAdj: must be an integer between -1000 and 1000" },
  { "{" BASE ",'process':{'args':['sh'],'rlimits':[{'type':'RLIMIT_FOO','soft':1,"
    "'hard':1}]}}",
    ".process.rlimits[0].type: unknown rlimit \"RLIMIT_FOO\"" },
  { "{" BASE ",'process':{'args':['sh'],'rlimits':[{'type':'RLIMIT_NOFILE','soft':1,"
    "'hard':1},{'type':'RLIMIT_NOFILE','soft':2,'hard':2}]}}",
    ".process.rlimits[1].type: duplicate rlimit \"RLIMIT_NOFILE\"" },
  { "{" BASE ",'process':{'args':['sh'],'rlimits':[{'type':'RLIMIT_CPU','soft':1}]}}",
    ".process.rlimits[0].hard: required" },
  { "{" BASE ",'process':{'args':['sh'],'rlimits':[{'type':'RLIMIT_CPU','soft':9,"
    "'hard':1}]}}",
    ".process.rlimits[0].soft: must not be above the hard limit" },
  { "{" BASE ",'mounts':{}}", ".mounts: must be an array" },
  { "{" BASE ",'mounts':[{'destination':'/a','type':'tmpfs'},"
    "{'destination':'/b','type':'tmpfs'},{'destination':'/c','type':'tmpfs'},"
    "{'destination':'d','type':'tmpfs'}]}",
    ".mounts[3].destination: must be an absolute path" },
  { "{" BASE ",'mounts':[{'type':'tmpfs'}]}", ".mounts[0].destination: required" },
  { "{" BASE ",'mounts':[{'destination':'/x','type':'bind','source':'/s','options':['rbind','idmap']}]}",
    ".mounts[0].options: the idmapped bind on /x needs a user namespace (\"user\" in .linux.namespaces), "
    "whose mappings it takes" },
  { "{" BASE ",'mounts':[{'destination':'/x','type':'bind','source':'/s','options':['bind'],"
    "'uidMappings':[{'containerID':0,'hostID':1000,'size':1}],'gidMappings':[{'containerID':0,'hostID':1000,"
    "'size':1}]}]}",
    ".mounts[0].uidMappings: the idmapped bind on /x needs a user namespace (\"user\" in "
    ".linux.namespaces)" },
  { "{" BASE ",'mounts':[{'destination':'/x','type':'tmpfs','source':'t','options':['idmap']}]}",
    ".mounts[0].options: only a bind mount can be idmapped (\"bind\" or \"rbind\" in options, or type "
    "\"bind\"); this one is type \"tmpfs\"" },
  { "{" BASE ",'mounts':[{'destination':'/x','type':'proc','source':'proc',"
    "'uidMappings':[{'containerID':0,'hostID':1000,'size':1}],'gidMappings':[{'containerID':0,'hostID':1000,"
    "'size':1}]}]}",
    ".mounts[0].uidMappings: only a bind mount can be idmapped" },
  { "{" BASE ",'mounts':[{'destination':'/x','source':'/s','options':['rbind','idmap'],"
    "'uidMappings':[{'containerID':0,'hostID':1000,'size':1}]}]}",
    ".mounts[0].gidMappings: required with uidMappings (runtime-spec: both or neither)" },
  { "{" BASE ",'mounts':[{'destination':'/x','source':'/s','options':['rbind'],"
    "'gidMappings':[{'containerID':0,'hostID':1000,'size':1}]}]}",
    ".mounts[0].uidMappings: required with gidMappings (runtime-spec: both or neither)" },
  { "{" BASE ",'mounts':[{'destination':'/x','source':'/s','options':['rbind'],'uidMappings':[],"
    "'gidMappings':[{'containerID':0,'hostID':1000,'size':1}]}]}",
    ".mounts[0].uidMappings: must not be empty" },
  { "{" BASE ",'mounts':[{'destination':'/x','source':'/s','options':['rbind'],"
    "'uidMappings':[{'containerID':0,'hostID':1000,'size':0}],'gidMappings':[]}]}",
    ".mounts[0].uidMappings[0].size: must be greater than 0" },
  { "{" BASE ",'mounts':[{'destination':'/x','source':'/s','options':['rbind'],"
    "'uidMappings':[{'containerID':0,'hostID':1000,'size':10},{'containerID':5,'hostID':2000,'size':1}],"
    "'gidMappings':[{'containerID':0,'hostID':1000,'size':1}]}]}",
    ".mounts[0].uidMappings[1].containerID: the range overlaps entry 0's" },
  { "{" BASE ",'mounts':[{'destination':'/x','source':'/s','options':['rbind'],"
    "'uidMappings':[{'containerID':0,'hostID':1000,'size':1}],"
    "'gidMappings':[{'containerID':0,'hostID':1000,'size':10},{'containerID':10,'hostID':1009,'size':1}]}]}",
    ".mounts[0].gidMappings[1].hostID: the range overlaps entry 0's" },
  { "{" BASE ",'mounts':[{'destination':'/x','source':'/s','options':['rbind'],"
    "'uidMappings':{'containerID':0},'gidMappings':[]}]}",
    ".mounts[0].uidMappings: must be an array" },
  { "{" BASE ",'linux':{'uidMappings':[{'containerID':0,'hostID':1000,'size':2},"
    "{'containerID':1,'hostID':5000,'size':1}]}}",
    ".linux.uidMappings[1].containerID: the range overlaps entry 0's" },
  { "{" BASE ",'mounts':[{'destination':'/x','options':['ro']}]}",
    ".mounts[0].type: required unless the mount is a bind" },
  { "{" BASE ",'mounts':[{'destination':'/x','type':'tmpfs','options':'ro'}]}",
    ".mounts[0].options: must be an array" },
  { "{" BASE ",'linux':{'namespaces':[{'type':'pid'},{'type':'ipc'},"
    "{'type':'foo'}]}}",
    ".linux.namespaces[2].type: unknown namespace type \"foo\"" },
  { "{" BASE ",'linux':{'namespaces':[{'type':'pid'},{'type':'pid'}]}}",
    ".linux.namespaces[1].type: duplicate namespace type \"pid\"" },
  { "{" BASE ",'linux':{'namespaces':[{'type':'net'}]}}",
    ".linux.namespaces[0].type: unknown namespace type \"net\"" },
  { "{" BASE ",'linux':{'namespaces':[{'type':'network','path':'ns/net'}]}}",
    ".linux.namespaces[0].path: must be an absolute path" },
  { "{" BASE ",'linux':{'rootfsPropagation':'sideways'}}",
    ".linux.rootfsPropagation: unknown propagation \"sideways\"" },
  { "{" BASE ",'linux':{'uidMappings':[{'containerID':0,'hostID':1000,'size':0}]}}",
    ".linux.uidMappings[0].size: must be greater than 0" },
  { "{" BASE ",'linux':{'gidMappings':[{'containerID':0,'size':1}]}}",
    ".linux.gidMappings[0].hostID: required" },
  { "{" BASE ",'linux':{'uidMappings':[{'containerID':0,'hostID':4294967295,"
    "'size':2}]}}",
    ".linux.uidMappings[0].size: the range runs past the last id" },
  { "{" BASE ",'linux':{'uidMappings':[{'containerID':'0','hostID':1,'size':1}]}}",
    ".linux.uidMappings[0].containerID: must be an integer" },
  { "{" BASE ",'linux':{'devices':[{'type':'x','path':'/dev/x'}]}}",
    ".linux.devices[0].type: must be one of \"cbup\"" },
  { "{" BASE ",'linux':{'devices':[{'type':'c','major':1,'minor':3}]}}", ".linux.devices[0].path: required" },
  { "{" BASE ",'linux':{'devices':[{'type':'c','path':'/dev/x','major':1}]}}",
    ".linux.devices[0].minor: required for a 'c' device" },
  { "{" BASE ",'linux':{'devices':[{'type':'c','path':'/dev/x','major':1,'minor':3,"
    "'fileMode':25014}]}}",
    ".linux.devices[0].fileMode: 060666: a file type other than a 'c' device's" },
  { "{" BASE ",'linux':{'devices':[{'type':'c','path':'/dev/x','major':1,'minor':3,"
    "'fileMode':65536}]}}",
    ".linux.devices[0].fileMode: must be an integer between 0 and" },
  { "{" BASE ",'linux':{'resources':{'devices':[{'allow':true,'access':'rwx'}]}}}",
    ".linux.resources.devices[0].access: must be letters of \"rwm\"" },
  { "{" BASE ",'linux':{'resources':{'memory':{'limit':'1g'}}}}",
    ".linux.resources.memory.limit: must be an integer" },
  { "{" BASE ",'linux':{'resources':{'memory':{'swappiness':101}}}}",
    ".linux.resources.memory.swappiness: must be an integer between 0 and 100" },
  { "{" BASE ",'linux':{'resources':{'blockIO':{'weight':5}}}}",
    ".linux.resources.blockIO.weight: must be between 10 and 1000" },
  { "{" BASE ",'linux':{'resources':{'blockIO':{'throttleReadBpsDevice':[{'major':8,'rate':1}]}}}}",
    ".linux.resources.blockIO.throttleReadBpsDevice[0].minor: required" },
  { "{" BASE ",'linux':{'resources':{'blockIO':{'weightDevice':[{'major':7,'minor':0}]}}}}",
    ".linux.resources.blockIO.weightDevice[0].weight: required" },
  { "{" BASE ",'linux':{'resources':{'blockIO':{'weightDevice':[{'major':7,'minor':0,'weight':1001}]}}}}",
    ".linux.resources.blockIO.weightDevice[0].weight: must be between 10 and 1000" },
  { "{" BASE ",'linux':{'resources':{'blockIO':{'weightDevice':[{'major':7,'minor':0,'weight':500,"
    "'leafWeight':300}]}}}}",
    ".linux.resources.blockIO.weightDevice[0].leafWeight: leaf weights are not supported" },
  { "{" BASE ",'linux':{'resources':{'blockIO':{'leafWeight':300}}}}",
    ".linux.resources.blockIO.leafWeight: leaf weights are not supported" },
  { "{" BASE ",'linux':{'resources':{'network':{'classID':1}}}}",
    ".linux.resources.network.classID: net_cls is not supported by hako" },
  { "{" BASE ",'linux':{'resources':{'rdma':{'mlx5_0':{'hcaHandles':3}}}}}",
    ".linux.resources.rdma: rdma limits are not supported" },
  { "{" BASE ",'linux':{'personality':{'domain':'LINUX32'}}}", ".linux.personality: not supported by hako" },
  { "{" BASE ",'linux':{'mountLabel':'system_u:object_r:container_file_t:s0'}}",
    ".linux.mountLabel: hako does not apply SELinux labels" },
  { "{" BASE ",'process':{'args':['sh'],'selinuxLabel':'system_u:system_r:container_t:s0'}}",
    ".process.selinuxLabel: hako does not apply SELinux labels" },
  { "{" BASE ",'process':{'args':['sh'],'scheduler':{'policy':'SCHED_FIFO'}}}",
    ".process.scheduler: not supported by hako" },
  { "{" BASE ",'linux':{'seccomp':{'syscalls':[]}}}", ".linux.seccomp.defaultAction: required" },
  { "{" BASE ",'linux':{'seccomp':{'defaultAction':'SCMP_ACT_ALLOW',"
    "'syscalls':[{'names':[],'action':'SCMP_ACT_ERRNO'}]}}}",
    ".linux.seccomp.syscalls[0].names: must be a non-empty array" },
  { "{" BASE ",'hooks':{'prestart':[{'path':'/bin/true','timeout':0}]}}",
    ".hooks.prestart[0].timeout: must be a number of seconds greater than 0" },
  { "{" BASE ",'hooks':{'poststop':[{'path':'/a'},{'path':'true'}]}}",
    ".hooks.poststop[1].path: must be an absolute path" },
  { "{" BASE ",'hooks':{'createRuntime':[{'args':['x']}]}}", ".hooks.createRuntime[0].path: required" },
  { "{" BASE ",'annotations':{'a':1}}", ".annotations.a: must be a string" },
  { "{" BASE ",'annotations':{'org.x':true}}", ".annotations[\"org.x\"]: must be a string" },
  { "{" BASE ",'sandbox':[]}", ".sandbox: must be an object" },
  { "{" BASE ",'sandbox':{'root':'disk'}}", ".sandbox.root: must be \"bundle\" or \"tmpfs\"" },
  { "{" BASE ",'sandbox':{'network':{'mode':'none','allow':['pypi.org']}}}",
    ".sandbox.network.allow: only valid with mode \"allowlist\"" },
  { "{" BASE ",'sandbox':{'network':{'allow':['pypi.org']}}}", ".sandbox.network.mode: required" },
  { "{" BASE ",'sandbox':{'network':{'mode':'open'}}}", ".sandbox.network.mode: unknown mode \"open\"" },
  { "{" BASE ",'sandbox':{'limits':{'timeout':'30 parsecs'}}}",
    ".sandbox.limits.timeout: must be a positive duration" },
  { "{" BASE ",'sandbox':{'limits':{'timeout':'nan'}}}",
    ".sandbox.limits.timeout: must be a positive duration" },
  { "{" BASE ",'sandbox':{'limits':{'timeout':0}}}", ".sandbox.limits.timeout: must be a positive duration" },
  { "{" BASE ",'sandbox':{'limits':{'timeout':-5}}}",
    ".sandbox.limits.timeout: must be a positive duration" },
  { "{" BASE ",'sandbox':{'limits':{'max_output':-1}}}",
    ".sandbox.limits.max_output: must be an integer between 0 and" },
  { "{" BASE ",'sandbox':{'landlock':{'tcp_connect':[443,70000]}}}",
    ".sandbox.landlock.tcp_connect[1]: must be an integer between 1 and 65535" },
  { "{" BASE ",'sandbox':{'landlock':{'tcp_connect':[0]}}}",
    ".sandbox.landlock.tcp_connect[0]: must be an integer between 1 and 65535" },
  { "{" BASE ",'sandbox':{'landlock':{'tcp_bind':[-1]}}}",
    ".sandbox.landlock.tcp_bind[0]: must be an integer between 0 and 65535" },
  { "{" BASE ",'sandbox':{'landlock':{'read':['/usr','lib']}}}",
    ".sandbox.landlock.read[1]: must be an absolute path" },
  { "{" BASE ",'sandbox':{'landlock':{'required':'yes'}}}",
    ".sandbox.landlock.required: must be true or false" },
  { "{" BASE ",'sandbox':{'workdir':{'path':'work'}}}", ".sandbox.workdir.path: must be an absolute path" },
  { "{" BASE ",'sandbox':{'image':''}}", ".sandbox.image: must not be empty" },
  { "{" BASE ",'sandbox':{'limits':{'disk':'10q'}}}", ".sandbox.limits.disk: must be a size" },
  { "{" BASE ",'sandbox':{'limits':{'disk':-2}}}", ".sandbox.limits.disk: must be a size" },
  { "{" BASE ",'sandbox':{'limits':{'disk':1.5}}}", ".sandbox.limits.disk: must be a size" },
  { "{" BASE ",'sandbox':{'limits':{'disk':true}}}", ".sandbox.limits.disk: must be a size" },
  { "{" BASE ",'sandbox':{'limits':{'disk':'1m'}}}", ".sandbox.limits.disk: must be at least 16m" },
  { "{" BASE ",'sandbox':{'limits':{'disk':0}}}", ".sandbox.limits.disk: must be at least 16m" },
};

/* The org.hako.* annotations: the sandbox's validation, named by annotation. */
static void
test_annotations (void)
{
#define ANN "{" BASE ",'process':{'args':['sh']},'annotations':{"
  hk_err err = { 0 };
  struct oci_spec *s
      = parse_q (ANN "'org.hako.network':'allowlist','org.hako.allow':'pypi.org, 127.0.0.1:8080',"
                     "'org.hako.landlock.read':'/usr,/etc','org.hako.landlock.tcp-connect':'443',"
                     "'org.hako.landlock.scoped':'true','org.hako.timeout':'30s',"
                     "'org.hako.max-output':'2m','org.hako.disk':'64m','other':'x'}}",
                 &err);
  ok (s != NULL, "annotations parse (%s)", s ? "ok" : err.msg);
  ok (s && s->sandbox.present && s->sandbox.net_mode == HAKO_NET_ALLOWLIST
          && strv_len (s->sandbox.net_allow) == 2 && strcmp (s->sandbox.net_allow[1], "127.0.0.1:8080") == 0,
      "org.hako.network and org.hako.allow (items trimmed)");
  ok (s && s->sandbox.landlock.present && s->sandbox.landlock.required && s->sandbox.landlock.scoped
          && strv_len (s->sandbox.landlock.read) == 2 && s->sandbox.landlock.n_tcp_connect == 1
          && s->sandbox.landlock.tcp_connect[0] == 443,
      "org.hako.landlock.* (required by default)");
  ok (s && s->sandbox.has_timeout && s->sandbox.timeout_ms == 30000 && s->sandbox.has_max_output
          && s->sandbox.max_output == 2 << 20 && s->sandbox.has_disk && s->sandbox.disk == 64 << 20,
      "org.hako.timeout, max-output, disk");
  ok (s && !s->sandbox.net_join, "no pod network to join outside a pod");
  oci_spec_free (s);
  /* The pod's pause container takes the network annotations only. */
  s = parse_q (ANN "'io.kubernetes.cri.container-type':'sandbox','org.hako.network':'none',"
                   "'org.hako.timeout':'1s','org.hako.landlock.read':'/'}}",
               &err);
  ok (s && s->sandbox.net_mode == HAKO_NET_NONE && !s->sandbox.has_timeout && !s->sandbox.landlock.present,
      "a pod's sandbox container: network only (%s)", s ? "ok" : err.msg);
  oci_spec_free (s);
  /* A pod's container that joins the pod's netns in allowlist mode. */
  s = parse_q (ANN "'io.kubernetes.cri.container-type':'container','org.hako.network':'allowlist'},"
                   "'linux':{'namespaces':[{'type':'network','path':'/proc/1/ns/net'}]}}",
               &err);
  ok (s && s->sandbox.net_join, "a pod's container joins the pod's allowlist netns (%s)", s ? "ok" : err.msg);
  oci_spec_free (s);
  fails_with (ANN "'org.hako.networks':'none'}}", "annotation org.hako.networks: unknown");
  fails_with (ANN "'org.hako.network':'open'}}",
              "annotation org.hako.network=\"open\": .sandbox.network.mode: unknown mode \"open\"");
  fails_with (ANN "'org.hako.allow':'pypi.org'}}",
              "annotation org.hako.allow: needs org.hako.network: allowlist");
  fails_with (
      ANN "'org.hako.network':'host','org.hako.allow':'pypi.org'}}",
      "annotation org.hako.allow=\"pypi.org\": .sandbox.network.allow: only valid with mode \"allowlist\"");
  fails_with (ANN "'org.hako.network':'allowlist','org.hako.allow':'a.org,,b.org'}}",
              "annotation org.hako.allow=\"a.org,,b.org\": .sandbox.network.allow[1]: must not be empty");
  fails_with (ANN "'org.hako.timeout':'soon'}}",
              "annotation org.hako.timeout=\"soon\": .sandbox.limits.timeout: must be a positive duration");
  fails_with (
      ANN "'org.hako.max-output':'lots'}}",
      "annotation org.hako.max-output=\"lots\": .sandbox.limits.max_output: must be a number of bytes");
  fails_with (ANN "'org.hako.disk':'1m'}}",
              "annotation org.hako.disk=\"1m\": .sandbox.limits.disk: must be at least 16m");
  fails_with (
      ANN "'org.hako.landlock.read':'/usr,etc'}}",
      "annotation org.hako.landlock.read=\"/usr,etc\": .sandbox.landlock.read[1]: must be an absolute path");
  fails_with (ANN "'org.hako.landlock.tcp-bind':'80,http'}}",
              "annotation org.hako.landlock.tcp-bind: \"http\" is not a port number");
  fails_with (
      ANN "'org.hako.landlock.tcp-connect':'70000'}}",
      "annotation org.hako.landlock.tcp-connect=\"70000\": .sandbox.landlock.tcp_connect[0]: must be an "
      "integer between 1 and 65535");
  fails_with (ANN "'org.hako.landlock.scoped':'yes'}}",
              "annotation org.hako.landlock.scoped: must be \"true\" or \"false\"");
  /* Two sources for one setting: refused. */
  fails_with ("{" BASE ",'process':{'args':['sh']},'sandbox':{'network':{'mode':'none'}},"
              "'annotations':{'org.hako.network':'host'}}",
              "annotations org.hako.* and the config's .sandbox.network both set");
  fails_with ("{" BASE ",'process':{'args':['sh']},'sandbox':{'limits':{'disk':'1g'}},"
              "'annotations':{'org.hako.disk':'2g'}}",
              "annotations org.hako.* and the config's .sandbox.limits.disk both set");
  /* A bad value on the pod's sandbox container still fails (RunPodSandbox). */
  fails_with (ANN "'io.kubernetes.cri.container-type':'sandbox','org.hako.timeout':'x'}}",
              "annotation org.hako.timeout=\"x\"");
#undef ANN
}

/* podman and docker write a host node's whole st_mode as fileMode. */
static void
test_device_mode (void)
{
  hk_err err = { 0 };
  struct oci_spec *s = parse_q ("{" BASE ",'linux':{'devices':["
                                "{'type':'c','path':'/dev/a','major':1,'minor':3,'fileMode':8630},"
                                "{'type':'b','path':'/dev/b','major':7,'minor':0,'fileMode':25008},"
                                "{'type':'p','path':'/dev/p','fileMode':4516}]}}",
                                &err);
  ok (s != NULL, "fileMode with the device's own file type (%s)", s ? "ok" : err.msg);
  ok (s && s->linux.n_devices == 3 && s->linux.devices[0].file_mode == 0666
          && s->linux.devices[1].file_mode == 0660 && s->linux.devices[2].file_mode == 0644,
      "only its permission bits are kept");
  oci_spec_free (s);
}

static void
test_malformed (void)
{
  for (size_t i = 0; i < sizeof malformed / sizeof *malformed; i++)
    fails_with (malformed[i].json, malformed[i].want);
}

/* Options -> flags, clear_flags, propagation, data, is_bind. */
static void
test_mount_options (void)
{
  hk_err err = { 0 };
  struct oci_spec *s
      = parse_q ("{" BASE ",'mounts':["
                 "{'destination':'/m0','type':'tmpfs','options':['nosuid','ro','rw']},"
                 "{'destination':'/m1','source':'/x','options':['rbind','rprivate','ro']},"
                 "{'destination':'/m2','type':'bind','source':'/x'},"
                 "{'destination':'/m3','type':'tmpfs','options':['nosuid','mode=755','size=65536k',"
                 "'strictatime','tmpcopyup']},"
                 "{'destination':'/m4','type':'tmpfs','options':['sync','async','suid','dev','exec']},"
                 "{'destination':'/m5','type':'tmpfs','options':['shared','slave']},"
                 "{'destination':'/m6','type':'none','source':'/sys','options':['rbind','nosuid','ro']},"
                 "{'destination':'/m7','type':'tmpfs','options':['nodev','noexec','unbindable',"
                 "'uid=1000','gid=1000']},"
                 "{'destination':'/m8','type':'ext4','options':['noatime','nodiratime','relatime',"
                 "'dirsync','mand','remount','defaults']},"
                 "{'destination':'/m9','type':'tmpfs','options':['norelatime','nostrictatime','atime',"
                 "'diratime','nomand','runbindable']},"
                 "{'destination':'/m10','source':'/x','options':['bind','rshared']}]}",
                 &err);
  ok (s != NULL, "mount options parse_q (%s)", s ? "ok" : err.msg);
  if (s == NULL)
    return;
  struct oci_mount *m = s->mounts;
  ok (m[0].flags == MS_NOSUID && m[0].clear_flags == MS_RDONLY && m[0].data == NULL && !m[0].is_bind,
      "nosuid,ro,rw: rw clears ro");
  ok (m[1].is_bind && m[1].type == NULL && m[1].flags == (MS_BIND | MS_REC | MS_RDONLY)
          && m[1].propagation == (MS_PRIVATE | MS_REC),
      "rbind,rprivate,ro without a type: a recursive bind");
  ok (m[2].is_bind && m[2].flags == MS_BIND, "type bind without options: a bind");
  is_str (m[3].data, "mode=755,size=65536k", "data keeps fs options in order, drops tmpcopyup");
  ok (m[3].flags == (MS_NOSUID | MS_STRICTATIME), "nosuid,strictatime");
  ok (m[4].flags == 0 && m[4].clear_flags == (MS_SYNCHRONOUS | MS_NOSUID | MS_NODEV | MS_NOEXEC),
      "sync then async, suid, dev, exec: all cleared");
  ok (m[5].propagation == MS_SLAVE && m[5].data == NULL, "the last propagation wins");
  ok (m[6].is_bind && m[6].flags == (MS_BIND | MS_REC | MS_NOSUID | MS_RDONLY),
      "type none with rbind (runc --rootless /sys) is a bind");
  ok (m[7].flags == (MS_NODEV | MS_NOEXEC) && m[7].propagation == MS_UNBINDABLE
          && strcmp (m[7].data, "uid=1000,gid=1000") == 0,
      "nodev,noexec,unbindable with data");
  ok (m[8].flags == (MS_NOATIME | MS_NODIRATIME | MS_RELATIME | MS_DIRSYNC | MS_MANDLOCK | MS_REMOUNT),
      "noatime,nodiratime,relatime,dirsync,mand,remount,defaults");
  ok (m[9].flags == 0
          && m[9].clear_flags == (MS_RELATIME | MS_STRICTATIME | MS_NOATIME | MS_NODIRATIME | MS_MANDLOCK)
          && m[9].propagation == (MS_UNBINDABLE | MS_REC),
      "norelatime,nostrictatime,atime,diratime,nomand,runbindable");
  ok (m[10].is_bind && m[10].flags == MS_BIND && m[10].propagation == (MS_SHARED | MS_REC), "bind,rshared");
  oci_spec_free (s);
}

/* A mount's idmapping: the options, its own mappings, made nosuid and nodev. */
static void
test_mount_idmap (void)
{
  hk_err err = { 0 };
  struct oci_spec *s = parse_q (
      "{" BASE ",'linux':{'namespaces':[{'type':'user'},{'type':'mount'}],"
      "'uidMappings':[{'containerID':0,'hostID':1000000000,'size':65536}],"
      "'gidMappings':[{'containerID':0,'hostID':1000000000,'size':65536}]},'mounts':["
      "{'destination':'/m0','type':'bind','source':'/x','options':['rbind','idmap','suid']},"
      "{'destination':'/m1','source':'/x','options':['rbind','ridmap','ro']},"
      "{'destination':'/m2','source':'/x','options':['bind'],"
      "'uidMappings':[{'containerID':0,'hostID':5,'size':2},{'containerID':2,'hostID':100,'size':3}],"
      "'gidMappings':[{'containerID':0,'hostID':7,'size':1}]},"
      "{'destination':'/m3','source':'/x','options':['rbind']}]}",
      &err);
  ok (s != NULL, "idmapped mounts parse (%s)", s ? "ok" : err.msg);
  if (s == NULL)
    return;
  struct oci_mount *m = s->mounts;
  ok (m[0].idmap && !m[0].idmap_recursive && m[0].data == NULL && m[0].n_uid_mappings == 0,
      "idmap: not recursive, not passed to mount(2), the sandbox's mappings");
  ok ((m[0].flags & (MS_NOSUID | MS_NODEV)) == (MS_NOSUID | MS_NODEV) && !(m[0].clear_flags & MS_NOSUID),
      "an idmapped bind is nosuid and nodev, whatever it asks (\"suid\")");
  ok (m[1].idmap && m[1].idmap_recursive && (m[1].flags & MS_RDONLY), "ridmap, ro: recursive");
  ok (m[2].idmap && m[2].n_uid_mappings == 2 && m[2].uid_mappings[1].container_id == 2
          && m[2].uid_mappings[1].host_id == 100 && m[2].uid_mappings[1].size == 3 && m[2].n_gid_mappings == 1
          && m[2].gid_mappings[0].host_id == 7,
      "uidMappings and gidMappings without the option: idmapped with them (as runc)");
  ok (!m[3].idmap && !(m[3].flags & MS_NOSUID), "a plain rbind is not");
  ok (oci_spec_rw_idmap (s) == &m[0], "the first read-write idmapped bind");
  oci_spec_free (s);
}

static struct oci_spec *
profile (enum oci_profile p, bool rootless, char *const *args, char **text)
{
  hk_err err = { 0 };
  const struct oci_profile_limits lim = { .memory = 1 << 30, .pids = 4096 };
  struct oci_spec *s = spec_profile (p, rootless, args, &lim, text, &err);
  if (s == NULL)
    printf ("#   profile: %s\n", err.msg);
  return s;
}

static void
check_common_profile (const struct oci_spec *s, bool rootless, const char *what)
{
  const struct oci_process *p = s->process;
  ok (strcmp (s->oci_version, "1.2.0") == 0 && !p->terminal && p->no_new_privileges
          && strcmp (s->hostname, "hako") == 0 && s->root_readonly && strcmp (s->root_path, "rootfs") == 0,
      "%s: version, terminal false, noNewPrivileges, hostname, root", what);
  ok (strv_len (p->caps.bounding) == 3 && strv_has (p->caps.effective, "CAP_KILL") && p->caps.ambient == NULL
          && p->n_rlimits == 1 && p->rlimits[0].hard == 1024,
      "%s: runc's capabilities, no ambient, NOFILE 1024", what);
  ok (strv_len (s->linux.masked_paths) == 10 && strv_len (s->linux.readonly_paths) == 5,
      "%s: masked and read-only paths", what);
  ok (s->sandbox.net_mode == HAKO_NET_NONE, "%s: network none", what);
  ok (oci_spec_ns (s, OCI_NS_PID) && oci_spec_ns (s, OCI_NS_IPC) && oci_spec_ns (s, OCI_NS_UTS)
          && oci_spec_ns (s, OCI_NS_MOUNT) && oci_spec_ns (s, OCI_NS_CGROUP),
      "%s: pid, ipc, uts, mount, cgroup namespaces", what);
  const struct oci_mount *pts = find_mount (s, "/dev/pts");
  const struct oci_mount *sys = find_mount (s, "/sys");
  if (!rootless)
    {
      ok (oci_spec_ns (s, OCI_NS_NETWORK) && oci_spec_ns (s, OCI_NS_USER) && s->linux.n_uid_mappings == 1
              && s->linux.uid_mappings[0].container_id == 0 && s->linux.uid_mappings[0].host_id == 1000000000u
              && s->linux.uid_mappings[0].size == 65536 && s->linux.n_gid_mappings == 1
              && s->linux.gid_mappings[0].host_id == 1000000000u,
          "%s: network namespace, and a user namespace mapping 0..65535 to unprivileged host ids", what);
      /* The bundle's rootfs is idmapped to it; the host profile's root is a tmpfs. */
      ok (s->sandbox.idmap == (s->sandbox.root != HAKO_ROOT_TMPFS), "%s: sandbox.idmap for a bundle rootfs",
          what);
      ok (pts && strstr (pts->data, "gid=5") && sys && !sys->is_bind && strcmp (sys->type, "sysfs") == 0
              && (sys->flags & MS_RDONLY),
          "%s: devpts gid=5, sysfs read-only", what);
      const struct oci_resources *r = &s->linux.resources;
      ok (r->has_memory_limit && r->memory_limit == 1 << 30 && r->has_pids_limit && r->pids_limit == 4096
              && r->n_devices == 1 && !r->devices[0].allow,
          "%s: the limits given (memory, pids) and runc's device deny-all", what);
      return;
    }
  ok (oci_spec_ns (s, OCI_NS_USER) && !oci_spec_ns (s, OCI_NS_NETWORK) && s->linux.n_uid_mappings == 1
          && s->linux.uid_mappings[0].host_id == getuid () && s->linux.uid_mappings[0].container_id == 0
          && s->linux.uid_mappings[0].size == 1 && s->linux.n_gid_mappings == 1
          && s->linux.gid_mappings[0].host_id == getgid (),
      "%s: user namespace mapping the caller to 0, no network namespace", what);
  ok (pts && strstr (pts->data, "gid=") == NULL && sys && sys->is_bind && strcmp (sys->source, "/sys") == 0
          && sys->flags == (MS_BIND | MS_REC | MS_NOSUID | MS_NOEXEC | MS_NODEV | MS_RDONLY),
      "%s: devpts without gid=5, /sys a read-only rbind", what);
  ok (find_mount (s, "/sys/fs/cgroup") == NULL, "%s: no cgroup mount", what);
  ok (!s->linux.resources.has_memory_limit && !s->linux.resources.has_pids_limit
          && s->linux.resources.n_devices == 0,
      "%s: no linux.resources (an ordinary user cannot write cgroup limits)", what);
}

static void
test_profiles (void)
{
  ok (oci_profile_from_name ("default") == OCI_PROFILE_DEFAULT
          && oci_profile_from_name ("host") == OCI_PROFILE_HOST && oci_profile_from_name ("Host") == -1
          && oci_profile_from_name (NULL) == -1,
      "profile names");
  for (int rootless = 0; rootless <= 1; rootless++)
    {
      cleanup_free char *dt = NULL, *ht = NULL;
      struct oci_spec *d = profile (OCI_PROFILE_DEFAULT, rootless, NULL, &dt);
      struct oci_spec *h = profile (OCI_PROFILE_HOST, rootless, NULL, &ht);
      ok (d != NULL, "default%s profile parses", rootless ? " rootless" : "");
      ok (h != NULL, "host%s profile parses", rootless ? " rootless" : "");
      if (d == NULL || h == NULL)
        {
          oci_spec_free (d);
          oci_spec_free (h);
          continue;
        }
      ok (dt[strlen (dt) - 1] == '}' && strstr (dt, "\n\t\"process\": {") != NULL,
          "profile text is pretty, tab-indented, without a trailing newline");
      check_common_profile (d, rootless, rootless ? "default rootless" : "default");
      check_common_profile (h, rootless, rootless ? "host rootless" : "host");
      ok (strcmp (d->sandbox.profile, "default") == 0 && d->sandbox.root == HAKO_ROOT_BUNDLE
              && strcmp (d->process->cwd, "/") == 0 && strcmp (d->process->args[0], "sh") == 0,
          "default: sandbox profile, bundle root, cwd /, sh");
      ok ((find_mount (d, "/sys/fs/cgroup") != NULL) == !rootless && find_mount (d, "/usr") == NULL,
          "default: cgroup mount unless rootless, no host binds");
      ok (strcmp (h->sandbox.profile, "host") == 0 && h->sandbox.root == HAKO_ROOT_TMPFS
              && h->sandbox.workdir_persist && strcmp (h->sandbox.workdir_path, "/work") == 0,
          "host: tmpfs root, persistent /work");
      ok (strcmp (h->process->cwd, "/work") == 0 && strv_has (h->process->env, "HOME=/work")
              && strv_has (h->process->env, "TERM=xterm"),
          "host: cwd /work, HOME=/work");
      const struct oci_mount *usr = find_mount (h, "/usr");
      const struct oci_mount *tmp = find_mount (h, "/tmp");
      ok (usr && usr->is_bind && strcmp (usr->source, "/usr") == 0
              && usr->flags == (MS_BIND | MS_REC | MS_RDONLY | MS_NOSUID | MS_NODEV),
          "host: /usr bound read-only, nosuid, nodev");
      ok (find_mount (h, "/etc") && (access ("/lib", F_OK) != 0) == (find_mount (h, "/lib") == NULL)
              && (access ("/libx32", F_OK) != 0) == (find_mount (h, "/libx32") == NULL),
          "host: /etc bound; /lib* only when they exist here");
      ok (tmp && strcmp (tmp->type, "tmpfs") == 0 && strstr (tmp->data, "mode=1777"), "host: a fresh /tmp");
      ok (find_mount (h, "/sys/fs/cgroup") == NULL, "host: no cgroup mount");
      oci_spec_free (d);
      oci_spec_free (h);
    }
  char *args[] = { "python3", "-c", "print(\"hi\")", NULL };
  cleanup_free char *t = NULL;
  struct oci_spec *s = profile (OCI_PROFILE_HOST, false, args, &t);
  ok (s && strv_len (s->process->args) == 3 && strcmp (s->process->args[2], "print(\"hi\")") == 0,
      "the caller's args, quotes and all, replace sh");
  oci_spec_free (s);
  hk_err err = { 0 };
  char *bad = NULL;
  ok (oci_profile_generate ((enum oci_profile)7, false, NULL, NULL, &bad, &err) < 0 && bad == NULL,
      "an unknown profile is an error");
}

/* The limits the profiles write: 4096 tasks, min(4 GiB, half the RAM), or
 * the node's defaults (-1: no limit). */
static void
test_profile_limits (void)
{
  struct oci_profile_limits l;
  oci_profile_limits (NULL, UINT64_C (32) << 30, &l);
  ok (l.memory == INT64_C (4) << 30 && l.pids == 4096, "32 GiB of RAM: 4 GiB, 4096 tasks");
  oci_profile_limits (NULL, (UINT64_C (3) << 30) + 12345, &l);
  ok (l.memory == INT64_C (1536) << 20, "3 GiB of RAM: half, rounded down to a MiB (1536 MiB)");
  oci_profile_limits (NULL, 0, &l);
  ok (l.memory == INT64_C (4) << 30, "RAM unknown: 4 GiB");
  struct oci_node n = { .overcommit = 1, .default_memory = 256 << 20, .default_pids = 100 };
  oci_profile_limits (&n, UINT64_C (32) << 30, &l);
  ok (l.memory == 256 << 20 && l.pids == 100, "node defaults replace hako's");
  n.default_memory = -1;
  n.default_pids = 0;
  oci_profile_limits (&n, UINT64_C (32) << 30, &l);
  ok (l.memory == -1 && l.pids == 4096, "node default -1: no memory limit; an unset one keeps hako's");
  cleanup_free char *text = NULL;
  hk_err err = { 0 };
  struct oci_spec *s = NULL;
  const struct oci_profile_limits none = { .memory = -1, .pids = -1 };
  ok (oci_profile_generate (OCI_PROFILE_HOST, false, NULL, &none, &text, &err) == 0
          && oci_spec_parse (text, strlen (text), &s, &err) == 0 && s->linux.resources.has_memory_limit
          && s->linux.resources.memory_limit == -1 && s->linux.resources.has_pids_limit
          && s->linux.resources.pids_limit == -1,
      "-1 is written as -1: no limit, asked for");
  oci_spec_free (s);
}

/* sandbox.init: no args needed; the host profile without a command uses it. */
static void
test_init (void)
{
  hk_err err = { 0 };
  struct oci_spec *s = parse_q ("{" BASE ",'sandbox':{'init':true},'process':{'cwd':'/'}}", &err);
  ok (s && s->sandbox.init && s->process->args && s->process->args[0] == NULL,
      "sandbox.init: process.args may be absent");
  oci_spec_free (s);
  s = parse_q ("{" BASE ",'sandbox':{'init':true},'process':{'args':[]}}", &err);
  ok (s && s->sandbox.init && s->process->args[0] == NULL, "sandbox.init: process.args may be empty");
  oci_spec_free (s);
  fails_with ("{" BASE ",'process':{'cwd':'/'}}", ".process.args: must be a non-empty array");
  fails_with ("{" BASE ",'sandbox':{'init':true},'process':{'args':'sh'}}",
              ".process.args: must be a non-empty array");
  fails_with ("{" BASE ",'sandbox':{'init':'yes'},'process':{'args':['sh']}}", ".sandbox.init");
  cleanup_free char *t1 = NULL, *t2 = NULL, *t3 = NULL;
  char *args[] = { "true", NULL };
  struct oci_spec *h = profile (OCI_PROFILE_HOST, false, NULL, &t1);
  struct oci_spec *ha = profile (OCI_PROFILE_HOST, false, args, &t2);
  struct oci_spec *d = profile (OCI_PROFILE_DEFAULT, false, NULL, &t3);
  ok (h && h->sandbox.init && h->process->args[0] == NULL,
      "host profile without a command: hako's init, no args");
  ok (ha && !ha->sandbox.init && strcmp (ha->process->args[0], "true") == 0,
      "host profile with a command: no init");
  ok (d && !d->sandbox.init && strcmp (d->process->args[0], "sh") == 0,
      "default profile without a command: sh, no init");
  oci_spec_free (h);
  oci_spec_free (ha);
  oci_spec_free (d);
}

/* exec --process FILE: a process object on its own. */
static void
test_process_file (void)
{
  hk_err err = { 0 };
  struct oci_process *p = NULL;
  cleanup_free char *good = q ("{'args':['sh','-c','x'],'env':['A=1'],'cwd':'/tmp','terminal':true,"
                               "'consoleSize':{'height':24,'width':80},'user':{'uid':7,'gid':8},"
                               "'capabilities':{'bounding':['CAP_KILL']},'noNewPrivileges':true,"
                               "'rlimits':[{'type':'RLIMIT_NOFILE','soft':10,'hard':20}],"
                               "'apparmorProfile':''}");
  ok (oci_process_parse (good, strlen (good), &p, &err) == 0 && strv_len (p->args) == 3
          && strcmp (p->env[0], "A=1") == 0 && strcmp (p->cwd, "/tmp") == 0 && p->terminal
          && p->console_height == 24 && p->console_width == 80 && p->user.uid == 7 && p->user.gid == 8
          && p->has_caps && strcmp (p->caps.bounding[0], "CAP_KILL") == 0 && p->no_new_privileges
          && p->n_rlimits == 1 && p->rlimits[0].hard == 20,
      "a process file: every field");
  oci_process_free (p);
  p = NULL;
  cleanup_free char *noargs = q ("{'env':['A=1']}");
  ok (oci_process_parse (noargs, strlen (noargs), &p, &err) == 0 && p->args[0] == NULL
          && strcmp (p->cwd, "/") == 0,
      "a process file without args (the command line's), cwd /");
  oci_process_free (p);
  p = NULL;
  cleanup_free char *badenv = q ("{'args':['x'],'env':['NOEQUALS']}");
  ok (oci_process_parse (badenv, strlen (badenv), &p, &err) < 0 && p == NULL
          && strstr (err.msg, ".process.env[0]"),
      "a bad env entry is refused with its path (%s)", err.msg);
  ok (oci_process_parse ("[1]", 3, &p, &err) < 0 && p == NULL, "a process must be an object");
  ok (oci_process_parse ("{", 1, &p, &err) < 0 && p == NULL, "broken JSON is refused");
}

static void
test_load (void)
{
  char dir[] = "/tmp/hako-test-spec.XXXXXX";
  hk_err err = { 0 };
  struct oci_spec *s = NULL;
  if (mkdtemp (dir) == NULL)
    {
      skip ("mkdtemp failed", "oci_spec_load");
      return;
    }
  cleanup_free char *path = xasprintf ("%s/config.json", dir);
  cleanup_free char *good = q ("{" BASE ",'process':{'args':['true']}}");
  ok (file_write_atomic (path, good, strlen (good), 0644, &err) == 0 && oci_spec_load (path, &s, &err) == 0
          && strcmp (s->process->args[0], "true") == 0,
      "oci_spec_load reads a file");
  oci_spec_free (s);
  s = NULL;
  cleanup_free char *bad = q ("{" BASE ",'process':{'args':[]}}");
  cleanup_free char *want = xasprintf ("%s: .process.args: must be a non-empty array", path);
  file_write_atomic (path, bad, strlen (bad), 0644, &err);
  ok (oci_spec_load (path, &s, &err) < 0 && s == NULL, "oci_spec_load fails on a bad config");
  is_str (err.msg, want, "the message names the file, then the JSON path");
  unlink (path);
  ok (oci_spec_load (path, &s, &err) < 0 && strstr (err.msg, "No such file"),
      "a missing file is an error (%s)", err.msg);
  rmdir (dir);
}

/* The text with spaces and newlines taken out (the values here have none). */
static char *
squeeze (const char *s)
{
  char *out = xmalloc (strlen (s) + 1), *d = out;
  for (; *s; s++)
    if (*s != ' ' && *s != '\n')
      *d++ = *s;
  *d = '\0';
  return out;
}

static void
test_override (void)
{
  hk_err err = { 0 };
  char *out = NULL, *sq;
  size_t len;
  /* Nothing asked: the text as it was, numbers in their own spelling. */
  const char *base = "{\"process\":{\"env\":[\"PATH=/bin\",\"A=1\"],\"user\":{\"uid\":0,\"gid\":0,"
                     "\"additionalGids\":[5]},\"cwd\":\"/\"},\"mounts\":[{\"destination\":\"/tmp/\","
                     "\"type\":\"tmpfs\"},{\"destination\":\"/a\",\"type\":\"bind\"}],"
                     "\"annotations\":{\"process.cwd\":\"x\"},\"n\":1.50}";
  struct oci_overrides none = { 0 };
  ok (oci_spec_override (base, strlen (base), &none, &out, &len, &err) == 0, "no override: %s", err.msg);
  sq = squeeze (out);
  is_str (sq, base, "no override: the same config");
  free (sq);
  free (out);

  char *env[] = { "A=2", "B=3", NULL };
  char *topts[] = { "size=1", NULL };
  struct oci_override_mount m[] = { { "/tmp", "tmpfs", "tmpfs", topts } };
  struct oci_overrides ov = { .has_memory = true,
                              .memory = 1024,
                              .has_cpus = true,
                              .cpu_quota = 50000,
                              .cpu_period = 100000,
                              .env = env,
                              .mounts = m,
                              .n_mounts = 1,
                              .cwd = "/w",
                              .has_user = true,
                              .uid = 7,
                              .gid = 8,
                              .hostname = "h",
                              .timeout = "30s",
                              .read_only = true };
  ok (oci_spec_override (base, strlen (base), &ov, &out, &len, &err) == 0, "override: %s", err.msg);
  sq = squeeze (out);
  /* env: A replaced in place, B added; the old user's groups dropped; /tmp/
   * replaced by the new /tmp (same place, lexically); a key holding dots is
   * no path; absent objects made. */
  is_str (
      sq,
      "{\"process\":{\"env\":[\"PATH=/bin\",\"A=2\",\"B=3\"],\"user\":{\"uid\":7,\"gid\":8},\"cwd\":\"/w\"},"
      "\"mounts\":[{\"destination\":\"/a\",\"type\":\"bind\"},{\"destination\":\"/tmp\",\"type\":\"tmpfs\","
      "\"source\":\"tmpfs\",\"options\":[\"size=1\"]}],\"annotations\":{\"process.cwd\":\"x\"},\"n\":1.50,"
      "\"linux\":{\"resources\":{\"memory\":{\"limit\":1024},\"cpu\":{\"quota\":50000,\"period\":100000}}},"
      "\"hostname\":\"h\",\"sandbox\":{\"limits\":{\"timeout\":\"30s\"}},\"root\":{\"readonly\":true}}",
      "override: each field where it belongs");
  free (sq);
  free (out);
  /* A member that is not an object is replaced by one. */
  const char *odd = "{\"linux\":{\"resources\":null},\"root\":5}";
  ok (oci_spec_override (odd, strlen (odd), &ov, &out, &len, &err) == 0, "non-object members");
  sq = squeeze (out);
  ok (strstr (sq, "\"linux\":{\"resources\":{\"memory\":{\"limit\":1024}") != NULL
          && strstr (sq, "\"root\":{\"readonly\":true}") != NULL,
      "null and a number become objects: %s", sq);
  free (sq);
  free (out);
  ok (oci_spec_override ("[1]", 3, &ov, &out, &len, &err) < 0, "not an object: refused");
}

int
main (void)
{
  test_strv_and_ns ();
  test_runc_spec ();
  test_full_config ();
  test_defaults_and_nulls ();
  test_malformed ();
  test_annotations ();
  test_device_mode ();
  test_mount_options ();
  test_mount_idmap ();
  test_profiles ();
  test_profile_limits ();
  test_init ();
  test_process_file ();
  test_load ();
  test_override ();
  return tap_done ();
}
