/* image_sandbox: a sandbox's config and root from an image — `create --image`,
 * `run --image`, `spec --image` and a config's sandbox.image.  cmd resolves
 * the image into layer directories; the runtime only sees plain paths. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "cmd/config/internal.h"
#include "images/image.h"
#include "lib/util.h"
#include "runtime/confine/userdb.h"
#include "runtime/node/admission.h"

static const char *const default_path = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/* The layer whose etc/passwd the sandbox will see: the topmost that has one
 * (a whiteout, a 0:0 device, means none).  -1 when no layer has it. */
int
cmd_image_user_root (char *const *layers)
{
  for (size_t i = 0; layers[i]; i++)
    {
      int fd = open (layers[i], O_PATH | O_DIRECTORY | O_CLOEXEC);
      struct stat sb;
      if (fd < 0)
        continue;
      if (fstatat (fd, "etc/passwd", &sb, AT_SYMLINK_NOFOLLOW) == 0)
        {
          if (S_ISCHR (sb.st_mode))
            {
              close (fd);
              return -1;
            }
          return fd;
        }
      close (fd);
    }
  return -1;
}

/* User "NAME[:GROUP]" or numbers, resolved in the image's own files (read
 * inside the layer: a symlinked /etc/passwd cannot point at the host's). */
static int
resolve_user (const char *user, char *const *layers, uint32_t *uid, uint32_t *gid, hk_err *err)
{
  *uid = *gid = 0;
  if (user == NULL || user[0] == '\0')
    return 0;
  cleanup_close int fd = cmd_image_user_root (layers);
  if (fd < 0)
    fd = open (layers[0], O_PATH | O_DIRECTORY | O_CLOEXEC);
  struct userdb_user u;
  if (userdb_resolve (fd, user, 0, &u, err) < 0)
    return err_prefix (err, "the image's User");
  *uid = u.uid;
  *gid = u.gid;
  userdb_user_free (&u);
  return 0;
}

static char **
strv_concat (char *const *a, char *const *b)
{
  size_t na = strv_len (a), nb = strv_len (b);
  char **v = xcalloc (na + nb + 1, sizeof *v);
  for (size_t i = 0; i < na; i++)
    v[i] = xstrdup (a[i]);
  for (size_t i = 0; i < nb; i++)
    v[na + i] = xstrdup (b[i]);
  return v;
}

/* The default profile with the image's process: Entrypoint + Cmd (a command
 * given replaces Cmd), Env (PATH added when the image sets none), WorkingDir,
 * User. */
static int
generate (const char *name, const struct oci_image_config *c, char *const *layers, char *const *args,
          char **json, hk_err *err)
{
  char **argv = strv_concat (c->entrypoint, args ? args : c->cmd);
  bool has_path = false;
  for (size_t i = 0; c->env && c->env[i]; i++)
    has_path |= str_has_prefix (c->env[i], "PATH=");
  char *const path_only[] = { (char *)default_path, NULL };
  char **env = strv_concat (has_path ? NULL : path_only, c->env);
  struct oci_image_process ip = {
    .image = name, .args = argv, .env = env, .cwd = c->working_dir && c->working_dir[0] ? c->working_dir : "/"
  };
  int r = -1;
  if (argv[0] == NULL)
    err_set (err, EINVAL, "image %s has no Entrypoint or Cmd: give a command after --", name);
  else if (resolve_user (c->user, layers, &ip.uid, &ip.gid, err) == 0)
    {
      struct oci_profile_limits lim;
      if (admission_profile_limits (&lim, err) == 0)
        r = oci_profile_generate_image (&ip, &lim, json, err);
    }
  strv_free (argv);
  strv_free (env);
  return r;
}

/* Open the store (shared: no `image rm` collects the layers until the
 * sandbox records its image) and find the image. */
static int
find_image (const char *name, struct config_src *out, struct oci_image_rec *rec, struct oci_image_config *c,
            hk_err *err)
{
  struct store st = { 0 };
  if (cmd_store (&st, err) < 0)
    return -1;
  out->images = xcalloc (1, sizeof *out->images);
  int r = img_store_open (st.data_root, false, out->images, err);
  store_fini (&st);
  if (r < 0)
    {
      free (out->images);
      out->images = NULL;
      return -1;
    }
  if (img_find (out->images, name, rec, err) < 0 || img_config (out->images, rec, c, err) < 0)
    return -1;
  out->layers = img_layer_dirs (out->images, rec);
  out->image_id = xstrdup (rec->manifest_digest);
  return 0;
}

int
cmd_load_source (const struct cmd_config_req *req, struct config_src *out, hk_err *err)
{
  const char *bundle = req->bundle, *profile = req->profile, *image = req->image;
  char *const *args = req->args;
  if (image == NULL || bundle)
    {
      if (cmd_load_config (req, req->host_fallback && image == NULL, out, err) < 0)
        return -1;
      if (image == NULL)
        image = out->spec->sandbox.image;
      if (image == NULL)
        return 0;
    }
  else if (profile && strcmp (profile, "default") != 0)
    return err_set (err, EINVAL,
                    "--image: only the default profile can run an image (the %s "
                    "profile has a root of its own)",
                    profile);
  struct oci_image_rec rec = { 0 };
  struct oci_image_config c = { 0 };
  int r = -1;
  if (find_image (image, out, &rec, &c, err) < 0)
    goto done;
  if (out->spec == NULL)
    {
      /* No bundle: the config comes from the image. */
      if (generate (rec.name, &c, out->layers, args, &out->json, err) < 0)
        goto done;
      out->len = strlen (out->json);
      if (oci_spec_parse (out->json, out->len, &out->spec, err) < 0)
        {
          err_prefix (err, "image %s", rec.name);
          goto done;
        }
    }
  r = 0;
done:
  oci_image_rec_free (&rec);
  oci_image_config_free (&c);
  return r;
}
