/* Typed messages between the runtime (parent) and the container's init (child), over a
 * SOCK_SEQPACKET socketpair.  The numbered sync points are marked at both ends. */
#ifndef AR_SYNC_H
#define AR_SYNC_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

enum ar_sync_type {
  AR_SYNC_MAPS_DONE = 1, /* parent: uid/gid maps written (sync 1) */
  AR_SYNC_HOOKS_REQ,     /* child: namespaces and mounts exist, run prestart+createRuntime (sync 2) */
  AR_SYNC_HOOKS_DONE,    /* parent: hooks ran (sync 3) */
  AR_SYNC_PTY,           /* child: the pty master travels with this message */
  AR_SYNC_LISTENER,      /* child: a seccomp listener fd travels with this message */
  AR_SYNC_READY,         /* child: set up, now waiting for `start` (sync 4) */
  AR_SYNC_ERROR,         /* child: failed; carries errno and the message */
  AR_SYNC_CHILD_PID,     /* child: the real init is my child (pid in data); I exit now */
};

struct ar_sync_msg {
  uint32_t type;
  int32_t err_no;
  int fd;          /* received fd, or -1 */
  char data[32768]; /* NUL-terminated */
};

int ar_sync_send(int sock, enum ar_sync_type type, int err_no, const char *data, int fd,
                 ar_err *err);
/* Receive one message; EOF is an error saying the other side went away. */
int ar_sync_recv(int sock, struct ar_sync_msg *msg, ar_err *err);
/* Receive and check the type; an AR_SYNC_ERROR becomes *err with the child's message. */
int ar_sync_expect(int sock, enum ar_sync_type type, struct ar_sync_msg *msg, ar_err *err);
/* Child side: report err to the parent (best effort). */
void ar_sync_send_error(int sock, ar_err err);

#endif
