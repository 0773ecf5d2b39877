/* layer: one pass over a layer blob — copy it into the store, hash it,
 * decompress it (gzip, zstd, xz or none, told by its magic bytes), hash the
 * tar for its diff_id and unpack it — committing blob and layer only when
 * every check passed. */
#include "config.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "images/internal.h"
#include "lib/util.h"

#ifdef HAVE_ISAL
#include <dlfcn.h>
#include <isa-l/igzip_lib.h>
#include <pthread.h>

/* ISA-L's inflate, opened at the first gzip layer (configure.ac says why
 * not linked); NULL where libisal.so.2 is missing or HAKO_INFLATE=zlib. */
struct isal_api
{
  void (*init) (struct inflate_state *);
  void (*reset) (struct inflate_state *);
  int (*inflate) (struct inflate_state *);
};
static struct isal_api isal_fns;
static const struct isal_api *isal;
static pthread_once_t isal_once = PTHREAD_ONCE_INIT;

static void
isal_open (void)
{
  const char *pick = getenv ("HAKO_INFLATE");
  if (pick && strcmp (pick, "zlib") == 0)
    return;
  void *h = dlopen ("libisal.so.2", RTLD_NOW | RTLD_LOCAL);
  if (h == NULL)
    return;
  *(void **)&isal_fns.init = dlsym (h, "isal_inflate_init");
  *(void **)&isal_fns.reset = dlsym (h, "isal_inflate_reset");
  *(void **)&isal_fns.inflate = dlsym (h, "isal_inflate");
  if (isal_fns.init && isal_fns.reset && isal_fns.inflate)
    isal = &isal_fns;
}
#endif

struct pipe
{
  int src_fd;
  int blob_fd; /* temp blob to tee into, or -1 */
  const struct oci_desc *want;
  const struct img_limits *lim;
  const struct img_progress_at *at; /* may be NULL */
  struct img_hash blob_hash, diff_hash;
  uint64_t blob_size, tar_size;
  struct archive *raw; /* the decompressor (NULL while igzip inflates) */
#ifdef HAVE_ISAL
  struct inflate_state *gz; /* igzip's state, for a gzip blob */
  bool gz_in_eof;           /* raw_read has returned the blob's end */
#endif
  size_t replay; /* bytes of buf already read and hashed, to hand out again */
  hk_err err;    /* set by a callback; libarchive's own message is vaguer */
  bool failed;
  char buf[1 << 17];
  char tarbuf[1 << 17];
};

static ssize_t
pipe_fail (struct pipe *p)
{
  p->failed = true;
  return -1;
}

/* The compressed side: read the source, tee it into the store, hash it, and
 * stop as soon as it is longer than its descriptor says. */
static ssize_t
raw_read (struct archive *a, void *arg, const void **buf)
{
  struct pipe *p = arg;
  ssize_t n;
  if (p->replay > 0)
    {
      /* open_raw looked at the first chunk: it was counted, hashed and
       * teed then. */
      n = (ssize_t)p->replay;
      p->replay = 0;
      *buf = p->buf;
      return n;
    }
  do
    n = read (p->src_fd, p->buf, sizeof p->buf);
  while (n < 0 && errno == EINTR);
  if (n < 0)
    {
      err_sys (&p->err, "read layer");
      return pipe_fail (p);
    }
  p->blob_size += n;
  if (p->at && p->at->p && n > 0)
    p->at->p->layer (p->at->p->ctx, p->at->i, p->at->n, p->at->label, p->blob_size,
                     p->at->total > p->blob_size ? p->at->total : p->blob_size);
  if (p->want->digest && p->blob_size > p->want->size)
    {
      err_set (&p->err, EINVAL, "blob %.19s..: longer than the %llu bytes its descriptor says",
               p->want->digest, (unsigned long long)p->want->size);
      return pipe_fail (p);
    }
  img_hash_update (&p->blob_hash, p->buf, n);
  if (p->blob_fd >= 0 && n > 0 && fd_write_all (p->blob_fd, p->buf, n) < 0)
    {
      err_sys (&p->err, "write blob");
      return pipe_fail (p);
    }
  /* Writeback started as it goes (see the syncfs before commit). */
  if (p->blob_fd >= 0 && n > 0 && (p->blob_size & ((8u << 20) - 1)) < (uint64_t)n)
    sync_file_range (p->blob_fd, 0, 0, SYNC_FILE_RANGE_WRITE);
  *buf = p->buf;
  return n;
}

