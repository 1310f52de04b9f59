/* The container's device nodes: what runc does in createDevices, setupPtmx, setupDevSymlinks. */
#include <config.h>
#include "devices.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "mounts.h"
#include "utils.h"

struct default_dev {
  const char *path;
  int64_t major, minor;
};

/* runtime-spec config-linux.md "Default Devices" (/dev/console and /dev/ptmx are made apart). */
static const struct default_dev default_devs[] = {
    {"/dev/null", 1, 3},   {"/dev/zero", 1, 5},    {"/dev/full", 1, 7},
    {"/dev/random", 1, 8}, {"/dev/urandom", 1, 9}, {"/dev/tty", 5, 0},
};

bool ar_devices_needed(const struct ar_spec *s)
{
  for (size_t i = 0; i < s->n_mounts; i++) {
    const struct ar_mount *m = &s->mounts[i];
    bool bind = m->type && strcmp(m->type, "bind") == 0;

    for (size_t j = 0; j < m->n_options && !bind; j++)
      bind = strcmp(m->options[j], "bind") == 0 || strcmp(m->options[j], "rbind") == 0;
    if (bind && m->destination) {
      cleanup_free char *d = ar_path_clean(m->destination);
      if (strcmp(d, "/dev") == 0)
        return false;
    }
  }
  return true;
}

static mode_t node_type(char type)
{
  switch (type) {
  case 'c':
  case 'u':
    return S_IFCHR;
  case 'b':
    return S_IFBLK;
  case 'p':
    return S_IFIFO;
  default:
    return 0;
  }
}

static bool same_node(const struct stat *st, mode_t type, dev_t dev)
{
  return (st->st_mode & S_IFMT) == type && (type == S_IFIFO || st->st_rdev == dev);
}

