/* The monitor: one small process per container, outside its cgroup.  It audits every execve
 * (seccomp user-notify), enforces the wall-clock deadline and writes the exit report.
 * It is a separate static binary (agentrun-monitor) so that its RSS stays under 1 MiB. */
#ifndef AR_MONITOR_H
#define AR_MONITOR_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "audit.h"

/* fds the monitor is started with */
#define AR_MON_FD_INIT 3   /* socketpair end: the init sends its listener fd here */
#define AR_MON_FD_LISTEN 4 /* the state dir's monitor.sock: exec sessions send theirs */

#define AR_MON_SOCKET "monitor.sock"
#define AR_MON_TIMED_OUT "timed-out" /* state dir marker, for run and sandbox */

/* Where the figures of the exit report live. */
struct ar_mon_cgroup {
  const char *mem_dir;     /* memory.max_usage_in_bytes / memory.peak, oom counts */
  const char *cpu_dir;     /* cpuacct.usage or cpu.stat */
  const char *pids_dir;    /* pids.peak, cgroup.procs */
  const char *freezer_dir; /* v1: freeze before the kill */
  const char *v2_dir;      /* v2: cgroup.kill */
};

/* The exit report's figures, read from the cgroup. */
struct ar_mon_figures {
  double cpu_s;
  uint64_t mem_peak;
  bool has_mem_peak;
  uint64_t pids_peak;
  bool has_pids_peak;
  uint64_t oom_kills;
};

void ar_mon_read_figures(const struct ar_mon_cgroup *cg, struct ar_mon_figures *f);
/* Kill every process of the cgroup: cgroup.kill on v2, freeze + SIGKILL + thaw on v1. */
int ar_mon_kill_cgroup(const struct ar_mon_cgroup *cg);

/* One seccomp notification on fd: read the exec's path and argv, log it, let it continue. */
int ar_mon_handle_notify(int fd, struct ar_audit *audit);
/* Read the notify sizes once, and allocate the one request the monitor reuses. */
int ar_mon_notify_init(void);
/* Tune a listener as it arrives (synchronous wake-ups where the kernel has them). */
void ar_mon_notify_listener(int fd);

#endif
