/* config.json: ar_spec_parse, then the round trip parse(emit(parse(x))) == parse(x).  The emitter
 * writes every field the parser keeps, so the two are compared through their JSON. */
#include <config.h>

#include <string.h>

#include "spec/spec.h"
#include "tests/fuzz/fuzz.h"

FUZZ_ENTRY(spec)
{
  struct ar_spec *a = NULL, *b = NULL;
  char *ja = NULL, *jb = NULL;
  ar_err err = NULL;

  if (size > FUZZ_MAX_INPUT)
    return 0;
  if (ar_spec_parse((const char *)data, size, "config.json", &a, &err) < 0) {
    /* every error names the document, so the user knows which file is wrong */
    FUZZ_CHECK(err != NULL && strncmp(err->msg, "config.json: ", 13) == 0, "error: %s",
               err ? err->msg : "(none)");
    ar_error_free(&err);
    return 0;
  }
  FUZZ_CHECK(ar_spec_to_json(a, false, &ja, &err) == 0, "emit: %s", err->msg);
  FUZZ_CHECK(ar_spec_parse(ja, strlen(ja), "emitted", &b, &err) == 0, "re-parse: %s\n%s", err->msg,
             ja);
  FUZZ_CHECK(ar_spec_to_json(b, false, &jb, &err) == 0, "emit 2: %s", err->msg);
  FUZZ_CHECK(strcmp(ja, jb) == 0, "round trip differs:\n%s\n%s", ja, jb);
  free(ja);
  free(jb);
  ar_spec_free(a);
  ar_spec_free(b);
  return 0;
}
