#ifndef AR_SANDBOX_H
#define AR_SANDBOX_H

#include <stdbool.h>
#include <stdint.h>

#include "spec/spec.h"

struct ar_sandbox_opts {
  const char *rootfs;  /* NULL: the embedded rootfs (the host's system dirs, read-only) */
  const char *workdir; /* bound rw at /workspace, and the cwd */
  char **mounts;       /* SRC:DST[:ro|:rw] */
  size_t n_mounts;
  char **env; /* K=V */
  size_t n_env;
  const char *timeout, *memory, *pids, *cpus, *tmp_size, *net; /* as annotations */
  uint32_t uid, gid;
  bool tty;
  char **argv;
  size_t n_argv;
};

/* The job's spec; rootfs_dir is an empty directory for the embedded rootfs. */
int ar_sandbox_spec(const struct ar_sandbox_opts *o, const char *rootfs_dir, struct ar_spec **ret,
                    ar_err *err);

#endif
