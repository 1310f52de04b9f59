/* Terminals: the pty made in the container, the console socket, and the proxy for `run -t`. */
#ifndef AR_TERMINAL_H
#define AR_TERMINAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

/* In the child: open a pty from the devpts at /dev/pts of the current root; *ret_master and
 * *ret_slave are fds.  The slave's path is written to slave_path (for /dev/console). */
int ar_pty_open(int *ret_master, int *ret_slave, char *slave_path, size_t len, ar_err *err);
/* Make fd the controlling terminal and stdio of the calling process, and set its size.
 * slave itself stays open (the caller closes it if it is not 0, 1 or 2). */
int ar_pty_become_stdio(int slave, uint32_t rows, uint32_t cols, bool has_size, ar_err *err);
/* Give our stdio (the pty, pipes...) to uid before switching to it, so the process can use
 * its terminal; /dev/null and what cannot be changed in a user namespace are left (runc). */
int ar_stdio_chown(uint32_t uid, ar_err *err);
/* Send fd over a unix socket with SCM_RIGHTS (returns the data bytes sent) / receive one
 * (CLOEXEC).  data/len travel along
 * (one NUL byte when len is 0); on receipt data is NUL-terminated when there is room. */
int ar_send_fd(int sock, int fd, const void *data, size_t len, ar_err *err);
int ar_recv_fd(int sock, int *ret_fd, void *data, size_t len, ar_err *err);
/* Connect to the --console-socket path and send the master. */
int ar_console_socket_send(const char *path, int master, ar_err *err);
/* Copy between our stdio and the master until the master closes (foreground run with a tty). */
int ar_pty_proxy(int master, ar_err *err);

#endif
