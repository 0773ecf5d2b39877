/* export: a stored image written out as an OCI image layout (oci-layout,
 * index.json, blobs/sha256/) that umoci, skopeo and `hako image import`
 * read.  Every blob is re-hashed as it is copied: a damaged store is not
 * exported. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "images/internal.h"
#include "lib/util.h"

#define LAYOUT_FILE "oci-layout"
#define LAYOUT_TEXT "{\"imageLayoutVersion\":\"1.0.0\"}"

/* What dir is: 0 new or empty (made if missing: *made), 1 an image layout
 * to add to; else refused — an export must not write blobs among a user's
 * files. */
static int
check_dir (const char *dir, bool *made, hk_err *err)
{
  *made = false;
  if (mkdir (dir, 0755) == 0)
    {
      *made = true;
      return 0;
    }
  if (errno != EEXIST)
    return err_sys (err, "mkdir %s", dir);
  DIR *d = opendir (dir);
  if (d == NULL)
    return err_sys (err, "open %s", dir);
  struct dirent *de;
  bool empty = true;
  while ((de = readdir (d)) != NULL)
    if (strcmp (de->d_name, ".") != 0 && strcmp (de->d_name, "..") != 0)
      empty = false;
  closedir (d);
  if (empty)
    return 0;
  cleanup_free char *layout = xasprintf ("%s/%s", dir, LAYOUT_FILE);
  cleanup_free char *index = xasprintf ("%s/index.json", dir);
  struct stat a, b;
  if (lstat (layout, &a) == 0 && S_ISREG (a.st_mode) && lstat (index, &b) == 0 && S_ISREG (b.st_mode))
    return 1;
  return err_set (err, EEXIST,
                  "%s is not empty and not an OCI image layout (no oci-layout and "
                  "index.json): give a new or empty directory",
                  dir);
}

/* Copy the store's blob to dir/blobs/sha256/, hashing it on the way. */
static int
copy_blob (const struct img_store *st, const char *dir, const char *digest, hk_err *err)
{
  cleanup_free char *src = img_blob_path (st, digest);
  cleanup_free char *dst = xasprintf ("%s/blobs/sha256/%s", dir, digest + 7);
  struct stat sb, db;
  cleanup_close int in = open (src, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (in < 0 || fstat (in, &sb) < 0)
    return err_sys (err, "open blob %.19s..", digest);
  /* The layout already has it (an earlier export of a related image). */
  if (lstat (dst, &db) == 0 && S_ISREG (db.st_mode) && db.st_size == sb.st_size)
    return 0;
  cleanup_free char *tmp = xasprintf ("%s/blobs/sha256/.tmp-XXXXXX", dir);
  cleanup_close int out = mkostemp (tmp, O_CLOEXEC);
  if (out < 0)
    return err_sys (err, "create %s", tmp);
  struct img_hash h;
  img_hash_init (&h);
  static char buf[1 << 17];
  ssize_t n;
  int r = 0;
  while ((n = read (in, buf, sizeof buf)) > 0)
    {
      img_hash_update (&h, buf, n);
      if (fd_write_all (out, buf, n) < 0)
        {
          r = err_sys (err, "write %s", tmp);
          break;
        }
    }
  char got[IMG_DIGEST_LEN];
  img_hash_final (&h, got);
  if (r == 0 && n < 0)
    r = err_sys (err, "read blob %.19s..", digest);
  if (r == 0 && strcmp (got, digest) != 0)
    r = err_set (err, EIO,
                 "blob %.19s.. in the store is damaged: it hashes to %.19s.. (run `hako "
                 "image verify`)",
                 digest, got);
  if (r == 0 && (fchmod (out, 0644) < 0 || rename (tmp, dst) < 0))
    r = err_sys (err, "store %s", dst);
  if (r < 0)
    unlink (tmp);
  return r;
}

int
img_export (struct img_store *st, const char *name, const char *dir, char **ref_out, hk_err *err)
{
  struct oci_image_rec rec = { 0 };
  struct oci_image_config c = { 0 };
  cleanup_free char *index_text = NULL, *new_index = NULL;
  size_t index_len = 0, new_len;
  cleanup_free char *blobs = xasprintf ("%s/blobs/sha256", dir);
  cleanup_free char *index = xasprintf ("%s/index.json", dir);
  cleanup_free char *layout = xasprintf ("%s/%s", dir, LAYOUT_FILE);
  cleanup_free char *man_path = NULL;
  bool made = false;
  int kind = -1;
  int r = -1;
  if (img_find (st, name, &rec, err) < 0 || img_config (st, &rec, &c, err) < 0)
    goto out;
  kind = check_dir (dir, &made, err);
  if (kind < 0)
    goto out;
  if (kind == 1 && file_read_all (index, IMG_MAX_DOC, &index_text, &index_len, err) < 0)
    goto out;
  if (mkdir_p (blobs, 0755, err) < 0)
    goto out;
  /* Blobs first, index.json last: a layout interrupted half-way names
   * nothing it lacks. */
  if (copy_blob (st, dir, rec.config_digest, err) < 0 || copy_blob (st, dir, rec.manifest_digest, err) < 0)
    goto out;
  for (size_t i = 0; i < rec.n_layers; i++)
    if (copy_blob (st, dir, rec.layers[i].digest, err) < 0)
      goto out;
  man_path = img_blob_path (st, rec.manifest_digest);
  struct stat sb;
  if (stat (man_path, &sb) < 0)
    {
      err_sys (err, "stat %s", man_path);
      goto out;
    }
  const char *slash = strrchr (rec.name, '/');
  const char *tag = strrchr (slash ? slash : rec.name, ':');
  struct oci_desc d = { .media_type = (char *)OCI_MT_MANIFEST,
                        .digest = rec.manifest_digest,
                        .size = sb.st_size,
                        .os = c.os,
                        .arch = c.arch,
                        .ref_name = (char *)(tag ? tag + 1 : "latest") };
  if (oci_index_add_ref (index_text, index_len, &d, &new_index, &new_len, err) < 0)
    {
      err_prefix (err, "%s", index);
      goto out;
    }
  if (kind == 0 && file_write_atomic (layout, LAYOUT_TEXT, strlen (LAYOUT_TEXT), 0644, err) < 0)
    goto out;
  if (file_write_atomic (index, new_index, new_len, 0644, err) < 0)
    goto out;
  if (ref_out)
    *ref_out = xstrdup (d.ref_name);
  r = 0;
out:
  /* A failed export into a new or empty directory leaves it as it was; one
   * into an existing layout may leave blobs its index.json does not name. */
  if (r < 0 && kind == 0)
    {
      hk_err ignored;
      if (made)
        rm_rf (dir, &ignored);
      else
        {
          cleanup_free char *top = xasprintf ("%s/blobs", dir);
          rm_rf (top, &ignored);
          unlink (layout);
        }
    }
  oci_image_config_free (&c);
  oci_image_rec_free (&rec);
  return r;
}
