/* store: the content store <data-root>/images — blobs by digest, unpacked
 * layers by diff_id, names.json, its locks, removal and re-verification. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "images/internal.h"
#include "lib/util.h"
#include "oci/spec.h"

void
img_limits_default (struct img_limits *l)
{
  *l = (struct img_limits){ .max_bytes = IMG_DEFAULT_MAX_BYTES,
                            .max_entries = IMG_DEFAULT_MAX_ENTRIES,
                            .max_path = IMG_DEFAULT_MAX_PATH };
}

/* ---- hashing ---- */

void
img_hash_init (struct img_hash *h)
{
  sha256_init (&h->ctx);
}

void
img_hash_update (struct img_hash *h, const void *buf, size_t n)
{
  sha256_update (&h->ctx, n, buf);
}

void
img_hash_final (struct img_hash *h, char out[IMG_DIGEST_LEN])
{
  uint8_t md[SHA256_DIGEST_SIZE];
  sha256_digest (&h->ctx, sizeof md, md);
  memcpy (out, "sha256:", 7);
  for (unsigned i = 0; i < sizeof md; i++)
    snprintf (out + 7 + 2 * i, 3, "%02x", md[i]);
  img_hash_free (h);
}

void
img_hash_free (struct img_hash *h)
{
  (void)h; /* nettle's context holds no resources */
}

