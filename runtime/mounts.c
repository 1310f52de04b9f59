/* The container's filesystem, built by the child in its own mount namespace.
 *
 * Every destination is resolved inside the rootfs (inroot.c) and mounted onto the resolved
 * O_PATH fd through /proc/self/fd/N, so a symlink in the image can never redirect a mount onto
 * the host.  A mount made on that fd is not visible through it: the fd is reopened through its
 * parent before any remount, mount_setattr or propagation change. */
#include <config.h>
#include "mounts.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "devices.h"
#include "log.h"
#include "mount-opts.h"
#include "utils.h"

#define FD_PATH_LEN 32

#ifndef ST_NOSYMFOLLOW
#define ST_NOSYMFOLLOW 0x2000 /* glibc < 2.34 */
#endif

static const char *fd_path(int fd, char buf[FD_PATH_LEN])
{
  snprintf(buf, FD_PATH_LEN, "/proc/self/fd/%d", fd);
  return buf;
}

/* ---- flags of an existing mount ---- */

static unsigned long statvfs_to_ms(unsigned long f)
{
  static const struct {
    unsigned long st, ms;
  } map[] = {
      {ST_RDONLY, MS_RDONLY},
      {ST_NOSUID, MS_NOSUID},
      {ST_NODEV, MS_NODEV},
      {ST_NOEXEC, MS_NOEXEC},
      {ST_SYNCHRONOUS, MS_SYNCHRONOUS},
      {ST_MANDLOCK, MS_MANDLOCK},
      {ST_NOATIME, MS_NOATIME},
      {ST_NODIRATIME, MS_NODIRATIME},
      {ST_RELATIME, MS_RELATIME},
      {ST_NOSYMFOLLOW, MS_NOSYMFOLLOW},
  };
  unsigned long ms = 0;

  for (size_t i = 0; i < ARRAY_SIZE(map); i++)
    if (f & map[i].st)
      ms |= map[i].ms;
  return ms;
}

#define LOCKED_FLAGS (MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC)
#define ATIME_FLAGS (MS_NOATIME | MS_NODIRATIME | MS_RELATIME | MS_STRICTATIME)

/* Change the flags of the bind mount at fd.  In a user namespace the flags the mount got from
 * its source are locked: on EPERM, keep them (and its atime mode) and try again, as runc. */
static int remount_bind(int fd, unsigned long flags, const char *what, ar_err *err)
{
  char p[FD_PATH_LEN];
  struct statvfs sv;

  flags &= ~(MS_REC | MS_BIND | MS_REMOUNT);
  if (mount(NULL, fd_path(fd, p), NULL, MS_BIND | MS_REMOUNT | flags, NULL) == 0)
    return 0;
  if (errno != EPERM || fstatvfs(fd, &sv) < 0)
    return ar_error(err, errno, "remount '%s'", what);
  flags |= statvfs_to_ms(sv.f_flag) & LOCKED_FLAGS;
  flags = (flags & ~ATIME_FLAGS) | (statvfs_to_ms(sv.f_flag) & ATIME_FLAGS);
  if (mount(NULL, p, NULL, MS_BIND | MS_REMOUNT | flags, NULL) < 0)
    return ar_error(err, errno, "remount '%s'", what);
  return 0;
}

/* Read-only, every other flag as it is: mount_setattr, or a remount with the current flags. */
static int make_readonly(int fd, bool recursive, const char *what, ar_err *err)
{
  struct mount_attr attr = {.attr_set = MOUNT_ATTR_RDONLY};
  unsigned int at = AT_EMPTY_PATH | (recursive ? AT_RECURSIVE : 0);
  struct statvfs sv;

  if (mount_setattr(fd, "", at, &attr, sizeof(attr)) == 0)
    return 0;
  /* ENOSYS: before 5.12, or a seccomp profile that does not know it (EPERM, too, then) */
  if (errno != ENOSYS && errno != EPERM)
    return ar_error(err, errno, "make '%s' read-only", what);
  if (fstatvfs(fd, &sv) < 0)
    return ar_error(err, errno, "statvfs '%s'", what);
  return remount_bind(fd, statvfs_to_ms(sv.f_flag) | MS_RDONLY, what, err);
}

/* What follows the mount itself: the recursive "r*" options, then the propagation ones. */
static int finish_mount(int top, const struct ar_mount_opts *o, const char *what, ar_err *err)
{
  char p[FD_PATH_LEN];

  if (o->attr_set || o->attr_clr) {
    struct mount_attr attr = {.attr_set = o->attr_set, .attr_clr = o->attr_clr};
    if (mount_setattr(top, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof(attr)) < 0)
      return ar_error(err, errno, "set the recursive mount options of '%s'", what);
  }
  for (size_t i = 0; i < o->n_propagation; i++)
    if (mount(NULL, fd_path(top, p), NULL, o->propagation[i], NULL) < 0)
      return ar_error(err, errno, "set the propagation of '%s'", what);
  return 0;
}

/* ---- /proc/self/mountinfo ---- */

struct mnt_entry {
  char *root, *mountpoint, *fstype, *super_opts;
  bool shared;
};

static void unescape_octal(char *s)
{
  char *o = s;

  for (; *s; s++) {
    if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' && s[3] >= '0' &&
        s[3] <= '7') {
      *o++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
      s += 3;
    } else {
      *o++ = *s;
    }
  }
  *o = '\0';
}

