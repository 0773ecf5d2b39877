/* learn (oci): observations to a profile, learning mode's config edits, and
 * a learned profile enforced (oci/learn.h; hako-learn(7)). */
#include "oci/learn.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/util.h"
#include "oci/json.h"
#include "oci/learn_internal.h"
#include "oci/spec.h"

/* ---- rule sets ------------------------------------------------------------------ */

struct rule
{
  char *value;
  size_t count;               /* observations it covers */
  const struct learn_rec *ex; /* the first of them */
  bool old;                   /* in the profile before this run */
};

struct set
{
  struct rule *v;
  size_t n;
};

static struct rule *
set_find (struct set *s, const char *value)
{
  for (size_t i = 0; i < s->n; i++)
    if (strcmp (s->v[i].value, value) == 0)
      return &s->v[i];
  return NULL;
}

static void
set_add (struct set *s, const char *value, const struct learn_rec *ex, bool old)
{
  struct rule *r = set_find (s, value);
  if (r == NULL)
    {
      s->v = xrealloc (s->v, (s->n + 1) * sizeof *s->v);
      r = &s->v[s->n++];
      *r = (struct rule){ .value = xstrdup (value) };
    }
  if (old)
    r->old = true;
  if (ex)
    {
      r->count++;
      if (r->ex == NULL)
        r->ex = ex;
    }
}

static void
set_free (struct set *s)
{
  for (size_t i = 0; i < s->n; i++)
    free (s->v[i].value);
  free (s->v);
  *s = (struct set){ 0 };
}

static void
set_drop (struct set *s, size_t i)
{
  free (s->v[i].value);
  s->v[i] = s->v[--s->n];
}

static char *
parent_of (const char *path)
{
  const char *slash = strrchr (path, '/');
  if (slash == NULL || slash == path)
    return xstrdup ("/");
  return xstrndup (path, (size_t)(slash - path));
}

static int
cmp_rule (const void *a, const void *b)
{
  return strcmp (((const struct rule *)a)->value, ((const struct rule *)b)->value);
}

/* qsort of an empty set's NULL array is undefined (UBSan says so). */
static void
set_sort (struct set *s, int (*cmp) (const void *, const void *))
{
  if (s->n > 1)
    qsort (s->v, s->n, sizeof *s->v, cmp);
}

/* Drop every rule another one of the set covers (a Landlock rule on a
 * directory covers everything beneath it), folding its count in. */
static void
drop_covered (struct set *s)
{
  for (size_t i = 0; i < s->n;)
    {
      size_t j = 0;
      while (j < s->n && (j == i || !path_within (s->v[i].value, s->v[j].value, true)))
        j++;
      if (j == s->n)
        {
          i++;
          continue;
        }
      s->v[j].count += s->v[i].count;
      if (s->v[j].ex == NULL)
        s->v[j].ex = s->v[i].ex;
      set_drop (s, i);
    }
}

/* The shortest rule set: a directory with LEARN_DIR_THRESHOLD or more
 * granted entries is granted whole, up to (never including) "/". */
static void
collapse (struct set *s)
{
  bool changed = true;
  while (changed)
    {
      changed = false;
      drop_covered (s);
      for (size_t i = 0; i < s->n && !changed; i++)
        {
          cleanup_free char *dir = parent_of (s->v[i].value);
          if (strcmp (dir, "/") == 0)
            continue;
          size_t k = 0;
          for (size_t j = 0; j < s->n; j++)
            {
              cleanup_free char *p = parent_of (s->v[j].value);
              k += strcmp (p, dir) == 0;
            }
          if (k < LEARN_DIR_THRESHOLD)
            continue;
          set_add (s, dir, NULL, false);
          changed = true;
        }
    }
  set_sort (s, cmp_rule);
}

/* Where an observed path goes: /proc is one read-only view (its pids
 * change every run); the devices every restricted sandbox gets anyway
 * (runtime/confine/landlock.c, std_devices) need no rule. */
static char *
norm_path (const char *p)
{
  static const char *const granted[]
      = { "/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/ptmx" };
  for (size_t i = 0; i < sizeof granted / sizeof *granted; i++)
    if (strcmp (p, granted[i]) == 0)
      return NULL;
  if (path_within (p, "/dev/pts", true))
    return NULL;
  if (path_within (p, "/proc", true))
    return xstrdup ("/proc");
  return xstrdup (p);
}

