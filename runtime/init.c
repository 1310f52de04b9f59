#include <config.h>
#include "init.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/keyctl.h>
#include <sched.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cgroup.h"
#include "hooks/hooks.h"
#include "monitor-spawn.h"
#include "mounts.h"
#include "sync.h"
#include "terminal.h"
#include "utils.h"

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

#define DEFAULT_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

/* What the stages pass along. */
struct init_run {
  struct ar_init_args *a;
  char *hooks_state; /* state JSON from the parent, for createContainer/startContainer hooks */
  char *exe;         /* resolved path of args[0] */
  char *lstate;      /* linux.seccomp.listenerPath: the state to send with the notify fd */
  int lsock;         /* and the connection to send them on, made on the host side */
};

static const char *env_get(const struct ar_process *p, const char *key)
{
  size_t klen = strlen(key);
  for (size_t i = 0; i < p->n_env; i++)
    if (strncmp(p->env[i], key, klen) == 0 && p->env[i][klen] == '=')
      return p->env[i] + klen + 1;
  return NULL;
}

/* Engines match these in lower case, as Go prints them: "no such file or directory" gives
 * 127 and "permission denied" 126 under Docker and Podman. */
static int exec_error(ar_err *err, int e, const char *path, const char *detail)
{
  char reason[128];
  cleanup_free char *msg = NULL;
  snprintf(reason, sizeof(reason), "%s", strerror(e));
  reason[0] = (char)tolower((unsigned char)reason[0]);
  msg = xasprintf("exec: \"%s\"%s: %s", path, detail, reason);
  return ar_error_set_raw(err, e, msg);
}

static int check_exe(const char *path, ar_err *err)
{
  struct stat st;
  if (stat(path, &st) < 0) {
    int e = errno;
    cleanup_free char *detail = xasprintf(": stat %s", path);
    return exec_error(err, e, path, detail);
  }
  if (S_ISDIR(st.st_mode))
    return exec_error(err, EACCES, path, ": is a directory");
  if (access(path, X_OK) < 0)
    return exec_error(err, errno, path, "");
  return 0;
}

/* args[0] looked up in the container's PATH, as runc does, so a bad command fails create. */
static int find_exe(struct init_run *r, ar_err *err)
{
  const struct ar_process *p = r->a->process;
  const char *name = p->args[0], *path = env_get(p, "PATH");
  cleanup_free char *dirs = xstrdup(path ? path : DEFAULT_PATH);
  char *save = NULL;

  if (strchr(name, '/')) {
    r->exe = xstrdup(name);
    return check_exe(name, err);
  }
  for (char *d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
    cleanup_free char *cand = xasprintf("%s/%s", *d ? d : ".", name);
    struct stat st;
    if (stat(cand, &st) == 0 && S_ISREG(st.st_mode) && access(cand, X_OK) == 0) {
      r->exe = steal_pointer(&cand);
      return 0;
    }
  }
  return ar_error(err, 0, "exec: \"%s\": executable file not found in $PATH", name);
}

static int set_names(const struct ar_spec *s, ar_err *err)
{
  if (s->hostname && *s->hostname && sethostname(s->hostname, strlen(s->hostname)) < 0)
    return ar_error(err, errno, "sethostname");
  if (s->domainname && *s->domainname && setdomainname(s->domainname, strlen(s->domainname)) < 0)
    return ar_error(err, errno, "setdomainname");
  return 0;
}

static int set_sysctls(const struct ar_spec *s, ar_err *err)
{
  for (size_t i = 0; i < s->linux_.n_sysctl; i++) {
    const struct ar_kv *kv = &s->linux_.sysctl[i];
    cleanup_free char *path = xasprintf("/proc/sys/%s", kv->key);
    if (strstr(kv->key, "..") || strchr(kv->key, '/'))
      return ar_error(err, 0, "linux.sysctl: invalid key \"%s\"", kv->key);
    for (char *c = path + strlen("/proc/sys/"); *c; c++)
      if (*c == '.')
        *c = '/';
    if (ar_write_file(path, kv->value, strlen(kv->value), 0, err) < 0)
      return ar_error_wrap(err, "linux.sysctl \"%s\"", kv->key);
  }
  return 0;
}