#ifdef HAVE_ISAL
/* igzip's side: inflate the next tarbuf's worth; the gzip members one
 * after another, as zlib's gzip filter does (bytes after the last member
 * that start no other are not tar: they end the stream, and are hashed
 * with the blob all the same).  Every member's CRC-32 and length are
 * checked by igzip; the diff_id checks every byte anyway. */
static la_ssize_t
gz_read (struct pipe *p)
{
  struct inflate_state *s = p->gz;
  s->next_out = (uint8_t *)p->tarbuf;
  s->avail_out = sizeof p->tarbuf;
  for (;;)
    {
      if (s->avail_in == 0 && !p->gz_in_eof)
        {
          const void *b;
          ssize_t n = raw_read (NULL, p, &b);
          if (n < 0)
            return -1;
          if (n == 0)
            p->gz_in_eof = true;
          s->next_in = (uint8_t *)b;
          s->avail_in = (uint32_t)n;
        }
      size_t made = sizeof p->tarbuf - s->avail_out;
      if (s->block_state == ISAL_BLOCK_FINISH)
        {
          if (made > 0)
            return (la_ssize_t)made;
          /* Another member starts with gzip's magic (its second byte may be
           * in the next chunk: then igzip reads the header across the two). */
          bool more = s->avail_in >= 2 ? s->next_in[0] == 0x1f && s->next_in[1] == 0x8b
                                       : s->avail_in == 1 && !p->gz_in_eof && s->next_in[0] == 0x1f;
          if (!more)
            return 0; /* the last member is done */
          uint8_t *in = s->next_in;
          uint32_t avail = s->avail_in;
          isal->reset (s);
          s->crc_flag = ISAL_GZIP;
          s->next_in = in;
          s->avail_in = avail;
          s->next_out = (uint8_t *)p->tarbuf;
          s->avail_out = sizeof p->tarbuf;
        }
      int r = isal->inflate (s);
      if (r < 0)
        {
          if (!p->failed)
            err_set (&p->err, EINVAL, "decompress layer: %s",
                     r == ISAL_INCORRECT_CHECKSUM ? "gzip checksum mismatch" : "invalid gzip data");
          return pipe_fail (p);
        }
      made = sizeof p->tarbuf - s->avail_out;
      if (s->avail_out == 0)
        return (la_ssize_t)made;
      if (s->block_state != ISAL_BLOCK_FINISH && s->avail_in == 0 && p->gz_in_eof)
        {
          if (!p->failed)
            err_set (&p->err, EINVAL, "decompress layer: truncated gzip data");
          return pipe_fail (p);
        }
    }
}
#endif

/* The uncompressed side: what the tar reader sees is hashed for the diff_id
 * and counted against the layer's byte bound. */
static ssize_t
tar_read (struct archive *a, void *arg, const void **buf)
{
  struct pipe *p = arg;
  la_ssize_t n;
#ifdef HAVE_ISAL
  if (p->gz)
    n = gz_read (p);
  else
#endif
    n = archive_read_data (p->raw, p->tarbuf, sizeof p->tarbuf);
  if (n < 0)
    {
      if (!p->failed)
        err_set (&p->err, EINVAL, "decompress layer: %s", archive_error_string (p->raw));
      return pipe_fail (p);
    }
  p->tar_size += n;
  if (p->tar_size > p->lim->max_bytes)
    {
      err_set (&p->err, EFBIG,
               "layer is larger than %llu bytes uncompressed (a decompression "
               "bomb?  --max-layer-bytes raises the bound)",
               (unsigned long long)p->lim->max_bytes);
      return pipe_fail (p);
    }
  img_hash_update (&p->diff_hash, p->tarbuf, n);
  *buf = p->tarbuf;
  return n;
}

