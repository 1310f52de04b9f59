/* One libFuzzer target per parser.  Each target file defines its entry with FUZZ_ENTRY(name):
 * built by run-fuzz.sh (clang, -fsanitize=fuzzer) it is LLVMFuzzerTestOneInput; built into
 * tests/fuzz/replay (AR_FUZZ_REPLAY, any compiler, `make check`) it is ar_fuzz_<name>, and the
 * replay program feeds it the saved crash inputs of tests/fuzz/regressions/<name>/ and the seeds.
 *
 * A target returns 0.  A broken invariant (a round trip that does not hold) is a finding:
 * FUZZ_CHECK prints it and aborts, which libFuzzer reports as a crash and saves the input. */
#ifndef AR_FUZZ_H
#define AR_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#ifdef AR_FUZZ_REPLAY
#define FUZZ_ENTRY(name) int ar_fuzz_##name(const uint8_t *data, size_t size)
#else
#define FUZZ_ENTRY(name)                                                                           \
  int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);                                    \
  int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
#endif

#define FUZZ_CHECK(cond, ...)                                                                      \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      fprintf(stderr, "fuzz invariant broken at %s:%d: %s\n", __FILE__, __LINE__, #cond);          \
      fprintf(stderr, __VA_ARGS__);                                                                \
      fputc('\n', stderr);                                                                         \
      abort();                                                                                     \
    }                                                                                              \
  } while (0)

/* Hostile inputs are not interesting past this size: the parsers read whole files, and a
 * bound keeps each run fast.  The same bound in replay keeps the two paths alike. */
#define FUZZ_MAX_INPUT (256 * 1024)

/* A NUL-terminated copy of the input, for the string parsers. */
static inline char *fuzz_cstr(const uint8_t *data, size_t size)
{
  char *s = malloc(size + 1);
  if (s == NULL)
    abort();
  for (size_t i = 0; i < size; i++)
    s[i] = (char)data[i];
  s[size] = '\0';
  return s;
}

#endif
