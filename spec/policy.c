/* The host policy file.  Strict on purpose: an unknown key or a bad value is an error, never a
 * silent fall back to weaker defaults. */
#include <config.h>
#include "spec/policy.h"

#include <math.h>
#include <string.h>

#include "runtime/utils.h"
#include "spec/jsonw.h"
#include "spec/parse.h"

static const char *const control_keys[AR_CTL_COUNT] = {
    "network",           "readonly_rootfs", "seccomp", "capabilities",
    "no_new_privileges", "limits",          "rlimits", "devices",
    "masked_paths",      "sysctl",          "timeout", "namespaces"};
static const char *const relax_keys[AR_RELAX_COUNT] = {"network_inherit", "rootfs_writable",
                                                       "seccomp_off", "audit_off"};

const char *ar_control_key(enum ar_control c)
{
  return control_keys[c];
}

const char *ar_relax_key(enum ar_relax r)
{
  return relax_keys[r];
}

struct ar_host_policy *ar_host_policy_default(void)
{
  struct ar_host_policy *p = xcalloc(1, sizeof(*p));
  for (int i = 0; i < AR_CTL_COUNT; i++)
    p->control[i] = true;
  p->timeout_ms = (struct ar_limit){3600 * 1000ULL, 24 * 3600 * 1000ULL};
  p->memory = (struct ar_limit){2ULL << 30, 0};
  p->pids = (struct ar_limit){512, 0};
  p->cpus_milli = (struct ar_limit){2000, 0};
  p->tmp_size = (struct ar_limit){256ULL << 20, 0};
  p->shm_size = 64ULL << 20;
  p->audit = true;
  p->audit_dir = xstrdup("/var/log/agentrun");
  p->audit_max_bytes = 64ULL << 20;
  p->source = xstrdup("compiled-in defaults");
  return p;
}

void ar_host_policy_free(struct ar_host_policy *p)
{
  if (p == NULL)
    return;
  ar_strv_free_n(p->devices, p->n_devices);
  free(p->audit_dir);
  free(p->source);
  free(p);
}

/* Every key of obj must be in keys[], once, with a value: a duplicate or a null would leave the
 * reader guessing which setting is in force. */
static int only_keys(struct jp *c, yajl_val obj, const char *const *keys, size_t n)
{
  for (size_t i = 0; i < obj->u.object.len; i++) {
    const char *k = obj->u.object.keys[i];
    size_t j = 0;
    while (j < n && strcmp(k, keys[j]) != 0)
      j++;
    if (j == n)
      return jp_key_error(c, k, "unknown key");
    for (j = 0; j < i; j++)
      if (strcmp(k, obj->u.object.keys[j]) == 0)
        return jp_key_error(c, k, "duplicate key");
    if (YAJL_IS_NULL(obj->u.object.values[i]))
      return jp_key_error(c, k, "null is not a value here");
  }
  return 0;
}

/* Limits end up in the spec's int64 fields (-1 there means unlimited): a larger value would
 * wrap to "no limit", so it is refused here rather than silently inverted. */
#define LIMIT_MAX ((uint64_t)INT64_MAX)

/* A duration: "30s", "2m", "1h", or a number of seconds. */
static int get_duration(struct jp *c, yajl_val obj, const char *key, uint64_t *ret)
{
  yajl_val v = jp_field(obj, key);
  uint64_t ms;
  if (v == NULL)
    return 0;
  if (YAJL_IS_INTEGER(v) && YAJL_GET_INTEGER(v) >= 0 &&
      (uint64_t)YAJL_GET_INTEGER(v) <= LIMIT_MAX / 1000) {
    *ret = (uint64_t)YAJL_GET_INTEGER(v) * 1000;
    return 0;
  }
  if (YAJL_IS_STRING(v) && ar_parse_duration_ms(v->u.string, &ms) == 0 && ms <= LIMIT_MAX) {
    *ret = ms;
    return 0;
  }
  return jp_key_error(c, key, "expected a duration such as \"30s\", \"2m\" or \"1h\"");
}

