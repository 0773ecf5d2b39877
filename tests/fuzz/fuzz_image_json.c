/* fuzz_image_json: every JSON document an imported image carries — index,
 * manifest, config, a docker-archive's manifest.json — and the store's own
 * names file.  An image comes from anywhere: its documents are parsed before
 * anything about it is trusted.  The first byte picks the parser. */
#include <stdint.h>
#include <stdlib.h>

#include "oci/image_spec.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  if (size < 1)
    return 0;
  const char *text = (const char *)data + 1;
  size_t len = size - 1;
  hk_err err = { 0 };
  switch (data[0] % 6)
    {
    case 0:
      {
        struct oci_index x = { 0 };
        if (oci_index_parse (text, len, &x, &err) == 0)
          oci_index_free (&x);
        break;
      }
    case 1:
      {
        struct oci_manifest m = { 0 };
        if (oci_manifest_parse (text, len, &m, &err) == 0)
          {
            /* What parses must write back out (the store keeps it). */
            char *out = NULL;
            size_t n;
            if (oci_manifest_write (&m, &out, &n, &err) < 0)
              abort ();
            free (out);
            oci_manifest_free (&m);
          }
        break;
      }
    case 2:
      {
        struct oci_image_config c = { 0 };
        if (oci_image_config_parse (text, len, &c, &err) == 0)
          oci_image_config_free (&c);
        break;
      }
    case 3:
      {
        struct oci_docker_manifest m = { 0 };
        if (oci_docker_manifest_parse (text, len, &m, &err) == 0)
          oci_docker_manifest_free (&m);
        break;
      }
    case 4:
      {
        struct oci_image_names n = { 0 };
        if (oci_image_names_parse (text, len, &n, &err) == 0)
          {
            char *out = NULL;
            size_t l;
            if (oci_image_names_write (&n, &out, &l, &err) < 0)
              abort ();
            free (out);
            oci_image_names_free (&n);
          }
        break;
      }
    default:
      {
        char *mt = NULL;
        if (oci_media_type_peek (text, len, &mt, &err) == 0)
          free (mt);
        break;
      }
    }
  return 0;
}
