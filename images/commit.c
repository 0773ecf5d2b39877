/* commit: an overlay upper directory written as a new OCI layer on top of
 * the image it stands on, and recorded in the store as a named image
 * (`hako snapshot --image`).
 *
 * The tar is written by libarchive (pax, numeric owners) from libarchive's
 * disk reader, through the store's hasher for the diff_id, into a temporary
 * file: that is all that happens while the sandbox is frozen.  Compression
 * (through the hasher again, for the blob digest) waits for the thaw.  The blob is then unpacked by the same
 * checked path an import takes (img_layer_ingest), so the committed image's layer directory is exactly what
 * its blob says. */
#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "images/internal.h"
#include "lib/disk_walk.h"
#include "lib/util.h"

#define WH_PREFIX ".wh."
#define WH_OPAQUE ".wh..wh..opq"
#define MT_LAYER_TAR "application/vnd.oci.image.layer.v1.tar"
#define MT_LAYER_GZIP "application/vnd.oci.image.layer.v1.tar+gzip"

struct img_commit
{
  struct img_store *st;
  char *tmp_tar;  /* the uncompressed layer, written while the sandbox is frozen */
  char *tmp_blob; /* the blob, until renamed into place */
  char *blob;     /* committed by img_commit_image, or NULL */
  bool blob_new, layer_new;
  char digest[IMG_DIGEST_LEN], diff_id[IMG_DIGEST_LEN];
  uint64_t tar_size, size;
  bool gzip;
};

/* A stream into a file through the store's hasher. */
struct sink
{
  int fd;
  struct img_hash hash;
  uint64_t size;
  hk_err err;
  bool failed;
  const struct img_idmap *ids;
};

static la_ssize_t
sink_write (struct archive *a, void *arg, const void *buf, size_t n)
{
  struct sink *s = arg;
  (void)a;
  img_hash_update (&s->hash, buf, n);
  if (fd_write_all (s->fd, buf, n) < 0)
    {
      err_sys (&s->err, "write layer");
      s->failed = true;
      return -1;
    }
  s->size += n;
  return n;
}

static int
arc_fail (struct sink *s, struct archive *a, const char *what, const char *path, hk_err *err)
{
  if (s->failed)
    {
      *err = s->err;
      return -1;
    }
  return err_set (err, archive_errno (a) > 0 ? archive_errno (a) : EIO, "%s %s: %s", what, path,
                  archive_error_string (a));
}

/* Overlay's own bookkeeping must not reach the image: its xattrs (trusted.*
 * for a root mount, user.* for a userxattr one) are dropped, and the ones
 * the tar cannot say (a renamed directory's redirect, a metacopy-only file
 * whose data is still below) refuse the commit rather than write a layer
 * that silently lacks content. */
static int
filter_xattrs (struct archive_entry *e, const char *path, bool *opaque, hk_err *err)
{
  const char *name;
  const void *value;
  size_t size;
  size_t n = 0;
  struct kept
  {
    char *name;
    void *value;
    size_t size;
  } *kept = NULL;
  int r = 0;
  *opaque = false;
  archive_entry_xattr_reset (e);
  while (archive_entry_xattr_next (e, &name, &value, &size) == ARCHIVE_OK)
    {
      const char *ov = str_has_prefix (name, "trusted.overlay.") ? name + 16
                       : str_has_prefix (name, "user.overlay.")  ? name + 13
                                                                 : NULL;
      if (ov == NULL)
        {
          kept = xrealloc (kept, (n + 1) * sizeof *kept);
          kept[n].name = xstrdup (name);
          kept[n].value = xmalloc (size ? size : 1);
          memcpy (kept[n].value, value, size);
          kept[n++].size = size;
          continue;
        }
      if (strcmp (ov, "opaque") == 0)
        *opaque = size >= 1 && ((const char *)value)[0] == 'y';
      else if (r == 0 && (strcmp (ov, "redirect") == 0 || strcmp (ov, "metacopy") == 0))
        r = err_set (err, ENOTSUP,
                     "%s: an overlay %s entry (its content is still in a lower "
                     "layer) cannot be written as an OCI layer",
                     path, ov);
    }
  archive_entry_xattr_clear (e);
  for (size_t i = 0; i < n; i++)
    {
      archive_entry_xattr_add_entry (e, kept[i].name, kept[i].value, kept[i].size);
      free (kept[i].name);
      free (kept[i].value);
    }
  free (kept);
  return r;
}

