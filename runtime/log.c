#include <config.h>
#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "spec/jsonw.h"
#include "utils.h"

static int log_fd = 2;
static bool log_json;
static bool log_debug;
static bool log_to_file;

static const char *const level_names[] = {"error", "warning", "info", "debug"};

int ar_log_init(const char *path, bool json, bool debug)
{
  log_json = json;
  log_debug = debug;
  if (path != NULL && *path) {
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
      return -errno;
    log_fd = fd;
    log_to_file = true;
  }
  return 0;
}

int ar_log_fd(void)
{
  return log_fd;
}

bool ar_log_is_json(void)
{
  return log_json;
}

static void emit(enum ar_log_level level, const char *msg)
{
  char ts[64];
  ar_time_rfc3339(ts, sizeof(ts), false);
  if (log_json) {
    struct ar_jw *w = ar_jw_new(false);
    size_t len;
    char *line;
    ar_jw_map_open(w);
    ar_jw_kstr(w, "level", level_names[level]);
    ar_jw_kstr(w, "msg", msg);
    ar_jw_kstr(w, "time", ts);
    ar_jw_map_close(w);
    line = ar_jw_finish(w, &len);
    line = xrealloc(line, len + 2);
    line[len++] = '\n';
    ar_write_all(log_fd, line, len);
    free(line);
  } else {
    dprintf(log_fd, "time=\"%s\" level=%s msg=\"%s\"\n", ts, level_names[level], msg);
  }
}

void ar_log(enum ar_log_level level, const char *fmt, ...)
{
  va_list ap;
  char *msg;
  int saved = errno;
  if (level == AR_LOG_DEBUG && !log_debug)
    return;
  va_start(ap, fmt);
  if (vasprintf(&msg, fmt, ap) < 0)
    abort();
  va_end(ap);
  if (!log_to_file && !log_json && level != AR_LOG_ERROR)
    dprintf(2, "agentrun: %s: %s\n", level_names[level], msg);
  else
    emit(level, msg);
  free(msg);
  errno = saved;
}

void ar_log_error_msg(const char *msg)
{
  if (log_to_file || log_json)
    emit(AR_LOG_ERROR, msg);
  /* The caller (engine or human) may not read the log file: stderr gets it too, as runc does. */
  if (log_to_file || !log_json)
    dprintf(2, "agentrun: %s\n", msg);
}
