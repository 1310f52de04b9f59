/* Device access rules (linux.resources.devices).
 *
 * Semantics, as runc: start from "deny everything", apply the rules in order, the last rule that
 * matches a (type, major, minor, access bit) decides.  The caller supplies the complete list
 * (runc's specconv prepends nothing and appends its default allowed devices; agentrun's policy
 * layer does the same), and an empty list leaves the cgroup's device access as inherited.
 *
 * v1: write "a" to devices.deny, then each rule to devices.allow / devices.deny; the kernel's
 *     exception lists give the same last-match result.
 * v2: an eBPF program of type BPF_PROG_TYPE_CGROUP_DEVICE, attached with BPF_F_ALLOW_MULTI.  The
 *     programs of the ancestors still run, so nesting can only restrict.  On update the new
 *     program is attached before the old ones are detached, so there is no window without a
 *     filter (runc does it in this order too). */
#include <config.h>
#include "cgroup-internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/syscall.h>
#include <linux/bpf.h>

#include "log.h"
#include "utils.h"

#define ACC_ALL (BPF_DEVCG_ACC_MKNOD | BPF_DEVCG_ACC_READ | BPF_DEVCG_ACC_WRITE)

static int access_mask(const struct ar_device_rule *r, int *ret, ar_err *err)
{
  int m = 0;
  if (r->access == NULL) {
    *ret = ACC_ALL;
    return 0;
  }
  for (const char *p = r->access; *p; p++) {
    switch (*p) {
    case 'r':
      m |= BPF_DEVCG_ACC_READ;
      break;
    case 'w':
      m |= BPF_DEVCG_ACC_WRITE;
      break;
    case 'm':
      m |= BPF_DEVCG_ACC_MKNOD;
      break;
    default:
      return ar_error(err, 0, "linux.resources.devices: invalid access '%s'", r->access);
    }
  }
  *ret = m;
  return 0;
}

static bool wild(bool has, int64_t v)
{
  return !has || v < 0;
}

static int check_rule(const struct ar_device_rule *r, ar_err *err)
{
  if (r->type != 'a' && r->type != 'c' && r->type != 'b')
    return ar_error(err, 0, "linux.resources.devices: invalid type '%c'", r->type);
  if ((!wild(r->has_major, r->major) && r->major > INT32_MAX) ||
      (!wild(r->has_minor, r->minor) && r->minor > INT32_MAX))
    return ar_error(err, 0, "linux.resources.devices: device number out of range");
  return 0;
}

/* ---- v1 ---- */

static void fmt_num(char *buf, size_t len, bool has, int64_t v)
{
  if (wild(has, v))
    snprintf(buf, len, "*");
  else
    snprintf(buf, len, "%lld", (long long)v);
}

static int v1_write(const char *dir, bool allow, const char *rule, ar_err *err)
{
  return ar_cg_write(dir, allow ? "devices.allow" : "devices.deny", rule, err);
}

int ar_cg_devices_v1(const char *dir, const struct ar_device_rule *rules, size_t n, ar_err *err)
{
  if (v1_write(dir, false, "a", err) < 0)
    return -1;
  for (size_t i = 0; i < n; i++) {
    const struct ar_device_rule *r = &rules[i];
    char maj[24], min[24], acc[4] = "", buf[80];
    int m = 0;
    if (check_rule(r, err) < 0 || access_mask(r, &m, err) < 0)
      return -1;
    if (m == 0)
      continue;
    if (r->type == 'a' && wild(r->has_major, r->major) && wild(r->has_minor, r->minor) &&
        m == ACC_ALL) {
      /* "a" switches the default and clears the exceptions: exactly "everything". */
      if (v1_write(dir, r->allow, "a", err) < 0)
        return -1;
      continue;
    }
    fmt_num(maj, sizeof(maj), r->has_major, r->major);
    fmt_num(min, sizeof(min), r->has_minor, r->minor);
    snprintf(acc, sizeof(acc), "%s%s%s", m & BPF_DEVCG_ACC_READ ? "r" : "",
             m & BPF_DEVCG_ACC_WRITE ? "w" : "", m & BPF_DEVCG_ACC_MKNOD ? "m" : "");
    /* The kernel's 'a' ignores numbers and access: spell a narrower 'a' as c and b. */
    for (const char *t = r->type == 'a' ? "cb" : (r->type == 'c' ? "c" : "b"); *t; t++) {
      snprintf(buf, sizeof(buf), "%c %s:%s %s", *t, maj, min, acc);
      if (v1_write(dir, r->allow, buf, err) < 0)
        return -1;
    }
  }
  return 0;
}

/* ---- v2: the program ---- */

