/* Starting the monitor from create, and reaching it from start, exec and delete. */
#include <config.h>
#include "monitor-spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "log.h"
#include "monitor.h"
#include "spec/jsonw.h"
#include "statedir.h"
#include "terminal.h"
#include "utils.h"

#ifndef AR_LIBEXECDIR
#define AR_LIBEXECDIR "/usr/local/libexec/agentrun"
#endif

extern char **environ;

/* Beside our own binary first (the build tree, or an install), then the libexec dir. */
static char *monitor_binary(void)
{
  char self[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
  const char *dir = getenv("_AGENTRUN_SEALED_EXE") ? getenv("_AGENTRUN_SELF_DIR") : NULL;
  if (dir && (n = snprintf(self, sizeof(self), "%s/x", dir)) >= (ssize_t)sizeof(self))
    n = -1;
  if (n > 0) {
    char *slash, *cand;
    self[n] = '\0';
    if ((slash = strrchr(self, '/')) != NULL) {
      *slash = '\0';
      cand = xasprintf("%s/agentrun-monitor", self);
      if (access(cand, X_OK) == 0)
        return cand;
      free(cand);
    }
  }
  return xstrdup(AR_LIBEXECDIR "/agentrun-monitor");
}

/* Fill sa with path.  A path longer than sun_path (Docker's state dirs under
 * /var/run/docker/runtime-runc/moby/<64 hex>/ are) is reached through an O_PATH fd of its
 * directory, left in *dirfd for the caller to close after bind/connect. */
static int socket_addr(const char *path, struct sockaddr_un *sa, int *dirfd, ar_err *err)
{
  cleanup_free char *dir = NULL;
  char *slash;
  *dirfd = -1;
  if (strlen(path) < sizeof(sa->sun_path)) {
    strcpy(sa->sun_path, path);
    return 0;
  }
  dir = xstrdup(path);
  slash = strrchr(dir, '/');
  if (slash == NULL)
    return ar_error(err, ENAMETOOLONG, "monitor socket '%s'", path);
  *slash = '\0';
  *dirfd = open(*dir ? dir : "/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (*dirfd < 0)
    return ar_error(err, errno, "monitor socket '%s'", path);
  if ((size_t)snprintf(sa->sun_path, sizeof(sa->sun_path), "/proc/self/fd/%d/%s", *dirfd,
                       slash + 1) >= sizeof(sa->sun_path))
    return ar_error(err, ENAMETOOLONG, "monitor socket '%s'", path);
  return 0;
}

static int listen_socket(const char *path, ar_err *err)
{
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  cleanup_close int dirfd = -1;
  int fd;
  if (socket_addr(path, &sa, &dirfd, err) < 0)
    return -1;
  fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return ar_error(err, errno, "monitor socket");
  unlink(path);
  if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 16) < 0) {
    int e = errno;
    close(fd);
    return ar_error(err, e, "monitor socket '%s'", path);
  }
  return fd;
}

static void add_arg(char ***argv, size_t *n, char *s)
{
  *argv = xrealloc(*argv, (*n + 2) * sizeof(char *));
  (*argv)[(*n)++] = s;
  (*argv)[*n] = NULL;
}

static char **monitor_argv(const struct ar_mon_params *p, char *bin)
{
  char **argv = NULL;
  size_t n = 0;
  add_arg(&argv, &n, bin);
  add_arg(&argv, &n, xasprintf("--id=%s", p->id));
  add_arg(&argv, &n, xasprintf("--pid=%d", p->init_pid));
  add_arg(&argv, &n, xasprintf("--state-dir=%s", p->state_dir));
  add_arg(&argv, &n, xasprintf("--timeout-ms=%llu", (unsigned long long)p->timeout_ms));
  if (p->audit_path) {
    add_arg(&argv, &n, xasprintf("--audit=%s", p->audit_path));
    add_arg(&argv, &n, xasprintf("--max-bytes=%llu", (unsigned long long)p->audit_max_bytes));
  }
  if (p->audit_syslog)
    add_arg(&argv, &n, xstrdup("--syslog"));
  if (p->cg_v2)
    add_arg(&argv, &n, xasprintf("--cg-v2=%s", p->cg_v2));
  if (p->cg_mem)
    add_arg(&argv, &n, xasprintf("--cg-mem=%s", p->cg_mem));
  if (p->cg_cpu)
    add_arg(&argv, &n, xasprintf("--cg-cpu=%s", p->cg_cpu));
  if (p->cg_pids)
    add_arg(&argv, &n, xasprintf("--cg-pids=%s", p->cg_pids));
  if (p->cg_freezer)
    add_arg(&argv, &n, xasprintf("--cg-freezer=%s", p->cg_freezer));
  return argv;
}

