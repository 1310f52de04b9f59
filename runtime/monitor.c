/* agentrun-monitor: the per-container sentinel.  Started by create with the fds in monitor.h;
 * epolls on the init's pidfd, the deadline timerfd, a signalfd (SIGUSR1 = started,
 * SIGTERM = deleted) and the seccomp listeners, until the init exits. */
#include <config.h>
#include "monitor.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <time.h>

#include "utils.h"

struct mon {
  const char *id;
  const char *state_dir;
  pid_t pid;
  uint64_t timeout_ms;
  struct ar_mon_cgroup cg;
  struct ar_audit audit;
  bool audit_on;
  int epfd, pidfd, timerfd, sigfd;
  uint64_t start_ns;
  bool timed_out;
};

static int watch(struct mon *m, int fd)
{
  struct epoll_event ev = {.events = EPOLLIN, .data.fd = fd};
  return epoll_ctl(m->epfd, EPOLL_CTL_ADD, fd, &ev);
}

/* A listener fd arrives over a unix socket (SCM_RIGHTS) and joins the epoll set.
 * Returns false at EOF. */
static bool take_listener(struct mon *m, int sock)
{
  char byte;
  struct iovec iov = {.iov_base = &byte, .iov_len = 1};
  union {
    char buf[CMSG_SPACE(sizeof(int))];
    struct cmsghdr align;
  } ctl;
  struct msghdr mh = {
      .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf, .msg_controllen = sizeof(ctl.buf)};
  struct cmsghdr *c;
  int fd;
  if (recvmsg(sock, &mh, MSG_CMSG_CLOEXEC) <= 0)
    return false;
  c = CMSG_FIRSTHDR(&mh);
  if (c == NULL || c->cmsg_type != SCM_RIGHTS)
    return true;
  memcpy(&fd, CMSG_DATA(c), sizeof(int));
  ar_mon_notify_listener(fd);
  if (watch(m, fd) < 0)
    close(fd);
  return true;
}

static void accept_session(struct mon *m, int lsock)
{
  /* a client that connects and sends nothing must not stall every exec of the container */
  struct timeval tv = {.tv_sec = 1};
  int s = accept4(lsock, NULL, NULL, SOCK_CLOEXEC);
  if (s < 0)
    return;
  setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  take_listener(m, s);
  close(s);
}

static void arm_deadline(struct mon *m)
{
  struct itimerspec its = {0};
  m->start_ns = ar_now_ns(CLOCK_MONOTONIC);
  if (m->timeout_ms == 0 || m->timerfd < 0)
    return;
  its.it_value.tv_sec = m->timeout_ms / 1000;
  its.it_value.tv_nsec = (m->timeout_ms % 1000) * 1000000;
  timerfd_settime(m->timerfd, 0, &its, NULL);
}

