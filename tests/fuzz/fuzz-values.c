/* The value parsers behind annotations, policy files and CLI flags: ar_parse_duration_ms,
 * ar_parse_size, ar_parse_uint64 and ar_parse_int64, each checked against a slow model. */
#include <config.h>

#include <ctype.h>
#include <errno.h>
#include <string.h>
#include <strings.h>

#include "runtime/utils.h"
#include "tests/fuzz/fuzz.h"

struct unit {
  const char *name;
  uint64_t mult;
};

static const struct unit durations[] = {{"", 1000},   {"s", 1000},    {"ms", 1},
                                        {"m", 60000}, {"h", 3600000}, {NULL, 0}};
static const struct unit sizes[] = {{"", 1},
                                    {"b", 1},
                                    {"k", 1ULL << 10},
                                    {"kb", 1ULL << 10},
                                    {"kib", 1ULL << 10},
                                    {"m", 1ULL << 20},
                                    {"mb", 1ULL << 20},
                                    {"mib", 1ULL << 20},
                                    {"g", 1ULL << 30},
                                    {"gb", 1ULL << 30},
                                    {"gib", 1ULL << 30},
                                    {"t", 1ULL << 40},
                                    {"tb", 1ULL << 40},
                                    {"tib", 1ULL << 40},
                                    {NULL, 0}};

/* Decimal digits, then exactly one known unit, the product within 64 bits. */
static int model(const char *s, const struct unit *u, uint64_t *ret)
{
  unsigned __int128 v = 0;
  const char *p = s;
  if (!isdigit((unsigned char)*p))
    return -1;
  for (; isdigit((unsigned char)*p); p++) {
    v = v * 10 + (unsigned)(*p - '0');
    if (v > UINT64_MAX)
      return -1;
  }
  for (; u->name; u++) {
    if (strcasecmp(p, u->name) != 0)
      continue;
    v *= u->mult;
    if (v > UINT64_MAX)
      return -1;
    *ret = (uint64_t)v;
    return 0;
  }
  return -1;
}

static void check(const char *s, int (*fn)(const char *, uint64_t *), const struct unit *u,
                  const char *what)
{
  uint64_t got = 0, want = 0;
  int rc = fn(s, &got), mrc = model(s, u, &want);
  FUZZ_CHECK(rc == mrc, "%s(\"%s\") returned %d, the model %d", what, s, rc, mrc);
  FUZZ_CHECK(rc < 0 || got == want, "%s(\"%s\") = %llu, the model %llu", what, s,
             (unsigned long long)got, (unsigned long long)want);
}

FUZZ_ENTRY(values)
{
  char *s;
  uint64_t u;
  int64_t i;

  if (size > 256)
    return 0;
  s = fuzz_cstr(data, size);
  check(s, ar_parse_duration_ms, durations, "ar_parse_duration_ms");
  check(s, ar_parse_size, sizes, "ar_parse_size");
  if (ar_parse_uint64(s, &u) == 0)
    FUZZ_CHECK(model(s, sizes, &u) == 0 && strspn(s, "0123456789") == strlen(s),
               "ar_parse_uint64 took \"%s\"", s);
  if (ar_parse_int64(s, &i) == 0)
    FUZZ_CHECK(*s != '\0' && !isspace((unsigned char)s[strlen(s) - 1]),
               "ar_parse_int64 took \"%s\"", s);
  free(s);
  return 0;
}