struct prog {
  struct bpf_insn *v;
  size_t n, cap;
};

static size_t emit(struct prog *p, uint8_t code, uint8_t dst, uint8_t src, int16_t off, int32_t imm)
{
  if (p->n == p->cap)
    p->v = xrealloc(p->v, (p->cap = p->cap ? p->cap * 2 : 64) * sizeof(*p->v));
  p->v[p->n] =
      (struct bpf_insn){.code = code, .dst_reg = dst, .src_reg = src, .off = off, .imm = imm};
  return p->n++;
}

#define ALU(op, dst, imm) emit(p, BPF_ALU64 | (op) | BPF_K, dst, 0, 0, imm)
#define ALU_REG(op, dst, src) emit(p, BPF_ALU64 | (op) | BPF_X, dst, src, 0, 0)
#define LDX_W(dst, src, off) emit(p, BPF_LDX | BPF_W | BPF_MEM, dst, src, off, 0)
#define JMP(op, dst, imm) emit(p, BPF_JMP | (op) | BPF_K, dst, 0, 0, imm)
#define JMP_REG(op, dst, src) emit(p, BPF_JMP | (op) | BPF_X, dst, src, 0, 0)

static void patch(struct prog *p, size_t at, size_t target)
{
  p->v[at].off = (int16_t)(target - at - 1);
}

/* Registers: r2 type, r3 requested access, r4 major, r5 minor, r6 bits decided so far,
 * r7 bits allowed so far.  Rules are visited last to first; a matching rule decides the
 * requested bits it covers that no later rule decided. */
static int emit_rule(struct prog *p, const struct ar_device_rule *r, size_t *exits, size_t *n_exits,
                     ar_err *err)
{
  size_t skip[3];
  int n_skip = 0, m = 0;

  if (check_rule(r, err) < 0 || access_mask(r, &m, err) < 0)
    return -1;
  if (m == 0)
    return 0;
  if (r->type != 'a')
    skip[n_skip++] =
        JMP(BPF_JNE, BPF_REG_2, r->type == 'c' ? BPF_DEVCG_DEV_CHAR : BPF_DEVCG_DEV_BLOCK);
  if (!wild(r->has_major, r->major))
    skip[n_skip++] = JMP(BPF_JNE, BPF_REG_4, (int32_t)r->major);
  if (!wild(r->has_minor, r->minor))
    skip[n_skip++] = JMP(BPF_JNE, BPF_REG_5, (int32_t)r->minor);
  ALU_REG(BPF_MOV, BPF_REG_1, BPF_REG_6);
  ALU(BPF_XOR, BPF_REG_1, -1);
  ALU_REG(BPF_AND, BPF_REG_1, BPF_REG_3);
  ALU(BPF_AND, BPF_REG_1, m);
  ALU_REG(BPF_OR, BPF_REG_6, BPF_REG_1);
  if (r->allow)
    ALU_REG(BPF_OR, BPF_REG_7, BPF_REG_1);
  exits[(*n_exits)++] = JMP_REG(BPF_JEQ, BPF_REG_6, BPF_REG_3); /* all decided */
  for (int i = 0; i < n_skip; i++)
    patch(p, skip[i], p->n);
  return 0;
}