/* The pid namespace we unshared holds our next child: it becomes the init, as a child of the
 * runtime (CLONE_PARENT), and we hand over its pid and go. */
static int fork_into_pidns(struct init_run *r, ar_err *err)
{
  char buf[32];
  pid_t pid = ar_clone3(CLONE_PARENT, -1);
  if (pid < 0)
    return ar_error(err, errno, "fork into the new pid namespace");
  if (pid == 0)
    return 0;
  snprintf(buf, sizeof(buf), "%d", pid);
  if (ar_sync_send(r->a->sync_fd, AR_SYNC_CHILD_PID, 0, buf, -1, err) < 0)
    return -1;
  _exit(0);
}

/* sync 1: the parent has put us in the cgroup and written the id maps. */
static int stage_namespaces(struct init_run *r, ar_err *err)
{
  struct ar_sync_msg *msg = xmalloc(sizeof(*msg));
  int ret = ar_sync_expect(r->a->sync_fd, AR_SYNC_MAPS_DONE, msg, err);
  if (ret == 0 && msg->data[0]) /* the OCI seccomp agent's: connect before its path is gone */
    r->lstate = xstrdup(msg->data);
  free(msg);
  if (ret < 0)
    return -1;
  if (r->lstate &&
      (r->lsock = ar_listener_connect(r->a->spec->linux_.seccomp->listener_path, err)) < 0)
    return -1;
  if (r->a->ns->new_user && (setresgid(0, 0, 0) < 0 || setresuid(0, 0, 0) < 0))
    return ar_error(err, errno, "become root in the user namespace");
  if (ar_ns_join(r->a->ns, err) < 0)
    return -1;
  if (r->a->ns->join_fd[AR_NS_USER] >= 0 && (setresgid(0, 0, 0) < 0 || setresuid(0, 0, 0) < 0))
    return ar_error(err, errno, "become root in the joined user namespace");
  return r->a->ns->fork_after_join ? fork_into_pidns(r, err) : 0;
}

/* sync 2, 3: prestart/createRuntime run in the parent, then createContainer here. */
static int stage_create_hooks(struct init_run *r, ar_err *err)
{
  struct ar_sync_msg *msg;
  if (!r->a->hooks_sync)
    return 0;
  if (ar_sync_send(r->a->sync_fd, AR_SYNC_HOOKS_REQ, 0, NULL, -1, err) < 0)
    return -1;
  msg = xmalloc(sizeof(*msg));
  if (ar_sync_expect(r->a->sync_fd, AR_SYNC_HOOKS_DONE, msg, err) < 0) {
    free(msg);
    return -1;
  }
  r->hooks_state = xstrdup(msg->data);
  free(msg);
  if (r->a->net_unshare && unshare(CLONE_NEWNET) < 0)
    return ar_error(err, errno, "unshare a fresh network namespace");
  if (r->a->net_unshare &&
      ar_mounts_setup_phase(r->a->spec, r->a->rootfs, AR_MOUNTS_SYSFS, err) < 0)
    return -1;
  return ar_hooks_run(&r->a->spec->hooks[AR_HOOK_CREATE_CONTAINER], AR_HOOK_CREATE_CONTAINER,
                      r->hooks_state, r->a->bundle, err);
}

static int stage_terminal(struct init_run *r, ar_err *err)
{
  const struct ar_process *p = r->a->process;
  cleanup_close int master = -1, slave = -1;
  char slave_path[64];
  if (!p->terminal)
    return 0;
  if (ar_pty_open(&master, &slave, slave_path, sizeof(slave_path), err) < 0)
    return -1;
  if (!r->a->is_exec && ar_mounts_console("/", slave_path, err) < 0)
    return -1;
  if (ar_sync_send(r->a->sync_fd, AR_SYNC_PTY, 0, NULL, master, err) < 0)
    return -1;
  return ar_pty_become_stdio(slave, p->console_height, p->console_width, p->has_console_size,
                             err);
}

