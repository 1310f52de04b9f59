/* The host policy file: ar_host_policy_parse, the promises the runtime builds on, and the
 * `agentrun policy` emitter. */
#include <config.h>

#include <string.h>

#include "spec/policy.h"
#include "tests/fuzz/fuzz.h"

/* A ".." component anywhere, the last one included. */
static int has_dotdot(const char *path)
{
  for (const char *c = path; (c = strstr(c, "..")) != NULL; c++)
    if ((c == path || c[-1] == '/') && (c[2] == '\0' || c[2] == '/'))
      return 1;
  return 0;
}

FUZZ_ENTRY(policy)
{
  struct ar_host_policy *p = NULL;
  char *json = NULL;
  ar_err err = NULL;

  if (size > FUZZ_MAX_INPUT)
    return 0;
  if (ar_host_policy_parse((const char *)data, size, "policy.json", &p, &err) < 0) {
    FUZZ_CHECK(err != NULL && strncmp(err->msg, "policy.json: ", 13) == 0, "error: %s",
               err ? err->msg : "(none)");
    ar_error_free(&err);
    return 0;
  }
  FUZZ_CHECK(p->audit_dir != NULL && p->audit_dir[0] == '/', "audit dir \"%s\"", p->audit_dir);
  for (size_t i = 0; i < p->n_devices; i++)
    FUZZ_CHECK(strncmp(p->devices[i], "/dev/", 5) == 0 && !has_dotdot(p->devices[i]),
               "device \"%s\"", p->devices[i]);
  FUZZ_CHECK(strcmp(p->source, "policy.json") == 0, "source \"%s\"", p->source);
  /* the limits land in int64 fields of the spec, where a wrapped value means "unlimited" */
  {
    const struct ar_limit *limits[] = {&p->timeout_ms, &p->memory, &p->pids, &p->cpus_milli,
                                       &p->tmp_size};
    for (size_t i = 0; i < sizeof(limits) / sizeof(limits[0]); i++)
      FUZZ_CHECK(limits[i]->def <= INT64_MAX && limits[i]->max <= INT64_MAX,
                 "limit %zu: default %llu, maximum %llu", i, (unsigned long long)limits[i]->def,
                 (unsigned long long)limits[i]->max);
  }
  FUZZ_CHECK(ar_host_policy_to_json(p, &json, &err) == 0, "emit: %s", err->msg);
  free(json);
  ar_host_policy_free(p);
  return 0;
}