static int
open_raw (struct pipe *p, hk_err *err)
{
#ifdef HAVE_ISAL
  pthread_once (&isal_once, isal_open);
  if (isal)
    {
      /* A look at the first chunk: gzip goes to igzip, anything else to
       * libarchive, which is handed the same chunk again. */
      const void *b;
      ssize_t n = raw_read (NULL, p, &b);
      if (n < 0)
        {
          *err = p->err;
          return -1;
        }
      if (n >= 2 && p->buf[0] == (char)0x1f && p->buf[1] == (char)0x8b)
        {
          p->gz = xcalloc (1, sizeof *p->gz);
          isal->init (p->gz);
          p->gz->crc_flag = ISAL_GZIP;
          p->gz->next_in = (uint8_t *)p->buf;
          p->gz->avail_in = (uint32_t)n;
          return 0;
        }
      p->replay = (size_t)n;
      if (n == 0)
        p->replay = 0; /* an empty blob: libarchive reads its end again */
    }
#endif
  p->raw = archive_read_new ();
  archive_read_support_filter_gzip (p->raw);
  archive_read_support_filter_zstd (p->raw);
  archive_read_support_filter_xz (p->raw);
  archive_read_support_filter_none (p->raw);
  archive_read_support_format_raw (p->raw);
  struct archive_entry *e;
  if (archive_read_open (p->raw, p, NULL, raw_read, NULL) != ARCHIVE_OK
      || archive_read_next_header (p->raw, &e) != ARCHIVE_OK)
    {
      if (p->failed)
        *err = p->err;
      else
        err_set (err, EINVAL, "layer: %s", archive_error_string (p->raw));
      return -1;
    }
  return 0;
}

/* Unpack (rootfd >= 0) or only hash the uncompressed stream, then read both
 * streams to their ends so the hashes cover every byte. */
static int
run_pipe (struct pipe *p, int rootfd, hk_err *err)
{
  int r = 0;
  if (rootfd >= 0)
    {
      struct archive *tar = archive_read_new ();
      archive_read_support_format_tar (tar);
      if (archive_read_open (tar, p, NULL, tar_read, NULL) != ARCHIVE_OK)
        r = err_set (err, EINVAL, "layer: %s", archive_error_string (tar));
      else
        r = img_unpack_tar (tar, rootfd, p->lim, err);
      if (r < 0 && p->failed)
        *err = p->err;
      archive_read_free (tar);
      if (r < 0)
        return -1;
    }
  const void *buf;
  ssize_t n;
  while ((n = tar_read (NULL, p, &buf)) > 0)
    ;
  while (n == 0 && (n = raw_read (NULL, p, &buf)) > 0)
    ;
  if (n < 0)
    {
      *err = p->err;
      return -1;
    }
  return 0;
}

static int
check_result (struct pipe *p, struct oci_desc *want, const char *diff_id, hk_err *err)
{
  char blob[IMG_DIGEST_LEN], diff[IMG_DIGEST_LEN];
  img_hash_final (&p->blob_hash, blob);
  img_hash_final (&p->diff_hash, diff);
  if (want->digest == NULL)
    {
      want->digest = xstrdup (blob);
      want->size = p->blob_size;
    }
  else if (p->blob_size != want->size)
    return err_set (err, EINVAL, "blob %.19s..: size %llu, descriptor says %llu", want->digest,
                    (unsigned long long)p->blob_size, (unsigned long long)want->size);
  else if (strcmp (blob, want->digest) != 0)
    return err_set (err, EINVAL, "blob %.19s..: sha256 mismatch: content hashes to %.19s..", want->digest,
                    blob);
  if (strcmp (diff, diff_id) != 0)
    return err_set (err, EINVAL,
                    "layer %.19s..: diff_id mismatch: the uncompressed tar hashes to "
                    "%.19s.., the config's rootfs.diff_ids says %.19s..",
                    want->digest, diff, diff_id);
  return 0;
}

