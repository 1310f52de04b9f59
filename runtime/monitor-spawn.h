/* The agentrun side of the monitor. */
#ifndef AR_MONITOR_SPAWN_H
#define AR_MONITOR_SPAWN_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "spec/state.h"

struct ar_mon_params {
  const char *id;
  const char *state_dir;
  pid_t init_pid;
  int init_sock; /* the monitor's end of the socketpair the init sends its listener over */
  uint64_t timeout_ms;
  const char *audit_path; /* NULL: audit off */
  uint64_t audit_max_bytes;
  bool audit_syslog;
  const char *cg_v2, *cg_mem, *cg_cpu, *cg_pids, *cg_freezer;
};

int ar_monitor_spawn(const struct ar_mon_params *p, pid_t *ret, ar_err *err);
/* SIGUSR1: the container started (the deadline counts from now).  SIGTERM: deleted. */
void ar_monitor_signal(const struct ar_state *st, int sig);
/* For exec sessions: hand a seccomp listener to the monitor through monitor.sock. */
int ar_monitor_send_listener(const char *state_dir, int listener, ar_err *err);

/* The OCI seccomp agent (linux.seccomp.listenerPath, runtime-spec config-linux.md): one
 * SOCK_STREAM connection per process, carrying one container process state (JSON) and the
 * notify fd (SCM_RIGHTS, named "seccompFd"), then closed.
 * The runtime side builds the state: pid is the process's, as the runtime sees it. */
char *ar_listener_state(const struct ar_state *st, pid_t pid, const char *status,
                        const char *metadata, ar_err *err);
/* The process side: connect while the host's paths are still in view (before pivot_root),
 * send once its filter is loaded. */
int ar_listener_connect(const char *path, ar_err *err);
int ar_listener_send(int sock, const char *state_json, int notify_fd, ar_err *err);

#endif
