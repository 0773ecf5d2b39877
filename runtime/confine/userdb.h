/* userdb: users and groups by name or number from a sandbox's own /etc/passwd
 * and /etc/group, read inside its root (never through a symlink to the host's). */
#ifndef HAKO_RUNTIME_USERDB_H
#define HAKO_RUNTIME_USERDB_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "lib/err.h"

/* One /etc/passwd entry (the fields hako needs). */
struct userdb_pw
{
  char *name;
  uid_t uid;
  gid_t gid;
  char *home;
};

/* What "USER[:GROUP]" resolved to. */
struct userdb_user
{
  uid_t uid;
  gid_t gid;
  gid_t *groups; /* supplementary groups: the groups in /etc/group listing the user */
  size_t n_groups;
  char *home; /* from /etc/passwd; NULL when the user has no entry */
};

/* Parsers over the text of /etc/passwd and /etc/group, for userdb_resolve
 * and the unit tests.  A line that does not parse is skipped, as libc does.
 * Look up by name, or by number when name is NULL.  1 found, 0 not. */
int userdb_find_pw (const char *passwd, const char *name, uid_t uid, struct userdb_pw *out);
int userdb_find_group (const char *group, const char *name, gid_t gid, gid_t *out);
/* The name of group gid (caller frees), or NULL when it has none. */
char *userdb_group_name (const char *group, gid_t gid);
/* Every group whose member list names user (sorted as in the file). */
size_t userdb_member_groups (const char *group, const char *user, gid_t **out);
void userdb_pw_free (struct userdb_pw *pw);

/* Resolve spec, "USER[:GROUP]" where each part is a name or a number, in the
 * root directory rootfd (an O_PATH fd of the sandbox's /).  A name must exist
 * in the sandbox's files; a number need not (then gid is default_gid unless
 * GROUP says otherwise, and there are no supplementary groups). */
int userdb_resolve (int rootfd, const char *spec, gid_t default_gid, struct userdb_user *out, hk_err *err);
void userdb_user_free (struct userdb_user *u);

/* The text of path (such as "etc/passwd") inside the root rootfd, every
 * component resolved inside it; *out NULL when there is no such file. */
int userdb_read (int rootfd, const char *path, char **out, hk_err *err);

#endif
