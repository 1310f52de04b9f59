#include <config.h>
#include "container.h"

#include <errno.h>
#include <sched.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "cgroup.h"
#include "devices.h"
#include "fault.h"
#include "hooks/hooks.h"
#include "init.h"
#include "log.h"
#include "audit.h"
#include "monitor-spawn.h"
#include "policy.h"
#include "agent-seccomp.h"
#include "selfexe.h"
#include "statedir.h"
#include "sync.h"
#include "terminal.h"
#include "utils.h"

/* Everything a create has made so far, so that a failure can take it all back. */
struct create_job {
  const struct ar_ctx *ctx;
  const struct ar_create_opts *o;
  struct ar_spec *spec;
  struct ar_state *state;
  struct ar_cgroup *cg;
  struct ar_ns_plan ns;
  struct ar_bpf bpf, agent_bpf;
  bool has_bpf, has_agent_bpf;
  struct ar_effective *eff;
  int lock_fd;
  int sync[2];
  int mon[2]; /* init -> monitor: the exec audit's listener */
  pid_t monitor_pid;
  int fifo_fd;
  int pty_master;
  pid_t pid;
  bool statedir_made;
};

static void job_init(struct create_job *j, const struct ar_ctx *ctx,
                     const struct ar_create_opts *o)
{
  memset(j, 0, sizeof(*j));
  j->ctx = ctx;
  j->o = o;
  j->lock_fd = j->fifo_fd = j->pty_master = -1;
  j->sync[0] = j->sync[1] = -1;
  j->mon[0] = j->mon[1] = -1;
  for (int i = 0; i < AR_NS_COUNT; i++)
    j->ns.join_fd[i] = -1;
}

/* On failure: kill the init, remove the cgroup and the state dir.  Mounts die with the init's
 * mount namespace; nothing was mounted on the host. */
static void job_rollback(struct create_job *j)
{
  ar_err err = NULL;
  if (j->monitor_pid > 0) {
    kill(j->monitor_pid, SIGKILL);
    waitpid(j->monitor_pid, NULL, 0);
  }
  if (j->pid > 0) {
    kill(j->pid, SIGKILL);
    while (waitpid(j->pid, NULL, 0) < 0 && errno == EINTR)
      ;
  }
  if (j->cg && ar_cgroup_destroy(j->cg, &err) < 0)
    ar_warn("rollback: %s", err->msg);
  ar_error_free(&err);
  if (j->statedir_made && ar_statedir_remove(j->ctx->root, j->o->id, &err) < 0)
    ar_warn("rollback: %s", err->msg);
  ar_error_free(&err);
}

static void job_clear(struct create_job *j)
{
  ar_ns_plan_clear(&j->ns);
  if (j->has_bpf)
    ar_bpf_clear(&j->bpf);
  if (j->has_agent_bpf)
    ar_bpf_clear(&j->agent_bpf);
  ar_effective_free(j->eff);
  close_and_reset(j->sync[0]);
  close_and_reset(j->sync[1]);
  close_and_reset(j->mon[0]);
  close_and_reset(j->mon[1]);
  close_and_reset(j->fifo_fd);
  close_and_reset(j->pty_master);
  close_and_reset(j->lock_fd);
  ar_cgroup_free(j->cg);
  ar_spec_free(j->spec);
  ar_state_free(j->state);
}

static char *abs_path(const char *p)
{
  char buf[PATH_MAX];
  if (realpath(p, buf) == NULL)
    return NULL;
  return xstrdup(buf);
}

/* Stage 1a: harden the caller's spec; from here on only the effective spec exists. */
static int apply_policy(struct create_job *j, ar_err *err)
{
  struct ar_host_policy *hp = NULL;
  int ret;
  if (ar_policy_load(j->ctx->policy_path, &hp, err) < 0)
    return -1;
  ret = ar_policy_apply(hp, j->spec, j->o->id, &j->eff, err);
  ar_host_policy_free(hp);
  if (ret == 0 && j->o->audit_path && j->eff->audit)
    ar_effective_set_audit_path(j->eff, j->o->audit_path);
  return ret;
}

