/* annotations: hako's sandbox extensions by OCI annotation (org.hako.*).
 *
 * containerd's CRI plugin puts a pod's and a container's annotations (those
 * its pod_annotations and container_annotations let through) into the OCI
 * config's "annotations"; it never writes a "sandbox" object.  So a pod
 * reaches hako's network policy, Landlock and limits here: each annotation
 * is written as the sandbox member it stands for and parsed by the same
 * code as the spec's own (spec_sandbox.c), with the same errors.  The
 * table is hako-spec(5)'s ANNOTATIONS and docs/kubernetes.md's. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util.h"
#include "oci/spec_internal.h"

#define PREFIX "org.hako."
/* What containerd's CRI says a config is: "sandbox" (the pod's pause
 * container) or "container" (one of the pod's containers). */
#define CRI_TYPE "io.kubernetes.cri.container-type"

enum ann_kind
{
  ANN_STRING, /* the value as a JSON string */
  ANN_LIST,   /* comma-separated, each item a JSON string */
  ANN_PORTS,  /* comma-separated port numbers */
  ANN_BOOL    /* "true" or "false" */
};

struct ann_def
{
  const char *name;   /* after PREFIX */
  const char *member; /* sandbox.MEMBER */
  const char *key;    /* sandbox.MEMBER.KEY */
  enum ann_kind kind;
};

static const struct ann_def defs[] = {
  { "network", "network", "mode", ANN_STRING },
  { "allow", "network", "allow", ANN_LIST },
  { "deny", "network", "deny", ANN_LIST },
  { "landlock.read", "landlock", "read", ANN_LIST },
  { "landlock.write", "landlock", "write", ANN_LIST },
  { "landlock.exec", "landlock", "exec", ANN_LIST },
  { "landlock.tcp-connect", "landlock", "tcp_connect", ANN_PORTS },
  { "landlock.tcp-bind", "landlock", "tcp_bind", ANN_PORTS },
  { "landlock.scoped", "landlock", "scoped", ANN_BOOL },
  { "landlock.required", "landlock", "required", ANN_BOOL },
  { "landlock.derive", "landlock", "derive", ANN_BOOL },
  { "timeout", "limits", "timeout", ANN_STRING },
  { "max-output", "limits", "max_output", ANN_STRING },
  { "disk", "limits", "disk", ANN_STRING },
};
#define N_DEFS (sizeof defs / sizeof *defs)

static const char *const members[] = { "network", "landlock", "limits" };
#define N_MEMBERS (sizeof members / sizeof *members)

const char *
spec_annotation_name (size_t i)
{
  static char buf[64];
  if (i >= N_DEFS)
    return NULL;
  snprintf (buf, sizeof buf, PREFIX "%s", defs[i].name);
  return buf;
}

static const char *
kv_get (const struct oci_spec *s, const char *key)
{
  for (size_t i = 0; i < s->n_annotations; i++)
    if (strcmp (s->annotations[i].key, key) == 0)
      return s->annotations[i].value;
  return NULL;
}

/* One annotation's value, written as its JSON member. */
static int
emit_value (struct json_out *o, const char *ann, const struct ann_def *d, const char *value, hk_err *err)
{
  json_key (o, d->key);
  switch (d->kind)
    {
    case ANN_STRING: json_str (o, value); return 0;
    case ANN_BOOL:
      if (strcmp (value, "true") != 0 && strcmp (value, "false") != 0)
        return err_set (err, EINVAL, "annotation %s: must be \"true\" or \"false\", got \"%s\"", ann, value);
      json_bool (o, value[0] == 't');
      return 0;
    case ANN_LIST:
    case ANN_PORTS: break;
    }
  json_arr_open (o);
  cleanup_free char *copy = xstrdup (value);
  char *rest = copy, *item;
  /* "" is an empty list ([]): for Landlock, "nothing of that kind"; an
   * empty item elsewhere is kept, for the sandbox parser to refuse.  A
   * value with a newline is one item a line (a YAML block: network rules,
   * whose methods are comma-separated), blank lines skipped. */
  bool lines = strchr (copy, '\n') != NULL;
  if (copy[strspn (copy, " \t\r\n")] == '\0')
    rest = NULL;
  while ((item = strsep (&rest, lines ? "\n" : ",")) != NULL)
    {
      item += strspn (item, " \t");
      size_t n = strlen (item);
      while (n > 0 && (item[n - 1] == ' ' || item[n - 1] == '\t' || item[n - 1] == '\r'))
        item[--n] = '\0';
      if (lines && n == 0)
        continue;
      if (d->kind == ANN_LIST)
        {
          json_str (o, item);
          continue;
        }
      /* A port: digits only, so the number is JSON; the sandbox parser
       * checks its range. */
      if (n == 0 || n > 5 || strspn (item, "0123456789") != n)
        return err_set (err, EINVAL, "annotation %s: \"%s\" is not a port number (1-65535)", ann, item);
      json_uint (o, strtoul (item, NULL, 10));
    }
  json_arr_close (o);
  return 0;
}