static int stage_rootfs(struct init_run *r, ar_err *err)
{
  const struct ar_spec *s = r->a->spec;
  if (r->a->is_exec)
    return stage_terminal(r, err);
  if (ar_mounts_setup_phase(s, r->a->rootfs, r->a->net_unshare ? AR_MOUNTS_EARLY : AR_MOUNTS_ALL,
                            err) < 0)
    return -1;
  if (set_names(s, err) < 0)
    return -1;
  if (stage_create_hooks(r, err) < 0)
    return -1;
  if (r->a->net_lo_up && ar_net_lo_up(err) < 0)
    return -1;
  if (ar_mounts_pivot(r->a->rootfs, r->a->no_pivot, err) < 0)
    return -1;
  if (stage_terminal(r, err) < 0)
    return -1;
  if (set_sysctls(s, err) < 0)
    return -1;
  return ar_mounts_finalize(s, err);
}

static int stage_process(struct init_run *r, ar_err *err)
{
  const struct ar_process *p = r->a->process;
  if (!r->a->no_new_keyring && !r->a->is_exec &&
      syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, NULL) < 0 && errno != ENOSYS)
    return ar_error(err, errno, "join a new session keyring");
  if (ar_rlimits_apply(p, err) < 0 || ar_oom_score_adj_apply(p, err) < 0 ||
      ar_personality_apply(r->a->spec->linux_.personality, err) < 0 ||
      ar_io_priority_apply(p, err) < 0)
    return -1;
  if (p->cwd && chdir(p->cwd) < 0 && errno != EACCES)
    return ar_error(err, errno, "process.cwd '%s'", p->cwd);
  return find_exe(r, err);
}

/* sync 4, then block on the exec fifo until `start` writes to it. */
static int stage_wait_start(struct init_run *r, ar_err *err)
{
  char c;
  ssize_t n;
  if (r->a->is_exec)
    return 0;
  if (ar_sync_send(r->a->sync_fd, AR_SYNC_READY, 0, NULL, -1, err) < 0)
    return -1;
  do
    n = read(r->a->fifo_fd, &c, 1);
  while (n < 0 && errno == EINTR);
  if (n != 1)
    return ar_error(err, n < 0 ? errno : EPIPE, "wait for start");
  /* the fifo stays open until execve closes it: `start` waits for that before poststart */
  if (r->hooks_state)
    return ar_hooks_run(&r->a->spec->hooks[AR_HOOK_START_CONTAINER], AR_HOOK_START_CONTAINER,
                        r->hooks_state, NULL, err);
  return 0;
}

/* The config's filter, then the agent filter on top: the kernel runs both, the strictest wins.
 * The agent filter's listener (the exec audit) goes to the monitor, or over the sync socket to
 * the exec parent, which relays it; the execve that follows waits for the monitor's answer. */
static int load_filters(struct init_run *r, int *listener, ar_err *err)
{
  cleanup_close int agent_listener = -1;
  int to = r->a->is_exec ? r->a->sync_fd : r->a->mon_fd;
  if (r->a->bpf && ar_seccomp_load(r->a->bpf, listener, err) < 0)
    return -1;
  if (*listener >= 0 && r->lsock >= 0) {
    int sent = ar_listener_send(r->lsock, r->lstate, *listener, err);
    r->lsock = close_and_reset(r->lsock);
    if (sent < 0)
      return -1;
  }
  if (r->a->agent_bpf && ar_seccomp_load(r->a->agent_bpf, &agent_listener, err) < 0)
    return ar_error_wrap(err, "agent seccomp filter");
  if (agent_listener >= 0 && to >= 0 &&
      ar_sync_send(to, AR_SYNC_LISTENER, 0, NULL, agent_listener, err) < 0)
    return ar_error_wrap(err, "hand the exec audit listener over");
  return 0;
}