/* ---- the profile ----------------------------------------------------------------- */

enum
{
  S_READ,
  S_WRITE,
  S_EXEC,
  S_BIND,
  S_CONNECT,
  S_SYSCALL,
  S_ALLOW,
  N_SETS
};

static const char *const set_names[N_SETS]
    = { "landlock.read",        "landlock.write", "landlock.exec", "landlock.tcp_bind",
        "landlock.tcp_connect", "seccomp.allow",  "network.allow" };

static int
load_strv (yajl_val obj, const char *path, const char *key, struct set *s, hk_err *err)
{
  char **v = NULL;
  if (json_get_strv (obj, path, key, &v, err) < 0)
    return -1;
  for (size_t i = 0; v && v[i]; i++)
    set_add (s, v[i], NULL, true);
  strv_free (v);
  return 0;
}

static int
load_ports (yajl_val obj, const char *path, const char *key, struct set *s, hk_err *err)
{
  yajl_val a = NULL;
  int r = json_get_array (obj, path, key, &a, err);
  if (r <= 0)
    return r;
  for (size_t i = 0; i < json_len (a); i++)
    {
      int64_t port;
      cleanup_free char *p = json_index (path, i);
      if (json_as_i64 (json_at (a, i), p, NULL, 0, 65535, &port, err) < 0)
        return -1;
      char v[16];
      snprintf (v, sizeof v, "%" PRId64, port);
      set_add (s, v, NULL, true);
    }
  return 0;
}

/* The profile written by an earlier run, if any. */
static int
load_old (const char *path, struct set *sets, bool *had_seccomp, hk_err *err)
{
  cleanup_free char *text = NULL;
  size_t len = 0;
  *had_seccomp = false;
  if (access (path, F_OK) < 0 && errno == ENOENT)
    return 0;
  if (file_read_all (path, 16 << 20, &text, &len, err) < 0)
    return -1;
  yajl_val root;
  if (json_parse (text, len, &root, err) < 0)
    return err_prefix (err, "%s", path);
  yajl_val sb = NULL, ll = NULL, net = NULL, sc = NULL;
  int r = 0;
  if (json_get_object (root, "", "sandbox", &sb, err) < 0
      || json_get_object (sb, ".sandbox", "landlock", &ll, err) < 0
      || json_get_object (sb, ".sandbox", "network", &net, err) < 0
      || json_get_object (sb, ".sandbox", "seccomp", &sc, err) < 0
      || load_strv (ll, ".sandbox.landlock", "read", &sets[S_READ], err) < 0
      || load_strv (ll, ".sandbox.landlock", "write", &sets[S_WRITE], err) < 0
      || load_strv (ll, ".sandbox.landlock", "exec", &sets[S_EXEC], err) < 0
      || load_ports (ll, ".sandbox.landlock.tcp_bind", "tcp_bind", &sets[S_BIND], err) < 0
      || load_ports (ll, ".sandbox.landlock.tcp_connect", "tcp_connect", &sets[S_CONNECT], err) < 0
      || load_strv (net, ".sandbox.network", "allow", &sets[S_ALLOW], err) < 0
      || load_strv (sc, ".sandbox.seccomp", "allow", &sets[S_SYSCALL], err) < 0)
    r = err_prefix (err, "%s", path);
  *had_seccomp = sc != NULL;
  json_free (root);
  return r;
}

static int
cmp_port (const void *a, const void *b)
{
  return atoi (((const struct rule *)a)->value) - atoi (((const struct rule *)b)->value);
}

static void
emit_ports (struct json_out *o, const char *key, const struct set *s)
{
  json_key (o, key);
  json_arr_open (o);
  for (size_t i = 0; i < s->n; i++)
    json_int (o, atoi (s->v[i].value));
  json_arr_close (o);
}

static void
emit_set (struct json_out *o, const char *key, const struct set *s)
{
  json_key (o, key);
  json_arr_open (o);
  for (size_t i = 0; i < s->n; i++)
    json_str (o, s->v[i].value);
  json_arr_close (o);
}