static void on_deadline(struct mon *m)
{
  cleanup_free char *marker = xasprintf("%s/" AR_MON_TIMED_OUT, m->state_dir);
  struct ar_jw *w;
  int fd = open(marker, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  if (fd >= 0)
    close(fd);
  m->timed_out = true;
  w = ar_audit_begin("timeout", m->id);
  ar_jw_kdouble(w, "after_s", m->timeout_ms / 1000.0);
  ar_audit_end(&m->audit, w, true);
  ar_mon_kill_cgroup(&m->cg);
}

/* Exit code and signal from the zombie's /proc/PID/stat (field 52), if it is not reaped yet. */
static bool read_exit(pid_t pid, int *code, int *sig)
{
  char path[64], buf[1024], *p;
  int fd, field = 2, status;
  ssize_t n;
  snprintf(path, sizeof(path), "/proc/%d/stat", pid);
  if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
    return false;
  n = read(fd, buf, sizeof(buf) - 1);
  close(fd);
  if (n <= 0 || (p = strrchr((buf[n] = '\0', buf), ')')) == NULL)
    return false;
  for (; p && field < 52; field++)
    p = strchr(p + 1, ' ');
  if (p == NULL || sscanf(p, "%d", &status) != 1)
    return false;
  *code = (status >> 8) & 0xff;
  *sig = status & 0x7f;
  return true;
}

static void report_exit(struct mon *m)
{
  struct ar_mon_figures f = {0};
  struct ar_jw *w;
  int code = -1, sig = 0;
  bool known = read_exit(m->pid, &code, &sig);
  ar_mon_read_figures(&m->cg, &f);
  if (f.oom_kills) {
    w = ar_audit_begin("oom", m->id);
    ar_jw_kuint(w, "oom_kills", f.oom_kills);
    ar_audit_end(&m->audit, w, true);
  }
  w = ar_audit_begin("exit", m->id);
  ar_jw_key(w, "exit_code");
  if (known && !sig)
    ar_jw_int(w, code);
  else
    ar_jw_null(w);
  ar_jw_key(w, "signal");
  if (known && sig)
    ar_jw_int(w, sig);
  else
    ar_jw_null(w);
  ar_jw_kdouble(w, "wall_s", (ar_now_ns(CLOCK_MONOTONIC) - m->start_ns) / 1e9);
  ar_jw_kdouble(w, "cpu_s", f.cpu_s);
  ar_jw_key(w, "mem_peak_bytes");
  f.has_mem_peak ? ar_jw_uint(w, f.mem_peak) : ar_jw_null(w);
  ar_jw_key(w, "pids_peak");
  f.has_pids_peak ? ar_jw_uint(w, f.pids_peak) : ar_jw_null(w);
  ar_jw_kbool(w, "oom_killed", f.oom_kills > 0);
  ar_jw_kbool(w, "timed_out", m->timed_out);
  ar_audit_end(&m->audit, w, true);
}

/* Returns false when the monitor's work is done. */
static bool on_signal(struct mon *m)
{
  struct signalfd_siginfo si;
  if (read(m->sigfd, &si, sizeof(si)) != sizeof(si))
    return true;
  if (si.ssi_signo == SIGUSR1) {
    arm_deadline(m);
    return true;
  }
  return false; /* SIGTERM: the container is being deleted */
}

static void loop(struct mon *m)
{
  struct epoll_event evs[16];
  for (;;) {
    int n = epoll_wait(m->epfd, evs, 16, -1);
    for (int i = 0; i < n; i++) {
      int fd = evs[i].data.fd;
      if (fd == m->pidfd) {
        report_exit(m);
        return;
      } else if (fd == m->timerfd) {
        uint64_t ticks;
        if (read(fd, &ticks, sizeof(ticks)) == sizeof(ticks))
          on_deadline(m);
      } else if (fd == m->sigfd) {
        if (!on_signal(m))
          return;
      } else if (fd == AR_MON_FD_INIT) {
        if (!take_listener(m, fd)) /* the init has exec'd: its end is closed */
          epoll_ctl(m->epfd, EPOLL_CTL_DEL, fd, NULL);
      } else if (fd == AR_MON_FD_LISTEN) {
        accept_session(m, fd);
      } else if ((evs[i].events & (EPOLLHUP | EPOLLERR)) ||
                 (ar_mon_handle_notify(fd, &m->audit) < 0 && errno != ENOENT)) {
        /* every user of that filter is gone, or it is no listener (ENOTTY): never spin on it */
        epoll_ctl(m->epfd, EPOLL_CTL_DEL, fd, NULL);
        close(fd);
      }
    }
  }
}

static int parse_args(int argc, char **argv, struct mon *m, const char **audit_path,
                      uint64_t *max_bytes, bool *syslog_on)
{
  static const struct option lo[] = {{"id", 1, 0, 'i'},
                                     {"pid", 1, 0, 'p'},
                                     {"state-dir", 1, 0, 'd'},
                                     {"audit", 1, 0, 'a'},
                                     {"max-bytes", 1, 0, 'm'},
                                     {"syslog", 0, 0, 's'},
                                     {"timeout-ms", 1, 0, 't'},
                                     {"cg-mem", 1, 0, 'M'},
                                     {"cg-cpu", 1, 0, 'C'},
                                     {"cg-pids", 1, 0, 'P'},
                                     {"cg-freezer", 1, 0, 'F'},
                                     {"cg-v2", 1, 0, 'V'},
                                     {0, 0, 0, 0}};
  int c;
  while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
    switch (c) {
    case 'i':
      m->id = optarg;
      break;
    case 'p':
      m->pid = atoi(optarg);
      break;
    case 'd':
      m->state_dir = optarg;
      break;
    case 'a':
      *audit_path = optarg;
      break;
    case 'm':
      *max_bytes = strtoull(optarg, NULL, 10);
      break;
    case 's':
      *syslog_on = true;
      break;
    case 't':
      m->timeout_ms = strtoull(optarg, NULL, 10);
      break;
    case 'M':
      m->cg.mem_dir = optarg;
      break;
    case 'C':
      m->cg.cpu_dir = optarg;
      break;
    case 'P':
      m->cg.pids_dir = optarg;
      break;
    case 'F':
      m->cg.freezer_dir = optarg;
      break;
    case 'V':
      m->cg.v2_dir = optarg;
      break;
    default:
      return -1;
    }
  }
  return (m->id && m->pid > 0 && m->state_dir) ? 0 : -1;
}

static int setup(struct mon *m, const char *audit_path, uint64_t max_bytes, bool syslog_on)
{
  sigset_t set;
  ar_err err = NULL;
  if (audit_path && ar_audit_open(&m->audit, audit_path, m->id, max_bytes, syslog_on, &err) < 0) {
    ar_error_free(&err);
    m->audit.fd = -1; /* the job still runs; its lines are counted as dropped */
  }
  m->audit.id = m->id;
  sigemptyset(&set);
  sigaddset(&set, SIGUSR1);
  sigaddset(&set, SIGTERM);
  sigprocmask(SIG_BLOCK, &set, NULL);
  signal(SIGPIPE, SIG_IGN);
  m->sigfd = signalfd(-1, &set, SFD_CLOEXEC);
  m->timerfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
  m->pidfd = syscall(SYS_pidfd_open, m->pid, 0);
  m->epfd = epoll_create1(EPOLL_CLOEXEC);
  if (m->pidfd < 0 || m->epfd < 0 || m->sigfd < 0)
    return -1;
  ar_mon_notify_init();
  watch(m, m->pidfd);
  watch(m, m->sigfd);
  if (m->timerfd >= 0)
    watch(m, m->timerfd);
  watch(m, AR_MON_FD_INIT);
  watch(m, AR_MON_FD_LISTEN);
  return 0;
}

int main(int argc, char **argv)
{
  struct mon m = {.timerfd = -1};
  const char *audit_path = NULL;
  uint64_t max_bytes = 0;
  bool syslog_on = false;
  if (parse_args(argc, argv, &m, &audit_path, &max_bytes, &syslog_on) < 0) {
    fprintf(stderr, "agentrun-monitor: started with bad arguments; it is run by agentrun\n");
    return 2;
  }
  /* A flood of execs inside must slow the container, not the host. */
  setpriority(PRIO_PROCESS, 0, 10);
  if (setup(&m, audit_path, max_bytes, syslog_on) < 0)
    return 1;
  m.start_ns = ar_now_ns(CLOCK_MONOTONIC);
  loop(&m);
  ar_audit_close(&m.audit);
  return 0;
}
