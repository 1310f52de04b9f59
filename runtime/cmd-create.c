/* create and run. */
#include <config.h>

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>

#include "cli.h"
#include "log.h"
#include "terminal.h"
#include "utils.h"

struct create_args {
  struct ar_create_opts o;
  bool detach, keep, no_subreaper;
};

static int parse(const char *verb, int argc, char **argv, struct create_args *ca)
{
  const struct ar_opt opts[] = {
      {"bundle", 'b', AR_OPT_STRING, &ca->o.bundle},
      {"pid-file", 0, AR_OPT_STRING, &ca->o.pid_file},
      {"console-socket", 0, AR_OPT_STRING, &ca->o.console_socket},
      {"no-pivot", 0, AR_OPT_FLAG, &ca->o.no_pivot},
      {"no-new-keyring", 0, AR_OPT_FLAG, &ca->o.no_new_keyring},
      {"preserve-fds", 0, AR_OPT_INT, &ca->o.preserve_fds},
      {"detach", 'd', AR_OPT_FLAG, &ca->detach},
      {"keep", 0, AR_OPT_FLAG, &ca->keep},
      {"no-subreaper", 0, AR_OPT_FLAG, &ca->no_subreaper},
  };
  /* create has no -d/--keep: offer them to run only */
  size_t n = strcmp(verb, "run") == 0 ? ARRAY_SIZE(opts) : ARRAY_SIZE(opts) - 3;
  int first = ar_parse_opts(verb, argc, argv, opts, n);
  if (first < 0)
    return -1;
  if (first != argc - 1)
    return ar_usage_error(verb, "%s needs exactly one container ID", verb), -1;
  ca->o.id = argv[first];
  if (ca->detach && ca->keep)
    return ar_usage_error(verb, "--keep and --detach cannot be used together"), -1;
  return 0;
}

int ar_cmd_create(struct ar_ctx *ctx, int argc, char **argv)
{
  struct create_args ca = {0};
  ar_err err = NULL;
  if (parse("create", argc, argv, &ca) < 0)
    return 1;
  if (ar_container_create(ctx, &ca.o, NULL, &err) < 0)
    return ar_fail(&err);
  return 0;
}

static int wait_exit_code(pid_t pid)
{
  int status;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR)
      return 255;
  if (WIFEXITED(status))
    return WEXITSTATUS(status);
  return 128 + WTERMSIG(status);
}

int ar_cmd_run(struct ar_ctx *ctx, int argc, char **argv)
{
  struct create_args ca = {0};
  struct ar_container *c = NULL;
  ar_err err = NULL;
  int code;

  if (parse("run", argc, argv, &ca) < 0)
    return 1;
  ca.o.foreground = !ca.detach;
  if (ar_container_create(ctx, &ca.o, &c, &err) < 0)
    return ar_fail(&err);
  if (!ca.detach)
    ar_forward_signals(c->pid);
  if (ar_container_start(ctx, ca.o.id, &err) < 0) {
    ar_container_delete(ctx, ca.o.id, true, NULL);
    ar_container_free(c);
    return ar_fail(&err);
  }
  if (ca.detach) {
    ar_container_free(c);
    return 0;
  }
  if (c->pty_master >= 0 && ar_pty_proxy(c->pty_master, &err) < 0) {
    ar_warn("terminal: %s", err->msg);
    ar_error_free(&err);
  }
  code = wait_exit_code(c->pid);
  if (!ca.keep && ar_container_delete(ctx, ca.o.id, true, &err) < 0)
    ar_fail(&err);
  ar_container_free(c);
  return code;
}
