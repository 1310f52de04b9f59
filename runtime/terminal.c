/* Terminals: the container's pty, fd passing over unix sockets, and the foreground proxy. */
#include <config.h>
#include "terminal.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <termios.h>
#include <unistd.h>

#include "utils.h"

int ar_pty_open(int *ret_master, int *ret_slave, char *slave_path, size_t len, ar_err *err)
{
  cleanup_close int master = -1, slave = -1;
  unsigned int n;
  int unlock = 0;

  /* The devpts instance mounted in the container (newinstance), not the host's. */
  master = open("/dev/pts/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (master < 0 && (errno == ENOENT || errno == EACCES))
    master = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (master < 0)
    return ar_error(err, errno, "open /dev/pts/ptmx");
  if (ioctl(master, TIOCSPTLCK, &unlock) < 0)
    return ar_error(err, errno, "unlockpt");
  if (ioctl(master, TIOCGPTN, &n) < 0)
    return ar_error(err, errno, "get the pty number");
  if ((size_t)snprintf(slave_path, len, "/dev/pts/%u", n) >= len)
    return ar_error(err, ENAMETOOLONG, "pty slave path");
  /* TIOCGPTPEER opens the peer of this very master, whatever sits at the path. */
  slave = ioctl(master, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (slave < 0 && (errno == EINVAL || errno == ENOTTY))
    slave = open(slave_path, O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (slave < 0)
    return ar_error(err, errno, "open the pty slave %s", slave_path);
  *ret_master = ar_steal_fd(&master);
  *ret_slave = ar_steal_fd(&slave);
  return 0;
}

int ar_pty_become_stdio(int slave, uint32_t rows, uint32_t cols, bool has_size, ar_err *err)
{
  if (setsid() < 0 && errno != EPERM) /* EPERM: already a session leader */
    return ar_error(err, errno, "setsid");
  if (ioctl(slave, TIOCSCTTY, 0) < 0)
    return ar_error(err, errno, "make the pty the controlling terminal");
  if (has_size) {
    struct winsize ws = {.ws_row = (unsigned short)rows, .ws_col = (unsigned short)cols};
    if (ioctl(slave, TIOCSWINSZ, &ws) < 0)
      return ar_error(err, errno, "set the terminal size");
  }
  for (int fd = 0; fd < 3; fd++)
    if (fd != slave && dup2(slave, fd) < 0)
      return ar_error(err, errno, "dup the pty onto fd %d", fd);
  return 0;
}

int ar_stdio_chown(uint32_t uid, ar_err *err)
{
  struct stat st;

  for (int fd = 0; fd < 3; fd++) {
    if (fstat(fd, &st) < 0) {
      if (errno == EBADF)
        continue;
      return ar_error(err, errno, "stat fd %d", fd);
    }
    if (st.st_uid == uid || (S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3)))
      continue;
    /* EINVAL: uid unmapped; EPERM: the owner is not ours to change; EROFS: a ro /dev */
    if (fchown(fd, uid, (gid_t)-1) < 0 && errno != EINVAL && errno != EPERM && errno != EROFS)
      return ar_error(err, errno, "chown fd %d to %u", fd, uid);
  }
  return 0;
}

int ar_send_fd(int sock, int fd, const void *data, size_t len, ar_err *err)
{
  char dummy = 0;
  struct iovec iov = {.iov_base = len ? (void *)data : &dummy, .iov_len = len ? len : 1};
  union {
    char buf[CMSG_SPACE(sizeof(int))];
    struct cmsghdr align;
  } u = {0};
  struct msghdr msg = {
      .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof(u.buf)};
  struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
  ssize_t r;

  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  memcpy(CMSG_DATA(c), &fd, sizeof(int));
  do
    r = sendmsg(sock, &msg, MSG_NOSIGNAL);
  while (r < 0 && errno == EINTR);
  if (r < 0)
    return ar_error(err, errno, "send a file descriptor");
  return len ? (int)r : 0;
}

/* Take the first fd of the message and close any other the peer sent along. */
static int take_fds(struct msghdr *msg)
{
  int ret = -1;

  for (struct cmsghdr *c = CMSG_FIRSTHDR(msg); c; c = CMSG_NXTHDR(msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
      continue;
    size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t i = 0; i < n; i++) {
      int fd;
      memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
      if (ret < 0)
        ret = fd;
      else
        close(fd);
    }
  }
  return ret;
}

/* data (when given) receives the bytes sent along, NUL-terminated if there is room. */
int ar_recv_fd(int sock, int *ret_fd, void *data, size_t len, ar_err *err)
{
  char dummy;
  struct iovec iov = {.iov_base = data && len ? data : &dummy, .iov_len = data && len ? len : 1};
  union {
    char buf[CMSG_SPACE(sizeof(int) * 8)];
    struct cmsghdr align;
  } u;
  struct msghdr msg = {
      .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof(u.buf)};
  ssize_t r;
  int fd;

  do
    r = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
  while (r < 0 && errno == EINTR);
  if (r < 0)
    return ar_error(err, errno, "receive a file descriptor");
  fd = take_fds(&msg);
  if (msg.msg_flags & MSG_CTRUNC) {
    close_and_reset(fd);
    return ar_error(err, EMSGSIZE, "receive a file descriptor: truncated");
  }
  if (fd < 0)
    return ar_error(err, r == 0 ? EPIPE : EBADMSG, "receive a file descriptor: %s",
                    r == 0 ? "the peer closed the socket" : "none in the message");
  if (data && (size_t)r < len)
    ((char *)data)[r] = '\0';
  *ret_fd = fd;
  return 0;
}

/* A socket path longer than sun_path is reached through its directory's fd. */
static int connect_path(int sock, const char *path, ar_err *err)
{
  struct sockaddr_un addr = {.sun_family = AF_UNIX};
  cleanup_close int dir = -1;
  int r;

  if (strlen(path) >= sizeof(addr.sun_path)) {
    cleanup_free char *d = xstrdup(path);
    char *slash = strrchr(d, '/');
    if (slash == NULL)
      return ar_error(err, ENAMETOOLONG, "console socket '%s'", path);
    *slash = '\0';
    dir = open(*d ? d : "/", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0)
      return ar_error(err, errno, "console socket '%s'", path);
    if ((size_t)snprintf(addr.sun_path, sizeof(addr.sun_path), "/proc/self/fd/%d/%s", dir,
                         slash + 1) >= sizeof(addr.sun_path))
      return ar_error(err, ENAMETOOLONG, "console socket '%s'", path);
  } else {
    memcpy(addr.sun_path, path, strlen(path) + 1);
  }
  do
    r = connect(sock, (struct sockaddr *)&addr, sizeof(addr));
  while (r < 0 && errno == EINTR);
  if (r < 0)
    return ar_error(err, errno, "connect to the console socket '%s'", path);
  return 0;
}

int ar_console_socket_send(const char *path, int master, ar_err *err)
{
  static const char name[] = "/dev/ptmx"; /* what runc sends along: the master's file name */
  cleanup_close int sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

  if (sock < 0)
    return ar_error(err, errno, "socket");
  if (connect_path(sock, path, err) < 0)
    return -1;
  if (ar_send_fd(sock, master, name, sizeof(name) - 1, err) < 0)
    return ar_error_wrap(err, "console socket '%s'", path);
  return 0;
}

/* ---- the proxy for a foreground `run` with a terminal ---- */

static void copy_winsize(int master)
{
  struct winsize ws;

  for (int fd = 0; fd < 3; fd++)
    if (ioctl(fd, TIOCGWINSZ, &ws) == 0) {
      ioctl(master, TIOCSWINSZ, &ws);
      return;
    }
}

/* Our stdin ended: tell the program with the terminal's EOF character, when it reads lines. */
static void send_eof(int master)
{
  struct termios t;

  if (tcgetattr(master, &t) == 0 && (t.c_lflag & ICANON))
    (void)write(master, &t.c_cc[VEOF], 1);
}

struct proxy {
  int master, sigfd;
  char in[8192];
  size_t in_len, in_off;
  bool in_done, in_tty;
};

/* Returns 1 when the pty is gone (every slave closed), 0 to go on. */
static int pump_master(struct proxy *p, short revents, ar_err *err)
{
  char buf[16384];
  ssize_t n;

  if (revents & (POLLIN | POLLHUP | POLLERR)) {
    n = read(p->master, buf, sizeof(buf));
    if (n > 0 && ar_write_all(STDOUT_FILENO, buf, n) < 0)
      return ar_error(err, errno, "write to stdout");
    if (n == 0 || (n < 0 && errno == EIO))
      return 1;
    if (n < 0 && errno != EAGAIN && errno != EINTR)
      return ar_error(err, errno, "read the pty");
  }
  if ((revents & POLLOUT) && p->in_len > p->in_off) {
    n = write(p->master, p->in + p->in_off, p->in_len - p->in_off);
    if (n < 0 && errno != EAGAIN && errno != EINTR)
      return errno == EIO ? 1 : ar_error(err, errno, "write to the pty");
    if (n > 0 && (p->in_off += n) == p->in_len)
      p->in_len = p->in_off = 0;
  }
  return 0;
}

static void pump_stdin(struct proxy *p)
{
  ssize_t n = read(STDIN_FILENO, p->in, sizeof(p->in));

  if (n > 0) {
    p->in_len = n;
    p->in_off = 0;
  } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
    p->in_done = true;
    if (!p->in_tty)
      send_eof(p->master);
  }
}

static int proxy_loop(struct proxy *p, ar_err *err)
{
  for (;;) {
    struct pollfd fds[3] = {
        {.fd = p->in_done || p->in_len ? -1 : STDIN_FILENO, .events = POLLIN},
        {.fd = p->master, .events = POLLIN | (p->in_len ? POLLOUT : 0)},
        {.fd = p->sigfd, .events = POLLIN},
    };
    int r;

    if (poll(fds, 3, -1) < 0) {
      if (errno == EINTR)
        continue;
      return ar_error(err, errno, "poll");
    }
    if (fds[2].revents & POLLIN) {
      struct signalfd_siginfo si;
      while (read(p->sigfd, &si, sizeof(si)) == sizeof(si))
        ;
      copy_winsize(p->master);
    }
    r = pump_master(p, fds[1].revents, err);
    if (r != 0)
      return r < 0 ? -1 : 0;
    if (fds[0].revents & (POLLIN | POLLHUP | POLLERR))
      pump_stdin(p);
    else if (fds[0].revents & POLLNVAL)
      p->in_done = true;
  }
}

int ar_pty_proxy(int master, ar_err *err)
{
  struct proxy p = {.master = master, .sigfd = -1};
  struct termios saved, raw;
  sigset_t mask, old;
  int flags = fcntl(master, F_GETFL), r;

  p.in_tty = isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &saved) == 0;
  if (p.in_tty) { /* keys go to the container's terminal as typed: ^C is its business */
    raw = saved;
    cfmakeraw(&raw);
    tcsetattr(STDIN_FILENO, TCSANOW, &raw);
  }
  sigemptyset(&mask);
  sigaddset(&mask, SIGWINCH);
  sigprocmask(SIG_BLOCK, &mask, &old);
  p.sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
  if (p.sigfd < 0) {
    r = ar_error(err, errno, "signalfd");
  } else {
    copy_winsize(master);
    /* Never block on the master: the program may be blocked writing while we write to it. */
    fcntl(master, F_SETFL, flags | O_NONBLOCK);
    r = proxy_loop(&p, err);
    fcntl(master, F_SETFL, flags);
    close(p.sigfd);
  }
  sigprocmask(SIG_SETMASK, &old, NULL);
  if (p.in_tty)
    tcsetattr(STDIN_FILENO, TCSADRAIN, &saved);
  return r;
}