/* {"sandbox": {...}} from the annotations of one member (or of all when
 * only is NULL), or NULL with err set. */
static char *
build (const struct oci_spec *s, const struct ann_def *only, size_t *len, hk_err *err)
{
  struct json_out o;
  json_out_init (&o, NULL);
  json_obj_open (&o);
  json_key (&o, "sandbox");
  json_obj_open (&o);
  for (size_t m = 0; m < N_MEMBERS; m++)
    {
      bool open = false;
      for (size_t i = 0; i < N_DEFS; i++)
        {
          const struct ann_def *d = &defs[i];
          /* The rules are checked with their mode: alone they are refused. */
          bool rules
              = strcmp (only ? only->key : "", "allow") == 0 || strcmp (only ? only->key : "", "deny") == 0;
          bool wanted = only == NULL || only == d || (rules && strcmp (d->key, "mode") == 0);
          const char *v = kv_get (s, spec_annotation_name (i));
          if (strcmp (d->member, members[m]) != 0 || !wanted || v == NULL)
            continue;
          if (!open)
            {
              json_key (&o, members[m]);
              json_obj_open (&o);
              open = true;
            }
          if (emit_value (&o, spec_annotation_name (i), d, v, err) < 0)
            {
              char *junk;
              size_t l;
              hk_err e2;
              if (json_out_finish (&o, &junk, &l, &e2) == 0)
                free (junk);
              return NULL;
            }
        }
      if (open)
        json_obj_close (&o);
    }
  json_obj_close (&o);
  json_obj_close (&o);
  char *text;
  if (json_out_finish (&o, &text, len, err) < 0)
    return NULL;
  return text;
}

static int
parse_text (const char *text, size_t len, struct hako_sandbox *out, hk_err *err)
{
  yajl_val root;
  if (json_parse (text, len, &root, err) < 0)
    return -1;
  int r = spec_parse_sandbox (root, out, err);
  json_free (root);
  return r;
}

/* Refuse an annotation that says what the config's own sandbox object says
 * already: two sources for one setting, and which one rules would be a
 * guess. */
static int
conflict (const char *member, hk_err *err)
{
  return err_set (err, EINVAL,
                  "annotations " PREFIX
                  "* and the config's .sandbox.%s both set sandbox.%s: set it in one place",
                  member, member);
}

static void
take_strv (char ***dst, char ***src)
{
  *dst = *src;
  *src = NULL;
}

/* Move what the annotations set (a) into the spec's sandbox (s). */
static int
merge (struct hako_sandbox *s, struct hako_sandbox *a, hk_err *err)
{
  if (a->net_mode != HAKO_NET_UNSET)
    {
      if (s->net_mode != HAKO_NET_UNSET)
        return conflict ("network", err);
      s->net_mode = a->net_mode;
      take_strv (&s->net_allow, &a->net_allow);
      take_strv (&s->net_deny, &a->net_deny);
      oci_net_rules_free (&s->allow_rules);
      oci_net_rules_free (&s->deny_rules);
      s->allow_rules = a->allow_rules;
      s->deny_rules = a->deny_rules;
      a->allow_rules = a->deny_rules = (struct net_rules){ 0 };
    }
  if (a->landlock.present)
    {
      if (s->landlock.present)
        return conflict ("landlock", err);
      spec_free_landlock (&s->landlock);
      s->landlock = a->landlock;
      memset (&a->landlock, 0, sizeof a->landlock);
    }
  if (a->has_timeout)
    {
      if (s->has_timeout)
        return conflict ("limits.timeout", err);
      s->has_timeout = true;
      s->timeout_ms = a->timeout_ms;
    }
  if (a->has_max_output)
    {
      if (s->has_max_output)
        return conflict ("limits.max_output", err);
      s->has_max_output = true;
      s->max_output = a->max_output;
    }
  if (a->has_disk)
    {
      if (s->has_disk)
        return conflict ("limits.disk", err);
      s->has_disk = true;
      s->disk = a->disk;
    }
  return 0;
}

