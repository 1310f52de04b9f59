#include <config.h>
#include "error.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *__attribute__((format(printf, 1, 0))) vformat(const char *fmt, va_list ap)
{
  char *s = NULL;
  if (vasprintf(&s, fmt, ap) < 0)
    abort();
  return s;
}

int ar_error(ar_err *err, int status, const char *fmt, ...)
{
  va_list ap;
  char *msg, *full;

  if (err == NULL || *err != NULL)
    return -1; /* keep the first, innermost error */
  va_start(ap, fmt);
  msg = vformat(fmt, ap);
  va_end(ap);
  if (status != 0) {
    if (asprintf(&full, "%s: %s", msg, strerror(status)) < 0)
      abort();
    free(msg);
    msg = full;
  }
  ar_error_set_raw(err, status, msg);
  free(msg);
  return -1;
}

int ar_error_set_raw(ar_err *err, int status, const char *msg)
{
  struct ar_error *e;

  if (err == NULL)
    return -1;
  ar_error_free(err);
  e = calloc(1, sizeof(*e));
  if (e == NULL || (e->msg = strdup(msg)) == NULL)
    abort();
  e->status = status;
  *err = e;
  return -1;
}

int ar_error_wrap(ar_err *err, const char *fmt, ...)
{
  va_list ap;
  char *prefix, *full;

  if (err == NULL || *err == NULL)
    return -1;
  va_start(ap, fmt);
  prefix = vformat(fmt, ap);
  va_end(ap);
  if (asprintf(&full, "%s: %s", prefix, (*err)->msg) < 0)
    abort();
  free(prefix);
  free((*err)->msg);
  (*err)->msg = full;
  return -1;
}

void ar_error_free(ar_err *err)
{
  if (err == NULL || *err == NULL)
    return;
  free((*err)->msg);
  free(*err);
  *err = NULL;
}

void ar_error_move(ar_err *dst, ar_err *src)
{
  ar_error_free(dst);
  *dst = *src;
  *src = NULL;
}
