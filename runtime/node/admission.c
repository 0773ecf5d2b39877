/* admission: the node's memory pool — the sum of the live sandboxes'
 * reservations, computed under one lock from their records, and the check
 * that keeps it within pool × overcommit. */
#include "runtime/node/admission.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "lib/util.h"
#include "runtime/state/sbxstate.h"

static const char *config_path;

void
admission_set_config (const char *path)
{
  config_path = path;
}

int
admission_load_node (struct oci_node *node, bool *present, hk_err *err)
{
  const char *path = config_path;
  bool explicit = true;
  if (path == NULL || *path == '\0')
    path = getenv ("HAKO_NODE_CONFIG");
  if (path == NULL || *path == '\0')
    {
      path = ADMISSION_DEFAULT_CONFIG;
      explicit = false;
    }
  cleanup_free char *text = NULL;
  size_t len;
  *present = false;
  if (file_read_all (path, 1 << 16, &text, &len, err) < 0)
    {
      if (err->errnum == ENOENT && !explicit)
        {
          err_clear (err);
          return 0;
        }
      return err_prefix (err, "node config");
    }
  if (oci_node_parse (text, len, path, node, err) < 0)
    return err_kind_default (err, ERR_INVALID_CONFIG), err_prefix (err, "node config");
  *present = true;
  return 0;
}

int
admission_profile_limits (struct oci_profile_limits *out, hk_err *err)
{
  struct oci_node node;
  bool present;
  if (admission_load_node (&node, &present, err) < 0)
    return -1;
  long pages = sysconf (_SC_PHYS_PAGES), size = sysconf (_SC_PAGESIZE);
  uint64_t ram = pages > 0 && size > 0 ? (uint64_t)pages * (uint64_t)size : 0;
  oci_profile_limits (present ? &node : NULL, ram, out);
  return 0;
}

uint64_t
admission_request (const struct oci_spec *spec, bool *has_limit)
{
  const struct oci_resources *r = &spec->linux.resources;
  *has_limit = r->has_memory_limit && r->memory_limit > 0;
  return *has_limit ? (uint64_t)r->memory_limit : 0;
}

static void
human (uint64_t b, char *buf, size_t size)
{
  static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
  double v = (double)b;
  int u = 0;
  while (v >= 1024 && u < 4)
    {
      v /= 1024;
      u++;
    }
  snprintf (buf, size, v == (double)(uint64_t)v ? "%.0f %s" : "%.1f %s", v, unit[u]);
}

int
admission_check (const struct oci_node *node, uint64_t reserved, uint64_t request, bool has_limit,
                 hk_err *err)
{
  if (node->require_memory_limit && !has_limit)
    return err_setk (err, ERR_ADMISSION, EINVAL,
                     "admission: this node requires a memory limit (require_memory_limit in the node "
                     "config) and linux.resources.memory.limit is not set");
  if (!node->has_memory_pool)
    return 0;
  long double cap = (long double)node->memory_pool * node->overcommit;
  if ((long double)reserved + (long double)request <= cap)
    return 0;
  char req[32], res[32], pool[32], total[32];
  human (request, req, sizeof req);
  human (reserved, res, sizeof res);
  human (node->memory_pool, pool, sizeof pool);
  human ((uint64_t)cap, total, sizeof total);
  err_setk (err, ERR_ADMISSION, EBUSY,
            "admission: not enough memory in the node's pool: requested %" PRIu64 " (%s), "
            "reserved by live sandboxes %" PRIu64 " (%s), pool %" PRIu64 " (%s) x overcommit %g "
            "= %" PRIu64 " (%s)",
            request, req, reserved, res, node->memory_pool, pool, node->overcommit, (uint64_t)cap, total);
  /* For a scheduler that retries elsewhere: the numbers, not the text. */
  err_num (err, "requested", request);
  err_num (err, "reserved", reserved);
  return err_num (err, "capacity", (uint64_t)cap);
}

/* A sandbox without a readable state is being created (or was, by a hako
 * that died): its creator holds its lock for as long as it works. */
static bool
lock_held (const struct store *st, const char *id)
{
  cleanup_free char *path = xasprintf ("%s/%s/lock", st->root, id);
  cleanup_close int fd = open (path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0)
    return false;
  return flock (fd, LOCK_SH | LOCK_NB) < 0 && errno == EWOULDBLOCK;
}

static bool
is_live (const struct store *st, const char *id)
{
  struct oci_state *s = NULL;
  hk_err ignored;
  if (sbx_state (st, id, &s, &ignored) < 0)
    return lock_held (st, id);
  bool live = s->status != OCI_STATUS_STOPPED;
  oci_state_free (s);
  return live;
}

static bool
read_record (const struct store *st, const char *id, uint64_t *bytes)
{
  cleanup_free char *path = xasprintf ("%s/%s/reservation", st->root, id);
  cleanup_free char *text = NULL;
  hk_err ignored;
  if (file_read_all (path, 64, &text, NULL, &ignored) < 0)
    return false;
  char *end;
  errno = 0;
  unsigned long long v = strtoull (text, &end, 10);
  if (errno || end == text || (*end != '\0' && *end != '\n'))
    return false;
  *bytes = v;
  return true;
}

int
admission_reserved (const struct store *st, const char *id, uint64_t *sum, hk_err *err)
{
  char **ids = NULL;
  *sum = 0;
  if (store_list (st, &ids, err) < 0)
    return -1;
  for (size_t i = 0; ids[i]; i++)
    {
      uint64_t b;
      if ((id && strcmp (ids[i], id) == 0) || !read_record (st, ids[i], &b) || b == 0)
        continue;
      if (is_live (st, ids[i]))
        *sum += b;
    }
  strv_free (ids);
  return 0;
}

