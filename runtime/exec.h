#ifndef AR_EXEC_H
#define AR_EXEC_H

#include "container.h"

struct ar_exec_opts {
  const char *id;
  const char *process_file; /* --process: a process.json ("-" for stdin) */
  const char *console_socket;
  const char *pid_file;
  const char *cwd;
  const char *user;          /* "UID[:GID]" */
  const char *apparmor;
  const char *process_label;
  char **args;
  size_t n_args;
  char **env; /* -e K=V, added to (or replacing in) the container's env */
  size_t n_env;
  char **caps; /* --cap CAP_X, added to every set */
  size_t n_caps;
  uint32_t *gids; /* --additional-gids */
  size_t n_gids;
  bool tty;
  bool detach;
  bool no_new_privs;
  bool ignore_paused;
  int preserve_fds;
};

/* The process to run: --process, or the container's own process with the CLI's changes. */
int ar_exec_build_process(const struct ar_spec *s, const struct ar_exec_opts *o,
                          struct ar_process **ret, ar_err *err);
int ar_container_exec(const struct ar_ctx *ctx, const struct ar_exec_opts *o, int *ret_code,
                      ar_err *err);

#endif
