#include <config.h>
#include "utils.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <time.h>

void *xmalloc(size_t n)
{
  void *p = malloc(n ? n : 1);
  if (p == NULL)
    abort();
  return p;
}

void *xcalloc(size_t n, size_t sz)
{
  void *p = calloc(n ? n : 1, sz ? sz : 1);
  if (p == NULL)
    abort();
  return p;
}

void *xrealloc(void *p, size_t n)
{
  p = realloc(p, n ? n : 1);
  if (p == NULL)
    abort();
  return p;
}

char *xstrdup(const char *s)
{
  char *r;
  if (s == NULL)
    return NULL;
  r = strdup(s);
  if (r == NULL)
    abort();
  return r;
}

char *xstrndup(const char *s, size_t n)
{
  char *r = strndup(s, n);
  if (r == NULL)
    abort();
  return r;
}

char *xasprintf(const char *fmt, ...)
{
  va_list ap;
  char *s;
  va_start(ap, fmt);
  if (vasprintf(&s, fmt, ap) < 0)
    abort();
  va_end(ap);
  return s;
}

void ar_strv_free(char **v)
{
  if (v == NULL)
    return;
  for (char **p = v; *p; p++)
    free(*p);
  free(v);
}

size_t ar_strv_len(char *const *v)
{
  size_t n = 0;
  while (v && v[n])
    n++;
  return n;
}

char **ar_strv_dup(char *const *v, size_t n)
{
  char **r = xcalloc(n + 1, sizeof(char *));
  for (size_t i = 0; i < n; i++)
    r[i] = xstrdup(v[i]);
  return r;
}

int close_and_reset(int fd)
{
  if (fd >= 0)
    close(fd);
  return -1;
}

ssize_t ar_write_all(int fd, const void *buf, size_t len)
{
  const char *p = buf;
  size_t done = 0;
  while (done < len) {
    ssize_t r = write(fd, p + done, len - done);
    if (r < 0 && errno == EINTR)
      continue;
    if (r < 0)
      return -1;
    done += r;
  }
  return done;
}

ssize_t ar_read_all(int fd, void *buf, size_t len)
{
  char *p = buf;
  size_t done = 0;
  while (done < len) {
    ssize_t r = read(fd, p + done, len - done);
    if (r < 0 && errno == EINTR)
      continue;
    if (r < 0)
      return -1;
    if (r == 0)
      break;
    done += r;
  }
  return done;
}

int ar_read_fd(int fd, char **ret, size_t *ret_len, ar_err *err)
{
  size_t cap = 4096, len = 0;
  char *buf = xmalloc(cap);
  for (;;) {
    ssize_t r;
    if (cap - len < 2)
      buf = xrealloc(buf, cap *= 2);
    r = read(fd, buf + len, cap - len - 1);
    if (r < 0 && errno == EINTR)
      continue;
    if (r < 0) {
      int e = errno;
      free(buf);
      return ar_error(err, e, "read");
    }
    if (r == 0)
      break;
    len += r;
  }
  buf[len] = '\0';
  *ret = buf;
  if (ret_len)
    *ret_len = len;
  return 0;
}

int ar_read_file(const char *path, char **ret, size_t *ret_len, ar_err *err)
{
  cleanup_close int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return ar_error(err, errno, "open '%s'", path);
  if (ar_read_fd(fd, ret, ret_len, err) < 0)
    return ar_error_wrap(err, "'%s'", path);
  return 0;
}

int ar_write_file_at(int dirfd, const char *name, const char *data, size_t len, ar_err *err)
{
  cleanup_close int fd = openat(dirfd, name, O_WRONLY | O_CLOEXEC | O_TRUNC);
  if (fd < 0)
    return ar_error(err, errno, "open '%s'", name);
  if (ar_write_all(fd, data, len) < 0)
    return ar_error(err, errno, "write '%s'", name);
  return 0;
}

int ar_write_file(const char *path, const char *data, size_t len, int mode, ar_err *err)
{
  int flags = O_WRONLY | O_CLOEXEC | O_TRUNC | (mode ? O_CREAT : 0);
  cleanup_close int fd = open(path, flags, mode);
  if (fd < 0)
    return ar_error(err, errno, "open '%s'", path);
  if (ar_write_all(fd, data, len) < 0)
    return ar_error(err, errno, "write '%s'", path);
  return 0;
}

int ar_write_file_atomic(const char *path, const char *data, size_t len, int mode, ar_err *err)
{
  cleanup_free char *tmp = xasprintf("%s.tmp%d", path, (int)getpid());
  if (ar_write_file(tmp, data, len, mode ? mode : 0644, err) < 0)
    return -1;
  if (rename(tmp, path) < 0) {
    int e = errno;
    unlink(tmp);
    return ar_error(err, e, "rename '%s'", path);
  }
  return 0;
}

