/* recvtty: the receiving end of --console-socket, for the tests (after runc's contrib/cmd/recvtty).
 *
 *   recvtty [--mode single|null] [--pid-file FILE] [--no-stdin] SOCKET
 *
 * single: accept one connection, take the pty master it carries, and copy master -> stdout and
 *         stdin -> master (unless --no-stdin) until the pty closes.
 * null:   accept any number of connections and drain every master received into nothing. */
#include <config.h>

#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "runtime/terminal.h"
#include "runtime/utils.h"

static int fail(ar_err *err)
{
  fprintf(stderr, "[recvtty] fatal error: %s\n", (*err)->msg);
  ar_error_free(err);
  return 1;
}

static int listen_on(const char *path, ar_err *err)
{
  struct sockaddr_un addr = {.sun_family = AF_UNIX};
  int fd;

  if (strlen(path) >= sizeof(addr.sun_path))
    return ar_error(err, ENAMETOOLONG, "socket path '%s'", path);
  memcpy(addr.sun_path, path, strlen(path) + 1);
  fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return ar_error(err, errno, "socket");
  if (bind(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0 || listen(fd, 16) < 0) {
    int e = errno;
    close(fd);
    return ar_error(err, e, "listen on '%s'", path);
  }
  return fd;
}

/* Accept one connection and take the master it carries. */
static int accept_master(int lfd, ar_err *err)
{
  char name[4096];
  int conn, master = -1;

  do
    conn = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
  while (conn < 0 && errno == EINTR);
  if (conn < 0)
    return ar_error(err, errno, "accept");
  if (ar_recv_fd(conn, &master, name, sizeof(name), err) < 0)
    master = -1;
  close(conn);
  return master;
}

static int single(int lfd, bool no_stdin, ar_err *err)
{
  int master = accept_master(lfd, err);
  bool in_open = !no_stdin;
  char buf[16384];

  close(lfd); /* one terminal only, as runc's */
  if (master < 0)
    return -1;
  for (;;) {
    struct pollfd p[2] = {{.fd = master, .events = POLLIN},
                          {.fd = in_open ? STDIN_FILENO : -1, .events = POLLIN}};
    ssize_t n;

    if (poll(p, 2, -1) < 0) {
      if (errno == EINTR)
        continue;
      return ar_error(err, errno, "poll");
    }
    if (p[0].revents) {
      n = read(master, buf, sizeof(buf));
      if (n == 0 || (n < 0 && errno == EIO))
        break; /* every slave closed */
      if (n < 0 && errno != EINTR)
        return ar_error(err, errno, "read the pty");
      if (n > 0 && ar_write_all(STDOUT_FILENO, buf, n) < 0)
        return ar_error(err, errno, "write stdout");
    }
    if (p[1].revents) {
      n = read(STDIN_FILENO, buf, sizeof(buf));
      if (n <= 0)
        in_open = false;
      else if (ar_write_all(master, buf, n) < 0)
        in_open = false;
    }
  }
  close(master);
  return 0;
}

static int null_mode(int lfd, ar_err *err)
{
  struct pollfd *p = xcalloc(1, sizeof(*p));
  size_t n = 1;
  char buf[16384];

  p[0] = (struct pollfd){.fd = lfd, .events = POLLIN};
  for (;;) {
    if (poll(p, n, -1) < 0) {
      if (errno == EINTR)
        continue;
      return ar_error(err, errno, "poll");
    }
    for (size_t i = n; i-- > 1;) {
      if (!p[i].revents || read(p[i].fd, buf, sizeof(buf)) > 0)
        continue;
      close(p[i].fd);
      p[i] = p[--n];
    }
    if (p[0].revents & POLLIN) {
      cleanup_err ar_err e = NULL; /* one bad connection does not stop the others */
      int master = accept_master(lfd, &e);
      if (master >= 0) {
        p = xrealloc(p, (n + 1) * sizeof(*p));
        p[n++] = (struct pollfd){.fd = master, .events = POLLIN};
      }
    }
  }
}

static void usage(FILE *f)
{
  fprintf(f, "usage: recvtty [--mode single|null] [--pid-file FILE] [--no-stdin] SOCKET\n");
}

int main(int argc, char **argv)
{
  static const struct option longopts[] = {
      {"mode", required_argument, NULL, 'm'},
      {"pid-file", required_argument, NULL, 'p'},
      {"no-stdin", no_argument, NULL, 'n'},
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0},
  };
  const char *mode = "single", *pid_file = NULL;
  bool no_stdin = false;
  ar_err err = NULL;
  int c, lfd;

  while ((c = getopt_long(argc, argv, "m:h", longopts, NULL)) != -1) {
    switch (c) {
    case 'm':
      mode = optarg;
      break;
    case 'p':
      pid_file = optarg;
      break;
    case 'n':
      no_stdin = true;
      break;
    case 'h':
      usage(stdout);
      return 0;
    default:
      usage(stderr);
      return 2;
    }
  }
  if (optind != argc - 1) {
    fprintf(stderr, "[recvtty] fatal error: need to specify a single socket path\n");
    return 1;
  }
  if (strcmp(mode, "single") != 0 && strcmp(mode, "null") != 0) {
    fprintf(stderr, "[recvtty] fatal error: need to select a valid mode: %s\n", mode);
    return 1;
  }
  lfd = listen_on(argv[optind], &err);
  if (lfd < 0)
    return fail(&err);
  if (pid_file) { /* written once the socket listens, so that it also says "ready" */
    char pid[32];
    int len = snprintf(pid, sizeof(pid), "%d\n", getpid());
    if (ar_write_file(pid_file, pid, len, 0644, &err) < 0)
      return fail(&err);
  }
  if ((strcmp(mode, "single") == 0 ? single(lfd, no_stdin, &err) : null_mode(lfd, &err)) < 0)
    return fail(&err);
  return 0;
}
