/* The "process" object: config.json's, and process.json for `exec --process`. */
#include <config.h>
#include "spec/parse.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/utils.h"

static const char *const cap_set_keys[AR_CAP_NSETS] = {
    [AR_CAP_BOUNDING] = "bounding",       [AR_CAP_EFFECTIVE] = "effective",
    [AR_CAP_INHERITABLE] = "inheritable", [AR_CAP_PERMITTED] = "permitted",
    [AR_CAP_AMBIENT] = "ambient",
};

const char *ar_cap_set_key(enum ar_cap_set s)
{
  return (unsigned)s < AR_CAP_NSETS ? cap_set_keys[s] : NULL;
}

static int parse_console_size(struct jp *c, yajl_val v, void *out)
{
  struct ar_process *p = out;

  if (jp_u32(c, v, "height", &p->console_height, NULL) < 0)
    return -1;
  return jp_u32(c, v, "width", &p->console_width, NULL);
}

static int parse_user(struct jp *c, yajl_val v, void *out)
{
  struct ar_user *u = out;
  bool has;

  /* uid and gid are REQUIRED in the spec, but Go runtimes read an absent one as 0: so do we */
  if (jp_u32(c, v, "uid", &u->uid, &has) < 0 || jp_u32(c, v, "gid", &u->gid, &has) < 0 ||
      jp_u32(c, v, "umask", &u->umask, &u->has_umask) < 0)
    return -1;
  return jp_u32_array(c, v, "additionalGids", &u->additional_gids, &u->n_additional_gids);
}

static int parse_capabilities(struct jp *c, yajl_val v, void *out)
{
  struct ar_capabilities *caps = out;

  for (int s = 0; s < AR_CAP_NSETS; s++) {
    size_t mark;

    if (jp_strv(c, v, cap_set_keys[s], &caps->names[s], &caps->n_names[s]) < 0)
      return -1;
    mark = jp_push(c, cap_set_keys[s]);
    for (size_t i = 0; i < caps->n_names[s]; i++) {
      if (ar_cap_from_name(caps->names[s][i]) < 0) {
        jp_push_idx(c, i);
        jp_error(c, "unknown capability \"%s\"", caps->names[s][i]);
        jp_pop(c, mark);
        return -1;
      }
    }
    jp_pop(c, mark);
  }
  return 0;
}

static int parse_rlimit(struct jp *c, yajl_val v, void *out)
{
  struct ar_rlimit *r = out;

  if (jp_str(c, v, "type", &r->type, NULL) < 0)
    return -1;
  r->resource = ar_rlimit_from_name(r->type);
  if (r->resource < 0)
    return jp_key_error(c, "type", "unknown rlimit \"%s\"", r->type);
  if (jp_u64(c, v, "hard", &r->hard, NULL) < 0 || jp_u64(c, v, "soft", &r->soft, NULL) < 0)
    return -1;
  return 0;
}

static int parse_io_priority(struct jp *c, yajl_val v, void *out)
{
  struct ar_io_priority *io = out;
  int64_t prio = 0;
  bool has;

  if (jp_str(c, v, "class", &io->class_name, NULL) < 0)
    return -1;
  if (strcmp(io->class_name, "IOPRIO_CLASS_RT") != 0 &&
      strcmp(io->class_name, "IOPRIO_CLASS_BE") != 0 &&
      strcmp(io->class_name, "IOPRIO_CLASS_IDLE") != 0)
    return jp_key_error(c, "class", "unknown I/O priority class \"%s\"", io->class_name);
  if (jp_int(c, v, "priority", INT_MIN, INT_MAX, &prio, &has) < 0)
    return -1;
  io->priority = prio;
  return 0;
}

static int parse_process_scalars(struct jp *c, yajl_val v, struct ar_process *p)
{
  bool has;
  int64_t oom = 0;

  if (jp_bool(c, v, "terminal", &p->terminal, &has) < 0 ||
      jp_object(c, v, "consoleSize", parse_console_size, p, &p->has_console_size) < 0 ||
      jp_object(c, v, "user", parse_user, &p->user, &has) < 0 ||
      jp_bool(c, v, "noNewPrivileges", &p->no_new_privileges, &has) < 0 ||
      jp_int(c, v, "oomScoreAdj", INT_MIN, INT_MAX, &oom, &p->has_oom_score_adj) < 0 ||
      jp_str(c, v, "apparmorProfile", &p->apparmor_profile, &has) < 0 ||
      jp_str(c, v, "selinuxLabel", &p->selinux_label, &has) < 0 ||
      jp_object(c, v, "ioPriority", parse_io_priority, &p->io_priority, &p->has_io_priority) < 0)
    return -1;
  p->oom_score_adj = oom;
  return 0;
}

int ar_parse_process(struct jp *c, yajl_val v, void *out)
{
  struct ar_process *p = out;

  if (parse_process_scalars(c, v, p) < 0)
    return -1;
  if (jp_field(v, "args") == NULL)
    return jp_key_error(c, "args", "missing");
  if (jp_strv(c, v, "args", &p->args, &p->n_args) < 0)
    return -1;
  if (p->n_args == 0)
    return jp_key_error(c, "args", "must not be empty");
  if (jp_strv(c, v, "env", &p->env, &p->n_env) < 0 || jp_str(c, v, "cwd", &p->cwd, NULL) < 0)
    return -1;
  if (p->cwd[0] != '/')
    return jp_key_error(c, "cwd", "must be an absolute path");
  if (jp_object(c, v, "capabilities", parse_capabilities, &p->capabilities, &p->has_capabilities) <
      0)
    return -1;
  return jp_object_array(c, v, "rlimits", sizeof(struct ar_rlimit), parse_rlimit,
                         (void **)&p->rlimits, &p->n_rlimits);
}

void ar_process_clear(struct ar_process *p)
{
  free(p->user.additional_gids);
  ar_strv_free_n(p->args, p->n_args);
  ar_strv_free_n(p->env, p->n_env);
  free(p->cwd);
  for (int s = 0; s < AR_CAP_NSETS; s++)
    ar_strv_free_n(p->capabilities.names[s], p->capabilities.n_names[s]);
  for (size_t i = 0; i < p->n_rlimits; i++)
    free(p->rlimits[i].type);
  free(p->rlimits);
  free(p->apparmor_profile);
  free(p->selinux_label);
  free(p->io_priority.class_name);
  memset(p, 0, sizeof(*p));
}

void ar_process_free(struct ar_process *p)
{
  if (p == NULL)
    return;
  ar_process_clear(p);
  free(p);
}

int ar_process_parse(const char *json, size_t len, const char *what, struct ar_process **ret,
                     ar_err *err)
{
  struct ar_process *p = xcalloc(1, sizeof(*p));
  struct jp c;
  yajl_val v;
  int rc = -1;

  jp_init(&c, what, err);
  v = jp_parse(&c, json, len);
  if (v != NULL && jp_expect_object(&c, v) == 0 && ar_parse_process(&c, v, p) == 0)
    rc = 0;
  yajl_tree_free(v);
  jp_fini(&c);
  if (rc < 0) {
    ar_process_free(p);
    return -1;
  }
  *ret = p;
  return 0;
}