/* Stage 1: the bundle, its config and the checks that need no side effect. */
static int load_bundle(struct create_job *j, ar_err *err)
{
  cleanup_free char *bundle = abs_path(j->o->bundle ? j->o->bundle : ".");
  cleanup_free char *cfg = NULL;
  struct ar_spec *s;
  struct stat st;

  if (bundle == NULL)
    return ar_error(err, errno, "bundle '%s'", j->o->bundle ? j->o->bundle : ".");
  cfg = xasprintf("%s/config.json", bundle);
  if (ar_spec_load(cfg, "config.json", &j->spec, err) < 0)
    return -1;
  s = j->spec;
  if (s->process == NULL)
    return ar_error(err, 0, "config.json: process: missing");
  if (apply_policy(j, err) < 0)
    return -1;
  if (ar_selfexe_exposed(s, s->process, false) && ar_selfexe_reexec(err) < 0)
    return -1;
  ar_device_rules_complete(s);
  if (s->process->terminal && j->o->console_socket == NULL && !j->o->foreground)
    return ar_error(err, 0, "process.terminal is set: a --console-socket is needed when detached");
  if (!s->process->terminal && j->o->console_socket)
    return ar_error(err, 0, "--console-socket given, but process.terminal is not set");
  j->state = xcalloc(1, sizeof(*j->state));
  j->state->id = xstrdup(j->o->id);
  j->state->bundle = steal_pointer(&bundle);
  if (s->root_path == NULL)
    return ar_error(err, 0, "config.json: root.path: missing");
  if (s->root_path[0] == '/')
    j->state->rootfs = xstrdup(s->root_path);
  else
    j->state->rootfs = xasprintf("%s/%s", j->state->bundle, s->root_path);
  if (stat(j->state->rootfs, &st) < 0 || !S_ISDIR(st.st_mode))
    return ar_error(err, errno ? errno : ENOTDIR, "config.json: root.path: rootfs '%s'",
                    j->state->rootfs);
  if (s->hostname && *s->hostname && !ar_spec_namespace(s, AR_NS_UTS))
    return ar_error(err, 0, "config.json: hostname: needs a private UTS namespace");
  if (s->process->apparmor_profile && *s->process->apparmor_profile)
    ar_warn("process.apparmorProfile \"%s\": AppArmor is not supported, ignored",
            s->process->apparmor_profile);
  if (s->process->selinux_label && *s->process->selinux_label)
    ar_warn("process.selinuxLabel: SELinux is not supported, ignored");
  return 0;
}

/* The job's netns: fresh from clone when no hook needs to see the engine's, else unshared in
 * the child after prestart/createRuntime ran, leaving whatever the engine wired behind. */
static int plan_network(struct create_job *j, struct ar_init_args *a, ar_err *err)
{
  const struct ar_spec *s = j->spec;
  const struct ar_namespace *net = ar_spec_namespace(s, AR_NS_NETWORK);
  /* A new netns gets lo up, as with runc. */
  a->net_lo_up = net && (net->path == NULL || *net->path == '\0');
  if (!j->eff->isolate_net)
    return 0;
  a->net_lo_up = true;
  if (s->hooks[AR_HOOK_PRESTART].n_hooks || s->hooks[AR_HOOK_CREATE_RUNTIME].n_hooks) {
    a->net_unshare = true;
    return 0;
  }
  j->ns.join_fd[AR_NS_NETWORK] = close_and_reset(j->ns.join_fd[AR_NS_NETWORK]);
  j->ns.clone_flags |= CLONE_NEWNET;
  return 0;
}

/* One seccomp listener per process: when the config's filter has SCMP_ACT_NOTIFY rules, its
 * listener wins and the exec audit is off for this container (the audit log says so). */
