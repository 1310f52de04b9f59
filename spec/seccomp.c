/* linux.seccomp.  Names are checked here; the runtime compiles the filter with libseccomp. */
#include <config.h>
#include "spec/parse.h"

#include <stdlib.h>
#include <string.h>

#include "runtime/utils.h"

static int parse_action(struct jp *c, yajl_val v, const char *key, enum ar_seccomp_action *ret)
{
  cleanup_free char *name = NULL;
  int a;

  if (jp_str(c, v, key, &name, NULL) < 0)
    return -1;
  a = ar_seccomp_action_from_name(name);
  if (a < 0)
    return jp_key_error(c, key, "unknown action \"%s\"", name);
  *ret = a;
  return 0;
}

static int parse_arg(struct jp *c, yajl_val v, void *out)
{
  struct ar_seccomp_arg *a = out;
  cleanup_free char *op = NULL;
  bool has;
  int o;

  if (jp_u32(c, v, "index", &a->index, NULL) < 0 || jp_u64(c, v, "value", &a->value, NULL) < 0 ||
      jp_u64(c, v, "valueTwo", &a->value_two, &has) < 0 || jp_str(c, v, "op", &op, NULL) < 0)
    return -1;
  o = ar_seccomp_op_from_name(op);
  if (o < 0)
    return jp_key_error(c, "op", "unknown operator \"%s\"", op);
  a->op = o;
  return 0;
}

static int parse_syscall(struct jp *c, yajl_val v, void *out)
{
  struct ar_syscall_rule *r = out;

  if (jp_field(v, "names") == NULL)
    return jp_key_error(c, "names", "missing");
  if (jp_strv(c, v, "names", &r->names, &r->n_names) < 0 ||
      parse_action(c, v, "action", &r->action) < 0 ||
      jp_u32(c, v, "errnoRet", &r->errno_ret, &r->has_errno_ret) < 0)
    return -1;
  return jp_object_array(c, v, "args", sizeof(struct ar_seccomp_arg), parse_arg, (void **)&r->args,
                         &r->n_args);
}

/* Each element of obj[key] must pass known(), or the error names it. */
static int check_names(struct jp *c, const char *key, char **names, size_t n,
                       bool (*known)(const char *), const char *what)
{
  for (size_t i = 0; i < n; i++) {
    size_t mark;

    if (known(names[i]))
      continue;
    mark = jp_push(c, key);
    jp_push_idx(c, i);
    jp_error(c, "unknown %s \"%s\"", what, names[i]);
    jp_pop(c, mark);
    return -1;
  }
  return 0;
}

int ar_parse_seccomp(struct jp *c, yajl_val v, void *out)
{
  struct ar_seccomp *s = out;
  bool has;

  if (parse_action(c, v, "defaultAction", &s->default_action) < 0 ||
      jp_u32(c, v, "defaultErrnoRet", &s->default_errno_ret, &s->has_default_errno_ret) < 0 ||
      jp_strv(c, v, "architectures", &s->architectures, &s->n_architectures) < 0 ||
      check_names(c, "architectures", s->architectures, s->n_architectures, ar_seccomp_arch_known,
                  "architecture") < 0 ||
      jp_strv(c, v, "flags", &s->flags, &s->n_flags) < 0 ||
      check_names(c, "flags", s->flags, s->n_flags, ar_seccomp_flag_known, "flag") < 0 ||
      jp_str(c, v, "listenerPath", &s->listener_path, &has) < 0 ||
      jp_str(c, v, "listenerMetadata", &s->listener_metadata, &has) < 0)
    return -1;
  return jp_object_array(c, v, "syscalls", sizeof(struct ar_syscall_rule), parse_syscall,
                         (void **)&s->syscalls, &s->n_syscalls);
}

void ar_seccomp_free(struct ar_seccomp *s)
{
  if (s == NULL)
    return;
  ar_strv_free_n(s->architectures, s->n_architectures);
  ar_strv_free_n(s->flags, s->n_flags);
  free(s->listener_path);
  free(s->listener_metadata);
  for (size_t i = 0; i < s->n_syscalls; i++) {
    ar_strv_free_n(s->syscalls[i].names, s->syscalls[i].n_names);
    free(s->syscalls[i].args);
  }
  free(s->syscalls);
  free(s);
}