static const char *
verb_of (int set)
{
  switch (set)
    {
    case S_READ: return "read";
    case S_WRITE: return "written, created or removed";
    case S_EXEC: return "executed";
    default: return "used";
    }
}

static void
note_rule (FILE *f, int set, const struct rule *r)
{
  cleanup_free char *value = oci_learn_escape (r->value);
  fprintf (f, "%s %s: ", set_names[set], value);
  if (r->ex == NULL)
    {
      fprintf (f, "kept from an earlier run\n");
      return;
    }
  cleanup_free char *ex = oci_learn_escape (r->ex->value), *who = oci_learn_escape (r->ex->note);
  if (set <= S_EXEC && strcmp (r->ex->value, r->value) != 0)
    fprintf (
        f,
        "%zu path(s) %s beneath it (/proc is one rule; creating or removing an entry needs its directory; "
        "a directory is granted whole from %d entries), first %s by %s\n",
        r->count, verb_of (set), LEARN_DIR_THRESHOLD, ex, who);
  else
    fprintf (f, "%s by %s\n", verb_of (set), who);
}

/* The run's records into the rule sets. */
static void
add_records (struct set *sets, struct set *withheld, const struct learn_rec *recs, size_t n)
{
  /* The entries the run made or removed itself. */
  struct set made = { 0 };
  for (size_t i = 0; i < n; i++)
    if (recs[i].kind == 'c')
      set_add (&made, recs[i].value, NULL, false);
  for (size_t i = 0; i < n; i++)
    {
      const struct learn_rec *r = &recs[i];
      cleanup_free char *p = NULL;
      /* A program the run built and ran is not there when a later run's
       * rules are made: execute goes on its directory. */
      if (r->kind == 'x' && set_find (&made, r->value))
        {
          cleanup_free char *dir = parent_of (r->value);
          if ((p = norm_path (dir)))
            set_add (&sets[S_EXEC], p, r, false);
          continue;
        }
      switch (r->kind)
        {
        case 'r':
        case 'w':
        case 'x':
          if ((p = norm_path (r->value)))
            set_add (&sets[r->kind == 'r' ? S_READ : r->kind == 'w' ? S_WRITE : S_EXEC], p, r, false);
          break;
        case 'c':
          {
            /* Creating or removing an entry is a right on its directory. */
            cleanup_free char *dir = parent_of (r->value);
            if ((p = norm_path (dir)))
              set_add (&sets[S_WRITE], p, r, false);
            break;
          }
        case 'b': set_add (&sets[S_BIND], r->value, r, false); break;
        case 't': set_add (&sets[S_CONNECT], r->value, r, false); break;
        case 's': set_add (&sets[S_SYSCALL], r->value, r, false); break;
        case 'h':
        case 'q':
          set_add (oci_learn_rule_needs_consent (r->value) ? withheld : &sets[S_ALLOW], r->value, r, false);
          break;
        default: break;
        }
    }
  set_free (&made);
}

/* The allow set's request rules (those with a space) replaced by their
 * narrowest covering set (oci_learn_request_rules), each keeping an
 * observation of a rule it covers for the notes. */
static void
tidy_requests (struct set *allow)
{
  char **in = xcalloc (allow->n + 1, sizeof *in);
  struct rule *src = xcalloc (allow->n + 1, sizeof *src);
  size_t n = 0;
  for (size_t i = 0; i < allow->n;)
    if (strchr (allow->v[i].value, ' '))
      {
        src[n] = allow->v[i];
        in[n++] = allow->v[i].value;
        allow->v[i] = allow->v[--allow->n];
      }
    else
      i++;
  size_t *from;
  char **out = oci_learn_request_rules (in, &from);
  for (size_t i = 0; out[i]; i++)
    {
      const struct rule *o = &src[from[i]];
      set_add (allow, out[i], o->ex, o->old);
    }
  strv_free (out);
  free (from);
  for (size_t i = 0; i < n; i++)
    free (src[i].value);
  free (src);
  free (in);
}

