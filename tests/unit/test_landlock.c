/* test_landlock: the Landlock plan — which paths and ports get which rights,
 * explicit and derived from the mounts — its checks against an (injected)
 * ABI, and building and enforcing a ruleset in a child process. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/util.h"
#include "oci/spec.h"
#include "runtime/confine/landlock.h"
#include "tests/unit/helpers.h"
#include "tests/unit/tap.h"

#define R (LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR)
#define X LANDLOCK_ACCESS_FS_EXECUTE
#define W LANDLOCK_ACCESS_FS_WRITE_FILE
#define MKREG LANDLOCK_ACCESS_FS_MAKE_REG
#define MKCHR LANDLOCK_ACCESS_FS_MAKE_CHAR
#define TRUNC LANDLOCK_ACCESS_FS_TRUNCATE
#define REFER LANDLOCK_ACCESS_FS_REFER
#define IOCTL LANDLOCK_ACCESS_FS_IOCTL_DEV
#define CONNECT LANDLOCK_ACCESS_NET_CONNECT_TCP
#define BIND LANDLOCK_ACCESS_NET_BIND_TCP

#define BASE "'ociVersion':'1.0.0','root':{'path':'rootfs','readonly':true},'process':{'args':['sh']}"

/* Plan SPEC as if the kernel had ABI abi; NULL (and err filled) on refusal. */
static struct landlock_plan *
plan_abi (const struct oci_spec *s, int abi, hk_err *err)
{
  struct landlock_plan *p = NULL;
  err_clear (err);
  if (landlock_prepare_abi (s, abi, &p, err) < 0)
    return NULL;
  return p;
}

/* Has exactly: the rights in want are there, those in deny are not. */
static bool
rights (const struct landlock_plan *p, const char *path, uint64_t want, uint64_t deny)
{
  uint64_t a = landlock_plan_fs_access (p, path);
  if ((a & want) != want || (a & deny) != 0)
    {
      printf ("#   %s: access 0x%llx, want 0x%llx, deny 0x%llx\n", path, (unsigned long long)a,
              (unsigned long long)want, (unsigned long long)deny);
      return false;
    }
  return true;
}

static void
test_no_landlock (void)
{
  hk_err err;
  struct oci_spec *s = spec_q ("{" BASE "}");
  struct landlock_plan *p = (struct landlock_plan *)1;
  ok (s && landlock_prepare_abi (s, 7, &p, &err) == 0 && p == NULL, "no sandbox.landlock: no plan");
  oci_spec_free (s);

  s = spec_q ("{" BASE ",'sandbox':{'landlock':{}}}");
  p = s ? plan_abi (s, 0, &err) : NULL;
  uint64_t fs, net, sc;
  landlock_plan_handled (p, &fs, &net, &sc);
  ok (p && fs == 0 && net == 0 && sc == 0 && landlock_plan_skipped (p) == NULL,
      "an empty landlock object restricts nothing, and needs no Landlock (%s)", err.msg);
  ok (s && !s->sandbox.landlock.derive, "derive defaults to false");
  landlock_plan_free (p);
  oci_spec_free (s);

  s = spec_q ("{" BASE ",'sandbox':{'landlock':{'derive':'yes'}}}");
  ok (s == NULL, "derive must be a boolean");
}

