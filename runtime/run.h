#ifndef AR_RUN_H
#define AR_RUN_H

#include "container.h"

struct ar_run_opts {
  bool detach;
  bool keep;
  bool kill_on_interrupt; /* sandbox: SIGINT/SIGTERM kill the job (run forwards them instead) */
  bool figures;           /* sandbox: read the cgroup's figures and the timeout marker */
};

struct ar_run_result {
  int exit_code; /* 128+N when killed by signal N; 137 on timeout or OOM kill */
  int signal;
  bool timed_out, oom_killed;
  int interrupted; /* the signal that interrupted us, or 0 */
  double wall_s, cpu_s;
  uint64_t mem_peak, pids_peak;
  bool has_mem_peak, has_pids_peak;
  char *audit_log; /* owned; NULL when the audit is off */
};

int ar_container_run(const struct ar_ctx *ctx, const struct ar_create_opts *o,
                     const struct ar_run_opts *ro, struct ar_run_result *r, ar_err *err);

#endif
