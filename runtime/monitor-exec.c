/* The exec audit: read what a process is about to execve from its memory, log it, continue.
 * Nothing read here is trusted: every read is bounded, and the notification id is checked to
 * still be valid before the figures are believed. */
#include <config.h>
#include "monitor.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>

#include "utils.h"

#define MAX_ARGS 64
#define MAX_STR 4096

static struct seccomp_notif_sizes sizes;

int ar_mon_notify_init(void)
{
  return syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sizes) < 0 ? -1 : 0;
}

/* A NUL-terminated string at addr, at most MAX_STR bytes; *trunc when it was longer. */
static ssize_t read_str(int mem, uint64_t addr, char *buf, bool *trunc)
{
  ssize_t n = pread(mem, buf, MAX_STR, (off_t)addr);
  char *nul;
  if (n <= 0)
    return -1;
  nul = memchr(buf, '\0', n);
  if (nul)
    return nul - buf;
  *trunc = true;
  return n;
}

struct exec_info {
  char path[MAX_STR];
  ssize_t path_len;
  char *argv[MAX_ARGS];
  ssize_t argv_len[MAX_ARGS];
  int argc;
  bool truncated;
};

static void read_exec(pid_t pid, uint64_t path_addr, uint64_t argv_addr, struct exec_info *x)
{
  char mem_path[64];
  uint64_t ptrs[MAX_ARGS + 1];
  ssize_t n;
  int mem;
  snprintf(mem_path, sizeof(mem_path), "/proc/%d/mem", pid);
  mem = open(mem_path, O_RDONLY | O_CLOEXEC);
  x->path_len = -1;
  if (mem < 0)
    return;
  x->path_len = read_str(mem, path_addr, x->path, &x->truncated);
  n = argv_addr ? pread(mem, ptrs, sizeof(ptrs), (off_t)argv_addr) : 0;
  for (int i = 0; n > 0 && i < (int)(n / sizeof(uint64_t)); i++) {
    if (ptrs[i] == 0)
      break;
    if (i == MAX_ARGS) {
      x->truncated = true;
      break;
    }
    x->argv[i] = xmalloc(MAX_STR);
    x->argv_len[i] = read_str(mem, ptrs[i], x->argv[i], &x->truncated);
    x->argc = i + 1;
  }
  close(mem);
}

/* ppid and the real uid from /proc/PID/status. */
static void read_status(pid_t pid, int64_t *ppid, int64_t *uid)
{
  char path[64], buf[2048], *p;
  int fd;
  ssize_t n;
  *ppid = *uid = -1;
  snprintf(path, sizeof(path), "/proc/%d/status", pid);
  if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
    return;
  n = read(fd, buf, sizeof(buf) - 1);
  close(fd);
  if (n <= 0)
    return;
  buf[n] = '\0';
  if ((p = strstr(buf, "\nPPid:")) != NULL)
    *ppid = strtoll(p + 6, NULL, 10);
  if ((p = strstr(buf, "\nUid:")) != NULL)
    *uid = strtoll(p + 5, NULL, 10);
}

static void log_exec(struct ar_audit *audit, pid_t pid, struct exec_info *x)
{
  struct ar_jw *w = ar_audit_begin("exec", audit->id);
  char cwd_path[64], cwd[MAX_STR];
  ssize_t cl;
  int64_t ppid, uid;
  read_status(pid, &ppid, &uid);
  snprintf(cwd_path, sizeof(cwd_path), "/proc/%d/cwd", pid);
  cl = readlink(cwd_path, cwd, sizeof(cwd));
  ar_jw_kint(w, "pid", pid);
  ar_jw_kint(w, "ppid", ppid);
  ar_jw_kint(w, "uid", uid);
  ar_jw_key(w, "path");
  if (x->path_len >= 0)
    ar_jw_strn(w, x->path, x->path_len);
  else
    ar_jw_null(w);
  ar_jw_key(w, "argv");
  ar_jw_array_open(w);
  for (int i = 0; i < x->argc; i++) {
    if (x->argv_len[i] >= 0)
      ar_jw_strn(w, x->argv[i], x->argv_len[i]);
    else
      ar_jw_null(w);
  }
  ar_jw_array_close(w);
  ar_jw_key(w, "cwd");
  if (cl >= 0)
    ar_jw_strn(w, cwd, cl);
  else
    ar_jw_null(w);
  ar_jw_kbool(w, "truncated", x->truncated);
  ar_audit_end(audit, w, false);
}

int ar_mon_handle_notify(int fd, struct ar_audit *audit)
{
  struct seccomp_notif *req = xcalloc(1, sizeof(*req) > sizes.seccomp_notif ? sizeof(*req) : sizes.seccomp_notif);
  struct seccomp_notif_resp *resp =
      xcalloc(1, sizeof(*resp) > sizes.seccomp_notif_resp ? sizeof(*resp) : sizes.seccomp_notif_resp);
  struct exec_info *x = xcalloc(1, sizeof(*x));
  bool is_execveat;
  int ret = -1;

  if (ioctl(fd, SECCOMP_IOCTL_NOTIF_RECV, req) < 0)
    goto out; /* ENOENT: the process went away before we read it */
  is_execveat = req->data.nr == __NR_execveat;
  read_exec(req->pid, req->data.args[is_execveat ? 1 : 0], req->data.args[is_execveat ? 2 : 1], x);
  /* Only believe what we read if the process is still the one that asked. */
  if (ioctl(fd, SECCOMP_IOCTL_NOTIF_ID_VALID, &req->id) == 0)
    log_exec(audit, req->pid, x);
  resp->id = req->id;
  resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
  ioctl(fd, SECCOMP_IOCTL_NOTIF_SEND, resp);
  ret = 0;
out:
  for (int i = 0; i < x->argc; i++)
    free(x->argv[i]);
  free(x);
  free(req);
  free(resp);
  return ret;
}
