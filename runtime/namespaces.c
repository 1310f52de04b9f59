#include <config.h>
#include "namespaces.h"

#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <string.h>

#include "utils.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

int ar_ns_plan(const struct ar_spec *s, struct ar_ns_plan *plan, ar_err *err)
{
  const struct ar_linux *l = &s->linux_;
  memset(plan, 0, sizeof(*plan));
  for (int i = 0; i < AR_NS_COUNT; i++)
    plan->join_fd[i] = -1;
  for (size_t i = 0; i < l->n_namespaces; i++) {
    const struct ar_namespace *ns = &l->namespaces[i];
    if (ns->path == NULL || *ns->path == '\0') {
      if (ns->type == AR_NS_TIME && (l->time_monotonic.present || l->time_boottime.present))
        plan->time_offsets = true;
      else
        plan->clone_flags |= ar_ns_clone_flag(ns->type);
      plan->new_user |= ns->type == AR_NS_USER;
      continue;
    }
    if (plan->join_fd[ns->type] >= 0)
      close(plan->join_fd[ns->type]);
    plan->join_fd[ns->type] = open(ns->path, O_RDONLY | O_CLOEXEC);
    if (plan->join_fd[ns->type] < 0) {
      int e = errno;
      ar_ns_plan_clear(plan);
      return ar_error(err, e, "linux.namespaces[%zu]: %s namespace path '%s'", i,
                      ar_ns_name(ns->type), ns->path);
    }
  }
  if ((l->time_monotonic.present || l->time_boottime.present) && !plan->time_offsets)
    return ar_error(err, 0, "linux.timeOffsets: needs a new time namespace");
  /* A cgroup namespace made at clone would be rooted at our cgroup, not the container's. */
  plan->unshare_flags = plan->clone_flags & CLONE_NEWCGROUP;
  /* Namespaces made with a joined user namespace must be owned by it: make them after setns.
   * A pid namespace unshared there only holds the child's next child: the init forks once. */
  if (plan->join_fd[AR_NS_USER] >= 0) {
    plan->unshare_flags |= plan->clone_flags & ~CLONE_NEWTIME;
    plan->fork_after_join = plan->unshare_flags & CLONE_NEWPID;
  }
  plan->clone_flags &= ~plan->unshare_flags;
  return 0;
}

void ar_ns_plan_clear(struct ar_ns_plan *plan)
{
  for (int i = 0; i < AR_NS_COUNT; i++)
    plan->join_fd[i] = close_and_reset(plan->join_fd[i]);
}

static int write_time_offsets(const struct ar_linux *l, ar_err *err)
{
  char buf[128];
  int n = 0;
  if (l->time_monotonic.present)
    n += snprintf(buf + n, sizeof(buf) - n, "monotonic %lld %u\n",
                  (long long)l->time_monotonic.secs, l->time_monotonic.nanosecs);
  if (l->time_boottime.present)
    n += snprintf(buf + n, sizeof(buf) - n, "boottime %lld %u\n",
                  (long long)l->time_boottime.secs, l->time_boottime.nanosecs);
  if (ar_write_file("/proc/self/timens_offsets", buf, n, 0, err) < 0)
    return ar_error_wrap(err, "linux.timeOffsets");
  return 0;
}

int ar_ns_parent_enter(const struct ar_spec *s, struct ar_ns_plan *plan, int restore[2],
                       ar_err *err)
{
  restore[0] = restore[1] = -1;
  if (plan->join_fd[AR_NS_PID] >= 0) {
    restore[0] = open("/proc/self/ns/pid", O_RDONLY | O_CLOEXEC);
    if (restore[0] < 0)
      return ar_error(err, errno, "open /proc/self/ns/pid");
    if (setns(plan->join_fd[AR_NS_PID], CLONE_NEWPID) < 0)
      return ar_error(err, errno, "join the pid namespace");
  }
  if (plan->join_fd[AR_NS_TIME] >= 0 || plan->time_offsets) {
    restore[1] = open("/proc/self/ns/time", O_RDONLY | O_CLOEXEC);
    if (restore[1] < 0)
      return ar_error(err, errno, "open /proc/self/ns/time");
  }
  if (plan->join_fd[AR_NS_TIME] >= 0 && setns(plan->join_fd[AR_NS_TIME], CLONE_NEWTIME) < 0)
    return ar_error(err, errno, "join the time namespace");
  if (plan->time_offsets) {
    /* Offsets can only be written before any process lives in the namespace. */
    if (unshare(CLONE_NEWTIME) < 0)
      return ar_error(err, errno, "unshare the time namespace");
    if (write_time_offsets(&s->linux_, err) < 0)
      return -1;
  }
  return 0;
}

