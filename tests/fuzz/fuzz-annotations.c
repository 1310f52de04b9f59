/* The run.agentrun.* annotations: one "key=value" per line becomes annotation
 * run.agentrun.<key> on the default config, which goes through ar_agent_request_parse and the
 * whole policy layer (ar_policy_apply, under the compiled-in host policy). */
#include <config.h>

#include <string.h>

#include "runtime/policy.h"
#include "tests/fuzz/fuzz.h"

static void add_annotations(struct ar_spec *s, char *text)
{
  char *save = NULL;
  for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    char *eq = strchr(line, '=');
    char *key;
    if (eq == NULL)
      continue;
    *eq = '\0';
    if (asprintf(&key, "%s%s", AR_ANNOTATION_PREFIX, line) < 0)
      abort();
    ar_kv_set(&s->annotations, &s->n_annotations, key, eq + 1);
    free(key);
  }
}

FUZZ_ENTRY(annotations)
{
  struct ar_host_policy *hp;
  struct ar_agent_request req;
  struct ar_effective *eff = NULL;
  struct ar_spec *s;
  char *text, *json = NULL;
  ar_err err = NULL;

  if (size > 4096)
    return 0;
  text = fuzz_cstr(data, size);
  s = ar_spec_default(false);
  add_annotations(s, text);
  free(text);
  if (ar_agent_request_parse(s, &req, &err) == 0) {
    FUZZ_CHECK(!req.has_timeout || req.timeout_ms > 0, "zero timeout accepted");
    FUZZ_CHECK(!req.has_memory || req.memory > 0, "zero memory accepted");
    FUZZ_CHECK(!req.has_pids || req.pids > 0, "zero pids accepted");
    FUZZ_CHECK(!req.has_cpus || req.cpus_milli > 0, "zero cpus accepted");
  }
  ar_error_free(&err);
  hp = ar_host_policy_default();
  free(hp->audit_dir);
  hp->audit_dir = strdup("/nonexistent/fuzz-audit");
  if (ar_policy_apply(hp, s, "fuzz", &eff, &err) == 0) {
    const struct ar_resources *r = &s->linux_.resources;
    /* hardened by default: whatever the annotations said, the limits stay set and bounded */
    FUZZ_CHECK(r->has_pids && r->pids_limit > 0, "pids limit lost");
    FUZZ_CHECK(r->has_memory && r->memory.has_limit && r->memory.limit > 0, "memory limit lost");
    FUZZ_CHECK(eff->timeout_ms > 0 && eff->timeout_ms <= hp->timeout_ms.max, "timeout %llu",
               (unsigned long long)eff->timeout_ms);
    FUZZ_CHECK(eff->isolate_net, "network isolation lost");
    FUZZ_CHECK(ar_spec_to_json(s, false, &json, &err) == 0, "emit: %s", err->msg);
    free(json);
    free(ar_effective_to_json(eff, true));
    ar_effective_free(eff);
  } else {
    ar_error_free(&err);
  }
  ar_host_policy_free(hp);
  ar_spec_free(s);
  return 0;
}
