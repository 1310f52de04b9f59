/* The child side: a list of stages run inside the new namespaces, ending in execve. */
#ifndef AR_INIT_H
#define AR_INIT_H

#include <stdbool.h>

#include "caps.h"
#include "namespaces.h"
#include "seccomp.h"
#include "spec/spec.h"

struct ar_init_args {
  const struct ar_spec *spec;
  const struct ar_process *process;
  const char *id;
  const char *rootfs;
  const char *bundle;
  int sync_fd;
  int fifo_fd;        /* the exec fifo, open O_RDWR; -1 for exec */
  int lock_fd;        /* the state dir lock: the parent's alone, closed at once */
  bool is_exec;       /* join an existing container: no mounts, no fifo */
  bool no_pivot;
  bool no_new_keyring;
  bool hooks_sync;    /* ask the parent to run prestart/createRuntime hooks */
  int preserve_fds;
  struct ar_ns_plan *ns;
  const struct ar_bpf *bpf;       /* the config's filter; NULL: none */
  const struct ar_bpf *agent_bpf; /* the policy's filter, stacked on top; NULL: none */
  int mon_fd;                     /* where the agent filter's listener goes; -1: nowhere */
  bool net_unshare;               /* policy: a fresh netns after the hooks ran */
  bool net_lo_up;                 /* policy: bring lo up in the job's netns */
  struct ar_capmask caps;
  bool has_caps;
  const int *cg_tasks; /* v1 `tasks` files to write "0" to, first thing (cgroup.h) */
  size_t n_cg_tasks;
};

void ar_init_main(struct ar_init_args *a) __attribute__((noreturn));

#endif
