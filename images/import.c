/* import: an OCI image layout directory, an oci-archive or a docker-archive
 * into the content store — index -> manifest -> config -> layers, every blob
 * checked against what referenced it. */
#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "images/internal.h"
#include "lib/inroot.h"
#include "lib/syscalls.h"
#include "lib/util.h"
#include "oci/spec.h"

#if defined(__x86_64__)
#define HOST_ARCH "amd64"
#elif defined(__aarch64__)
#define HOST_ARCH "arm64"
#else
#define HOST_ARCH "unknown"
#endif

/* Where the source's files are: a layout directory (paths resolved inside
 * it: the layout is input too), or an archive's files extracted flat into a
 * temporary directory of the store ('/' in their names turned into '%'). */
struct src
{
  int dirfd;
  bool flat;
  char *tmpdir; /* to remove, when extracted */
  char *label;
  const struct img_store *store;     /* extracted: where the blobs not copied out are */
  char **link_names, **link_targets; /* an archive's layer.tar symlinks, not yet linked */
};

static char *
flat_name (const char *path)
{
  char *flat = xstrdup (path);
  for (char *p = flat; *p; p++)
    if (*p == '/')
      *p = '%';
  return flat;
}

static int
src_open (const struct src *s, const char *path, hk_err *err)
{
  int fd;
  if (s->flat)
    {
      cleanup_free char *flat = flat_name (path);
      fd = openat (s->dirfd, flat, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
      /* A blob the store has was not extracted (extract_archive): the
       * store's copy stands in, checked again as it is read.  The layer of
       * a stored blob can still be missing: an import killed between the
       * two commits (layer.c). */
      cleanup_free char *digest
          = str_has_prefix (path, "blobs/sha256/") ? xasprintf ("sha256:%s", path + 13) : NULL;
      if (fd < 0 && errno == ENOENT && digest && oci_digest_valid (digest))
        {
          cleanup_free char *stored = img_blob_path (s->store, digest);
          fd = open (stored, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
          if (fd < 0)
            errno = ENOENT;
        }
    }
  else
    {
      fd = inroot_open (s->dirfd, path, O_RDONLY, RESOLVE_NO_XDEV);
    }
  if (fd < 0)
    return err_sys (err, "%s: %s", s->label, path);
  struct stat sb;
  if (fstat (fd, &sb) < 0 || !S_ISREG (sb.st_mode))
    {
      close (fd);
      return err_set (err, EINVAL, "%s: %s is not a regular file", s->label, path);
    }
  return fd;
}

static int
src_read (const struct src *s, const char *path, char **out, size_t *len, hk_err *err)
{
  cleanup_close int fd = src_open (s, path, err);
  if (fd < 0)
    return -1;
  if (fd_read_all (fd, IMG_MAX_DOC, out, len, err) < 0)
    return err_prefix (err, "%s: %s", s->label, path);
  return 0;
}

static char *
blob_name (const char *digest)
{
  return xasprintf ("blobs/sha256/%s", digest + 7);
}

/* A document a descriptor references: read, checked, stored. */
static int
read_doc (struct img_store *st, const struct src *s, const struct oci_desc *d, char **out, size_t *len,
          hk_err *err)
{
  cleanup_free char *name = blob_name (d->digest);
  if (d->size > IMG_MAX_DOC)
    return err_set (err, EFBIG, "blob %.19s..: %llu bytes is too large for a manifest or config", d->digest,
                    (unsigned long long)d->size);
  /* An archive's blobs the store has were not extracted: the store's copy
   * (re-hashed as it is read) stands in. */
  if (s->flat && img_blob_present (st, d->digest, d->size))
    return img_blob_read (st, d->digest, out, len, err);
  if (src_read (s, name, out, len, err) < 0 || img_blob_put_mem (st, d, *out, *len, NULL, NULL, err) < 0)
    {
      free (*out);
      *out = NULL;
      return -1;
    }
  return 0;
}

/* ---- archives ---- */

/* An archive member's name, "./" stripped; NULL when it could not be one of
 * an image's files (what is left becomes a single component, '/' -> '%'). */
static const char *
member_name (const char *path)
{
  if (path == NULL)
    return NULL;
  while (path[0] == '.' && path[1] == '/')
    path += 2;
  if (strlen (path) > 255 || strstr (path, "..") || strchr (path, '%') || path[0] == '/')
    return NULL;
  return path;
}

static void
strv_push (char ***v, char *s)
{
  size_t n = *v ? strv_len (*v) : 0;
  *v = xrealloc (*v, (n + 2) * sizeof **v);
  (*v)[n] = s;
  (*v)[n + 1] = NULL;
}

static bool
is_layer_tar (const char *path)
{
  const char *slash = strrchr (path, '/');
  return strcmp (slash ? slash + 1 : path, "layer.tar") == 0;
}

/* Symlink NAME -> TARGET resolved as a path among the archive's members
 * (by name, never on any filesystem): NULL when TARGET is absolute or
 * climbs above the archive's top. */
static char *
link_resolve (const char *name, const char *target)
{
  if (target == NULL || target[0] == '/')
    return NULL;
  const char *slash = strrchr (name, '/');
  cleanup_free char *joined
      = slash ? xasprintf ("%.*s/%s", (int)(slash - name), name, target) : xstrdup (target);
  bool above;
  char *out = path_lexical (joined, &above);
  if (above)
    {
      free (out);
      return NULL;
    }
  return out;
}

/* The layer.tar symlinks of a docker-archive, made hard links in the
 * extraction dir once manifest.json is read: a legacy `docker save` links a
 * layer saved twice to its first copy, podman and skopeo link every
 * <id>/layer.tar to the top-level <digest>.tar that manifest.json names.
 * A link is followed only to a regular member that the manifest names as a
 * layer, resolved by name among the members: an archive whose link points
 * at a host file (/etc/shadow, ../../..) or at any other member cannot make
 * import read it.  The layer is then verified against its diff_id as any
 * other. */
static int
link_layers (const struct src *s, char **layers, hk_err *err)
{
  char **names = s->link_names, **targets = s->link_targets;
  size_t n = names ? strv_len (names) : 0;
  for (size_t i = 0; i < n; i++)
    {
      cleanup_free char *to = link_resolve (names[i], targets[i]);
      /* A link to a link: followed within the members, a few hops. */
      for (int hop = 0; to && hop < 8; hop++)
        {
          size_t j = 0;
          while (j < n && strcmp (names[j], to) != 0)
            j++;
          if (j == n)
            break;
          char *next = link_resolve (names[j], targets[j]);
          free (to);
          to = next;
        }
      cleanup_free char *flat_to = to ? flat_name (to) : NULL;
      struct stat sb;
      if (to == NULL || strcmp (to, names[i]) == 0 || !strv_contains (layers, to) || member_name (to) != to
          || fstatat (s->dirfd, flat_to, &sb, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG (sb.st_mode))
        return err_set (err, EINVAL,
                        "%s: %s is a symlink to \"%.200s\", which is not a layer that "
                        "manifest.json names (the only links an archive may have)",
                        s->label, names[i], targets[i]);
      cleanup_free char *flat = flat_name (names[i]);
      if (linkat (s->dirfd, flat_to, s->dirfd, flat, 0) < 0)
        return err_sys (err, "%s: link %s to %s", s->label, names[i], to);
    }
  return 0;
}

/* Extract an archive's regular files flat into a temp dir.  Their names are
 * only ever used as single components under that dir. */
static int
extract_archive (struct img_store *st, const char *file, struct src *s, hk_err *err)
{
  cleanup_free char *tmproot = xasprintf ("%s/tmp", st->dir);
  if (mkdir_p (tmproot, 0700, err) < 0)
    return -1;
  s->tmpdir = xasprintf ("%s/import-XXXXXX", tmproot);
  if (mkdtemp (s->tmpdir) == NULL)
    return err_sys (err, "create %s", s->tmpdir);
  s->dirfd = open (s->tmpdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  s->flat = true;
  s->store = st;
  if (s->dirfd < 0)
    return err_sys (err, "open %s", s->tmpdir);
  struct archive *a = archive_read_new ();
  archive_read_support_format_tar (a);
  archive_read_support_filter_gzip (a);
  archive_read_support_filter_zstd (a);
  archive_read_support_filter_xz (a);
  archive_read_support_filter_none (a);
  struct archive_entry *e;
  int r = 0, ar;
  if (archive_read_open_filename (a, file, 1 << 17) != ARCHIVE_OK)
    r = err_set (err, EINVAL, "%s: %s", file, archive_error_string (a));
  while (r == 0 && ((ar = archive_read_next_header (a, &e)) == ARCHIVE_OK || ar == ARCHIVE_WARN))
    {
      const char *raw = archive_entry_pathname (e);
      unsigned type = archive_entry_filetype (e);
      bool layer_link = type == AE_IFLNK && raw && is_layer_tar (raw);
      if ((type != AE_IFREG && !layer_link) || archive_entry_hardlink (e) || raw == NULL)
        continue;
      const char *path = member_name (raw);
      if (path == NULL)
        {
          r = err_set (err, EINVAL, "%s: entry \"%.100s\" is not a plausible image file name", file, raw);
          break;
        }
      if (layer_link)
        {
          /* Linked once every member is out: a link may precede its target. */
          strv_push (&s->link_names, xstrdup (path));
          strv_push (&s->link_targets, xstrdup (archive_entry_symlink (e) ? archive_entry_symlink (e) : ""));
          continue;
        }
      /* A blob the store has (its name is its digest) is not copied out again:
       * a second import of the same archive only reads past it. */
      if (str_has_prefix (path, "blobs/sha256/") && strlen (path) == 13 + 64)
        {
          cleanup_free char *digest = xasprintf ("sha256:%s", path + 13);
          if (oci_digest_valid (digest) && img_blob_present (st, digest, archive_entry_size (e)))
            continue;
        }
      cleanup_free char *flat = flat_name (path);
      cleanup_close int fd
          = openat (s->dirfd, flat, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
      if (fd < 0)
        {
          r = err_sys (err, "%s: extract %s", file, path);
          break;
        }
      /* libarchive says only "Write error": a full disk is named. */
      if (archive_read_data_into_fd (a, fd) != ARCHIVE_OK)
        r = archive_errno (a) > 0
                ? err_code (err, archive_errno (a), "%s: extract %s", file, path)
                : err_set (err, EIO, "%s: extract %s: %s", file, path, archive_error_string (a));
    }
  if (r == 0 && ar != ARCHIVE_EOF)
    r = err_set (err, EINVAL, "%s: %s", file, archive_error_string (a));
  archive_read_free (a);
  if (r == 0)
    test_stall_forever ("import-extracted", st->dir);
  return r;
}

static void
src_free (struct src *s)
{
  if (s->dirfd >= 0)
    close (s->dirfd);
  if (s->tmpdir)
    {
      hk_err ignored;
      rm_rf (s->tmpdir, &ignored);
    }
  free (s->tmpdir);
  free (s->label);
  strv_free (s->link_names);
  strv_free (s->link_targets);
}

/* ---- OCI ---- */

static bool
is_layer_type (const char *mt)
{
  static const char *const ok[] = {
    "application/vnd.oci.image.layer.v1.tar",
    "application/vnd.oci.image.layer.v1.tar+gzip",
    "application/vnd.oci.image.layer.v1.tar+zstd",
    "application/vnd.oci.image.layer.nondistributable.v1.tar",
    "application/vnd.oci.image.layer.nondistributable.v1.tar+gzip",
    "application/vnd.oci.image.layer.nondistributable.v1.tar+zstd",
    "application/vnd.docker.image.rootfs.diff.tar.gzip",
    "application/vnd.docker.image.rootfs.diff.tar",
    NULL,
  };
  for (size_t i = 0; mt && ok[i]; i++)
    if (strcmp (mt, ok[i]) == 0)
      return true;
  return false;
}

static bool
is_type (const char *mt, const char *a, const char *b)
{
  return mt && (strcmp (mt, a) == 0 || (b && strcmp (mt, b) == 0));
}

static bool
tag_matches (const char *ref, const char *tag)
{
  if (ref == NULL)
    return false;
  if (strcmp (ref, tag) == 0)
    return true;
  size_t r = strlen (ref), t = strlen (tag);
  return r > t && ref[r - t - 1] == ':' && strcmp (ref + r - t, tag) == 0;
}

/* The manifest to import from an index: the tag's, else the only one, else
 * the one for this host's platform. */
static int
pick_manifest (const struct oci_index *x, const char *tag, const struct oci_desc **out, hk_err *err)
{
  const struct oci_desc *found = NULL;
  for (size_t i = 0; i < x->n_manifests; i++)
    {
      const struct oci_desc *d = &x->manifests[i];
      if (tag && !tag_matches (d->ref_name, tag))
        continue;
      if (d->os && strcmp (d->os, "linux") != 0)
        continue;
      if (d->arch && strcmp (d->arch, HOST_ARCH) != 0)
        continue;
      found = d;
      break;
    }
  if (found == NULL)
    return tag ? err_set (err, ENOENT, "index.json: no manifest tagged \"%s\" for linux/%s", tag, HOST_ARCH)
               : err_set (err, ENOENT, "index.json: no manifest for linux/%s", HOST_ARCH);
  *out = found;
  return 0;
}

struct resolved
{
  struct oci_manifest m;
  char manifest_digest[IMG_DIGEST_LEN];
  char *ref_name;
};

/* index -> (nested index ->) manifest, each checked and stored. */
static int
resolve_manifest (struct img_store *st, const struct src *s, const char *tag, struct resolved *out,
                  hk_err *err)
{
  cleanup_free char *text = NULL;
  size_t len;
  struct oci_index x = { 0 };
  if (src_read (s, "index.json", &text, &len, err) < 0)
    return -1;
  if (oci_index_parse (text, len, &x, err) < 0)
    return err_prefix (err, "%s: index.json", s->label);
  const struct oci_desc *d = NULL;
  int r = -1;
  for (int depth = 0;; depth++)
    {
      if (pick_manifest (&x, depth ? NULL : tag, &d, err) < 0)
        goto out;
      if (depth == 0 && d->ref_name)
        out->ref_name = xstrdup (d->ref_name);
      free (text);
      text = NULL;
      if (read_doc (st, s, d, &text, &len, err) < 0)
        goto out;
      cleanup_free char *mt = NULL;
      if (oci_media_type_peek (text, len, &mt, err) < 0)
        goto out;
      /* A document's own mediaType, when present, must be what referenced it. */
      if (mt && d->media_type && strcmp (mt, d->media_type) != 0)
        {
          err_set (err, EINVAL, "blob %.19s..: mediaType \"%s\", its descriptor says \"%s\"", d->digest, mt,
                   d->media_type);
          goto out;
        }
      const char *kind = mt ? mt : d->media_type;
      if (is_type (kind, OCI_MT_INDEX, DOCKER_MT_LIST) && depth < 2)
        {
          struct oci_index next;
          if (oci_index_parse (text, len, &next, err) < 0)
            goto out;
          oci_index_free (&x);
          x = next;
          continue;
        }
      if (kind && !is_type (kind, OCI_MT_MANIFEST, DOCKER_MT_MANIFEST))
        {
          err_set (err, EINVAL, "blob %.19s..: mediaType \"%s\" is not an image manifest", d->digest, kind);
          goto out;
        }
      memcpy (out->manifest_digest, d->digest, IMG_DIGEST_LEN);
      if (oci_manifest_parse (text, len, &out->m, err) < 0)
        {
          err_prefix (err, "manifest %.19s..", d->digest);
          goto out;
        }
      r = 0;
      break;
    }
out:
  oci_index_free (&x);
  return r;
}

static int
check_config (const struct oci_image_config *c, size_t n_layers, hk_err *err)
{
  if (c->os && strcmp (c->os, "linux") != 0)
    return err_set (err, EINVAL, "config: the image is for os \"%s\", not linux", c->os);
  if (c->arch && strcmp (c->arch, HOST_ARCH) != 0)
    return err_set (err, EINVAL, "config: the image is for architecture \"%s\", not %s", c->arch, HOST_ARCH);
  if (c->n_diff_ids != n_layers)
    return err_set (err, EINVAL, "config: rootfs.diff_ids lists %zu layers, the manifest %zu", c->n_diff_ids,
                    n_layers);
  return 0;
}

struct oci_layers
{
  struct img_store *st;
  const struct src *s;
  struct oci_manifest *m;
  const struct oci_image_config *c;
  const struct img_limits *lim;
  const struct img_progress *prog;
};

static int
ingest_one (void *arg, size_t i, hk_err *err)
{
  const struct oci_layers *x = arg;
  struct oci_desc *d = &x->m->layers[i];
  cleanup_free char *name = blob_name (d->digest);
  cleanup_free char *layer = img_layer_path (x->st, x->c->diff_ids[i]);
  struct img_progress_at at
      = { .p = x->prog, .i = i, .n = x->m->n_layers, .label = d->digest, .total = d->size };
  if (img_blob_present (x->st, d->digest, d->size) && access (layer, F_OK) == 0)
    {
      img_progress_present (&at);
      return 0;
    }
  cleanup_close int fd = src_open (x->s, name, err);
  if (fd < 0 || img_layer_ingest_at (x->st, fd, d, x->c->diff_ids[i], x->lim, &at, err) < 0)
    return err_prefix (err, "layer %zu of %zu", i + 1, x->m->n_layers);
  return 0;
}

/* Whether layer i repeats an earlier one (its diff_id): it is done after
 * the others, when it finds its layer unpacked, rather than by two threads
 * unpacking the same thing at once. */
static bool *
repeats (const struct oci_image_config *c, size_t n)
{
  bool *v = xcalloc (n + 1, sizeof *v);
  for (size_t i = 0; i < n; i++)
    for (size_t j = 0; j < i && !v[i]; j++)
      v[i] = strcmp (c->diff_ids[i], c->diff_ids[j]) == 0;
  return v;
}

/* The layers, several at a time: each is one pass of its own over its blob
 * (layer.c), into a directory of its own. */
static int
ingest_layers (struct img_store *st, const struct src *s, struct oci_manifest *m,
               const struct oci_image_config *c, const struct img_limits *lim,
               const struct img_progress *prog, hk_err *err)
{
  for (size_t i = 0; i < m->n_layers; i++)
    if (!is_layer_type (m->layers[i].media_type))
      return err_set (err, EINVAL, "layer %.19s..: mediaType \"%s\" is not a layer type", m->layers[i].digest,
                      m->layers[i].media_type ? m->layers[i].media_type : "(none)");
  struct oci_layers x = { .st = st, .s = s, .m = m, .c = c, .lim = lim, .prog = prog };
  cleanup_free bool *defer = repeats (c, m->n_layers);
  return img_each_parallel (m->n_layers, ingest_one, &x, defer, err);
}

static void
record_of (struct oci_image_rec *rec, const char *name, const char *manifest_digest,
           const struct oci_manifest *m, const struct oci_image_config *c)
{
  *rec = (struct oci_image_rec){ .name = xstrdup (name),
                                 .manifest_digest = xstrdup (manifest_digest),
                                 .config_digest = xstrdup (m->config.digest),
                                 .created = img_now_rfc3339 (),
                                 .n_layers = m->n_layers };
  rec->layers = xcalloc (m->n_layers + 1, sizeof *rec->layers);
  for (size_t i = 0; i < m->n_layers; i++)
    rec->layers[i]
        = (struct oci_image_layer_rec){ .digest = xstrdup (m->layers[i].digest),
                                        .diff_id = xstrdup (c->diff_ids[i]),
                                        .media_type
                                        = m->layers[i].media_type ? xstrdup (m->layers[i].media_type) : NULL,
                                        .size = m->layers[i].size };
}

/* The name to record: --name, else the ref name (a full reference, or a
 * tag of the source's base name), else the docker-archive's RepoTags. */
static int
choose_name (const char *given, const char *ref, const char *base, char **out, hk_err *err)
{
  if (given)
    return img_name_normalize (given, out, err);
  if (ref && (strchr (ref, ':') || strchr (ref, '/')))
    return img_name_normalize (ref, out, err);
  if (ref && base)
    {
      cleanup_free char *n = xasprintf ("%s:%s", base, ref);
      return img_name_normalize (n, out, err);
    }
  return err_set (err, EINVAL, "the source names no image: give --name NAME:TAG");
}

static int
import_oci (struct img_store *st, const struct src *s, const struct img_import_opts *o, const char *tag,
            const char *base, char **name_out, hk_err *err)
{
  struct resolved res = { 0 };
  struct oci_image_config c = { 0 };
  struct oci_image_rec rec = { 0 };
  cleanup_free char *text = NULL;
  size_t len;
  int r = -1;
  /* Trust is decided before anything but the manifest is read. */
  if (resolve_manifest (st, s, tag, &res, err) < 0
      || choose_name (o->name, res.ref_name, base, name_out, err) < 0
      || img_trust_check (st, o, *name_out, res.manifest_digest, true, err) < 0)
    goto out;
  const struct oci_desc *cd = &res.m.config;
  if (res.m.media_type && !is_type (res.m.media_type, OCI_MT_MANIFEST, DOCKER_MT_MANIFEST))
    {
      err_set (err, EINVAL, "manifest %.19s..: mediaType \"%s\"", res.manifest_digest, res.m.media_type);
      goto out;
    }
  if (!is_type (cd->media_type, OCI_MT_CONFIG, DOCKER_MT_CONFIG))
    {
      err_set (err, EINVAL, "config %.19s..: mediaType \"%s\" is not an image config", cd->digest,
               cd->media_type ? cd->media_type : "(none)");
      goto out;
    }
  if (read_doc (st, s, cd, &text, &len, err) < 0)
    goto out;
  if (oci_image_config_parse (text, len, &c, err) < 0)
    {
      err_prefix (err, "config %.19s..", cd->digest);
      goto out;
    }
  if (check_config (&c, res.m.n_layers, err) < 0
      || ingest_layers (st, s, &res.m, &c, &o->limits, o->progress, err) < 0)
    goto out;
  record_of (&rec, *name_out, res.manifest_digest, &res.m, &c);
  r = img_names_put (st, &rec, err);
out:
  oci_image_rec_free (&rec);
  oci_image_config_free (&c);
  oci_manifest_free (&res.m);
  free (res.ref_name);
  return r;
}

/* ---- docker-archive ---- */

static const char *
layer_type_of (int fd)
{
  unsigned char m[6] = { 0 };
  if (pread (fd, m, sizeof m, 0) < 4)
    return "application/vnd.oci.image.layer.v1.tar";
  if (m[0] == 0x1f && m[1] == 0x8b)
    return "application/vnd.oci.image.layer.v1.tar+gzip";
  if (m[0] == 0x28 && m[1] == 0xb5 && m[2] == 0x2f && m[3] == 0xfd)
    return "application/vnd.oci.image.layer.v1.tar+zstd";
  return "application/vnd.oci.image.layer.v1.tar";
}

struct docker_layers
{
  struct img_store *st;
  const struct src *s;
  const struct oci_docker_manifest *dm;
  const struct oci_image_config *c;
  struct oci_manifest *m;
  const struct img_limits *lim;
  const struct img_progress *prog;
};

static int
docker_one (void *arg, size_t i, hk_err *err)
{
  const struct docker_layers *x = arg;
  struct oci_desc *d = &x->m->layers[i];
  cleanup_close int fd = src_open (x->s, x->dm->layers[i], err);
  struct stat sb;
  if (fd < 0 || fstat (fd, &sb) < 0)
    return fd < 0 ? -1 : err_sys (err, "stat %s", x->dm->layers[i]);
  d->media_type = xstrdup (layer_type_of (fd));
  struct img_progress_at at
      = { .p = x->prog, .i = i, .n = x->m->n_layers, .label = x->c->diff_ids[i], .total = sb.st_size };
  /* An uncompressed layer's digest is its diff_id: already stored, it
   * need not be read again. */
  cleanup_free char *layer = img_layer_path (x->st, x->c->diff_ids[i]);
  if (str_has_suffix (d->media_type, ".tar") && img_blob_present (x->st, x->c->diff_ids[i], sb.st_size)
      && access (layer, F_OK) == 0)
    {
      d->digest = xstrdup (x->c->diff_ids[i]);
      d->size = sb.st_size;
      img_progress_done (&at);
      return 0;
    }
  if (img_layer_ingest_at (x->st, fd, d, x->c->diff_ids[i], x->lim, &at, err) < 0)
    return err_prefix (err, "layer %zu of %zu (%s)", i + 1, x->m->n_layers, x->dm->layers[i]);
  return 0;
}

/* docker-archive layers are named by diff_id and usually uncompressed,
 * whatever a synthesized manifest would say: their digests and media types
 * come from their bytes, and an OCI manifest is written for them. */
static int
docker_layers (struct img_store *st, const struct src *s, const struct oci_docker_manifest *dm,
               const struct oci_image_config *c, struct oci_manifest *m, const struct img_limits *lim,
               const struct img_progress *prog, hk_err *err)
{
  m->n_layers = strv_len (dm->layers);
  m->layers = xcalloc (m->n_layers + 1, sizeof *m->layers);
  struct docker_layers x = { .st = st, .s = s, .dm = dm, .c = c, .m = m, .lim = lim, .prog = prog };
  cleanup_free bool *defer = repeats (c, m->n_layers);
  return img_each_parallel (m->n_layers, docker_one, &x, defer, err);
}

static int
import_docker (struct img_store *st, const struct src *s, const struct img_import_opts *o, char **name_out,
               hk_err *err)
{
  struct oci_docker_manifest dm = { 0 };
  struct oci_image_config c = { 0 };
  struct oci_manifest m = { .media_type = xstrdup (OCI_MT_MANIFEST) };
  struct oci_image_rec rec = { 0 };
  cleanup_free char *text = NULL, *cfg = NULL, *mtext = NULL;
  size_t len, cfg_len, mlen;
  char cfg_digest[IMG_DIGEST_LEN], man_digest[IMG_DIGEST_LEN];
  int r = -1;
  if (src_read (s, "manifest.json", &text, &len, err) < 0
      || oci_docker_manifest_parse (text, len, &dm, err) < 0 || link_layers (s, dm.layers, err) < 0
      || src_read (s, dm.config, &cfg, &cfg_len, err) < 0
      || img_blob_put_mem (st, NULL, cfg, cfg_len, cfg_digest, NULL, err) < 0)
    goto out;
  if (oci_image_config_parse (cfg, cfg_len, &c, err) < 0)
    {
      err_prefix (err, "config %s", dm.config);
      goto out;
    }
  m.config = (struct oci_desc){ .media_type = xstrdup (OCI_MT_CONFIG),
                                .digest = xstrdup (cfg_digest),
                                .size = cfg_len };
  if (check_config (&c, strv_len (dm.layers), err) < 0
      || choose_name (o->name, dm.repo_tags ? dm.repo_tags[0] : NULL, NULL, name_out, err) < 0
      || img_trust_check (st, o, *name_out, "", false, err) < 0
      || docker_layers (st, s, &dm, &c, &m, &o->limits, o->progress, err) < 0
      || oci_manifest_write (&m, &mtext, &mlen, err) < 0
      || img_blob_put_mem (st, NULL, mtext, mlen, man_digest, NULL, err) < 0)
    goto out;
  record_of (&rec, *name_out, man_digest, &m, &c);
  r = img_names_put (st, &rec, err);
out:
  oci_image_rec_free (&rec);
  oci_manifest_free (&m);
  oci_image_config_free (&c);
  oci_docker_manifest_free (&dm);
  return r;
}

/* ---- entry ---- */

int
img_import (struct img_store *st, const struct img_import_opts *o, char **name_out, hk_err *err)
{
  struct src s = { .dirfd = -1 };
  if (img_store_sweep (st, err) < 0)
    return -1;
  cleanup_free char *path = xstrdup (o->source);
  char *tag = NULL;
  struct stat sb;
  /* DIR:TAG — unless the whole string names something. */
  if (stat (path, &sb) < 0 && (tag = strrchr (path, ':')) != NULL)
    *tag++ = '\0';
  if (stat (path, &sb) < 0)
    return err_sys (err, "%s", path);
  cleanup_free char *copy = xstrdup (path);
  cleanup_free char *base = xstrdup (basename (copy));
  s.label = xstrdup (path);
  int r = -1;
  if (S_ISDIR (sb.st_mode))
    {
      s.dirfd = open (path, O_PATH | O_DIRECTORY | O_CLOEXEC);
      if (s.dirfd < 0)
        err_sys (err, "open %s", path);
      else
        r = import_oci (st, &s, o, tag, base, name_out, err);
    }
  else if (S_ISREG (sb.st_mode))
    {
      if (extract_archive (st, path, &s, err) == 0)
        {
          if (faccessat (s.dirfd, "index.json", F_OK, 0) == 0)
            r = import_oci (st, &s, o, tag, NULL, name_out, err);
          else if (faccessat (s.dirfd, "manifest.json", F_OK, 0) == 0)
            r = import_docker (st, &s, o, name_out, err);
          else
            err_set (err, EINVAL,
                     "%s: neither an oci-archive (index.json) nor a docker-archive "
                     "(manifest.json)",
                     path);
        }
    }
  else
    err_set (err, EINVAL, "%s: not a directory (OCI layout) or a file (archive)", path);
  src_free (&s);
  return r;
}
