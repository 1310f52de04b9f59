/* TAP tests for runtime/agent-seccomp.c, in two halves.
 * - The exported BPF runs in a userspace interpreter, for the three x86 ABIs, against what the
 *   policy issue asks for (an independent list here, not the table in agent-seccomp.c).  The same
 *   interpreter replays the kernel's "constant ALLOW" analysis (seccomp_is_const_allow), which
 *   decides which syscalls the action cache lets skip the filter.
 * - Forked children load the filter and make the real system calls, through the x86_64, i386
 *   (int $0x80) and x32 entry points. */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <seccomp.h>

#include "runtime/agent-seccomp.h"
#include "runtime/seccomp.h"
#include "runtime/utils.h"
#include "tests/unit/tap.h"

#ifndef TIOCLINUX
#define TIOCLINUX 0x541C
#endif
#ifndef SECCOMP_USER_NOTIF_FLAG_CONTINUE
#define SECCOMP_USER_NOTIF_FLAG_CONTINUE (1UL << 0)
#endif
#define X32_BIT 0x40000000u
#define RET_EPERM (SECCOMP_RET_ERRNO | EPERM)
#define RET_ENOSYS (SECCOMP_RET_ERRNO | ENOSYS)
#define BAD_INSN 0xdeadbeefu



static struct ar_bpf plain_bpf, audit_bpf;

/* ---- the userspace half ---------------------------------------------------------------- */

/* The classic BPF that libseccomp emits, run on one seccomp_data; BAD_INSN if unknown. */
static uint32_t bpf_eval(const struct ar_bpf *b, const struct seccomp_data *d)
{
  uint32_t a = 0, x = 0, mem[BPF_MEMWORDS] = {0};

  for (size_t pc = 0; pc < b->n_insns; pc++) {
    const struct sock_filter *f = &b->insns[pc];
    uint32_t src = BPF_SRC(f->code) == BPF_X ? x : f->k;
    bool jump;

    switch (f->code) {
    case BPF_LD | BPF_W | BPF_ABS:
      if (f->k % 4 != 0 || f->k > sizeof(*d) - 4)
        return BAD_INSN;
      memcpy(&a, (const char *)d + f->k, 4);
      continue;
    case BPF_LD | BPF_IMM:
      a = f->k;
      continue;
    case BPF_LD | BPF_MEM:
    case BPF_LDX | BPF_MEM:
    case BPF_ST:
    case BPF_STX:
      if (f->k >= BPF_MEMWORDS)
        return BAD_INSN;
      if (f->code == (BPF_LD | BPF_MEM))
        a = mem[f->k];
      else if (f->code == (BPF_LDX | BPF_MEM))
        x = mem[f->k];
      else
        mem[f->k] = f->code == BPF_ST ? a : x;
      continue;
    case BPF_LDX | BPF_IMM:
      x = f->k;
      continue;
    case BPF_MISC | BPF_TAX:
      x = a;
      continue;
    case BPF_MISC | BPF_TXA:
      a = x;
      continue;
    case BPF_RET | BPF_K:
      return f->k;
    case BPF_RET | BPF_A:
      return a;
    case BPF_JMP | BPF_JA:
      pc += f->k;
      continue;
    }
    switch (BPF_CLASS(f->code)) {
    case BPF_ALU:
      switch (BPF_OP(f->code)) {
      case BPF_AND:
        a &= src;
        continue;
      case BPF_OR:
        a |= src;
        continue;
      case BPF_ADD:
        a += src;
        continue;
      case BPF_SUB:
        a -= src;
        continue;
      case BPF_LSH:
        a = src < 32 ? a << src : 0;
        continue;
      case BPF_RSH:
        a = src < 32 ? a >> src : 0;
        continue;
      }
      return BAD_INSN;
    case BPF_JMP:
      switch (BPF_OP(f->code)) {
      case BPF_JEQ:
        jump = a == src;
        break;
      case BPF_JGT:
        jump = a > src;
        break;
      case BPF_JGE:
        jump = a >= src;
        break;
      case BPF_JSET:
        jump = (a & src) != 0;
        break;
      default:
        return BAD_INSN;
      }
      pc += jump ? f->jt : f->jf;
      continue;
    }
    return BAD_INSN;
  }
  return BAD_INSN; /* ran off the end */
}

enum cache_verdict { CACHED_ALLOW, CONST_OTHER, NEEDS_ARGS };

/* The kernel's seccomp_is_const_allow(): only nr and arch may be read on the way to the RET,
 * with the few instructions it emulates. */
static enum cache_verdict cache_verdict(const struct ar_bpf *b, uint32_t arch, uint32_t nr)
{
  uint32_t a = 0;

  for (size_t pc = 0; pc < b->n_insns; pc++) {
    const struct sock_filter *f = &b->insns[pc];
    bool jump;

    switch (f->code) {
    case BPF_LD | BPF_W | BPF_ABS:
      if (f->k == offsetof(struct seccomp_data, nr))
        a = nr;
      else if (f->k == offsetof(struct seccomp_data, arch))
        a = arch;
      else
        return NEEDS_ARGS;
      continue;
    case BPF_RET | BPF_K:
      return f->k == SECCOMP_RET_ALLOW ? CACHED_ALLOW : CONST_OTHER;
    case BPF_JMP | BPF_JA:
      pc += f->k;
      continue;
    case BPF_JMP | BPF_JEQ | BPF_K:
    case BPF_JMP | BPF_JGE | BPF_K:
    case BPF_JMP | BPF_JGT | BPF_K:
    case BPF_JMP | BPF_JSET | BPF_K:
      jump = BPF_OP(f->code) == BPF_JEQ   ? a == f->k
             : BPF_OP(f->code) == BPF_JGE ? a >= f->k
             : BPF_OP(f->code) == BPF_JGT ? a > f->k
                                          : (a & f->k) != 0;
      pc += jump ? f->jt : f->jf;
      continue;
    case BPF_ALU | BPF_AND | BPF_K:
      a &= f->k;
      continue;
    default:
      return NEEDS_ARGS;
    }
  }
  return NEEDS_ARGS;
}

/* The three ways into an x86_64 kernel, and the numbers of the syscalls with argument rules. */
struct abi {
  const char *name;
  uint32_t token, audit, bit;
  bool is32;
  int clone, ioctl, socket, socketpair, mknod, mknodat, clone3, execve, execveat, socketcall;
  int max_nr; /* sweep 0..max_nr for the cache analysis */
};

