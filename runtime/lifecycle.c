/* start, kill and delete: what happens to a container after create. */
#include <config.h>
#include "container.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/file.h>
#include <sys/syscall.h>
#include <time.h>

#include "cgroup.h"
#include "audit.h"
#include "fault.h"
#include "log.h"
#include "monitor-spawn.h"
#include "statedir.h"
#include "utils.h"

/* A pidfd for the init, checked against the recorded start time so a reused pid is never hit. */
static int open_init_pidfd(const struct ar_state *st)
{
  int fd;
  if (st->pid <= 0)
    return -1;
  fd = syscall(SYS_pidfd_open, st->pid, 0);
  if (fd < 0)
    return -1;
  if (!ar_state_init_alive(st)) {
    close(fd);
    return -1;
  }
  return fd;
}

/* The init holds the fifo (O_RDWR, CLOEXEC) until its execve: when the last writer is gone, the
 * user program runs (or the init died), and poststart may run.  Our byte may still be unread for
 * a moment: wait for the init to take it without taking it ourselves. */
static void wait_exec(int watch)
{
  const struct timespec tick = {0, 50000};
  struct pollfd pfd = {.fd = watch, .events = POLLIN};
  if (watch < 0)
    return;
  while (poll(&pfd, 1, -1) > 0 && !(pfd.revents & (POLLHUP | POLLERR)))
    nanosleep(&tick, NULL);
}

int ar_container_start(const struct ar_ctx *ctx, const char *id, ar_err *err)
{
  cleanup_close int lock = -1, fifo = -1, watch = -1;
  cleanup_free char *fifo_path = NULL;
  struct ar_state *st = NULL;
  struct ar_spec *spec = NULL;
  const char *status;
  int ret = -1;

  if (ar_statedir_lock(ctx->root, id, &lock, err) < 0 || ar_state_load(ctx->root, id, &st, err) < 0)
    return -1;
  status = ar_state_status(st);
  if (strcmp(status, "created") != 0) {
    ar_error(err, 0, "cannot start a container that is %s: container \"%s\"%s", status, id,
             strcmp(status, "stopped") == 0 ? " is not running" : "");
    goto out;
  }
  /* Before the release: a create killed before commit() wrote the effective config
   * left a half-made container, which must never start running. */
  if (ar_container_load_spec(ctx, id, &spec, err) < 0) {
    ar_error_wrap(err, "container \"%s\" was not completely created", id);
    goto out;
  }
  fifo_path = ar_statedir_path(ctx->root, id, "exec.fifo");
  fifo = open(fifo_path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
  if (fifo < 0) {
    ar_error(err, errno == ENXIO ? 0 : errno, "container \"%s\": container not running (exec fifo)",
             id);
    goto out;
  }
  /* Before the release, so the log reads start before the job's first exec. */
  ar_monitor_signal(st, SIGUSR1); /* the deadline counts from now */
  if (st->audit_log)
    ar_audit_event(st->audit_log, id, "start", NULL, NULL, NULL);
  /* a reader of our own, to see the init's end close when it execs */
  watch = open(fifo_path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (ar_write_all(fifo, "0", 1) < 0) {
    ar_error(err, errno, "start: write exec fifo");
    goto out;
  }
  fifo = close_and_reset(fifo);
  AR_FAULT("start:after-release");
  unlink(fifo_path);
  wait_exec(watch);
  st->started = true;
  if (ar_state_save(ctx->root, st, err) < 0)
    goto out;
  ret = ar_container_hooks(spec, st, AR_HOOK_POSTSTART, "running", err);
out:
  ar_spec_free(spec);
  ar_state_free(st);
  return ret;
}

static int signal_init(const struct ar_state *st, int sig, ar_err *err)
{
  cleanup_close int pidfd = open_init_pidfd(st);
  if (pidfd < 0)
    return ar_error(err, 0, "container \"%s\": container not running", st->id);
  if (syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0) < 0)
    return ar_error(err, errno, "kill container \"%s\"", st->id);
  return 0;
}

static int signal_all(const struct ar_state *st, int sig, ar_err *err)
{
  struct ar_cgroup *cg = NULL;
  int ret;
  if (st->cgroup == NULL)
    return signal_init(st, sig, err);
  if (ar_cgroup_deserialize(st->cgroup, &cg, err) < 0)
    return -1;
  ret = ar_cgroup_kill(cg, sig, err);
  ar_cgroup_free(cg);
  return ret;
}

int ar_container_kill(const struct ar_ctx *ctx, const char *id, int sig, bool all, ar_err *err)
{
  cleanup_close int lock = -1;
  struct ar_state *st = NULL;
  int ret = -1;

  if (ar_statedir_lock(ctx->root, id, &lock, err) < 0 || ar_state_load(ctx->root, id, &st, err) < 0)
    return -1;
  if (!ar_state_init_alive(st) && !all)
    ar_error(err, 0, "container \"%s\": container not running", id);
  else
    ret = all ? signal_all(st, sig, err) : signal_init(st, sig, err);
  ar_state_free(st);
  return ret;
}

/* The init is not our child: wait for it through its pidfd. */
static void wait_gone(const struct ar_state *st, int timeout_ms)
{
  cleanup_close int pidfd = open_init_pidfd(st);
  struct pollfd pfd = {.fd = pidfd, .events = POLLIN};
  if (pidfd >= 0)
    poll(&pfd, 1, timeout_ms);
}

/* The monitor writes the exit report when the init dies; give it a moment, then end it. */
static void stop_monitor(const struct ar_state *st)
{
  struct pollfd pfd = {.events = POLLIN};
  if (st->monitor_pid <= 0 || (pfd.fd = syscall(SYS_pidfd_open, st->monitor_pid, 0)) < 0)
    return;
  if (poll(&pfd, 1, 1000) == 0)
    syscall(SYS_pidfd_send_signal, pfd.fd, SIGKILL, NULL, 0);
  close(pfd.fd);
}

static int destroy(const struct ar_ctx *ctx, struct ar_state *st, struct ar_spec *spec,
                   ar_err *err)
{
  struct ar_cgroup *cg = NULL;
  ar_err e2 = NULL;
  int ret = 0;

  if (st->cgroup && ar_cgroup_deserialize(st->cgroup, &cg, &e2) < 0)
    ar_error_free(&e2);
  if (ar_state_init_alive(st)) {
    /* Through the cgroup, so that a paused (frozen) container dies too. */
    if (cg == NULL || ar_cgroup_kill(cg, SIGKILL, &e2) < 0)
      signal_init(st, SIGKILL, &e2);
    ar_error_free(&e2);
    wait_gone(st, 5000);
  }
  AR_FAULT("delete:after-kill");
  stop_monitor(st);
  if (cg) {
    if (ar_cgroup_destroy(cg, &e2) < 0)
      ret = ar_error(err, e2->status, "%s", e2->msg);
    ar_cgroup_free(cg);
  }
  AR_FAULT("delete:after-cgroup");
  ar_error_free(&e2);
  if (spec && ar_container_hooks(spec, st, AR_HOOK_POSTSTOP, "stopped", &e2) < 0)
    ar_warn("%s", e2->msg); /* poststop failures are logged, never fatal (runtime-spec) */
  ar_error_free(&e2);
  if (st->audit_log)
    ar_audit_event(st->audit_log, st->id, "delete", NULL, NULL, NULL);
  AR_FAULT("delete:before-statedir");
  if (ar_statedir_remove(ctx->root, st->id, &e2) < 0 && ret == 0)
    ret = ar_error(err, e2->status, "%s", e2->msg);
  ar_error_free(&e2);
  return ret;
}

/* A create killed before its first state save leaves a state dir with no state.json (at most
 * the exec fifo in it, and nothing outside it).  A live create holds the dir's lock until that
 * save, so once we hold the lock a dir still without state.json is debris. */
static int remove_stateless(const struct ar_ctx *ctx, const char *id, ar_err *err)
{
  cleanup_free char *dir = ar_statedir_path(ctx->root, id, NULL);
  cleanup_free char *st = ar_statedir_path(ctx->root, id, "state.json");
  cleanup_close int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0)
    return 0; /* runc: --force on a container that is not there is not an error */
  if (flock(fd, LOCK_EX) < 0)
    return ar_error(err, errno, "lock '%s'", dir);
  if (access(st, F_OK) == 0)
    return ar_error(err, EBUSY, "container \"%s\" was created while it was deleted", id);
  return ar_statedir_remove(ctx->root, id, err);
}

