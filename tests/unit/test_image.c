/* test_image: the image documents, the trust policy and simple-signing
 * payloads parse strictly; image names normalize; the unpacker's bounds and
 * whiteouts on hand-made tar streams. */
#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "images/internal.h"
#include "lib/util.h"
#include "oci/image_spec.h"
#include "oci/policy.h"
#include "tests/unit/tap.h"

#define D64 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static void
test_digest_and_names (void)
{
  hk_err err;
  char *n = NULL;
  ok (oci_digest_valid ("sha256:" D64), "a sha256 digest is valid");
  ok (!oci_digest_valid ("sha256:" D64 "0"), "one digit too many is not");
  ok (!oci_digest_valid ("sha512:" D64), "another algorithm is not");
  ok (!oci_digest_valid ("sha256:0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef"),
      "upper-case hex is not");
  ok (img_name_normalize ("busybox", &n, &err) == 0, "a bare name normalizes");
  is_str (n, "busybox:latest", "with :latest");
  free (n);
  ok (img_name_normalize ("reg.io:5000/a/b", &n, &err) == 0, "a registry port is not a tag");
  is_str (n, "reg.io:5000/a/b:latest", "the tag is added after the last /");
  free (n);
  ok (img_name_normalize ("a b", &n, &err) < 0, "a space is refused");
  ok (img_name_normalize ("-x", &n, &err) < 0, "a leading - is refused");
  ok (img_name_normalize ("x:", &n, &err) < 0, "an empty tag is refused");
}

static void
test_documents (void)
{
  hk_err err;
  struct oci_index x;
  const char *idx
      = "{\"schemaVersion\":2,\"manifests\":[{\"mediaType\":\"" OCI_MT_MANIFEST "\",\"digest\":\"sha256:" D64
        "\",\"size\":12,\"platform\":{\"os\":\"linux\","
        "\"architecture\":\"amd64\"},\"annotations\":{\"org.opencontainers.image.ref.name\":\"v1\"}}]}";
  ok (oci_index_parse (idx, strlen (idx), &x, &err) == 0, "an index parses");
  ok (x.n_manifests == 1 && x.manifests[0].size == 12, "its descriptor");
  is_str (x.manifests[0].ref_name, "v1", "its ref name");
  oci_index_free (&x);
  const char *bad = "{\"schemaVersion\":2,\"manifests\":[{\"digest\":\"sha256:12\",\"size\":1}]}";
  ok (oci_index_parse (bad, strlen (bad), &x, &err) < 0, "a short digest is refused");
  ok (strstr (err.msg, "not a sha256 digest") != NULL, "naming it: %s", err.msg);
  oci_index_free (&x);
  const char *v1 = "{\"schemaVersion\":1,\"manifests\":[]}";
  ok (oci_index_parse (v1, strlen (v1), &x, &err) < 0, "schemaVersion 1 is refused");
  oci_index_free (&x);
  struct oci_image_config c;
  const char *cfg = "{\"os\":\"linux\",\"config\":{\"Env\":[\"A=1\"],\"Cmd\":[\"sh\"],\"User\":\"1:2\"},"
                    "\"rootfs\":{\"type\":\"layers\",\"diff_ids\":[\"sha256:" D64 "\"]}}";
  ok (oci_image_config_parse (cfg, strlen (cfg), &c, &err) == 0, "a config parses");
  ok (c.n_diff_ids == 1 && c.env && c.cmd, "with its diff_ids, Env and Cmd");
  is_str (c.user, "1:2", "and User");
  oci_image_config_free (&c);
  const char *nolayers = "{\"rootfs\":{\"type\":\"other\",\"diff_ids\":[]}}";
  ok (oci_image_config_parse (nolayers, strlen (nolayers), &c, &err) < 0, "rootfs.type must be layers");
  oci_image_config_free (&c);
}

static int
parse_policy (const char *text, hk_err *err)
{
  struct oci_policy p;
  int r = oci_policy_parse (text, strlen (text), &p, err);
  oci_policy_free (&p);
  return r;
}