static const struct abi abis[] = {
    {"x86_64", SCMP_ARCH_X86_64, AUDIT_ARCH_X86_64, 0, false, 56, 16, 41, 53, 133, 259, 435, 59,
     322, -1, 512},
    {"i386", SCMP_ARCH_X86, AUDIT_ARCH_I386, 0, true, 120, 54, 359, 360, 14, 297, 435, 11, 358, 102,
     512},
    {"x32", SCMP_ARCH_X32, AUDIT_ARCH_X86_64, X32_BIT, false, 56, 514, 41, 53, 133, 259, 435, 520,
     545, -1, 0},
};

/* What the issue asks to fail with EPERM whatever the arguments (plus obvious kin). */
static const char *const must_deny[] = {"mount",
                                        "umount",
                                        "umount2",
                                        "pivot_root",
                                        "move_mount",
                                        "open_tree",
                                        "fsopen",
                                        "fsconfig",
                                        "fsmount",
                                        "fspick",
                                        "mount_setattr",
                                        "unshare",
                                        "setns",
                                        "bpf",
                                        "perf_event_open",
                                        "userfaultfd",
                                        "io_uring_setup",
                                        "io_uring_enter",
                                        "io_uring_register",
                                        "keyctl",
                                        "add_key",
                                        "request_key",
                                        "ptrace",
                                        "process_vm_readv",
                                        "process_vm_writev",
                                        "kexec_load",
                                        "kexec_file_load",
                                        "init_module",
                                        "finit_module",
                                        "delete_module",
                                        "open_by_handle_at",
                                        "name_to_handle_at",
                                        "reboot",
                                        "swapon",
                                        "swapoff",
                                        "acct",
                                        "settimeofday",
                                        "stime",
                                        "clock_settime",
                                        "clock_settime64",
                                        "clock_adjtime",
                                        "clock_adjtime64",
                                        "adjtimex",
                                        "lookup_dcookie",
                                        "nfsservctl",
                                        "quotactl",
                                        "socketcall",
                                        "pidfd_getfd",
                                        "process_madvise"};

/* Hot paths that must stay untouched. */
static const char *const must_allow[] = {"read",
                                         "write",
                                         "openat",
                                         "close",
                                         "mmap",
                                         "munmap",
                                         "futex",
                                         "brk",
                                         "fstat",
                                         "newfstatat",
                                         "statx",
                                         "lseek",
                                         "getpid",
                                         "clock_gettime",
                                         "epoll_wait",
                                         "poll",
                                         "ppoll",
                                         "recvfrom",
                                         "sendto",
                                         "exit_group",
                                         "wait4",
                                         "rt_sigaction",
                                         "seccomp",
                                         "prctl",
                                         "vfork",
                                         "fork",
                                         "pidfd_open",
                                         "setsid",
                                         "chdir",
                                         "getdents64",
                                         "landlock_create_ruleset"};

static uint32_t decide(const struct ar_bpf *b, const struct abi *abi, int nr, const uint64_t *args)
{
  struct seccomp_data d = {.nr = (int)((uint32_t)nr | abi->bit), .arch = abi->audit};

  memcpy(d.args, args, sizeof(d.args));
  if (abi->is32)
    for (int i = 0; i < 6; i++)
      d.args[i] &= 0xffffffff;
  return bpf_eval(b, &d);
}

static uint32_t decide0(const struct ar_bpf *b, const struct abi *abi, int nr)
{
  uint64_t args[6] = {0};
  return decide(b, abi, nr, args);
}

static void test_names(void)
{
  for (size_t i = 0; i < ARRAY_SIZE(must_deny); i++) {
    int found = 0;

    for (size_t j = 0; j < ARRAY_SIZE(abis); j++)
      found += seccomp_syscall_resolve_name_arch(abis[j].token, must_deny[i]) >= 0;
    if (found == 0)
      ok(false, "libseccomp knows \"%s\" on some x86 ABI", must_deny[i]);
  }
  ok(true, "libseccomp knows every denied name on at least one x86 ABI");
}

static void test_unconditional(const struct ar_bpf *b, const char *variant)
{
  for (size_t j = 0; j < ARRAY_SIZE(abis); j++) {
    const struct abi *abi = &abis[j];
    size_t n = 0, bad = 0;

    for (size_t i = 0; i < ARRAY_SIZE(must_deny); i++) {
      int nr = seccomp_syscall_resolve_name_arch(abi->token, must_deny[i]);
      uint32_t r;

      if (nr < 0)
        continue;
      n++;
      r = decide0(b, abi, nr & ~(int)X32_BIT);
      if (r != RET_EPERM) {
        printf("# %s %s (%d): action %#x\n", abi->name, must_deny[i], nr, r);
        bad++;
      }
    }
    ok(bad == 0 && n > 20, "%s %s: the %zu denied syscalls get EPERM", variant, abi->name, n);
    n = bad = 0;
    for (size_t i = 0; i < ARRAY_SIZE(must_allow); i++) {
      int nr = seccomp_syscall_resolve_name_arch(abi->token, must_allow[i]);
      if (nr < 0)
        continue;
      n++;
      if (decide0(b, abi, nr & ~(int)X32_BIT) != SECCOMP_RET_ALLOW) {
        printf("# %s %s (%d) is not allowed\n", abi->name, must_allow[i], nr);
        bad++;
      }
    }
    ok(bad == 0, "%s %s: %zu everyday syscalls are allowed", variant, abi->name, n);
    ok(decide0(b, abi, abi->clone3) == RET_ENOSYS, "%s %s: clone3 gets ENOSYS", variant, abi->name);
  }
}

static bool socket_denied(uint32_t fam, uint32_t type)
{
  type &= 0xf;
  if (fam != AF_UNIX && fam != AF_INET && fam != AF_INET6 && fam != AF_NETLINK)
    return true;
  if ((fam == AF_INET || fam == AF_INET6) && type == SOCK_RAW)
    return true;
  return type == SOCK_PACKET;
}

/* Exact on clean arguments; with garbage in the upper halves (which the kernel drops), whatever
 * the kernel would deny must still be denied. */
static bool check_arg_case(const struct abi *abi, int nr, const char *what, uint64_t *args,
                           int hi_arg, bool want_deny)
{
  uint32_t r = decide(&plain_bpf, abi, nr, args);
  uint64_t dirty[6];

  if (r != (want_deny ? RET_EPERM : SECCOMP_RET_ALLOW)) {
    printf("# %s %s(%#llx, %#llx, %#llx): action %#x, want %s\n", abi->name, what,
           (unsigned long long)args[0], (unsigned long long)args[1], (unsigned long long)args[2], r,
           want_deny ? "EPERM" : "ALLOW");
    return false;
  }
  memcpy(dirty, args, sizeof(dirty));
  dirty[hi_arg] |= 0xdead000000000000ULL;
  r = decide(&plain_bpf, abi, nr, dirty);
  if (want_deny && r != RET_EPERM) {
    printf("# %s %s with a dirty upper half in arg %d gets through (%#x)\n", abi->name, what,
           hi_arg, r);
    return false;
  }
  return true;
}

