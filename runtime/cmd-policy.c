/* inspect and policy: make the hardening visible. */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "policy.h"
#include "spec/jsonw.h"
#include "statedir.h"
#include "utils.h"

/* The effective spec and what each control did, as recorded at create. */
int ar_cmd_inspect(struct ar_ctx *ctx, int argc, char **argv)
{
  cleanup_free char *spec = NULL, *pol = NULL, *spec_path = NULL, *pol_path = NULL;
  struct ar_state *st = NULL;
  struct ar_jw *w;
  ar_err err = NULL;
  int first = ar_parse_opts("inspect", argc, argv, NULL, 0);
  if (first < 0)
    return 1;
  if (first != argc - 1)
    return ar_usage_error("inspect", "inspect needs a container ID");
  if (ar_state_load(ctx->root, argv[first], &st, &err) < 0)
    return ar_fail(&err);
  spec_path = ar_statedir_path(ctx->root, st->id, "config.json");
  pol_path = ar_statedir_path(ctx->root, st->id, "policy.json");
  if (ar_read_file(spec_path, &spec, NULL, &err) < 0 || ar_read_file(pol_path, &pol, NULL, &err) < 0) {
    ar_state_free(st);
    return ar_fail(&err);
  }
  w = ar_jw_new(true);
  ar_jw_map_open(w);
  ar_jw_kstr(w, "id", st->id);
  ar_jw_kstr(w, "status", ar_state_status(st));
  ar_jw_key(w, "policy");
  ar_jw_raw(w, pol);
  ar_jw_key(w, "effective_spec");
  ar_jw_raw(w, spec);
  ar_jw_map_close(w);
  ar_state_free(st);
  {
    cleanup_free char *out = ar_jw_finish(w, NULL);
    printf("%s\n", out);
  }
  return 0;
}

int ar_cmd_policy(struct ar_ctx *ctx, int argc, char **argv)
{
  struct ar_host_policy *hp = NULL;
  cleanup_free char *json = NULL;
  ar_err err = NULL;
  int first = ar_parse_opts("policy", argc, argv, NULL, 0);
  if (first < 0)
    return 1;
  if (first != argc - 1 || strcmp(argv[first], "show") != 0)
    return ar_usage_error("policy", "usage: agentrun policy show");
  if (ar_policy_load(ctx->policy_path, &hp, &err) < 0)
    return ar_fail(&err);
  ar_host_policy_to_json(hp, &json, &err);
  ar_host_policy_free(hp);
  printf("%s\n", json);
  return 0;
}
