/* The TAP printer the C unit tests share: `ok(cond, "what")`, then exit with n_failed != 0. */
#ifndef AR_TEST_TAP_H
#define AR_TEST_TAP_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

static int n_tests, n_failed;

static void __attribute__((format(printf, 2, 3), unused)) ok(bool cond, const char *fmt, ...)
{
  va_list ap;

  n_tests++;
  if (!cond)
    n_failed++;
  printf("%sok %d - ", cond ? "" : "not ", n_tests);
  va_start(ap, fmt);
  vprintf(fmt, ap);
  va_end(ap);
  printf("\n");
  fflush(stdout);
}

#endif
