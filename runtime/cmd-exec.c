#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "exec.h"
#include "utils.h"

static int parse_gids(const struct ar_strlist *l, struct ar_exec_opts *o)
{
  o->gids = xcalloc(l->n + 1, sizeof(uint32_t));
  for (size_t i = 0; i < l->n; i++) {
    /* runc takes a repeated flag; a comma list is accepted too */
    cleanup_free char *copy = xstrdup(l->v[i]);
    char *save = NULL;
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
      char *end;
      unsigned long g = strtoul(t, &end, 10);
      if (end == t || *end)
        return ar_usage_error("exec", "--additional-gids: \"%s\" is not a number", t);
      o->gids = xrealloc(o->gids, (o->n_gids + 1) * sizeof(uint32_t));
      o->gids[o->n_gids++] = g;
    }
  }
  return 0;
}

int ar_cmd_exec(struct ar_ctx *ctx, int argc, char **argv)
{
  struct ar_exec_opts o = {0};
  struct ar_strlist env = {0}, caps = {0}, gids = {0};
  const char *detach_keys = NULL, *cgroup = NULL;
  const struct ar_opt opts[] = {
      {"process", 'p', AR_OPT_STRING, &o.process_file},
      {"console-socket", 0, AR_OPT_STRING, &o.console_socket},
      {"pid-file", 0, AR_OPT_STRING, &o.pid_file},
      {"cwd", 0, AR_OPT_STRING, &o.cwd},
      {"user", 'u', AR_OPT_STRING, &o.user},
      {"apparmor", 0, AR_OPT_STRING, &o.apparmor},
      {"process-label", 0, AR_OPT_STRING, &o.process_label},
      {"env", 'e', AR_OPT_LIST, &env},
      {"cap", 'c', AR_OPT_LIST, &caps},
      {"additional-gids", 'g', AR_OPT_LIST, &gids},
      {"tty", 't', AR_OPT_FLAG, &o.tty},
      {"detach", 'd', AR_OPT_FLAG, &o.detach},
      {"no-new-privs", 0, AR_OPT_FLAG, &o.no_new_privs},
      {"ignore-paused", 0, AR_OPT_FLAG, &o.ignore_paused},
      {"preserve-fds", 0, AR_OPT_INT, &o.preserve_fds},
      {"detach-keys", 0, AR_OPT_STRING, &detach_keys},
      {"cgroup", 0, AR_OPT_STRING, &cgroup},
  };
  ar_err err = NULL;
  int first, code = 1;

  first = ar_parse_opts("exec", argc, argv, opts, ARRAY_SIZE(opts));
  if (first < 0)
    goto out;
  if (first >= argc) {
    ar_usage_error("exec", "exec needs a container ID");
    goto out;
  }
  o.id = argv[first];
  o.args = argv + first + 1;
  o.n_args = argc - first - 1;
  o.env = env.v;
  o.n_env = env.n;
  o.caps = caps.v;
  o.n_caps = caps.n;
  if (parse_gids(&gids, &o) != 0)
    goto out;
  if (ar_container_exec(ctx, &o, &code, &err) < 0)
    code = ar_fail(&err);
out:
  free(env.v);
  free(caps.v);
  free(gids.v);
  free(o.gids);
  return code;
}
