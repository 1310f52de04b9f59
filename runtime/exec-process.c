/* The process an exec runs: --process, or the container's own with the command line's changes. */
#include <config.h>
#include "exec.h"

#include <string.h>

#include "utils.h"

static void copy_caps(struct ar_capabilities *dst, const struct ar_capabilities *src)
{
  for (int i = 0; i < AR_CAP_NSETS; i++) {
    dst->names[i] = ar_strv_dup(src->names[i], src->n_names[i]);
    dst->n_names[i] = src->n_names[i];
  }
}

static void add_cap(struct ar_capabilities *c, const char *name)
{
  static const enum ar_cap_set sets[] = {AR_CAP_BOUNDING, AR_CAP_EFFECTIVE, AR_CAP_PERMITTED};
  for (size_t i = 0; i < ARRAY_SIZE(sets); i++) {
    enum ar_cap_set s = sets[i];
    c->names[s] = xrealloc(c->names[s], (c->n_names[s] + 2) * sizeof(char *));
    c->names[s][c->n_names[s]++] = xstrdup(name);
    c->names[s][c->n_names[s]] = NULL;
  }
}

/* KEY=V replaces an existing KEY, else is appended. */
static void set_env(struct ar_process *p, const char *kv)
{
  const char *eq = strchr(kv, '=');
  size_t klen = eq ? (size_t)(eq - kv) : strlen(kv);
  for (size_t i = 0; i < p->n_env; i++) {
    if (strncmp(p->env[i], kv, klen) == 0 && p->env[i][klen] == '=') {
      free(p->env[i]);
      p->env[i] = xstrdup(kv);
      return;
    }
  }
  p->env = xrealloc(p->env, (p->n_env + 2) * sizeof(char *));
  p->env[p->n_env++] = xstrdup(kv);
  p->env[p->n_env] = NULL;
}

static int parse_user(struct ar_process *p, const char *user, ar_err *err)
{
  char *end;
  unsigned long uid = strtoul(user, &end, 10), gid = 0;
  if (end == user || (*end && *end != ':'))
    return ar_error(err, 0, "--user \"%s\": expected UID[:GID]", user);
  if (*end == ':') {
    const char *g = end + 1;
    gid = strtoul(g, &end, 10);
    if (end == g || *end)
      return ar_error(err, 0, "--user \"%s\": expected UID[:GID]", user);
  }
  p->user.uid = uid;
  p->user.gid = gid;
  return 0;
}

static struct ar_process *from_container(const struct ar_process *base)
{
  struct ar_process *p = xcalloc(1, sizeof(*p));
  p->user = base->user;
  p->user.additional_gids = xcalloc(base->user.n_additional_gids + 1, sizeof(uint32_t));
  if (base->user.n_additional_gids)
    memcpy(p->user.additional_gids, base->user.additional_gids,
           base->user.n_additional_gids * sizeof(uint32_t));
  p->env = ar_strv_dup(base->env, base->n_env);
  p->n_env = base->n_env;
  p->cwd = xstrdup(base->cwd);
  p->has_capabilities = base->has_capabilities;
  copy_caps(&p->capabilities, &base->capabilities);
  p->rlimits = xcalloc(base->n_rlimits + 1, sizeof(*p->rlimits));
  for (size_t i = 0; i < base->n_rlimits; i++) {
    p->rlimits[i] = base->rlimits[i];
    p->rlimits[i].type = xstrdup(base->rlimits[i].type);
  }
  p->n_rlimits = base->n_rlimits;
  p->no_new_privileges = base->no_new_privileges;
  p->has_oom_score_adj = base->has_oom_score_adj;
  p->oom_score_adj = base->oom_score_adj;
  p->apparmor_profile = xstrdup(base->apparmor_profile);
  p->selinux_label = xstrdup(base->selinux_label);
  return p;
}

static int apply_cli(struct ar_process *p, const struct ar_exec_opts *o, ar_err *err)
{
  if (o->n_args == 0)
    return ar_error(err, 0, "exec: no command given (and no --process)");
  p->args = ar_strv_dup(o->args, o->n_args);
  p->n_args = o->n_args;
  p->terminal = o->tty;
  for (size_t i = 0; i < o->n_env; i++)
    set_env(p, o->env[i]);
  if (o->cwd) {
    free(p->cwd);
    p->cwd = xstrdup(o->cwd);
  }
  if (o->user && parse_user(p, o->user, err) < 0)
    return -1;
  if (o->n_gids) {
    free(p->user.additional_gids);
    p->user.additional_gids = xcalloc(o->n_gids, sizeof(uint32_t));
    memcpy(p->user.additional_gids, o->gids, o->n_gids * sizeof(uint32_t));
    p->user.n_additional_gids = o->n_gids;
  }
  if (o->n_caps)
    p->has_capabilities = true;
  for (size_t i = 0; i < o->n_caps; i++)
    add_cap(&p->capabilities, o->caps[i]);
  if (o->no_new_privs)
    p->no_new_privileges = true;
  if (o->apparmor) {
    free(p->apparmor_profile);
    p->apparmor_profile = xstrdup(o->apparmor);
  }
  return 0;
}

static int load_process_file(const struct ar_exec_opts *o, struct ar_process **ret, ar_err *err)
{
  cleanup_free char *buf = NULL;
  size_t len;
  int r = strcmp(o->process_file, "-") == 0 ? ar_read_fd(0, &buf, &len, err)
                                             : ar_read_file(o->process_file, &buf, &len, err);
  if (r < 0)
    return ar_error_wrap(err, "--process");
  return ar_process_parse(buf, len, "process.json", ret, err);
}

int ar_exec_build_process(const struct ar_spec *s, const struct ar_exec_opts *o,
                          struct ar_process **ret, ar_err *err)
{
  struct ar_process *p;
  if (o->process_file) {
    if (o->n_args)
      return ar_error(err, 0, "exec: --process and a command cannot be used together");
    if (load_process_file(o, ret, err) < 0)
      return -1;
    if (o->tty)
      (*ret)->terminal = true;
    return 0;
  }
  if (s->process == NULL)
    return ar_error(err, 0, "exec: the container has no process to take defaults from");
  p = from_container(s->process);
  if (apply_cli(p, o, err) < 0) {
    ar_process_free(p);
    return -1;
  }
  *ret = p;
  return 0;
}
