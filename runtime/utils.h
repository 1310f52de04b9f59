/* Small helpers shared by every part of agentrun: cleanup attributes, allocation, files. */
#ifndef AR_UTILS_H
#define AR_UTILS_H

#include <dirent.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>
#include <unistd.h>

#include "error.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static inline void cleanup_freep(void *p)
{
  free(*(void **)p);
}
static inline void cleanup_closep(int *fd)
{
  if (*fd >= 0)
    close(*fd);
}
static inline void cleanup_filep(FILE **f)
{
  if (*f)
    fclose(*f);
}
static inline void cleanup_dirp(DIR **d)
{
  if (*d)
    closedir(*d);
}
void ar_strv_free(char **v);
static inline void cleanup_strvp(char ***v)
{
  ar_strv_free(*v);
}

#define cleanup_free __attribute__((cleanup(cleanup_freep)))
#define cleanup_close __attribute__((cleanup(cleanup_closep)))
#define cleanup_file __attribute__((cleanup(cleanup_filep)))
#define cleanup_dir __attribute__((cleanup(cleanup_dirp)))
#define cleanup_strv __attribute__((cleanup(cleanup_strvp)))
#define cleanup_err __attribute__((cleanup(ar_error_free)))

static inline void *ar_steal(void *pp)
{
  void **p = pp, *v = *p;
  *p = NULL;
  return v;
}
#define steal_pointer(pp) ar_steal(pp)

static inline int ar_steal_fd(int *fd)
{
  int v = *fd;
  *fd = -1;
  return v;
}

/* Close fd if open and return -1, for `fd = close_and_reset(fd)`. */
int close_and_reset(int fd);

/* Allocation failure is not recoverable in a runtime this small: abort. */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t sz);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
size_t ar_strv_len(char *const *v);
char **ar_strv_dup(char *const *v, size_t n);

/* Whole-buffer I/O that retries on EINTR and short writes. */
ssize_t ar_write_all(int fd, const void *buf, size_t len);
ssize_t ar_read_all(int fd, void *buf, size_t len);
int ar_read_file(const char *path, char **ret, size_t *ret_len, ar_err *err);
int ar_read_fd(int fd, char **ret, size_t *ret_len, ar_err *err);
int ar_write_file(const char *path, const char *data, size_t len, int mode, ar_err *err);
int ar_write_file_at(int dirfd, const char *name, const char *data, size_t len, ar_err *err);
/* Write to path.tmp and rename over path, so readers never see half a file. */
int ar_write_file_atomic(const char *path, const char *data, size_t len, int mode, ar_err *err);
int ar_mkdir_p(const char *path, int mode, ar_err *err);
/* Remove a directory tree without crossing into other mounts. */
int ar_rm_rf(const char *path, ar_err *err);

/* "30s", "2m", "1h", bare seconds -> milliseconds. */
int ar_parse_duration_ms(const char *s, uint64_t *ret);
/* "512m", "1g", "4096", "64k" -> bytes. */
int ar_parse_size(const char *s, uint64_t *ret);
int ar_parse_uint64(const char *s, uint64_t *ret);
int ar_parse_int64(const char *s, int64_t *ret);

/* RFC 3339 with microseconds, UTC, from CLOCK_REALTIME. */
void ar_time_rfc3339(char *buf, size_t len, bool micro);
uint64_t ar_now_ns(int clock);

/* Close every fd >= from except those in keep[], and mark them CLOEXEC where closing is unsafe. */
int ar_close_fds_from(int from);

#endif
