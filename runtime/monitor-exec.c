/* The exec audit: read what a process is about to execve from its memory, log it, continue.
 * Nothing read here is trusted: every read is bounded, and the notification id is checked to
 * still be valid before the line is written.  The buffers are static and the line has a byte
 * budget, so a hostile argv cannot grow the monitor past its 1 MiB. */
#include <config.h>
#include "monitor.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/seccomp.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#include "utils.h"

#define MAX_ARGS 64
#define MAX_STR 4096
/* Escaped bytes of path + argv + cwd in one line: 64 x 4 KiB of quotes or control bytes would
 * escape to 1.5 MiB, so the line is cut here and marked truncated. */
#define LINE_BUDGET (32 * 1024)
#define PAGE 4096

#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (1UL << 0)
#endif

static struct seccomp_notif *req;
static struct seccomp_notif_resp *resp;
static size_t req_size, resp_size;
static char str[MAX_STR], cwd[MAX_STR];

int ar_mon_notify_init(void)
{
  struct seccomp_notif_sizes sizes = {0};
  int ret = syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sizes) < 0 ? -1 : 0;
  /* The kernel's structs may be larger than our headers': it wants all of them zeroed. */
  req_size = sizeof(*req) > sizes.seccomp_notif ? sizeof(*req) : sizes.seccomp_notif;
  resp_size = sizeof(*resp) > sizes.seccomp_notif_resp ? sizeof(*resp) : sizes.seccomp_notif_resp;
  req = xcalloc(1, req_size);
  resp = xcalloc(1, resp_size);
  return ret;
}

void ar_mon_notify_listener(int fd)
{
  /* Linux >= 6.6: the task that waits in execve and the monitor wake each other on the same
   * CPU; an older kernel refuses the flag (EINVAL), which costs only that. */
  ioctl(fd, SECCOMP_IOCTL_NOTIF_SET_FLAGS, SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP);
}

/* Up to len bytes at addr in pid's memory, a page at a time so that a string that ends just
 * before an unmapped page is still read; a string stops at its NUL.  Returns the bytes read,
 * or -1. */
static ssize_t read_mem(pid_t pid, uint64_t addr, void *buf, size_t len, bool is_str)
{
  size_t done = 0;
  while (done < len) {
    size_t chunk = PAGE - ((addr + done) % PAGE);
    struct iovec local = {(char *)buf + done, chunk < len - done ? chunk : len - done};
    struct iovec remote = {(void *)(uintptr_t)(addr + done), local.iov_len};
    ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
    if (n <= 0)
      break;
    done += n;
    if (is_str && memchr((char *)buf + done - n, '\0', n))
      break;
  }
  return done ? (ssize_t)done : -1;
}

/* A NUL-terminated string at addr, into str; *trunc when it was longer than MAX_STR. */
static ssize_t read_str(pid_t pid, uint64_t addr, bool *trunc)
{
  ssize_t n = read_mem(pid, addr, str, MAX_STR, true);
  char *nul;
  if (n <= 0)
    return -1;
  if ((nul = memchr(str, '\0', n)) != NULL)
    return nul - str;
  *trunc = true;
  return n;
}

/* An upper bound of what s takes once escaped by the JSON writer. */
static size_t escaped_len(const char *s, size_t n)
{
  size_t len = 2;
  for (size_t i = 0; i < n; i++) {
    unsigned char c = s[i];
    len += c < 0x20 ? 6 : c == '"' || c == '\\' ? 2 : c >= 0x80 ? 3 : 1;
  }
  return len;
}

/* The longest prefix of s whose escaped form fits in budget. */
static size_t clip(const char *s, size_t n, size_t budget)
{
  size_t len = 2, i = 0;
  for (; i < n; i++) {
    unsigned char c = s[i];
    len += c < 0x20 ? 6 : c == '"' || c == '\\' ? 2 : c >= 0x80 ? 3 : 1;
    if (len > budget)
      break;
  }
  return i;
}

/* A string field within *budget; null when it could not be read. */
static void put_str(struct ar_jw *w, const char *s, ssize_t n, size_t *budget, bool *trunc)
{
  size_t len, cut;
  if (n < 0) {
    ar_jw_null(w);
    return;
  }
  len = escaped_len(s, n);
  cut = len <= *budget ? (size_t)n : clip(s, n, *budget);
  if (cut < (size_t)n)
    *trunc = true;
  ar_jw_strn(w, s, cut);
  *budget -= len <= *budget ? len : *budget;
}

/* Which execve this is: execveat takes a dirfd first; 32-bit callers (i386, x32) pass
 * 32-bit pointers in argv. */
struct exec_abi {
  bool at;
  size_t ptr_size;
};

