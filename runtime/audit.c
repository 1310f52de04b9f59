#include <config.h>
#include "audit.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <syslog.h>
#include <time.h>

#include "utils.h"

/* Room kept below the cap for the dropped and exit lines. */
#define FINAL_RESERVE 4096

int ar_audit_open(struct ar_audit *a, const char *path, const char *id, uint64_t max_bytes,
                  bool syslog, ar_err *err)
{
  cleanup_free char *dir = xstrdup(path);
  char *slash = strrchr(dir, '/');
  struct stat st;
  memset(a, 0, sizeof(*a));
  a->fd = -1;
  if (slash && slash != dir) {
    *slash = '\0';
    if (ar_mkdir_p(dir, 0750, err) < 0)
      return ar_error_wrap(err, "audit dir");
  }
  a->fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0640);
  if (a->fd < 0)
    return ar_error(err, errno, "audit log '%s'", path);
  if (fstat(a->fd, &st) == 0)
    a->written = st.st_size;
  a->id = id;
  a->max_bytes = max_bytes;
  a->syslog = syslog;
  return 0;
}

struct ar_jw *ar_audit_begin(const char *event, const char *id)
{
  struct ar_jw *w = ar_jw_new(false);
  char ts[64];
  ar_time_rfc3339(ts, sizeof(ts), true);
  ar_jw_map_open(w);
  ar_jw_kstr(w, "ts", ts);
  ar_jw_kstr(w, "event", event);
  ar_jw_kstr(w, "id", id);
  return w;
}

/* One write(2) for the line and its newline: O_APPEND keeps lines from agentrun's own
 * commands (start, delete) whole when they land while the monitor writes. */
static int write_line(int fd, const char *line, size_t len)
{
  struct iovec iov[2] = {{(void *)line, len}, {"\n", 1}};
  struct stat st;
  off_t start = fstat(fd, &st) == 0 ? st.st_size : -1;
  ssize_t n;
  do
    n = writev(fd, iov, 2);
  while (n < 0 && errno == EINTR);
  if (n < 0)
    return -1;
  if ((size_t)n == len + 1)
    return 0;
  /* a short write (disk full): finish it, or the next line would be glued onto this one */
  if (((size_t)n >= len || ar_write_all(fd, line + n, len - n) >= 0) &&
      ar_write_all(fd, "\n", 1) >= 0)
    return 0;
  /* it cannot be finished: take the piece back (best effort), so the log stays whole lines */
  if (start >= 0 && ftruncate(fd, start) < 0)
    errno = ENOSPC;
  return -1;
}

int ar_audit_end(struct ar_audit *a, struct ar_jw *w, bool final)
{
  struct stat st;
  size_t len;
  char *line;
  uint64_t limit;
  ar_jw_map_close(w);
  line = ar_jw_finish(w, &len);
  /* agentrun's own commands append too (create, start, delete): size the file, not our part */
  if (a->max_bytes && a->fd >= 0 && fstat(a->fd, &st) == 0)
    a->written = st.st_size;
  limit = a->max_bytes ? (final ? a->max_bytes : a->max_bytes - FINAL_RESERVE) : UINT64_MAX;
  if (a->max_bytes && a->max_bytes < 2 * FINAL_RESERVE)
    limit = a->max_bytes;
  /* once a line is dropped every later one is, but the report: the log stays a clean prefix */
  if (a->fd < 0 || (a->dropped && !final) || a->written + len + 1 > limit) {
    a->dropped++;
    free(line);
    return 0;
  }
  /* A full disk: count the loss and go on; the container is not held back. */
  if (write_line(a->fd, line, len) < 0)
    a->dropped++;
  else
    a->written += len + 1;
  if (a->syslog)
    syslog(LOG_INFO | LOG_AUTHPRIV, "%s", line);
  free(line);
  return 0;
}

void ar_audit_close(struct ar_audit *a)
{
  if (a->dropped) {
    struct ar_jw *w = ar_audit_begin("dropped", a->id);
    uint64_t n = a->dropped;
    ar_jw_kuint(w, "count", n);
    a->dropped = 0;
    ar_audit_end(a, w, true);
  }
  a->fd = close_and_reset(a->fd);
}

int ar_audit_event(const char *path, const char *id, const char *event, const char *raw_key,
                   const char *raw_json, ar_err *err)
{
  struct ar_audit a;
  struct ar_jw *w;
  if (ar_audit_open(&a, path, id, 0, false, err) < 0)
    return -1;
  w = ar_audit_begin(event, id);
  if (raw_key) {
    ar_jw_key(w, raw_key);
    ar_jw_raw(w, raw_json);
  }
  ar_audit_end(&a, w, true);
  ar_audit_close(&a);
  return 0;
}