/* The layer did not unpack: if the blob is not what its descriptor says,
 * that is the error to report (a flipped byte shows as a decompression
 * error first); else the unpack's own error, naming the blob. */
static void
blame_blob (struct pipe *p, hk_err *err)
{
  const void *buf;
  char got[IMG_DIGEST_LEN];
  if (p->want->digest == NULL)
    return;
  p->failed = false;
  while (raw_read (NULL, p, &buf) > 0)
    ;
  if (p->failed)
    {
      *err = p->err;
      return;
    }
  img_hash_final (&p->blob_hash, got);
  if (p->blob_size != p->want->size)
    err_set (err, EINVAL, "blob %.19s..: size %llu, descriptor says %llu", p->want->digest,
             (unsigned long long)p->blob_size, (unsigned long long)p->want->size);
  else if (strcmp (got, p->want->digest) != 0)
    err_set (err, EINVAL, "blob %.19s..: sha256 mismatch: content hashes to %.19s..", p->want->digest, got);
  else
    err_prefix (err, "layer %.19s..", p->want->digest);
}

/* Put the verified temp blob / layer in place.  Another import may have put
 * the same content there first: then ours is dropped. */
static int
commit (const char *tmp, const char *final, bool dir, hk_err *err)
{
  if (rename (tmp, final) == 0)
    return 0;
  if (dir && (errno == EEXIST || errno == ENOTEMPTY))
    return rm_rf (tmp, err);
  return err_sys (err, "rename %s to %s", tmp, final);
}

/* Each layer is a tree of its own, unrelated to its siblings: marked as a
 * top of hierarchies (chattr +T), the layers directory makes ext4's Orlov
 * allocator place each new layer in a block group of its own choosing, with
 * free inodes and blocks, rather than next to its siblings.  That matters on
 * an ext4 without a journal, which will not reuse an inode freed in the last
 * minute: it scans past every such inode, block by block, for each new one,
 * so unpacking right after an `image rm` (or a deleted layer) in the same
 * group cost 1 ms a file.  Elsewhere the flag is ignored (and so is its
 * failure): it only hints where to allocate. */
