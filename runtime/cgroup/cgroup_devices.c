/* cgroup_devices: linux.resources.devices — the writes for the v1 devices
 * controller, and the rule list cgroup v2's eBPF filter (cgroup_bpf.c) is
 * built from.  Every sandbox is held to device rules, as runc holds every
 * container: an implicit deny-all, then the spec's rules in order, then the
 * nodes hako's /dev holds.  The nodes of linux.devices get a rule of their
 * own for mknod alone ('m'), so that hako can make them wherever the spec
 * puts them: a spec that lists /dev/kmsg and denies every device gets a
 * /dev/kmsg that cannot be opened, as with runc and crun. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util.h"
#include "runtime/cgroup/cgroup_bpf.h"
#include "runtime/cgroup/cgroup_internal.h"

enum
{
  ACC_R = CG_DEV_R,
  ACC_W = CG_DEV_W,
  ACC_M = CG_DEV_M,
  ACC_ALL = CG_DEV_R | CG_DEV_W | CG_DEV_M
};

#define rule cg_dev_rule

/* What hako's /dev holds (runtime/build/mount.c) and devpts' ptys: allowed after
 * the spec's rules, as runc does, so that `runc spec`'s deny-all works. */
static const struct rule deny_all = { false, 'a', -1, -1, ACC_ALL };
static const struct rule std_rules[] = {
  { true, 'c', 1, 3, ACC_ALL }, { true, 'c', 1, 5, ACC_ALL },    { true, 'c', 1, 7, ACC_ALL },
  { true, 'c', 1, 8, ACC_ALL }, { true, 'c', 1, 9, ACC_ALL },    { true, 'c', 5, 0, ACC_ALL },
  { true, 'c', 5, 2, ACC_ALL }, { true, 'c', 136, -1, ACC_ALL },
};

static unsigned
access_bits (const char *s)
{
  unsigned a = 0;
  for (; s && *s; s++)
    a |= *s == 'r' ? ACC_R : *s == 'w' ? ACC_W : *s == 'm' ? ACC_M : 0;
  return a;
}

static struct rule
from_spec (const struct oci_device_rule *d)
{
  return (struct rule){ .allow = d->allow,
                        .type = d->type ? d->type : 'a',
                        .major = d->major,
                        .minor = d->minor,
                        .access = access_bits (d->access) };
}

/* A node of linux.devices, allowed rwm; false for fifos (no device). */
static bool
from_node (const struct oci_device *n, struct rule *r)
{
  if (n->type == 'p')
    return false;
  *r = (struct rule){
    .allow = true, .type = n->type == 'b' ? 'b' : 'c', .major = n->major, .minor = n->minor, .access = ACC_ALL
  };
  return true;
}

/* The rule that lets hako make node n, and only make it.  mknod is all it
 * gives: opening the node (the attack: reading a disk a spec lists but does
 * not allow) still needs a spec rule with 'r' or 'w'. */
static bool
mknod_rule (const struct oci_device *n, struct rule *r)
{
  if (!from_node (n, r))
    return false;
  r->access = ACC_M;
  return true;
}

static void
format_rule (const struct rule *r, char *line, size_t size)
{
  char maj[24] = "*", min[24] = "*", acc[4];
  size_t n = 0;
  if (r->type == 'a')
    {
      snprintf (line, size, "a");
      return;
    }
  if (r->major >= 0)
    snprintf (maj, sizeof maj, "%" PRId64, r->major);
  if (r->minor >= 0)
    snprintf (min, sizeof min, "%" PRId64, r->minor);
  if (r->access & ACC_R)
    acc[n++] = 'r';
  if (r->access & ACC_W)
    acc[n++] = 'w';
  if (r->access & ACC_M)
    acc[n++] = 'm';
  acc[n] = '\0';
  snprintf (line, size, "%c %s:%s %s", r->type, maj, min, acc);
}

/* ---- v1: replaying the rules on the kernel's model ---------------------------------- */

/* The v1 devices controller keeps a default (allow or deny) and a list of
 * exceptions.  "a" resets both; a rule against the default adds an exception;
 * a rule along it removes access from the exception of exactly that type and
 * numbers, and from nothing else.  So "allow c *:*" then "deny c 1:3" leaves
 * 1:3 allowed: such a rule is refused rather than silently not enforced. */
struct emu
{
  bool default_allow;
  struct rule *exc;
  size_t n_exc;
  struct cg_dev_write *out;
  size_t n_out;
};