/* An empty regular file: an OCI whiteout. */
static int
write_marker (struct sink *s, struct archive *tar, const char *path, hk_err *err)
{
  struct archive_entry *w = archive_entry_new ();
  archive_entry_set_pathname (w, path);
  archive_entry_set_filetype (w, AE_IFREG);
  archive_entry_set_perm (w, 0600);
  archive_entry_set_size (w, 0);
  int r = archive_write_header (tar, w) < ARCHIVE_WARN ? arc_fail (s, tar, "write", path, err) : 0;
  archive_entry_free (w);
  return r;
}

static char *
whiteout_name (const char *rel)
{
  const char *slash = strrchr (rel, '/');
  if (slash == NULL)
    return xasprintf (WH_PREFIX "%s", rel);
  return xasprintf ("%.*s/" WH_PREFIX "%s", (int)(slash - rel), rel, slash + 1);
}

static int
copy_data (struct sink *s, struct archive *rd, struct archive *tar, const char *path, hk_err *err)
{
  static char buf[1 << 16];
  la_ssize_t n;
  while ((n = archive_read_data (rd, buf, sizeof buf)) > 0)
    if (archive_write_data (tar, buf, n) < 0)
      return arc_fail (s, tar, "write", path, err);
  if (n < 0)
    return arc_fail (s, rd, "read", path, err);
  return 0;
}

/* host as the sandbox saw it, through ranges r. */
static bool
id_inside (const struct img_idrange *r, size_t n, uint32_t host, uint32_t *inside)
{
  for (size_t i = 0; i < n; i++)
    if (host >= r[i].host && host - r[i].host < r[i].size)
      {
        *inside = r[i].inside + (host - r[i].host);
        return true;
      }
  return false;
}

/* One entry of the upper dir, as rel (its path inside the layer). */
static int
write_entry (struct sink *s, struct archive *rd, struct archive *tar, struct archive_entry_linkresolver *lr,
             struct archive_entry *entry, const char *rel, hk_err *err)
{
  mode_t type = archive_entry_filetype (entry);
  /* Overlay's whiteout, a 0:0 character device: the file of the lower
   * layers is deleted — OCI's ".wh.NAME". */
  if (type == AE_IFCHR && archive_entry_rdev (entry) == makedev (0, 0))
    {
      cleanup_free char *wh = whiteout_name (rel);
      return write_marker (s, tar, wh, err);
    }
  bool opaque;
  if (filter_xattrs (entry, rel, &opaque, err) < 0)
    return -1;
  /* The layer records the sandbox's ids, not the host's it wrote with: a
   * file root made inside is root's in the image, not uid 1000000000's. */
  if (s->ids)
    {
      uint32_t uid, gid;
      if (!id_inside (s->ids->uid, s->ids->n_uid, (uint32_t)archive_entry_uid (entry), &uid)
          || !id_inside (s->ids->gid, s->ids->n_gid, (uint32_t)archive_entry_gid (entry), &gid))
        return err_set (err, ERANGE, "%s: owner %lld:%lld is outside the sandbox's id maps", rel,
                        (long long)archive_entry_uid (entry), (long long)archive_entry_gid (entry));
      archive_entry_set_uid (entry, uid);
      archive_entry_set_gid (entry, gid);
    }
  archive_entry_set_pathname (entry, rel);
  archive_entry_unset_atime (entry);
  archive_entry_unset_ctime (entry);
  archive_entry_unset_birthtime (entry);
  archive_entry_set_uname (entry, NULL);
  archive_entry_set_gname (entry, NULL);
  struct archive_entry *e = entry, *sparse = NULL;
  archive_entry_linkify (lr, &e, &sparse);
  if (e == NULL)
    return 0;
  if (archive_write_header (tar, e) < ARCHIVE_WARN)
    return arc_fail (s, tar, "write", rel, err);
  if (type == AE_IFREG && archive_entry_hardlink (e) == NULL && archive_entry_size (e) > 0
      && copy_data (s, rd, tar, rel, err) < 0)
    return -1;
  /* An opaque directory hides all of the lower layers' directory: OCI's
   * ".wh..wh..opq", written before its own entries. */
  if (type == AE_IFDIR && opaque)
    {
      cleanup_free char *opq = xasprintf ("%s/" WH_OPAQUE, rel);
      return write_marker (s, tar, opq, err);
    }
  return 0;
}