/* A size: "512m", "1g", or a number of bytes. */
static int get_size(struct jp *c, yajl_val obj, const char *key, uint64_t *ret)
{
  yajl_val v = jp_field(obj, key);
  uint64_t n;
  if (v == NULL)
    return 0;
  if (YAJL_IS_INTEGER(v) && YAJL_GET_INTEGER(v) >= 0) {
    *ret = YAJL_GET_INTEGER(v);
    return 0;
  }
  if (YAJL_IS_STRING(v) && ar_parse_size(v->u.string, &n) == 0 && n <= LIMIT_MAX) {
    *ret = n;
    return 0;
  }
  return jp_key_error(c, key, "expected a size such as \"512m\" or \"2g\"");
}

static int get_cpus(struct jp *c, yajl_val obj, const char *key, uint64_t *ret)
{
  yajl_val v = jp_field(obj, key);
  double d;
  if (v == NULL)
    return 0;
  if (!YAJL_IS_NUMBER(v) || !isfinite(d = YAJL_GET_DOUBLE(v)) || d < 0 || d > 1e6)
    return jp_key_error(c, key, "expected a number of CPUs");
  *ret = (uint64_t)llround(d * 1000);
  return 0;
}

static int get_count(struct jp *c, yajl_val obj, const char *key, uint64_t *ret)
{
  bool has;
  return jp_uint(c, obj, key, LIMIT_MAX, ret, &has);
}

static int parse_limits(struct jp *c, yajl_val v, struct ar_host_policy *p, bool max)
{
  static const char *const keys[] = {"timeout", "memory", "pids", "cpus", "tmp_size", "shm_size"};
  if (only_keys(c, v, keys, max ? 5 : 6) < 0)
    return -1;
#define PICK(l) (max ? &p->l.max : &p->l.def)
  if (get_duration(c, v, "timeout", PICK(timeout_ms)) < 0 ||
      get_size(c, v, "memory", PICK(memory)) < 0 || get_count(c, v, "pids", PICK(pids)) < 0 ||
      get_cpus(c, v, "cpus", PICK(cpus_milli)) < 0 ||
      get_size(c, v, "tmp_size", PICK(tmp_size)) < 0)
    return -1;
#undef PICK
  return max ? 0 : get_size(c, v, "shm_size", &p->shm_size);
}

static int parse_bools(struct jp *c, yajl_val v, const char *const *keys, size_t n, bool *out)
{
  if (only_keys(c, v, keys, n) < 0)
    return -1;
  for (size_t i = 0; i < n; i++) {
    bool has;
    if (jp_bool(c, v, keys[i], &out[i], &has) < 0)
      return -1;
  }
  return 0;
}

static int parse_audit(struct jp *c, yajl_val v, struct ar_host_policy *p)
{
  static const char *const keys[] = {"enabled", "dir", "max_bytes", "syslog"};
  bool has;
  if (only_keys(c, v, keys, ARRAY_SIZE(keys)) < 0 ||
      jp_bool(c, v, "enabled", &p->audit, &has) < 0 ||
      jp_str(c, v, "dir", &p->audit_dir, &has) < 0 ||
      get_size(c, v, "max_bytes", &p->audit_max_bytes) < 0 ||
      jp_bool(c, v, "syslog", &p->audit_syslog, &has) < 0)
    return -1;
  if (p->audit_dir[0] != '/')
    return jp_key_error(c, "dir", "expected an absolute path");
  return 0;
}

/* A ".." component anywhere, the last one included ("/dev/.." is the root). */
static bool has_dotdot(const char *path)
{
  for (const char *p = strstr(path, ".."); p; p = strstr(p + 1, ".."))
    if ((p == path || p[-1] == '/') && (p[2] == '\0' || p[2] == '/'))
      return true;
  return false;
}

/* Each section: its key, and how to parse it. */
static int parse_section(struct jp *c, yajl_val root, const char *key, struct ar_host_policy *p)
{
  yajl_val v = jp_field(root, key);
  size_t mark;
  int r = 0;
  if (v == NULL)
    return 0;
  mark = jp_push(c, key);
  if (strcmp(key, "devices") == 0) {
    jp_pop(c, mark);
    ar_strv_free_n(p->devices, p->n_devices);
    p->devices = NULL;
    p->n_devices = 0;
    if (jp_strv(c, root, "devices", &p->devices, &p->n_devices) < 0)
      return -1;
    for (size_t i = 0; i < p->n_devices; i++)
      if (strncmp(p->devices[i], "/dev/", 5) != 0 || has_dotdot(p->devices[i]))
        return jp_key_error(c, "devices", "\"%s\": expected a path under /dev/", p->devices[i]);
    return 0;
  }
  if (!YAJL_IS_OBJECT(v))
    r = jp_error(c, "expected object");
  else if (strcmp(key, "controls") == 0)
    r = parse_bools(c, v, control_keys, AR_CTL_COUNT, p->control);
  else if (strcmp(key, "allow") == 0)
    r = parse_bools(c, v, relax_keys, AR_RELAX_COUNT, p->allow);
  else if (strcmp(key, "defaults") == 0 || strcmp(key, "maxima") == 0)
    r = parse_limits(c, v, p, strcmp(key, "maxima") == 0);
  else
    r = parse_audit(c, v, p);
  jp_pop(c, mark);
  return r;
}