static void
test_policy (void)
{
  hk_err err;
  struct oci_policy p;
  const char *good = "{\"default\":[{\"type\":\"reject\"}],\"transports\":{\"docker\":{\"a/b\":"
                     "[{\"type\":\"signedBy\",\"keyType\":\"GPGKeys\",\"keyPath\":\"/k\","
                     "\"signedIdentity\":{\"type\":\"exactReference\",\"dockerReference\":\"a/b:1\"}}]}}}";
  ok (oci_policy_parse (good, strlen (good), &p, &err) == 0, "a policy parses: %s", err.msg);
  ok (p.def.n == 1 && p.def.reqs[0].type == OCI_REQ_REJECT, "its default");
  ok (p.n_scopes == 1 && p.scopes[0].reqs[0].type == OCI_REQ_SIGNED_BY, "its scope");
  ok (p.scopes[0].reqs[0].ident == OCI_IDENT_EXACT_REFERENCE, "its identity rule");
  is_str (p.scopes[0].reqs[0].key_paths[0], "/k", "keyPath becomes the key list");
  oci_policy_free (&p);
  ok (parse_policy ("{}", &err) < 0 && strstr (err.msg, "default"), "default is required");
  ok (parse_policy ("{\"default\":[]}", &err) < 0, "an empty requirement list is refused");
  ok (parse_policy ("{\"default\":[{\"type\":\"accept\"}]}", &err) < 0, "an unknown type is refused");
  ok (parse_policy ("{\"default\":[{\"type\":\"reject\"}],\"x\":1}", &err) < 0, "an unknown key is refused");
  ok (parse_policy ("{\"default\":[{\"type\":\"reject\"}],\"default\":[{\"type\":\"reject\"}]}", &err) < 0
          && strstr (err.msg, "twice"),
      "a duplicate key is refused");
  ok (parse_policy ("{\"default\":[{\"type\":\"signedBy\",\"keyType\":\"GPGKeys\"}]}", &err) < 0,
      "signedBy without a key is refused");
  ok (parse_policy ("{\"default\":[{\"type\":\"signedBy\",\"keyType\":\"X509\",\"keyPath\":\"/k\"}]}", &err)
          < 0,
      "a keyType other than GPGKeys is refused");
  ok (parse_policy ("{\"default\":[{\"type\":\"reject\"}],\"transports\":{\"docker\":{\"a\":[{\"type\":"
                    "\"reject\"}]},\"oci\":{\"a\":[{\"type\":\"reject\"}]}}}",
                    &err)
          < 0,
      "a scope in two transports is refused");
}

static void
test_payload (void)
{
  hk_err err;
  struct oci_simple_sig s;
  const char *good
      = "{\"critical\":{\"type\":\"atomic container signature\",\"image\":{\"docker-manifest-digest\":"
        "\"sha256:" D64 "\"},\"identity\":{\"docker-reference\":\"a:1\"}},\"optional\":{\"x\":1}}";
  ok (oci_simple_sig_parse (good, strlen (good), &s, &err) == 0, "a payload parses");
  is_str (s.identity, "a:1", "its identity");
  oci_simple_sig_free (&s);
  const char *type = "{\"critical\":{\"type\":\"other\",\"image\":{\"docker-manifest-digest\":\"d\"},"
                     "\"identity\":{\"docker-reference\":\"a\"}}}";
  ok (oci_simple_sig_parse (type, strlen (type), &s, &err) < 0, "another critical.type is refused");
  const char *extra
      = "{\"critical\":{\"type\":\"atomic container signature\",\"image\":{\"docker-manifest-digest\":"
        "\"d\",\"more\":1},\"identity\":{\"docker-reference\":\"a\"}}}";
  ok (oci_simple_sig_parse (extra, strlen (extra), &s, &err) < 0 && strstr (err.msg, "unknown key"),
      "an unknown key under critical is refused");
}

/* A tar of one entry, through libarchive's writer into memory. */
static size_t
make_tar (char *buf, size_t cap, const char *path, int type, const char *data)
{
  struct archive *a = archive_write_new ();
  struct archive_entry *e = archive_entry_new ();
  size_t used = 0;
  archive_write_set_format_pax_restricted (a);
  archive_write_open_memory (a, buf, cap, &used);
  archive_entry_set_pathname (e, path);
  archive_entry_set_filetype (e, type);
  archive_entry_set_perm (e, 0644);
  archive_entry_set_size (e, data ? strlen (data) : 0);
  archive_write_header (a, e);
  if (data)
    archive_write_data (a, data, strlen (data));
  archive_write_close (a);
  archive_write_free (a);
  archive_entry_free (e);
  return used;
}

static int
unpack_mem (const char *buf, size_t len, int rootfd, const struct img_limits *lim, hk_err *err)
{
  struct archive *a = archive_read_new ();
  archive_read_support_format_tar (a);
  archive_read_open_memory (a, buf, len);
  int r = img_unpack_tar (a, rootfd, lim, err);
  archive_read_free (a);
  return r;
}

