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
    {'c', -1, -1, "m"}, {'b', -1, -1, "m"}, /* mknod of any node; using it is another matter */
    {'c', 1, 3, "rwm"}, {'c', 1, 5, "rwm"}, {'c', 1, 7, "rwm"}, {'c', 1, 8, "rwm"},
    {'c', 1, 9, "rwm"}, {'c', 5, 0, "rwm"}, {'c', 5, 2, "rwm"}, {'c', 136, -1, "rwm"}};

void ar_device_rules_complete(struct ar_spec *s)
{
  struct ar_linux *l = &s->linux_;
  struct ar_resources *res = &l->resources;

  /* No rules at all: the devices cgroup stays as the kernel made it, as with runc. */
  if (!l->has_resources || res->n_devices == 0)
    return;
  for (size_t i = 0; i < ARRAY_SIZE(defaults); i++)
    ar_resources_add_device_rule(res, true, defaults[i].type, defaults[i].major, defaults[i].minor,
                                 defaults[i].access);
}
