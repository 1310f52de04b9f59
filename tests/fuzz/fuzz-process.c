/* process.json (exec --process): ar_process_parse, and its round trip through the emitter. */
#include <config.h>

#include <string.h>

#include "spec/spec.h"
#include "tests/fuzz/fuzz.h"

FUZZ_ENTRY(process)
{
  struct ar_process *a = NULL, *b = NULL;
  char *ja = NULL, *jb = NULL;
  ar_err err = NULL;

  if (size > FUZZ_MAX_INPUT)
    return 0;
  if (ar_process_parse((const char *)data, size, "process.json", &a, &err) < 0) {
    FUZZ_CHECK(err != NULL && strncmp(err->msg, "process.json: ", 14) == 0, "error: %s",
               err ? err->msg : "(none)");
    ar_error_free(&err);
    return 0;
  }
  /* what the runtime relies on after a successful parse */
  FUZZ_CHECK(a->n_args > 0 && a->args[a->n_args] == NULL, "args not NULL-terminated");
  FUZZ_CHECK(a->cwd != NULL && a->cwd[0] == '/', "cwd not absolute");
  FUZZ_CHECK(ar_process_to_json(a, false, &ja, &err) == 0, "emit: %s", err->msg);
  FUZZ_CHECK(ar_process_parse(ja, strlen(ja), "emitted", &b, &err) == 0, "re-parse: %s\n%s",
             err->msg, ja);
  FUZZ_CHECK(ar_process_to_json(b, false, &jb, &err) == 0, "emit 2: %s", err->msg);
  FUZZ_CHECK(strcmp(ja, jb) == 0, "round trip differs:\n%s\n%s", ja, jb);
  free(ja);
  free(jb);
  ar_process_free(a);
  ar_process_free(b);
  return 0;
}
