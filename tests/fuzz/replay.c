/* Replays the fuzz targets without libFuzzer, for `make check` (TAP).
 *   replay                     every target: its saved crash inputs (regressions/<target>/) and
 *                              the JSON fixtures (every .json of tests/fixtures)
 *   replay TARGET FILE...      one target on the given inputs (to reproduce a crash under gdb or
 *                              valgrind without clang) */
#include <config.h>

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/utils.h"
#include "tests/fuzz/fuzz.h"

#ifndef AR_TOP_SRCDIR
#define AR_TOP_SRCDIR "."
#endif

typedef int (*fuzz_fn)(const uint8_t *, size_t);

#define TARGET(n) int ar_fuzz_##n(const uint8_t *data, size_t size);
TARGET(spec)
TARGET(process)
TARGET(resources)
TARGET(state)
TARGET(policy)
TARGET(annotations)
TARGET(values)
#undef TARGET

static const struct {
  const char *name;
  fuzz_fn fn;
} targets[] = {
    {"spec", ar_fuzz_spec},     {"process", ar_fuzz_process}, {"resources", ar_fuzz_resources},
    {"state", ar_fuzz_state},   {"policy", ar_fuzz_policy},   {"annotations", ar_fuzz_annotations},
    {"values", ar_fuzz_values},
};

static int run_file(fuzz_fn fn, const char *path)
{
  char *buf = NULL;
  size_t len = 0;
  ar_err err = NULL;
  if (ar_read_file(path, &buf, &len, &err) < 0) {
    fprintf(stderr, "# %s\n", err->msg);
    ar_error_free(&err);
    return -1;
  }
  fn((const uint8_t *)buf, len);
  free(buf);
  return 0;
}

/* Every regular file of dir (sorted, so that a failure is reproducible); -1 on a read error. */
static int run_dir(fuzz_fn fn, const char *dir, const char *suffix, int *count)
{
  struct dirent **names = NULL;
  int n = scandir(dir, &names, NULL, alphasort), rc = 0;
  if (n < 0)
    return errno == ENOENT ? 0 : -1;
  for (int i = 0; i < n; i++) {
    const char *nm = names[i]->d_name;
    size_t l = strlen(nm), sl = suffix ? strlen(suffix) : 0;
    if (nm[0] != '.' && (suffix == NULL || (l > sl && strcmp(nm + l - sl, suffix) == 0))) {
      char *path = xasprintf("%s/%s", dir, nm);
      if (run_file(fn, path) < 0)
        rc = -1;
      else
        (*count)++;
      free(path);
    }
    free(names[i]);
  }
  free(names);
  return rc;
}

static fuzz_fn find_target(const char *name)
{
  for (size_t i = 0; i < ARRAY_SIZE(targets); i++)
    if (strcmp(targets[i].name, name) == 0)
      return targets[i].fn;
  return NULL;
}

int main(int argc, char **argv)
{
  int failed = 0;
  setvbuf(stdout, NULL, _IOLBF, 0); /* a crash must not eat the lines before it */
  if (argc > 1) {
    fuzz_fn fn = find_target(argv[1]);
    if (fn == NULL) {
      fprintf(stderr, "replay: unknown target \"%s\"\n", argv[1]);
      return 2;
    }
    for (int i = 2; i < argc; i++)
      if (run_file(fn, argv[i]) < 0)
        failed = 1;
    return failed;
  }
  printf("1..%zu\n", ARRAY_SIZE(targets));
  for (size_t i = 0; i < ARRAY_SIZE(targets); i++) {
    char *dir = xasprintf("%s/tests/fuzz/regressions/%s", AR_TOP_SRCDIR, targets[i].name);
    int n_reg = 0, n_seed = 0;
    int rc = run_dir(targets[i].fn, dir, NULL, &n_reg);
    if (run_dir(targets[i].fn, AR_TOP_SRCDIR "/tests/fixtures", ".json", &n_seed) < 0)
      rc = -1;
    /* a target that crashes never gets here: the test program dies and make check says so */
    printf("%s %zu - %s: %d saved crash inputs, %d fixtures replayed\n", rc ? "not ok" : "ok",
           i + 1, targets[i].name, n_reg, n_seed);
    failed |= rc != 0;
    free(dir);
  }
  return failed;
}