static void test_socket_rules(void)
{
  static const uint32_t types[] = {SOCK_STREAM,
                                   SOCK_DGRAM,
                                   SOCK_RAW,
                                   SOCK_SEQPACKET,
                                   SOCK_PACKET,
                                   SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK,
                                   SOCK_PACKET | SOCK_CLOEXEC,
                                   SOCK_DGRAM | SOCK_NONBLOCK};
  static const uint32_t odd_families[] = {64,         255,        256,       0x10002,
                                          0x7fffffff, 0x80000002, 0xffffffff};

  for (size_t j = 0; j < ARRAY_SIZE(abis); j++) {
    const struct abi *abi = &abis[j];
    size_t n = 0, bad = 0;

    for (int s = 0; s < 2; s++) {
      int nr = s ? abi->socketpair : abi->socket;
      const char *what = s ? "socketpair" : "socket";

      for (uint32_t fam = 0; fam < 64 + ARRAY_SIZE(odd_families); fam++) {
        uint32_t f = fam < 64 ? fam : odd_families[fam - 64];

        for (size_t t = 0; t < ARRAY_SIZE(types); t++) {
          uint64_t args[6] = {f, types[t], 0};

          n++;
          bad += !check_arg_case(abi, nr, what, args, 0, socket_denied(f, types[t]));
          bad += !check_arg_case(abi, nr, what, args, 1, socket_denied(f, types[t]));
        }
      }
    }
    ok(bad == 0,
       "%s: socket/socketpair over %zu family x type pairs: only AF_UNIX, AF_INET, "
       "AF_INET6, AF_NETLINK, no raw IP, no SOCK_PACKET",
       abi->name, n);
    if (abi->socketcall >= 0)
      ok(decide0(&plain_bpf, abi, abi->socketcall) == RET_EPERM, "%s: socketcall gets EPERM",
         abi->name);
  }
}

static void test_clone_ioctl_mknod_rules(void)
{
  static const uint64_t ns_bits[] = {CLONE_NEWNS,   CLONE_NEWCGROUP, CLONE_NEWUTS, CLONE_NEWIPC,
                                     CLONE_NEWUSER, CLONE_NEWPID,    CLONE_NEWNET};
  static const uint64_t thread = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD |
                                 CLONE_SYSVSEM | CLONE_SETTLS | CLONE_PARENT_SETTID |
                                 CLONE_CHILD_CLEARTID;
  static const uint64_t modes[] = {S_IFBLK | 0600, S_IFCHR | 0600, S_IFIFO | 0600,
                                   S_IFREG,        S_IFSOCK,       0};
  static const uint64_t ioctls[] = {TIOCSTI,    TIOCLINUX, TCGETS,           TIOCGWINSZ,
                                    TIOCSWINSZ, FIONREAD,  0x5412 | 0x10000, 0x541C | 0x80000000};

  for (size_t j = 0; j < ARRAY_SIZE(abis); j++) {
    const struct abi *abi = &abis[j];
    bool good = true;

    for (size_t i = 0; i < ARRAY_SIZE(ns_bits); i++) {
      uint64_t a[6] = {ns_bits[i] | SIGCHLD}, b[6] = {ns_bits[i] | thread};
      good &= check_arg_case(abi, abi->clone, "clone", a, 0, true);
      good &= check_arg_case(abi, abi->clone, "clone", b, 0, true);
    }
    for (uint64_t sig = 0; sig < 65; sig += 17) {
      uint64_t a[6] = {SIGCHLD}, b[6] = {thread | sig}, c[6] = {CLONE_VFORK | CLONE_VM | sig};
      good &= check_arg_case(abi, abi->clone, "clone", a, 1, false);
      good &= check_arg_case(abi, abi->clone, "clone", b, 1, false);
      good &= check_arg_case(abi, abi->clone, "clone", c, 1, false);
    }
    ok(good, "%s: clone with any CLONE_NEW* bit gets EPERM; fork, vfork and threads pass",
       abi->name);

    good = true;
    for (size_t i = 0; i < ARRAY_SIZE(ioctls); i++) {
      uint64_t a[6] = {1, ioctls[i], 0};
      good &= check_arg_case(abi, abi->ioctl, "ioctl", a, 1,
                             ioctls[i] == TIOCSTI || ioctls[i] == TIOCLINUX);
    }
    ok(good,
       "%s: ioctl TIOCSTI and TIOCLINUX get EPERM, even with a dirty upper half; "
       "others pass",
       abi->name);

    good = true;
    for (size_t i = 0; i < ARRAY_SIZE(modes); i++) {
      uint64_t a[6] = {0, modes[i], 0}, b[6] = {(uint64_t)AT_FDCWD, 0, modes[i], 0};
      bool blk = (modes[i] & S_IFMT) == S_IFBLK;
      good &= check_arg_case(abi, abi->mknod, "mknod", a, 1, blk);
      good &= check_arg_case(abi, abi->mknodat, "mknodat", b, 2, blk);
    }
    ok(good, "%s: mknod/mknodat of a block device gets EPERM, other types pass", abi->name);
  }
}

static void test_audit_rules(void)
{
  for (size_t j = 0; j < ARRAY_SIZE(abis); j++) {
    const struct abi *abi = &abis[j];

    ok(decide0(&audit_bpf, abi, abi->execve) == SECCOMP_RET_USER_NOTIF &&
           decide0(&audit_bpf, abi, abi->execveat) == SECCOMP_RET_USER_NOTIF,
       "%s: with audit, execve and execveat go to the listener", abi->name);
    ok(decide0(&plain_bpf, abi, abi->execve) == SECCOMP_RET_ALLOW &&
           decide0(&plain_bpf, abi, abi->execveat) == SECCOMP_RET_ALLOW,
       "%s: without audit, execve and execveat pass", abi->name);
  }
  ok(audit_bpf.wants_listener && !plain_bpf.wants_listener,
     "wants_listener is set with audit only");
}

static bool has_arg_rule(const struct abi *abi, int nr)
{
  return nr == abi->clone || nr == abi->ioctl || nr == abi->socket || nr == abi->socketpair ||
         nr == abi->mknod || nr == abi->mknodat;
}

