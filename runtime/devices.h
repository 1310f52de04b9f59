/* Device nodes in the container's /dev, and a /dev/null that has been checked. */
#ifndef AR_DEVICES_H
#define AR_DEVICES_H

#include <stdbool.h>

#include "spec/spec.h"

/* False when the config bind-mounts /dev: that /dev is the caller's and stays as it is. */
bool ar_devices_needed(const struct ar_spec *s);
/* Before pivot_root, under rootfs_fd: the default devices (null zero full random urandom tty,
 * 0666) and linux.devices (an entry wins over a default of the same path), by mknod, or by
 * bind-mounting the host's node where mknod is not allowed (user namespace); then
 * /dev/ptmx -> pts/ptmx, /dev/fd, stdin, stdout, stderr (and core) -> /proc/..., /dev/shm. */
int ar_devices_setup(const struct ar_spec *s, int rootfs_fd, ar_err *err);
/* Open <root>/dev/null with flags (plus O_NOFOLLOW) and check that it is the char device 1:3.
 * Anything else is an error: bound over a masked path, it would expose what it really is. */
int ar_dev_null_open(int root_fd, int flags, ar_err *err);

/* Append the allow rules every container gets (runtime/device-rules.c). */
void ar_device_rules_complete(struct ar_spec *s);

#endif
