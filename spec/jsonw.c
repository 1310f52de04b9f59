/* A streaming JSON writer.  It keeps a small stack of open containers to place commas and, in
 * pretty mode, newlines and 2-space indentation the way Go's json.MarshalIndent does (runc's
 * `state` output).  Whatever bytes a string holds, the output stays valid JSON. */
#include <config.h>
#include "spec/jsonw.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/utils.h"

struct level {
  bool is_map;
  bool empty;
};

struct ar_jw {
  char *buf;
  size_t len, cap;
  bool pretty;
  bool after_key; /* a key was written, its value comes next: no comma, no newline */
  struct level *stack;
  size_t depth, stack_cap;
};

static void put(struct ar_jw *w, const char *s, size_t n)
{
  if (w->len + n + 1 > w->cap) {
    size_t cap = w->cap ? w->cap : 256;
    while (w->len + n + 1 > cap)
      cap *= 2;
    w->buf = xrealloc(w->buf, cap);
    w->cap = cap;
  }
  memcpy(w->buf + w->len, s, n);
  w->len += n;
  w->buf[w->len] = '\0';
}

static void puts_(struct ar_jw *w, const char *s)
{
  put(w, s, strlen(s));
}

static void newline_indent(struct ar_jw *w, size_t depth)
{
  put(w, "\n", 1);
  for (size_t i = 0; i < depth; i++)
    put(w, "  ", 2);
}

/* Everything that starts a value or a key goes through here. */
static void before_item(struct ar_jw *w)
{
  struct level *top;

  if (w->after_key) {
    w->after_key = false;
    return;
  }
  if (w->depth == 0)
    return;
  top = &w->stack[w->depth - 1];
  if (!top->empty)
    put(w, ",", 1);
  top->empty = false;
  if (w->pretty)
    newline_indent(w, w->depth);
}

struct ar_jw *ar_jw_new(bool pretty)
{
  struct ar_jw *w = xcalloc(1, sizeof(*w));

  w->pretty = pretty;
  put(w, "", 0);
  return w;
}

void ar_jw_free(struct ar_jw *w)
{
  if (w == NULL)
    return;
  free(w->buf);
  free(w->stack);
  free(w);
}

static void open_level(struct ar_jw *w, bool is_map)
{
  before_item(w);
  put(w, is_map ? "{" : "[", 1);
  if (w->depth == w->stack_cap) {
    w->stack_cap = w->stack_cap ? w->stack_cap * 2 : 16;
    w->stack = xrealloc(w->stack, w->stack_cap * sizeof(*w->stack));
  }
  w->stack[w->depth++] = (struct level){.is_map = is_map, .empty = true};
}

static void close_level(struct ar_jw *w, bool is_map)
{
  bool empty;

  if (w->depth == 0)
    return; /* unbalanced close: a caller bug, but never corrupt memory for it */
  empty = w->stack[w->depth - 1].empty;
  w->depth--;
  if (w->pretty && !empty)
    newline_indent(w, w->depth);
  put(w, is_map ? "}" : "]", 1);
}

void ar_jw_map_open(struct ar_jw *w)
{
  open_level(w, true);
}

void ar_jw_map_close(struct ar_jw *w)
{
  close_level(w, true);
}

void ar_jw_array_open(struct ar_jw *w)
{
  open_level(w, false);
}

void ar_jw_array_close(struct ar_jw *w)
{
  close_level(w, false);
}

/* Length of the valid UTF-8 sequence at s (at most n bytes), or 0 if it is not valid:
 * overlong forms, surrogates and code points above U+10FFFF are all invalid. */
static size_t utf8_seq_len(const unsigned char *s, size_t n)
{
  size_t len;
  uint32_t cp, min;

  if (s[0] < 0x80)
    return 1;
  if ((s[0] & 0xe0) == 0xc0) {
    len = 2, cp = s[0] & 0x1f, min = 0x80;
  } else if ((s[0] & 0xf0) == 0xe0) {
    len = 3, cp = s[0] & 0x0f, min = 0x800;
  } else if ((s[0] & 0xf8) == 0xf0) {
    len = 4, cp = s[0] & 0x07, min = 0x10000;
  } else {
    return 0;
  }
  if (len > n)
    return 0;
  for (size_t i = 1; i < len; i++) {
    if ((s[i] & 0xc0) != 0x80)
      return 0;
    cp = (cp << 6) | (s[i] & 0x3f);
  }
  if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
    return 0;
  return len;
}