/* Every syscall without an argument rule must be decidable from nr and arch alone. */
static void test_cacheable(const struct ar_bpf *b, const char *variant)
{
  for (size_t j = 0; j < ARRAY_SIZE(abis); j++) {
    const struct abi *abi = &abis[j];
    size_t n_allow = 0, n_other = 0, n_args = 0, bad = 0;

    if (abi->max_nr == 0)
      continue; /* the cache does not cover x32 numbers */
    for (int nr = 0; nr <= abi->max_nr; nr++) {
      enum cache_verdict v = cache_verdict(b, abi->audit, (uint32_t)nr);
      bool want_args = has_arg_rule(abi, nr);

      n_allow += v == CACHED_ALLOW;
      n_other += v == CONST_OTHER;
      n_args += v == NEEDS_ARGS;
      if ((v == NEEDS_ARGS) != want_args) {
        printf("# %s nr %d: %s\n", abi->name, nr,
               want_args ? "decided without its arguments" : "reads arguments");
        bad++;
      }
    }
    ok(bad == 0,
       "%s %s: %zu syscall numbers cached as ALLOW, %zu denied by number, only the %zu with "
       "argument rules read arguments",
       variant, abi->name, n_allow, n_other, n_args);
  }
}

/* ---- the kernel half ------------------------------------------------------------------- */

static int *shared; /* results from the children */

typedef int (*child_fn)(void *arg, int listener);

static int run_child(const struct ar_bpf *bpf, child_fn fn, void *arg)
{
  int status;
  pid_t pid;

  fflush(stdout);
  pid = fork();
  if (pid == 0) {
    cleanup_err ar_err err = NULL;
    struct rlimit no_core = {0, 0};
    int listener = -1;

    setrlimit(RLIMIT_CORE, &no_core);
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
      _exit(200);
    if (bpf && ar_seccomp_load(bpf, &listener, &err) < 0) {
      fprintf(stderr, "# child: %s\n", err->msg);
      _exit(201);
    }
    _exit(fn(arg, listener));
  }
  if (pid < 0 || waitpid(pid, &status, 0) < 0)
    return -1;
  return status;
}

static bool exited(int status, int code)
{
  if (status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == code)
    return true;
  printf("# wait status %#x, expected exit %d\n", status, code);
  return false;
}

static int sys_errno(long r)
{
  return r < 0 ? errno : 0;
}

/* Arguments that fail harmlessly (EFAULT, EBADF, EINVAL...) if the filter let them through. */
static const struct {
  const char *name;
  long a[6];
} bad_calls[] = {
    {"mount", {1, 1, 1, 0, 1}},
    {"umount2", {1, 0}},
    {"pivot_root", {1, 1}},
    {"move_mount", {-1, 1, -1, 1, 0}},
    {"open_tree", {-1, 1, 0}},
    {"fsopen", {1, 0}},
    {"fsconfig", {-1, 0, 0, 0, 0}},
    {"fsmount", {-1, 0, 0}},
    {"fspick", {-1, 1, 0}},
    {"mount_setattr", {-1, 1, 0, 1, 0}},
    {"setns", {-1, 0}},
    {"bpf", {-1, 0, 0}},
    {"perf_event_open", {1, 0, -1, -1, 0}},
    {"userfaultfd", {-1}},
    {"io_uring_setup", {0, 1}},
    {"io_uring_enter", {-1, 0, 0, 0, 0, 0}},
    {"io_uring_register", {-1, 0, 0, 0}},
    {"keyctl", {-1, 0, 0, 0, 0}},
    {"add_key", {1, 1, 0, 0, 0}},
    {"request_key", {1, 1, 0, 0}},
    {"ptrace", {-1, 0, 0, 0}},
    {"process_vm_readv", {0, 0, 0, 0, 0, 0}},
    {"process_vm_writev", {0, 0, 0, 0, 0, 0}},
    {"pidfd_getfd", {-1, 0, 0}},
    {"process_madvise", {-1, 0, 0, 0, 0}},
    {"kexec_load", {0, 0, 0, -1}},
    {"kexec_file_load", {-1, -1, 0, 0, -1}},
    {"init_module", {1, 0, 1}},
    {"finit_module", {-1, 1, 0}},
    {"delete_module", {1, 0}},
    {"open_by_handle_at", {-1, 1, 0}},
    {"name_to_handle_at", {-1, 1, 1, 1, 0}},
    {"reboot", {0, 0, 0, 0}},
    {"swapon", {1, 0}},
    {"swapoff", {1}},
    {"acct", {1}},
    {"settimeofday", {1, 0}},
    {"clock_settime", {-1, 0}},
    {"clock_adjtime", {-1, 1}},
    {"adjtimex", {1}},
    {"quotactl", {0, 1, 0, 0}},
    {"clone3", {0, 0}},
    /* last: unfiltered, it moves the child into an unmapped user namespace */
    {"unshare", {CLONE_NEWUSER}},
};

static int child_bad_calls(void *arg, int listener)
{
  for (size_t i = 0; i < ARRAY_SIZE(bad_calls); i++) {
    const long *a = bad_calls[i].a;
    int nr = seccomp_syscall_resolve_name(bad_calls[i].name);

    shared[i] = nr < 0 ? -1 : sys_errno(syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]));
  }
  return 0;
}

static void test_kernel_denials(void)
{
  int unfiltered[ARRAY_SIZE(bad_calls)];

  exited(run_child(NULL, child_bad_calls, NULL), 0);
  memcpy(unfiltered, shared, sizeof(unfiltered));
  ok(exited(run_child(&plain_bpf, child_bad_calls, NULL), 0), "a child runs the denied calls");
  for (size_t i = 0; i < ARRAY_SIZE(bad_calls); i++) {
    int want = strcmp(bad_calls[i].name, "clone3") == 0 ? ENOSYS : EPERM;

    ok(shared[i] == want, "kernel: %s fails with %s (got %s; unfiltered: %s)", bad_calls[i].name,
       strerrorname_np(want), shared[i] < 0 ? "unknown" : strerrorname_np(shared[i]) ?: "0",
       strerrorname_np(unfiltered[i]) ?: "0");
  }
}

static void *thread_fn(void *arg)
{
  return arg;
}

enum { R_NEWUSER, R_NEWNET, R_NEWNS, R_RAWCLONE, R_FORK, R_THREAD, R_SPAWN, R_VFORK, R_CLONES };