static int agent_filter(struct create_job *j, struct ar_init_args *a, ar_err *err)
{
  bool audit_exec = j->eff->audit && !(j->has_bpf && j->bpf.wants_listener);
  if (ar_agent_filter_compile(audit_exec, &j->agent_bpf, err) < 0)
    return -1;
  j->has_agent_bpf = true;
  a->agent_bpf = &j->agent_bpf;
  j->state->agent_seccomp = true;
  j->state->audit_exec = audit_exec;
  if (audit_exec && socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, j->mon) < 0)
    return ar_error(err, errno, "socketpair");
  a->mon_fd = j->mon[1];
  return 0;
}

/* Stage 2: state dir (exclusive: a second create of the ID fails here), seccomp, caps. */
static int prepare(struct create_job *j, struct ar_init_args *a, ar_err *err)
{
  const struct ar_spec *s = j->spec;
  char ts[64];
  if (ar_statedir_create(j->ctx->root, j->o->id, &j->lock_fd, err) < 0)
    return -1;
  j->statedir_made = true;
  AR_FAULT("create:after-statedir");
  ar_time_rfc3339(ts, sizeof(ts), false);
  j->state->created = xstrdup(ts);
  j->state->owner = xstrdup("");
  for (size_t i = 0; i < s->n_annotations; i++)
    ar_kv_set(&j->state->annotations, &j->state->n_annotations, s->annotations[i].key,
              s->annotations[i].value);
  if (s->linux_.seccomp) {
    if (ar_seccomp_compile_cached(s->linux_.seccomp, &j->bpf, err) < 0)
      return -1;
    j->has_bpf = true;
    a->bpf = &j->bpf;
  }
  if (j->eff->agent_seccomp && agent_filter(j, a, err) < 0)
    return -1;
  /* No capabilities object means no capabilities, as runc does. */
  if (s->process->has_capabilities &&
      ar_caps_resolve(&s->process->capabilities, &a->caps, err) < 0)
    return ar_error_wrap(err, "config.json: process.capabilities");
  a->has_caps = true;
  if (ar_ns_plan(s, &j->ns, err) < 0)
    return -1;
  return plan_network(j, a, err);
}

static int make_fifo(struct create_job *j, ar_err *err)
{
  cleanup_free char *path = ar_statedir_path(j->ctx->root, j->o->id, "exec.fifo");
  if (mkfifo(path, 0622) < 0)
    return ar_error(err, errno, "mkfifo '%s'", path);
  /* O_RDWR never blocks, and keeps a writer alive so the init's read waits for `start`. */
  j->fifo_fd = open(path, O_RDWR | O_CLOEXEC);
  if (j->fifo_fd < 0)
    return ar_error(err, errno, "open '%s'", path);
  return 0;
}

/* Stage 3: the cgroup with its limits, before the init exists. */
static int make_cgroup(struct create_job *j, ar_err *err)
{
  const struct ar_linux *l = &j->spec->linux_;
  if (ar_cgroup_new(l->cgroups_path, j->o->id, j->ctx->systemd_cgroup, &j->cg, err) < 0)
    return -1;
  /* Recorded before it exists: a create killed from here on is undone by `delete --force`. */
  j->state->cgroup = ar_cgroup_serialize(j->cg);
  if (ar_state_save(j->ctx->root, j->state, err) < 0)
    return -1;
  if (ar_cgroup_create(j->cg, l->has_resources ? &l->resources : NULL, err) < 0)
    return ar_error_wrap(err, "cgroup");
  AR_FAULT("create:after-cgroup");
  return 0;
}