static bool parse_mnt_line(char *line, struct mnt_entry *e)
{
  char *f[6], *save = NULL, *tok;
  int i = 0;

  for (tok = strtok_r(line, " \n", &save); tok && i < 6; tok = strtok_r(NULL, " \n", &save))
    f[i++] = tok;
  if (i < 6)
    return false;
  e->shared = false;
  while (tok && strcmp(tok, "-") != 0) { /* optional fields */
    e->shared |= strncmp(tok, "shared:", 7) == 0;
    tok = strtok_r(NULL, " \n", &save);
  }
  char *fstype = strtok_r(NULL, " \n", &save);
  char *source = strtok_r(NULL, " \n", &save);
  char *super = strtok_r(NULL, " \n", &save);
  if (!tok || !fstype || !source)
    return false;
  unescape_octal(f[3]);
  unescape_octal(f[4]);
  e->root = xstrdup(f[3]);
  e->mountpoint = xstrdup(f[4]);
  e->fstype = xstrdup(fstype);
  e->super_opts = xstrdup(super ? super : "");
  return true;
}

static void mountinfo_free(struct mnt_entry *m, size_t n)
{
  for (size_t i = 0; i < n; i++) {
    free(m[i].root);
    free(m[i].mountpoint);
    free(m[i].fstype);
    free(m[i].super_opts);
  }
  free(m);
}

static int read_mountinfo(struct mnt_entry **ret, size_t *ret_n, ar_err *err)
{
  cleanup_file FILE *f = fopen("/proc/self/mountinfo", "re");
  cleanup_free char *line = NULL;
  struct mnt_entry *v = NULL;
  size_t n = 0, cap = 0, len = 0;

  if (f == NULL)
    return ar_error(err, errno, "open /proc/self/mountinfo");
  while (getline(&line, &len, f) > 0) {
    if (n == cap)
      v = xrealloc(v, (cap = cap ? cap * 2 : 64) * sizeof(*v));
    if (parse_mnt_line(line, &v[n]))
      n++;
  }
  *ret = v;
  *ret_n = n;
  return 0;
}