static int child_clones(void *arg, int listener)
{
  static const long flags[] = {
      [R_NEWUSER] = CLONE_NEWUSER, [R_NEWNET] = CLONE_NEWNET, [R_NEWNS] = CLONE_NEWNS};
  char *argv[] = {"true", NULL};
  pthread_t t;
  void *ret = NULL;
  pid_t pid;
  int st;

  for (int i = R_NEWUSER; i <= R_NEWNS; i++) {
    long r = syscall(SYS_clone, flags[i] | SIGCHLD, 0, 0, 0, 0);
    if (r == 0)
      _exit(0);
    shared[i] = r < 0 ? errno : 0;
    if (r > 0)
      waitpid(r, NULL, 0);
  }
  pid = syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
  if (pid == 0)
    _exit(7);
  shared[R_RAWCLONE] = pid > 0 && waitpid(pid, &st, 0) == pid && WEXITSTATUS(st) == 7 ? 0 : errno;
  pid = fork();
  if (pid == 0)
    _exit(8);
  shared[R_FORK] = pid > 0 && waitpid(pid, &st, 0) == pid && WEXITSTATUS(st) == 8 ? 0 : errno;
  shared[R_THREAD] = pthread_create(&t, NULL, thread_fn, (void *)9);
  if (shared[R_THREAD] == 0)
    shared[R_THREAD] = pthread_join(t, &ret) == 0 && ret == (void *)9 ? 0 : EIO;
  shared[R_SPAWN] = posix_spawn(&pid, "/bin/true", NULL, NULL, argv, NULL);
  if (shared[R_SPAWN] == 0)
    shared[R_SPAWN] = waitpid(pid, &st, 0) == pid && st == 0 ? 0 : EIO;
  pid = vfork();
  if (pid == 0)
    _exit(10);
  shared[R_VFORK] = pid > 0 && waitpid(pid, &st, 0) == pid && WEXITSTATUS(st) == 10 ? 0 : errno;
  return 0;
}

static void test_kernel_clone(void)
{
  ok(exited(run_child(&plain_bpf, child_clones, NULL), 0), "clone child ran");
  ok(shared[R_NEWUSER] == EPERM && shared[R_NEWNET] == EPERM && shared[R_NEWNS] == EPERM,
     "kernel: clone with CLONE_NEWUSER / NEWNET / NEWNS fails with EPERM (%d %d %d)",
     shared[R_NEWUSER], shared[R_NEWNET], shared[R_NEWNS]);
  ok(shared[R_RAWCLONE] == 0, "kernel: a plain clone(SIGCHLD) works (%d)", shared[R_RAWCLONE]);
  ok(shared[R_FORK] == 0, "kernel: fork works (%d)", shared[R_FORK]);
  ok(shared[R_THREAD] == 0, "kernel: pthread_create works through the clone3 fallback (%d)",
     shared[R_THREAD]);
  ok(shared[R_SPAWN] == 0, "kernel: posix_spawn works (%d)", shared[R_SPAWN]);
  ok(shared[R_VFORK] == 0, "kernel: vfork works (%d)", shared[R_VFORK]);
}

static const struct {
  const char *what;
  long fam, type, proto;
  bool pair;
  int want; /* errno; 0: works; -1: anything but EPERM */
} sockets[] = {
    {"AF_UNIX SOCK_STREAM", AF_UNIX, SOCK_STREAM, 0, false, 0},
    {"AF_UNIX SOCK_DGRAM|SOCK_CLOEXEC", AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, false, 0},
    {"socketpair AF_UNIX", AF_UNIX, SOCK_STREAM, 0, true, 0},
    {"AF_INET SOCK_STREAM", AF_INET, SOCK_STREAM, 0, false, 0},
    {"AF_INET SOCK_DGRAM", AF_INET, SOCK_DGRAM, 0, false, 0},
    {"AF_INET6 SOCK_STREAM", AF_INET6, SOCK_STREAM, 0, false, -1},
    {"AF_NETLINK SOCK_RAW NETLINK_ROUTE", AF_NETLINK, SOCK_RAW, 0, false, 0},
    {"AF_INET SOCK_RAW", AF_INET, SOCK_RAW, IPPROTO_ICMP, false, EPERM},
    {"AF_INET SOCK_RAW|SOCK_NONBLOCK", AF_INET, SOCK_RAW | SOCK_NONBLOCK, IPPROTO_ICMP, false,
     EPERM},
    {"AF_INET6 SOCK_RAW", AF_INET6, SOCK_RAW, IPPROTO_ICMPV6, false, EPERM},
    {"AF_INET SOCK_PACKET", AF_INET, SOCK_PACKET, 0, false, EPERM},
    {"AF_PACKET SOCK_RAW", AF_PACKET, SOCK_RAW, 0, false, EPERM},
    {"AF_PACKET SOCK_DGRAM", AF_PACKET, SOCK_DGRAM, 0, false, EPERM},
    {"AF_KEY", AF_KEY, SOCK_RAW, 2, false, EPERM},
    {"AF_ALG", AF_ALG, SOCK_SEQPACKET, 0, false, EPERM},
    {"AF_VSOCK", AF_VSOCK, SOCK_STREAM, 0, false, EPERM},
    {"AF_BLUETOOTH", AF_BLUETOOTH, SOCK_RAW, 0, false, EPERM},
    {"socketpair AF_TIPC", AF_TIPC, SOCK_SEQPACKET, 0, true, EPERM},
    {"AF_INET with a dirty upper half", (long)(0x100000000ULL | AF_INET), SOCK_STREAM, 0, false,
     EPERM},
};

static int child_sockets(void *arg, int listener)
{
  for (size_t i = 0; i < ARRAY_SIZE(sockets); i++) {
    int sv[2];
    long r = sockets[i].pair
                 ? syscall(SYS_socketpair, sockets[i].fam, sockets[i].type, sockets[i].proto, sv)
                 : syscall(SYS_socket, sockets[i].fam, sockets[i].type, sockets[i].proto);
    shared[i] = r < 0 ? errno : 0;
    if (r >= 0 && !sockets[i].pair)
      close((int)r);
  }
  return 0;
}

static void test_kernel_sockets(void)
{
  ok(exited(run_child(&plain_bpf, child_sockets, NULL), 0), "socket child ran");
  for (size_t i = 0; i < ARRAY_SIZE(sockets); i++) {
    int want = sockets[i].want, got = shared[i];
    bool good = want >= 0 ? got == want : got != EPERM;

    ok(good, "kernel: %s %s (got %s)", sockets[i].what,
       want == 0    ? "works"
       : want == -1 ? "is not refused by the filter"
                    : "fails with EPERM",
       strerrorname_np(got) ?: "success");
  }
}

enum { T_STI, T_LINUX, T_STI_HI, T_WINSZ, T_MKBLK, T_MKATBLK, T_MKBLK_HI, T_MKCHR, T_MKFIFO, T_N };

