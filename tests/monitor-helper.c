/* A static helper run inside containers by tests/monitor.bats (busybox has no python):
 *   monitor-helper alloc MIB       allocate and touch MIB MiB, then exit 0
 *   monitor-helper flood N PATH..  fork+exec PATH N times, waiting for each; print the rate
 *   monitor-helper exec PATH..     execv PATH; on failure print errno and how long it took
 *   monitor-helper noop            exit 0 at once (the cheapest exec target)
 *   monitor-helper edge PATH       execve PATH noop with the path, argv and its strings at the
 *                                  very end of a mapping, then with a bad argv pointer
 *   monitor-helper agent SOCK OUT  (on the host) an OCI seccomp agent: accept container process
 *                                  states on SOCK (listenerPath), append each to OUT with the
 *                                  syscalls it then gets; answer them all CONTINUE */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int alloc(long mib)
{
  size_t len = (size_t)mib << 20;
  char *p = malloc(len);
  if (p == NULL) {
    perror("malloc");
    return 1;
  }
  for (size_t i = 0; i < len; i += 4096)
    p[i] = (char)i | 1; /* touch every page so it is resident */
  printf("allocated %ld MiB\n", mib);
  fflush(stdout);
  return p[len / 2] == 0;
}

/* vfork: the cost measured is the exec and its audit, not copying page tables. */
static __attribute__((noinline)) int run_one(char **argv)
{
  int status;
  pid_t pid = vfork();
  if (pid == 0) {
    execv(argv[0], argv);
    _exit(127);
  }
  if (pid < 0 || waitpid(pid, &status, 0) < 0)
    return -1;
  return status;
}

static int flood(long n, char **argv)
{
  long ok = 0, failed = 0;
  double t0 = now_s(), dt;
  for (long i = 0; i < n; i++) {
    int status = run_one(argv);
    if (status < 0) {
      perror("fork/wait");
      return 1;
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
      ok++;
    else
      failed++;
  }
  dt = now_s() - t0;
  printf("execs %ld ok %ld failed %ld seconds %.3f us_per_exec %.1f\n", n, ok, failed, dt,
         dt * 1e6 / (n ? n : 1));
  return failed != 0;
}

static int do_exec(char **argv)
{
  double t0 = now_s();
  int e;
  execv(argv[0], argv);
  e = errno;
  printf("execv failed errno %d (%s) after %.3f s\n", e, strerror(e), now_s() - t0);
  return 1;
}

/* One connection: the state (JSON, until EOF) and the notify fd that came with it. */
static int agent_take(int conn, FILE *out)
{
  static char buf[65536];
  size_t len = 0;
  int fd = -1;
  for (;;) {
    union {
      char b[CMSG_SPACE(sizeof(int))];
      struct cmsghdr align;
    } ctl;
    struct iovec iov = {buf + len, sizeof(buf) - 1 - len};
    struct msghdr mh = {
        .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.b, .msg_controllen = sizeof(ctl.b)};
    ssize_t n = recvmsg(conn, &mh, MSG_CMSG_CLOEXEC);
    struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
    if (c && c->cmsg_type == SCM_RIGHTS)
      memcpy(&fd, CMSG_DATA(c), sizeof(int));
    if (n <= 0)
      break;
    len += n;
  }
  buf[len] = '\0';
  fprintf(out, "{\"state\": %s, \"got_fd\": %s}\n", len ? buf : "null", fd >= 0 ? "true" : "false");
  fflush(out);
  close(conn);
  return fd;
}

static void agent_serve(int fd, FILE *out)
{
  struct seccomp_notif req;
  struct seccomp_notif_resp resp;
  memset(&req, 0, sizeof(req));
  if (ioctl(fd, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0)
    return;
  fprintf(out, "{\"notify\": %d, \"pid\": %d}\n", req.data.nr, req.pid);
  fflush(out);
  memset(&resp, 0, sizeof(resp));
  resp.id = req.id;
  resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
  ioctl(fd, SECCOMP_IOCTL_NOTIF_SEND, &resp);
}

static int agent(const char *path, const char *out_path)
{
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  struct pollfd pfd[64];
  int nfds = 1;
  FILE *out = fopen(out_path, "a");
  pfd[0].fd = socket(AF_UNIX, SOCK_STREAM, 0);
  pfd[0].events = POLLIN;
  snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
  unlink(path);
  if (out == NULL || bind(pfd[0].fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
      listen(pfd[0].fd, 8) < 0) {
    perror(path);
    return 1;
  }
  for (;;) {
    if (poll(pfd, nfds, -1) < 0)
      continue;
    for (int i = nfds - 1; i >= 1; i--) {
      if (pfd[i].revents & POLLHUP) {
        close(pfd[i].fd);
        pfd[i] = pfd[--nfds];
      } else if (pfd[i].revents & POLLIN) {
        agent_serve(pfd[i].fd, out);
      }
    }
    if (pfd[0].revents & POLLIN) {
      int fd = agent_take(accept(pfd[0].fd, NULL, NULL), out);
      if (fd >= 0 && nfds < 64)
        pfd[nfds++] = (struct pollfd){.fd = fd, .events = POLLIN};
    }
  }
}

/* What the monitor must read right up to an unmapped page, and what it cannot read at all. */
static int edge(const char *path)
{
  long pg = sysconf(_SC_PAGESIZE);
  char *map = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  char *end = map + pg, *p_path, *p_arg;
  char **av;
  int status;
  pid_t pid;
  if (map == MAP_FAILED || munmap(end, pg) < 0)
    return perror("mmap"), 1;
  p_arg = end - strlen("noop") - 1;
  strcpy(p_arg, "noop");
  p_path = p_arg - strlen(path) - 1;
  strcpy(p_path, path);
  av = (char **)((uintptr_t)(p_path - 3 * sizeof(char *)) & ~(uintptr_t)7);
  av[0] = p_path, av[1] = p_arg, av[2] = NULL;
  /* the strings end at the last byte of the page; the pointer array sits just below them */
  if ((pid = vfork()) == 0) {
    execve(p_path, av, NULL);
    _exit(127);
  }
  waitpid(pid, &status, 0);
  printf("edge exec status %d\n", status);
  av[1] = (char *)8; /* never mapped: the kernel says EFAULT, the monitor logs null */
  execve(p_path, av, NULL);
  printf("bad pointer errno %d\n", errno);
  return 0;
}

int main(int argc, char **argv)
{
  if (argc >= 2 && strcmp(argv[1], "noop") == 0)
    return 0;
  if (argc == 3 && strcmp(argv[1], "alloc") == 0)
    return alloc(atol(argv[2]));
  if (argc >= 4 && strcmp(argv[1], "flood") == 0)
    return flood(atol(argv[2]), argv + 3);
  if (argc >= 3 && strcmp(argv[1], "exec") == 0)
    return do_exec(argv + 2);
  if (argc == 3 && strcmp(argv[1], "edge") == 0)
    return edge(argv[2]);
  if (argc == 4 && strcmp(argv[1], "agent") == 0)
    return agent(argv[2], argv[3]);
  fprintf(stderr,
          "usage: %s alloc MIB | flood N PATH [ARGS] | exec PATH [ARGS] | noop | edge PATH | agent "
          "SOCK OUT\n",
          argv[0]);
  return 2;
}
