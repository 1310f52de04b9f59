/* Typed access to a yajl tree.  Every error names the document and the JSON path. */
#include <config.h>
#include "spec/parse.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/utils.h"

/* yajl_tree_free() recurses: bound the nesting so a hostile document cannot blow the stack. */
#define MAX_DEPTH 200

void jp_init(struct jp *c, const char *what, ar_err *err)
{
  memset(c, 0, sizeof(*c));
  c->what = what;
  c->err = err;
  c->cap = 64;
  c->path = xcalloc(1, c->cap);
}

void jp_fini(struct jp *c)
{
  free(c->path);
  c->path = NULL;
}

static void path_append(struct jp *c, const char *s, size_t n)
{
  if (c->len + n + 1 > c->cap) {
    while (c->len + n + 1 > c->cap)
      c->cap *= 2;
    c->path = xrealloc(c->path, c->cap);
  }
  memcpy(c->path + c->len, s, n);
  c->len += n;
  c->path[c->len] = '\0';
}

size_t jp_push(struct jp *c, const char *key)
{
  size_t mark = c->len;

  if (c->len > 0)
    path_append(c, ".", 1);
  path_append(c, key, strlen(key));
  return mark;
}

size_t jp_push_idx(struct jp *c, size_t i)
{
  size_t mark = c->len;
  char tmp[32];

  snprintf(tmp, sizeof(tmp), "[%zu]", i);
  path_append(c, tmp, strlen(tmp));
  return mark;
}

void jp_pop(struct jp *c, size_t mark)
{
  c->len = mark;
  c->path[mark] = '\0';
}

__attribute__((format(printf, 2, 0))) static int verror(struct jp *c, const char *fmt, va_list ap)
{
  cleanup_free char *msg = NULL;

  if (vasprintf(&msg, fmt, ap) < 0)
    abort();
  if (c->len == 0)
    return ar_error(c->err, 0, "%s: %s", c->what, msg);
  return ar_error(c->err, 0, "%s: %s: %s", c->what, c->path, msg);
}

int jp_error(struct jp *c, const char *fmt, ...)
{
  va_list ap;

  va_start(ap, fmt);
  verror(c, fmt, ap);
  va_end(ap);
  return -1;
}

int jp_key_error(struct jp *c, const char *key, const char *fmt, ...)
{
  size_t mark = jp_push(c, key);
  va_list ap;

  va_start(ap, fmt);
  verror(c, fmt, ap);
  va_end(ap);
  jp_pop(c, mark);
  return -1;
}

/* Returns the deepest nesting of [ and { outside strings, stopping early past the limit. */
static size_t nesting_depth(const char *s, size_t len)
{
  size_t depth = 0, max = 0;
  bool in_str = false;

  for (size_t i = 0; i < len && max <= MAX_DEPTH; i++) {
    if (in_str) {
      if (s[i] == '\\')
        i++;
      else if (s[i] == '"')
        in_str = false;
    } else if (s[i] == '"') {
      in_str = true;
    } else if (s[i] == '[' || s[i] == '{') {
      if (++depth > max)
        max = depth;
    } else if ((s[i] == ']' || s[i] == '}') && depth > 0) {
      depth--;
    }
  }
  return max;
}

yajl_val jp_parse(struct jp *c, const char *json, size_t len)
{
  cleanup_free char *copy = NULL;
  char errbuf[256] = "";
  yajl_val v;

  if (memchr(json, '\0', len) != NULL) {
    ar_error(c->err, 0, "%s: invalid JSON: NUL byte in document", c->what);
    return NULL;
  }
  if (nesting_depth(json, len) > MAX_DEPTH) {
    ar_error(c->err, 0, "%s: invalid JSON: nested deeper than %d levels", c->what, MAX_DEPTH);
    return NULL;
  }
  copy = xstrndup(json, len); /* yajl_tree_parse wants a C string */
  v = yajl_tree_parse(copy, errbuf, sizeof(errbuf));
  if (v == NULL) {
    /* yajl's message is multi-line: the reason, then the text around the error; keep the reason */
    errbuf[strcspn(errbuf, "\n")] = '\0';
    ar_error(c->err, 0, "%s: invalid JSON: %s", c->what, errbuf[0] ? errbuf : "parse error");
  }
  return v;
}

int jp_expect_object(struct jp *c, yajl_val v)
{
  if (!YAJL_IS_OBJECT(v))
    return jp_error(c, "expected object");
  return 0;
}