static int child_tty_mknod(void *arg, int listener)
{
  const char *path = "/nonexistent-agentrun-test/node";
  int master = posix_openpt(O_RDWR | O_NOCTTY), slave;
  struct winsize ws;
  char c = 'x';

  if (master < 0 || grantpt(master) < 0 || unlockpt(master) < 0)
    return 50;
  slave = open(ptsname(master), O_RDWR | O_NOCTTY);
  if (slave < 0)
    return 51;
  shared[T_STI] = sys_errno(ioctl(slave, TIOCSTI, &c));
  shared[T_LINUX] = sys_errno(ioctl(slave, TIOCLINUX, &c));
  shared[T_STI_HI] = sys_errno(syscall(SYS_ioctl, slave, 0x100000000UL | TIOCSTI, &c));
  shared[T_WINSZ] = sys_errno(ioctl(slave, TIOCGWINSZ, &ws));
  shared[T_MKBLK] = sys_errno(syscall(SYS_mknod, path, S_IFBLK | 0600, 0));
  shared[T_MKATBLK] = sys_errno(syscall(SYS_mknodat, AT_FDCWD, path, S_IFBLK | 0600, 0));
  shared[T_MKBLK_HI] = sys_errno(syscall(SYS_mknod, path, 0x100000000UL | S_IFBLK | 0600, 0));
  shared[T_MKCHR] = sys_errno(syscall(SYS_mknod, path, S_IFCHR | 0600, 0));
  shared[T_MKFIFO] = sys_errno(syscall(SYS_mknodat, AT_FDCWD, path, S_IFIFO | 0600, 0));
  return 0;
}

static void test_kernel_tty_mknod(void)
{
  static const char *what[T_N] = {
      [T_STI] = "ioctl TIOCSTI fails with EPERM",
      [T_LINUX] = "ioctl TIOCLINUX fails with EPERM",
      [T_STI_HI] = "ioctl TIOCSTI with a dirty upper half fails with EPERM",
      [T_WINSZ] = "ioctl TIOCGWINSZ works",
      [T_MKBLK] = "mknod S_IFBLK fails with EPERM",
      [T_MKATBLK] = "mknodat S_IFBLK fails with EPERM",
      [T_MKBLK_HI] = "mknod S_IFBLK with a dirty upper half fails with EPERM",
      [T_MKCHR] = "mknod S_IFCHR reaches the kernel (ENOENT)",
      [T_MKFIFO] = "mknodat S_IFIFO reaches the kernel (ENOENT)",
  };
  static const int want[T_N] = {EPERM, EPERM, EPERM, 0, EPERM, EPERM, EPERM, ENOENT, ENOENT};

  ok(exited(run_child(&plain_bpf, child_tty_mknod, NULL), 0), "tty/mknod child ran");
  for (int i = 0; i < T_N; i++)
    ok(shared[i] == want[i], "kernel: %s (got %s)", what[i],
       strerrorname_np(shared[i]) ?: "success");
}

/* The i386 entry point, from 64-bit code: the classic way around an x86_64-only filter. */
static long int80(long nr, long a, long b, long c, long d)
{
  long ret;

  __asm__ volatile("int $0x80"
                   : "=a"(ret)
                   : "a"(nr), "b"(a), "c"(b), "d"(c), "S"(d)
                   : "memory", "r8", "r9", "r10", "r11");
  return ret;
}

static int child_int80_works(void *arg, int listener)
{
  return int80(20 /* getpid */, 0, 0, 0, 0) == getpid() ? 0 : 1;
}

static const struct {
  const char *what;
  long nr, a, b, c, d;
  long want; /* -errno; 1: a result >= 0 */
} i386_calls[] = {
    {"getpid", 20, 0, 0, 0, 0, 1},
    {"mount", 21, 0, 0, 0, 0, -EPERM},
    {"setns", 346, -1, 0, 0, 0, -EPERM},
    {"socketcall(SYS_SOCKET)", 102, 1, 0, 0, 0, -EPERM},
    {"socket(AF_PACKET)", 359, AF_PACKET, SOCK_RAW, 0, 0, -EPERM},
    {"socket(AF_INET, SOCK_RAW)", 359, AF_INET, SOCK_RAW, IPPROTO_ICMP, 0, -EPERM},
    {"socket(AF_UNIX)", 359, AF_UNIX, SOCK_STREAM, 0, 0, 1},
    {"socket(AF_PACKET) with a dirty upper half", 359, (long)(0x100000000ULL | AF_PACKET), SOCK_RAW,
     0, 0, -EPERM},
    {"clone(CLONE_NEWUSER)", 120, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, -EPERM},
    {"clone3", 435, 0, 0, 0, 0, -ENOSYS},
    {"ioctl(TIOCSTI)", 54, 0, TIOCSTI, 0, 0, -EPERM},
    {"mknod(S_IFBLK)", 14, 0, S_IFBLK | 0600, 0, 0, -EPERM},
    {"clock_settime64", 404, -1, 0, 0, 0, -EPERM},
    {"stime", 25, 0, 0, 0, 0, -EPERM},
    {"keyctl", 288, -1, 0, 0, 0, -EPERM},
    {"bpf", 357, -1, 0, 0, 0, -EPERM},
    {"ptrace", 26, -1, 0, 0, 0, -EPERM},
    /* last: unfiltered, it moves the child into an unmapped user namespace */
    {"unshare(CLONE_NEWUSER)", 310, CLONE_NEWUSER, 0, 0, 0, -EPERM},
};

static int child_int80(void *arg, int listener)
{
  for (size_t i = 0; i < ARRAY_SIZE(i386_calls); i++) {
    long r =
        int80(i386_calls[i].nr, i386_calls[i].a, i386_calls[i].b, i386_calls[i].c, i386_calls[i].d);
    if (r == 0 && i386_calls[i].nr == 120)
      syscall(SYS_exit_group, 0); /* the clone's child, if the clone got through */
    shared[i] = (int)(r >= 0 ? 1 : r);
    if (r > 0 && i386_calls[i].nr == 120)
      waitpid((pid_t)r, NULL, __WALL);
    if (r >= 0 && i386_calls[i].nr == 359)
      close((int)r);
  }
  return 0;
}

static void test_kernel_i386(void)
{
  int unfiltered[ARRAY_SIZE(i386_calls)];
  int st = run_child(NULL, child_int80_works, NULL);

  if (!(st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0)) {
    printf("# int $0x80 does not work here (status %#x): no i386 entry point to test\n", st);
    ok(true, "# SKIP the kernel has no i386 emulation");
    return;
  }
  exited(run_child(NULL, child_int80, NULL), 0);
  memcpy(unfiltered, shared, sizeof(unfiltered));
  ok(exited(run_child(&plain_bpf, child_int80, NULL), 0), "int $0x80 child ran");
  for (size_t i = 0; i < ARRAY_SIZE(i386_calls); i++) {
    long want = i386_calls[i].want;

    ok(shared[i] == want, "kernel i386: %s %s (got %d, unfiltered %d)", i386_calls[i].what,
       want == 1         ? "works"
       : want == -ENOSYS ? "fails with ENOSYS"
                         : "fails with EPERM",
       shared[i], unfiltered[i]);
  }
}

