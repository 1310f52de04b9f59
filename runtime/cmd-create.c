/* create and run. */
#include <config.h>

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>

#include "cli.h"
#include "log.h"
#include "run.h"
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

int ar_cmd_run(struct ar_ctx *ctx, int argc, char **argv)
{
  struct create_args ca = {0};
  struct ar_run_opts ro = {0};
  struct ar_run_result res;
  ar_err err = NULL;

  if (parse("run", argc, argv, &ca) < 0)
    return 1;
  ca.o.foreground = !ca.detach;
  ro.detach = ca.detach;
  ro.keep = ca.keep;
  if (ar_container_run(ctx, &ca.o, &ro, &res, &err) < 0)
    return ar_fail(&err);
  free(res.audit_log);
  return res.exit_code;
}
