/* config.json: the top level, root, mounts and hooks; the rest is in process.c, linux.c,
 * resources.c and seccomp.c. */
#include <config.h>
#include "spec/parse.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/utils.h"

static int parse_root(struct jp *c, yajl_val v, void *out)
{
  struct ar_spec *s = out;
  bool has;

  if (jp_str(c, v, "path", &s->root_path, NULL) < 0)
    return -1;
  return jp_bool(c, v, "readonly", &s->root_readonly, &has);
}

static int parse_mount(struct jp *c, yajl_val v, void *out)
{
  struct ar_mount *m = out;
  bool has;

  if (jp_str(c, v, "destination", &m->destination, NULL) < 0 ||
      jp_str(c, v, "type", &m->type, &has) < 0 || jp_str(c, v, "source", &m->source, &has) < 0)
    return -1;
  return jp_strv(c, v, "options", &m->options, &m->n_options);
}

static int parse_hook(struct jp *c, yajl_val v, void *out)
{
  struct ar_hook *h = out;
  int64_t timeout = 0;

  if (jp_str(c, v, "path", &h->path, NULL) < 0 || jp_strv(c, v, "args", &h->args, &h->n_args) < 0 ||
      jp_strv(c, v, "env", &h->env, &h->n_env) < 0 ||
      jp_int(c, v, "timeout", INT64_MIN, INT_MAX, &timeout, &h->has_timeout) < 0)
    return -1;
  if (h->has_timeout && timeout <= 0)
    return jp_key_error(c, "timeout", "must be greater than zero");
  h->timeout = timeout;
  return 0;
}

static int parse_hooks(struct jp *c, yajl_val v, void *out)
{
  struct ar_spec *s = out;

  for (int p = 0; p < AR_HOOK_NPHASES; p++) {
    struct ar_hook_list *l = &s->hooks[p];

    if (jp_object_array(c, v, ar_hook_phase_name(p), sizeof(struct ar_hook), parse_hook,
                        (void **)&l->hooks, &l->n_hooks) < 0)
      return -1;
  }
  return 0;
}

static int parse_process_ptr(struct jp *c, yajl_val v, void *out)
{
  struct ar_process **p = out;

  *p = xcalloc(1, sizeof(**p));
  return ar_parse_process(c, v, *p);
}

static int parse_spec(struct jp *c, yajl_val v, struct ar_spec *s)
{
  bool has;

  if (jp_expect_object(c, v) < 0 || jp_str(c, v, "ociVersion", &s->oci_version, NULL) < 0)
    return -1;
  /* optional in the runtime-spec, but neither runc nor we can run without a rootfs */
  if (jp_field(v, "root") == NULL)
    return jp_error(c, "root: missing");
  if (jp_object(c, v, "root", parse_root, s, &has) < 0 ||
      jp_object_array(c, v, "mounts", sizeof(struct ar_mount), parse_mount, (void **)&s->mounts,
                      &s->n_mounts) < 0 ||
      jp_object(c, v, "process", parse_process_ptr, &s->process, &has) < 0 ||
      jp_str(c, v, "hostname", &s->hostname, &has) < 0 ||
      jp_str(c, v, "domainname", &s->domainname, &has) < 0 ||
      jp_kvmap(c, v, "annotations", &s->annotations, &s->n_annotations) < 0 ||
      jp_object(c, v, "hooks", parse_hooks, s, &has) < 0 ||
      jp_object(c, v, "linux", ar_parse_linux, &s->linux_, &s->has_linux) < 0)
    return -1;
  return 0;
}

int ar_spec_parse(const char *json, size_t len, const char *what, struct ar_spec **ret, ar_err *err)
{
  struct ar_spec *s = xcalloc(1, sizeof(*s));
  struct jp c;
  yajl_val v;
  int rc = -1;

  jp_init(&c, what, err);
  v = jp_parse(&c, json, len);
  if (v != NULL && parse_spec(&c, v, s) == 0)
    rc = 0;
  yajl_tree_free(v);
  jp_fini(&c);
  if (rc < 0) {
    ar_spec_free(s);
    return -1;
  }
  *ret = s;
  return 0;
}

int ar_spec_load(const char *path, const char *what, struct ar_spec **ret, ar_err *err)
{
  cleanup_free char *data = NULL;
  size_t len = 0;

  if (ar_read_file(path, &data, &len, err) < 0)
    return -1;
  return ar_spec_parse(data, len, what, ret, err);
}

void ar_spec_free(struct ar_spec *s)
{
  if (s == NULL)
    return;
  free(s->oci_version);
  free(s->root_path);
  for (size_t i = 0; i < s->n_mounts; i++) {
    free(s->mounts[i].destination);
    free(s->mounts[i].type);
    free(s->mounts[i].source);
    ar_strv_free_n(s->mounts[i].options, s->mounts[i].n_options);
  }
  free(s->mounts);
  ar_process_free(s->process);
  free(s->hostname);
  free(s->domainname);
  ar_kv_free(s->annotations, s->n_annotations);
  for (int p = 0; p < AR_HOOK_NPHASES; p++) {
    for (size_t i = 0; i < s->hooks[p].n_hooks; i++) {
      struct ar_hook *h = &s->hooks[p].hooks[i];

      free(h->path);
      ar_strv_free_n(h->args, h->n_args);
      ar_strv_free_n(h->env, h->n_env);
    }
    free(s->hooks[p].hooks);
  }
  ar_linux_clear(&s->linux_);
  free(s);
}
