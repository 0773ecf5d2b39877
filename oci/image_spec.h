/* image_spec: the OCI image-spec documents (index, manifest, config), Docker's
 * `docker save` manifest.json, and hako's own image name index — parsed into
 * plain structs and written back.  images/ uses these; it never sees JSON. */
#ifndef HAKO_OCI_IMAGE_SPEC_H
#define HAKO_OCI_IMAGE_SPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/err.h"

#define OCI_MT_INDEX "application/vnd.oci.image.index.v1+json"
#define OCI_MT_MANIFEST "application/vnd.oci.image.manifest.v1+json"
#define OCI_MT_CONFIG "application/vnd.oci.image.config.v1+json"
#define DOCKER_MT_LIST "application/vnd.docker.distribution.manifest.list.v2+json"
#define DOCKER_MT_MANIFEST "application/vnd.docker.distribution.manifest.v2+json"
#define DOCKER_MT_CONFIG "application/vnd.docker.container.image.v1+json"

/* A content descriptor: what a document says about a blob it references. */
struct oci_desc
{
  char *media_type; /* NULL when absent */
  char *digest;     /* "sha256:<64 hex>", checked by the parser */
  uint64_t size;
  char *os, *arch, *variant; /* platform, index entries only */
  char *ref_name;            /* annotation org.opencontainers.image.ref.name */
};

struct oci_index
{
  char *media_type;
  struct oci_desc *manifests;
  size_t n_manifests;
};

struct oci_manifest
{
  char *media_type;
  struct oci_desc config;
  struct oci_desc *layers;
  size_t n_layers;
};

/* The parts of an image config a sandbox uses. */
struct oci_image_config
{
  char *os, *arch;
  char **env, **entrypoint, **cmd; /* NULL-terminated; NULL when absent */
  char *working_dir, *user;
  char **diff_ids; /* rootfs.diff_ids, "sha256:<hex>" each */
  size_t n_diff_ids;
};

/* One image of a docker-archive's manifest.json. */
struct oci_docker_manifest
{
  char *config; /* path inside the archive */
  char **repo_tags;
  char **layers; /* paths inside the archive, base first */
};

/* One named image in hako's store (<data-root>/images/names.json). */
struct oci_image_layer_rec
{
  char *digest;  /* the blob, as stored */
  char *diff_id; /* its uncompressed tar: the layer directory's name */
  char *media_type;
  uint64_t size;
};

struct oci_image_rec
{
  char *name; /* "name:tag" */
  char *manifest_digest;
  char *config_digest;
  char *created; /* when it was imported, RFC 3339 */
  struct oci_image_layer_rec *layers;
  size_t n_layers;
};

struct oci_image_names
{
  struct oci_image_rec *images;
  size_t n;
};

/* The process an image's config makes: what `hako spec --image` and
 * `create --image` put in the default profile's place. */
struct oci_image_process
{
  const char *image; /* sandbox.image */
  char *const *args; /* Entrypoint + Cmd (or the command given) */
  char *const *env;
  const char *cwd;   /* WorkingDir, or "/" */
  uint32_t uid, gid; /* User, resolved in the image's /etc/passwd */
};
/* The default profile (all namespaces, the user namespace's ids 0..65535
 * host ids 1000000000..) with that process
 * and a writable root. */
struct oci_profile_limits;
int oci_profile_generate_image (const struct oci_image_process *ip, const struct oci_profile_limits *lim,
                                char **out, hk_err *err);

/* "sha256:" followed by 64 lowercase hex digits. */
bool oci_digest_valid (const char *digest);

int oci_index_parse (const char *text, size_t len, struct oci_index *out, hk_err *err);
void oci_index_free (struct oci_index *x);
int oci_manifest_parse (const char *text, size_t len, struct oci_manifest *out, hk_err *err);
void oci_manifest_free (struct oci_manifest *m);
/* A document's top-level mediaType (NULL when absent), to tell an index from
 * a manifest before parsing it as either. */
int oci_media_type_peek (const char *text, size_t len, char **out, hk_err *err);
int oci_image_config_parse (const char *text, size_t len, struct oci_image_config *out, hk_err *err);
void oci_image_config_free (struct oci_image_config *c);
/* The first image of a docker-archive manifest.json. */
int oci_docker_manifest_parse (const char *text, size_t len, struct oci_docker_manifest *out, hk_err *err);
void oci_docker_manifest_free (struct oci_docker_manifest *m);

/* A manifest for layers (blob digests, sizes, media types) and a config:
 * what a docker-archive's contents amount to, stored as an OCI manifest. */
int oci_manifest_write (const struct oci_manifest *m, char **out, size_t *len, hk_err *err);

/* The layer `snapshot --image` adds, for the config's rootfs and history. */
struct oci_layer_history
{
  const char *diff_id;
  const char *created;    /* RFC 3339 */
  const char *created_by; /* NULL: left out */
  const char *comment;    /* NULL: left out */
};
/* The config text with diff_id appended to rootfs.diff_ids, an entry
 * appended to history (one made for each base layer when it had none) and
 * "created" set; every other key written back as it was (image_edit.c). */
int oci_image_config_add_layer (const char *text, size_t len, const struct oci_layer_history *h, char **out,
                                size_t *out_len, hk_err *err);
/* An image layout's index.json (text NULL: a new, empty one) with d added
 * under the annotation org.opencontainers.image.ref.name = d->ref_name,
 * replacing the entry that name had; the rest kept. */
int oci_index_add_ref (const char *text, size_t len, const struct oci_desc *d, char **out, size_t *out_len,
                       hk_err *err);

int oci_image_names_parse (const char *text, size_t len, struct oci_image_names *out, hk_err *err);
int oci_image_names_write (const struct oci_image_names *n, char **out, size_t *len, hk_err *err);
void oci_image_rec_free (struct oci_image_rec *r);
void oci_image_names_free (struct oci_image_names *n);
/* The images as `image ls --format json` prints them: an array of
 * {"name","manifest","config","created","layers":N}. */
int oci_image_list_write (const struct oci_image_names *n, char **out, hk_err *err);
/* One image as `image inspect` prints it: the record plus its config's process defaults. */
int oci_image_inspect_write (const struct oci_image_rec *r, const struct oci_image_config *c, char **out,
                             hk_err *err);

#endif