static const char *const short_escapes['\\' + 1] = {
    ['"'] = "\\\"", ['\\'] = "\\\\", ['\b'] = "\\b", ['\f'] = "\\f",
    ['\n'] = "\\n", ['\r'] = "\\r",  ['\t'] = "\\t",
};

static void put_escaped(struct ar_jw *w, const char *str, size_t n)
{
  const unsigned char *s = (const unsigned char *)str;
  size_t i = 0, run = 0; /* bytes [i - run, i) are pending, to be copied verbatim */

  put(w, "\"", 1);
  while (i < n) {
    const char *esc = NULL;
    char tmp[8];
    size_t seq;

    esc = s[i] < ARRAY_SIZE(short_escapes) ? short_escapes[s[i]] : NULL;
    if (esc == NULL && s[i] < 0x20) {
      snprintf(tmp, sizeof(tmp), "\\u%04x", s[i]);
      esc = tmp;
    }
    seq = esc ? 0 : utf8_seq_len(s + i, n - i);
    if (esc == NULL && seq > 0) {
      i += seq;
      run += seq;
      continue;
    }
    put(w, str + i - run, run);
    run = 0;
    puts_(w, esc ? esc : "\xef\xbf\xbd"); /* U+FFFD for each invalid byte, as Go does */
    i++;
  }
  put(w, str + i - run, run);
  put(w, "\"", 1);
}

void ar_jw_key(struct ar_jw *w, const char *key)
{
  before_item(w);
  put_escaped(w, key, strlen(key));
  put(w, w->pretty ? ": " : ":", w->pretty ? 2 : 1);
  w->after_key = true;
}

void ar_jw_strn(struct ar_jw *w, const char *s, size_t len)
{
  before_item(w);
  put_escaped(w, s, len);
}

void ar_jw_str(struct ar_jw *w, const char *s)
{
  if (s == NULL) {
    ar_jw_null(w);
    return;
  }
  ar_jw_strn(w, s, strlen(s));
}

void ar_jw_int(struct ar_jw *w, int64_t v)
{
  char tmp[32];

  before_item(w);
  snprintf(tmp, sizeof(tmp), "%" PRId64, v);
  puts_(w, tmp);
}

void ar_jw_uint(struct ar_jw *w, uint64_t v)
{
  char tmp[32];

  before_item(w);
  snprintf(tmp, sizeof(tmp), "%" PRIu64, v);
  puts_(w, tmp);
}

void ar_jw_double(struct ar_jw *w, double v)
{
  char tmp[40];

  if (!isfinite(v)) {
    ar_jw_null(w); /* JSON has no NaN or infinity */
    return;
  }
  before_item(w);
  /* whole numbers as plain integers (3600, not 3.6e+03); else the shortest exact form */
  if (v == (double)(long long)v && v > -1e15 && v < 1e15) {
    snprintf(tmp, sizeof(tmp), "%lld", (long long)v);
    puts_(w, tmp);
    return;
  }
  for (int prec = 1; prec <= 17; prec++) {
    snprintf(tmp, sizeof(tmp), "%.*g", prec, v);
    if (strtod(tmp, NULL) == v)
      break;
  }
  puts_(w, tmp);
}

void ar_jw_bool(struct ar_jw *w, bool v)
{
  before_item(w);
  puts_(w, v ? "true" : "false");
}

void ar_jw_null(struct ar_jw *w)
{
  before_item(w);
  puts_(w, "null");
}

void ar_jw_raw(struct ar_jw *w, const char *json)
{
  before_item(w);
  puts_(w, json);
}

const char *ar_jw_buf(struct ar_jw *w, size_t *len)
{
  if (len)
    *len = w->len;
  return w->buf;
}

char *ar_jw_finish(struct ar_jw *w, size_t *len)
{
  char *buf = w->buf;

  if (len)
    *len = w->len;
  w->buf = NULL;
  ar_jw_free(w);
  return buf;
}

void ar_jw_kstr(struct ar_jw *w, const char *key, const char *s)
{
  ar_jw_key(w, key);
  ar_jw_str(w, s);
}

void ar_jw_kint(struct ar_jw *w, const char *key, int64_t v)
{
  ar_jw_key(w, key);
  ar_jw_int(w, v);
}

void ar_jw_kuint(struct ar_jw *w, const char *key, uint64_t v)
{
  ar_jw_key(w, key);
  ar_jw_uint(w, v);
}

void ar_jw_kbool(struct ar_jw *w, const char *key, bool v)
{
  ar_jw_key(w, key);
  ar_jw_bool(w, v);
}

void ar_jw_kdouble(struct ar_jw *w, const char *key, double v)
{
  ar_jw_key(w, key);
  ar_jw_double(w, v);
}