/* Seccomp goes last; without no_new_privs it must precede the caps drop (it needs SYS_ADMIN). */
static int stage_credentials(struct init_run *r, ar_err *err)
{
  const struct ar_process *p = r->a->process;
  int listener = -1;
  if (!p->no_new_privileges && load_filters(r, &listener, err) < 0)
    return -1;
  if (ar_stdio_chown(p->user.uid, err) < 0) /* the tty and stdio belong to the process user */
    return -1;
  if (ar_caps_apply_user(p, r->a->has_caps ? &r->a->caps : NULL, err) < 0)
    return -1;
  if (p->no_new_privileges && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
    return ar_error(err, errno, "prctl(PR_SET_NO_NEW_PRIVS)");
  if (p->no_new_privileges && load_filters(r, &listener, err) < 0)
    return -1;
  close_and_reset(listener);
  if (p->cwd && chdir(p->cwd) < 0)
    return ar_error(err, errno, "process.cwd '%s'", p->cwd);
  return 0;
}

/* HOME from the container's /etc/passwd when the config leaves it unset, as runc does. */
static char **with_home(const struct ar_process *p, char **envp)
{
  char line[1024], *home = NULL;
  size_t n = ar_strv_len(envp);
  FILE *f;
  if (env_get(p, "HOME"))
    return envp;
  if ((f = fopen("/etc/passwd", "re")) != NULL) {
    while (home == NULL && fgets(line, sizeof(line), f)) {
      char *fields[7], *t = line;
      int k = 0;
      /* name:pw:uid:gid:gecos:home:shell, with empty fields kept */
      for (; k < 7 && (fields[k] = strsep(&t, ":")) != NULL; k++)
        ;
      if (k >= 6 && strtoul(fields[2], NULL, 10) == p->user.uid && *fields[2])
        home = xstrdup(fields[5]);
    }
    fclose(f);
  }
  envp = xrealloc(envp, (n + 2) * sizeof(char *));
  envp[n] = xasprintf("HOME=%s", home && *home ? home : "/");
  envp[n + 1] = NULL;
  free(home);
  return envp;
}

static void __attribute__((noreturn)) fail(struct init_run *r, ar_err err, bool after_ready)
{
  int code = err && (err->status == ENOENT || strstr(err->msg, "not found")) ? 127 : 1;
  if (err && err->status == EACCES)
    code = 126;
  if (after_ready)
    dprintf(2, "agentrun: %s\n", err ? err->msg : "init failed");
  else
    ar_sync_send_error(r->a->sync_fd, err);
  _exit(code);
}

void ar_init_main(struct ar_init_args *a)
{
  struct init_run r = {.a = a, .lsock = -1};
  const struct ar_process *p = a->process;
  cleanup_strv char **argv = NULL;
  cleanup_strv char **envp = NULL;
  ar_err err = NULL;

  close_and_reset(a->lock_fd);
  /* before anything is charged to the caller's cgroups, and before the cgroup namespace */
  if (ar_cgroup_join_self(a->cg_tasks, a->n_cg_tasks, &err) < 0)
    fail(&r, err, false);
  for (size_t i = 0; i < a->n_cg_tasks; i++)
    close(a->cg_tasks[i]);
  /* Until execve, nothing in the container may open /proc/<us>/exe (the runtime binary). */
  prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  if (stage_namespaces(&r, &err) < 0 || stage_rootfs(&r, &err) < 0 ||
      stage_process(&r, &err) < 0 || stage_wait_start(&r, &err) < 0)
    fail(&r, err, false);
  if (stage_credentials(&r, &err) < 0)
    fail(&r, err, !a->is_exec);
  /* No fd of ours beyond stdio and --preserve-fds reaches the process (CVE-2024-21626). */
  syscall(SYS_close_range, 3 + a->preserve_fds, ~0U, CLOSE_RANGE_CLOEXEC);
  argv = ar_strv_dup(p->args, p->n_args);
  envp = with_home(p, ar_strv_dup(p->env, p->n_env));
  execve(r.exe, argv, envp);
  exec_error(&err, errno, r.exe, "");
  fail(&r, err, !a->is_exec);
}