/* Stage 4: clone3 into the new namespaces; the child runs init.c and never comes back. */
static int spawn_init(struct create_job *j, struct ar_init_args *a, ar_err *err)
{
  int restore[2] = {-1, -1};
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, j->sync) < 0)
    return ar_error(err, errno, "socketpair");
  if (ar_ns_parent_enter(j->spec, &j->ns, restore, err) < 0) {
    ar_ns_parent_restore(restore, NULL);
    return -1;
  }
  a->spec = j->spec;
  a->process = j->spec->process;
  a->id = j->o->id;
  a->rootfs = j->state->rootfs;
  a->bundle = j->state->bundle;
  a->sync_fd = j->sync[1];
  a->fifo_fd = j->fifo_fd;
  a->lock_fd = j->lock_fd;
  a->no_pivot = j->o->no_pivot;
  a->no_new_keyring = j->o->no_new_keyring;
  a->preserve_fds = j->o->preserve_fds;
  a->ns = &j->ns;
  a->hooks_sync = j->spec->hooks[AR_HOOK_PRESTART].n_hooks ||
                  j->spec->hooks[AR_HOOK_CREATE_RUNTIME].n_hooks ||
                  j->spec->hooks[AR_HOOK_CREATE_CONTAINER].n_hooks ||
                  j->spec->hooks[AR_HOOK_START_CONTAINER].n_hooks;
  int *tasks = NULL;
  size_t n_tasks = 0;
  if (ar_cgroup_open_tasks(j->cg, &tasks, &n_tasks, err) < 0) {
    ar_ns_parent_restore(restore, NULL);
    return -1;
  }
  a->cg_tasks = tasks;
  a->n_cg_tasks = n_tasks;
  j->pid = ar_clone3(j->ns.clone_flags, ar_cgroup_clone_fd(j->cg));
  if (j->pid == 0) {
    close(j->sync[0]);
    ar_init_main(a);
  }
  while (n_tasks > 0)
    close(tasks[--n_tasks]);
  free(tasks);
  a->cg_tasks = NULL;
  if (j->pid < 0) {
    int e = errno;
    j->pid = 0;
    ar_ns_parent_restore(restore, NULL);
    return ar_error(err, e, "clone3");
  }
  j->sync[1] = close_and_reset(j->sync[1]);
  AR_FAULT("create:after-clone");
  return ar_ns_parent_restore(restore, err);
}

int ar_container_hooks(const struct ar_spec *s, const struct ar_state *st, enum ar_hook_phase ph,
                       const char *status, ar_err *err)
{
  cleanup_free char *json = NULL;
  if (s->hooks[ph].n_hooks == 0)
    return 0;
  if (ar_state_oci_json(st, status, false, &json, err) < 0)
    return -1;
  return ar_hooks_run(&s->hooks[ph], ph, json, st->bundle, err);
}

static int on_hooks_request(struct create_job *j, ar_err *err)
{
  cleanup_free char *json = NULL;
  if (ar_container_hooks(j->spec, j->state, AR_HOOK_PRESTART, "created", err) < 0 ||
      ar_container_hooks(j->spec, j->state, AR_HOOK_CREATE_RUNTIME, "created", err) < 0)
    return -1;
  AR_FAULT("create:after-hooks");
  /* The createContainer hooks run in the child and need the same document. */
  if (ar_state_oci_json(j->state, "created", false, &json, err) < 0)
    return -1;
  return ar_sync_send(j->sync[0], AR_SYNC_HOOKS_DONE, 0, json, -1, err);
}

/* The child forked the real init into its pid namespace (a sibling of it, our child). */
static int on_child_pid(struct create_job *j, pid_t pid, ar_err *err)
{
  if (pid <= 0)
    return ar_error(err, 0, "sync: bad init pid");
  while (waitpid(j->pid, NULL, 0) < 0 && errno == EINTR)
    ;
  j->pid = j->state->pid = pid;
  j->state->pid_start = ar_proc_starttime(pid, NULL);
  AR_FAULT("create:before-pid-saved");
  return ar_state_save(j->ctx->root, j->state, err);
}

static int on_pty(struct create_job *j, int master, ar_err *err)
{
  if (j->o->console_socket) {
    int r = ar_console_socket_send(j->o->console_socket, master, err);
    close(master);
    return r < 0 ? ar_error_wrap(err, "console socket") : 0;
  }
  j->pty_master = master;
  return 0;
}