struct tree_walk
{
  struct sink *s;
  struct archive *tar;
  struct archive_entry_linkresolver *lr;
};

static int
tree_entry (struct archive *rd, struct archive_entry *e, const char *rel, void *arg, hk_err *err)
{
  struct tree_walk *w = arg;
  if (rel[0] == '\0')
    return 0; /* the layer root: the base image's root stays as it is */
  cleanup_free char *name = xstrdup (rel);
  return write_entry (w->s, rd, w->tar, w->lr, e, name, err);
}

/* Walk upper and write it to the sink as a tar. */
static int
write_tree (struct sink *s, struct archive *tar, const char *upper, hk_err *err)
{
  struct tree_walk w = { .s = s, .tar = tar, .lr = archive_entry_linkresolver_new () };
  if (w.lr == NULL)
    abort ();
  archive_entry_linkresolver_set_strategy (w.lr, ARCHIVE_FORMAT_TAR_PAX_RESTRICTED);
  int r = disk_walk (upper, ARCHIVE_READDISK_NO_ACL | ARCHIVE_READDISK_NO_FFLAGS | ARCHIVE_READDISK_NO_SPARSE,
                     tree_entry, &w, err);
  /* A failed write to the sink says why better than the archive does. */
  if (r < 0 && s->failed)
    *err = s->err;
  archive_entry_linkresolver_free (w.lr);
  return r;
}

/* The tar, hashed for the diff_id: the part that reads the sandbox's files,
 * so the only part done while it is frozen (compression waits for the thaw). */
static int
write_tar (struct img_commit *c, int fd, const char *upper, const struct img_idmap *ids, hk_err *err)
{
  struct sink s = { .fd = fd, .ids = ids };
  struct archive *tar = archive_write_new ();
  int r = -1;
  img_hash_init (&s.hash);
  if (archive_write_set_format_pax_restricted (tar) != ARCHIVE_OK
      || archive_write_open (tar, &s, NULL, sink_write, NULL) != ARCHIVE_OK)
    {
      arc_fail (&s, tar, "write", "layer", err);
      goto out;
    }
  if (write_tree (&s, tar, upper, err) < 0)
    goto out;
  if (archive_write_close (tar) != ARCHIVE_OK)
    {
      arc_fail (&s, tar, "write", "layer", err);
      goto out;
    }
  img_hash_final (&s.hash, c->diff_id);
  c->tar_size = s.size;
  r = 0;
out:
  archive_write_free (tar);
  return r;
}

/* gzip the tar into the blob, hashed for its digest (libarchive's raw
 * format with one entry is its compressor without an archive around it);
 * uncompressed, the tar is the blob and its digest the diff_id. */
static int
compress (struct img_commit *c, hk_err *err)
{
  if (!c->gzip)
    {
      c->tmp_blob = steal_pointer (&c->tmp_tar);
      memcpy (c->digest, c->diff_id, IMG_DIGEST_LEN);
      c->size = c->tar_size;
      return 0;
    }
  cleanup_close int in = open (c->tmp_tar, O_RDONLY | O_CLOEXEC);
  if (in < 0)
    return err_sys (err, "open %s", c->tmp_tar);
  c->tmp_blob = xasprintf ("%s/blobs/sha256/.tmp-XXXXXX", c->st->dir);
  struct sink s = { .fd = mkostemp (c->tmp_blob, O_CLOEXEC) };
  if (s.fd < 0)
    {
      err_sys (err, "create %s", c->tmp_blob);
      free (c->tmp_blob);
      c->tmp_blob = NULL;
      return -1;
    }
  img_hash_init (&s.hash);
  struct archive *gz = archive_write_new ();
  struct archive_entry *raw = archive_entry_new ();
  archive_entry_set_pathname (raw, "layer.tar");
  archive_entry_set_filetype (raw, AE_IFREG);
  int r = -1;
  if (archive_write_add_filter_gzip (gz) != ARCHIVE_OK || archive_write_set_format_raw (gz) != ARCHIVE_OK
      || archive_write_set_bytes_in_last_block (gz, 1) != ARCHIVE_OK
      || archive_write_open (gz, &s, NULL, sink_write, NULL) != ARCHIVE_OK
      || archive_write_header (gz, raw) != ARCHIVE_OK)
    {
      arc_fail (&s, gz, "compress", "layer", err);
      goto out;
    }
  static char buf[1 << 17];
  ssize_t n;
  while ((n = read (in, buf, sizeof buf)) > 0)
    if (archive_write_data (gz, buf, n) < 0)
      {
        arc_fail (&s, gz, "compress", "layer", err);
        goto out;
      }
  if (n < 0)
    {
      err_sys (err, "read %s", c->tmp_tar);
      goto out;
    }
  if (archive_write_close (gz) != ARCHIVE_OK)
    {
      arc_fail (&s, gz, "compress", "layer", err);
      goto out;
    }
  if (fchmod (s.fd, 0644) < 0)
    {
      err_sys (err, "chmod %s", c->tmp_blob);
      goto out;
    }
  img_hash_final (&s.hash, c->digest);
  c->size = s.size;
  unlink (c->tmp_tar);
  free (c->tmp_tar);
  c->tmp_tar = NULL;
  r = 0;
out:
  archive_write_free (gz);
  archive_entry_free (raw);
  close (s.fd);
  return r;
}

