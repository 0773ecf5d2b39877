/* test_state: state.json round trips and damage, status names, features JSON. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util.h"
#include "oci/state.h"
#include "tests/unit/helpers.h"
#include "tests/unit/tap.h"

/* TEXT (with ' for ") must fail to parse with a message starting with WANT. */
static void
fails_with (const char *text, size_t len, const char *want, const char *what)
{
  hk_err err = { 0 };
  struct oci_state *st = NULL;
  int r = oci_state_parse (text, len, &st, &err);
  bool good
      = r < 0 && st == NULL && strncmp (err.msg, want, strlen (want)) == 0 && strchr (err.msg, '\n') == NULL;
  if (!good)
    printf ("#   got '%s'\n", r < 0 ? err.msg : "(parsed)");
  ok (good, "%s: %s", what, want);
  oci_state_free (st);
}

static void
test_status_names (void)
{
  const char *names[] = { "creating", "created", "running", "stopped", "paused" };
  bool all = true;
  for (int i = 0; i < 5; i++)
    all = all && oci_status_from_name (names[i]) == i && strcmp (oci_status_name (i), names[i]) == 0;
  ok (all, "the five status names round-trip");
  ok (oci_status_from_name ("exited") == -1 && oci_status_from_name (NULL) == -1
          && oci_status_name ((enum oci_status)9) == NULL,
      "unknown status names and values");
}

static void
test_round_trip (void)
{
  struct oci_kv ann[] = { { "org.example.a", "1" }, { "b", "two \"quoted\"\n" } };
  struct oci_state in = {
    .oci_version = "1.2.0",
    .id = "box1",
    .status = OCI_STATUS_STOPPED,
    .pid = 4242,
    .pid_start_time = 123456789012ULL,
    .bundle = "/srv/bundle",
    .annotations = ann,
    .n_annotations = 2,
    .created = "2024-05-01T10:00:00Z",
    .started = "2024-05-01T10:00:01Z",
    .has_exit = true,
    .exit_status = 137,
    .signal = 9,
    .reason = "signaled",
    .rootfs = "/srv/bundle/rootfs",
    .workdir = "/var/lib/hako/sandboxes/box1/work",
    .restartable = true,
  };
  hk_err err = { 0 };
  cleanup_free char *json = NULL;
  size_t len = 0;
  struct oci_state *out = NULL;
  ok (oci_state_to_json (&in, false, &json, &len, &err) == 0 && len == strlen (json), "state to JSON (%s)",
      json ? "ok" : err.msg);
  ok (strchr (json, '\n') == NULL && strstr (json, "\"status\":\"stopped\""), "compact output");
  ok (oci_state_parse (json, len, &out, &err) == 0, "and back (%s)", out ? "ok" : err.msg);
  if (out == NULL)
    return;
  is_str (out->oci_version, "1.2.0", "ociVersion");
  is_str (out->id, "box1", "id");
  ok (out->status == OCI_STATUS_STOPPED && out->pid == 4242 && out->pid_start_time == 123456789012ULL,
      "status, pid, pidStartTime");
  is_str (out->bundle, "/srv/bundle", "bundle");
  ok (out->n_annotations == 2 && strcmp (out->annotations[1].value, "two \"quoted\"\n") == 0,
      "annotations, escapes kept");
  is_str (out->created, "2024-05-01T10:00:00Z", "created");
  is_str (out->started, "2024-05-01T10:00:01Z", "started");
  ok (out->has_exit && out->exit_status == 137, "exitStatus");
  ok (out->signal == 9, "signal");
  is_str (out->reason, "signaled", "reason");
  is_str (out->rootfs, "/srv/bundle/rootfs", "rootfs");
  is_str (out->workdir, "/var/lib/hako/sandboxes/box1/work", "workdir");
  ok (out->restartable && strstr (json, "\"restartable\":true"), "restartable (hako stopped it)");
  oci_state_free (out);
}

static void
test_omitted_fields (void)
{
  struct oci_state in = { .id = "b", .status = OCI_STATUS_CREATED };
  hk_err err = { 0 };
  cleanup_free char *json = NULL;
  size_t len;
  struct oci_state *out = NULL;
  ok (oci_state_to_json (&in, true, &json, &len, &err) == 0, "a minimal state writes");
  ok (strstr (json, "\"pid\": 0") != NULL, "pid 0 is printed, as runc does");
  ok (strstr (json, "\"ociVersion\": \"1.2.0\"") != NULL, "ociVersion defaults to 1.2.0");
  ok (strstr (json, "annotations") == NULL && strstr (json, "exitStatus") == NULL
          && strstr (json, "reason") == NULL && strstr (json, "bundle") == NULL
          && strstr (json, "signal") == NULL && strstr (json, "workdir") == NULL
          && strstr (json, "pidStartTime") == NULL && strstr (json, "restartable") == NULL,
      "absent fields are omitted");
  ok (strchr (json, '\n') != NULL && json[len - 1] == '}', "pretty, without a trailing newline");
  ok (oci_state_parse (json, len, &out, &err) == 0 && !out->has_exit && out->bundle == NULL
          && out->n_annotations == 0 && !out->restartable,
      "reads back with nothing invented");
  oci_state_free (out);

  in.has_exit = true;
  in.exit_status = 0;
  free (json);
  json = NULL;
  oci_state_to_json (&in, false, &json, &len, &err);
  ok (strstr (json, "\"exitStatus\":0") != NULL, "an exit status of 0 is kept");

  in.id = NULL;
  char *none = NULL;
  ok (oci_state_to_json (&in, false, &none, &len, &err) < 0 && none == NULL,
      "a state without an id is refused");
  in.id = "b";
  in.bundle = "/bad\xff/utf8";
  ok (oci_state_to_json (&in, false, &none, &len, &err) < 0 && none == NULL && strstr (err.msg, "UTF-8"),
      "invalid UTF-8 is refused, not written: %s", err.msg);
}

