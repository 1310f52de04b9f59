/* The state dir's state.json: ar_state_parse, its round trip, and the OCI state document. */
#include <config.h>

#include <string.h>

#include "spec/state.h"
#include "tests/fuzz/fuzz.h"

FUZZ_ENTRY(state)
{
  struct ar_state *a = NULL, *b = NULL;
  char *ja = NULL, *jb = NULL, *oci = NULL;
  ar_err err = NULL;

  if (size > FUZZ_MAX_INPUT)
    return 0;
  if (ar_state_parse((const char *)data, size, &a, &err) < 0) {
    FUZZ_CHECK(err != NULL && strncmp(err->msg, "state.json: ", 12) == 0, "error: %s",
               err ? err->msg : "(none)");
    ar_error_free(&err);
    return 0;
  }
  /* the runtime signals st->pid and st->monitor_pid: never a negative (process group) pid */
  FUZZ_CHECK(a->pid >= 0 && a->monitor_pid >= 0, "pid %d monitor %d", a->pid, a->monitor_pid);
  FUZZ_CHECK(a->id && a->bundle && a->rootfs && a->created && a->owner, "missing string");
  FUZZ_CHECK(ar_state_to_json(a, &ja, &err) == 0, "emit: %s", err->msg);
  FUZZ_CHECK(ar_state_parse(ja, strlen(ja), &b, &err) == 0, "re-parse: %s\n%s", err->msg, ja);
  FUZZ_CHECK(ar_state_to_json(b, &jb, &err) == 0, "emit 2: %s", err->msg);
  FUZZ_CHECK(strcmp(ja, jb) == 0, "round trip differs:\n%s\n%s", ja, jb);
  FUZZ_CHECK(ar_state_oci_json(a, "running", true, &oci, &err) == 0, "oci: %s", err->msg);
  free(ja);
  free(jb);
  free(oci);
  ar_state_free(a);
  ar_state_free(b);
  return 0;
}