/* Collapse the path sets, drop the read rules a write rule covers, sort. */
static void
tidy_sets (struct set *sets)
{
  tidy_requests (&sets[S_ALLOW]);
  collapse (&sets[S_WRITE]);
  collapse (&sets[S_EXEC]);
  collapse (&sets[S_READ]);
  /* "write" includes read (runtime/confine/landlock.c): no read rule beneath one. */
  for (size_t i = 0; i < sets[S_READ].n;)
    {
      bool covered = false;
      for (size_t j = 0; j < sets[S_WRITE].n && !covered; j++)
        covered = path_within (sets[S_READ].v[i].value, sets[S_WRITE].v[j].value, true);
      if (covered)
        set_drop (&sets[S_READ], i);
      else
        i++;
    }
  set_sort (&sets[S_READ], cmp_rule);
  set_sort (&sets[S_BIND], cmp_port);
  set_sort (&sets[S_CONNECT], cmp_port);
  set_sort (&sets[S_SYSCALL], cmp_rule);
  set_sort (&sets[S_ALLOW], cmp_rule);
}

/* The learned profile's JSON text: network appears with an allow-list,
 * or (with_network) an empty one when every destination was withheld. */
static int
emit_profile (struct set *sets, bool with_seccomp, bool with_network, char **text, hk_err *err)
{
  struct json_out o;
  json_out_init (&o, "  ");
  json_obj_open (&o);
  json_key (&o, "sandbox");
  json_obj_open (&o);
  json_key (&o, "landlock");
  json_obj_open (&o);
  emit_set (&o, "read", &sets[S_READ]);
  emit_set (&o, "write", &sets[S_WRITE]);
  emit_set (&o, "exec", &sets[S_EXEC]);
  emit_ports (&o, "tcp_bind", &sets[S_BIND]);
  emit_ports (&o, "tcp_connect", &sets[S_CONNECT]);
  json_obj_close (&o);
  if (sets[S_ALLOW].n || with_network)
    {
      json_key (&o, "network");
      json_obj_open (&o);
      json_kstr (&o, "mode", "allowlist");
      emit_set (&o, "allow", &sets[S_ALLOW]);
      json_obj_close (&o);
    }
  if (with_seccomp)
    {
      json_key (&o, "seccomp");
      json_obj_open (&o);
      emit_set (&o, "allow", &sets[S_SYSCALL]);
      json_obj_close (&o);
    }
  json_obj_close (&o);
  json_obj_close (&o);
  size_t len = 0;
  return json_out_finish (&o, text, &len, err);
}

/* Loopback, link-local and private destinations, withheld: an old
 * profile's too (an earlier hako granted them). */
static void
withhold_allow (struct set *allow, struct set *withheld)
{
  for (size_t i = 0; i < allow->n;)
    if (oci_learn_rule_needs_consent (allow->v[i].value))
      {
        set_add (withheld, allow->v[i].value, NULL, false);
        set_drop (allow, i);
      }
    else
      i++;
}

/* The side file's text: one line per rule saying what it was granted for,
 * one per destination withheld; *add gets the rules not in before[] and
 * the withheld destinations ("!" first). */
static char *
notes_text (const char *path, const char *command, struct set *sets, struct set *before,
            const struct set *withheld, char ***add)
{
  char *notes = NULL;
  size_t notes_len = 0, n_added = 0;
  FILE *f = open_memstream (&notes, &notes_len);
  if (f == NULL)
    return NULL;
  cleanup_free char *epath = oci_learn_escape (path), *ecmd = oci_learn_escape (command);
  fprintf (f, "# Where each rule of %s comes from (hako run --learn; see hako-learn(7)).\n", epath);
  fprintf (f, "# Last learned from: %s\n", ecmd);
  *add = xcalloc (1, sizeof **add);
  for (int k = 0; k < N_SETS; k++)
    for (size_t i = 0; i < sets[k].n; i++)
      {
        note_rule (f, k, &sets[k].v[i]);
        if (set_find (&before[k], sets[k].v[i].value) != NULL)
          continue;
        cleanup_free char *v = oci_learn_escape (sets[k].v[i].value);
        *add = xrealloc (*add, (n_added + 2) * sizeof **add);
        (*add)[n_added++] = xasprintf ("%s %s", set_names[k], v);
        (*add)[n_added] = NULL;
      }
  for (size_t i = 0; i < withheld->n; i++)
    {
      cleanup_free char *v = oci_learn_escape (withheld->v[i].value);
      const char *why = oci_learn_rule_needs_consent (withheld->v[i].value);
      const char *q = strchr (v, ' ') ? "'" : "";
      fprintf (f,
               "# not granted: network.allow %s: a %s destination (the host's own or its network's), "
               "which a learned profile never grants; to reach it, name it when enforcing: --allow %s%s%s\n",
               v, why, q, v, q);
      *add = xrealloc (*add, (n_added + 2) * sizeof **add);
      (*add)[n_added++]
          = xasprintf ("!network.allow %s: not granted (%s; needs --allow %s%s%s)", v, why, q, v, q);
      (*add)[n_added] = NULL;
    }
  fclose (f);
  return notes;
}

