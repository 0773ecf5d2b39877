/* test_image_edit: a config gains a layer and a history entry, keeping
 * what hako does not model; an index gains a reference, replacing the one
 * of the same name. */
#include <stdlib.h>
#include <string.h>

#include "lib/util.h"
#include "oci/image_spec.h"
#include "tests/unit/tap.h"

#define D1 "sha256:1111111111111111111111111111111111111111111111111111111111111111"
#define D2 "sha256:2222222222222222222222222222222222222222222222222222222222222222"
#define D3 "sha256:3333333333333333333333333333333333333333333333333333333333333333"

static void
test_config (void)
{
  const char *base = "{\"architecture\":\"amd64\",\"os\":\"linux\",\"created\":\"2000-01-01T00:00:00Z\","
                     "\"config\":{\"Env\":[\"A=1\"],\"Labels\":{\"x\":\"y\"},\"StopSignal\":\"SIGINT\"},"
                     "\"rootfs\":{\"type\":\"layers\",\"diff_ids\":[\"" D1 "\"]},"
                     "\"history\":[{\"created_by\":\"base\"}],\"vendor\":{\"n\":1.5e3}}";
  struct oci_layer_history h
      = { .diff_id = D2, .created = "2026-01-01T00:00:00Z", .created_by = "hako snapshot --image x y" };
  hk_err err;
  char *out = NULL;
  size_t len;
  ok (oci_image_config_add_layer (base, strlen (base), &h, &out, &len, &err) == 0, "config rewritten");
  struct oci_image_config c;
  ok (oci_image_config_parse (out, len, &c, &err) == 0, "it parses as a config");
  ok (c.n_diff_ids == 2 && strcmp (c.diff_ids[1], D2) == 0, "the diff_id appended");
  ok (c.env && strcmp (c.env[0], "A=1") == 0, "the process defaults kept");
  ok (strstr (out, "\"Labels\":{\"x\":\"y\"}") && strstr (out, "\"StopSignal\":\"SIGINT\"")
          && strstr (out, "\"vendor\":{\"n\":1.5e3}"),
      "keys hako does not model written back as they were");
  ok (strstr (out, "{\"created_by\":\"base\"},{\"created\":\"2026-01-01T00:00:00Z\",\"created_by\":"
                   "\"hako snapshot --image x y\"}"),
      "history: the entry appended");
  ok (strstr (out, "2000-01-01") == NULL && strstr (out, "\"created\":\"2026-01-01T00:00:00Z\""),
      "created is now");
  oci_image_config_free (&c);
  free (out);

  const char *nohist = "{\"rootfs\":{\"type\":\"layers\",\"diff_ids\":[\"" D1 "\",\"" D3 "\"]}}";
  ok (oci_image_config_add_layer (nohist, strlen (nohist), &h, &out, &len, &err) == 0
          && strstr (out, "\"history\":[{\"comment\":\"base layer\"},{\"comment\":\"base layer\"},{"),
      "no history: one entry per base layer, then ours");
  free (out);
  const char *bad = "{\"rootfs\":{\"type\":\"layers\"}}";
  ok (oci_image_config_add_layer (bad, strlen (bad), &h, &out, &len, &err) < 0
          && strstr (err.msg, "diff_ids"),
      "a config without diff_ids is refused, naming it");
}

static void
test_index (void)
{
  hk_err err;
  char *out = NULL, *out2 = NULL;
  size_t len, len2;
  struct oci_desc d
      = { .media_type = (char *)OCI_MT_MANIFEST, .digest = (char *)D1, .size = 10, .ref_name = (char *)"v1" };
  ok (oci_index_add_ref (NULL, 0, &d, &out, &len, &err) == 0, "a new index");
  struct oci_index x;
  ok (oci_index_parse (out, len, &x, &err) == 0 && x.n_manifests == 1
          && strcmp (x.manifests[0].ref_name, "v1") == 0,
      "it holds the reference");
  oci_index_free (&x);
  struct oci_desc d2 = d;
  d2.digest = (char *)D2;
  d2.ref_name = (char *)"v2";
  struct oci_desc d3 = d;
  d3.digest = (char *)D3;
  ok (oci_index_add_ref (out, len, &d2, &out2, &len2, &err) == 0, "another tag added");
  free (out);
  ok (oci_index_add_ref (out2, len2, &d3, &out, &len, &err) == 0, "v1 again, another manifest");
  ok (oci_index_parse (out, len, &x, &err) == 0 && x.n_manifests == 2
          && strcmp (x.manifests[0].digest, D2) == 0 && strcmp (x.manifests[1].digest, D3) == 0,
      "v1 replaced, v2 kept");
  oci_index_free (&x);
  free (out);
  free (out2);
}

int
main (void)
{
  test_config ();
  test_index ();
  return tap_done ();
}
