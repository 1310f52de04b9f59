/* The rest of the process's attributes: rlimits, oom_score_adj, personality and I/O priority.
 * All run in the child; rlimits before it enters a user namespace (where raising a hard limit is
 * impossible even with CAP_SYS_RESOURCE). */
#include <config.h>
#include "caps.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/personality.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <linux/ioprio.h>

#include "log.h"
#include "utils.h"

static bool have_effective_cap(cap_value_t cap)
{
  cap_t c = cap_get_proc();
  cap_flag_value_t v = CAP_CLEAR;

  if (c == NULL)
    return false;
  if (cap_get_flag(c, cap, CAP_EFFECTIVE, &v) < 0)
    v = CAP_CLEAR;
  cap_free(c);
  return v == CAP_SET;
}

static const char *rlimit_display(const struct ar_rlimit *r)
{
  return r->type ? r->type : "(unnamed)";
}

static void print_limit(char *buf, size_t len, rlim_t v)
{
  if (v == RLIM_INFINITY)
    snprintf(buf, len, "unlimited");
  else
    snprintf(buf, len, "%llu", (unsigned long long)v);
}

/* Raising a hard limit needs CAP_SYS_RESOURCE (in the initial user namespace).  Without it, a
 * hard limit above ours cannot be honoured: clamp to ours rather than refuse to start, since the
 * usual culprit is an engine's generous RLIMIT_NOFILE default. */
static int set_one(const struct ar_rlimit *r, ar_err *err)
{
  struct rlimit want = {.rlim_cur = r->soft, .rlim_max = r->hard}, cur;
  char hard[32], lim[32];

  if (setrlimit(r->resource, &want) == 0)
    return 0;
  if (errno != EPERM || getrlimit(r->resource, &cur) < 0 || want.rlim_max <= cur.rlim_max ||
      have_effective_cap(CAP_SYS_RESOURCE))
    return ar_error(err, errno, "rlimit %s (soft %llu, hard %llu)", rlimit_display(r),
                    (unsigned long long)r->soft, (unsigned long long)r->hard);
  print_limit(hard, sizeof(hard), want.rlim_max);
  print_limit(lim, sizeof(lim), cur.rlim_max);
  want.rlim_max = cur.rlim_max;
  if (want.rlim_cur > want.rlim_max)
    want.rlim_cur = want.rlim_max;
  if (setrlimit(r->resource, &want) < 0)
    return ar_error(err, errno, "rlimit %s (clamped to the hard limit %s)", rlimit_display(r), lim);
  ar_warn("rlimit %s: hard %s is above the limit %s and CAP_SYS_RESOURCE is missing: clamped "
          "to soft %llu hard %s",
          rlimit_display(r), hard, lim, (unsigned long long)want.rlim_cur, lim);
  return 0;
}

int ar_rlimits_apply(const struct ar_process *p, ar_err *err)
{
  for (size_t i = 0; i < p->n_rlimits; i++) {
    const struct ar_rlimit *r = &p->rlimits[i];

    if (r->resource < 0 || r->resource >= RLIM_NLIMITS)
      return ar_error(err, 0, "rlimit %s: unknown resource", rlimit_display(r));
    if (r->soft > r->hard)
      return ar_error(err, 0, "rlimit %s: soft %llu is above hard %llu", rlimit_display(r),
                      (unsigned long long)r->soft, (unsigned long long)r->hard);
    if (set_one(r, err) < 0)
      return -1;
  }
  return 0;
}

int ar_oom_score_adj_apply(const struct ar_process *p, ar_err *err)
{
  cleanup_close int fd = -1;
  char buf[16];
  int len;

  if (!p->has_oom_score_adj)
    return 0;
  if (p->oom_score_adj < -1000 || p->oom_score_adj > 1000)
    return ar_error(err, 0, "oomScoreAdj %d is out of range (-1000..1000)", p->oom_score_adj);
  len = snprintf(buf, sizeof(buf), "%d", p->oom_score_adj);
  fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
  if (fd < 0)
    return ar_error(err, errno, "open /proc/self/oom_score_adj");
  /* lowering it needs CAP_SYS_RESOURCE: EACCES then */
  if (ar_write_all(fd, buf, len) < 0)
    return ar_error(err, errno, "write %d to /proc/self/oom_score_adj", p->oom_score_adj);
  return 0;
}

int ar_personality_apply(const struct ar_personality *pers, ar_err *err)
{
  unsigned long persona;

  if (pers == NULL)
    return 0;
  if (pers->domain == NULL || strcmp(pers->domain, "LINUX") == 0)
    persona = PER_LINUX;
  else if (strcmp(pers->domain, "LINUX32") == 0)
    persona = PER_LINUX32;
  else
    return ar_error(err, 0, "personality: unknown domain \"%s\"", pers->domain);
  /* the runtime-spec defines no flag values yet */
  if (pers->n_flags > 0)
    return ar_error(err, 0, "personality: unsupported flag \"%s\"", pers->flags[0]);
  if (personality(persona) < 0)
    return ar_error(err, errno, "personality %s", pers->domain ? pers->domain : "LINUX");
  return 0;
}

int ar_io_priority_apply(const struct ar_process *p, ar_err *err)
{
  const char *cls = p->io_priority.class_name;
  int class;

  if (!p->has_io_priority)
    return 0;
  if (cls && strcmp(cls, "IOPRIO_CLASS_RT") == 0)
    class = IOPRIO_CLASS_RT;
  else if (cls && strcmp(cls, "IOPRIO_CLASS_BE") == 0)
    class = IOPRIO_CLASS_BE;
  else if (cls && strcmp(cls, "IOPRIO_CLASS_IDLE") == 0)
    class = IOPRIO_CLASS_IDLE;
  else
    return ar_error(err, 0, "ioPriority: unknown class \"%s\"", cls ? cls : "");
  if (p->io_priority.priority < 0 || p->io_priority.priority >= IOPRIO_NR_LEVELS)
    return ar_error(err, 0, "ioPriority: priority %d is out of range (0-%d)",
                    p->io_priority.priority, IOPRIO_NR_LEVELS - 1);
  if (syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, 0,
              IOPRIO_PRIO_VALUE(class, p->io_priority.priority)) < 0)
    return ar_error(err, errno, "ioprio_set %s %d", cls, p->io_priority.priority);
  return 0;
}