char *
img_now_rfc3339 (void)
{
  time_t t = time (NULL);
  struct tm tm;
  char buf[64];
  gmtime_r (&t, &tm);
  strftime (buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return xstrdup (buf);
}

/* ---- paths, locks ---- */

char *
img_blob_path (const struct img_store *st, const char *digest)
{
  return xasprintf ("%s/blobs/sha256/%s", st->dir, digest + 7);
}

char *
img_layer_path (const struct img_store *st, const char *diff_id)
{
  return xasprintf ("%s/layers/%s", st->dir, diff_id + 7);
}

bool
img_blob_present (const struct img_store *st, const char *digest, uint64_t size)
{
  cleanup_free char *p = img_blob_path (st, digest);
  struct stat sb;
  return stat (p, &sb) == 0 && S_ISREG (sb.st_mode) && (uint64_t)sb.st_size == size;
}

int
img_store_open (const char *data_root, bool exclusive, struct img_store *st, hk_err *err)
{
  *st = (struct img_store){ .dirfd = -1, .lock_fd = -1, .exclusive = exclusive };
  st->data_root = path_absolute (data_root);
  st->dir = xasprintf ("%s/images", st->data_root);
  cleanup_free char *blobs = xasprintf ("%s/blobs/sha256", st->dir);
  cleanup_free char *layers = xasprintf ("%s/layers", st->dir);
  cleanup_free char *lock = xasprintf ("%s/lock", st->dir);
  /* 0700: the layers hold the images' set-uid files as the image has them
   * (a set-uid root binary of an old image, say); no host user may reach
   * them.  Only root mounts them.  The data root itself is 0711: the host
   * profile's sandboxes pass through it to their work dirs. */
  if (mkdir_p (st->data_root, 0711, err) < 0 || mkdir_p (blobs, 0700, err) < 0
      || mkdir_p (layers, 0700, err) < 0)
    goto fail;
  st->dirfd = open (st->dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
  st->lock_fd = open (lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (st->dirfd < 0 || st->lock_fd < 0)
    {
      err_sys (err, "open image store %s", st->dir);
      goto fail;
    }
  /* Shared by imports and creates, exclusive for removal: nothing is
   * collected while an import or a create still needs it. */
  if (flock (st->lock_fd, exclusive ? LOCK_EX : LOCK_SH) < 0)
    {
      err_sys (err, "lock image store %s", lock);
      goto fail;
    }
  return 0;
fail:
  img_store_close (st);
  return -1;
}

void
img_store_close (struct img_store *st)
{
  if (st->dirfd >= 0)
    close (st->dirfd);
  if (st->lock_fd >= 0)
    close (st->lock_fd);
  free (st->dir);
  free (st->data_root);
  *st = (struct img_store){ .dirfd = -1, .lock_fd = -1 };
}

int
img_name_normalize (const char *in, char **out, hk_err *err)
{
  size_t n = strlen (in);
  if (n == 0 || n > 255 || in[0] == '-' || in[0] == '/' || in[0] == ':')
    return err_setk (err, ERR_INVALID_ARGUMENT, EINVAL, "image name \"%s\": not a valid name[:tag]", in);
  for (const char *p = in; *p; p++)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9')
          || strchr ("._-/:@", *p)))
      return err_setk (err, ERR_INVALID_ARGUMENT, EINVAL, "image name \"%s\": character '%c' is not allowed",
                       in, *p);
  const char *slash = strrchr (in, '/');
  const char *colon = strchr (slash ? slash : in, ':');
  if (colon && colon[1] == '\0')
    return err_setk (err, ERR_INVALID_ARGUMENT, EINVAL, "image name \"%s\": empty tag", in);
  *out = colon ? xstrdup (in) : xasprintf ("%s:latest", in);
  return 0;
}

/* ---- documents ---- */

static int
check_desc (const struct oci_desc *want, const char *digest, uint64_t size, hk_err *err)
{
  if (want == NULL)
    return 0;
  if (size != want->size)
    return err_set (err, EINVAL, "blob %.19s..: size %llu, descriptor says %llu", want->digest,
                    (unsigned long long)size, (unsigned long long)want->size);
  if (want->digest && strcmp (digest, want->digest) != 0)
    return err_set (err, EINVAL, "blob %.19s..: sha256 mismatch: content hashes to %.19s..", want->digest,
                    digest);
  return 0;
}

static void
digest_mem (const void *data, size_t len, char out[IMG_DIGEST_LEN])
{
  struct img_hash h;
  img_hash_init (&h);
  img_hash_update (&h, data, len);
  img_hash_final (&h, out);
}

int
img_blob_put_mem (struct img_store *st, const struct oci_desc *want, const void *data, size_t len,
                  char digest_out[IMG_DIGEST_LEN], bool *added, hk_err *err)
{
  char digest[IMG_DIGEST_LEN];
  digest_mem (data, len, digest);
  if (added)
    *added = false;
  if (check_desc (want, digest, len, err) < 0)
    return -1;
  if (digest_out)
    memcpy (digest_out, digest, IMG_DIGEST_LEN);
  if (img_blob_present (st, digest, len))
    return 0;
  cleanup_free char *dir = xasprintf ("%s/blobs/sha256", st->dir);
  if (img_write_file (st, dir, digest + 7, data, len, "import-doc-written", err) < 0)
    return -1;
  if (added)
    *added = true;
  return 0;
}

int
img_blob_read (const struct img_store *st, const char *digest, char **out, size_t *len, hk_err *err)
{
  cleanup_free char *path = img_blob_path (st, digest);
  cleanup_free char *buf = NULL;
  size_t n;
  if (file_read_all (path, IMG_MAX_DOC, &buf, &n, err) < 0)
    return err_prefix (err, "blob %.19s..", digest);
  char got[IMG_DIGEST_LEN];
  digest_mem (buf, n, got);
  if (strcmp (got, digest) != 0)
    return err_set (err, EIO,
                    "blob %.19s.. in the store is damaged: it hashes to %.19s.. (run "
                    "`hako image verify`)",
                    digest, got);
  *out = steal_pointer (&buf);
  if (len)
    *len = n;
  return 0;
}

/* ---- names ---- */

static char *
names_path (const struct img_store *st)
{
  return xasprintf ("%s/names.json", st->dir);
}

int
img_names_load (struct img_store *st, struct oci_image_names *out, hk_err *err)
{
  cleanup_free char *path = names_path (st);
  cleanup_free char *text = NULL;
  size_t len;
  *out = (struct oci_image_names){ 0 };
  if (access (path, F_OK) < 0 && errno == ENOENT)
    return 0;
  if (file_read_all (path, 64 << 20, &text, &len, err) < 0)
    return -1;
  if (oci_image_names_parse (text, len, out, err) < 0)
    return err_prefix (err, "%s", path);
  return 0;
}

/* names.json is rewritten whole (temp file + rename) under names.lock, so
 * concurrent imports each add their name and none is lost. */
static int
names_lock (struct img_store *st, hk_err *err)
{
  cleanup_free char *path = xasprintf ("%s/names.lock", st->dir);
  int fd = open (path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0)
    return err_sys (err, "open %s", path);
  if (flock (fd, LOCK_EX) < 0)
    {
      err_sys (err, "lock %s", path);
      close (fd);
      return -1;
    }
  return fd;
}

static int
names_save (struct img_store *st, const struct oci_image_names *n, hk_err *err)
{
  cleanup_free char *text = NULL;
  size_t len;
  if (oci_image_names_write (n, &text, &len, err) < 0)
    return -1;
  return img_write_file (st, st->dir, "names.json", text, len, "import-names-written", err);
}

static void
rec_copy (struct oci_image_rec *dst, const struct oci_image_rec *src)
{
  *dst = (struct oci_image_rec){ .name = xstrdup (src->name),
                                 .manifest_digest = xstrdup (src->manifest_digest),
                                 .config_digest = xstrdup (src->config_digest),
                                 .created = src->created ? xstrdup (src->created) : NULL,
                                 .n_layers = src->n_layers };
  dst->layers = xcalloc (src->n_layers + 1, sizeof *dst->layers);
  for (size_t i = 0; i < src->n_layers; i++)
    dst->layers[i] = (struct oci_image_layer_rec){ .digest = xstrdup (src->layers[i].digest),
                                                   .diff_id = xstrdup (src->layers[i].diff_id),
                                                   .media_type = src->layers[i].media_type
                                                                     ? xstrdup (src->layers[i].media_type)
                                                                     : NULL,
                                                   .size = src->layers[i].size };
}

int
img_names_put (struct img_store *st, const struct oci_image_rec *rec, hk_err *err)
{
  test_stall_forever ("import-before-names", st->dir);
  cleanup_close int lock = names_lock (st, err);
  if (lock < 0)
    return -1;
  struct oci_image_names n;
  if (img_names_load (st, &n, err) < 0)
    return -1;
  size_t i;
  for (i = 0; i < n.n; i++)
    if (strcmp (n.images[i].name, rec->name) == 0)
      break;
  if (i == n.n)
    {
      n.images = xrealloc (n.images, (n.n + 2) * sizeof *n.images);
      n.n++;
    }
  else
    oci_image_rec_free (&n.images[i]);
  rec_copy (&n.images[i], rec);
  int r = names_save (st, &n, err);
  oci_image_names_free (&n);
  return r;
}

int
img_find (struct img_store *st, const char *name, struct oci_image_rec *out, hk_err *err)
{
  cleanup_free char *norm = NULL;
  struct oci_image_names n;
  if (img_name_normalize (name, &norm, err) < 0 || img_names_load (st, &n, err) < 0)
    return -1;
  int r = err_setk (err, ERR_NOT_FOUND, ENOENT, "image %s not found (see `hako image ls`)", norm);
  for (size_t i = 0; i < n.n; i++)
    if (strcmp (n.images[i].name, norm) == 0)
      {
        rec_copy (out, &n.images[i]);
        err_clear (err);
        r = 0;
        break;
      }
  oci_image_names_free (&n);
  return r;
}

int
img_config (struct img_store *st, const struct oci_image_rec *r, struct oci_image_config *out, hk_err *err)
{
  cleanup_free char *text = NULL;
  size_t len;
  if (img_blob_read (st, r->config_digest, &text, &len, err) < 0)
    return -1;
  if (oci_image_config_parse (text, len, out, err) < 0)
    return err_prefix (err, "image %s: config %.19s..", r->name, r->config_digest);
  return 0;
}

char **
img_layer_dirs (const struct img_store *st, const struct oci_image_rec *r)
{
  char **v = xcalloc (r->n_layers + 1, sizeof *v);
  size_t n = 0;
  for (size_t i = 0; i < r->n_layers; i++)
    {
      const char *id = r->layers[r->n_layers - 1 - i].diff_id;
      /* A layer the image has twice (a legacy `docker save` links the
       * second to the first) is stacked once, at its topmost place:
       * overlayfs refuses one directory as two layers, and the lower copy
       * changes nothing: every name it adds, hides or makes opaque, the
       * upper copy adds, hides or makes opaque again over all below it. */
      bool dup = false;
      for (size_t j = r->n_layers - i; j < r->n_layers && !dup; j++)
        dup = strcmp (r->layers[j].diff_id, id) == 0;
      if (!dup)
        v[n++] = img_layer_path (st, id);
    }
  return v;
}

/* ---- removal ---- */

/* Does a sandbox record this manifest as its image?  Read from each
 * <data-root>/sandboxes/<id>/image the runtime writes at create. */
static int
sandbox_using (const struct img_store *st, const char *manifest, char **id, hk_err *err)
{
  cleanup_free char *dir = xasprintf ("%s/sandboxes", st->data_root);
  DIR *d = opendir (dir);
  if (d == NULL)
    return errno == ENOENT ? 0 : err_sys (err, "open %s", dir);
  struct dirent *de;
  int found = 0;
  while (!found && (de = readdir (d)) != NULL)
    {
      if (de->d_name[0] == '.')
        continue;
      cleanup_free char *p = xasprintf ("%s/%s/%s", dir, de->d_name, IMG_SANDBOX_RECORD);
      cleanup_free char *text = NULL;
      hk_err ignored;
      if (file_read_all (p, 4096, &text, NULL, &ignored) < 0)
        continue;
      text[strcspn (text, "\n")] = '\0';
      if (strcmp (text, manifest) == 0)
        {
          *id = xstrdup (de->d_name);
          found = 1;
        }
    }
  closedir (d);
  return found;
}

static bool
referenced (const struct oci_image_names *n, const char *digest, bool layer_dir)
{
  for (size_t i = 0; i < n->n; i++)
    {
      const struct oci_image_rec *r = &n->images[i];
      if (!layer_dir && (strcmp (r->manifest_digest, digest) == 0 || strcmp (r->config_digest, digest) == 0))
        return true;
      for (size_t j = 0; j < r->n_layers; j++)
        if (strcmp (layer_dir ? r->layers[j].diff_id : r->layers[j].digest, digest) == 0)
          return true;
    }
  return false;
}

/* Every layer dir a sandbox records (its image may have lost its name to a
 * re-import since): they stay while the sandbox does. */
static char **
sandbox_layers (const struct img_store *st)
{
  cleanup_free char *dir = xasprintf ("%s/sandboxes", st->data_root);
  char **v = xcalloc (1, sizeof *v);
  size_t n = 0;
  DIR *d = opendir (dir);
  struct dirent *de;
  while (d && (de = readdir (d)) != NULL)
    {
      if (de->d_name[0] == '.')
        continue;
      cleanup_free char *p = xasprintf ("%s/%s/%s", dir, de->d_name, IMG_SANDBOX_RECORD);
      cleanup_free char *text = NULL;
      hk_err ignored;
      if (file_read_all (p, 1 << 20, &text, NULL, &ignored) < 0)
        continue;
      char *save = NULL;
      for (char *l = strtok_r (text, "\n", &save); l; l = strtok_r (NULL, "\n", &save))
        {
          v = xrealloc (v, (n + 2) * sizeof *v);
          v[n++] = xstrdup (l);
          v[n] = NULL;
        }
    }
  if (d)
    closedir (d);
  return v;
}

/* Remove blobs (layer_dir false) or layer dirs no name references and no
 * sandbox uses. */
static int
collect (struct img_store *st, const struct oci_image_names *n, bool layer_dir, hk_err *err)
{
  cleanup_free char *dir
      = layer_dir ? xasprintf ("%s/layers", st->dir) : xasprintf ("%s/blobs/sha256", st->dir);
  DIR *d = opendir (dir);
  if (d == NULL)
    return err_sys (err, "open %s", dir);
  struct dirent *de;
  int r = 0;
  char **in_use = layer_dir ? sandbox_layers (st) : NULL;
  while (r == 0 && (de = readdir (d)) != NULL)
    {
      if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0)
        continue;
      cleanup_free char *digest = xasprintf ("sha256:%s", de->d_name);
      /* Temporary files of an interrupted import (none runs: we hold the
       * store exclusively) go too. */
      if (de->d_name[0] != '.' && referenced (n, digest, layer_dir))
        continue;
      cleanup_free char *p = xasprintf ("%s/%s", dir, de->d_name);
      if (in_use && strv_contains (in_use, p))
        continue;
      r = rm_rf (p, err);
    }
  closedir (d);
  strv_free (in_use);
  return r;
}