int
oci_learn_update (const char *path, const struct learn_rec *recs, size_t n, bool seccomp, const char *command,
                  char ***added, hk_err *err)
{
  struct set sets[N_SETS] = { { 0 } }, before[N_SETS] = { { 0 } }, withheld = { 0 };
  bool had_seccomp;
  int ret = -1;
  cleanup_free char *text = NULL, *withnl = NULL, *notes_path = NULL, *notes = NULL;
  char **add = NULL;
  *added = NULL;
  if (load_old (path, sets, &had_seccomp, err) < 0)
    goto out;
  /* The rules before this run, to tell what is new. */
  for (int k = 0; k < N_SETS; k++)
    for (size_t i = 0; i < sets[k].n; i++)
      set_add (&before[k], sets[k].v[i].value, NULL, true);
  add_records (sets, &withheld, recs, n);
  withhold_allow (&sets[S_ALLOW], &withheld);
  tidy_sets (sets);
  set_sort (&withheld, cmp_rule);
  if (emit_profile (sets, seccomp || had_seccomp, withheld.n > 0, &text, err) < 0)
    goto out;
  withnl = xasprintf ("%s\n", text);
  if ((notes = notes_text (path, command, sets, before, &withheld, &add)) == NULL)
    {
      err_sys (err, "open_memstream");
      goto out;
    }
  notes_path = xasprintf ("%s.notes", path);
  if (file_write_atomic (path, withnl, strlen (withnl), 0644, err) < 0
      || file_write_atomic (notes_path, notes, strlen (notes), 0644, err) < 0)
    goto out;
  *added = steal_pointer (&add);
  ret = 0;
out:
  strv_free (add);
  set_free (&withheld);
  for (int k = 0; k < N_SETS; k++)
    {
      set_free (&sets[k]);
      set_free (&before[k]);
    }
  return ret;
}

/* ---- config edits -------------------------------------------------------------- */

static int
parse_object (const char *json, size_t len, const char *what, yajl_val *root, hk_err *err)
{
  if (json_parse (json, len, root, err) < 0)
    return err_prefix (err, "%s", what);
  if (!YAJL_IS_OBJECT (*root))
    {
      json_free (*root);
      return err_setk (err, ERR_INVALID_CONFIG, EINVAL, "%s: must be a JSON object", what);
    }
  return 0;
}

int
oci_spec_learn_edit (const char *json, size_t len, const char *note, char **out, size_t *out_len, hk_err *err)
{
  yajl_val root;
  if (parse_object (json, len, "the config", &root, err) < 0)
    return -1;
  struct json_out o;
  json_out_init (&o, "  ");
  json_obj_open (&o);
  bool annotated = false;
  for (size_t i = 0; i < root->u.object.len; i++)
    {
      const char *k = root->u.object.keys[i];
      yajl_val v = root->u.object.values[i];
      json_key (&o, k);
      if (strcmp (k, "sandbox") == 0 && YAJL_IS_OBJECT (v))
        {
          /* hako's own seccomp filter (linux.seccomp) stays: without it
           * the observed run opened AF_VSOCK and made namespaces, and a
           * learned list only ever narrows it.  An earlier profile's
           * allow-list goes: it would refuse the learner's hand-over
           * (pidfd_open, sendmsg) and hide what a new run needs. */
          json_obj_open (&o);
          json_members_but (&o, v, (const char *const[]){ "landlock", "seccomp", NULL });
          json_obj_close (&o);
        }
      else if (strcmp (k, "annotations") == 0 && YAJL_IS_OBJECT (v))
        {
          json_obj_open (&o);
          json_members_but (&o, v, (const char *const[]){ "org.hako.learn", NULL });
          json_kstr (&o, "org.hako.learn", note);
          json_obj_close (&o);
          annotated = true;
        }
      else
        json_value (&o, v);
    }
  if (!annotated)
    {
      json_key (&o, "annotations");
      json_obj_open (&o);
      json_kstr (&o, "org.hako.learn", note);
      json_obj_close (&o);
    }
  json_obj_close (&o);
  json_free (root);
  return json_out_finish (&o, out, out_len, err);
}

