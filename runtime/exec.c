/* exec: a new process inside a running container, through the same init stages as create. */
#include <config.h>
#include "exec.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "cgroup.h"
#include "cli.h"
#include "init.h"
#include "log.h"
#include "agent-seccomp.h"
#include "fault.h"
#include "monitor-spawn.h"
#include "policy.h"
#include "selfexe.h"
#include "statedir.h"
#include "sync.h"
#include "terminal.h"
#include "utils.h"

struct exec_job {
  struct ar_state *st;
  struct ar_spec *spec;
  struct ar_process *proc;
  struct ar_cgroup *cg;
  struct ar_ns_plan ns;
  struct ar_bpf bpf, agent_bpf;
  bool has_bpf, has_agent_bpf;
  const char *root;
  int sync[2];
  int pty_master;
  pid_t pid;
};

static void job_clear(struct exec_job *j)
{
  ar_ns_plan_clear(&j->ns);
  if (j->has_bpf)
    ar_bpf_clear(&j->bpf);
  if (j->has_agent_bpf)
    ar_bpf_clear(&j->agent_bpf);
  close_and_reset(j->sync[0]);
  close_and_reset(j->sync[1]);
  close_and_reset(j->pty_master);
  ar_cgroup_free(j->cg);
  ar_process_free(j->proc);
  ar_spec_free(j->spec);
  ar_state_free(j->st);
}

/* The container's own namespaces, reached through its init's /proc entry. */
static int plan_join(struct exec_job *j, ar_err *err)
{
  const struct ar_linux *l = &j->spec->linux_;
  memset(&j->ns, 0, sizeof(j->ns));
  for (int i = 0; i < AR_NS_COUNT; i++)
    j->ns.join_fd[i] = -1;
  for (size_t i = 0; i < l->n_namespaces; i++) {
    enum ar_ns_type t = l->namespaces[i].type;
    cleanup_free char *path = xasprintf("/proc/%d/ns/%s", j->st->pid, ar_ns_proc_name(t));
    if (j->ns.join_fd[t] >= 0)
      continue;
    j->ns.join_fd[t] = open(path, O_RDONLY | O_CLOEXEC);
    if (j->ns.join_fd[t] < 0)
      return ar_error(err, errno, "open '%s'", path);
  }
  /* The fds are only ours if the init we opened them through is still the same process. */
  if (!ar_state_init_alive(j->st))
    return ar_error(err, 0, "container \"%s\": container not running", j->st->id);
  return 0;
}

/* --cap and --process must not give an exec more than the policy gave the init. */
static int exec_policy(const struct ar_ctx *ctx, struct ar_process *p, ar_err *err)
{
  struct ar_host_policy *hp = NULL;
  int r;
  if (ar_policy_load(ctx->policy_path, &hp, err) < 0)
    return -1;
  r = ar_policy_exec_process(hp, p, err);
  ar_host_policy_free(hp);
  return r;
}

static int load(const struct ar_ctx *ctx, const struct ar_exec_opts *o, struct exec_job *j,
                ar_err *err)
{
  const char *status;
  if (ar_state_load(ctx->root, o->id, &j->st, err) < 0)
    return -1;
  status = ar_state_status(j->st);
  if (strcmp(status, "stopped") == 0)
    return ar_error(err, 0, "cannot exec in a stopped container: container \"%s\" is not running",
                    o->id);
  if (strcmp(status, "paused") == 0 && !o->ignore_paused)
    return ar_error(err, 0, "cannot exec in a paused container (use --ignore-paused)");
  if (ar_container_load_spec(ctx, o->id, &j->spec, err) < 0)
    return -1;
  if (ar_exec_build_process(j->spec, o, &j->proc, err) < 0 || exec_policy(ctx, j->proc, err) < 0)
    return -1;
  if (ar_selfexe_exposed(j->spec, j->proc, true) && ar_selfexe_reexec(err) < 0)
    return -1;
  if (j->proc->terminal && o->console_socket == NULL && o->detach)
    return ar_error(err, 0, "process.terminal is set: a --console-socket is needed when detached");
  if (j->st->cgroup && ar_cgroup_deserialize(j->st->cgroup, &j->cg, err) < 0)
    return -1;
  if (j->spec->linux_.seccomp) {
    if (ar_seccomp_compile_cached(j->spec->linux_.seccomp, &j->bpf, err) < 0)
      return -1;
    j->has_bpf = true;
  }
  /* Exec sessions get the same agent filter and the same exec audit as the init. */
  if (j->st->agent_seccomp) {
    if (ar_agent_filter_compile(j->st->audit_exec, &j->agent_bpf, err) < 0)
      return -1;
    j->has_agent_bpf = true;
  }
  return plan_join(j, err);
}

