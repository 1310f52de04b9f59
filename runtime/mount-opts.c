/* The mount option table: every option runc knows, with the same meaning. */
#include <config.h>
#include "mount-opts.h"

#include <errno.h>
#include <string.h>
#include <sys/mount.h>

#include "utils.h"

enum opt_kind {
  OPT_FLAG,        /* an MS_* flag, set or cleared */
  OPT_PROPAGATION, /* MS_SHARED ..., applied separately after the mount */
  OPT_RECURSIVE,   /* a MOUNT_ATTR_* for mount_setattr(AT_RECURSIVE) */
};

struct opt {
  const char *name;
  enum opt_kind kind;
  bool clear;
  bool atime;
  unsigned long value;
};

static const struct opt opts[] = {
    {"defaults", OPT_FLAG, false, false, 0},
    {"ro", OPT_FLAG, false, false, MS_RDONLY},
    {"rw", OPT_FLAG, true, false, MS_RDONLY},
    {"suid", OPT_FLAG, true, false, MS_NOSUID},
    {"nosuid", OPT_FLAG, false, false, MS_NOSUID},
    {"dev", OPT_FLAG, true, false, MS_NODEV},
    {"nodev", OPT_FLAG, false, false, MS_NODEV},
    {"exec", OPT_FLAG, true, false, MS_NOEXEC},
    {"noexec", OPT_FLAG, false, false, MS_NOEXEC},
    {"sync", OPT_FLAG, false, false, MS_SYNCHRONOUS},
    {"async", OPT_FLAG, true, false, MS_SYNCHRONOUS},
    {"dirsync", OPT_FLAG, false, false, MS_DIRSYNC},
    {"remount", OPT_FLAG, false, false, MS_REMOUNT},
    {"mand", OPT_FLAG, false, false, MS_MANDLOCK},
    {"nomand", OPT_FLAG, true, false, MS_MANDLOCK},
    {"atime", OPT_FLAG, true, true, MS_NOATIME},
    {"noatime", OPT_FLAG, false, true, MS_NOATIME},
    {"diratime", OPT_FLAG, true, true, MS_NODIRATIME},
    {"nodiratime", OPT_FLAG, false, true, MS_NODIRATIME},
    {"relatime", OPT_FLAG, false, true, MS_RELATIME},
    {"norelatime", OPT_FLAG, true, true, MS_RELATIME},
    {"strictatime", OPT_FLAG, false, true, MS_STRICTATIME},
    {"nostrictatime", OPT_FLAG, true, true, MS_STRICTATIME},
    {"lazytime", OPT_FLAG, false, false, MS_LAZYTIME},
    {"nolazytime", OPT_FLAG, true, false, MS_LAZYTIME},
    {"iversion", OPT_FLAG, false, false, MS_I_VERSION},
    {"noiversion", OPT_FLAG, true, false, MS_I_VERSION},
    {"silent", OPT_FLAG, false, false, MS_SILENT},
    {"loud", OPT_FLAG, true, false, MS_SILENT},
    {"nosymfollow", OPT_FLAG, false, false, MS_NOSYMFOLLOW},
    {"symfollow", OPT_FLAG, true, false, MS_NOSYMFOLLOW},
    {"bind", OPT_FLAG, false, false, MS_BIND},
    {"rbind", OPT_FLAG, false, false, MS_BIND | MS_REC},

    {"private", OPT_PROPAGATION, false, false, MS_PRIVATE},
    {"rprivate", OPT_PROPAGATION, false, false, MS_PRIVATE | MS_REC},
    {"shared", OPT_PROPAGATION, false, false, MS_SHARED},
    {"rshared", OPT_PROPAGATION, false, false, MS_SHARED | MS_REC},
    {"slave", OPT_PROPAGATION, false, false, MS_SLAVE},
    {"rslave", OPT_PROPAGATION, false, false, MS_SLAVE | MS_REC},
    {"unbindable", OPT_PROPAGATION, false, false, MS_UNBINDABLE},
    {"runbindable", OPT_PROPAGATION, false, false, MS_UNBINDABLE | MS_REC},

    {"rro", OPT_RECURSIVE, false, false, MOUNT_ATTR_RDONLY},
    {"rrw", OPT_RECURSIVE, true, false, MOUNT_ATTR_RDONLY},
    {"rnosuid", OPT_RECURSIVE, false, false, MOUNT_ATTR_NOSUID},
    {"rsuid", OPT_RECURSIVE, true, false, MOUNT_ATTR_NOSUID},
    {"rnodev", OPT_RECURSIVE, false, false, MOUNT_ATTR_NODEV},
    {"rdev", OPT_RECURSIVE, true, false, MOUNT_ATTR_NODEV},
    {"rnoexec", OPT_RECURSIVE, false, false, MOUNT_ATTR_NOEXEC},
    {"rexec", OPT_RECURSIVE, true, false, MOUNT_ATTR_NOEXEC},
    {"rnodiratime", OPT_RECURSIVE, false, false, MOUNT_ATTR_NODIRATIME},
    {"rdiratime", OPT_RECURSIVE, true, false, MOUNT_ATTR_NODIRATIME},
    {"rnosymfollow", OPT_RECURSIVE, false, false, MOUNT_ATTR_NOSYMFOLLOW},
    {"rsymfollow", OPT_RECURSIVE, true, false, MOUNT_ATTR_NOSYMFOLLOW},
    /* The atime modes are one field: setting one replaces the others.  Clearing a mode falls
     * back to the kernel's default, relatime. */
    {"rnoatime", OPT_RECURSIVE, false, true, MOUNT_ATTR_NOATIME},
    {"rstrictatime", OPT_RECURSIVE, false, true, MOUNT_ATTR_STRICTATIME},
    {"rrelatime", OPT_RECURSIVE, false, true, MOUNT_ATTR_RELATIME},
    {"ratime", OPT_RECURSIVE, false, true, MOUNT_ATTR_RELATIME},
    {"rnorelatime", OPT_RECURSIVE, false, true, MOUNT_ATTR_RELATIME},
    {"rnostrictatime", OPT_RECURSIVE, false, true, MOUNT_ATTR_RELATIME},
};