static void
emit_landlock (struct json_out *o, yajl_val learned, yajl_val old)
{
  static const char *const keys[] = { "read", "write", "exec", "tcp_bind", "tcp_connect" };
  json_obj_open (o);
  for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
    {
      yajl_val v = json_get (learned, keys[i]);
      if (v)
        {
          json_key (o, keys[i]);
          json_value (o, v);
        }
    }
  /* Only what was learned: what the mounts would allow is not granted. */
  json_kbool (o, "derive", false);
  json_kbool (o, "required", true);
  /* A file the learned run made and removed is not there at create. */
  json_kbool (o, "missing_ok", true);
  yajl_val scoped = json_get (old, "scoped");
  if (scoped)
    {
      json_key (o, "scoped");
      json_value (o, scoped);
    }
  json_obj_close (o);
}

/* The config's "sandbox" object (v, or NULL when it has none) with the
 * profile's landlock, network and seccomp allow-list. */
static void
emit_sandbox_member (struct json_out *o, yajl_val v, yajl_val pll, yajl_val pnet, yajl_val psc)
{
  const char *skip[4] = { "landlock", NULL, NULL, NULL };
  size_t n = 1;
  if (pnet)
    skip[n++] = "network";
  if (psc)
    skip[n++] = "seccomp";
  json_obj_open (o);
  if (v)
    json_members_but (o, v, skip);
  if (pll)
    {
      json_key (o, "landlock");
      emit_landlock (o, pll, json_get (v, "landlock"));
    }
  else if (json_get (v, "landlock"))
    {
      json_key (o, "landlock");
      json_value (o, json_get (v, "landlock"));
    }
  if (pnet)
    {
      json_key (o, "network");
      json_value (o, pnet);
    }
  if (psc)
    {
      json_key (o, "seccomp");
      json_obj_open (o);
      json_key (o, "allow");
      json_value (o, json_get (psc, "allow"));
      json_obj_close (o);
    }
  json_obj_close (o);
}

int
oci_spec_apply_profile (const char *json, size_t len, const char *profile, size_t plen, char **out,
                        size_t *out_len, hk_err *err)
{
  yajl_val root, prof;
  if (parse_object (profile, plen, "--profile-file", &prof, err) < 0)
    return -1;
  yajl_val psb = json_get (prof, "sandbox"), pll = json_get (psb, "landlock"),
           pnet = json_get (psb, "network"), psc = json_get (psb, "seccomp");
  if (oci_learn_check_profile (psb, pll, pnet, psc, err) < 0
      || parse_object (json, len, "the config", &root, err) < 0)
    {
      json_free (prof);
      return -1;
    }
  /* linux.seccomp (hako's filter, or the bundle's) is left as it is: the
   * allow-list becomes sandbox.seccomp.allow, a second filter that only
   * narrows it (runtime/confine/seccomp.c). */
  struct json_out o;
  json_out_init (&o, "  ");
  json_obj_open (&o);
  bool has_sandbox = false;
  for (size_t i = 0; i < root->u.object.len; i++)
    {
      const char *k = root->u.object.keys[i];
      yajl_val v = root->u.object.values[i];
      json_key (&o, k);
      if (strcmp (k, "sandbox") == 0 && YAJL_IS_OBJECT (v))
        {
          has_sandbox = true;
          emit_sandbox_member (&o, v, pll, pnet, psc);
        }
      else
        json_value (&o, v);
    }
  if (!has_sandbox)
    {
      json_key (&o, "sandbox");
      emit_sandbox_member (&o, NULL, pll, pnet, psc);
    }
  json_obj_close (&o);
  json_free (root);
  json_free (prof);
  return json_out_finish (&o, out, out_len, err);
}