static int child_x32(void *arg, int listener)
{
  shared[0] = sys_errno(syscall(X32_BIT | SYS_unshare, CLONE_NEWUSER));
  shared[1] = sys_errno(syscall(X32_BIT | SYS_mount, 1, 1, 1, 0, 1));
  shared[2] = sys_errno(syscall(X32_BIT | SYS_getppid));
  return 0;
}

static void test_kernel_x32(void)
{
  int unfiltered[3];

  exited(run_child(NULL, child_x32, NULL), 0);
  memcpy(unfiltered, shared, sizeof(unfiltered));
  ok(exited(run_child(&plain_bpf, child_x32, NULL), 0), "x32 child ran");
  ok(shared[0] == EPERM && shared[1] == EPERM,
     "kernel x32: unshare and mount with the X32 bit fail with EPERM (unfiltered: %s, %s)",
     strerrorname_np(unfiltered[0]) ?: "success", strerrorname_np(unfiltered[1]) ?: "success");
  ok(shared[2] == unfiltered[2], "kernel x32: getppid with the X32 bit is left to the kernel (%s)",
     strerrorname_np(shared[2]) ?: "success");
}

static int send_fd(int sock, int fd)
{
  union {
    char buf[CMSG_SPACE(sizeof(int))];
    struct cmsghdr align;
  } u = {0};
  char c = 'l';
  struct iovec iov = {&c, 1};
  struct msghdr msg = {
      .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof(u.buf)};
  struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);

  cm->cmsg_level = SOL_SOCKET;
  cm->cmsg_type = SCM_RIGHTS;
  cm->cmsg_len = CMSG_LEN(sizeof(int));
  memcpy(CMSG_DATA(cm), &fd, sizeof(int));
  return sendmsg(sock, &msg, 0) == 1 ? 0 : -1;
}

static int recv_fd(int sock)
{
  union {
    char buf[CMSG_SPACE(sizeof(int))];
    struct cmsghdr align;
  } u;
  char c;
  struct iovec iov = {&c, 1};
  struct msghdr msg = {
      .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof(u.buf)};
  struct cmsghdr *cm;
  int fd;

  if (recvmsg(sock, &msg, MSG_CMSG_CLOEXEC) != 1 || (cm = CMSG_FIRSTHDR(&msg)) == NULL ||
      cm->cmsg_type != SCM_RIGHTS)
    return -1;
  memcpy(&fd, CMSG_DATA(cm), sizeof(int));
  return fd;
}

static int exec_sock = -1;

/* Hand the listener to the parent (the monitor's role), then exec through the notification. */
static int child_exec(void *arg, int listener)
{
  char *argv[] = {"sh", "-c", "exec /bin/true", NULL};

  if (listener < 0 || send_fd(exec_sock, listener) < 0)
    return 60;
  close(listener);
  execve("/bin/sh", argv, (char *[]){NULL});
  return 61;
}

/* Answer every notification with CONTINUE, as the monitor does; collect the paths. */
static size_t answer_execs(int listener, pid_t child, char paths[][64], size_t max)
{
  struct seccomp_notif *req = NULL;
  struct seccomp_notif_resp *resp = NULL;
  struct pollfd p = {.fd = listener, .events = POLLIN};
  size_t n = 0;

  if (seccomp_notify_alloc(&req, &resp) < 0)
    return 0;
  while (poll(&p, 1, 5000) == 1 && (p.revents & POLLIN)) {
    char mem[32];
    cleanup_close int fd = -1;

    memset(req, 0, sizeof(*req));
    if (seccomp_notify_receive(listener, req) < 0)
      break;
    snprintf(mem, sizeof(mem), "/proc/%u/mem", req->pid);
    fd = open(mem, O_RDONLY | O_CLOEXEC);
    if (n < max) {
      ssize_t r = fd >= 0 ? pread(fd, paths[n], 63, (off_t)req->data.args[0]) : -1;
      paths[n][r > 0 ? strnlen(paths[n], (size_t)r) : 0] = '\0';
      if (req->data.nr != SYS_execve || (pid_t)req->pid != child)
        snprintf(paths[n], 64, "(nr %d pid %u)", req->data.nr, req->pid);
    }
    n++;
    *resp = (struct seccomp_notif_resp){.id = req->id, .flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE};
    if (seccomp_notify_respond(listener, resp) < 0)
      break;
  }
  seccomp_notify_free(req, resp);
  return n;
}

static void test_kernel_exec_audit(void)
{
  char paths[4][64] = {{0}};
  int sv[2], listener, st = -1;
  size_t n = 0;
  pid_t pid;

  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
    ok(false, "socketpair: %s", strerror(errno));
    return;
  }
  exec_sock = sv[1];
  fflush(stdout);
  pid = fork();
  if (pid == 0) {
    cleanup_err ar_err err = NULL;
    int l = -1;

    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
    if (ar_seccomp_load(&audit_bpf, &l, &err) < 0)
      _exit(201);
    _exit(child_exec(NULL, l));
  }
  close(sv[1]);
  listener = recv_fd(sv[0]);
  ok(listener >= 0, "audit: the child loads the filter and hands over a listener fd");
  if (listener >= 0) {
    n = answer_execs(listener, pid, paths, ARRAY_SIZE(paths));
    close(listener);
  }
  waitpid(pid, &st, 0);
  close(sv[0]);
  ok(n == 2 && strcmp(paths[0], "/bin/sh") == 0 && strcmp(paths[1], "/bin/true") == 0,
     "audit: the listener sees both execs, /bin/sh then /bin/true (%zu: \"%s\" \"%s\")", n,
     paths[0], paths[1]);
  ok(exited(st, 0), "audit: answered with CONTINUE, the execs go through and true exits 0");
}

static int child_getppid(void *arg, int listener)
{
  shared[0] = sys_errno(syscall(SYS_getppid));
  shared[1] = sys_errno(syscall(SYS_mount, 1, 1, 1, 0, 1));
  return 0;
}