/* The pool's lock is a flock of the state root directory itself: nothing
 * else locks it, and unlike a lock file it leaves nothing to clean up. */
static int
lock_pool (const struct store *st, int *fd, hk_err *err)
{
  *fd = open (st->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (*fd < 0)
    return err_sys (err, "open %s", st->root);
  while (flock (*fd, LOCK_EX) < 0)
    if (errno != EINTR)
      return err_sys (err, "lock %s", st->root);
  return 0;
}

/* The devices each live sandbox holds: <root>/<id>/devices, one CDI name a
 * line. */
char **
admission_read_devices (const struct store *st, const char *id)
{
  cleanup_free char *path = xasprintf ("%s/%s/%s", st->root, id, ADMISSION_DEVICES_FILE);
  cleanup_free char *text = NULL;
  hk_err ignored;
  char **v = NULL;
  size_t n = 0;
  if (file_read_all (path, 1 << 16, &text, NULL, &ignored) < 0)
    return NULL;
  char *save = NULL;
  for (char *t = strtok_r (text, "\n", &save); t; t = strtok_r (NULL, "\n", &save))
    {
      v = xrealloc (v, (n + 2) * sizeof *v);
      v[n++] = xstrdup (t);
      v[n] = NULL;
    }
  return v;
}

/* Each of names the node gives slots must have one free among the live
 * sandboxes but id: else refused, naming the device and its holders. */
int
admission_check_devices (const struct store *st, const char *id, const struct oci_node *node,
                         char *const *names, hk_err *err)
{
  char **ids = NULL;
  int rc = 0;
  if (names == NULL || node->n_devices == 0)
    return 0;
  if (store_list (st, &ids, err) < 0)
    return -1;
  /* held[i]: what ids[i] holds, NULL for itself and sandboxes not live. */
  size_t n_ids = strv_len (ids);
  char ***held = xcalloc (n_ids + 1, sizeof *held);
  for (size_t i = 0; i < n_ids; i++)
    if (!(id && strcmp (ids[i], id) == 0) && is_live (st, ids[i]))
      held[i] = admission_read_devices (st, ids[i]);
  for (size_t k = 0; rc == 0 && names[k]; k++)
    {
      const struct oci_node_device *d = NULL;
      for (size_t j = 0; j < node->n_devices; j++)
        if (strcmp (node->devices[j].name, names[k]) == 0)
          d = &node->devices[j];
      if (d == NULL)
        continue;
      uint32_t used = 0;
      char holders[512] = "";
      for (size_t i = 0; i < n_ids; i++)
        if (strv_contains (held[i], names[k]))
          {
            used++;
            size_t l = strlen (holders);
            snprintf (holders + l, sizeof holders - l, "%s%s", l ? ", " : "", ids[i]);
          }
      if (used >= d->slots)
        rc = err_setk (err, ERR_ADMISSION, EBUSY,
                       "admission: device %s has no free slot (%s, %" PRIu32 " of %" PRIu32 " held by %s)",
                       names[k], d->exclusive ? "exclusive" : "shared", used, d->slots, holders);
    }
  for (size_t i = 0; i < n_ids; i++)
    strv_free (held[i]);
  free (held);
  strv_free (ids);
  return rc;
}

static int
write_devices (const struct store *st, const char *id, char *const *names, hk_err *err)
{
  cleanup_free char *record = xasprintf ("%s/%s/%s", st->root, id, ADMISSION_DEVICES_FILE);
  if (names == NULL)
    return unlink (record) < 0 && errno != ENOENT ? err_sys (err, "unlink %s", record) : 0;
  size_t len = 0;
  for (size_t i = 0; names[i]; i++)
    len += strlen (names[i]) + 1;
  cleanup_free char *buf = xmalloc (len + 1);
  buf[0] = '\0';
  for (size_t i = 0; names[i]; i++)
    strcat (strcat (buf, names[i]), "\n");
  return file_write_atomic (record, buf, len, 0600, err);
}

int
admission_reserve (const struct store *st, const char *id, const struct oci_spec *spec, hk_err *err)
{
  struct oci_node node;
  bool present, has_limit;
  char *const *devices = spec->sandbox.cdi_devices;
  if (admission_load_node (&node, &present, err) < 0)
    return -1;
  if (!present)
    return write_devices (st, id, devices, err);
  uint64_t request = admission_request (spec, &has_limit), reserved = 0;
  bool slots = node.n_devices > 0 && devices;
  if (!node.has_memory_pool && !slots)
    return admission_check (&node, 0, request, has_limit, err) < 0 ? -1
                                                                   : write_devices (st, id, devices, err);
  cleanup_close int lock_fd = -1;
  if (lock_pool (st, &lock_fd, err) < 0
      || (node.has_memory_pool && admission_reserved (st, id, &reserved, err) < 0)
      || admission_check (&node, reserved, request, has_limit, err) < 0
      || admission_check_devices (st, id, &node, devices, err) < 0)
    return -1;
  /* Written before the lock is released: the next create counts them. */
  if (write_devices (st, id, devices, err) < 0)
    return -1;
  if (!node.has_memory_pool)
    return 0;
  cleanup_free char *record = xasprintf ("%s/%s/reservation", st->root, id);
  char buf[32];
  int n = snprintf (buf, sizeof buf, "%" PRIu64 "\n", request);
  return file_write_atomic (record, buf, n, 0600, err);
}
