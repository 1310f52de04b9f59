/* Capabilities and the user switch.  Runs in the child, after the mounts and before seccomp when
 * no_new_privs is set.  The order matters: the bounding set can only shrink while we still hold
 * CAP_SETPCAP, and the uid switch keeps the permitted set only under PR_SET_KEEPCAPS. */
#include <config.h>
#include "caps.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <sys/stat.h>

#include "log.h"
#include "utils.h"

static const char *cap_display(int cap)
{
  const char *name = ar_cap_name(cap);
  return name ? name : "an unnamed capability";
}

/* Read a small /proc file into buf; -1 with errno on failure. */
static int read_small(const char *path, char *buf, size_t len)
{
  cleanup_close int fd = open(path, O_RDONLY | O_CLOEXEC);
  ssize_t n;

  if (fd < 0)
    return -1;
  n = ar_read_all(fd, buf, len - 1);
  if (n < 0)
    return -1;
  buf[n] = '\0';
  return 0;
}

/* The highest capability the running kernel knows, which may be below what the spec table knows.
 * Cached: ar_caps_resolve runs it in the parent, so the child needs no /proc after pivot_root. */
static int kernel_cap_last(void)
{
  static int last = -1;
  char buf[32];

  if (last >= 0)
    return last;
  if (read_small("/proc/sys/kernel/cap_last_cap", buf, sizeof(buf)) == 0)
    last = atoi(buf);
  if (last <= 0)
    last = (int)cap_max_bits() - 1;
  if (last > 63)
    last = 63;
  return last;
}

int ar_caps_resolve(const struct ar_capabilities *c, struct ar_capmask *ret, ar_err *err)
{
  struct ar_capmask m = {{0}};
  uint64_t warned = 0;
  int klast = kernel_cap_last();

  for (int s = 0; s < AR_CAP_NSETS; s++) {
    for (size_t i = 0; i < c->n_names[s]; i++) {
      const char *name = c->names[s][i];
      int cap = ar_cap_from_name(name);

      if (cap < 0 || cap > 63)
        return ar_error(err, 0, "unknown capability \"%s\"", name);
      if (cap > klast) { /* as runc: a profile may name capabilities of newer kernels */
        if (!(warned & (UINT64_C(1) << cap)))
          ar_warn("capability \"%s\" is unknown to the running kernel (last is %d): ignored", name,
                  klast);
        warned |= UINT64_C(1) << cap;
        continue;
      }
      m.set[s] |= UINT64_C(1) << cap;
    }
  }
  *ret = m;
  return 0;
}

static int drop_bounding(uint64_t keep, ar_err *err)
{
  int klast = kernel_cap_last();

  for (int cap = 0; cap <= klast; cap++) {
    if (keep & (UINT64_C(1) << cap))
      continue;
    /* reading first spares us CAP_SETPCAP for caps that are gone already */
    if (prctl(PR_CAPBSET_READ, cap, 0, 0, 0) != 1)
      continue;
    if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0)
      return ar_error(err, errno, "drop %s from the bounding set", cap_display(cap));
  }
  return 0;
}

static bool setgroups_denied(void)
{
  char buf[16];

  /* only exists (and can say deny) inside a user namespace */
  if (read_small("/proc/self/setgroups", buf, sizeof(buf)) < 0)
    return false;
  return strncmp(buf, "deny", 4) == 0;
}

static int set_groups(const struct ar_user *u, ar_err *err)
{
  cleanup_free gid_t *gids = NULL;

  if (setgroups_denied()) {
    if (u->n_additional_gids > 0)
      ar_warn("setgroups is denied in this user namespace: additionalGids ignored");
    return 0;
  }
  if (u->n_additional_gids > 0) {
    gids = xcalloc(u->n_additional_gids, sizeof(*gids));
    for (size_t i = 0; i < u->n_additional_gids; i++)
      gids[i] = u->additional_gids[i];
  }
  /* even with none: the runtime's own supplementary groups must not leak in */
  if (setgroups(u->n_additional_gids, gids) < 0) {
    /* no /proc to tell us setgroups is denied: without CAP_SETGID we had no groups to clear */
    if (errno == EPERM && u->n_additional_gids == 0) {
      ar_debug("setgroups: %s: supplementary groups left as they are", strerror(errno));
      return 0;
    }
    return ar_error(err, errno, "setgroups (%zu groups)", u->n_additional_gids);
  }
  return 0;
}