static void
emit (struct emu *e, const struct rule *r)
{
  e->out = xrealloc (e->out, (e->n_out + 1) * sizeof *e->out);
  e->out[e->n_out].allow = r->allow;
  format_rule (r, e->out[e->n_out].line, sizeof e->out[e->n_out].line);
  e->n_out++;
}

static bool
nums_overlap (int64_t a, int64_t b)
{
  return a < 0 || b < 0 || a == b;
}

static int
replay (struct emu *e, const struct rule *r, hk_err *err)
{
  if (r->type == 'a')
    {
      e->default_allow = r->allow;
      e->n_exc = 0;
      emit (e, r);
      return 0;
    }
  if (r->allow != e->default_allow)
    {
      for (size_t i = 0; i < e->n_exc; i++)
        if (e->exc[i].type == r->type && e->exc[i].major == r->major && e->exc[i].minor == r->minor)
          {
            e->exc[i].access |= r->access;
            emit (e, r);
            return 0;
          }
      e->exc = xrealloc (e->exc, (e->n_exc + 1) * sizeof *e->exc);
      e->exc[e->n_exc++] = *r;
      emit (e, r);
      return 0;
    }
  /* Refused before anything changes, so that the model stays what the
   * kernel will hold. */
  for (size_t i = 0; i < e->n_exc; i++)
    {
      const struct rule *x = &e->exc[i];
      if (x->type == r->type && nums_overlap (x->major, r->major) && nums_overlap (x->minor, r->minor)
          && (x->access & r->access) && (x->major != r->major || x->minor != r->minor))
        {
          char a[48], b[48];
          format_rule (r, a, sizeof a);
          format_rule (x, b, sizeof b);
          return err_set (err, EINVAL,
                          "linux.resources.devices: \"%s %s\" after \"%s %s\" cannot be "
                          "enforced by the v1 devices cgroup (it only takes back exact rules)",
                          r->allow ? "allow" : "deny", a, x->allow ? "allow" : "deny", b);
        }
    }
  bool found = false;
  for (size_t i = 0; i < e->n_exc; i++)
    if (e->exc[i].type == r->type && e->exc[i].major == r->major && e->exc[i].minor == r->minor
        && (e->exc[i].access & r->access))
      {
        e->exc[i].access &= ~r->access;
        found = true;
      }
  if (found)
    emit (e, r); /* else the default already says so: nothing to write */
  return 0;
}

static int
replay_spec_rule (struct emu *e, const struct rule *r, hk_err *err)
{
  /* The kernel reads any "a ..." line as the full reset, whatever its numbers
   * and access: a partial one becomes the same rule for 'c' and for 'b'. */
  if (r->type == 'a' && (r->major >= 0 || r->minor >= 0 || r->access != ACC_ALL))
    {
      struct rule c = *r, b = *r;
      c.type = 'c';
      b.type = 'b';
      return replay (e, &c, err) < 0 ? -1 : replay (e, &b, err);
    }
  return replay (e, r, err);
}

static bool
is_deny_all (const struct rule *r)
{
  return !r->allow && r->type == 'a' && r->major < 0 && r->minor < 0 && r->access == ACC_ALL;
}

/* Whether the spec's rules begin with a full reset (an "a *:* rwm" allow or
 * deny): then the implicit deny-all before them would change nothing. */
static bool
starts_with_reset (const struct oci_resources *res)
{
  if (res->n_devices == 0)
    return false;
  struct rule x = from_spec (&res->devices[0]);
  x.allow = false;
  return is_deny_all (&x);
}

int
cg_v1_device_writes (const struct oci_spec *spec, struct cg_dev_write **out, size_t *n, hk_err *err)
{
  const struct oci_resources *res = &spec->linux.resources;
  /* A new cgroup starts as its parent is; hako's parents allow everything.
   * The implicit deny-all first: a device no rule allows stays closed. */
  struct emu e = { .default_allow = true };
  int r = 0;
  if (!starts_with_reset (res))
    replay (&e, &deny_all, err);
  for (size_t i = 0; r == 0 && i < res->n_devices; i++)
    {
      struct rule x = from_spec (&res->devices[i]);
      r = replay_spec_rule (&e, &x, err);
    }
  /* hako's own allows only ever give back access; one v1 cannot express
   * is left out, which leaves the sandbox stricter than asked, never looser. */
  hk_err ignored;
  for (size_t i = 0; r == 0 && i < sizeof std_rules / sizeof *std_rules; i++)
    replay (&e, &std_rules[i], &ignored);
  struct rule m;
  for (size_t i = 0; r == 0 && i < spec->linux.n_devices; i++)
    if (mknod_rule (&spec->linux.devices[i], &m))
      replay (&e, &m, &ignored);
  free (e.exc);
  if (r < 0)
    {
      free (e.out);
      return -1;
    }
  *out = e.out;
  *n = e.n_out;
  return 0;
}