int
img_remove (struct img_store *st, const char *name, hk_err *err)
{
  cleanup_free char *norm = NULL;
  if (img_name_normalize (name, &norm, err) < 0)
    return -1;
  if (img_store_sweep (st, err) < 0)
    return -1;
  cleanup_close int lock = names_lock (st, err);
  if (lock < 0)
    return -1;
  struct oci_image_names n;
  if (img_names_load (st, &n, err) < 0)
    return -1;
  int r = -1;
  size_t i, others = 0;
  cleanup_free char *user = NULL;
  for (i = 0; i < n.n; i++)
    if (strcmp (n.images[i].name, norm) == 0)
      break;
  if (i == n.n)
    {
      err_setk (err, ERR_NOT_FOUND, ENOENT, "image %s not found", norm);
      goto out;
    }
  for (size_t j = 0; j < n.n; j++)
    if (j != i && strcmp (n.images[j].manifest_digest, n.images[i].manifest_digest) == 0)
      others++;
  int u = others ? 0 : sandbox_using (st, n.images[i].manifest_digest, &user, err);
  if (u < 0)
    goto out;
  if (u > 0)
    {
      err_set (err, EBUSY, "image %s is used by sandbox %s (delete the sandbox first)", norm, user);
      goto out;
    }
  oci_image_rec_free (&n.images[i]);
  memmove (&n.images[i], &n.images[i + 1], (n.n - i - 1) * sizeof *n.images);
  n.n--;
  if (names_save (st, &n, err) < 0 || collect (st, &n, false, err) < 0 || collect (st, &n, true, err) < 0)
    goto out;
  r = 0;
out:
  oci_image_names_free (&n);
  return r;
}

