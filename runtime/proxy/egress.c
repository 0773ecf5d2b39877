/* egress: a proxied sandbox's CA, trust bundle and secrets at create, and
 * the environment its processes get. */
#include "runtime/proxy/egress.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/inroot.h"
#include "lib/util.h"
#include "runtime/proxy/tls.h"

static const char *const bundle_paths[] = {
  EGRESS_BUNDLE_INSIDE,                                /* Debian, Ubuntu, Alpine, Arch */
  "/etc/pki/tls/certs/ca-bundle.crt",                  /* Fedora, RHEL */
  "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem", /* ... its source */
  "/etc/ssl/ca-bundle.pem",                            /* openSUSE */
  "/etc/ssl/cert.pem",                                 /* Alpine, macOS-like layouts */
  NULL,
};

static const char *const trust_vars[] = { "SSL_CERT_FILE",  "REQUESTS_CA_BUNDLE", "NODE_EXTRA_CA_CERTS",
                                          "CURL_CA_BUNDLE", "GIT_SSL_CAINFO",     "PIP_CERT" };
#define N_TRUST_VARS (sizeof trust_vars / sizeof *trust_vars)

bool
egress_intercepts (const struct oci_spec *spec)
{
  const struct hako_sandbox *sb = &spec->sandbox;
  if (sb->net_mode != HAKO_NET_ALLOWLIST && sb->net_mode != HAKO_NET_DENYLIST)
    return false;
  /* `run --learn` (its config carries org.hako.learn): every request is
   * seen, to be learned. */
  if (sb->n_secrets > 0 || oci_annotation_value (spec, "org.hako.learn") != NULL)
    return true;
  for (size_t i = 0; i < sb->allow_rules.n; i++)
    if (sb->allow_rules.v[i].request && sb->allow_rules.v[i].https)
      return true;
  for (size_t i = 0; i < sb->deny_rules.n; i++)
    if (sb->deny_rules.v[i].request && sb->deny_rules.v[i].https)
      return true;
  return false;
}

/* ---- the CA --------------------------------------------------------------------- */

static bool
exists (const struct store_entry *e, const char *name)
{
  cleanup_free char *path = store_path (e, name);
  return access (path, F_OK) == 0;
}

/* The host's bundle and the CA, 0644: the sandbox's processes read it
 * through a bind, as whatever user they are.  Public certificates only. */
static int
write_bundle (const struct store_entry *e, const char *crt, hk_err *err)
{
  cleanup_free char *host = NULL;
  size_t len = 0;
  hk_err ignored;
  if (file_read_all (EGRESS_HOST_BUNDLE, 16 << 20, &host, &len, &ignored) < 0)
    host = xstrdup ("");
  cleanup_free char *text = xasprintf ("%s%s%s", host, len && host[len - 1] != '\n' ? "\n" : "", crt);
  cleanup_free char *path = store_path (e, EGRESS_CA_BUNDLE);
  return file_write_atomic (path, text, strlen (text), 0644, err);
}

static int
make_ca (const struct store_entry *e, hk_err *err)
{
  cleanup_free char *key = NULL, *crt = NULL;
  cleanup_free char *cn = xasprintf ("hako egress CA of sandbox %s", e->id);
  cleanup_free char *key_path = store_path (e, EGRESS_CA_KEY);
  cleanup_free char *crt_path = store_path (e, EGRESS_CA_CRT);
  if (tls_make_ca (cn, &key, &crt, err) < 0)
    return err_prefix (err, "the sandbox's egress CA");
  /* The key never leaves the state dir: root's, 0600, and never mounted. */
  int r = file_write_atomic (key_path, key, strlen (key), 0600, err);
  explicit_bzero (key, strlen (key));
  if (r < 0 || file_write_atomic (crt_path, crt, strlen (crt), 0644, err) < 0)
    return -1;
  return write_bundle (e, crt, err);
}

/* ---- secrets ------------------------------------------------------------------- */

static int read_value (const struct hako_secret *s, char **out, hk_err *err);

/* A value that goes into a header must not end it: CR, LF or NUL would
 * let it add headers (or a request) of its own. */