static void
test_explicit (void)
{
  hk_err err;
  struct oci_spec *s = spec_q ("{" BASE ",'sandbox':{'landlock':{"
                               "'read':['/usr','/etc/'],'write':['//tmp/','/work'],"
                               "'exec':['/usr/bin','/opt/x']}}}");
  struct landlock_plan *p = s ? plan_abi (s, 7, &err) : NULL;
  ok (p != NULL, "explicit rules plan at ABI 7 (%s)", err.msg);
  ok (rights (p, "/usr/lib/libc.so", R, W | X | MKREG), "read: read only, no write, no exec");
  ok (rights (p, "/etc", R, W), "a path with a trailing slash is the same path");
  ok (rights (p, "/usr/bin/sh", R | X, W), "exec below read: both");
  ok (rights (p, "/opt/x", LANDLOCK_ACCESS_FS_READ_FILE | X, LANDLOCK_ACCESS_FS_READ_DIR | W),
      "exec alone: execute and read the file (open_exec needs both), not list directories");
  ok (rights (p, "/tmp/a/b", R | W | MKREG | TRUNC | REFER | IOCTL, X | MKCHR),
      "write: read, write, create, truncate, rename; no exec, never a device node");
  ok (rights (p, "/", 0, R | W | X), "the root is not granted unless listed");
  ok (rights (p, "/usrx", 0, R), "a sibling with a common prefix gets nothing");
  ok (rights (p, "/dev/null", LANDLOCK_ACCESS_FS_READ_FILE | W, IOCTL),
      "the standard device nodes are always read-write, without ioctl");
  ok (rights (p, "/dev/tty", W, IOCTL), "/dev/tty: no ioctl (TIOCSTI into the caller's terminal)");
  ok (rights (p, "/dev/pts/0", R | W | IOCTL, X), "the sandbox's ptys: ioctl");
  ok (rights (p, "/dev/sda", 0, R | W), "other device nodes: nothing");
  uint64_t fs, net, sc;
  landlock_plan_handled (p, &fs, &net, &sc);
  ok ((fs & (MKCHR | TRUNC | REFER | IOCTL)) == (MKCHR | TRUNC | REFER | IOCTL) && net == 0 && sc == 0,
      "ABI 7: every known filesystem right handled; no port list, TCP not handled");
  landlock_plan_free (p);
  oci_spec_free (s);
}

static const char derive_spec[]
    = "{" BASE ",'sandbox':{'workdir':{'persist':true},'landlock':{'derive':true}},"
      "'linux':{'devices':[{'type':'c','path':'/dev/fuse','major':10,'minor':229}]},"
      "'mounts':["
      " {'destination':'/proc','type':'proc','source':'proc'},"
      " {'destination':'/dev','type':'tmpfs','source':'tmpfs','options':['nosuid','mode=755']},"
      " {'destination':'/dev/pts','type':'devpts','source':'devpts','options':['nosuid','noexec']},"
      " {'destination':'/dev/shm','type':'tmpfs','source':'shm','options':['nosuid','noexec','nodev']},"
      " {'destination':'/sys','type':'sysfs','source':'sysfs','options':['nosuid','noexec','nodev','ro']},"
      " {'destination':'/sys/fs/cgroup','type':'cgroup','source':'cgroup'},"
      " {'destination':'/usr','type':'bind','source':'/usr','options':['rbind','ro','nosuid']},"
      " {'destination':'/data','type':'bind','source':'/srv','options':['rbind','rw']},"
      " {'destination':'/scratch','type':'tmpfs','source':'tmpfs','options':['noexec']},"
      " {'destination':'/hidden/sub','type':'tmpfs','source':'tmpfs'},"
      " {'destination':'/hidden','type':'bind','source':'/srv','options':['rbind','ro']},"
      " {'destination':'/tmp/','type':'tmpfs','source':'tmpfs'}]}";

static void
test_derive (void)
{
  hk_err err;
  struct oci_spec *s = spec_q (derive_spec);
  struct landlock_plan *p = s ? plan_abi (s, 7, &err) : NULL;
  ok (p != NULL, "derive plans (%s)", err.msg);
  ok (rights (p, "/bin/sh", R | X, W | MKREG), "read-only root: read and execute");
  ok (rights (p, "/usr/bin/env", R | X, W), "read-only bind: read and execute");
  ok (rights (p, "/data/f", R | W | MKREG | X | TRUNC, MKCHR), "read-write bind: read, write, execute");
  ok (rights (p, "/tmp/f", R | W | X, 0), "a destination with a trailing slash is the same path");
  ok (rights (p, "/work/f", R | W | X, 0), "the persistent work dir: read-write");
  ok (rights (p, "/proc/self/oom_score_adj", R, W), "/proc: read, not write");
  ok (rights (p, "/sys/kernel", R, W), "read-only sysfs: read");
  ok (rights (p, "/sys/fs/cgroup/cgroup.procs", R, W), "cgroup: read");
  ok (rights (p, "/dev/null", W, 0) && rights (p, "/dev/urandom", W, 0), "/dev/null, /dev/urandom: write");
  ok (rights (p, "/dev/fuse", W | IOCTL, 0), "a device the spec lists: read, write, ioctl");
  ok (rights (p, "/dev/sda", R, W | IOCTL | MKREG), "a tmpfs /dev itself: read, no new nodes or files");
  ok (rights (p, "/dev/shm/x", R | W | MKREG, 0), "/dev/shm: read-write");
  ok (rights (p, "/dev/pts/3", W | IOCTL, 0), "/dev/pts: read-write, ioctl");
  ok (rights (p, "/hidden/sub/f", R | X, W), "a mount hidden by a later one gets nothing of its own");
  landlock_plan_free (p);
  oci_spec_free (s);

  s = spec_q (
      "{'ociVersion':'1.0.0','root':{'path':'rootfs'},'process':{'args':['sh']},"
      "'mounts':[{'destination':'/scratch','type':'tmpfs','source':'tmpfs','options':['noexec','ro']}],"
      "'sandbox':{'landlock':{'derive':true,'read':['/etc']}}}");
  p = s ? plan_abi (s, 7, &err) : NULL;
  ok (p && rights (p, "/etc/passwd", R | W | X, 0), "read-write root: everything below it writable");
  landlock_plan_free (p);
  oci_spec_free (s);
}

