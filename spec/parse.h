/* Internal to spec/: typed access to a yajl tree, with errors that name the JSON path.
 *
 * Convention: every parser stores what it allocates into the output struct at once, so that on
 * error the caller frees the whole (half-filled) struct with the matching *_free() and nothing
 * leaks.  Absent keys and JSON null are the same thing, as in Go's encoding/json. */
#ifndef AR_SPEC_PARSE_H
#define AR_SPEC_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <yajl/yajl_tree.h>

#include "spec/spec.h"

struct jp {
  const char *what; /* document name, first word of every error */
  ar_err *err;
  char *path; /* "linux.resources.memory" as we descend */
  size_t len, cap;
};

typedef int (*jp_fn)(struct jp *c, yajl_val v, void *out);

/* Parse json into a tree, rejecting what yajl would choke on; errors say "<what>: invalid JSON". */
yajl_val jp_parse(struct jp *c, const char *json, size_t len);
void jp_init(struct jp *c, const char *what, ar_err *err);
void jp_fini(struct jp *c);

/* Path stack: push returns a mark to pop back to. */
size_t jp_push(struct jp *c, const char *key);
size_t jp_push_idx(struct jp *c, size_t i);
void jp_pop(struct jp *c, size_t mark);
/* "<what>: <path>: <message>", return -1. */
int jp_error(struct jp *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The same with key appended to the path. */
int jp_key_error(struct jp *c, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* obj[key], the last one if repeated; NULL if absent, null, or obj is not an object. */
yajl_val jp_field(yajl_val obj, const char *key);

/* Scalars.  has == NULL makes the key required; otherwise *has tells if it was there. */
int jp_str(struct jp *c, yajl_val obj, const char *key, char **ret, bool *has);
int jp_bool(struct jp *c, yajl_val obj, const char *key, bool *ret, bool *has);
int jp_int(struct jp *c, yajl_val obj, const char *key, int64_t min, int64_t max, int64_t *ret,
           bool *has);
int jp_uint(struct jp *c, yajl_val obj, const char *key, uint64_t max, uint64_t *ret, bool *has);
/* The same checks on a bare value, the error at the current path. */
int jp_as_int(struct jp *c, yajl_val v, int64_t min, int64_t max, int64_t *ret);
int jp_as_uint(struct jp *c, yajl_val v, uint64_t max, uint64_t *ret);
int jp_u32(struct jp *c, yajl_val obj, const char *key, uint32_t *ret, bool *has);
int jp_u16(struct jp *c, yajl_val obj, const char *key, uint16_t *ret, bool *has);
int jp_i64(struct jp *c, yajl_val obj, const char *key, int64_t *ret, bool *has);
int jp_u64(struct jp *c, yajl_val obj, const char *key, uint64_t *ret, bool *has);

/* Containers. */
int jp_strv(struct jp *c, yajl_val obj, const char *key, char ***ret, size_t *n);
int jp_u32_array(struct jp *c, yajl_val obj, const char *key, uint32_t **ret, size_t *n);
int jp_kvmap(struct jp *c, yajl_val obj, const char *key, struct ar_kv **ret, size_t *n);
/* obj[key] must be an object; fn parses it with the path extended.  Absent: *has = false. */
int jp_object(struct jp *c, yajl_val obj, const char *key, jp_fn fn, void *out, bool *has);
/* obj[key] must be an array of objects: allocates n elements of size sz, fn fills each. */
int jp_object_array(struct jp *c, yajl_val obj, const char *key, size_t sz, jp_fn fn, void **ret,
                    size_t *n);
/* The node itself must be an object (the root of a document). */
int jp_expect_object(struct jp *c, yajl_val v);

/* Section parsers shared between documents. */
int ar_parse_process(struct jp *c, yajl_val v, void *out);   /* struct ar_process */
int ar_parse_resources(struct jp *c, yajl_val v, void *out); /* struct ar_resources */
int ar_parse_linux(struct jp *c, yajl_val v, void *out);     /* struct ar_linux */
int ar_parse_seccomp(struct jp *c, yajl_val v, void *out);   /* struct ar_seccomp */
void ar_process_clear(struct ar_process *p);
const char *ar_cap_set_key(enum ar_cap_set s);        /* "bounding" ... */
const char *ar_throttle_key(enum ar_throttle_kind k); /* "throttleReadBpsDevice" ... */
void ar_linux_clear(struct ar_linux *l);

/* Internal name tables (spec/names.c). */
bool ar_seccomp_arch_known(const char *name);
bool ar_seccomp_flag_known(const char *name);
int ar_seccomp_action_from_name(const char *name);
int ar_seccomp_op_from_name(const char *name);
void ar_kv_free(struct ar_kv *kv, size_t n);
void ar_strv_free_n(char **v, size_t n);

/* Emitters shared by emit.c and state.c. */
struct ar_jw;
void ar_emit_kv_map(struct ar_jw *w, const char *key, const struct ar_kv *kv, size_t n);

#endif
