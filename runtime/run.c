/* run: create, start, wait and delete in one, with the job's figures for `sandbox --json`. */
#include <config.h>
#include "run.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

#include "cgroup.h"
#include "cli.h"
#include "log.h"
#include "monitor.h"
#include "statedir.h"
#include "terminal.h"
#include "utils.h"

static volatile sig_atomic_t interrupted;
static volatile pid_t kill_pid;

/* sandbox: Ctrl-C or SIGTERM ends the job; the cleanup that follows removes everything. */
static void on_interrupt(int sig)
{
  interrupted = sig;
  if (kill_pid > 0)
    kill(kill_pid, SIGKILL);
}

static void kill_on_interrupt(pid_t pid)
{
  static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
  struct sigaction sa = {.sa_handler = on_interrupt, .sa_flags = SA_RESTART};
  kill_pid = pid;
  sigemptyset(&sa.sa_mask);
  for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
    sigaction(sigs[i], &sa, NULL);
}

/* Leave the init a zombie (WNOWAIT) so the monitor can still read its exit status. */
static void wait_child(pid_t pid, struct ar_run_result *r)
{
  siginfo_t si = {0};
  while (waitid(P_PID, pid, &si, WEXITED | WNOWAIT) < 0)
    if (errno != EINTR) {
      r->exit_code = 255;
      return;
    }
  if (si.si_code == CLD_EXITED) {
    r->exit_code = si.si_status;
  } else {
    r->signal = si.si_status;
    r->exit_code = 128 + r->signal;
  }
}

/* The monitor is our child here: wait for its exit report, so the audit log is complete. */
static void wait_monitor(pid_t pid)
{
  struct pollfd pfd = {.events = POLLIN};
  if (pid <= 0)
    return;
  pfd.fd = syscall(SYS_pidfd_open, pid, 0);
  if (pfd.fd >= 0 && poll(&pfd, 1, 2000) == 0)
    kill(pid, SIGKILL);
  if (pfd.fd >= 0)
    close(pfd.fd);
  waitpid(pid, NULL, 0);
}

static void collect(const struct ar_ctx *ctx, const struct ar_container *c, struct ar_run_result *r)
{
  cleanup_free char *marker = ar_statedir_path(ctx->root, c->state->id, AR_MON_TIMED_OUT);
  struct ar_cgroup *cg = NULL;
  struct ar_cgroup_stats st = {0};
  ar_err err = NULL;
  r->timed_out = access(marker, F_OK) == 0;
  r->audit_log = xstrdup(c->state->audit_log);
  if (c->state->cgroup && ar_cgroup_deserialize(c->state->cgroup, &cg, &err) == 0 &&
      ar_cgroup_stats(cg, &st, &err) == 0) {
    r->cpu_s = st.cpu_usage_ns / 1e9;
    r->mem_peak = st.mem_max_usage;
    r->has_mem_peak = st.has_mem_max_usage;
    r->pids_peak = st.pids_peak;
    r->has_pids_peak = st.has_pids_peak;
    r->oom_killed = st.oom_kills > 0;
  }
  ar_error_free(&err);
  ar_cgroup_free(cg);
  if ((r->timed_out || r->oom_killed) && r->signal == SIGKILL)
    r->exit_code = 137;
}

int ar_container_run(const struct ar_ctx *ctx, const struct ar_create_opts *o,
                     const struct ar_run_opts *ro, struct ar_run_result *r, ar_err *err)
{
  struct ar_container *c = NULL;
  uint64_t t0;
  memset(r, 0, sizeof(*r));
  /* Trapped before create, so a Ctrl-C during create is seen below and leaves nothing. */
  if (ro->kill_on_interrupt)
    kill_on_interrupt(0);
  if (ar_container_create(ctx, o, &c, err) < 0) {
    r->interrupted = interrupted;
    return -1;
  }
  if (ro->kill_on_interrupt)
    kill_on_interrupt(c->pid);
  else if (!ro->detach)
    ar_forward_signals(c->pid);
  t0 = ar_now_ns(CLOCK_MONOTONIC);
  if (interrupted || ar_container_start(ctx, o->id, err) < 0) {
    if (interrupted && *err == NULL)
      ar_error(err, 0, "interrupted by signal %d", (int)interrupted);
    r->interrupted = interrupted;
    ar_container_delete(ctx, o->id, true, NULL);
    ar_container_free(c);
    return -1;
  }
  if (ro->detach) {
    ar_container_free(c);
    return 0;
  }
  if (c->pty_master >= 0 && ar_pty_proxy(c->pty_master, err) < 0) {
    ar_warn("terminal: %s", (*err)->msg);
    ar_error_free(err);
  }
  wait_child(c->pid, r);
  r->wall_s = (ar_now_ns(CLOCK_MONOTONIC) - t0) / 1e9;
  wait_monitor(c->state->monitor_pid);
  while (waitpid(c->pid, NULL, 0) < 0 && errno == EINTR)
    ;
  if (ro->figures)
    collect(ctx, c, r);
  r->interrupted = interrupted;
  if (!ro->keep && ar_container_delete(ctx, o->id, true, err) < 0) {
    ar_container_free(c);
    return -1;
  }
  ar_container_free(c);
  return 0;
}