/* What annotation defs[i] alone sets, into *one: 1, or 0 when s has none. */
static int
parse_one (const struct oci_spec *s, size_t i, struct hako_sandbox *one, hk_err *err)
{
  cleanup_free char *ann = xstrdup (spec_annotation_name (i));
  if (kv_get (s, ann) == NULL)
    return 0;
  if ((strcmp (defs[i].key, "allow") == 0 || strcmp (defs[i].key, "deny") == 0)
      && kv_get (s, PREFIX "network") == NULL)
    return err_set (err, EINVAL, "annotation %s: needs " PREFIX "network: allowlist or denylist", ann);
  size_t len;
  cleanup_free char *text = build (s, &defs[i], &len, err);
  if (text == NULL)
    return -1;
  if (parse_text (text, len, one, err) < 0)
    return err_prefix (err, "annotation %s=\"%s\"", ann, kv_get (s, ann));
  return 1;
}

int
oci_annotation_sandbox (const struct oci_spec *s, const char *name, struct hako_sandbox *out, hk_err *err)
{
  *out = (struct hako_sandbox){ 0 };
  for (size_t i = 0; i < N_DEFS; i++)
    if (strcmp (name, spec_annotation_name (i)) == 0)
      {
        int r = parse_one (s, i, out, err);
        if (r <= 0)
          oci_sandbox_free (out);
        return r;
      }
  return 0;
}

const char *
oci_annotation_value (const struct oci_spec *s, const char *name)
{
  return kv_get (s, name);
}

void
oci_sandbox_free (struct hako_sandbox *sb)
{
  spec_free_sandbox (sb);
  *sb = (struct hako_sandbox){ 0 };
}

int
spec_parse_annotations (struct oci_spec *s, hk_err *err)
{
  bool any = false;
  for (size_t i = 0; i < s->n_annotations; i++)
    {
      const char *k = s->annotations[i].key;
      if (strncmp (k, PREFIX, strlen (PREFIX)) != 0)
        continue;
      /* org.hako.learn is the marker `run --learn` writes for `hako state`:
       * it turns nothing off (learning is the learner's fd, not a name), so
       * a config that carries it (a learned run's) still parses. */
      if (strcmp (k, PREFIX "learn") == 0)
        continue;
      /* An unknown or misspelt name would leave the pod without the
       * confinement its author meant: refused, never ignored. */
      size_t j = 0;
      while (j < N_DEFS && strcmp (k, spec_annotation_name (j)) != 0)
        j++;
      if (j == N_DEFS)
        return err_set (err, EINVAL, "annotation %s: unknown (hako-spec(5), ANNOTATIONS, lists the %s names)",
                        k, PREFIX "*");
      any = true;
    }
  if (!any)
    return 0;
  /* Each annotation on its own first, so the error names it. */
  for (size_t i = 0; i < N_DEFS; i++)
    {
      struct hako_sandbox one = { 0 };
      int r = parse_one (s, i, &one, err);
      spec_free_sandbox (&one);
      if (r < 0)
        return -1;
    }
  size_t len;
  cleanup_free char *text = build (s, NULL, &len, err);
  if (text == NULL)
    return -1;
  struct hako_sandbox a = { 0 };
  if (parse_text (text, len, &a, err) < 0)
    {
      spec_free_sandbox (&a);
      return err_prefix (err, "annotations " PREFIX "*");
    }
  /* The pod's sandbox (pause) container holds the pod's network: it takes
   * the network annotations only.  Landlock or limits on it would confine
   * or end the pod's namespaces, not a workload; they are checked above
   * all the same, so a bad pod annotation fails RunPodSandbox. */
  const char *type = kv_get (s, CRI_TYPE);
  if (type && strcmp (type, "sandbox") == 0)
    {
      spec_free_landlock (&a.landlock);
      memset (&a.landlock, 0, sizeof a.landlock);
      a.has_timeout = a.has_max_output = a.has_disk = false;
    }
  int r = merge (&s->sandbox, &a, err);
  spec_free_sandbox (&a);
  if (r < 0)
    return -1;
  s->sandbox.present = true;
  /* A pod's container in allowlist mode joins the pod's network namespace
   * (containerd names the pause container's): the proxy there is the pod's,
   * run for its sandbox container (runtime/proxy/netpolicy.c). */
  const struct oci_namespace *net = oci_spec_ns (s, OCI_NS_NETWORK);
  bool proxied = s->sandbox.net_mode == HAKO_NET_ALLOWLIST || s->sandbox.net_mode == HAKO_NET_DENYLIST;
  s->sandbox.net_join
      = proxied && type && strcmp (type, "container") == 0 && net && net->path && net->path[0];
  return 0;
}
