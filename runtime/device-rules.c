/* The devices cgroup rules a container gets: the config's (or the policy's) rules, then, as
 * runc does, allow rules for the default devices and /dev/pts.  A device of linux.devices is
 * usable only if a rule allows it. */
#include <config.h>
#include "devices.h"

#include <string.h>

#include "utils.h"

struct allow {
  char type;
  int64_t major, minor; /* -1: any */
  const char *access;
};

static const struct allow defaults[] = {
    {'c', -1, -1, "m"},  {'b', -1, -1, "m"},  /* mknod of any node; using it is another matter */
    {'c', 1, 3, "rwm"},  {'c', 1, 5, "rwm"},  {'c', 1, 7, "rwm"},  {'c', 1, 8, "rwm"},
    {'c', 1, 9, "rwm"},  {'c', 5, 0, "rwm"},  {'c', 5, 2, "rwm"},  {'c', 136, -1, "rwm"}};

static void append(struct ar_resources *res, char type, int64_t major, int64_t minor,
                   const char *access)
{
  struct ar_device_rule *d;
  res->devices = xrealloc(res->devices, (res->n_devices + 1) * sizeof(*res->devices));
  d = &res->devices[res->n_devices++];
  memset(d, 0, sizeof(*d));
  d->allow = true;
  d->type = type;
  d->has_major = major >= 0;
  d->major = major;
  d->has_minor = minor >= 0;
  d->minor = minor;
  d->access = xstrdup(access);
}

void ar_device_rules_complete(struct ar_spec *s)
{
  struct ar_linux *l = &s->linux_;
  struct ar_resources *res = &l->resources;

  /* No rules at all: the devices cgroup stays as the kernel made it, as with runc. */
  if (!l->has_resources || res->n_devices == 0)
    return;
  for (size_t i = 0; i < ARRAY_SIZE(defaults); i++)
    append(res, defaults[i].type, defaults[i].major, defaults[i].minor, defaults[i].access);
}