yajl_val jp_field(yajl_val obj, const char *key)
{
  yajl_val found = NULL;

  if (!YAJL_IS_OBJECT(obj))
    return NULL;
  for (size_t i = 0; i < obj->u.object.len; i++)
    if (strcmp(obj->u.object.keys[i], key) == 0)
      found = obj->u.object.values[i]; /* the last one wins, as in Go */
  if (YAJL_IS_NULL(found))
    return NULL;
  return found;
}

/* Common prologue: NULL (and return 0 via *rc) when absent. */
static yajl_val lookup(struct jp *c, yajl_val obj, const char *key, bool *has, int *rc)
{
  yajl_val v = jp_field(obj, key);

  *rc = 0;
  if (has)
    *has = v != NULL;
  if (v == NULL && has == NULL)
    *rc = jp_key_error(c, key, "missing");
  return v;
}

int jp_str(struct jp *c, yajl_val obj, const char *key, char **ret, bool *has)
{
  int rc;
  yajl_val v = lookup(c, obj, key, has, &rc);

  if (v == NULL)
    return rc;
  if (!YAJL_IS_STRING(v))
    return jp_key_error(c, key, "expected string");
  free(*ret);
  *ret = xstrdup(v->u.string);
  return 0;
}

int jp_bool(struct jp *c, yajl_val obj, const char *key, bool *ret, bool *has)
{
  int rc;
  yajl_val v = lookup(c, obj, key, has, &rc);

  if (v == NULL)
    return rc;
  if (!YAJL_IS_TRUE(v) && !YAJL_IS_FALSE(v))
    return jp_key_error(c, key, "expected boolean");
  *ret = YAJL_IS_TRUE(v);
  return 0;
}

/* A JSON number written as an integer: no fraction, no exponent. */
static bool integer_text(yajl_val v)
{
  const char *s;

  if (!YAJL_IS_NUMBER(v) || v->u.number.r == NULL)
    return false;
  s = v->u.number.r;
  if (*s == '-')
    s++;
  if (*s == '\0')
    return false;
  return strspn(s, "0123456789") == strlen(s);
}

int jp_as_int(struct jp *c, yajl_val v, int64_t min, int64_t max, int64_t *ret)
{
  long long n;

  if (!integer_text(v))
    return jp_error(c, "expected integer");
  errno = 0;
  n = strtoll(v->u.number.r, NULL, 10);
  if (errno != 0 || n < min || n > max)
    return jp_error(c, "integer out of range");
  *ret = n;
  return 0;
}

int jp_as_uint(struct jp *c, yajl_val v, uint64_t max, uint64_t *ret)
{
  const char *digits;
  unsigned long long n;

  if (!integer_text(v))
    return jp_error(c, "expected integer");
  digits = v->u.number.r;
  if (digits[0] == '-' && strspn(digits + 1, "0") != strlen(digits + 1))
    return jp_error(c, "expected non-negative integer");
  errno = 0;
  n = strtoull(digits, NULL, 10); /* "-0" reads as 0 */
  if (errno != 0 || n > max)
    return jp_error(c, "integer out of range");
  *ret = n;
  return 0;
}

int jp_int(struct jp *c, yajl_val obj, const char *key, int64_t min, int64_t max, int64_t *ret,
           bool *has)
{
  int rc;
  yajl_val v = lookup(c, obj, key, has, &rc);
  size_t mark;

  if (v == NULL)
    return rc;
  mark = jp_push(c, key);
  rc = jp_as_int(c, v, min, max, ret);
  jp_pop(c, mark);
  return rc;
}

int jp_uint(struct jp *c, yajl_val obj, const char *key, uint64_t max, uint64_t *ret, bool *has)
{
  int rc;
  yajl_val v = lookup(c, obj, key, has, &rc);
  size_t mark;

  if (v == NULL)
    return rc;
  mark = jp_push(c, key);
  rc = jp_as_uint(c, v, max, ret);
  jp_pop(c, mark);
  return rc;
}

int jp_u32_array(struct jp *c, yajl_val obj, const char *key, uint32_t **ret, size_t *n)
{
  yajl_val v = jp_field(obj, key);
  size_t mark;

  if (v == NULL)
    return 0;
  if (!YAJL_IS_ARRAY(v))
    return jp_key_error(c, key, "expected array of integers");
  free(*ret);
  *ret = xcalloc(v->u.array.len, sizeof(uint32_t));
  *n = v->u.array.len;
  mark = jp_push(c, key);
  for (size_t i = 0; i < v->u.array.len; i++) {
    size_t m2 = jp_push_idx(c, i);
    uint64_t x;

    if (jp_as_uint(c, v->u.array.values[i], UINT32_MAX, &x) < 0) {
      jp_pop(c, mark);
      return -1;
    }
    (*ret)[i] = x;
    jp_pop(c, m2);
  }
  jp_pop(c, mark);
  return 0;
}

