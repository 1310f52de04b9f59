/* The parent side of a container's life: create, start, kill, delete, and the pieces `run`,
 * `exec` and `sandbox` share.  This file orchestrates; the syscalls live in the stage files. */
#ifndef AR_CONTAINER_H
#define AR_CONTAINER_H

#include <stdbool.h>
#include <sys/types.h>

#include "spec/spec.h"
#include "spec/state.h"

/* Global options, from main. */
struct ar_ctx {
  const char *root;
  bool systemd_cgroup;
  bool debug;
  const char *policy_path;
};

struct ar_create_opts {
  const char *id;
  const char *bundle;
  const char *pid_file;
  const char *console_socket;
  bool no_pivot;
  bool no_new_keyring;
  int preserve_fds;
  bool foreground; /* `run` without -d: a terminal without a console socket is proxied */
  const char *audit_path; /* sandbox --audit: this file instead of the policy's audit dir */
};

/* What create hands back to `run`: the init is our child. */
struct ar_container {
  struct ar_state *state;
  struct ar_spec *spec;
  pid_t pid;
  int pty_master; /* -1 unless foreground with a terminal */
};

int ar_container_create(const struct ar_ctx *ctx, const struct ar_create_opts *o,
                        struct ar_container **ret, ar_err *err);
int ar_container_start(const struct ar_ctx *ctx, const char *id, ar_err *err);
int ar_container_kill(const struct ar_ctx *ctx, const char *id, int sig, bool all, ar_err *err);
int ar_container_delete(const struct ar_ctx *ctx, const char *id, bool force, ar_err *err);
void ar_container_free(struct ar_container *c);

/* The effective spec saved at create (state dir/config.json). */
int ar_container_load_spec(const struct ar_ctx *ctx, const char *id, struct ar_spec **ret,
                           ar_err *err);
/* Run a phase's hooks with the container's state document on stdin. */
int ar_container_hooks(const struct ar_spec *s, const struct ar_state *st, enum ar_hook_phase ph,
                       const char *status, ar_err *err);
/* Write path atomically with the pid in decimal, as runc does. */
int ar_write_pid_file(const char *path, pid_t pid, ar_err *err);

#endif
