/* Paths inside the container's root, resolved so that no symlink and no ".." leads out of it.
 *
 * ar_resolve_in_root() walks one component at a time from fds it already holds: each step is an
 * openat(O_PATH|O_NOFOLLOW) of a single name, symlinks are read and re-walked by us with the
 * root as "/", and ".." pops our own stack.  That is what openat2(RESOLVE_IN_ROOT) does in the
 * kernel, plus what it cannot do: create the missing components on the way, and tell us the
 * parent and the symlink-free path.  ar_openat_in_root() is openat2(RESOLVE_IN_ROOT) itself. */
#include <config.h>
#include "mounts.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "utils.h"

#ifndef SYS_openat2
#define SYS_openat2 437
#endif

#define MAX_SYMLINKS 40

struct walk {
  int *fds;     /* fds[0] is the root, fds[depth] the current directory */
  char **names; /* names[i]: the component that led to fds[i] */
  size_t depth, cap;
  int links;
};

static void walk_push(struct walk *w, int fd, const char *name)
{
  if (w->depth + 1 >= w->cap) {
    w->cap = w->cap ? w->cap * 2 : 16;
    w->fds = xrealloc(w->fds, w->cap * sizeof(*w->fds));
    w->names = xrealloc(w->names, w->cap * sizeof(*w->names));
  }
  w->depth++;
  w->fds[w->depth] = fd;
  w->names[w->depth] = xstrdup(name);
}

static void walk_pop(struct walk *w)
{
  if (w->depth == 0)
    return; /* ".." at the root stays at the root */
  if (w->fds[w->depth] >= 0)
    close(w->fds[w->depth]);
  free(w->names[w->depth]);
  w->depth--;
}

static void walk_free(struct walk *w)
{
  while (w->depth > 0)
    walk_pop(w);
  if (w->fds && w->fds[0] >= 0)
    close(w->fds[0]);
  free(w->fds);
  free(w->names);
}

/* Cut the next component out of *rest (in place); NULL when there is none left. */
static char *next_component(char **rest)
{
  char *p = *rest, *end;

  while (*p == '/')
    p++;
  if (*p == '\0') {
    *rest = p;
    return NULL;
  }
  end = strchr(p, '/');
  if (end) {
    *end = '\0';
    *rest = end + 1;
  } else {
    *rest = p + strlen(p);
  }
  return p;
}

/* Nothing but "/" and "." left: the component just taken is the last one. */
static bool is_last(const char *s)
{
  for (;;) {
    s += strspn(s, "/");
    if (*s == '\0')
      return true;
    if (s[0] != '.' || (s[1] != '/' && s[1] != '\0'))
      return false;
    s++;
  }
}

static char *walk_path(const struct walk *w)
{
  char *p = xstrdup("");

  for (size_t i = 1; i <= w->depth; i++) {
    char *q = xasprintf("%s/%s", p, w->names[i]);
    free(p);
    p = q;
  }
  if (*p == '\0') {
    free(p);
    p = xstrdup("/");
  }
  return p;
}

static int create_missing(struct walk *w, const char *name, int create, bool last, const char *path,
                          ar_err *err)
{
  int fd;

  if (last && create == S_IFREG) {
    fd = openat(w->fds[w->depth], name, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0 && errno != EEXIST)
      return ar_error(err, errno, "create '%s' in the rootfs (for '%s')", name, path);
    if (fd >= 0)
      close(fd);
    return 0;
  }
  if (mkdirat(w->fds[w->depth], name, 0755) < 0 && errno != EEXIST)
    return ar_error(err, errno, "mkdir '%s' in the rootfs (for '%s')", name, path);
  return 0;
}

/* Replace *buf and *rest by the symlink's target followed by what was left to walk. */
static int follow_symlink(struct walk *w, int fd, char **buf, char **rest, const char *path,
                          ar_err *err)
{
  char target[PATH_MAX];
  ssize_t n;
  char *nbuf;

  if (++w->links > MAX_SYMLINKS)
    return ar_error(err, ELOOP, "resolve '%s' in the rootfs", path);
  n = readlinkat(fd, "", target, sizeof(target) - 1);
  if (n < 0)
    return ar_error(err, errno, "readlink in the rootfs (for '%s')", path);
  target[n] = '\0';
  if (target[0] == '/') /* absolute: from the container's root, not the host's */
    while (w->depth > 0)
      walk_pop(w);
  nbuf = xasprintf("%s/%s", target, *rest);
  free(*buf);
  *buf = nbuf;
  *rest = nbuf;
  return 0;
}

