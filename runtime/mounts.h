/* The container's filesystem, built in the child inside its new mount namespace. */
#ifndef AR_MOUNTS_H
#define AR_MOUNTS_H

#include <stdbool.h>

#include "spec/spec.h"

/* Before pivot_root: make / rslave (or as rootfsPropagation says), bind the rootfs onto itself,
 * mount every entry of s->mounts (destinations resolved inside the rootfs, never through a
 * symlink out of it), create the devices and the /dev symlinks. */
int ar_mounts_setup(const struct ar_spec *s, const char *rootfs, ar_err *err);
/* The same in two phases, for a netns unshared after the hooks: EARLY all but the sysfs mounts
 * and what is mounted on them, SYSFS those, once the job is in its own netns. */
enum ar_mounts_phase { AR_MOUNTS_ALL, AR_MOUNTS_EARLY, AR_MOUNTS_SYSFS };
int ar_mounts_setup_phase(const struct ar_spec *s, const char *rootfs, enum ar_mounts_phase phase,
                          ar_err *err);
/* pivot_root into rootfs (or MS_MOVE + chroot with no_pivot) and chdir("/"); stdio on the
 * host's /dev/null moves to the container's. */
int ar_mounts_pivot(const char *rootfs, bool no_pivot, ar_err *err);
/* After pivot_root: create a missing process.cwd, masked and readonly paths, a "ro" tmpfs /dev
 * read-only, then a read-only root if root.readonly, and rootfsPropagation on the new /. */
int ar_mounts_finalize(const struct ar_spec *s, ar_err *err);
/* Bind the pty slave onto <rootfs>/dev/console, creating it (runc does it after the pivot,
 * with rootfs "/"). */
int ar_mounts_console(const char *rootfs, const char *slave_path, ar_err *err);

/* Open path under rootfs_fd without leaving it: openat2(RESOLVE_IN_ROOT), or a safe walk. */
int ar_openat_in_root(int rootfs_fd, const char *path, int flags, int mode, ar_err *err);
/* mkdir -p under the root, each component resolved in the root; returns an O_PATH fd of the
 * final directory, or of a file created there when is_file. */
int ar_mkdir_in_root(int rootfs_fd, const char *path, bool is_file, ar_err *err);

/* A path resolved inside a root (runtime/inroot.c): the object, its parent directory and its
 * name there (to reopen it once something is mounted on top), and its symlink-free path
 * ("/dev/pts"; "/" for the root itself, which has parent -1). */
struct ar_in_root {
  int fd;     /* O_PATH */
  int parent; /* O_PATH, -1 for the root */
  char *name; /* NULL for the root */
  char *path;
  bool created; /* the last component did not exist and was created */
};
/* create: 0 (missing is ENOENT), S_IFDIR (mkdir -p) or S_IFREG (dirs, then an empty file).
 * Symlinks are followed, the last one too, but never out of the root. */
int ar_resolve_in_root(int rootfs_fd, const char *path, int create, struct ar_in_root *ret,
                       ar_err *err);
/* Open the object again through its parent: the fd then sees a mount made on it since. */
int ar_in_root_reopen(const struct ar_in_root *r, int flags, ar_err *err);
void ar_in_root_clear(struct ar_in_root *r);
/* Lexically clean an absolute path: "//a/./b/" -> "/a/b" (".." is kept: only a walk knows). */
char *ar_path_clean(const char *path);

#endif
