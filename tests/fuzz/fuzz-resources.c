/* update --resources: ar_resources_parse, and its round trip through the emitter. */
#include <config.h>

#include <string.h>

#include "spec/spec.h"
#include "tests/fuzz/fuzz.h"

FUZZ_ENTRY(resources)
{
  struct ar_resources *a = NULL, *b = NULL;
  char *ja = NULL, *jb = NULL;
  ar_err err = NULL;

  if (size > FUZZ_MAX_INPUT)
    return 0;
  if (ar_resources_parse((const char *)data, size, "resources", &a, &err) < 0) {
    FUZZ_CHECK(err != NULL && strncmp(err->msg, "resources: ", 11) == 0, "error: %s",
               err ? err->msg : "(none)");
    ar_error_free(&err);
    return 0;
  }
  FUZZ_CHECK(!a->has_pids || a->pids_limit >= -1, "pids limit %lld", (long long)a->pids_limit);
  FUZZ_CHECK(ar_resources_to_json(a, false, &ja, &err) == 0, "emit: %s", err->msg);
  FUZZ_CHECK(ar_resources_parse(ja, strlen(ja), "emitted", &b, &err) == 0, "re-parse: %s\n%s",
             err->msg, ja);
  FUZZ_CHECK(ar_resources_to_json(b, false, &jb, &err) == 0, "emit 2: %s", err->msg);
  FUZZ_CHECK(strcmp(ja, jb) == 0, "round trip differs:\n%s\n%s", ja, jb);
  free(ja);
  free(jb);
  ar_resources_free(a);
  ar_resources_free(b);
  return 0;
}