int ar_container_delete(const struct ar_ctx *ctx, const char *id, bool force, ar_err *err)
{
  cleanup_close int lock = -1;
  struct ar_state *st = NULL;
  struct ar_spec *spec = NULL;
  const char *status;
  int ret = -1;

  if (ar_statedir_lock(ctx->root, id, &lock, err) < 0) {
    /* runc: --force on a container that is not there is not an error */
    if (force && strstr((*err)->msg, "does not exist") && ar_validate_id(id, NULL) == 0) {
      ar_error_free(err);
      return remove_stateless(ctx, id, err);
    }
    return -1;
  }
  if (ar_state_load(ctx->root, id, &st, err) < 0) {
    /* A create killed half-way leaves a dir with no state: --force clears it. */
    if (force && (ret = ar_statedir_remove(ctx->root, id, NULL)) == 0)
      ar_error_free(err);
    return ret;
  }
  status = ar_state_status(st);
  /* runc semantics: a created container is killed and removed without --force. */
  if (!force && (strcmp(status, "running") == 0 || strcmp(status, "paused") == 0)) {
    ar_error(err, 0, "cannot delete container \"%s\" that is not stopped: %s", id, status);
    goto out;
  }
  /* No config.json: a create killed before its commit; there is nothing to run poststop
   * hooks from, and the rest is removed as for any other container. */
  if (ar_container_load_spec(ctx, id, &spec, err) < 0 && !force && (*err)->status != ENOENT)
    goto out;
  ar_error_free(err);
  ret = destroy(ctx, st, spec, err);
out:
  ar_spec_free(spec);
  ar_state_free(st);
  return ret;
}