static const struct opt *find_opt(const char *name)
{
  for (size_t i = 0; i < ARRAY_SIZE(opts); i++)
    if (strcmp(opts[i].name, name) == 0)
      return &opts[i];
  return NULL;
}

static void apply_recursive(struct ar_mount_opts *o, const struct opt *p)
{
  if (p->atime) {
    o->attr_clr |= MOUNT_ATTR__ATIME;
    o->attr_set = (o->attr_set & ~(uint64_t)MOUNT_ATTR__ATIME) | p->value;
  } else if (p->clear) {
    o->attr_set &= ~(uint64_t)p->value;
    o->attr_clr |= p->value;
  } else {
    o->attr_clr &= ~(uint64_t)p->value;
    o->attr_set |= p->value;
  }
}

static void apply_opt(struct ar_mount_opts *o, const struct opt *p)
{
  switch (p->kind) {
  case OPT_FLAG:
    if (p->clear)
      o->flags &= ~p->value;
    else
      o->flags |= p->value;
    o->has_atime |= p->atime;
    break;
  case OPT_PROPAGATION:
    o->propagation[o->n_propagation++] = p->value;
    break;
  case OPT_RECURSIVE:
    apply_recursive(o, p);
    break;
  }
}

static void append_data(char **data, const char *opt)
{
  char *old = *data;

  *data = old ? xasprintf("%s,%s", old, opt) : xstrdup(opt);
  free(old);
}

int ar_mount_opts_parse(char *const *options, size_t n, struct ar_mount_opts *ret, ar_err *err)
{
  struct ar_mount_opts o = {0};

  for (size_t i = 0; i < n; i++) {
    const char *name = options[i];
    const struct opt *p;

    if (name == NULL || *name == '\0')
      continue;
    if (strcmp(name, "idmap") == 0 || strcmp(name, "ridmap") == 0) {
      ar_mount_opts_clear(&o);
      return ar_error(err, ENOTSUP, "mount option '%s': idmapped mounts are not supported", name);
    }
    if (strcmp(name, "tmpcopyup") == 0) {
      o.tmpcopyup = true;
      continue;
    }
    p = find_opt(name);
    if (p == NULL) {
      append_data(&o.data, name);
      continue;
    }
    if (p->kind == OPT_PROPAGATION && o.n_propagation == AR_MAX_PROPAGATION) {
      ar_mount_opts_clear(&o);
      return ar_error(err, 0, "mount option '%s': too many propagation options", name);
    }
    apply_opt(&o, p);
  }
  *ret = o;
  return 0;
}

void ar_mount_opts_clear(struct ar_mount_opts *o)
{
  free(o->data);
  o->data = NULL;
}

int ar_propagation_from_name(const char *name, unsigned long *ret)
{
  const struct opt *p = find_opt(name);

  if (p == NULL || p->kind != OPT_PROPAGATION)
    return -1;
  *ret = p->value;
  return 0;
}