/* The caller's filter and the agent filter, in either order: the strictest answer wins. */
static void test_stacking(void)
{
  char *names[] = {"getppid"};
  struct ar_syscall_rule r = {.names = names,
                              .n_names = 1,
                              .action = AR_SECCOMP_ERRNO,
                              .has_errno_ret = true,
                              .errno_ret = EXDEV};
  struct ar_seccomp sc = {.default_action = AR_SECCOMP_ALLOW, .syscalls = &r, .n_syscalls = 1};
  cleanup_err ar_err err = NULL;
  struct ar_bpf caller = {0};
  pid_t pid;
  int st;

  if (ar_seccomp_compile(&sc, &caller, &err) < 0) {
    ok(false, "compile the caller's filter: %s", err->msg);
    return;
  }
  for (int order = 0; order < 2; order++) {
    fflush(stdout);
    pid = fork();
    if (pid == 0) {
      cleanup_err ar_err e = NULL;
      prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
      if (ar_seccomp_load(order ? &plain_bpf : &caller, NULL, &e) < 0 ||
          ar_seccomp_load(order ? &caller : &plain_bpf, NULL, &e) < 0)
        _exit(70);
      _exit(child_getppid(NULL, -1));
    }
    waitpid(pid, &st, 0);
    ok(exited(st, 0) && shared[0] == EXDEV && shared[1] == EPERM,
       "stacked (%s first): the caller's rule and the agent's rule both hold",
       order ? "agent" : "caller");
  }
  ar_bpf_clear(&caller);

  /* A second listener in one filter chain: the kernel says EBUSY (has_duplicate_listener). */
  r.action = AR_SECCOMP_NOTIFY;
  r.has_errno_ret = false;
  if (ar_seccomp_compile(&sc, &caller, &err) < 0) {
    ok(false, "compile a caller's NOTIFY filter: %s", err->msg);
    return;
  }
  fflush(stdout);
  pid = fork();
  if (pid == 0) {
    cleanup_err ar_err e = NULL;
    int l1 = -1, l2 = -1;
    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
    if (ar_seccomp_load(&caller, &l1, &e) < 0)
      _exit(71);
    if (ar_seccomp_load(&audit_bpf, &l2, &e) == 0)
      _exit(72);
    _exit(e->status == EBUSY ? 0 : 73);
  }
  waitpid(pid, &st, 0);
  ok(exited(st, 0), "a caller's NOTIFY filter plus the audit filter: the second listener gets "
                    "EBUSY (one listener per filter chain)");
  ar_bpf_clear(&caller);
}

/* ---- numbers ------------------------------------------------------------------------------ */

static double now_us(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static bool same_bpf(const struct ar_bpf *a, const struct ar_bpf *b)
{
  return a->n_insns == b->n_insns && a->flags == b->flags &&
         a->wants_listener == b->wants_listener &&
         memcmp(a->insns, b->insns, a->n_insns * sizeof(*a->insns)) == 0;
}

/* The build-time copy must be what libseccomp makes now from the table. */
static void test_prebuilt(void)
{
  for (int audit = 0; audit < 2; audit++) {
    cleanup_err ar_err err = NULL;
    struct ar_bpf live = {0};

    if (ar_agent_filter_build(audit, &live, &err) < 0) {
      ok(false, "build the filter with libseccomp: %s", err->msg);
      continue;
    }
    ok(same_bpf(&live, audit ? &audit_bpf : &plain_bpf),
       "audit %s: the %s filter is the one libseccomp compiles from the table",
       audit ? "on" : "off", ar_agent_filter_prebuilt() ? "build-time" : "compiled");
    ar_bpf_clear(&live);
  }
}

static double time_compile(int (*fn)(bool, struct ar_bpf *, ar_err *), bool audit, int rounds)
{
  double t0 = now_us();

  for (int i = 0; i < rounds; i++) {
    cleanup_err ar_err err = NULL;
    struct ar_bpf b = {0};

    if (fn(audit, &b, &err) < 0)
      return -1;
    ar_bpf_clear(&b);
  }
  return (now_us() - t0) / rounds;
}

static void measure_compile(void)
{
  for (int audit = 0; audit < 2; audit++) {
    double build = time_compile(ar_agent_filter_build, audit, 50);
    double compile = time_compile(ar_agent_filter_compile, audit, 1000);

    ok(build > 0 && compile > 0,
       "audit %s: libseccomp compiles the filter in %.1f us; ar_agent_filter_compile takes "
       "%.2f us (%s)",
       audit ? "on" : "off", build, compile,
       ar_agent_filter_prebuilt() ? "build-time copy" : "no build-time copy");
  }
}

#define LOOPS 1000000

static int child_timing(void *arg, int listener)
{
  int fd = open("/dev/null", O_RDONLY);
  struct termios tio;
  double t0 = now_us();

  for (int i = 0; i < LOOPS; i++)
    syscall(SYS_getppid);
  shared[0] = (int)((now_us() - t0) * 1000 / LOOPS);
  t0 = now_us();
  for (int i = 0; i < LOOPS; i++)
    ioctl(fd, TCGETS, &tio);
  shared[1] = (int)((now_us() - t0) * 1000 / LOOPS);
  t0 = now_us();
  for (int i = 0; i < LOOPS / 10; i++)
    close(socket(AF_UNIX, SOCK_DGRAM, 0));
  shared[2] = (int)((now_us() - t0) * 10000 / LOOPS);
  return 0;
}

static void measure_syscalls(void)
{
  int base[3];

  run_child(NULL, child_timing, NULL);
  memcpy(base, shared, sizeof(base));
  ok(exited(run_child(&plain_bpf, child_timing, NULL), 0), "timing child ran");
  printf("# ns per call, no filter -> agent filter: getppid (no rule, cached) %d -> %d, "
         "ioctl TCGETS (argument rule) %d -> %d, socket+close (argument rules) %d -> %d\n",
         base[0], shared[0], base[1], shared[1], base[2], shared[2]);
}

int main(void)
{
  cleanup_err ar_err err = NULL;

  shared = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (shared == MAP_FAILED || ar_agent_filter_compile(false, &plain_bpf, &err) < 0 ||
      ar_agent_filter_compile(true, &audit_bpf, &err) < 0) {
    printf("Bail out! %s\n", err ? err->msg : strerror(errno));
    return 1;
  }
  printf("# agent filter: %zu instructions, %zu with audit\n", plain_bpf.n_insns,
         audit_bpf.n_insns);
  ok(plain_bpf.n_insns > 0 && plain_bpf.flags == 0, "the agent filter compiles");

  test_names();
  test_unconditional(&plain_bpf, "plain");
  test_unconditional(&audit_bpf, "audit");
  test_socket_rules();
  test_clone_ioctl_mknod_rules();
  test_audit_rules();
  test_cacheable(&plain_bpf, "plain");
  test_cacheable(&audit_bpf, "audit");

  test_kernel_denials();
  test_kernel_clone();
  test_kernel_sockets();
  test_kernel_tty_mknod();
  test_kernel_i386();
  test_kernel_x32();
  test_kernel_exec_audit();
  test_stacking();

  test_prebuilt();
  measure_compile();
  measure_syscalls();

  ar_bpf_clear(&plain_bpf);
  ar_bpf_clear(&audit_bpf);
  printf("1..%d\n", n_tests);
  return n_failed ? 1 : 0;
}