int
img_commit_layer (struct img_store *st, const char *upper, bool gzip, const struct img_idmap *ids,
                  struct img_commit **out, hk_err *err)
{
  struct img_commit *c = xcalloc (1, sizeof *c);
  c->st = st;
  c->gzip = gzip;
  c->tmp_tar = xasprintf ("%s/blobs/sha256/.tmp-XXXXXX", st->dir);
  int fd = mkostemp (c->tmp_tar, O_CLOEXEC);
  if (fd < 0)
    {
      err_sys (err, "create %s", c->tmp_tar);
      free (c->tmp_tar);
      c->tmp_tar = NULL;
      img_commit_free (c);
      return -1;
    }
  int r = write_tar (c, fd, upper, ids, err);
  if (r == 0 && fchmod (fd, 0644) < 0)
    r = err_sys (err, "chmod %s", c->tmp_tar);
  close (fd);
  if (r < 0)
    {
      err_prefix (err, "commit %s", upper);
      img_commit_free (c);
      return -1;
    }
  *out = c;
  return 0;
}

/* The blob into its place and unpacked through the import's checked path
 * (which re-hashes it and checks the diff_id once more). */
static int
store_layer (struct img_commit *c, const char *media_type, hk_err *err)
{
  c->blob = img_blob_path (c->st, c->digest);
  cleanup_free char *layer = img_layer_path (c->st, c->diff_id);
  c->blob_new = !img_blob_present (c->st, c->digest, c->size);
  c->layer_new = access (layer, F_OK) < 0;
  if (c->blob_new ? rename (c->tmp_blob, c->blob) < 0 : unlink (c->tmp_blob) < 0)
    return err_sys (err, "store layer blob %s", c->blob);
  free (c->tmp_blob);
  c->tmp_blob = NULL;
  struct oci_desc want = { .media_type = (char *)media_type, .digest = c->digest, .size = c->size };
  struct img_limits lim;
  img_limits_default (&lim);
  cleanup_close int fd = open (c->blob, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return err_sys (err, "open %s", c->blob);
  return img_layer_ingest (c->st, fd, &want, c->diff_id, &lim, err);
}

/* The base manifest with the new config and the new layer on top. */
static void
manifest_add_layer (struct oci_manifest *m, const char *cfg_digest, size_t new_cfg_len, const char *mt,
                    const struct img_commit *c)
{
  free (m->config.digest);
  free (m->config.media_type);
  m->config.digest = xstrdup (cfg_digest);
  m->config.media_type = xstrdup (OCI_MT_CONFIG);
  m->config.size = new_cfg_len;
  free (m->media_type);
  m->media_type = xstrdup (OCI_MT_MANIFEST);
  m->layers = xrealloc (m->layers, (m->n_layers + 2) * sizeof *m->layers);
  m->layers[m->n_layers]
      = (struct oci_desc){ .media_type = xstrdup (mt), .digest = xstrdup (c->digest), .size = c->size };
  m->n_layers++;
  m->layers[m->n_layers] = (struct oci_desc){ 0 };
}

/* The store's record of the committed image: its name, documents, layers. */
static void
image_record (struct oci_image_rec *rec, const struct oci_manifest *m, const struct oci_image_config *base,
              const char *name, const char *man_digest, const char *cfg_digest, const char *created,
              const char *diff_id)
{
  *rec = (struct oci_image_rec){ .name = xstrdup (name),
                                 .manifest_digest = xstrdup (man_digest),
                                 .config_digest = xstrdup (cfg_digest),
                                 .created = xstrdup (created),
                                 .n_layers = m->n_layers };
  rec->layers = xcalloc (m->n_layers + 1, sizeof *rec->layers);
  for (size_t i = 0; i < m->n_layers; i++)
    rec->layers[i] = (struct oci_image_layer_rec){
      .digest = xstrdup (m->layers[i].digest),
      .diff_id = xstrdup (i < base->n_diff_ids ? base->diff_ids[i] : diff_id),
      .media_type = m->layers[i].media_type ? xstrdup (m->layers[i].media_type) : NULL,
      .size = m->layers[i].size
    };
}

int
img_commit_image (struct img_commit *c, const struct img_commit_opts *o, hk_err *err)
{
  struct img_store *st = c->st;
  const char *mt = c->gzip ? MT_LAYER_GZIP : MT_LAYER_TAR;
  struct oci_manifest m = { 0 };
  struct oci_image_config base = { 0 };
  struct oci_image_rec rec = { 0 };
  cleanup_free char *mtext = NULL, *ctext = NULL, *new_cfg = NULL, *new_man = NULL;
  cleanup_free char *created = img_now_rfc3339 ();
  size_t mlen, clen, new_cfg_len, new_man_len;
  char cfg_digest[IMG_DIGEST_LEN], man_digest[IMG_DIGEST_LEN];
  bool cfg_new = false, man_new = false;
  int r = -1;
  if (img_blob_read (st, o->base_manifest, &mtext, &mlen, err) < 0
      || oci_manifest_parse (mtext, mlen, &m, err) < 0
      || img_blob_read (st, m.config.digest, &ctext, &clen, err) < 0
      || oci_image_config_parse (ctext, clen, &base, err) < 0)
    {
      err_prefix (err, "base image %.19s..", o->base_manifest);
      goto out;
    }
  if (base.n_diff_ids != m.n_layers)
    {
      err_set (err, EINVAL, "base image %.19s..: %zu layers, %zu diff_ids", o->base_manifest, m.n_layers,
               base.n_diff_ids);
      goto out;
    }
  if (compress (c, err) < 0 || store_layer (c, mt, err) < 0)
    goto out;
  struct oci_layer_history h
      = { .diff_id = c->diff_id, .created = created, .created_by = o->created_by, .comment = o->comment };
  if (oci_image_config_add_layer (ctext, clen, &h, &new_cfg, &new_cfg_len, err) < 0)
    goto out;
  /* cfg_new, man_new: whether this commit wrote the documents; only what it
   * added is taken away again when it fails. */
  if (img_blob_put_mem (st, NULL, new_cfg, new_cfg_len, cfg_digest, &cfg_new, err) < 0)
    goto out;
  manifest_add_layer (&m, cfg_digest, new_cfg_len, mt, c);
  if (oci_manifest_write (&m, &new_man, &new_man_len, err) < 0)
    goto out;
  if (img_blob_put_mem (st, NULL, new_man, new_man_len, man_digest, &man_new, err) < 0)
    goto out;
  image_record (&rec, &m, &base, o->name, man_digest, cfg_digest, created, c->diff_id);
  if (img_names_put (st, &rec, err) < 0)
    goto out;
  c->blob_new = c->layer_new = false; /* committed: named, nothing to undo */
  if (o->manifest_out)
    *o->manifest_out = xstrdup (man_digest);
  r = 0;
out:
  if (r < 0)
    {
      if (man_new)
        {
          cleanup_free char *p = img_blob_path (st, man_digest);
          unlink (p);
        }
      if (cfg_new)
        {
          cleanup_free char *p = img_blob_path (st, cfg_digest);
          unlink (p);
        }
    }
  oci_image_rec_free (&rec);
  oci_image_config_free (&base);
  oci_manifest_free (&m);
  return r;
}

void
img_commit_free (struct img_commit *c)
{
  if (c == NULL)
    return;
  if (c->tmp_tar)
    unlink (c->tmp_tar);
  if (c->tmp_blob)
    unlink (c->tmp_blob);
  if (c->layer_new)
    {
      hk_err ignored;
      cleanup_free char *layer = img_layer_path (c->st, c->diff_id);
      rm_rf (layer, &ignored);
    }
  if (c->blob_new && c->blob)
    unlink (c->blob);
  free (c->tmp_tar);
  free (c->tmp_blob);
  free (c->blob);
  free (c);
}