static void
test_tolerant_parse (void)
{
  hk_err err = { 0 };
  struct oci_state *st = NULL;
  cleanup_free char *runc = q ("{'ociVersion':'1.0.2','id':'r','pid':77,'status':'running',"
                               "'bundle':'/b','rootfs':'/b/rootfs','created':'2024-01-01T00:00:00Z',"
                               "'owner':'','unknown':{'x':[1]}}");
  ok (oci_state_parse (runc, strlen (runc), &st, &err) == 0 && st->pid == 77
          && st->status == OCI_STATUS_RUNNING && !st->has_exit && st->pid_start_time == 0,
      "a runc-style state without hako fields parses (%s)", st ? "ok" : err.msg);
  oci_state_free (st);
}

static void
test_damaged (void)
{
  const char *good = "{\"ociVersion\":\"1.2.0\",\"id\":\"box\",\"status\":\"running\",\"pid\":1}";
  fails_with (good, strlen (good) / 2, "invalid JSON: ", "truncated state");
  fails_with ("", 0, "invalid JSON: the text is empty", "empty file");
  fails_with ("\x7f"
              "ELF\x02\x01",
              6, "invalid JSON: ", "garbage");
  fails_with ("not json at all", 15, "invalid JSON: ", "text");
  fails_with ("{\"id\":\"a\",\"status\":\"running\"}\0\0\0", 32, "invalid JSON: ", "NUL padding");
  fails_with ("[]", 2, "the state must be a JSON object", "an array");

  const char *cases[][3] = {
    { "{'status':'running'}", ".id: required", "missing id" },
    { "{'id':'','status':'running'}", ".id: required", "empty id" },
    { "{'id':'a'}", ".status: required", "missing status" },
    { "{'id':'a','status':'exited'}", ".status: unknown status \"exited\"", "bad status" },
    { "{'id':7,'status':'running'}", ".id: must be a string", "id not a string" },
    { "{'id':'a','status':'running','pid':'12'}", ".pid: must be an integer", "pid a string" },
    { "{'id':'a','status':'running','pid':-3}", ".pid: must be an integer between 0 and", "negative pid" },
    { "{'id':'a','status':'stopped','exitStatus':300}", ".exitStatus: must be an integer between 0 and 255",
      "exit status too big" },
    { "{'id':'a','status':'running','annotations':{'k':1}}", ".annotations.k: must be a string",
      "bad annotation" },
    { "{'id':'a','status':'stopped','restartable':'yes'}", ".restartable: must be",
      "restartable not a boolean" },
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
    {
      cleanup_free char *t = q (cases[i][0]);
      fails_with (t, strlen (t), cases[i][1], cases[i][2]);
    }
}

static void
test_features (void)
{
  hk_err err = { 0 };
  cleanup_free char *json = NULL;
  size_t len = 0;
  ok (oci_features_json (NULL, &json, &len, &err) == 0 && len == strlen (json), "features JSON (%s)",
      json ? "ok" : err.msg);
  if (json == NULL)
    return;
  ok (strstr (json, "\"ociVersionMin\": \"1.0.0\"") && strstr (json, "\"ociVersionMax\": \"1.2.0\""),
      "version range");
  ok (strstr (json, "\"createContainer\"") && strstr (json, "\"poststop\""), "hooks");
  ok (strstr (json, "\"rbind\"") && strstr (json, "\"runbindable\"") && strstr (json, "\"nosuid\"")
          && !strstr (json, "\"tmpcopyup\""),
      "mount options: the decoded ones, not the ignored ones");
  ok (strstr (json, "\"time\"") && strstr (json, "\"cgroup\"") && strstr (json, "\"user\""), "namespaces");
  ok (strstr (json, "\"CAP_CHOWN\"") && strstr (json, "\"CAP_SYS_ADMIN\"")
          && strstr (json, "\"CAP_AUDIT_READ\""),
      "capabilities by name");
  ok (strstr (json, "\"SCMP_ACT_ERRNO\"") && strstr (json, "\"SCMP_CMP_MASKED_EQ\"")
          && strstr (json, "\"SCMP_ARCH_X86_64\""),
      "seccomp actions, operators, archs");
  cleanup_free char *ver = xasprintf ("\"io.hako.version\": \"%s\"", HAKO_VERSION);
  ok (strstr (json, ver) != NULL, "annotations carry hako's version");
  ok (strstr (json, "\"apparmor\": {\n") && strstr (json, "\"enabled\": false"),
      "apparmor and selinux disabled");
}

int
main (void)
{
  test_status_names ();
  test_round_trip ();
  test_omitted_fields ();
  test_tolerant_parse ();
  test_damaged ();
  test_features ();
  return tap_done ();
}