/* ---- v2: the rules for the eBPF filter ---------------------------------------------- */

int
cg_device_rules (const struct oci_spec *spec, struct cg_dev_rule **out, size_t *n)
{
  const struct oci_resources *res = &spec->linux.resources;
  size_t n_std = sizeof std_rules / sizeof *std_rules;
  size_t cap = 1 + res->n_devices + n_std + spec->linux.n_devices;
  struct rule *v = xcalloc (cap, sizeof *v);
  size_t k = 0;
  v[k++] = deny_all;
  for (size_t i = 0; i < res->n_devices; i++)
    v[k++] = from_spec (&res->devices[i]);
  for (size_t i = 0; i < n_std; i++)
    v[k++] = std_rules[i];
  for (size_t i = 0; i < spec->linux.n_devices; i++)
    if (mknod_rule (&spec->linux.devices[i], &v[k]))
      k++;
  *out = v;
  *n = k;
  return 0;
}

/* ---- v2: where the filter cannot be loaded ------------------------------------------ */

/* r allows no more than one of the nodes hako's /dev holds (its standard
 * ones and those of linux.devices). */
static bool
within_dev (const struct oci_spec *spec, const struct rule *r)
{
  for (size_t i = 0; i < sizeof std_rules / sizeof *std_rules; i++)
    if (r->type == std_rules[i].type && r->major == std_rules[i].major && r->minor == std_rules[i].minor)
      return true;
  for (size_t i = 0; i < spec->linux.n_devices; i++)
    {
      struct rule x;
      if (from_node (&spec->linux.devices[i], &x) && r->type == x.type && r->major == x.major
          && r->minor == x.minor)
        return true;
    }
  return false;
}

/* A spec rule allows node n for reading and writing. */
static bool
allowed_node (const struct oci_resources *res, const struct rule *n)
{
  for (size_t i = 0; i < res->n_devices; i++)
    {
      struct rule x = from_spec (&res->devices[i]);
      if (x.allow && x.type == n->type && x.major == n->major && x.minor == n->minor
          && (x.access & (ACC_R | ACC_W)) == (ACC_R | ACC_W))
        return true;
    }
  return false;
}

/* Could the sandbox make a device node the rules deny?  Only with CAP_MKNOD
 * in the host's user namespace. */
static bool
can_mknod (const struct oci_spec *spec)
{
  if (oci_spec_ns (spec, OCI_NS_USER) || spec->process == NULL || !spec->process->has_caps)
    return false;
  for (char **c = spec->process->caps.bounding; c && *c; c++)
    if (strcmp (*c, "CAP_MKNOD") == 0)
      return true;
  return false;
}

/* A deny-all (the implicit one, or the spec's first rule) followed by allows
 * of what /dev holds (what `runc spec` writes) adds nothing to what the
 * sandbox can reach anyway, as long as it cannot mknod and every node of
 * linux.devices is allowed: without the eBPF filter (rootless: no CAP_BPF,
 * no cgroup of its own) it would be enforced all the same.  A listed node
 * the rules deny is not: without the filter it would open. */
bool
cg_v2_devices_harmless (const struct oci_spec *spec)
{
  const struct oci_resources *res = &spec->linux.resources;
  bool ok = !can_mknod (spec);
  for (size_t i = 0; ok && i < res->n_devices; i++)
    {
      struct rule x = from_spec (&res->devices[i]);
      ok = (i == 0 && is_deny_all (&x)) || (x.allow && x.type != 'a' && within_dev (spec, &x));
    }
  for (size_t i = 0; ok && i < spec->linux.n_devices; i++)
    {
      struct rule x;
      ok = !from_node (&spec->linux.devices[i], &x) || allowed_node (res, &x);
    }
  return ok;
}

int
cg_devices_filter (const char *dir, const struct oci_spec *spec, hk_err *err)
{
  if (cg_bpf_devices_attach (dir, spec, err) == 0)
    return 0;
  if (err->errnum != EPERM && err->errnum != EACCES)
    return -1;
  /* Rootless: the rules add nothing (runc spec's default), or the spec has
   * none and the default ones are hako's own hardening, kept where the
   * kernel lets hako load them. */
  if (!cg_v2_devices_harmless (spec) && spec->linux.resources.n_devices)
    return -1;
  err_clear (err);
  return 0;
}