static int
check_value (const char *name, const char *v, size_t len, hk_err *err)
{
  for (size_t i = 0; i < len; i++)
    {
      unsigned char c = (unsigned char)v[i];
      if ((c < 0x20 && c != '\t') || c == 0x7f)
        return err_set (err, EINVAL,
                        "secret %s: its value has a control character (byte %zu), which no header "
                        "can carry",
                        name, i);
    }
  if (len == 0)
    return err_set (err, EINVAL, "secret %s: its value is empty", name);
  /* The proxy masks a value in its host's answers (proxy_mask.h), holding
   * back as many bytes as the longest value: bounded, as its buffers are. */
  if (len > EGRESS_SECRET_MAX)
    return err_set (err, EINVAL,
                    "secret %s: its value is %zu bytes, more than the %d a request's head may carry", name,
                    len, EGRESS_SECRET_MAX);
  return 0;
}

int
egress_read_value (const char *name, const char *from, char **out, hk_err *err)
{
  struct hako_secret s = { .name = (char *)name, .from = (char *)from };
  return read_value (&s, out, err);
}

static int
read_value (const struct hako_secret *s, char **out, hk_err *err)
{
  if (str_has_prefix (s->from, "env:"))
    {
      const char *v = getenv (s->from + 4);
      if (v == NULL)
        return err_set (err, EINVAL, "secret %s: %s is not set in hako's environment", s->name, s->from + 4);
      if (check_value (s->name, v, strlen (v), err) < 0)
        return -1;
      *out = xstrdup (v);
      return 0;
    }
  char *text = NULL;
  size_t len = 0;
  if (file_read_all (s->from + 5, 64 << 10, &text, &len, err) < 0)
    return err_prefix (err, "secret %s", s->name);
  /* One line end at the end of the file is the file's, not the value's. */
  if (len && text[len - 1] == '\n')
    text[--len] = '\0';
  if (len && text[len - 1] == '\r')
    text[--len] = '\0';
  int r = memchr (text, '\0', len) ? err_set (err, EINVAL, "secret %s: its value has a NUL byte", s->name)
                                   : check_value (s->name, text, len, err);
  if (r < 0)
    {
      explicit_bzero (text, len);
      free (text);
      return -1;
    }
  *out = text;
  return 0;
}

int
egress_read_values (const struct oci_spec *spec, struct oci_secret_value **out, size_t *n, hk_err *err)
{
  const struct hako_sandbox *sb = &spec->sandbox;
  *out = xcalloc (sb->n_secrets + 1, sizeof **out);
  *n = 0;
  for (size_t i = 0; i < sb->n_secrets; i++)
    {
      char *v = NULL;
      if (read_value (&sb->secrets[i], &v, err) < 0)
        {
          oci_secret_values_free (*out, *n);
          *out = NULL;
          *n = 0;
          return -1;
        }
      (*out)[*n].name = xstrdup (sb->secrets[i].name);
      (*out)[(*n)++].value = v;
    }
  return 0;
}

int
egress_store_values (const struct store_entry *e, const struct oci_secret_value *v, size_t n, hk_err *err)
{
  cleanup_free char *path = store_path (e, EGRESS_SECRETS);
  char *text = oci_secret_values_text (v, n);
  if (text == NULL)
    return err_set (err, EINVAL, "the secrets' values are not valid UTF-8");
  int r = file_write_atomic (path, text, strlen (text), 0600, err);
  explicit_bzero (text, strlen (text));
  free (text);
  return r;
}

int
egress_load_values (const struct store_entry *e, struct oci_secret_value **out, size_t *n, hk_err *err)
{
  cleanup_free char *path = store_path (e, EGRESS_SECRETS);
  char *text = NULL;
  size_t len;
  *out = NULL;
  *n = 0;
  if (file_read_all (path, 1 << 20, &text, &len, err) < 0)
    {
      if (err->errnum != ENOENT)
        return -1;
      err_clear (err);
      return 0;
    }
  int r = oci_secret_values_parse (text, len, out, n, err);
  explicit_bzero (text, len);
  free (text);
  return r < 0 ? err_prefix (err, "%s", path) : 0;
}