static int switch_user(const struct ar_user *u, ar_err *err)
{
  if (set_groups(u, err) < 0)
    return -1;
  if (setresgid(u->gid, u->gid, u->gid) < 0)
    return ar_error(err, errno, "setresgid %u", u->gid);
  if (setresuid(u->uid, u->uid, u->uid) < 0)
    return ar_error(err, errno, "setresuid %u", u->uid);
  return 0;
}

static int set_cap_flag(cap_t c, cap_flag_t flag, uint64_t mask)
{
  for (int cap = 0; cap <= kernel_cap_last(); cap++) {
    cap_value_t v = cap;

    if ((mask & (UINT64_C(1) << cap)) && cap_set_flag(c, flag, 1, &v, CAP_SET) < 0)
      return -1;
  }
  return 0;
}

static int set_proc_caps(const struct ar_capmask *caps, ar_err *err)
{
  cap_t c = cap_init();
  int rc;

  if (c == NULL)
    return ar_error(err, errno, "cap_init");
  rc = set_cap_flag(c, CAP_EFFECTIVE, caps->set[AR_CAP_EFFECTIVE]);
  if (rc == 0)
    rc = set_cap_flag(c, CAP_PERMITTED, caps->set[AR_CAP_PERMITTED]);
  if (rc == 0)
    rc = set_cap_flag(c, CAP_INHERITABLE, caps->set[AR_CAP_INHERITABLE]);
  if (rc == 0)
    rc = cap_set_proc(c);
  if (rc < 0) {
    int saved = errno;
    cap_free(c);
    return ar_error(err, saved, "capset (effective %#llx, permitted %#llx, inheritable %#llx)",
                    (unsigned long long)caps->set[AR_CAP_EFFECTIVE],
                    (unsigned long long)caps->set[AR_CAP_PERMITTED],
                    (unsigned long long)caps->set[AR_CAP_INHERITABLE]);
  }
  cap_free(c);
  return 0;
}

static int set_ambient(const struct ar_capmask *caps, ar_err *err)
{
  uint64_t amb = caps->set[AR_CAP_AMBIENT];
  uint64_t ok = caps->set[AR_CAP_PERMITTED] & caps->set[AR_CAP_INHERITABLE];

  if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0) {
    if (errno != EINVAL)
      return ar_error(err, errno, "clear the ambient capabilities");
    if (amb)
      ar_warn("the kernel has no ambient capabilities: the ambient set is ignored");
    return 0;
  }
  for (int cap = 0; cap <= kernel_cap_last(); cap++) {
    if (!(amb & (UINT64_C(1) << cap)))
      continue;
    if (!(ok & (UINT64_C(1) << cap))) {
      ar_debug("%s is ambient but not both permitted and inheritable: not raised", cap_display(cap));
      continue;
    }
    if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, cap, 0, 0) < 0)
      return ar_error(err, errno, "raise the ambient capability %s", cap_display(cap));
  }
  return 0;
}

int ar_caps_apply_user(const struct ar_process *p, const struct ar_capmask *caps, ar_err *err)
{
  /* caps NULL: leave the capability sets to the kernel's uid-change rules */
  if (caps) {
    if (drop_bounding(caps->set[AR_CAP_BOUNDING], err) < 0)
      return -1;
    if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0)
      return ar_error(err, errno, "prctl PR_SET_KEEPCAPS 1");
  }
  if (switch_user(&p->user, err) < 0)
    return -1;
  if (caps) {
    if (prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0) < 0)
      return ar_error(err, errno, "prctl PR_SET_KEEPCAPS 0");
    if (set_proc_caps(caps, err) < 0 || set_ambient(caps, err) < 0)
      return -1;
  }
  umask(p->user.has_umask ? (mode_t)p->user.umask : 0022);
  return 0;
}