int ar_mkdir_p(const char *path, int mode, ar_err *err)
{
  cleanup_free char *p = xstrdup(path);
  for (char *s = p + 1; *s; s++) {
    if (*s != '/')
      continue;
    *s = '\0';
    if (mkdir(p, mode) < 0 && errno != EEXIST)
      return ar_error(err, errno, "mkdir '%s'", p);
    *s = '/';
  }
  if (mkdir(p, mode) < 0 && errno != EEXIST)
    return ar_error(err, errno, "mkdir '%s'", p);
  return 0;
}

static int rm_rf_at(int parent, const char *name, dev_t dev, ar_err *err)
{
  struct stat st;
  if (fstatat(parent, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
    return errno == ENOENT ? 0 : ar_error(err, errno, "stat '%s'", name);
  if (S_ISDIR(st.st_mode)) {
    int fd;
    DIR *d;
    struct dirent *de;
    if (st.st_dev != dev)
      return ar_error(err, EBUSY, "'%s' is a mount point", name);
    fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
      return ar_error(err, errno, "open '%s'", name);
    d = fdopendir(fd);
    if (d == NULL) {
      close(fd);
      return ar_error(err, errno, "opendir '%s'", name);
    }
    while ((de = readdir(d)) != NULL) {
      if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
        continue;
      if (rm_rf_at(dirfd(d), de->d_name, dev, err) < 0) {
        closedir(d);
        return -1;
      }
    }
    closedir(d);
    if (unlinkat(parent, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
      return ar_error(err, errno, "rmdir '%s'", name);
    return 0;
  }
  if (unlinkat(parent, name, 0) < 0 && errno != ENOENT)
    return ar_error(err, errno, "unlink '%s'", name);
  return 0;
}

int ar_rm_rf(const char *path, ar_err *err)
{
  struct stat st;
  if (lstat(path, &st) < 0)
    return errno == ENOENT ? 0 : ar_error(err, errno, "stat '%s'", path);
  return rm_rf_at(AT_FDCWD, path, st.st_dev, err);
}

int ar_parse_uint64(const char *s, uint64_t *ret)
{
  char *end;
  unsigned long long v;
  if (s == NULL || !isdigit((unsigned char)*s))
    return -1;
  errno = 0;
  v = strtoull(s, &end, 10);
  if (errno || *end)
    return -1;
  *ret = v;
  return 0;
}

int ar_parse_int64(const char *s, int64_t *ret)
{
  char *end;
  long long v;
  if (s == NULL || *s == '\0')
    return -1;
  errno = 0;
  v = strtoll(s, &end, 10);
  if (errno || *end)
    return -1;
  *ret = v;
  return 0;
}

/* A number followed by an optional unit; the unit table gives multipliers. */
static int parse_scaled(const char *s, const char *const *units, const uint64_t *mult, size_t n,
                        uint64_t *ret)
{
  char *end;
  unsigned long long v;
  if (s == NULL || !isdigit((unsigned char)*s))
    return -1;
  errno = 0;
  v = strtoull(s, &end, 10);
  if (errno)
    return -1;
  for (size_t i = 0; i < n; i++) {
    if (strcasecmp(end, units[i]) == 0) {
      if (mult[i] && v > UINT64_MAX / mult[i])
        return -1;
      *ret = v * mult[i];
      return 0;
    }
  }
  return -1;
}

int ar_parse_duration_ms(const char *s, uint64_t *ret)
{
  static const char *const units[] = {"", "s", "ms", "m", "h"};
  static const uint64_t mult[] = {1000, 1000, 1, 60000, 3600000};
  return parse_scaled(s, units, mult, ARRAY_SIZE(units), ret);
}

int ar_parse_size(const char *s, uint64_t *ret)
{
  static const char *const units[] = {"", "b", "k", "kb", "kib", "m", "mb", "mib",
                                      "g", "gb", "gib", "t", "tb", "tib"};
  static const uint64_t mult[] = {1,        1,        1ULL << 10, 1ULL << 10, 1ULL << 10,
                                  1ULL << 20, 1ULL << 20, 1ULL << 20, 1ULL << 30, 1ULL << 30,
                                  1ULL << 30, 1ULL << 40, 1ULL << 40, 1ULL << 40};
  return parse_scaled(s, units, mult, ARRAY_SIZE(units), ret);
}

void ar_time_rfc3339(char *buf, size_t len, bool micro)
{
  struct timespec ts;
  struct tm tm;
  size_t n;
  clock_gettime(CLOCK_REALTIME, &ts);
  gmtime_r(&ts.tv_sec, &tm);
  n = strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm);
  if (micro)
    snprintf(buf + n, len - n, ".%06ldZ", ts.tv_nsec / 1000);
  else
    snprintf(buf + n, len - n, ".%09ldZ", ts.tv_nsec);
}

uint64_t ar_now_ns(int clock)
{
  struct timespec ts;
  clock_gettime(clock, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

int ar_close_fds_from(int from)
{
#ifdef SYS_close_range
  if (syscall(SYS_close_range, from, ~0U, 0) == 0)
    return 0;
#endif
  for (int fd = from; fd < 65536; fd++)
    close(fd);
  return 0;
}