static struct exec_abi exec_abi(const struct seccomp_data *d)
{
  struct exec_abi abi = {.at = d->nr == __NR_execveat, .ptr_size = sizeof(void *)};
#ifdef __x86_64__
  if (d->arch == AUDIT_ARCH_I386)
    abi = (struct exec_abi){.at = d->nr == 358, .ptr_size = 4};
  else if (d->nr & 0x40000000) /* __X32_SYSCALL_BIT */
    abi = (struct exec_abi){.at = d->nr == (0x40000000 | 545), .ptr_size = 4};
#endif
  return abi;
}

/* argv, streamed into the line one string at a time through the one buffer. */
static void put_argv(struct ar_jw *w, pid_t pid, uint64_t argv_addr, size_t ptr_size,
                     size_t *budget, bool *trunc)
{
  union {
    uint64_t p64[MAX_ARGS + 1];
    uint32_t p32[MAX_ARGS + 1];
  } ptrs;
  ssize_t n = argv_addr ? read_mem(pid, argv_addr, &ptrs, (MAX_ARGS + 1) * ptr_size, false) : 0;
  int count = n > 0 ? (int)(n / ptr_size) : 0;
  ar_jw_array_open(w);
  for (int i = 0; i < count; i++) {
    uint64_t p = ptr_size == 4 ? ptrs.p32[i] : ptrs.p64[i];
    if (p == 0)
      break;
    if (i == MAX_ARGS || *budget <= 2) {
      *trunc = true;
      break;
    }
    put_str(w, str, read_str(pid, p, trunc), budget, trunc);
  }
  ar_jw_array_close(w);
}

/* ppid and the real uid from /proc/PID/status; the cwd from /proc/PID/cwd, into cwd. */
static ssize_t read_proc(pid_t pid, int64_t *ppid, int64_t *uid)
{
  char path[64], buf[2048], *p;
  ssize_t n;
  int dir, fd;
  *ppid = *uid = -1;
  snprintf(path, sizeof(path), "/proc/%d", pid);
  if ((dir = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
    return -1;
  if ((fd = openat(dir, "status", O_RDONLY | O_CLOEXEC)) >= 0) {
    n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    buf[n > 0 ? n : 0] = '\0';
    if ((p = strstr(buf, "\nPPid:")) != NULL)
      *ppid = strtoll(p + 6, NULL, 10);
    if ((p = strstr(buf, "\nUid:")) != NULL)
      *uid = strtoll(p + 5, NULL, 10);
  }
  n = readlinkat(dir, "cwd", cwd, sizeof(cwd));
  close(dir);
  return n < (ssize_t)sizeof(cwd) ? n : -1;
}

/* The exec line, built while the process still waits; NULL if its memory could not be read. */
static struct ar_jw *build_line(const char *id, const struct seccomp_notif *r)
{
  struct exec_abi abi = exec_abi(&r->data);
  struct ar_jw *w = ar_audit_begin("exec", id);
  int64_t ppid, uid;
  ssize_t cwd_len = read_proc(r->pid, &ppid, &uid);
  /* the cwd's share is set aside first: it is written last */
  size_t cwd_cost = cwd_len < 0 ? 4 : escaped_len(cwd, cwd_len);
  size_t budget = LINE_BUDGET - (cwd_cost < LINE_BUDGET / 8 ? cwd_cost : LINE_BUDGET / 8);
  size_t cwd_budget = LINE_BUDGET - budget;
  bool trunc = false;
  ar_jw_kint(w, "pid", r->pid);
  ar_jw_kint(w, "ppid", ppid);
  ar_jw_kint(w, "uid", uid);
  if (abi.at)
    ar_jw_kint(w, "dirfd", (int)r->data.args[0]);
  ar_jw_key(w, "path");
  put_str(w, str, read_str(r->pid, r->data.args[abi.at ? 1 : 0], &trunc), &budget, &trunc);
  ar_jw_key(w, "argv");
  put_argv(w, r->pid, r->data.args[abi.at ? 2 : 1], abi.ptr_size, &budget, &trunc);
  ar_jw_key(w, "cwd");
  put_str(w, cwd, cwd_len, &cwd_budget, &trunc);
  ar_jw_kbool(w, "truncated", trunc);
  return w;
}

int ar_mon_handle_notify(int fd, struct ar_audit *audit)
{
  struct ar_jw *w;
  bool valid;
  memset(req, 0, req_size);
  if (ioctl(fd, SECCOMP_IOCTL_NOTIF_RECV, req) < 0)
    return -1; /* ENOENT: the process went away before we read it */
  w = build_line(audit->id, req);
  /* Only believe what we read if the process is still the one that asked. */
  valid = ioctl(fd, SECCOMP_IOCTL_NOTIF_ID_VALID, &req->id) == 0;
  /* Everything is read: let the execve go on, and write the line while it runs. */
  memset(resp, 0, resp_size);
  resp->id = req->id;
  resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
  ioctl(fd, SECCOMP_IOCTL_NOTIF_SEND, resp);
  if (valid)
    ar_audit_end(audit, w, false);
  else
    ar_jw_free(w);
  return 0;
}
