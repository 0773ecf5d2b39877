/* test_cdi: CDI specs — validation, YAML, qualified names, resolution
 * (=all, bare names, ambiguity, directory priority) and the edits written
 * into a config, one test per rule. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "lib/util.h"
#include "oci/cdi.h"
#include "oci/node.h"
#include "oci/spec.h"
#include "tests/unit/tap.h"

static int
parse (const char *text, bool yaml, struct cdi_spec **s, hk_err *err)
{
  *s = NULL;
  return cdi_spec_parse (text, strlen (text), "t.json", yaml, s, err);
}

#define DEV0 "\"devices\":[{\"name\":\"gpu0\",\"containerEdits\":{\"env\":[\"A=1\"]}}]"

static void
test_versions (void)
{
  static const char *const good[] = { "0.3.0", "0.4.0", "0.5.0", "0.6.0", "0.7.0", "0.8.0", "0.5.1" };
  static const char *const bad[] = { "0.2.0", "0.9.0", "1.0.0", "0.5", "x", "0.5.0-rc1" };
  for (size_t i = 0; i < sizeof good / sizeof *good; i++)
    {
      cleanup_free char *t = xasprintf ("{\"cdiVersion\":\"%s\",\"kind\":\"v.com/c\"," DEV0 "}", good[i]);
      struct cdi_spec *s;
      hk_err err = { 0 };
      ok (parse (t, false, &s, &err) == 0, "cdiVersion %s accepted %s", good[i], err.msg);
      cdi_spec_free (s);
    }
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
    {
      cleanup_free char *t = xasprintf ("{\"cdiVersion\":\"%s\",\"kind\":\"v.com/c\"," DEV0 "}", bad[i]);
      struct cdi_spec *s;
      hk_err err = { 0 };
      ok (parse (t, false, &s, &err) < 0 && strstr (err.msg, "cdiVersion")
              && err_kind_of (&err) == ERR_INVALID_CONFIG,
          "cdiVersion %s refused: %s", bad[i], err.msg);
    }
  struct cdi_spec *s;
  hk_err err = { 0 };
  ok (parse ("{\"kind\":\"v.com/c\"," DEV0 "}", false, &s, &err) < 0
          && strstr (err.msg, ".cdiVersion: required"),
      "cdiVersion required: %s", err.msg);
}

static void
test_kinds_and_names (void)
{
  static const struct
  {
    const char *kind, *name;
    bool good;
  } v[] = {
    { "nvidia.com/gpu", "0", true },    { "vendor.example.com/fake-gpu", "a:b.c_d-e", true },
    { "nvidia.com", "0", false },       { "1nvidia.com/gpu", "0", false },
    { "nvidia.com/gpu.x", "0", false }, { "nvidia.com/gpu", "-0", false },
    { "nvidia.com/gpu", "a b", false }, { "nvidia.com/gpu", "all.", false },
    { "nvidia.com/", "0", false },      { "nvidia.com-/gpu", "0", false },
  };
  for (size_t i = 0; i < sizeof v / sizeof *v; i++)
    {
      cleanup_free char *t = xasprintf ("{\"cdiVersion\":\"0.6.0\",\"kind\":\"%s\",\"devices\":[{\"name\":\"%"
                                        "s\",\"containerEdits\":{\"env\":[\"A=1\"]}}]}",
                                        v[i].kind, v[i].name);
      struct cdi_spec *s;
      hk_err err = { 0 };
      int r = parse (t, false, &s, &err);
      ok ((r == 0) == v[i].good, "kind %s device %s: %s %s", v[i].kind, v[i].name,
          v[i].good ? "valid" : "invalid", err.msg);
      cdi_spec_free (s);
      cleanup_free char *q = xasprintf ("%s=%s", v[i].kind, v[i].name);
      ok (cdi_is_qualified (q, NULL) == v[i].good, "qualified name %s", q);
    }
  ok (!cdi_is_qualified ("nvidia.com/gpu", NULL) && !cdi_is_qualified ("gpu0", NULL),
      "no '=': not qualified");
}

static void
test_validation (void)
{
  static const struct
  {
    const char *body, *want;
  } v[] = {
    { "\"devices\":[]", ".devices: required" },
    { "\"devices\":[{\"name\":\"a\"}]", "containerEdits: required" },
    { "\"devices\":[{\"name\":\"a\",\"containerEdits\":{}}]", "at least one edit" },
    { "\"devices\":[{\"name\":\"a\",\"containerEdits\":{\"env\":[\"A\"]}},{\"name\":\"b\"}]", "NAME=VALUE" },
    { DEV0 ",\"x\":1,\"devices\":[{\"name\":\"a\",\"containerEdits\":{\"env\":[\"A=1\"]}},"
           "{\"name\":\"a\",\"containerEdits\":{\"env\":[\"A=1\"]}}]",
      "named twice" },
    { "\"devices\":[{\"name\":\"a\",\"containerEdits\":{\"deviceNodes\":[{\"path\":\"dev/x\"}]}}]",
      "absolute" },
    { "\"devices\":[{\"name\":\"a\",\"containerEdits\":{\"deviceNodes\":[{\"path\":\"/dev/"
      "x\",\"type\":\"q\"}]}}]",
      "must be c, b, u or p" },
    { "\"devices\":[{\"name\":\"a\",\"containerEdits\":{\"deviceNodes\":[{\"path\":\"/dev/"
      "x\",\"major\":1}]}}]",
      "minor: required" },
    { "\"devices\":[{\"name\":\"a\",\"containerEdits\":{\"deviceNodes\":[{\"path\":\"/dev/"
      "x\",\"permissions\":"
      "\"rwx\"}]}}]",
      "made of r, w and m" },
    { "\"devices\":[{\"name\":\"a\",\"containerEdits\":{\"mounts\":[{\"hostPath\":\"/x\"}]}}]",
      "containerPath" },
    { "\"devices\":[{\"name\":\"a\",\"containerEdits\":{\"hooks\":[{\"hookName\":\"preStart\",\"path\":\"/"
      "x\"}]}}]",
      "hookName" },
    { "\"devices\":[{\"name\":\"a\",\"containerEdits\":{\"hooks\":[{\"hookName\":\"poststop\"}]}}]", "path" },
    { "\"devices\":[{\"name\":\"a\",\"containerEdits\":{\"additionalGids\":[-1]}}]", "additionalGids[0]" },
    { "\"devices\":[{\"name\":\"a\",\"containerEdits\":{\"intelRdt\":{\"closID\":\"x\"}}}]",
      "not supported" },
  };
  for (size_t i = 0; i < sizeof v / sizeof *v; i++)
    {
      cleanup_free char *t = xasprintf ("{\"cdiVersion\":\"0.7.0\",\"kind\":\"v.com/c\",%s}", v[i].body);
      struct cdi_spec *s;
      hk_err err = { 0 };
      ok (parse (t, false, &s, &err) < 0 && strstr (err.msg, v[i].want)
              && strstr (err.msg, "CDI spec t.json"),
          "invalid spec refused (%s): %s", v[i].want, err.msg);
    }
}

static const char yaml_spec[] = "cdiVersion: \"0.5.0\"\n"
                                "kind: example.com/fake\n"
                                "containerEdits:\n"
                                "  env: [FAKE_SPEC=1]\n"
                                "devices:\n"
                                "  - name: \"0\"\n"
                                "    containerEdits:\n"
                                "      deviceNodes:\n"
                                "        - path: /dev/fake0\n"
                                "          type: c\n"
                                "          major: 1\n"
                                "          minor: 3\n"
                                "          fileMode: 0640\n"
                                "          uid: 0\n"
                                "      additionalGids: [44, 45]\n"
                                "      hooks:\n"
                                "        - hookName: createRuntime\n"
                                "          path: /bin/true\n"
                                "          args: [\"true\", '123']\n";

static void
test_yaml (void)
{
  struct cdi_spec *s;
  hk_err err = { 0 };
  int r = parse (yaml_spec, true, &s, &err);
  ok (r == 0, "YAML spec parses: %s", err.msg);
  if (r == 0)
    {
      const struct cdi_device *d = &s->devices[0];
      ok (strcmp (s->version, "0.5.0") == 0 && strcmp (s->kind, "example.com/fake") == 0 && s->n_devices == 1
              && strcmp (d->name, "0") == 0,
          "YAML: quoted \"0\" stays a string name");
      ok (d->edits.n_nodes == 1 && d->edits.nodes[0].major == 1 && d->edits.nodes[0].mode == 0640,
          "YAML: 0640 is octal (%o)", d->edits.n_nodes ? d->edits.nodes[0].mode : 0);
      ok (d->edits.n_gids == 2 && d->edits.gids[1] == 45, "YAML: flow sequence of integers");
      ok (d->edits.n_hooks == 1 && strcmp (d->edits.hooks[0].args[1], "123") == 0,
          "YAML: single-quoted '123' string");
      ok (s->edits.env && strcmp (s->edits.env[0], "FAKE_SPEC=1") == 0, "YAML: spec-wide edits");
      cdi_spec_free (s);
    }
  err_clear (&err);
  ok (parse ("a: &x 1\nb: *x\n", true, &s, &err) < 0 && strstr (err.msg, "not supported"),
      "YAML anchors refused: %s", err.msg);
  err_clear (&err);
  ok (parse ("a: [1, 2\n", true, &s, &err) < 0 && strstr (err.msg, "invalid YAML"), "YAML syntax error: %s",
      err.msg);
  err_clear (&err);
  ok (parse ("a: 1\n---\nb: 2\n", true, &s, &err) < 0 && strstr (err.msg, "more than one document"),
      "YAML: one document only: %s", err.msg);
  char *j = NULL;
  size_t jl;
  err_clear (&err);
  ok (cdi_yaml_to_json ("k: {a: ~, b: true, c: -7, d: 1.5}\n", 33, &j, &jl, &err) == 0
          && strcmp (j, "{\"k\":{\"a\":null,\"b\":true,\"c\":-7,\"d\":\"1.5\"}}") == 0,
      "YAML plain scalars typed: %s", j ? j : err.msg);
  free (j);
}

static char dir1[64], dir2[64];

static void
put (const char *dir, const char *name, const char *text)
{
  cleanup_free char *p = xasprintf ("%s/%s", dir, name);
  hk_err err;
  if (file_write_atomic (p, text, strlen (text), 0644, &err) < 0)
    abort ();
}

#define SPEC(kind, devs) "{\"cdiVersion\":\"0.6.0\",\"kind\":\"" kind "\",\"devices\":[" devs "]}"
#define DEV(name, env) "{\"name\":\"" name "\",\"containerEdits\":{\"env\":[\"" env "\"]}}"

static size_t
resolve (const struct cdi_registry *r, const char *req, struct cdi_ref **refs, hk_err *err)
{
  size_t n = 0;
  *refs = NULL;
  err_clear (err);
  if (cdi_resolve (r, req, refs, &n, err) < 0)
    return (size_t)-1;
  return n;
}

static void
test_resolve (void)
{
  put (dir1, "a.json", SPEC ("a.com/gpu", DEV ("0", "A=0") "," DEV ("1", "A=1") "," DEV ("shared", "S=1")));
  put (dir1, "b.yaml",
       "cdiVersion: 0.3.0\nkind: b.com/net\ndevices:\n- name: shared\n  containerEdits:\n    env: [S=2]\n"
       "- name: all\n  containerEdits:\n    env: [ALL=b]\n");
  put (dir1, "c.json", SPEC ("c.com/x", DEV ("dup", "D=1")));
  put (dir1, "d.json", SPEC ("c.com/x", DEV ("dup", "D=2")));
  put (dir1, "e.json", SPEC ("e.com/y", DEV ("low", "P=low")));
  put (dir2, "e.json", SPEC ("e.com/y", DEV ("low", "P=high")));
  put (dir1, "ignored.txt", "not a spec");
  char *dirs[] = { dir1, dir2, NULL };
  struct cdi_registry reg;
  hk_err err = { 0 };
  int lr = cdi_load (dirs, &reg, &err);
  ok (lr == 0 && reg.n == 6, "load: .json and .yaml, other files skipped (%zu) %s", reg.n, err.msg);
  struct cdi_ref *refs;
  size_t n = resolve (&reg, "a.com/gpu=1", &refs, &err);
  ok (n == 1 && strcmp (refs[0].dev->name, "1") == 0, "qualified name resolves");
  free (refs);
  n = resolve (&reg, "a.com/gpu=all", &refs, &err);
  ok (n == 3 && strcmp (refs[2].dev->name, "shared") == 0, "=all: every device of the kind (%zu)", n);
  free (refs);
  n = resolve (&reg, "b.com/net=all", &refs, &err);
  ok (n == 1 && strcmp (refs[0].dev->name, "all") == 0, "=all: the spec's own device named all wins");
  free (refs);
  n = resolve (&reg, "a.com/gpu=7", &refs, &err);
  ok (n == (size_t)-1 && err_kind_of (&err) == ERR_NOT_FOUND && strstr (err.msg, "a.com/gpu=7"),
      "unknown device: not_found: %s", err.msg);
  free (refs);
  n = resolve (&reg, "z.com/gpu=all", &refs, &err);
  ok (n == (size_t)-1 && err_kind_of (&err) == ERR_NOT_FOUND, "=all of an unknown kind: not_found");
  free (refs);
  n = resolve (&reg, "0", &refs, &err);
  ok (n == 1 && strcmp (refs[0].spec->kind, "a.com/gpu") == 0, "bare name found in one kind");
  free (refs);
  n = resolve (&reg, "shared", &refs, &err);
  ok (n == (size_t)-1 && err_kind_of (&err) == ERR_INVALID_CONFIG && strstr (err.msg, "ambiguous"),
      "bare name in two kinds: ambiguous: %s", err.msg);
  free (refs);
  n = resolve (&reg, "c.com/x=dup", &refs, &err);
  ok (n == (size_t)-1 && strstr (err.msg, "ambiguous") && strstr (err.msg, "c.json")
          && strstr (err.msg, "d.json"),
      "same device in two specs of one dir: ambiguous: %s", err.msg);
  free (refs);
  n = resolve (&reg, "e.com/y=low", &refs, &err);
  ok (n == 1 && strcmp (refs[0].dev->edits.env[0], "P=high") == 0,
      "a later directory wins (/var/run/cdi over /etc/cdi)");
  free (refs);
  n = resolve (&reg, "a.com/gpu=", &refs, &err);
  ok (n == (size_t)-1 && err_kind_of (&err) == ERR_INVALID_ARGUMENT, "malformed name: invalid_argument: %s",
      err.msg);
  free (refs);
  cdi_registry_free (&reg);
  put (dir2, "bad.json", "{\"cdiVersion\":\"0.6.0\"}");
  err_clear (&err);
  ok (cdi_load (dirs, &reg, &err) < 0 && strstr (err.msg, "bad.json") && strstr (err.msg, ".kind"),
      "an invalid spec fails the load, naming it: %s", err.msg);
  cleanup_free char *bad = xasprintf ("%s/bad.json", dir2);
  unlink (bad);
  /* Hooks run as root: a dir or spec another user can write fails the load. */
  chmod (dir2, 0777);
  err_clear (&err);
  ok (cdi_load (dirs, &reg, &err) < 0 && err_kind_of (&err) == ERR_PERMISSION && strstr (err.msg, dir2)
          && strstr (err.msg, "writable by every user"),
      "a spec dir others can write fails the load, naming it: %s", err.msg);
  chmod (dir2, 0700);
  cleanup_free char *e = xasprintf ("%s/e.json", dir2);
  chmod (e, 0666);
  err_clear (&err);
  ok (cdi_load (dirs, &reg, &err) < 0 && strstr (err.msg, e) && strstr (err.msg, "mode 0666"),
      "a spec file others can write fails the load, naming it: %s", err.msg);
  chmod (e, 0644);
  err_clear (&err);
  ok (cdi_load (dirs, &reg, &err) == 0, "root's again: loads");
  cdi_registry_free (&reg);
}

