/* Errors: one object carried up the call chain and printed once, at the top. */
#ifndef AR_ERROR_H
#define AR_ERROR_H

#include <stdarg.h>

struct ar_error {
  int status; /* errno, or 0 when the error is not a system call's */
  char *msg;
};
typedef struct ar_error *ar_err;

/* Fill *err (if it is empty) and return -1.  With status != 0 the message gets ": strerror". */
int ar_error(ar_err *err, int status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Prefix the message in *err with more context, and return -1. */
int ar_error_wrap(ar_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Replace *err wholesale (used when the child relays its error). */
int ar_error_set_raw(ar_err *err, int status, const char *msg);
void ar_error_free(ar_err *err);
/* Hand *err to the caller's caller: frees what *dst held. */
void ar_error_move(ar_err *dst, ar_err *src);

#endif