/* Stage 5: maps, then serve the child's requests until it says READY (sync 1-4). */
static int drive_init(struct create_job *j, ar_err *err)
{
  struct ar_sync_msg *msg = xmalloc(sizeof(*msg));
  cleanup_free char *lstate = NULL;
  int ret = -1;

  j->state->pid = j->pid;
  j->state->pid_start = ar_proc_starttime(j->pid, NULL);
  if (ar_state_save(j->ctx->root, j->state, err) < 0) /* so a killed create's init is found */
    goto out;
  /* the child joins its cgroups itself (cgroup.h: ar_cgroup_open_tasks) */
  if (j->ns.new_user && ar_ns_write_maps(j->spec, j->pid, err) < 0)
    goto out;
  /* sync 1 carries the container process state for the OCI seccomp agent, if any */
  if (j->has_bpf && j->bpf.wants_listener && j->spec->linux_.seccomp->listener_path &&
      (lstate = ar_listener_state(j->state, j->pid, "creating",
                                  j->spec->linux_.seccomp->listener_metadata, err)) == NULL)
    goto out;
  if (ar_sync_send(j->sync[0], AR_SYNC_MAPS_DONE, 0, lstate, -1, err) < 0) /* sync 1 */
    goto out;
  for (;;) {
    if (ar_sync_recv(j->sync[0], msg, err) < 0)
      goto out;
    if (msg->type == AR_SYNC_ERROR) {
      ar_error_set_raw(err, msg->err_no, msg->data);
      goto out;
    }
    if (msg->type == AR_SYNC_CHILD_PID && on_child_pid(j, atoi(msg->data), err) < 0)
      goto out;
    if (msg->type == AR_SYNC_HOOKS_REQ && on_hooks_request(j, err) < 0) /* sync 2, 3 */
      goto out;
    if (msg->type == AR_SYNC_PTY && on_pty(j, msg->fd, err) < 0)
      goto out;
    if (msg->type == AR_SYNC_READY) /* sync 4 */
      break;
  }
  AR_FAULT("create:after-ready");
  j->state->pid_start = ar_proc_starttime(j->pid, NULL);
  ret = 0;
out:
  free(msg);
  return ret;
}

/* Stage 5b: the monitor, when there is a deadline to keep or an audit to write. */
static int start_monitor(struct create_job *j, ar_err *err)
{
  cleanup_free char *dir = ar_statedir_path(j->ctx->root, j->o->id, NULL);
  struct ar_mon_params p = {0};
  bool v2 = ar_cgroup_detect_mode() == AR_CGROUP_V2;
  if (j->eff == NULL || (j->eff->timeout_ms == 0 && !j->eff->audit))
    return 0;
  p.id = j->o->id;
  p.state_dir = dir;
  p.init_pid = j->pid;
  p.init_sock = j->mon[0];
  p.timeout_ms = j->eff->timeout_ms;
  p.audit_path = j->eff->audit ? j->eff->audit_path : NULL;
  p.audit_max_bytes = j->eff->audit_max_bytes;
  p.audit_syslog = j->eff->audit_syslog;
  p.cg_v2 = v2 ? ar_cgroup_path(j->cg, "") : NULL;
  p.cg_mem = v2 ? NULL : ar_cgroup_path(j->cg, "memory");
  p.cg_cpu = v2 ? NULL : ar_cgroup_path(j->cg, "cpuacct");
  p.cg_pids = v2 ? NULL : ar_cgroup_path(j->cg, "pids");
  p.cg_freezer = v2 ? NULL : ar_cgroup_path(j->cg, "freezer");
  if (ar_monitor_spawn(&p, &j->monitor_pid, err) < 0)
    return -1;
  j->state->monitor_pid = j->monitor_pid;
  if (j->eff->audit) {
    cleanup_free char *summary = ar_effective_to_json(j->eff, false);
    j->state->audit_log = xstrdup(j->eff->audit_path);
    if (ar_audit_event(j->eff->audit_path, j->o->id, "create", "policy", summary, err) < 0)
      return -1;
    if (!j->state->audit_exec &&
        ar_audit_event(j->eff->audit_path, j->o->id, "audit_degraded", "reason",
                       j->state->agent_seccomp
                           ? "\"the config's seccomp filter has SCMP_ACT_NOTIFY rules: its "
                             "listener gets them, execs are not audited\""
                           : "\"the agent seccomp filter is off: execs are not audited\"",
                       err) < 0)
      return -1;
  }
  return 0;
}

