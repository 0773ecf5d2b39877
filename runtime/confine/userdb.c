/* userdb: users and groups by name or number from a sandbox's own /etc/passwd
 * and /etc/group, read inside its root (never through a symlink to the host's). */
#include "runtime/confine/userdb.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/inroot.h"
#include "lib/syscalls.h"
#include "lib/util.h"

/* The files are the sandbox's, so its code may have written them: bounded. */
#define USERDB_MAX_FILE (4u << 20)
#define USERDB_MAX_FIELDS 8

/* A decimal id: digits only, below (uint32_t) -1, which means "no change" to setresuid. */
static bool
parse_id (const char *s, uint32_t *out)
{
  uint64_t v = 0;
  if (*s == '\0')
    return false;
  for (; *s; s++)
    {
      if (*s < '0' || *s > '9')
        return false;
      v = v * 10 + (uint64_t)(*s - '0');
      if (v >= UINT32_MAX)
        return false;
    }
  *out = (uint32_t)v;
  return true;
}

/* Split line (modified in place) at ':' into at most USERDB_MAX_FIELDS fields. */
static size_t
split_fields (char *line, char **f)
{
  size_t n = 0;
  f[n++] = line;
  for (char *p = line; *p && n < USERDB_MAX_FIELDS; p++)
    if (*p == ':')
      {
        *p = '\0';
        f[n++] = p + 1;
      }
  return n;
}

/* Call fn on each line of text (a private copy, so fn may cut it up) until it
 * returns nonzero; returns that value. */
static int
each_line (const char *text, int (*fn) (char **f, size_t n, void *ctx), void *ctx)
{
  const char *p = text;
  while (p && *p)
    {
      const char *end = strchr (p, '\n');
      size_t len = end ? (size_t)(end - p) : strlen (p);
      /* "+name" and "-name" are NIS compat lines; "#" is a comment some
       * libcs accept.  None names a local account. */
      if (len > 0 && *p != '+' && *p != '-' && *p != '#')
        {
          cleanup_free char *line = xstrndup (p, len);
          char *f[USERDB_MAX_FIELDS];
          size_t n = split_fields (line, f);
          int r = fn (f, n, ctx);
          if (r)
            return r;
        }
      p = end ? end + 1 : NULL;
    }
  return 0;
}

struct pw_query
{
  const char *name;
  uid_t uid;
  struct userdb_pw *out;
};

static int
pw_match (char **f, size_t n, void *ctx)
{
  struct pw_query *q = ctx;
  uint32_t uid, gid;
  /* name:password:uid:gid:gecos:home:shell */
  if (n < 4 || !parse_id (f[2], &uid) || !parse_id (f[3], &gid))
    return 0;
  if (q->name ? strcmp (f[0], q->name) != 0 : uid != q->uid)
    return 0;
  q->out->name = xstrdup (f[0]);
  q->out->uid = uid;
  q->out->gid = gid;
  q->out->home = n > 5 && f[5][0] ? xstrdup (f[5]) : NULL;
  return 1;
}

int
userdb_find_pw (const char *passwd, const char *name, uid_t uid, struct userdb_pw *out)
{
  struct pw_query q = { .name = name, .uid = uid, .out = out };
  *out = (struct userdb_pw){ 0 };
  return passwd ? each_line (passwd, pw_match, &q) : 0;
}

void
userdb_pw_free (struct userdb_pw *pw)
{
  free (pw->name);
  free (pw->home);
  *pw = (struct userdb_pw){ 0 };
}

struct group_query
{
  const char *name;
  gid_t gid;
  gid_t *out;
};

static int
group_match (char **f, size_t n, void *ctx)
{
  struct group_query *q = ctx;
  uint32_t gid;
  /* name:password:gid:members */
  if (n < 3 || !parse_id (f[2], &gid))
    return 0;
  if (q->name ? strcmp (f[0], q->name) != 0 : gid != q->gid)
    return 0;
  *q->out = gid;
  return 1;
}

int
userdb_find_group (const char *group, const char *name, gid_t gid, gid_t *out)
{
  struct group_query q = { .name = name, .gid = gid, .out = out };
  return group ? each_line (group, group_match, &q) : 0;
}

struct group_name_query
{
  gid_t gid;
  char *name;
};

static int
group_name_match (char **f, size_t n, void *ctx)
{
  struct group_name_query *q = ctx;
  uint32_t gid;
  if (n < 3 || !parse_id (f[2], &gid) || gid != q->gid)
    return 0;
  q->name = xstrdup (f[0]);
  return 1;
}