/* ---- verify ---- */

static int
verify_blob (const char *dir, const char *hex, hk_err *err)
{
  cleanup_free char *p = xasprintf ("%s/%s", dir, hex);
  cleanup_close int fd = open (p, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0)
    return err_sys (err, "open blob %s", p);
  struct img_hash h;
  img_hash_init (&h);
  static char buf[1 << 16];
  ssize_t n;
  while ((n = read (fd, buf, sizeof buf)) > 0)
    img_hash_update (&h, buf, n);
  char got[IMG_DIGEST_LEN];
  img_hash_final (&h, got);
  if (n < 0)
    return err_sys (err, "read blob %s", p);
  if (strcmp (got + 7, hex) != 0)
    return err_set (err, EIO, "blob sha256:%.12s..: damaged: its content hashes to %.19s..", hex, got);
  return 0;
}

int
img_verify (struct img_store *st, size_t *n_blobs, hk_err *err)
{
  if (img_store_sweep (st, err) < 0)
    return -1;
  cleanup_free char *dir = xasprintf ("%s/blobs/sha256", st->dir);
  DIR *d = opendir (dir);
  if (d == NULL)
    return err_sys (err, "open %s", dir);
  struct dirent *de;
  int r = 0;
  *n_blobs = 0;
  while (r == 0 && (de = readdir (d)) != NULL)
    {
      if (de->d_name[0] == '.')
        continue;
      r = verify_blob (dir, de->d_name, err);
      (*n_blobs)++;
    }
  closedir (d);
  if (r < 0)
    return -1;
  struct oci_image_names n;
  if (img_names_load (st, &n, err) < 0)
    return -1;
  for (size_t i = 0; r == 0 && i < n.n; i++)
    {
      const struct oci_image_rec *rec = &n.images[i];
      cleanup_free char *m = img_blob_path (st, rec->manifest_digest);
      if (access (m, F_OK) < 0)
        r = err_set (err, ENOENT, "image %s: manifest blob %.19s.. is missing", rec->name,
                     rec->manifest_digest);
      for (size_t j = 0; r == 0 && j < rec->n_layers; j++)
        {
          cleanup_free char *l = img_layer_path (st, rec->layers[j].diff_id);
          if (!img_blob_present (st, rec->layers[j].digest, rec->layers[j].size))
            r = err_set (err, ENOENT, "image %s: layer blob %.19s.. is missing or truncated", rec->name,
                         rec->layers[j].digest);
          else if (access (l, F_OK) < 0)
            r = err_set (err, ENOENT, "image %s: unpacked layer %.19s.. is missing", rec->name,
                         rec->layers[j].diff_id);
        }
    }
  oci_image_names_free (&n);
  return r;
}
