/* mount: the sandbox's filesystem view, built in the child's new mount namespace
 * (or, without one, on a private tree in the state dir): rootfs, the spec's
 * mounts, /dev, pivot_root (or chroot), masked and read-only paths. */
#ifndef HAKO_RUNTIME_MOUNT_H
#define HAKO_RUNTIME_MOUNT_H

#include <stdbool.h>

#include "lib/err.h"
#include "oci/spec.h"

/* One cgroup hierarchy of the sandbox's, for a "cgroup" mount. */
struct mnt_cgroup
{
  const char *name; /* as the host names its directory: "memory", "cpu,cpuacct", "unified" */
  const char *dir;  /* the sandbox's directory in it (host path) */
};

struct mnt_ctx
{
  const struct oci_spec *spec;
  /* Absolute host path of the directory that becomes "/": the bundle's rootfs,
   * or (spec->sandbox.root == HAKO_ROOT_TMPFS) an empty directory in the state
   * dir onto which a tmpfs is mounted. */
  const char *rootfs;
  const char *bundle;  /* absolute; relative mount sources are resolved against it */
  const char *workdir; /* host dir mounted read-write at sandbox.workdir_path, or NULL */
  bool userns;         /* in a new user namespace: device nodes are bind-mounted, not mknod'ed */
  /* Host path of the sandbox's cgroup2 directory, shown read-only at a
   * "cgroup" mount; NULL when the host has no cgroup2 hierarchy. */
  const char *cgroup_dir;
  /* A host with v1 hierarchies (v1 or hybrid): the sandbox's directory in
   * each (cgroup2's "unified" among them on a hybrid host), shown read-only
   * at a "cgroup" mount as the host shows its hierarchies; n 0: none. */
  const struct mnt_cgroup *cgroups;
  size_t n_cgroups;
  /* sandbox.idmap: a detached, idmapped clone of the rootfs's mount tree
   * (made by the parent, which may idmap it) attached at rootfs instead of
   * a plain bind; 0 or -1: none. */
  int root_tree;
  /* Image sandboxes: the overlayfs options (layers, writable layer) mounted
   * on rootfs here, in the sandbox's own mount namespace, so the mount goes
   * away with it and never shows on the host. */
  const char *overlay;
  const char *overlay_dir; /* the overlay's layer paths are relative to it */
  /* No mount namespace of its own (the host's): the directory in the state
   * dir the tree is built on, in the host's mount table, and entered with
   * chroot instead of pivot_root.  NULL: a mount namespace of its own. */
  const char *tree;
  /* In a new user namespace: per spec mount, its bind source opened by the
   * parent as real root (mnt_src_open), or -1; NULL for none.  Each is
   * closed once mounted. */
  const int *src_fds;
};

/* Whether m is a bind mount. */
bool mnt_is_bind (const struct oci_mount *m);
/* A bind mount's source as a host path (relative ones against bundle), or
 * NULL when it has none (no source, or a relative one and no bundle). */
char *mnt_bind_source (const struct oci_mount *m, const char *bundle);

/* Bind m's source, src_fd, on target_fd (O_PATH; target: how mount(2)
 * names it): an idmapped m's src_fd is the detached, idmapped clone of its
 * tree (mnt_src_open), attached with move_mount on the inode target_fd pins;
 * any other is bound from /proc/self/fd (recursively for an rbind).  -1
 * with errno. */
int mnt_bind_fd (const struct oci_mount *m, int src_fd, int target_fd, const char *target);

/* A root attached from ctx->root_tree whose path the namespace's root cannot
 * look up (a bundle under a 0700 directory): make / rslave, mount a private
 * tmpfs on /tmp of this mount namespace and point ctx->rootfs at an empty
 * directory in it, where the tree is attached instead.  Nothing else needs
 * the path: bind sources come as fds (src_fds).  A no-op otherwise. */
int mnt_relocate_root (struct mnt_ctx *ctx, hk_err *err);

/* Before pivot_root: propagation, the root bind (or tmpfs), the spec's mounts in
 * order with every destination resolved inside the root, /dev and its nodes. */
int mnt_prepare_root (const struct mnt_ctx *ctx, hk_err *err);
/* pivot_root into ctx->rootfs, detach the old root, chdir("/"); with
 * ctx->tree, chroot into it instead. */
int mnt_pivot (const struct mnt_ctx *ctx, hk_err *err);
/* After pivot_root and sysctls: readonlyPaths, maskedPaths, then root.readonly. */
int mnt_finish (const struct mnt_ctx *ctx, hk_err *err);

#endif