static void
spread_layers (const struct img_store *st)
{
  cleanup_free char *dir = xasprintf ("%s/layers", st->dir);
  cleanup_close int fd = open (dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  int flags = 0;
  if (fd >= 0 && ioctl (fd, FS_IOC_GETFLAGS, &flags) == 0 && !(flags & FS_TOPDIR_FL))
    {
      flags |= FS_TOPDIR_FL;
      (void)ioctl (fd, FS_IOC_SETFLAGS, &flags);
    }
}

void
img_progress_done (const struct img_progress_at *at)
{
  if (at && at->p)
    at->p->layer (at->p->ctx, at->i, at->n, at->label, at->total, at->total);
}

void
img_progress_present (const struct img_progress_at *at)
{
  if (at && at->p && at->p->present)
    at->p->present (at->p->ctx, at->i, at->n, at->label, at->total);
  else
    img_progress_done (at);
}

int
img_layer_ingest (struct img_store *st, int src_fd, struct oci_desc *want, const char *diff_id,
                  const struct img_limits *lim, hk_err *err)
{
  return img_layer_ingest_at (st, src_fd, want, diff_id, lim, NULL, err);
}

/* The layer's temporary directory in the store, made and opened. */
static int
make_layer_tmp (struct img_store *st, char *layer_tmp, int *rootfd, bool *made_layer, hk_err *err)
{
  spread_layers (st);
  if (mkdtemp (layer_tmp) == NULL)
    {
      err_sys (err, "create %s", layer_tmp);
      return -1;
    }
  *made_layer = true;
  if (chmod (layer_tmp, 0755) < 0 || (*rootfd = open (layer_tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
    {
      err_sys (err, "open %s", layer_tmp);
      return -1;
    }
  return 0;
}

int
img_layer_ingest_at (struct img_store *st, int src_fd, struct oci_desc *want, const char *diff_id,
                     const struct img_limits *lim, const struct img_progress_at *at, hk_err *err)
{
  cleanup_free char *layer = img_layer_path (st, diff_id);
  bool have_blob = want->digest && img_blob_present (st, want->digest, want->size);
  bool have_layer = access (layer, F_OK) == 0;
  if (have_blob && have_layer)
    {
      img_progress_present (at);
      return 0; /* a second import of the same layer costs two stats */
    }
  cleanup_free char *blob_tmp = xasprintf ("%s/blobs/sha256/.tmp-XXXXXX", st->dir);
  cleanup_free char *layer_tmp = xasprintf ("%s/layers/.tmp-XXXXXX", st->dir);
  struct pipe *p = xcalloc (1, sizeof *p);
  *p = (struct pipe){ .src_fd = src_fd, .blob_fd = -1, .want = want, .lim = lim, .at = at };
  cleanup_close int rootfd = -1;
  cleanup_free char *blob = NULL;
  int r = -1;
  bool made_layer = false;
  img_hash_init (&p->blob_hash);
  img_hash_init (&p->diff_hash);
  if (!have_blob && (p->blob_fd = mkostemp (blob_tmp, O_CLOEXEC)) < 0)
    {
      err_sys (err, "create %s", blob_tmp);
      goto out;
    }
  if (!have_layer && make_layer_tmp (st, layer_tmp, &rootfd, &made_layer, err) < 0)
    goto out;
  if (open_raw (p, err) < 0 || run_pipe (p, rootfd, err) < 0)
    {
      blame_blob (p, err);
      goto out;
    }
  if (check_result (p, want, diff_id, err) < 0)
    goto out;
  test_stall_forever ("import-layer-unpacked", st->dir);
  /* Durable before it is published: a blob or layer renamed into place is
   * trusted by every later import and create (a second import skips what
   * is there), so after a power loss it must be whole, not a name over
   * unwritten blocks.  One syncfs for the layer's thousands of files (their
   * writeback was started as each was written); nothing else in an import
   * is synced: the manifest, config and names.json are small documents
   * re-hashed or re-parsed whenever they are read. */
  if (syncfs (rootfd >= 0 ? rootfd : p->blob_fd) < 0)
    {
      err_sys (err, "sync the image store");
      goto out;
    }
  blob = img_blob_path (st, want->digest);
  if (p->blob_fd >= 0 && (fchmod (p->blob_fd, 0644) < 0 || commit (blob_tmp, blob, false, err) < 0))
    goto out;
  p->blob_fd >= 0 ? close (p->blob_fd) : 0;
  p->blob_fd = -1;
  test_stall_forever ("import-blob-committed", st->dir);
  if (!have_layer && commit (layer_tmp, layer, true, err) < 0)
    goto out;
  made_layer = false;
  test_stall_forever ("import-layer-committed", st->dir);
  img_progress_done (at);
  r = 0;
out:
  if (p->raw)
    archive_read_free (p->raw);
#ifdef HAVE_ISAL
  free (p->gz);
#endif
  img_hash_free (&p->blob_hash);
  img_hash_free (&p->diff_hash);
  if (p->blob_fd >= 0)
    {
      close (p->blob_fd);
      unlink (blob_tmp);
    }
  if (made_layer)
    {
      hk_err ignored;
      rm_rf (layer_tmp, &ignored);
    }
  free (p);
  return r;
}