static void
test_apply (void)
{
  struct stat st;
  if (stat ("/dev/null", &st) < 0)
    return skip ("no /dev/null", "apply");
  put (dir2, "fake.json",
       "{\"cdiVersion\":\"0.7.0\",\"kind\":\"fake.com/gpu\","
       "\"containerEdits\":{\"env\":[\"FAKE=spec\"],\"mounts\":[{\"hostPath\":\"/usr/lib\",\"containerPath\":"
       "\"/opt/driver\",\"options\":[\"ro\"]}]},"
       "\"devices\":[{\"name\":\"0\",\"containerEdits\":{\"env\":[\"FAKE=dev0\",\"PATH=/x\"],"
       "\"deviceNodes\":[{\"path\":\"/dev/fake0\",\"hostPath\":\"/dev/null\",\"permissions\":\"rw\"}],"
       "\"hooks\":[{\"hookName\":\"createRuntime\",\"path\":\"/bin/true\",\"timeout\":5}],"
       "\"additionalGids\":[44,0]}},"
       "{\"name\":\"1\",\"containerEdits\":{\"deviceNodes\":[{\"path\":\"/dev/"
       "fake1\",\"type\":\"c\",\"major\":1,"
       "\"minor\":5,\"fileMode\":438}]}}]}");
  const char *cfg
      = "{\"ociVersion\":\"1.0.2\",\"process\":{\"args\":[\"sh\"],\"env\":[\"PATH=/bin\"],\"cwd\":\"/\","
        "\"user\":{\"uid\":0,\"gid\":0,\"additionalGids\":[0]}},\"root\":{\"path\":\"rootfs\"},"
        "\"linux\":{\"resources\":{\"devices\":[{\"allow\":false,\"access\":\"rwm\"}]}},"
        "\"annotations\":{\"cdi.k8s.io/plugin\":\"fake.com/gpu=1\"}}";
  cdi_add_dir (dir2);
  char *extra[] = { "fake.com/gpu=0", NULL };
  char *out = NULL;
  size_t len = 0;
  hk_err err = { 0 };
  int r = cdi_apply_config (cfg, strlen (cfg), extra, &out, &len, &err);
  ok (r == 0 && out, "apply: %s", err.msg);
  struct oci_spec *s = NULL;
  if (out == NULL || oci_spec_parse (out, len, &s, &err) < 0)
    {
      ok (0, "the edited config parses: %s", err.msg);
      free (out);
      return;
    }
  const struct oci_linux *l = &s->linux;
  ok (l->n_devices == 2 && strcmp (l->devices[0].path, "/dev/fake0") == 0 && l->devices[0].type == 'c'
          && l->devices[0].major == major (st.st_rdev) && l->devices[0].minor == minor (st.st_rdev)
          && l->devices[0].has_file_mode && l->devices[0].file_mode == (st.st_mode & 07777),
      "node: type, major/minor and mode from the host's node");
  ok (l->devices[1].major == 1 && l->devices[1].minor == 5 && l->devices[1].file_mode == 0666,
      "node: given numbers kept (annotation cdi.k8s.io/*)");
  const struct oci_resources *res = &l->resources;
  ok (res->n_devices == 3 && !res->devices[0].allow && res->devices[1].allow && res->devices[1].type == 'c'
          && res->devices[1].major == major (st.st_rdev) && strcmp (res->devices[1].access, "rw") == 0
          && res->devices[2].minor == 5 && strcmp (res->devices[2].access, "rwm") == 0,
      "cgroup: the spec's deny-all, then one allow rule per node with its permissions");
  bool mount = false;
  for (size_t i = 0; i < s->n_mounts; i++)
    if (strcmp (s->mounts[i].destination, "/opt/driver") == 0)
      mount = s->mounts[i].is_bind && (s->mounts[i].flags & MS_RDONLY)
              && strcmp (s->mounts[i].source, "/usr/lib") == 0;
  ok (mount, "spec-wide mount: a read-only bind");
  is_str (strv_env (s->process->env, "FAKE"), "dev0", "env: a device's edit after the spec-wide one wins");
  is_str (strv_env (s->process->env, "PATH"), "/x", "env: replaces the config's own");
  ok (s->hooks.n[OCI_HOOK_CREATE_RUNTIME] == 1
          && strcmp (s->hooks.list[OCI_HOOK_CREATE_RUNTIME][0].path, "/bin/true") == 0
          && s->hooks.list[OCI_HOOK_CREATE_RUNTIME][0].timeout == 5,
      "hook: createRuntime with its timeout");
  ok (s->process->user.n_additional_gids == 2 && s->process->user.additional_gids[1] == 44,
      "additionalGids: added once (%zu)", s->process->user.n_additional_gids);
  /* Applying again adds nothing: the requests are recorded as applied. */
  char *again = NULL;
  size_t alen;
  err_clear (&err);
  ok (cdi_apply_config (out, len, extra, &again, &alen, &err) == 0 && again == NULL,
      "apply is idempotent (devices_applied) %s", err.msg);
  free (again);
  ok (strstr (out, "\"cdi_devices\"") && strstr (out, "\"fake.com/gpu=0\"")
          && strstr (out, "\"fake.com/gpu=1\""),
      "sandbox.cdi_devices names what was resolved");
  oci_spec_free (s);
  free (out);

  /* A raw host node, and an unknown device. */
  char *raw[] = { "/dev/null", NULL };
  err_clear (&err);
  r = cdi_apply_config ("{\"process\":{\"args\":[\"x\"]}}", 26, raw, &out, &len, &err);
  ok (r == 0 && out && strstr (out, "\"path\": \"/dev/null\""), "--device /dev/null: the node mirrored %s",
      err.msg);
  free (out);
  char *missing[] = { "/dev/hako-no-such-node", NULL };
  err_clear (&err);
  ok (cdi_apply_config ("{}", 2, missing, &out, &len, &err) < 0 && err_kind_of (&err) == ERR_NOT_FOUND,
      "a missing host node: not_found: %s", err.msg);
  char *notdev[] = { "/etc/passwd", NULL };
  err_clear (&err);
  ok (cdi_apply_config ("{}", 2, notdev, &out, &len, &err) < 0 && strstr (err.msg, "not a device node"),
      "a host path that is no node: %s", err.msg);
  char *unk[] = { "fake.com/gpu=9", NULL };
  err_clear (&err);
  ok (cdi_apply_config ("{}", 2, unk, &out, &len, &err) < 0 && err_kind_of (&err) == ERR_NOT_FOUND,
      "unknown device: not_found: %s", err.msg);
  err_clear (&err);
  ok (cdi_apply_config ("{\"sandbox\":{\"devices\":[\"fake.com/gpu=1\"]}}", 42, NULL, &out, &len, &err) == 0
          && out && strstr (out, "/dev/fake1"),
      "sandbox.devices requests devices %s", err.msg);
  free (out);
  err_clear (&err);
  ok (cdi_apply_config ("{\"sandbox\":{\"devices\":[1]}}", 27, NULL, &out, &len, &err) < 0
          && strstr (err.msg, ".sandbox.devices"),
      "sandbox.devices must be strings: %s", err.msg);
  err_clear (&err);
  ok (cdi_apply_config ("{}", 2, NULL, &out, &len, &err) == 0 && out == NULL,
      "no devices asked for: no edit");
}