static void
test_ports (void)
{
  hk_err err;
  struct oci_spec *s = spec_q ("{" BASE ",'sandbox':{'landlock':{'tcp_connect':[443,80],'tcp_bind':[]}}}");
  struct landlock_plan *p = s ? plan_abi (s, 4, &err) : NULL;
  uint64_t fs, net, sc;
  landlock_plan_handled (p, &fs, &net, &sc);
  ok (p && fs == 0 && net == (CONNECT | BIND) && sc == 0,
      "ports only: TCP connect and bind handled, the filesystem not (%s)", err.msg);
  ok (landlock_plan_port_access (p, 443) == CONNECT && landlock_plan_port_access (p, 80) == CONNECT,
      "listed ports may be connected to");
  ok (landlock_plan_port_access (p, 8080) == 0, "others not; an empty tcp_bind binds nothing");
  landlock_plan_free (p);
  oci_spec_free (s);

  s = spec_q ("{" BASE ",'sandbox':{'landlock':{'tcp_connect':[8080],'tcp_bind':[8080]}}}");
  p = s ? plan_abi (s, 7, &err) : NULL;
  ok (landlock_plan_port_access (p, 8080) == (CONNECT | BIND), "a port in both lists gets both");
  landlock_plan_free (p);
  oci_spec_free (s);
}

/* hako adds no TCP rule of its own in any network mode; the spec's lists
 * apply everywhere, and the allowlist mode's proxy stays reachable. */
static void
test_net_modes (void)
{
  hk_err err;
  uint64_t fs, net, sc;
  const char *modes[] = { "none", "allowlist", "host" };
  for (size_t i = 0; i < 3; i++)
    {
      cleanup_free char *text = xasprintf ("{" BASE ",'sandbox':{'network':{'mode':'%s'},"
                                           "'landlock':{'derive':true}}}",
                                           modes[i]);
      struct oci_spec *s = spec_q (text);
      struct landlock_plan *p = s ? plan_abi (s, 7, &err) : NULL;
      landlock_plan_handled (p, &fs, &net, &sc);
      ok (p && fs != 0 && net == 0, "network %s, derive: TCP not handled (its own lo works)", modes[i]);
      landlock_plan_free (p);
      oci_spec_free (s);
    }
  struct oci_spec *s = spec_q ("{" BASE ",'sandbox':{'network':{'mode':'allowlist'}}}");
  struct landlock_plan *p = s ? plan_abi (s, 7, &err) : NULL;
  ok (s && p == NULL, "allowlist without a landlock object: no plan at all");
  oci_spec_free (s);
  s = spec_q ("{" BASE ",'sandbox':{'network':{'mode':'allowlist'},'landlock':{'tcp_connect':[443]}}}");
  p = s ? plan_abi (s, 7, &err) : NULL;
  landlock_plan_handled (p, &fs, &net, &sc);
  ok (p && net == CONNECT && landlock_plan_port_access (p, 443) == CONNECT
          && landlock_plan_port_access (p, 3128) == CONNECT && landlock_plan_port_access (p, 80) == 0,
      "allowlist with tcp_connect: the listed port and the proxy's, nothing else");
  landlock_plan_free (p);
  oci_spec_free (s);
  s = spec_q ("{" BASE ",'sandbox':{'network':{'mode':'none'},'landlock':{'tcp_bind':[8000]}}}");
  p = s ? plan_abi (s, 7, &err) : NULL;
  landlock_plan_handled (p, &fs, &net, &sc);
  ok (p && net == BIND && landlock_plan_port_access (p, 8000) == BIND
          && landlock_plan_port_access (p, 3128) == 0,
      "none with tcp_bind: only that list, no proxy port");
  landlock_plan_free (p);
  oci_spec_free (s);
}