int ar_cg_devices_bpf(const struct ar_device_rule *rules, size_t n, void **ret_insns,
                      size_t *ret_count, ar_err *err)
{
  struct prog pr = {NULL, 0, 0}, *p = &pr;
  cleanup_free size_t *exits = xcalloc(n + 1, sizeof(size_t));
  size_t n_exits = 0, final;

  if (n > 1000) /* keeps the program far below the verifier's limits and jumps in range */
    return ar_error(err, E2BIG, "linux.resources.devices: too many rules");
  LDX_W(BPF_REG_2, BPF_REG_1, offsetof(struct bpf_cgroup_dev_ctx, access_type));
  ALU_REG(BPF_MOV, BPF_REG_3, BPF_REG_2);
  ALU(BPF_AND, BPF_REG_2, 0xffff);
  ALU(BPF_RSH, BPF_REG_3, 16);
  LDX_W(BPF_REG_4, BPF_REG_1, offsetof(struct bpf_cgroup_dev_ctx, major));
  LDX_W(BPF_REG_5, BPF_REG_1, offsetof(struct bpf_cgroup_dev_ctx, minor));
  ALU(BPF_MOV, BPF_REG_6, 0);
  ALU(BPF_MOV, BPF_REG_7, 0);
  for (size_t i = n; i-- > 0;)
    if (emit_rule(p, &rules[i], exits, &n_exits, err) < 0) {
      free(pr.v);
      return -1;
    }
  /* Allowed only if every requested bit was allowed; undecided bits are denied. */
  final = ALU(BPF_MOV, BPF_REG_0, 0);
  JMP_REG(BPF_JNE, BPF_REG_7, BPF_REG_3);
  p->v[p->n - 1].off = 1;
  ALU(BPF_MOV, BPF_REG_0, 1);
  emit(p, BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
  for (size_t i = 0; i < n_exits; i++)
    patch(p, exits[i], final);
  *ret_insns = pr.v;
  *ret_count = pr.n;
  return 0;
}

/* ---- v2: load and attach ---- */

static int bpf(int cmd, union bpf_attr *a)
{
  return (int)syscall(__NR_bpf, cmd, a, sizeof(*a));
}

static int load(const struct bpf_insn *insns, size_t n, ar_err *err)
{
  union bpf_attr a;
  cleanup_free char *log = NULL;
  int fd, e;

  memset(&a, 0, sizeof(a));
  a.prog_type = BPF_PROG_TYPE_CGROUP_DEVICE;
  a.insns = (uint64_t)(uintptr_t)insns;
  a.insn_cnt = (uint32_t)n;
  a.license = (uint64_t)(uintptr_t) "GPL";
  fd = bpf(BPF_PROG_LOAD, &a);
  if (fd >= 0)
    return fd;
  e = errno;
  if (e != EINVAL && e != EACCES)
    return ar_error(err, e, "bpf(BPF_PROG_LOAD)");
  /* Load again with the verifier's log, to say why. */
  log = xcalloc(1, 65536);
  a.log_buf = (uint64_t)(uintptr_t)log;
  a.log_size = 65536;
  a.log_level = 1;
  fd = bpf(BPF_PROG_LOAD, &a);
  if (fd >= 0)
    return fd;
  return ar_error(err, e, "bpf(BPF_PROG_LOAD): %.400s", log);
}

static void detach_old(int cgfd, const uint32_t *ids, size_t n)
{
  for (size_t i = 0; i < n; i++) {
    union bpf_attr a;
    int fd;
    memset(&a, 0, sizeof(a));
    a.prog_id = ids[i];
    fd = bpf(BPF_PROG_GET_FD_BY_ID, &a);
    if (fd < 0) {
      ar_warn("device filter: cannot open old program %u: %s", ids[i], strerror(errno));
      continue;
    }
    memset(&a, 0, sizeof(a));
    a.target_fd = (uint32_t)cgfd;
    a.attach_bpf_fd = (uint32_t)fd;
    a.attach_type = BPF_CGROUP_DEVICE;
    /* A program left behind only narrows access further, so this is a warning. */
    if (bpf(BPF_PROG_DETACH, &a) < 0)
      ar_warn("device filter: cannot detach old program %u: %s", ids[i], strerror(errno));
    close(fd);
  }
}

int ar_cg_devices_v2(const char *dir, const struct ar_device_rule *rules, size_t n, ar_err *err)
{
  cleanup_free void *insns = NULL;
  cleanup_close int prog = -1, cgfd = -1;
  uint32_t ids[64], old_flags, n_old;
  size_t count;
  union bpf_attr a;

  if (ar_cg_devices_bpf(rules, n, &insns, &count, err) < 0)
    return -1;
  if ((prog = load(insns, count, err)) < 0)
    return -1;
  cgfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (cgfd < 0)
    return ar_error(err, errno, "open '%s'", dir);
  memset(&a, 0, sizeof(a));
  a.query.target_fd = (uint32_t)cgfd;
  a.query.attach_type = BPF_CGROUP_DEVICE;
  a.query.prog_ids = (uint64_t)(uintptr_t)ids;
  a.query.prog_cnt = ARRAY_SIZE(ids);
  if (bpf(BPF_PROG_QUERY, &a) < 0)
    return ar_error(err, errno, "bpf(BPF_PROG_QUERY) on '%s'", dir);
  old_flags = a.query.attach_flags;
  n_old = a.query.prog_cnt;
  memset(&a, 0, sizeof(a));
  a.target_fd = (uint32_t)cgfd;
  a.attach_bpf_fd = (uint32_t)prog;
  a.attach_type = BPF_CGROUP_DEVICE;
  /* Someone attached without MULTI: attaching with the same flags replaces that program. */
  a.attach_flags = n_old && !(old_flags & BPF_F_ALLOW_MULTI) ? old_flags : BPF_F_ALLOW_MULTI;
  if (bpf(BPF_PROG_ATTACH, &a) < 0)
    return ar_error(err, errno, "bpf(BPF_PROG_ATTACH) on '%s'", dir);
  if (a.attach_flags & BPF_F_ALLOW_MULTI)
    detach_old(cgfd, ids, n_old);
  return 0;
}