/* node.json: devices with slots, and the CDI spec dirs. */
static void
test_node (void)
{
  struct oci_node n;
  hk_err err = { 0 };
  const char *good = "{\"devices\":{\"a.com/gpu=0\":{\"mode\":\"shared\",\"slots\":4},"
                     "\"a.com/gpu=1\":{\"mode\":\"exclusive\"}},\"cdi_spec_dirs\":[\"/x\",\"/y\"]}";
  ok (oci_node_parse (good, strlen (good), "node.json", &n, &err) == 0 && n.n_devices == 2
          && n.devices[0].slots == 4 && !n.devices[0].exclusive && n.devices[1].slots == 1
          && n.devices[1].exclusive && n.n_cdi_spec_dirs == 2 && strcmp (n.cdi_spec_dirs[1], "/y") == 0,
      "node.json devices and cdi_spec_dirs %s", err.msg);
  static const struct
  {
    const char *json, *want;
  } bad[] = {
    { "{\"devices\":{\"gpu0\":{\"slots\":1}}}", "not a CDI device name" },
    { "{\"devices\":{\"a.com/b=c\":{\"mode\":\"exclusive\",\"slots\":2}}}", "one slot" },
    { "{\"devices\":{\"a.com/b=c\":{\"mode\":\"shared\"}}}", "needs slots" },
    { "{\"devices\":{\"a.com/b=c\":{\"slots\":0}}}", "needs slots" },
    { "{\"devices\":{\"a.com/b=c\":{\"mode\":\"lent\",\"slots\":1}}}", "shared or exclusive" },
    { "{\"devices\":{\"a.com/b=c\":{\"slot\":1}}}", "unknown field" },
    { "{\"devices\":[]}", "must be an object" },
    { "{\"cdi_spec_dirs\":[\"etc/cdi\"]}", "absolute" },
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
    {
      err_clear (&err);
      ok (oci_node_parse (bad[i].json, strlen (bad[i].json), "node.json", &n, &err) < 0
              && strstr (err.msg, bad[i].want),
          "node.json refused (%s): %s", bad[i].want, err.msg);
    }
}

int
main (void)
{
  snprintf (dir1, sizeof dir1, "/tmp/hako-cdi-test-%d-a", (int)getpid ());
  snprintf (dir2, sizeof dir2, "/tmp/hako-cdi-test-%d-b", (int)getpid ());
  if (mkdir (dir1, 0700) < 0 || mkdir (dir2, 0700) < 0)
    return perror ("mkdir"), 1;
  test_versions ();
  test_kinds_and_names ();
  test_validation ();
  test_yaml ();
  test_resolve ();
  test_apply ();
  test_node ();
  hk_err err;
  rm_rf (dir1, &err);
  rm_rf (dir2, &err);
  return tap_done ();
}