static void
test_abi (void)
{
  hk_err err;
  struct oci_spec *s = spec_q ("{" BASE ",'sandbox':{'landlock':{'derive':true,"
                               "'tcp_connect':[443],'tcp_bind':[8080],'scoped':true}}}");
  struct landlock_plan *p;
  uint64_t fs, net, sc;

  ok (plan_abi (s, 3, &err) == NULL, "required: tcp_connect on ABI 3 is refused");
  is_str (err.msg, "sandbox.landlock.tcp_connect: needs Landlock ABI 4, this kernel has 3",
          "the message names the field, the ABI it needs and the kernel's");
  ok (plan_abi (s, 5, &err) == NULL, "required: scoped on ABI 5 is refused");
  is_str (err.msg, "sandbox.landlock.scoped: needs Landlock ABI 6, this kernel has 5", "scoped needs ABI 6");
  ok (plan_abi (s, 0, &err) == NULL, "required: no Landlock at all is refused");
  is_str (err.msg, "sandbox.landlock: needs Landlock ABI 1, this kernel has no Landlock",
          "a kernel without Landlock");
  p = plan_abi (s, 6, &err);
  landlock_plan_handled (p, &fs, &net, &sc);
  ok (p && landlock_plan_skipped (p) == NULL && net == (CONNECT | BIND)
          && sc == (LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | LANDLOCK_SCOPE_SIGNAL),
      "ABI 6 enforces it all: nothing skipped");
  landlock_plan_free (p);

  s->sandbox.landlock.required = false;
  p = plan_abi (s, 3, &err);
  landlock_plan_handled (p, &fs, &net, &sc);
  ok (p && net == 0 && sc == 0 && fs != 0, "required false on ABI 3: the filesystem rules stay");
  is_str (landlock_plan_skipped (p),
          "sandbox.landlock.tcp_connect needs ABI 4, sandbox.landlock.tcp_bind needs ABI 4, "
          "sandbox.landlock.scoped needs ABI 6 (this kernel has ABI 3)",
          "and what was let go is recorded");
  landlock_plan_free (p);
  p = plan_abi (s, 0, &err);
  landlock_plan_handled (p, &fs, &net, &sc);
  ok (p && fs == 0 && net == 0 && sc == 0, "required false without Landlock: nothing enforced");
  ok (landlock_plan_skipped (p) && str_has_prefix (landlock_plan_skipped (p), "sandbox.landlock needs ABI 1")
          && str_has_suffix (landlock_plan_skipped (p), "(this kernel has no Landlock)"),
      "and recorded (%s)", landlock_plan_skipped (p));
  landlock_plan_free (p);

  /* The filesystem rights follow the ABI: what an older kernel does not know
   * is not handled (refer and truncate then go unchecked, by the kernel's design). */
  static const struct
  {
    int abi;
    uint64_t has, lacks;
  } fsabi[] = {
    { 1, W | MKCHR, REFER | TRUNC | IOCTL },
    { 2, REFER, TRUNC | IOCTL },
    { 3, REFER | TRUNC, IOCTL },
    { 5, REFER | TRUNC | IOCTL, 0 },
  };
  for (size_t i = 0; i < sizeof fsabi / sizeof *fsabi; i++)
    {
      p = plan_abi (s, fsabi[i].abi, &err);
      landlock_plan_handled (p, &fs, &net, &sc);
      ok (p && (fs & fsabi[i].has) == fsabi[i].has && (fs & fsabi[i].lacks) == 0,
          "ABI %d: handled filesystem rights 0x%llx", fsabi[i].abi, (unsigned long long)fs);
      landlock_plan_free (p);
    }
  oci_spec_free (s);
}

