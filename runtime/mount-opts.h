/* Mount options of config.json ("ro", "rbind", "rshared", "mode=755" ...) -> mount(2) arguments.
 * Internal to mounts.c and devices.c. */
#ifndef AR_MOUNT_OPTS_H
#define AR_MOUNT_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

#define AR_MAX_PROPAGATION 4

struct ar_mount_opts {
  unsigned long flags; /* MS_* for mount(2), without the propagation flags */
  bool has_atime;      /* an atime option was given: do not copy the source's on remount */
  unsigned long propagation[AR_MAX_PROPAGATION]; /* each applied by its own mount(2) call */
  size_t n_propagation;
  uint64_t attr_set; /* "rro", "rnosuid" ...: mount_setattr(AT_RECURSIVE) after the mount */
  uint64_t attr_clr;
  bool tmpcopyup; /* runc's extension: copy the directory's content into the new tmpfs */
  char *data;     /* options mount(2) does not know, comma-joined, for the filesystem */
};

/* Options are applied left to right, so "ro,rw" is rw.  "idmap" and unknown recursive forms
 * are errors; anything else unknown goes to data. */
int ar_mount_opts_parse(char *const *options, size_t n, struct ar_mount_opts *ret, ar_err *err);
void ar_mount_opts_clear(struct ar_mount_opts *o);
/* "shared", "rslave" ... (linux.rootfsPropagation) -> MS_SHARED, MS_SLAVE|MS_REC ... */
int ar_propagation_from_name(const char *name, unsigned long *ret);

#endif
