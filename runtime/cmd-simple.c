/* The verbs that take one container ID and little else: start, kill, delete, state. */
#include <config.h>

#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "statedir.h"
#include "utils.h"

static int one_id(const char *verb, int argc, char **argv, const struct ar_opt *opts, size_t n,
                  int max_extra)
{
  int first = ar_parse_opts(verb, argc, argv, opts, n);
  if (first < 0)
    return -1;
  if (first >= argc || argc - first - 1 > max_extra) {
    ar_usage_error(verb, "%s needs a container ID", verb);
    return -1;
  }
  return first;
}

int ar_cmd_start(struct ar_ctx *ctx, int argc, char **argv)
{
  ar_err err = NULL;
  int first = one_id("start", argc, argv, NULL, 0, 0);
  if (first < 0)
    return 1;
  if (ar_container_start(ctx, argv[first], &err) < 0)
    return ar_fail(&err);
  return 0;
}

int ar_cmd_kill(struct ar_ctx *ctx, int argc, char **argv)
{
  bool all = false;
  const struct ar_opt opts[] = {{"all", 'a', AR_OPT_FLAG, &all}};
  ar_err err = NULL;
  int sig = SIGTERM;
  int first = one_id("kill", argc, argv, opts, ARRAY_SIZE(opts), 1);
  if (first < 0)
    return 1;
  if (first + 1 < argc && (sig = ar_parse_signal(argv[first + 1])) < 0)
    return ar_usage_error("kill", "unknown signal \"%s\"", argv[first + 1]);
  if (ar_container_kill(ctx, argv[first], sig, all, &err) < 0)
    return ar_fail(&err);
  return 0;
}

int ar_cmd_delete(struct ar_ctx *ctx, int argc, char **argv)
{
  bool force = false;
  const struct ar_opt opts[] = {{"force", 'f', AR_OPT_FLAG, &force}};
  ar_err err = NULL;
  int first = one_id("delete", argc, argv, opts, ARRAY_SIZE(opts), 0);
  if (first < 0)
    return 1;
  if (ar_container_delete(ctx, argv[first], force, &err) < 0)
    return ar_fail(&err);
  return 0;
}

int ar_cmd_state(struct ar_ctx *ctx, int argc, char **argv)
{
  struct ar_state *st = NULL;
  cleanup_free char *json = NULL;
  ar_err err = NULL;
  int first = one_id("state", argc, argv, NULL, 0, 0);
  if (first < 0)
    return 1;
  if (ar_state_load(ctx->root, argv[first], &st, &err) < 0)
    return ar_fail(&err);
  if (ar_state_oci_json(st, ar_state_status(st), true, &json, &err) < 0) {
    ar_state_free(st);
    return ar_fail(&err);
  }
  ar_state_free(st);
  printf("%s\n", json);
  return 0;
}
