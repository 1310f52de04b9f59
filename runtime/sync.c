#include <config.h>
#include "sync.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include "utils.h"

struct wire {
  uint32_t type;
  int32_t err_no;
  char data[32768];
};

int ar_sync_send(int sock, enum ar_sync_type type, int err_no, const char *data, int fd,
                 ar_err *err)
{
  struct wire w = {.type = type, .err_no = err_no};
  struct iovec iov;
  struct msghdr mh = {0};
  union {
    char buf[CMSG_SPACE(sizeof(int))];
    struct cmsghdr align;
  } ctl;
  size_t len = 0;

  if (data) {
    len = strnlen(data, sizeof(w.data) - 1);
    memcpy(w.data, data, len);
  }
  iov.iov_base = &w;
  iov.iov_len = offsetof(struct wire, data) + len + 1;
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  if (fd >= 0) {
    struct cmsghdr *c;
    memset(&ctl, 0, sizeof(ctl));
    mh.msg_control = ctl.buf;
    mh.msg_controllen = sizeof(ctl.buf);
    c = CMSG_FIRSTHDR(&mh);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(c), &fd, sizeof(int));
  }
  while (sendmsg(sock, &mh, MSG_NOSIGNAL) < 0) {
    if (errno != EINTR)
      return ar_error(err, errno, "sync: send");
  }
  return 0;
}

int ar_sync_recv(int sock, struct ar_sync_msg *msg, ar_err *err)
{
  struct wire w;
  struct iovec iov = {.iov_base = &w, .iov_len = sizeof(w)};
  struct msghdr mh = {0};
  union {
    char buf[CMSG_SPACE(sizeof(int))];
    struct cmsghdr align;
  } ctl;
  ssize_t r;

  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  mh.msg_control = ctl.buf;
  mh.msg_controllen = sizeof(ctl.buf);
  do
    r = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
  while (r < 0 && errno == EINTR);
  if (r < 0)
    return ar_error(err, errno, "sync: receive");
  if (r == 0)
    return ar_error(err, 0, "sync: the other side exited");
  if ((size_t)r < offsetof(struct wire, data))
    return ar_error(err, 0, "sync: short message");
  msg->type = w.type;
  msg->err_no = w.err_no;
  msg->fd = -1;
  r -= offsetof(struct wire, data);
  memcpy(msg->data, w.data, r);
  msg->data[r < (ssize_t)sizeof(msg->data) ? r : (ssize_t)sizeof(msg->data) - 1] = '\0';
  for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
      memcpy(&msg->fd, CMSG_DATA(c), sizeof(int));
  return 0;
}

int ar_sync_expect(int sock, enum ar_sync_type type, struct ar_sync_msg *msg, ar_err *err)
{
  if (ar_sync_recv(sock, msg, err) < 0)
    return -1;
  if (msg->type == AR_SYNC_ERROR) {
    ar_error_set_raw(err, msg->err_no, msg->data);
    return -1;
  }
  if (msg->type != (uint32_t)type) {
    if (msg->fd >= 0)
      close(msg->fd);
    return ar_error(err, 0, "sync: expected message %d, got %u", type, msg->type);
  }
  return 0;
}

void ar_sync_send_error(int sock, ar_err e)
{
  ar_err ignored = NULL;
  ar_sync_send(sock, AR_SYNC_ERROR, e ? e->status : 0, e ? e->msg : "unknown error", -1, &ignored);
  ar_error_free(&ignored);
}
