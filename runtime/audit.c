#include <config.h>
#include "audit.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
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

int ar_audit_end(struct ar_audit *a, struct ar_jw *w, bool final)
{
  size_t len;
  char *line;
  uint64_t limit;
  ar_jw_map_close(w);
  line = ar_jw_finish(w, &len);
  line = xrealloc(line, len + 2);
  line[len++] = '\n';
  limit = a->max_bytes ? (final ? a->max_bytes : a->max_bytes - FINAL_RESERVE) : UINT64_MAX;
  if (a->max_bytes && a->max_bytes < 2 * FINAL_RESERVE)
    limit = a->max_bytes;
  if (a->fd < 0 || a->written + len > limit) {
    a->dropped++;
    free(line);
    return 0;
  }
  /* A full disk: count the loss and go on; the container is not held back. */
  if (ar_write_all(a->fd, line, len) < 0)
    a->dropped++;
  else
    a->written += len;
  if (a->syslog) {
    line[len - 1] = '\0';
    syslog(LOG_INFO | LOG_AUTHPRIV, "%s", line);
  }
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