static void
test_profiles (void)
{
  for (int prof = OCI_PROFILE_DEFAULT; prof <= OCI_PROFILE_HOST; prof++)
    {
      hk_err err;
      cleanup_free char *text = NULL;
      struct oci_spec *s = NULL;
      const char *name = prof == OCI_PROFILE_HOST ? "host" : "default";
      if (oci_profile_generate (prof, false, NULL, NULL, &text, &err) < 0
          || oci_spec_parse (text, strlen (text), &s, &err) < 0)
        {
          ok (0, "%s profile: %s", name, err.msg);
          continue;
        }
      const struct hako_landlock *l = &s->sandbox.landlock;
      ok (l->present && l->derive && l->scoped && l->required && !l->read && !l->tcp_connect,
          "%s profile: landlock derive, scoped, required", name);
      struct landlock_plan *p = plan_abi (s, 7, &err);
      ok (p && rights (p, "/usr/bin/sh", R | X, W) && rights (p, "/proc/1/status", R, W),
          "%s profile: /usr read+exec, /proc read-only", name);
      if (prof == OCI_PROFILE_HOST)
        ok (rights (p, "/work/x", R | W | X, 0) && rights (p, "/tmp/x", R | W | X, 0)
                && rights (p, "/etc/passwd", R, W),
            "host profile: /work and /tmp read-write, /etc read-only");
      landlock_plan_free (p);
      oci_spec_free (s);
    }
}

/* Build and enforce for real, in a child: the rules bind it and what it runs. */
static void
test_enforce (void)
{
  int abi = landlock_abi ();
  printf ("# this kernel has Landlock ABI %d\n", abi);
  if (abi < 1)
    {
      skip ("no Landlock on this kernel", "landlock_build and landlock_enforce");
      return;
    }
  char dir[] = "/tmp/hako-test-landlock.XXXXXX";
  if (mkdtemp (dir) == NULL)
    {
      skip ("mkdtemp failed", "landlock_build and landlock_enforce");
      return;
    }
  hk_err err;
  cleanup_free char *ro = xasprintf ("%s/ro", dir), *rw = xasprintf ("%s/rw", dir);
  mkdir (ro, 0755);
  mkdir (rw, 0755);
  cleanup_free char *spec = xasprintf ("{" BASE ",'sandbox':{'landlock':{'read':['/'],'write':['%s']}}}", rw);
  struct oci_spec *s = spec_q (spec);
  struct landlock_plan *p = s ? plan_abi (s, abi, &err) : NULL;
  fflush (stdout);
  pid_t pid = fork ();
  if (pid == 0)
    {
      int fd;
      if (landlock_build (p, &fd, &err) < 0 || landlock_enforce (fd, &err) < 0)
        _exit (10);
      cleanup_free char *a = xasprintf ("%s/x", ro), *b = xasprintf ("%s/x", rw);
      int r1 = open (a, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
      int e1 = errno;
      int r2 = open (b, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
      _exit (r1 < 0 && e1 == EACCES && r2 >= 0 ? 0 : 11);
    }
  int st = -1;
  waitpid (pid, &st, 0);
  ok (WIFEXITED (st) && WEXITSTATUS (st) == 0,
      "enforced: creating a file where only read is granted fails with EACCES, under write works (%d)",
      WIFEXITED (st) ? WEXITSTATUS (st) : -1);
  landlock_plan_free (p);
  oci_spec_free (s);

  s = spec_q ("{" BASE ",'sandbox':{'landlock':{'read':['/', '/no/such/path']}}}");
  p = s ? plan_abi (s, abi, &err) : NULL;
  int fd = -1;
  ok (p && landlock_build (p, &fd, &err) < 0 && fd == -1,
      "a listed path that does not exist fails the build");
  is_str (err.msg, "sandbox.landlock.read: /no/such/path: No such file or directory", "naming it");
  landlock_plan_free (p);
  oci_spec_free (s);
  ok (landlock_build (NULL, &fd, &err) == 0 && fd == -1 && landlock_enforce (-1, &err) == 0,
      "no plan: no ruleset, nothing enforced");

  cleanup_free char *a = xasprintf ("%s/x", rw);
  unlink (a);
  rmdir (ro);
  rmdir (rw);
  rmdir (dir);
}

int
main (void)
{
  test_no_landlock ();
  test_explicit ();
  test_derive ();
  test_ports ();
  test_net_modes ();
  test_abi ();
  test_profiles ();
  test_enforce ();
  return tap_done ();
}