static int spawn(struct exec_job *j, const struct ar_exec_opts *o, ar_err *err)
{
  struct ar_init_args a = {0};
  int restore[2] = {-1, -1};
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, j->sync) < 0)
    return ar_error(err, errno, "socketpair");
  a.spec = j->spec;
  a.process = j->proc;
  a.id = o->id;
  a.sync_fd = j->sync[1];
  a.fifo_fd = a.lock_fd = -1;
  a.is_exec = true;
  a.preserve_fds = o->preserve_fds;
  a.ns = &j->ns;
  a.bpf = j->has_bpf ? &j->bpf : NULL;
  a.agent_bpf = j->has_agent_bpf ? &j->agent_bpf : NULL;
  a.mon_fd = -1;
  if (j->proc->has_capabilities && ar_caps_resolve(&j->proc->capabilities, &a.caps, err) < 0)
    return -1;
  a.has_caps = true;
  if (ar_ns_parent_enter(j->spec, &j->ns, restore, err) < 0) {
    ar_ns_parent_restore(restore, NULL);
    return -1;
  }
  int *tasks = NULL;
  size_t n_tasks = 0;
  if (j->cg && ar_cgroup_open_tasks(j->cg, &tasks, &n_tasks, err) < 0) {
    ar_ns_parent_restore(restore, NULL);
    return -1;
  }
  a.cg_tasks = tasks;
  a.n_cg_tasks = n_tasks;
  j->pid = ar_clone3(0, j->cg ? ar_cgroup_clone_fd(j->cg) : -1);
  if (j->pid == 0) {
    close(j->sync[0]);
    ar_init_main(&a);
  }
  while (n_tasks > 0)
    close(tasks[--n_tasks]);
  free(tasks);
  if (j->pid < 0) {
    int e = errno;
    j->pid = 0;
    ar_ns_parent_restore(restore, NULL);
    return ar_error(err, e, "clone3");
  }
  j->sync[1] = close_and_reset(j->sync[1]);
  AR_FAULT("exec:after-clone");
  return ar_ns_parent_restore(restore, err);
}

/* sync 1, then the child's messages; EOF means its execve succeeded (the socket is CLOEXEC). */
static int drive(struct exec_job *j, const struct ar_exec_opts *o, ar_err *err)
{
  struct ar_sync_msg *msg = xmalloc(sizeof(*msg));
  cleanup_free char *lstate = NULL;
  ar_err eof = NULL;
  int ret = -1;
  /* sync 1 carries the container process state for the OCI seccomp agent, if any */
  if (j->has_bpf && j->bpf.wants_listener && j->spec->linux_.seccomp->listener_path &&
      (lstate = ar_listener_state(j->st, j->pid, "running",
                                  j->spec->linux_.seccomp->listener_metadata, err)) == NULL)
    goto out;
  if (ar_sync_send(j->sync[0], AR_SYNC_MAPS_DONE, 0, lstate, -1, err) < 0)
    goto out;
  for (;;) {
    if (ar_sync_recv(j->sync[0], msg, &eof) < 0)
      break;
    if (msg->type == AR_SYNC_ERROR) {
      ar_error_set_raw(err, msg->err_no, msg->data);
      goto out;
    }
    if (msg->type == AR_SYNC_LISTENER) {
      cleanup_free char *dir = ar_statedir_path(j->root, o->id, NULL);
      int r = ar_monitor_send_listener(dir, msg->fd, err);
      AR_FAULT("exec:after-listener");
      close(msg->fd);
      if (r < 0)
        goto out;
      continue;
    }
    if (msg->type != AR_SYNC_PTY)
      continue;
    if (o->console_socket) {
      int r = ar_console_socket_send(o->console_socket, msg->fd, err);
      close(msg->fd);
      if (r < 0)
        goto out;
    } else {
      j->pty_master = msg->fd;
    }
  }
  AR_FAULT("exec:after-start");
  ret = 0;
out:
  ar_error_free(&eof);
  free(msg);
  return ret;
}

static int wait_code(pid_t pid)
{
  int status;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR)
      return 255;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int ar_container_exec(const struct ar_ctx *ctx, const struct ar_exec_opts *o, int *ret_code,
                      ar_err *err)
{
  struct exec_job j = {.sync = {-1, -1}, .pty_master = -1, .root = ctx->root};
  int ret = -1;
  if (load(ctx, o, &j, err) < 0 || spawn(&j, o, err) < 0 || drive(&j, o, err) < 0) {
    if (j.pid > 0) {
      kill(j.pid, SIGKILL);
      waitpid(j.pid, NULL, 0);
    }
    goto out;
  }
  if (o->pid_file && ar_write_pid_file(o->pid_file, j.pid, err) < 0)
    goto out;
  ret = 0;
  *ret_code = 0;
  if (o->detach)
    goto out;
  ar_forward_signals(j.pid);
  if (j.pty_master >= 0 && ar_pty_proxy(j.pty_master, err) < 0) {
    ar_warn("terminal: %s", (*err)->msg);
    ar_error_free(err);
  }
  *ret_code = wait_code(j.pid);
out:
  job_clear(&j);
  return ret;
}