int ar_write_pid_file(const char *path, pid_t pid, ar_err *err)
{
  char buf[32];
  int n = snprintf(buf, sizeof(buf), "%d", pid);
  cleanup_free char *abs = NULL;
  if (path[0] != '/') {
    char cwd[PATH_MAX];
    if (getcwd(cwd, sizeof(cwd)) == NULL)
      return ar_error(err, errno, "getcwd");
    abs = xasprintf("%s/%s", cwd, path);
    path = abs;
  }
  if (ar_write_file_atomic(path, buf, n, 0644, err) < 0)
    return ar_error_wrap(err, "pid file");
  return 0;
}

/* Stage 6: the record of the container: effective config, state, pid file. */
static int commit(struct create_job *j, ar_err *err)
{
  cleanup_free char *cfg_path = ar_statedir_path(j->ctx->root, j->o->id, "config.json");
  cleanup_free char *json = NULL;
  AR_FAULT("create:before-commit");
  if (ar_spec_to_json(j->spec, false, &json, err) < 0)
    return -1;
  if (ar_write_file_atomic(cfg_path, json, strlen(json), 0600, err) < 0)
    return -1;
  if (ar_state_save(j->ctx->root, j->state, err) < 0)
    return -1;
  if (j->eff) {
    cleanup_free char *pol_path = ar_statedir_path(j->ctx->root, j->o->id, "policy.json");
    cleanup_free char *pol = ar_effective_to_json(j->eff, true);
    if (ar_write_file_atomic(pol_path, pol, strlen(pol), 0600, err) < 0)
      return -1;
  }
  if (j->o->pid_file && ar_write_pid_file(j->o->pid_file, j->pid, err) < 0)
    return -1;
  AR_FAULT("create:after-commit");
  return 0;
}

int ar_container_create(const struct ar_ctx *ctx, const struct ar_create_opts *o,
                        struct ar_container **ret, ar_err *err)
{
  struct create_job j;
  struct ar_init_args a = {.mon_fd = -1};
  struct ar_container *c;

  if (ar_validate_id(o->id, err) < 0)
    return -1;
  job_init(&j, ctx, o);
  if (load_bundle(&j, err) < 0 || prepare(&j, &a, err) < 0 || make_fifo(&j, err) < 0 ||
      make_cgroup(&j, err) < 0 || spawn_init(&j, &a, err) < 0 || drive_init(&j, err) < 0 ||
      start_monitor(&j, err) < 0 || commit(&j, err) < 0) {
    job_rollback(&j);
    job_clear(&j);
    return -1;
  }
  c = xcalloc(1, sizeof(*c));
  c->pid = j.pid;
  c->pty_master = ar_steal_fd(&j.pty_master);
  c->state = steal_pointer(&j.state);
  c->spec = steal_pointer(&j.spec);
  job_clear(&j);
  if (ret)
    *ret = c;
  else
    ar_container_free(c);
  return 0;
}

void ar_container_free(struct ar_container *c)
{
  if (c == NULL)
    return;
  close_and_reset(c->pty_master);
  ar_state_free(c->state);
  ar_spec_free(c->spec);
  free(c);
}

int ar_container_load_spec(const struct ar_ctx *ctx, const char *id, struct ar_spec **ret,
                           ar_err *err)
{
  cleanup_free char *path = ar_statedir_path(ctx->root, id, "config.json");
  return ar_spec_load(path, "state config.json", ret, err);
}