int ar_host_policy_parse(const char *json, size_t len, const char *what,
                         struct ar_host_policy **ret, ar_err *err)
{
  static const char *const sections[] = {"controls", "allow", "defaults", "maxima",
                                         "devices",  "audit", "comment"};
  struct ar_host_policy *p = ar_host_policy_default();
  struct jp c;
  yajl_val root;
  int r = -1;

  jp_init(&c, what, err);
  root = jp_parse(&c, json, len);
  if (root == NULL || jp_expect_object(&c, root) < 0 ||
      only_keys(&c, root, sections, ARRAY_SIZE(sections)) < 0)
    goto out;
  if (jp_field(root, "comment") && !YAJL_IS_STRING(jp_field(root, "comment"))) {
    jp_key_error(&c, "comment", "expected string");
    goto out;
  }
  for (size_t i = 0; i < ARRAY_SIZE(sections) - 1; i++)
    if (parse_section(&c, root, sections[i], p) < 0)
      goto out;
  free(p->source);
  p->source = xstrdup(what);
  *ret = steal_pointer(&p);
  r = 0;
out:
  yajl_tree_free(root);
  jp_fini(&c);
  ar_host_policy_free(p);
  return r;
}

static void emit_limit(struct ar_jw *w, const char *key, uint64_t v)
{
  if (v)
    ar_jw_kuint(w, key, v);
}

int ar_host_policy_to_json(const struct ar_host_policy *p, char **ret, ar_err *err)
{
  struct ar_jw *w = ar_jw_new(true);
  ar_jw_map_open(w);
  ar_jw_kstr(w, "source", p->source);
  ar_jw_key(w, "controls");
  ar_jw_map_open(w);
  for (int i = 0; i < AR_CTL_COUNT; i++)
    ar_jw_kbool(w, control_keys[i], p->control[i]);
  ar_jw_map_close(w);
  ar_jw_key(w, "allow");
  ar_jw_map_open(w);
  for (int i = 0; i < AR_RELAX_COUNT; i++)
    ar_jw_kbool(w, relax_keys[i], p->allow[i]);
  ar_jw_map_close(w);
  for (int max = 0; max < 2; max++) {
    ar_jw_key(w, max ? "maxima" : "defaults");
    ar_jw_map_open(w);
    emit_limit(w, "timeout_s", (max ? p->timeout_ms.max : p->timeout_ms.def) / 1000);
    emit_limit(w, "memory", max ? p->memory.max : p->memory.def);
    emit_limit(w, "pids", max ? p->pids.max : p->pids.def);
    if (max ? p->cpus_milli.max : p->cpus_milli.def)
      ar_jw_kdouble(w, "cpus", (max ? p->cpus_milli.max : p->cpus_milli.def) / 1000.0);
    emit_limit(w, "tmp_size", max ? p->tmp_size.max : p->tmp_size.def);
    if (!max)
      emit_limit(w, "shm_size", p->shm_size);
    ar_jw_map_close(w);
  }
  ar_jw_key(w, "devices");
  ar_jw_array_open(w);
  for (size_t i = 0; i < p->n_devices; i++)
    ar_jw_str(w, p->devices[i]);
  ar_jw_array_close(w);
  ar_jw_key(w, "audit");
  ar_jw_map_open(w);
  ar_jw_kbool(w, "enabled", p->audit);
  ar_jw_kstr(w, "dir", p->audit_dir);
  ar_jw_kuint(w, "max_bytes", p->audit_max_bytes);
  ar_jw_kbool(w, "syslog", p->audit_syslog);
  ar_jw_map_close(w);
  ar_jw_map_close(w);
  *ret = ar_jw_finish(w, NULL);
  (void)err;
  return 0;
}