char *
userdb_group_name (const char *group, gid_t gid)
{
  struct group_name_query q = { .gid = gid };
  if (group)
    each_line (group, group_name_match, &q);
  return q.name;
}

struct member_query
{
  const char *user;
  gid_t *v;
  size_t n;
};

static int
member_match (char **f, size_t n, void *ctx)
{
  struct member_query *q = ctx;
  uint32_t gid;
  if (n < 4 || !parse_id (f[2], &gid))
    return 0;
  char *save = NULL;
  for (char *m = strtok_r (f[3], ",", &save); m; m = strtok_r (NULL, ",", &save))
    if (strcmp (m, q->user) == 0)
      {
        for (size_t i = 0; i < q->n; i++)
          if (q->v[i] == gid)
            return 0;
        /* NGROUPS_MAX is 65536: more cannot be set anyway. */
        if (q->n >= 65536)
          return 1;
        q->v = xrealloc (q->v, (q->n + 1) * sizeof *q->v);
        q->v[q->n++] = gid;
        return 0;
      }
  return 0;
}

size_t
userdb_member_groups (const char *group, const char *user, gid_t **out)
{
  struct member_query q = { .user = user };
  if (group && user)
    each_line (group, member_match, &q);
  *out = q.v;
  return q.n;
}

/* Read ROOT/path with every component resolved inside root: a symlink, even
 * an absolute one, cannot leave it, so "/etc/passwd -> /host/etc/passwd" only
 * reaches what the sandbox itself sees.  A missing file is *out = NULL. */
int
userdb_read (int rootfd, const char *path, char **out, hk_err *err)
{
  *out = NULL;
  cleanup_close int fd = inroot_open (rootfd, path, O_RDONLY | O_NOCTTY | O_NONBLOCK, 0);
  if (fd < 0)
    {
      if (errno == ENOENT || errno == ENOTDIR)
        return 0;
      return err_sys (err, "open the sandbox's /%s", path);
    }
  struct stat sb;
  /* O_NONBLOCK above: a fifo planted there must not hang hako. */
  if (fstat (fd, &sb) < 0 || !S_ISREG (sb.st_mode))
    return err_set (err, EINVAL, "the sandbox's /%s is not a regular file", path);
  if (fd_read_all (fd, USERDB_MAX_FILE, out, NULL, err) < 0)
    return err_prefix (err, "the sandbox's /%s", path);
  return 0;
}

static int
resolve_user (const char *passwd, const char *user, gid_t default_gid, struct userdb_user *out,
              struct userdb_pw *pw, hk_err *err)
{
  uint32_t id;
  if (parse_id (user, &id))
    {
      out->uid = id;
      out->gid = default_gid;
      if (userdb_find_pw (passwd, NULL, id, pw))
        out->gid = pw->gid;
      return 0;
    }
  if (!userdb_find_pw (passwd, user, 0, pw))
    return err_set (err, ENOENT, "user \"%s\": no such user in the sandbox's /etc/passwd", user);
  out->uid = pw->uid;
  out->gid = pw->gid;
  return 0;
}

int
userdb_resolve (int rootfd, const char *spec, gid_t default_gid, struct userdb_user *out, hk_err *err)
{
  *out = (struct userdb_user){ 0 };
  cleanup_free char *copy = xstrdup (spec);
  char *group_part = strchr (copy, ':');
  if (group_part)
    *group_part++ = '\0';
  if (copy[0] == '\0' || (group_part && group_part[0] == '\0'))
    return err_set (err, EINVAL, "user \"%s\": expected USER[:GROUP], each a name or a number", spec);
  cleanup_free char *passwd = NULL, *group = NULL;
  if (userdb_read (rootfd, "etc/passwd", &passwd, err) < 0
      || userdb_read (rootfd, "etc/group", &group, err) < 0)
    return -1;
  struct userdb_pw pw = { 0 };
  if (resolve_user (passwd, copy, default_gid, out, &pw, err) < 0)
    return -1;
  if (group_part)
    {
      uint32_t id;
      if (parse_id (group_part, &id))
        out->gid = id;
      else if (!userdb_find_group (group, group_part, 0, &out->gid))
        {
          userdb_pw_free (&pw);
          return err_set (err, ENOENT, "group \"%s\": no such group in the sandbox's /etc/group", group_part);
        }
    }
  out->n_groups = userdb_member_groups (group, pw.name, &out->groups);
  out->home = steal_pointer (&pw.home);
  userdb_pw_free (&pw);
  return 0;
}

void
userdb_user_free (struct userdb_user *u)
{
  free (u->groups);
  free (u->home);
  *u = (struct userdb_user){ 0 };
}
