/* Small edits to a spec, shared by the policy layer and the sandbox's bundle writer. */
#include <config.h>

#include <string.h>

#include "runtime/utils.h"
#include "spec/spec.h"

void ar_spec_add_mount(struct ar_spec *s, const char *dst, const char *type, const char *src,
                       const char *options)
{
  struct ar_mount *m;
  cleanup_free char *copy = xstrdup(options);
  char *save = NULL;
  s->mounts = xrealloc(s->mounts, (s->n_mounts + 1) * sizeof(*s->mounts));
  m = &s->mounts[s->n_mounts++];
  memset(m, 0, sizeof(*m));
  m->destination = xstrdup(dst);
  m->type = xstrdup(type);
  m->source = xstrdup(src);
  for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
    m->options = xrealloc(m->options, (m->n_options + 2) * sizeof(char *));
    m->options[m->n_options++] = xstrdup(t);
    m->options[m->n_options] = NULL;
  }
}

void ar_resources_add_device_rule(struct ar_resources *res, bool allow, char type, int64_t major,
                                  int64_t minor, const char *access)
{
  struct ar_device_rule *d;
  res->devices = xrealloc(res->devices, (res->n_devices + 1) * sizeof(*res->devices));
  d = &res->devices[res->n_devices++];
  memset(d, 0, sizeof(*d));
  d->allow = allow;
  d->type = type;
  d->has_major = major >= 0;
  d->major = major;
  d->has_minor = minor >= 0;
  d->minor = minor;
  d->access = xstrdup(access);
}
