/* A small streaming JSON writer for runtime/ (which must not see yajl).
 * Strings are escaped so that the output is always valid JSON, whatever bytes they hold:
 * invalid UTF-8 bytes become \u00XX-free U+FFFD replacement characters. */
#ifndef AR_JSONW_H
#define AR_JSONW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ar_jw;

struct ar_jw *ar_jw_new(bool pretty);
void ar_jw_free(struct ar_jw *w);
void ar_jw_map_open(struct ar_jw *w);
void ar_jw_map_close(struct ar_jw *w);
void ar_jw_array_open(struct ar_jw *w);
void ar_jw_array_close(struct ar_jw *w);
void ar_jw_key(struct ar_jw *w, const char *key);
void ar_jw_str(struct ar_jw *w, const char *s); /* NULL writes null */
void ar_jw_strn(struct ar_jw *w, const char *s, size_t len);
void ar_jw_int(struct ar_jw *w, int64_t v);
void ar_jw_uint(struct ar_jw *w, uint64_t v);
void ar_jw_double(struct ar_jw *w, double v);
void ar_jw_bool(struct ar_jw *w, bool v);
void ar_jw_null(struct ar_jw *w);
/* Insert pre-formed JSON as a value (trusted, produced by this program). */
void ar_jw_raw(struct ar_jw *w, const char *json);
const char *ar_jw_buf(struct ar_jw *w, size_t *len);
/* Take the buffer (NUL-terminated); the writer is freed. */
char *ar_jw_finish(struct ar_jw *w, size_t *len);

/* Convenience: key + value. */
void ar_jw_kstr(struct ar_jw *w, const char *key, const char *s);
void ar_jw_kint(struct ar_jw *w, const char *key, int64_t v);
void ar_jw_kuint(struct ar_jw *w, const char *key, uint64_t v);
void ar_jw_kbool(struct ar_jw *w, const char *key, bool v);
void ar_jw_kdouble(struct ar_jw *w, const char *key, double v);

#endif