/* One component: returns 1 when it was a symlink that has been queued, 0 when pushed. */
static int walk_step(struct walk *w, char *name, char **buf, char **rest, int create,
                     const char *path, bool *created, ar_err *err)
{
  bool last = is_last(*rest);
  cleanup_close int fd = -1;
  struct stat st;

  fd = openat(w->fds[w->depth], name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT && create) {
    if (create_missing(w, name, create, last, path, err) < 0)
      return -1;
    *created = last;
    fd = openat(w->fds[w->depth], name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
  }
  if (fd < 0)
    return ar_error(err, errno, "open '%s' in the rootfs (for '%s')", name, path);
  if (fstat(fd, &st) < 0)
    return ar_error(err, errno, "stat '%s' in the rootfs (for '%s')", name, path);
  if (S_ISLNK(st.st_mode)) {
    *created = false;
    return follow_symlink(w, fd, buf, rest, path, err) < 0 ? -1 : 1;
  }
  if (!last && !S_ISDIR(st.st_mode))
    return ar_error(err, ENOTDIR, "resolve '%s' in the rootfs: '%s'", path, name);
  walk_push(w, ar_steal_fd(&fd), name);
  return 0;
}

int ar_resolve_in_root(int rootfs_fd, const char *path, int create, struct ar_in_root *ret,
                       ar_err *err)
{
  struct walk w = {0};
  char *buf = xstrdup(path), *rest = buf, *name;
  bool created = false;
  int r = 0;

  w.cap = 16;
  w.fds = xcalloc(w.cap, sizeof(*w.fds));
  w.names = xcalloc(w.cap, sizeof(*w.names));
  w.fds[0] = openat(rootfs_fd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (w.fds[0] < 0)
    r = ar_error(err, errno, "open the rootfs");
  while (r >= 0 && (name = next_component(&rest)) != NULL) {
    if (strcmp(name, ".") == 0)
      continue;
    if (strcmp(name, "..") == 0) {
      walk_pop(&w);
      continue;
    }
    r = walk_step(&w, name, &buf, &rest, create, path, &created, err);
  }
  free(buf);
  if (r < 0) {
    walk_free(&w);
    return -1;
  }
  ret->path = walk_path(&w);
  ret->created = created && w.depth > 0;
  ret->fd = ar_steal_fd(&w.fds[w.depth]);
  ret->parent = w.depth > 0 ? ar_steal_fd(&w.fds[w.depth - 1]) : -1;
  ret->name = w.depth > 0 ? steal_pointer(&w.names[w.depth]) : NULL;
  walk_free(&w);
  return 0;
}

void ar_in_root_clear(struct ar_in_root *r)
{
  if (r->fd >= 0)
    close(r->fd);
  if (r->parent >= 0)
    close(r->parent);
  free(r->name);
  free(r->path);
  r->fd = r->parent = -1;
  r->name = r->path = NULL;
}

int ar_in_root_reopen(const struct ar_in_root *r, int flags, ar_err *err)
{
  int fd;

  if (r->parent < 0)
    fd = openat(r->fd, ".", flags | O_CLOEXEC);
  else
    fd = openat(r->parent, r->name, flags | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return ar_error(err, errno, "reopen '%s' in the rootfs", r->path);
  return fd;
}

int ar_mkdir_in_root(int rootfs_fd, const char *path, bool is_file, ar_err *err)
{
  struct ar_in_root r;

  if (ar_resolve_in_root(rootfs_fd, path, is_file ? S_IFREG : S_IFDIR, &r, err) < 0)
    return -1;
  int fd = ar_steal_fd(&r.fd);
  ar_in_root_clear(&r);
  return fd;
}

/* Without openat2: walk to the parent (or the whole path) ourselves, then open. */
static int openat_in_root_walk(int rootfs_fd, const char *path, int flags, int mode, ar_err *err)
{
  struct ar_in_root r;
  cleanup_free char *dir = xstrdup(path);
  char *slash, *base;
  int fd;

  if (!(flags & (O_CREAT | O_NOFOLLOW))) {
    if (ar_resolve_in_root(rootfs_fd, path, 0, &r, err) < 0)
      return -1;
    cleanup_free char *proc = xasprintf("/proc/self/fd/%d", r.fd);
    fd = (flags & O_PATH) ? ar_steal_fd(&r.fd) : open(proc, flags | O_CLOEXEC, mode);
    ar_in_root_clear(&r);
    return fd < 0 ? ar_error(err, errno, "open '%s' in the rootfs", path) : fd;
  }
  while ((slash = strrchr(dir, '/')) != NULL && slash[1] == '\0' && slash != dir)
    *slash = '\0';
  slash = strrchr(dir, '/');
  base = slash ? slash + 1 : dir;
  if (slash)
    *slash = '\0';
  if (ar_resolve_in_root(rootfs_fd, slash ? dir : ".", 0, &r, err) < 0)
    return -1;
  fd = openat(r.fd, *base ? base : ".", flags | O_NOFOLLOW | O_CLOEXEC, mode);
  ar_in_root_clear(&r);
  return fd < 0 ? ar_error(err, errno, "open '%s' in the rootfs", path) : fd;
}

int ar_openat_in_root(int rootfs_fd, const char *path, int flags, int mode, ar_err *err)
{
  struct open_how how = {
      .flags = (uint64_t)(flags | O_CLOEXEC),
      .mode = (flags & (O_CREAT | O_TMPFILE)) ? (uint64_t)mode : 0,
      .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
  };
  long fd;
  int tries = 0;

  do
    fd = syscall(SYS_openat2, rootfs_fd, path, &how, sizeof(how));
  while (fd < 0 && errno == EAGAIN && ++tries < 16); /* a rename raced with "..": retry */
  if (fd < 0 && (errno == ENOSYS || errno == E2BIG))
    return openat_in_root_walk(rootfs_fd, path, flags, mode, err);
  if (fd < 0)
    return ar_error(err, errno, "open '%s' in the rootfs", path);
  return (int)fd;
}

char *ar_path_clean(const char *path)
{
  char *out = xmalloc(strlen(path) + 2), *o = out;

  for (const char *q = path; *q;) {
    size_t n;

    while (*q == '/')
      q++;
    n = strcspn(q, "/");
    if (n > 0 && !(n == 1 && q[0] == '.')) {
      *o++ = '/';
      memcpy(o, q, n);
      o += n;
    }
    q += n;
  }
  if (o == out)
    *o++ = '/';
  *o = '\0';
  return out;
}