static void
test_unpack (void)
{
  char dir[] = "/tmp/hako-test-image.XXXXXX";
  if (mkdtemp (dir) == NULL)
    {
      skip ("mkdtemp failed", "unpack tests");
      return;
    }
  int rootfd = open (dir, O_RDONLY | O_DIRECTORY);
  struct img_limits lim;
  img_limits_default (&lim);
  hk_err err;
  static char buf[1 << 16];
  size_t n = make_tar (buf, sizeof buf, "/abs/file", AE_IFREG, "hi");
  ok (unpack_mem (buf, n, rootfd, &lim, &err) == 0, "an absolute path unpacks: %s", err.msg);
  ok (faccessat (rootfd, "abs/file", F_OK, 0) == 0, "inside the root");
  n = make_tar (buf, sizeof buf, "a/../../x", AE_IFREG, "hi");
  ok (unpack_mem (buf, n, rootfd, &lim, &err) < 0 && strstr (err.msg, ".."), "a .. is refused");
  lim.max_bytes = 1;
  n = make_tar (buf, sizeof buf, "big", AE_IFREG, "hello");
  ok (unpack_mem (buf, n, rootfd, &lim, &err) < 0 && strstr (err.msg, "declares 5 bytes"),
      "a file over the byte bound is refused: %s", err.msg);
  img_limits_default (&lim);
  lim.max_path = 8;
  n = make_tar (buf, sizeof buf, "a-long-path", AE_IFREG, "x");
  ok (unpack_mem (buf, n, rootfd, &lim, &err) < 0 && strstr (err.msg, "longer than 8"),
      "a path over the bound is refused");
  close (rootfd);
  hk_err ignored;
  rm_rf (dir, &ignored);
}

static void
touch (const char *path)
{
  close (open (path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
}

/* Can the store's lock be had exclusively by another open file? */
static bool
store_free (const char *lock)
{
  int fd = open (lock, O_RDWR | O_CLOEXEC);
  bool free_ = fd >= 0 && flock (fd, LOCK_EX | LOCK_NB) == 0;
  if (fd >= 0)
    close (fd);
  return free_;
}

/* What a killed import leaves is swept only while nobody else uses the
 * store, and the sweeper keeps its shared lock. */
static void
test_sweep (void)
{
  hk_err err;
  struct img_store st;
  char root[] = "/tmp/hako-unit-sweep.XXXXXX";
  if (mkdtemp (root) == NULL || img_store_open (root, false, &st, &err) < 0)
    {
      ok (false, "a store to sweep: %s", err.msg);
      return;
    }
  cleanup_free char *tmp_blob = xasprintf ("%s/blobs/sha256/.tmp-a", st.dir);
  cleanup_free char *blob = xasprintf ("%s/blobs/sha256/%s", st.dir, D64);
  cleanup_free char *tmp_layer = xasprintf ("%s/layers/.tmp-b", st.dir);
  cleanup_free char *tmp_names = xasprintf ("%s/.tmp-c", st.dir);
  cleanup_free char *tmp_import = xasprintf ("%s/tmp/import-d", st.dir);
  cleanup_free char *lock = xasprintf ("%s/lock", st.dir);
  mkdir_p (tmp_layer, 0700, &err);
  mkdir_p (tmp_import, 0700, &err);
  cleanup_free char *deep = xasprintf ("%s/etc", tmp_layer);
  mkdir (deep, 0755);
  touch (tmp_blob);
  touch (blob);
  touch (tmp_names);
  int other = open (lock, O_RDWR | O_CLOEXEC);
  ok (other >= 0 && flock (other, LOCK_SH) == 0, "another import holds the store");
  ok (img_store_sweep (&st, &err) == 0, "a sweep of a busy store succeeds");
  ok (access (tmp_blob, F_OK) == 0 && access (tmp_layer, F_OK) == 0 && access (tmp_import, F_OK) == 0,
      "and leaves the temporaries, which may be the other import's");
  close (other);
  ok (img_store_sweep (&st, &err) == 0, "a sweep of an unused store succeeds");
  ok (access (tmp_blob, F_OK) < 0 && access (tmp_layer, F_OK) < 0 && access (tmp_names, F_OK) < 0
          && access (tmp_import, F_OK) < 0,
      "and removes every temporary");
  ok (access (blob, F_OK) == 0, "a blob under its digest stays");
  ok (!store_free (lock), "the sweeper still holds its shared lock");
  img_store_close (&st);
  rm_rf (root, &err);
}

int
main (void)
{
  test_digest_and_names ();
  test_documents ();
  test_policy ();
  test_payload ();
  test_unpack ();
  test_sweep ();
  return tap_done ();
}