int
egress_prepare (const struct store_entry *e, const struct oci_spec *spec, bool restart, hk_err *err)
{
  const struct hako_sandbox *sb = &spec->sandbox;
  /* A pod's containers use its pause container's proxy, whose CA their
   * trust would not hold: refused rather than half working. */
  if (egress_intercepts (spec) && oci_annotation_value (spec, "io.kubernetes.cri.container-type"))
    return err_setk (err, ERR_UNSUPPORTED, ENOTSUP,
                     "https request rules and secrets (interception) are not supported for a pod yet: its "
                     "containers share the pod's proxy, whose CA their trust would not hold; give the pod "
                     "destination rules, or http:// request rules");
  for (size_t i = 0; i < sb->n_secrets; i++)
    if (sb->secrets[i].placeholder == NULL)
      return err_set (err, EINVAL, ".sandbox.network.secrets[%zu]: no placeholder (create writes one)", i);
  if (egress_intercepts (spec) && !(restart && exists (e, EGRESS_CA_KEY) && exists (e, EGRESS_CA_BUNDLE))
      && make_ca (e, err) < 0)
    return -1;
  if (sb->n_secrets == 0 || (restart && exists (e, EGRESS_SECRETS)))
    return 0;
  struct oci_secret_value *v;
  size_t n;
  if (egress_read_values (spec, &v, &n, err) < 0)
    return -1;
  int r = egress_store_values (e, v, n, err);
  oci_secret_values_free (v, n);
  return r;
}

/* ---- the trust bundle inside ---------------------------------------------------------- */

/* Whether root (the host's "/" for the host profile) has a regular file at
 * path, resolved inside it. */
static bool
root_has_file (const char *root, const char *path)
{
  cleanup_close int rfd = open (root, O_PATH | O_DIRECTORY | O_CLOEXEC);
  cleanup_close int fd = rfd < 0 ? -1 : inroot_open (rfd, path, O_PATH, 0);
  struct stat st;
  return fd >= 0 && fstat (fd, &st) == 0 && S_ISREG (st.st_mode);
}

static void
add_bind (struct oci_spec *spec, const char *source, const char *dest)
{
  static const char *const opts[] = { "bind", "ro", "nosuid", "nodev", "noexec", NULL };
  spec->mounts = xrealloc (spec->mounts, (spec->n_mounts + 1) * sizeof *spec->mounts);
  struct oci_mount *m = &spec->mounts[spec->n_mounts++];
  *m = (struct oci_mount){ .destination = xstrdup (dest),
                           .type = xstrdup ("bind"),
                           .source = xstrdup (source),
                           .options = xcalloc (6, sizeof (char *)),
                           .flags = MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
                           .is_bind = true };
  for (size_t i = 0; opts[i]; i++)
    m->options[i] = xstrdup (opts[i]);
}

int
egress_mounts (const struct store_entry *e, struct oci_spec *spec, bool image, const char *rootfs,
               hk_err *err)
{
  (void)err;
  if (!egress_intercepts (spec))
    return 0;
  cleanup_free char *bundle = store_path (e, EGRESS_CA_BUNDLE);
  const char *root = spec->sandbox.root == HAKO_ROOT_TMPFS ? "/" : rootfs;
  for (size_t i = 0; bundle_paths[i]; i++)
    if (i == 0 || (!image && root_has_file (root, bundle_paths[i])))
      add_bind (spec, bundle, bundle_paths[i]);
  return 0;
}

/* ---- the environment ---------------------------------------------------------------- */

static bool
env_is (const char *entry, const char *name)
{
  size_t n = strlen (name);
  return strncmp (entry, name, n) == 0 && entry[n] == '=';
}

char **
egress_env (const struct oci_spec *spec, char *const *env)
{
  const struct hako_sandbox *sb = &spec->sandbox;
  bool trust = egress_intercepts (spec);
  size_t n = strv_len (env), k = 0;
  char **v = xcalloc (n + sb->n_secrets + N_TRUST_VARS + 1, sizeof *v);
  for (size_t i = 0; i < n; i++)
    {
      bool replaced = false;
      for (size_t j = 0; j < sb->n_secrets && !replaced; j++)
        replaced = env_is (env[i], sb->secrets[j].name);
      for (size_t j = 0; trust && j < N_TRUST_VARS && !replaced; j++)
        replaced = env_is (env[i], trust_vars[j]);
      if (!replaced)
        v[k++] = xstrdup (env[i]);
    }
  for (size_t j = 0; j < sb->n_secrets; j++)
    if (sb->secrets[j].placeholder)
      v[k++] = xasprintf ("%s=%s", sb->secrets[j].name, sb->secrets[j].placeholder);
  for (size_t j = 0; trust && j < N_TRUST_VARS; j++)
    v[k++] = xasprintf ("%s=%s", trust_vars[j], EGRESS_BUNDLE_INSIDE);
  v[k] = NULL;
  return v;
}