int ar_ns_parent_restore(int restore[2], ar_err *err)
{
  int ret = 0;
  if (restore[0] >= 0 && setns(restore[0], CLONE_NEWPID) < 0)
    ret = ar_error(err, errno, "return to our pid namespace");
  if (restore[1] >= 0 && setns(restore[1], CLONE_NEWTIME) < 0)
    ret = ar_error(err, errno, "return to our time namespace");
  restore[0] = close_and_reset(restore[0]);
  restore[1] = close_and_reset(restore[1]);
  return ret;
}

static int write_map(pid_t pid, const char *file, const struct ar_id_mapping *m, size_t n,
                     ar_err *err)
{
  cleanup_free char *path = xasprintf("/proc/%d/%s", pid, file);
  char buf[4096];
  size_t len = 0;
  if (n == 0)
    return 0;
  for (size_t i = 0; i < n && len < sizeof(buf) - 40; i++)
    len += snprintf(buf + len, sizeof(buf) - len, "%u %u %u\n", m[i].container_id, m[i].host_id,
                    m[i].size);
  if (ar_write_file(path, buf, len, 0, err) < 0)
    return ar_error_wrap(err, "write %s", file);
  return 0;
}

int ar_ns_write_maps(const struct ar_spec *s, pid_t pid, ar_err *err)
{
  const struct ar_linux *l = &s->linux_;
  if (write_map(pid, "uid_map", l->uid_mappings, l->n_uid_mappings, err) < 0)
    return -1;
  return write_map(pid, "gid_map", l->gid_mappings, l->n_gid_mappings, err);
}

int ar_ns_join(struct ar_ns_plan *plan, ar_err *err)
{
  static const enum ar_ns_type order[] = {AR_NS_USER, AR_NS_IPC,  AR_NS_UTS,
                                          AR_NS_NETWORK, AR_NS_CGROUP, AR_NS_MOUNT};
  for (size_t i = 0; i < ARRAY_SIZE(order); i++) {
    int fd = plan->join_fd[order[i]];
    if (fd >= 0 && setns(fd, ar_ns_clone_flag(order[i])) < 0)
      return ar_error(err, errno, "join the %s namespace", ar_ns_name(order[i]));
  }
  if (plan->unshare_flags && unshare(plan->unshare_flags) < 0)
    return ar_error(err, errno, "unshare namespaces");
  return 0;
}

pid_t ar_clone3(int flags, int cgroup_fd)
{
  struct clone_args ca = {0};
  ca.flags = flags;
  /* With CLONE_PARENT the child inherits our exit signal; clone3 wants 0 here. */
  ca.exit_signal = (flags & CLONE_PARENT) ? 0 : SIGCHLD;
  if (cgroup_fd >= 0) {
    ca.flags |= CLONE_INTO_CGROUP;
    ca.cgroup = cgroup_fd;
  }
  return syscall(SYS_clone3, &ca, sizeof(ca));
}

int ar_net_lo_up(ar_err *err)
{
  struct ifreq ifr = {0};
  cleanup_close int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return ar_error(err, errno, "loopback: socket");
  strcpy(ifr.ifr_name, "lo");
  if (ioctl(fd, SIOCGIFFLAGS, &ifr) < 0)
    return ar_error(err, errno, "loopback: get flags");
  ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
  if (ioctl(fd, SIOCSIFFLAGS, &ifr) < 0)
    return ar_error(err, errno, "loopback: bring up");
  return 0;
}