int jp_u32(struct jp *c, yajl_val obj, const char *key, uint32_t *ret, bool *has)
{
  uint64_t v;

  if (jp_uint(c, obj, key, UINT32_MAX, &v, has) < 0)
    return -1;
  if (has == NULL || *has)
    *ret = v;
  return 0;
}

int jp_u16(struct jp *c, yajl_val obj, const char *key, uint16_t *ret, bool *has)
{
  uint64_t v;

  if (jp_uint(c, obj, key, UINT16_MAX, &v, has) < 0)
    return -1;
  if (has == NULL || *has)
    *ret = v;
  return 0;
}

int jp_i64(struct jp *c, yajl_val obj, const char *key, int64_t *ret, bool *has)
{
  return jp_int(c, obj, key, INT64_MIN, INT64_MAX, ret, has);
}

int jp_u64(struct jp *c, yajl_val obj, const char *key, uint64_t *ret, bool *has)
{
  return jp_uint(c, obj, key, UINT64_MAX, ret, has);
}

int jp_strv(struct jp *c, yajl_val obj, const char *key, char ***ret, size_t *n)
{
  yajl_val v = jp_field(obj, key);
  char **out;

  if (v == NULL)
    return 0;
  if (!YAJL_IS_ARRAY(v))
    return jp_key_error(c, key, "expected array of strings");
  for (size_t i = 0; i < v->u.array.len; i++)
    if (!YAJL_IS_STRING(v->u.array.values[i]))
      return jp_key_error(c, key, "expected array of strings");
  ar_strv_free_n(*ret, *n);
  /* NULL-terminated too, so the runtime can hand args and env to execve() as they are */
  out = xcalloc(v->u.array.len + 1, sizeof(char *));
  for (size_t i = 0; i < v->u.array.len; i++)
    out[i] = xstrdup(v->u.array.values[i]->u.string);
  *ret = out;
  *n = v->u.array.len;
  return 0;
}

int jp_kvmap(struct jp *c, yajl_val obj, const char *key, struct ar_kv **ret, size_t *n)
{
  yajl_val v = jp_field(obj, key);
  size_t mark;

  if (v == NULL)
    return 0;
  if (!YAJL_IS_OBJECT(v))
    return jp_key_error(c, key, "expected object");
  mark = jp_push(c, key);
  for (size_t i = 0; i < v->u.object.len; i++) {
    yajl_val val = v->u.object.values[i];

    if (YAJL_IS_NULL(val))
      continue;
    if (!YAJL_IS_STRING(val)) {
      jp_key_error(c, v->u.object.keys[i], "expected string");
      jp_pop(c, mark);
      return -1;
    }
    ar_kv_set(ret, n, v->u.object.keys[i], val->u.string); /* a repeated key: the last wins */
  }
  jp_pop(c, mark);
  return 0;
}

int jp_object(struct jp *c, yajl_val obj, const char *key, jp_fn fn, void *out, bool *has)
{
  yajl_val v = jp_field(obj, key);
  size_t mark;
  int rc;

  if (has)
    *has = v != NULL;
  if (v == NULL)
    return 0;
  if (!YAJL_IS_OBJECT(v))
    return jp_key_error(c, key, "expected object");
  mark = jp_push(c, key);
  rc = fn(c, v, out);
  jp_pop(c, mark);
  return rc;
}

int jp_object_array(struct jp *c, yajl_val obj, const char *key, size_t sz, jp_fn fn, void **ret,
                    size_t *n)
{
  yajl_val v = jp_field(obj, key);
  size_t mark;
  char *items;

  if (v == NULL)
    return 0;
  if (!YAJL_IS_ARRAY(v))
    return jp_key_error(c, key, "expected array");
  if (v->u.array.len == 0)
    return 0;
  /* Hand the zeroed array to the caller before filling it: a failure half-way leaves elements
   * the caller's free function can release. */
  items = xcalloc(v->u.array.len, sz);
  *ret = items;
  *n = v->u.array.len;
  mark = jp_push(c, key);
  for (size_t i = 0; i < v->u.array.len; i++) {
    size_t m2 = jp_push_idx(c, i);
    int rc;

    if (!YAJL_IS_OBJECT(v->u.array.values[i]))
      rc = jp_error(c, "expected object");
    else
      rc = fn(c, v->u.array.values[i], items + i * sz);
    jp_pop(c, m2);
    if (rc < 0) {
      jp_pop(c, mark);
      return -1;
    }
  }
  jp_pop(c, mark);
  return 0;
}