/* fds 3 and 4 of the monitor; dup'ed high first so dup2 always clears CLOEXEC. */
static int spawn(char **argv, int init_sock, int listen_fd, pid_t *ret, ar_err *err)
{
  posix_spawn_file_actions_t fa;
  posix_spawnattr_t attr;
  sigset_t mask, none;
  int a = fcntl(init_sock, F_DUPFD_CLOEXEC, 10), b = fcntl(listen_fd, F_DUPFD_CLOEXEC, 10), r;
  sigemptyset(&mask);
  sigaddset(&mask, SIGUSR1);
  sigaddset(&mask, SIGTERM);
  sigemptyset(&none);
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDWR, 0);
  posix_spawn_file_actions_adddup2(&fa, 0, 1);
  posix_spawn_file_actions_adddup2(&fa, 0, 2);
  posix_spawn_file_actions_adddup2(&fa, a, AR_MON_FD_INIT);
  posix_spawn_file_actions_adddup2(&fa, b, AR_MON_FD_LISTEN);
  posix_spawnattr_init(&attr);
  /* SIGUSR1 (started) must wait for the monitor's signalfd, not kill it. */
  posix_spawnattr_setsigmask(&attr, &mask);
  posix_spawnattr_setsigdefault(&attr, &mask);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK |
                                      POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_USEVFORK);
  r = posix_spawn(ret, argv[0], &fa, &attr, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  close(a);
  close(b);
  if (r != 0)
    return ar_error(err, r, "start the monitor '%s'", argv[0]);
  return 0;
}

int ar_monitor_spawn(const struct ar_mon_params *p, pid_t *ret, ar_err *err)
{
  cleanup_free char *sock_path = xasprintf("%s/" AR_MON_SOCKET, p->state_dir);
  cleanup_close int lfd = -1;
  cleanup_strv char **argv = NULL;
  lfd = listen_socket(sock_path, err);
  if (lfd < 0)
    return -1;
  argv = monitor_argv(p, monitor_binary());
  return spawn(argv, p->init_sock, lfd, ret, err);
}

void ar_monitor_signal(const struct ar_state *st, int sig)
{
  if (st->monitor_pid > 0)
    kill(st->monitor_pid, sig);
}

int ar_monitor_send_listener(const char *state_dir, int listener, ar_err *err)
{
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  cleanup_close int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  cleanup_free char *path = xasprintf("%s/" AR_MON_SOCKET, state_dir);
  cleanup_close int dirfd = -1;
  if (fd < 0)
    return ar_error(err, errno, "monitor socket '%s'", path);
  if (socket_addr(path, &sa, &dirfd, err) < 0)
    return -1;
  if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
    return ar_error(err, errno, "connect to the monitor '%s'", path);
  if (ar_send_fd(fd, listener, "L", 1, err) < 0)
    return ar_error_wrap(err, "send the listener to the monitor");
  return 0;
}

char *ar_listener_state(const struct ar_state *st, pid_t pid, const char *status,
                        const char *metadata, ar_err *err)
{
  cleanup_free char *state = NULL;
  struct ar_jw *w;
  if (ar_state_oci_json(st, status, false, &state, err) < 0)
    return NULL;
  w = ar_jw_new(false);
  ar_jw_map_open(w);
  ar_jw_kstr(w, "ociVersion", AR_OCI_VERSION);
  ar_jw_key(w, "fds");
  ar_jw_array_open(w);
  ar_jw_str(w, "seccompFd");
  ar_jw_array_close(w);
  ar_jw_kint(w, "pid", pid);
  if (metadata)
    ar_jw_kstr(w, "metadata", metadata);
  ar_jw_key(w, "state");
  ar_jw_raw(w, state);
  ar_jw_map_close(w);
  return ar_jw_finish(w, NULL);
}

int ar_listener_connect(const char *path, ar_err *err)
{
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  cleanup_close int dirfd = -1;
  int fd;
  if (socket_addr(path, &sa, &dirfd, err) < 0)
    return ar_error_wrap(err, "linux.seccomp.listenerPath");
  fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return ar_error(err, errno, "linux.seccomp.listenerPath: socket");
  if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
    int e = errno;
    close(fd);
    return ar_error(err, e, "linux.seccomp.listenerPath: connect to '%s'", path);
  }
  return fd;
}

int ar_listener_send(int sock, const char *state_json, int notify_fd, ar_err *err)
{
  size_t len = strlen(state_json), done;
  ssize_t n = ar_send_fd(sock, notify_fd, state_json, len, err);
  if (n < 0)
    return ar_error_wrap(err, "linux.seccomp.listenerPath: send the seccomp fd");
  /* the fd went with the first bytes; the rest of the state follows as plain data */
  for (done = n; done < len; done += n) {
    n = send(sock, state_json + done, len - done, MSG_NOSIGNAL);
    if (n < 0 && errno != EINTR)
      return ar_error(err, errno, "linux.seccomp.listenerPath: send the state");
    n = n < 0 ? 0 : n;
  }
  return 0;
}