/* In a user namespace mknod is EPERM: bind the host's node, once we know it is the one asked. */
static int bind_host_node(int dirfd, const char *base, const struct ar_device *d, mode_t type,
                          dev_t dev, ar_err *err)
{
  cleanup_close int src = -1, dst = -1, f = -1;
  char src_path[64], dst_path[64];
  struct stat st;

  src = open(d->path, O_PATH | O_CLOEXEC);
  if (src < 0 || fstat(src, &st) < 0)
    return ar_error(err, errno, "device '%s': mknod not permitted, and the host's node", d->path);
  if (!same_node(&st, type, dev))
    return ar_error(err, 0, "device '%s': mknod not permitted, and the host's '%s' is not %c %u:%u",
                    d->path, d->path, d->type, major(dev), minor(dev));
  f = openat(dirfd, base, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (f < 0 && errno != EEXIST)
    return ar_error(err, errno, "device '%s': create the bind target", d->path);
  dst = openat(dirfd, base, O_PATH | O_NOFOLLOW | O_CLOEXEC);
  if (dst < 0)
    return ar_error(err, errno, "device '%s': open the bind target", d->path);
  snprintf(src_path, sizeof(src_path), "/proc/self/fd/%d", src);
  snprintf(dst_path, sizeof(dst_path), "/proc/self/fd/%d", dst);
  if (mount(src_path, dst_path, NULL, MS_BIND, NULL) < 0)
    return ar_error(err, errno, "device '%s': bind-mount the host's node", d->path);
  return 0;
}

/* An existing node of the right kind stays (as runc); anything else in the way goes. */
static int mknod_replacing(int dirfd, const char *base, mode_t type, mode_t mode, dev_t dev)
{
  struct stat st;

  if (mknodat(dirfd, base, type | mode, dev) == 0)
    return 1;
  if (errno != EEXIST)
    return -1;
  if (fstatat(dirfd, base, &st, AT_SYMLINK_NOFOLLOW) < 0)
    return -1;
  if (same_node(&st, type, dev))
    return 0;
  if (S_ISDIR(st.st_mode) || unlinkat(dirfd, base, 0) < 0) {
    errno = EEXIST;
    return -1;
  }
  return mknodat(dirfd, base, type | mode, dev) == 0 ? 1 : -1;
}

static int make_node(int rootfs_fd, const struct ar_device *d, ar_err *err)
{
  cleanup_free char *path = ar_path_clean(d->path);
  cleanup_close int dirfd = -1;
  char *base = strrchr(path, '/') + 1;
  mode_t type = node_type(d->type);
  mode_t mode = d->has_file_mode ? (d->file_mode & 07777) : 0666;
  dev_t dev = makedev(d->major, d->minor);
  int r;

  if (type == 0)
    return ar_error(err, 0, "device '%s': unknown type '%c'", d->path, d->type);
  if (*base == '\0')
    return ar_error(err, 0, "device '%s': not a file path", d->path);
  base[-1] = '\0';
  dirfd = ar_mkdir_in_root(rootfs_fd, *path ? path : "/", false, err);
  if (dirfd < 0)
    return ar_error_wrap(err, "device '%s'", d->path);
  r = mknod_replacing(dirfd, base, type, mode, dev);
  if (r < 0 && errno == EPERM)
    return bind_host_node(dirfd, base, d, type, dev, err);
  if (r < 0)
    return ar_error(err, errno, "mknod device '%s'", d->path);
  if (r == 0)
    return 0;
  if (fchmodat(dirfd, base, mode, 0) < 0) /* mknod's mode went through the umask */
    return ar_error(err, errno, "chmod device '%s'", d->path);
  if ((d->has_uid || d->has_gid) &&
      fchownat(dirfd, base, d->has_uid ? d->uid : (uid_t)-1, d->has_gid ? d->gid : (gid_t)-1,
               AT_SYMLINK_NOFOLLOW) < 0)
    return ar_error(err, errno, "chown device '%s'", d->path);
  return 0;
}

static bool spec_has_device(const struct ar_spec *s, const char *path)
{
  for (size_t i = 0; i < s->linux_.n_devices; i++) {
    cleanup_free char *p = ar_path_clean(s->linux_.devices[i].path);
    if (strcmp(p, path) == 0)
      return true;
  }
  return false;
}

static int dev_links(int devfd, ar_err *err)
{
  static const char *const links[][2] = {
      {"/proc/self/fd", "fd"},       {"/proc/self/fd/0", "stdin"}, {"/proc/self/fd/1", "stdout"},
      {"/proc/self/fd/2", "stderr"}, {"/proc/kcore", "core"},
  };

  /* The ptmx of the container's own devpts instance, never the host's. */
  if (unlinkat(devfd, "ptmx", 0) < 0 && errno != ENOENT)
    return ar_error(err, errno, "remove /dev/ptmx");
  if (symlinkat("pts/ptmx", devfd, "ptmx") < 0)
    return ar_error(err, errno, "symlink /dev/ptmx");
  for (size_t i = 0; i < ARRAY_SIZE(links); i++) {
    if (strcmp(links[i][1], "core") == 0 && access("/proc/kcore", F_OK) < 0)
      continue; /* CONFIG_PROC_KCORE is off */
    if (symlinkat(links[i][0], devfd, links[i][1]) < 0 && errno != EEXIST)
      return ar_error(err, errno, "symlink /dev/%s", links[i][1]);
  }
  if (mkdirat(devfd, "shm", 01777) == 0) {
    if (fchmodat(devfd, "shm", 01777, 0) < 0)
      return ar_error(err, errno, "chmod /dev/shm");
  } else if (errno != EEXIST) {
    return ar_error(err, errno, "mkdir /dev/shm");
  }
  return 0;
}

int ar_devices_setup(const struct ar_spec *s, int rootfs_fd, ar_err *err)
{
  cleanup_close int devfd = -1;

  for (size_t i = 0; i < s->linux_.n_devices; i++)
    if (make_node(rootfs_fd, &s->linux_.devices[i], err) < 0)
      return -1;
  for (size_t i = 0; i < ARRAY_SIZE(default_devs); i++) {
    const struct default_dev *dd = &default_devs[i];
    struct ar_device d = {
        .path = (char *)dd->path,
        .type = 'c',
        .major = dd->major,
        .minor = dd->minor,
        .has_file_mode = true,
        .file_mode = 0666,
    };
    if (!spec_has_device(s, dd->path) && make_node(rootfs_fd, &d, err) < 0)
      return -1;
  }
  devfd = ar_mkdir_in_root(rootfs_fd, "/dev", false, err);
  if (devfd < 0)
    return -1;
  return dev_links(devfd, err);
}

int ar_dev_null_open(int root_fd, int flags, ar_err *err)
{
  cleanup_close int fd = ar_openat_in_root(root_fd, "/dev/null", flags | O_NOFOLLOW, 0, err);
  struct stat st;

  if (fd < 0)
    return -1;
  if (fstat(fd, &st) < 0)
    return ar_error(err, errno, "stat /dev/null");
  if (!S_ISCHR(st.st_mode) || major(st.st_rdev) != 1 || minor(st.st_rdev) != 3)
    return ar_error(err, EPERM, "/dev/null in the container is not the null device (1:3)");
  return ar_steal_fd(&fd);
}