static bool path_is_under(const char *path, const char *dir)
{
  size_t n = strlen(dir);

  if (strcmp(dir, "/") == 0)
    return true;
  return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/* ---- checks on destinations ---- */

static bool has_namespace(const struct ar_spec *s, enum ar_ns_type t)
{
  for (size_t i = 0; i < s->linux_.n_namespaces; i++)
    if (s->linux_.namespaces[i].type == t)
      return true;
  return false;
}

/* Over /proc only procfs itself and the files lxcfs-like tools emulate (runc's list): anything
 * else could hide /proc/self/attr, /proc/sys... from the protections that follow. */
static int check_proc_dest(const char *path, const char *type, bool bind, int src_fd, ar_err *err)
{
  static const char *const allowed[] = {
      "/proc/cpuinfo", "/proc/diskstats",
      "/proc/meminfo", "/proc/stat",
      "/proc/swaps",   "/proc/uptime",
      "/proc/loadavg", "/proc/slabinfo",
      "/proc/net/dev", "/proc/sys/kernel/ns_last_pid",
  };
  struct statfs sfs;

  if (!path_is_under(path, "/proc"))
    return 0;
  if (strcmp(path, "/proc") == 0) {
    if (!bind && strcmp(type, "proc") == 0)
      return 0;
    if (bind && fstatfs(src_fd, &sfs) == 0 && sfs.f_type == PROC_SUPER_MAGIC)
      return 0;
    return ar_error(err, 0, "only procfs can be mounted on /proc");
  }
  for (size_t i = 0; i < ARRAY_SIZE(allowed); i++)
    if (strcmp(path, allowed[i]) == 0)
      return 0;
  return ar_error(err, 0, "'%s' cannot be mounted: it is inside /proc", path);
}

struct mount_ctx {
  const struct ar_spec *s;
  int rootfd;
};

static int resolve_dest(struct mount_ctx *c, const struct ar_mount *m, const char *type, bool bind,
                        int src_fd, int create, struct ar_in_root *dst, ar_err *err)
{
  cleanup_free char *clean = ar_path_clean(m->destination);

  /* Checked on the path as written first, so that nothing is created for a refused mount, then
   * on the path it really leads to. */
  if (!strstr(clean, "/..") && check_proc_dest(clean, type, bind, src_fd, err) < 0)
    return -1;
  if (ar_resolve_in_root(c->rootfd, m->destination, create, dst, err) < 0)
    return -1;
  if (dst->parent < 0)
    return ar_error(err, 0, "the destination is the rootfs itself");
  /* proc and sysfs through a symlink is the classic way to land them somewhere unexpected. */
  if (!bind && (strcmp(type, "proc") == 0 || strcmp(type, "sysfs") == 0) &&
      strcmp(clean, dst->path) != 0)
    return ar_error(err, 0, "%s must be mounted on a real directory, '%s' leads to '%s'", type,
                    m->destination, dst->path);
  return check_proc_dest(dst->path, type, bind, src_fd, err);
}

/* ---- bind mounts ---- */

static int bind_onto(const char *src, struct ar_in_root *dst, unsigned long flags,
                     const struct ar_mount_opts *o, ar_err *err)
{
  char p[FD_PATH_LEN];
  cleanup_close int top = -1;

  if (mount(src, fd_path(dst->fd, p), NULL, MS_BIND | (flags & MS_REC), NULL) < 0)
    return ar_error(err, errno, "bind-mount '%s'", src);
  top = ar_in_root_reopen(dst, O_PATH, err);
  if (top < 0)
    return -1;
  if ((flags & ~(MS_BIND | MS_REC | MS_REMOUNT | MS_SILENT)) &&
      remount_bind(top, flags, dst->path, err) < 0)
    return -1;
  return finish_mount(top, o, dst->path, err);
}

static int mount_bind(struct mount_ctx *c, const struct ar_mount *m, const struct ar_mount_opts *o,
                      ar_err *err)
{
  cleanup_close int src = -1;
  struct ar_in_root dst = {.fd = -1, .parent = -1};
  char p[FD_PATH_LEN];
  struct stat st;
  int r;

  if (m->source == NULL)
    return ar_error(err, 0, "a bind mount needs a source");
  /* The source is a host path (relative ones are relative to our cwd, the bundle). */
  src = open(m->source, O_PATH | O_CLOEXEC);
  if (src < 0 || fstat(src, &st) < 0)
    return ar_error(err, errno, "bind source '%s'", m->source);
  if (resolve_dest(c, m, "bind", true, src, S_ISDIR(st.st_mode) ? S_IFDIR : S_IFREG, &dst, err) <
      0) {
    ar_in_root_clear(&dst);
    return -1;
  }
  r = bind_onto(fd_path(src, p), &dst, o->flags, o, err);
  ar_in_root_clear(&dst);
  return r;
}

/* Where a filesystem cannot be mounted in a user namespace, bind the host's instance, with the
 * flags asked for, and make it read-only all the way down if it was asked read-only. */
static int bind_host_fallback(const char *host, struct ar_in_root *dst,
                              const struct ar_mount_opts *o, ar_err *err)
{
  cleanup_close int top = -1;

  if (bind_onto(host, dst, o->flags | MS_BIND | MS_REC, o, err) < 0)
    return -1;
  if (!(o->flags & MS_RDONLY))
    return 0;
  top = ar_in_root_reopen(dst, O_PATH, err);
  return top < 0 ? -1 : make_readonly(top, true, dst->path, err);
}

/* ---- tmpfs (with runc's tmpcopyup) ---- */

static int copy_tree(int src, int dst, const char *what, ar_err *err);

static int copy_file(int src_dir, int dst_dir, const char *name, ar_err *err)
{
  cleanup_close int in = openat(src_dir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  cleanup_close int out = -1;
  char buf[65536];
  ssize_t n;

  if (in < 0)
    return ar_error(err, errno, "tmpcopyup: open '%s'", name);
  out = openat(dst_dir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (out < 0)
    return ar_error(err, errno, "tmpcopyup: create '%s'", name);
  while ((n = read(in, buf, sizeof(buf))) > 0)
    if (ar_write_all(out, buf, n) < 0)
      return ar_error(err, errno, "tmpcopyup: write '%s'", name);
  if (n < 0)
    return ar_error(err, errno, "tmpcopyup: read '%s'", name);
  return 0;
}

static int copy_entry(int src, int dst, const char *name, ar_err *err)
{
  struct stat st;
  char target[4096];
  ssize_t n;

  if (fstatat(src, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
    return ar_error(err, errno, "tmpcopyup: stat '%s'", name);
  if (S_ISDIR(st.st_mode)) {
    cleanup_close int s = openat(src, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    cleanup_close int d = -1;
    if (s < 0 || (mkdirat(dst, name, 0700) < 0 && errno != EEXIST))
      return ar_error(err, errno, "tmpcopyup: directory '%s'", name);
    d = openat(dst, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (d < 0 || copy_tree(s, d, name, err) < 0)
      return d < 0 ? ar_error(err, errno, "tmpcopyup: open '%s'", name) : -1;
  } else if (S_ISREG(st.st_mode)) {
    if (copy_file(src, dst, name, err) < 0)
      return -1;
  } else if (S_ISLNK(st.st_mode)) {
    n = readlinkat(src, name, target, sizeof(target) - 1);
    if (n < 0)
      return ar_error(err, errno, "tmpcopyup: readlink '%s'", name);
    target[n] = '\0';
    if (symlinkat(target, dst, name) < 0)
      return ar_error(err, errno, "tmpcopyup: symlink '%s'", name);
  } else if (mknodat(dst, name, st.st_mode, st.st_rdev) < 0) {
    if (errno != EPERM)
      return ar_error(err, errno, "tmpcopyup: mknod '%s'", name);
    ar_warn("tmpcopyup: '%s' not copied: mknod not permitted", name);
    return 0;
  }
  /* An owner the user namespace does not map (EINVAL) stays root's. */
  if (fchownat(dst, name, st.st_uid, st.st_gid, AT_SYMLINK_NOFOLLOW) < 0 && errno != EINVAL)
    return ar_error(err, errno, "tmpcopyup: chown '%s'", name);
  if (!S_ISLNK(st.st_mode) && fchmodat(dst, name, st.st_mode & 07777, 0) < 0)
    return ar_error(err, errno, "tmpcopyup: chmod '%s'", name);
  return 0;
}

static int copy_tree(int src, int dst, const char *what, ar_err *err)
{
  int dup_fd = fcntl(src, F_DUPFD_CLOEXEC, 0);
  cleanup_dir DIR *d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
  struct dirent *de;

  if (d == NULL) {
    if (dup_fd >= 0)
      close(dup_fd);
    return ar_error(err, errno, "tmpcopyup: read '%s'", what);
  }
  while ((de = readdir(d)) != NULL) {
    if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
      continue;
    if (copy_entry(src, dst, de->d_name, err) < 0)
      return -1;
  }
  return 0;
}

static int mount_tmpfs(struct mount_ctx *c, const struct ar_mount *m, const struct ar_mount_opts *o,
                       struct ar_in_root *dst, ar_err *err)
{
  char p[FD_PATH_LEN];
  cleanup_free char *data = NULL;
  cleanup_close int lower = -1, top = -1;
  struct stat st;

  /* An existing directory keeps its mode on the tmpfs unless mode= says otherwise (runc). */
  if (!dst->created && fstat(dst->fd, &st) == 0 && S_ISDIR(st.st_mode))
    data = o->data ? xasprintf("mode=%04o,%s", st.st_mode & 07777, o->data)
                   : xasprintf("mode=%04o", st.st_mode & 07777);
  else if (o->data)
    data = xstrdup(o->data);
  if (o->tmpcopyup) { /* the directory under the mount stays readable through this fd */
    lower = open(fd_path(dst->fd, p), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (lower < 0)
      return ar_error(err, errno, "tmpcopyup: open '%s'", dst->path);
  }
  if (mount(m->source ? m->source : "tmpfs", fd_path(dst->fd, p), "tmpfs", o->flags & ~MS_RDONLY,
            data) < 0)
    return ar_error(err, errno, "mount tmpfs");
  top = ar_in_root_reopen(dst, O_RDONLY | O_DIRECTORY, err);
  if (top < 0)
    return -1;
  if (lower >= 0 && copy_tree(lower, top, dst->path, err) < 0)
    return -1;
  /* Read-only only now, after the copy; /dev waits for its devices (ar_mounts_finalize). */
  if ((o->flags & MS_RDONLY) && strcmp(dst->path, "/dev") != 0 &&
      remount_bind(top, o->flags, dst->path, err) < 0)
    return -1;
  return finish_mount(top, o, dst->path, err);
}

/* ---- cgroup ---- */

static bool ctrls_match(const char *ctrls, const char *opts)
{
  cleanup_free char *copy = xstrdup(ctrls);
  char *save = NULL;

  for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
    cleanup_free char *needle = xasprintf(",%s,", t);
    if (strstr(opts, needle))
      return true;
  }
  return false;
}

/* Our own cgroup (from /proc/self/cgroup) in the v1 hierarchy mounted with super_opts
 * ("rw,cpu,cpuacct"), or in the v2 one when super_opts is NULL.  *ret_ctrls gets the
 * hierarchy's controllers as the cgroup filesystem takes them ("cpu,cpuacct", "name=systemd"). */
static char *own_cgroup(const char *super_opts, char **ret_ctrls)
{
  cleanup_file FILE *f = fopen("/proc/self/cgroup", "re");
  cleanup_free char *line = NULL;
  cleanup_free char *opts = xasprintf(",%s,", super_opts ? super_opts : "");
  size_t len = 0;

  while (f && getline(&line, &len, f) > 0) {
    char *ctrls = strchr(line, ':'), *path;
    if (!ctrls || !(path = strchr(++ctrls, ':')))
      continue;
    *path++ = '\0';
    path[strcspn(path, "\n")] = '\0';
    if (super_opts == NULL ? *ctrls == '\0' : (*ctrls && ctrls_match(ctrls, opts))) {
      if (ret_ctrls)
        *ret_ctrls = xstrdup(ctrls);
      return xstrdup(path);
    }
  }
  return NULL;
}

static int mount_cgroup2(struct mount_ctx *c, const struct ar_mount_opts *o, struct ar_in_root *dst,
                         ar_err *err)
{
  char p[FD_PATH_LEN];
  cleanup_close int top = -1;
  cleanup_free char *own = NULL, *src = NULL;

  if (mount("cgroup2", fd_path(dst->fd, p), "cgroup2", o->flags, o->data) == 0) {
    top = ar_in_root_reopen(dst, O_PATH, err);
    return top < 0 ? -1 : finish_mount(top, o, dst->path, err);
  }
  if (errno != EPERM && errno != EBUSY)
    return ar_error(err, errno, "mount cgroup2");
  /* No cgroup namespace of our own in a user namespace: bind our own cgroup instead (runc). */
  own = own_cgroup(NULL, NULL);
  src = xasprintf("/sys/fs/cgroup%s", own && strcmp(own, "/") != 0 ? own : "");
  return bind_host_fallback(src, dst, o, err);
}

static int cgroup1_hierarchy(struct mount_ctx *c, int tmpfs_fd, const struct mnt_entry *e,
                             const struct ar_mount_opts *o, ar_err *err)
{
  const char *name = strrchr(e->mountpoint, '/') + 1;
  struct ar_in_root sub = {.fd = -1, .parent = -1};
  cleanup_free char *ctrls = NULL, *src = NULL;
  cleanup_free char *own = own_cgroup(e->super_opts, &ctrls);
  char p[FD_PATH_LEN];
  int r = 0;

  if (ar_resolve_in_root(tmpfs_fd, name, S_IFDIR, &sub, err) < 0)
    return -1;
  if (has_namespace(c->s, AR_NS_CGROUP)) {
    /* In our cgroup namespace a fresh mount shows our own cgroup as its root.  In a user
     * namespace v1 cannot be mounted, and a bind would show the host's tree: leave it empty. */
    if (mount("cgroup", fd_path(sub.fd, p), "cgroup", o->flags, ctrls ? ctrls : name) < 0) {
      ar_warn("cgroup v1 '%s' left empty: %s", name, strerror(errno));
    } else {
      cleanup_close int top = ar_in_root_reopen(&sub, O_PATH, err);
      r = top < 0 ? -1 : finish_mount(top, o, sub.path, err);
    }
  } else {
    /* Bind our own cgroup: the hierarchy's mount point + our path below its root. */
    const char *path = own ? own : "/";
    if (strcmp(e->root, "/") != 0)
      path = path_is_under(path, e->root) ? path + strlen(e->root) : "";
    src = xasprintf("%s%s", e->mountpoint, strcmp(path, "/") == 0 ? "" : path);
    r = bind_onto(src, &sub, o->flags | MS_BIND | MS_REC, o, err);
  }
  ar_in_root_clear(&sub);
  return r;
}

/* cgroup v1 (or hybrid) as runc lays it out: a tmpfs with one directory per hierarchy, and
 * symlinks for the co-mounted ones ("cpu" -> "cpu,cpuacct"). */
static int mount_cgroup1(struct mount_ctx *c, const struct ar_mount_opts *o, struct ar_in_root *dst,
                         ar_err *err)
{
  char p[FD_PATH_LEN];
  cleanup_close int top = -1;
  struct mnt_entry *mi = NULL;
  size_t n = 0;
  int r = 0;

  if (mount("tmpfs", fd_path(dst->fd, p), "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=755") <
      0)
    return ar_error(err, errno, "mount the tmpfs for cgroup v1");
  top = ar_in_root_reopen(dst, O_PATH, err);
  if (top < 0 || read_mountinfo(&mi, &n, err) < 0)
    return -1;
  for (size_t i = 0; i < n && r == 0; i++) {
    const char *name = strrchr(mi[i].mountpoint, '/');
    if (strcmp(mi[i].fstype, "cgroup") != 0 || !path_is_under(mi[i].mountpoint, "/sys/fs/cgroup"))
      continue;
    r = cgroup1_hierarchy(c, top, &mi[i], o, err);
    if (r == 0 && strchr(++name, ',')) {
      cleanup_free char *parts = xstrdup(name);
      char *save = NULL;
      for (char *t = strtok_r(parts, ",", &save); t; t = strtok_r(NULL, ",", &save))
        if (symlinkat(name, top, t) < 0 && errno != EEXIST)
          r = ar_error(err, errno, "symlink cgroup '%s'", t);
    }
  }
  mountinfo_free(mi, n);
  if (r < 0)
    return -1;
  if ((o->flags & MS_RDONLY) &&
      remount_bind(top, MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, dst->path, err) < 0)
    return -1;
  return finish_mount(top, o, dst->path, err);
}

static int mount_cgroup(struct mount_ctx *c, const struct ar_mount_opts *o, struct ar_in_root *dst,
                        ar_err *err)
{
  struct statfs sfs;

  if (statfs("/sys/fs/cgroup", &sfs) == 0 && sfs.f_type == CGROUP2_SUPER_MAGIC)
    return mount_cgroup2(c, o, dst, err);
  return mount_cgroup1(c, o, dst, err);
}

/* ---- any other filesystem ---- */

static char *without_gid(const char *data)
{
  cleanup_free char *copy = xstrdup(data);
  char *out = xstrdup(""), *save = NULL;

  for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
    if (strncmp(t, "gid=", 4) == 0)
      continue;
    char *n = *out ? xasprintf("%s,%s", out, t) : xstrdup(t);
    free(out);
    out = n;
  }
  return out;
}

static int mount_fs(struct mount_ctx *c, const struct ar_mount *m, const char *type,
                    const struct ar_mount_opts *o, struct ar_in_root *dst, ar_err *err)
{
  char p[FD_PATH_LEN];
  const char *source = m->source ? m->source : type;
  cleanup_close int top = -1;
  int r;

  r = mount(source, fd_path(dst->fd, p), type, o->flags, o->data);
  if (r < 0 && errno == EPERM && strcmp(type, "sysfs") == 0)
    return bind_host_fallback("/sys", dst, o, err); /* userns without its own netns */
  if (r < 0 && errno == EPERM && strcmp(type, "mqueue") == 0)
    return bind_host_fallback("/dev/mqueue", dst, o, err); /* userns without its own ipcns */
  if (r < 0 && errno == EINVAL && strcmp(type, "devpts") == 0 && o->data &&
      strstr(o->data, "gid=")) {
    /* gid=5 is not mapped in this user namespace: the ptys keep the creator's group. */
    cleanup_free char *data = without_gid(o->data);
    r = mount(source, p, type, o->flags, data);
  }
  if (r < 0)
    return ar_error(err, errno, "mount %s", type);
  top = ar_in_root_reopen(dst, O_PATH, err);
  return top < 0 ? -1 : finish_mount(top, o, dst->path, err);
}

static int mount_one(struct mount_ctx *c, const struct ar_mount *m, ar_err *err)
{
  struct ar_mount_opts o;
  struct ar_in_root dst = {.fd = -1, .parent = -1};
  const char *type = m->type ? m->type : "";
  int r;

  if (m->destination == NULL || *m->destination == '\0')
    return ar_error(err, 0, "no destination");
  if (ar_mount_opts_parse(m->options, m->n_options, &o, err) < 0)
    return -1;
  if ((o.flags & MS_BIND) || strcmp(type, "bind") == 0) {
    o.flags |= MS_BIND;
    r = mount_bind(c, m, &o, err);
  } else if (*type == '\0') {
    r = ar_error(err, 0, "no type");
  } else if (resolve_dest(c, m, type, false, -1, S_IFDIR, &dst, err) < 0) {
    r = -1;
  } else if (strcmp(type, "tmpfs") == 0) {
    r = mount_tmpfs(c, m, &o, &dst, err);
  } else if (strcmp(type, "cgroup") == 0) {
    r = mount_cgroup(c, &o, &dst, err);
  } else {
    r = mount_fs(c, m, type, &o, &dst, err);
  }
  ar_in_root_clear(&dst);
  ar_mount_opts_clear(&o);
  return r;
}

/* ---- ar_mounts_setup ---- */

/* pivot_root and MS_MOVE refuse a rootfs whose parent mount is shared. */
static int make_parent_private(const char *rootfs, ar_err *err)
{
  struct mnt_entry *mi = NULL;
  size_t n = 0, best = (size_t)-1;
  int r = 0;

  if (read_mountinfo(&mi, &n, err) < 0)
    return -1;
  for (size_t i = 0; i < n; i++)
    if (path_is_under(rootfs, mi[i].mountpoint) &&
        (best == (size_t)-1 || strlen(mi[i].mountpoint) >= strlen(mi[best].mountpoint)))
      best = i;
  if (best != (size_t)-1 && mi[best].shared &&
      mount(NULL, mi[best].mountpoint, NULL, MS_PRIVATE, NULL) < 0)
    r = ar_error(err, errno, "make '%s' private", mi[best].mountpoint);
  mountinfo_free(mi, n);
  return r;
}

static int prepare_root(const struct ar_spec *s, const char *rootfs, ar_err *err)
{
  unsigned long prop = MS_SLAVE | MS_REC;
  const char *name = s->linux_.rootfs_propagation;

  if (name && *name && ar_propagation_from_name(name, &prop) < 0)
    return ar_error(err, 0, "linux.rootfsPropagation: unknown '%s'", name);
  /* An unbindable / cannot give the rootfs bind: slave until ar_mounts_finalize sets it. */
  if (prop & MS_UNBINDABLE)
    prop = MS_SLAVE | (prop & MS_REC);
  if (mount(NULL, "/", NULL, prop, NULL) < 0)
    return ar_error(err, errno, "set the propagation of /");
  if (make_parent_private(rootfs, err) < 0)
    return -1;
  if (mount(rootfs, rootfs, NULL, MS_BIND | MS_REC, NULL) < 0)
    return ar_error(err, errno, "bind-mount the rootfs '%s' onto itself", rootfs);
  return 0;
}

/* A sysfs shows the netns it was mounted in: with a netns unshared after the hooks, it and the
 * mounts on top of it (/sys/fs/cgroup ...) wait for the job's netns. */
static bool sysfs_subtree(const struct ar_spec *s, size_t i)
{
  for (size_t j = 0; j <= i; j++) {
    const struct ar_mount *m = &s->mounts[j];
    cleanup_free char *top = NULL, *dest = NULL;
    size_t n;
    if (m->type == NULL || strcmp(m->type, "sysfs") != 0 || m->destination == NULL ||
        s->mounts[i].destination == NULL)
      continue;
    top = ar_path_clean(m->destination);
    dest = ar_path_clean(s->mounts[i].destination);
    n = strlen(top);
    if (strncmp(dest, top, n) == 0 && (dest[n] == '\0' || dest[n] == '/' || n == 1))
      return true;
  }
  return false;
}

int ar_mounts_setup_phase(const struct ar_spec *s, const char *rootfs, enum ar_mounts_phase phase,
                          ar_err *err)
{
  cleanup_free char *real = realpath(rootfs, NULL);
  struct mount_ctx c = {.s = s, .rootfd = -1};
  int r = 0;

  if (real == NULL)
    return ar_error(err, errno, "rootfs '%s'", rootfs);
  if (phase != AR_MOUNTS_SYSFS && prepare_root(s, real, err) < 0)
    return -1;
  c.rootfd = open(real, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (c.rootfd < 0)
    return ar_error(err, errno, "open the rootfs '%s'", real);
  if (s->linux_.mount_label && *s->linux_.mount_label)
    ar_debug("linux.mountLabel ignored: no SELinux support");
  for (size_t i = 0; i < s->n_mounts && r == 0; i++) {
    const struct ar_mount *m = &s->mounts[i];
    if (phase != AR_MOUNTS_ALL && sysfs_subtree(s, i) != (phase == AR_MOUNTS_SYSFS))
      continue;
    if (mount_one(&c, m, err) < 0)
      r = ar_error_wrap(err, "mount '%s' on '%s' (type %s)", m->source ? m->source : "",
                        m->destination ? m->destination : "", m->type ? m->type : "none");
  }
  if (r == 0 && phase != AR_MOUNTS_SYSFS && ar_devices_needed(s) &&
      ar_devices_setup(s, c.rootfd, err) < 0)
    r = ar_error_wrap(err, "devices");
  close(c.rootfd);
  return r;
}

int ar_mounts_setup(const struct ar_spec *s, const char *rootfs, ar_err *err)
{
  return ar_mounts_setup_phase(s, rootfs, AR_MOUNTS_ALL, err);
}

/* ---- pivot ---- */

/* Without pivot_root the host's proc and sysfs stay reachable under the chroot: detach them, or
 * cover them where that is not allowed (runc's msMoveRoot). */
static int detach_host_kernfs(const char *rootfs, ar_err *err)
{
  struct mnt_entry *mi = NULL;
  size_t n = 0;
  int r = 0;

  if (read_mountinfo(&mi, &n, err) < 0)
    return -1;
  for (size_t i = n; i-- > 0 && r == 0;) {
    const char *mp = mi[i].mountpoint;
    if ((strcmp(mi[i].fstype, "proc") != 0 && strcmp(mi[i].fstype, "sysfs") != 0) ||
        path_is_under(mp, rootfs))
      continue;
    if (umount2(mp, MNT_DETACH) == 0)
      continue;
    if (errno != EINVAL && errno != EPERM)
      r = ar_error(err, errno, "unmount '%s'", mp);
    else if (mount("tmpfs", mp, "tmpfs", MS_RDONLY, NULL) < 0)
      r = ar_error(err, errno, "cover '%s'", mp);
  }
  mountinfo_free(mi, n);
  return r;
}

static int move_root(const char *rootfs, ar_err *err)
{
  cleanup_free char *real = realpath(rootfs, NULL);

  if (real == NULL)
    return ar_error(err, errno, "rootfs '%s'", rootfs);
  if (detach_host_kernfs(real, err) < 0)
    return -1;
  if (chdir(real) < 0)
    return ar_error(err, errno, "chdir '%s'", real);
  if (mount(real, "/", NULL, MS_MOVE, NULL) < 0)
    return ar_error(err, errno, "move the rootfs onto /");
  if (chroot(".") < 0)
    return ar_error(err, errno, "chroot");
  return 0;
}

static int pivot(const char *rootfs, ar_err *err)
{
  cleanup_close int oldroot = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  cleanup_close int newroot = open(rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);

  if (oldroot < 0 || newroot < 0)
    return ar_error(err, errno, "open / and the rootfs '%s'", rootfs);
  if (fchdir(newroot) < 0)
    return ar_error(err, errno, "chdir to the rootfs");
  /* pivot_root(".", "."): the old root ends up stacked under the new one, at "/". */
  if (syscall(SYS_pivot_root, ".", ".") < 0)
    return ar_error(err, errno, "pivot_root");
  if (fchdir(oldroot) < 0)
    return ar_error(err, errno, "chdir to the old root");
  /* Slave first, or the detach would propagate to the host's mounts. */
  if (mount(NULL, ".", NULL, MS_SLAVE | MS_REC, NULL) < 0)
    return ar_error(err, errno, "make the old root a slave");
  if (umount2(".", MNT_DETACH) < 0)
    return ar_error(err, errno, "detach the old root");
  return 0;
}

/* Our stdio on the host's /dev/null becomes the container's (runc's reOpenDevNull). */
static void reopen_dev_null(void)
{
  cleanup_err ar_err e = NULL;
  cleanup_close int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  cleanup_close int null = root < 0 ? -1 : ar_dev_null_open(root, O_RDWR, &e);
  struct stat st;

  if (null < 0)
    return;
  for (int fd = 0; fd < 3; fd++)
    if (fstat(fd, &st) == 0 && S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3))
      dup3(null, fd, 0);
}

int ar_mounts_pivot(const char *rootfs, bool no_pivot, ar_err *err)
{
  if ((no_pivot ? move_root(rootfs, err) : pivot(rootfs, err)) < 0)
    return -1;
  if (chdir("/") < 0)
    return ar_error(err, errno, "chdir /");
  reopen_dev_null();
  return 0;
}

/* ---- ar_mounts_finalize ---- */

/* Open path under root; ENOENT is not an error (returns -1 with *err empty). */
static int open_existing(int root, const char *path, ar_err *err)
{
  int fd = ar_openat_in_root(root, path, O_PATH, 0, err);

  if (fd < 0 && err && *err && (*err)->status == ENOENT) {
    ar_error_free(err);
    return -1;
  }
  return fd;
}

static int mask_path(int root, int *null, const char *path, ar_err *err)
{
  cleanup_close int fd = open_existing(root, path, err);
  char p[FD_PATH_LEN], q[FD_PATH_LEN];
  struct stat st;

  if (fd < 0)
    return err && *err ? -1 : 0;
  if (fstat(fd, &st) < 0)
    return ar_error(err, errno, "stat '%s'", path);
  if (S_ISDIR(st.st_mode)) {
    if (mount("tmpfs", fd_path(fd, p), "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
              NULL) < 0)
      return ar_error(err, errno, "mask '%s'", path);
    return 0;
  }
  /* Checked before use: a /dev/null that is really something else would be exposed. */
  if (*null < 0 && (*null = ar_dev_null_open(root, O_PATH, err)) < 0)
    return ar_error_wrap(err, "mask '%s'", path);
  if (mount(fd_path(*null, q), fd_path(fd, p), NULL, MS_BIND, NULL) < 0)
    return ar_error(err, errno, "mask '%s'", path);
  return 0;
}

static int readonly_path(int root, const char *path, ar_err *err)
{
  cleanup_close int fd = open_existing(root, path, err), top = -1;
  char p[FD_PATH_LEN];

  if (fd < 0)
    return err && *err ? -1 : 0;
  if (mount(fd_path(fd, p), p, NULL, MS_BIND | MS_REC, NULL) < 0)
    return ar_error(err, errno, "bind '%s' onto itself", path);
  top = ar_openat_in_root(root, path, O_PATH, 0, err);
  if (top < 0)
    return -1;
  return make_readonly(top, true, path, err);
}

/* A /dev mounted "ro" stayed writable for the devices; it turns read-only now (runc). */
static int dev_readonly(const struct ar_spec *s, int root, ar_err *err)
{
  for (size_t i = 0; i < s->n_mounts; i++) {
    const struct ar_mount *m = &s->mounts[i];
    cleanup_free char *d = m->destination ? ar_path_clean(m->destination) : NULL;
    struct ar_mount_opts o;
    cleanup_close int fd = -1;

    if (d == NULL || strcmp(d, "/dev") != 0 || !m->type || strcmp(m->type, "tmpfs") != 0)
      continue;
    if (ar_mount_opts_parse(m->options, m->n_options, &o, err) < 0)
      return -1;
    ar_mount_opts_clear(&o);
    if (!(o.flags & MS_RDONLY) || (o.flags & MS_BIND))
      continue;
    fd = ar_openat_in_root(root, "/dev", O_PATH, 0, err);
    if (fd < 0 || make_readonly(fd, false, "/dev", err) < 0)
      return -1;
  }
  return 0;
}

int ar_mounts_finalize(const struct ar_spec *s, ar_err *err)
{
  cleanup_close int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  cleanup_close int null = -1;
  unsigned long prop;

  if (root < 0)
    return ar_error(err, errno, "open /");
  /* A missing process.cwd is created (runc), while / may still be written. */
  if (s->process && s->process->cwd && *s->process->cwd) {
    int fd = ar_mkdir_in_root(root, s->process->cwd, false, err);
    if (fd < 0)
      return ar_error_wrap(err, "process.cwd");
    close(fd);
  }
  for (size_t i = 0; i < s->linux_.n_masked_paths; i++)
    if (mask_path(root, &null, s->linux_.masked_paths[i], err) < 0)
      return ar_error_wrap(err, "linux.maskedPaths");
  for (size_t i = 0; i < s->linux_.n_readonly_paths; i++)
    if (readonly_path(root, s->linux_.readonly_paths[i], err) < 0)
      return ar_error_wrap(err, "linux.readonlyPaths");
  if (dev_readonly(s, root, err) < 0)
    return -1;
  if (s->root_readonly && make_readonly(root, false, "/", err) < 0)
    return ar_error_wrap(err, "root.readonly");
  /* The propagation asked for applies to the new root too ("shared", "unbindable"). */
  if (s->linux_.rootfs_propagation && *s->linux_.rootfs_propagation &&
      ar_propagation_from_name(s->linux_.rootfs_propagation, &prop) == 0 &&
      mount(NULL, "/", NULL, prop, NULL) < 0)
    return ar_error(err, errno, "linux.rootfsPropagation: set the propagation of /");
  return 0;
}

/* ---- console ---- */

int ar_mounts_console(const char *rootfs, const char *slave_path, ar_err *err)
{
  cleanup_close int root = open(rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
  cleanup_close int src = -1;
  struct ar_in_root dst = {.fd = -1, .parent = -1};
  char p[FD_PATH_LEN], q[FD_PATH_LEN];
  struct stat st;
  int r = 0;

  if (root < 0)
    return ar_error(err, errno, "open the rootfs '%s'", rootfs);
  src = open(slave_path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
  if (src < 0 || fstat(src, &st) < 0)
    return ar_error(err, errno, "console '%s'", slave_path);
  if (!S_ISCHR(st.st_mode))
    return ar_error(err, 0, "console '%s' is not a terminal", slave_path);
  if (ar_resolve_in_root(root, "/dev/console", S_IFREG, &dst, err) < 0)
    return -1;
  if (mount(fd_path(src, q), fd_path(dst.fd, p), NULL, MS_BIND, NULL) < 0)
    r = ar_error(err, errno, "bind '%s' onto /dev/console", slave_path);
  ar_in_root_clear(&dst);
  return r;
}
