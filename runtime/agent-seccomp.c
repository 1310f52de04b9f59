/* The agent seccomp filter.  It is written as a runtime-spec seccomp section (struct ar_seccomp)
 * and compiled by ar_seccomp_compile(), so it shares the caller filter's compiler, exporter and
 * loader.
 *
 * Default ALLOW: the hot system calls carry no rule, so the kernel's seccomp action cache
 * answers them without running the filter.  Only clone, ioctl, socket, socketpair, mknod and
 * mknodat look at their arguments.  Every argument test is on the low 32 bits, which is what the
 * kernel reads (it truncates int and unsigned int arguments: a 64-bit test could be dodged by
 * setting the upper half), except "family above AF_NETLINK", which also catches a set upper
 * half. */
#include <config.h>
#include "agent-seccomp.h"

#include <errno.h>
#include <sched.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "utils.h"

/* Built with -DAR_AGENT_BPF_PREBUILT, the filter comes from runtime/agent-seccomp-gen, run at
 * build time: agent_bpf_plain[] and agent_bpf_audit[], or AGENT_BPF_NONE if it could not. */
#ifdef AR_AGENT_BPF_PREBUILT
#include "runtime/agent-seccomp-bpf.inc"
#ifndef AGENT_BPF_NONE
#define HAVE_PREBUILT 1
#endif
#endif

#ifndef TIOCLINUX
#define TIOCLINUX 0x541C
#endif

#define LOW32 0xffffffffULL
#define SOCK_TYPE_MASK 0xf

#define NAMES(...)                                                                                 \
  .names = (char *[]){__VA_ARGS__}, .n_names = sizeof((char *[]){__VA_ARGS__}) / sizeof(char *)
#define ARGS(...)                                                                                  \
  .args = (struct ar_seccomp_arg[]){__VA_ARGS__},                                                  \
  .n_args = sizeof((struct ar_seccomp_arg[]){__VA_ARGS__}) / sizeof(struct ar_seccomp_arg)
/* (arg & mask) == v */
#define MASKED(i, mask, v)                                                                         \
  {                                                                                                \
    .index = (i), .value = (mask), .value_two = (v), .op = AR_OP_MASKED_EQ                         \
  }
#define DENY(...)                                                                                  \
  {                                                                                                \
    .action = AR_SECCOMP_ERRNO, .has_errno_ret = true, .errno_ret = EPERM, __VA_ARGS__             \
  }

_Static_assert(AF_UNIX == 1 && AF_INET == 2 && AF_INET6 == 10 && AF_NETLINK == 16,
               "the socket family blocks below assume the Linux family numbers");

static struct ar_syscall_rule deny_rules[] = {
    /* mounts and namespaces: the way out of the container */
    DENY(NAMES("mount", "umount", "umount2", "pivot_root", "move_mount", "open_tree", "fsopen",
               "fsconfig", "fsmount", "fspick", "mount_setattr", "unshare", "setns")),
    /* large kernel attack surfaces no agent job needs */
    DENY(NAMES("bpf", "perf_event_open", "userfaultfd", "io_uring_setup", "io_uring_enter",
               "io_uring_register", "keyctl", "add_key", "request_key")),
    /* reaching into other processes: ptrace and the calls behind the same access check */
    DENY(
        NAMES("ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd", "process_madvise")),
    /* the machine's own state: kernel, modules, clocks, swap, accounting, I/O ports */
    DENY(NAMES("kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
               "open_by_handle_at", "name_to_handle_at", "reboot", "swapon", "swapoff", "acct",
               "settimeofday", "stime", "clock_settime", "clock_settime64", "clock_adjtime",
               "clock_adjtime64", "adjtimex", "lookup_dcookie", "nfsservctl", "quotactl",
               "quotactl_fd", "_sysctl", "uselib", "iopl", "ioperm", "vm86", "vm86old")),
    /* i386 multiplexes the socket calls through socketcall, where the family sits behind a
     * pointer, out of the filter's reach.  Cost: i386 glibc built for kernels < 4.3 (Debian's)
     * makes every socket call through it, without fallback, so i386 binaries get no sockets. */
    DENY(NAMES("socketcall")),
    /* clone with a namespace flag (arg 0 on every x86 ABI): one rule per bit = "any bit set" */
    DENY(NAMES("clone"), ARGS(MASKED(0, CLONE_NEWNS, CLONE_NEWNS))),
    DENY(NAMES("clone"), ARGS(MASKED(0, CLONE_NEWCGROUP, CLONE_NEWCGROUP))),
    DENY(NAMES("clone"), ARGS(MASKED(0, CLONE_NEWUTS, CLONE_NEWUTS))),
    DENY(NAMES("clone"), ARGS(MASKED(0, CLONE_NEWIPC, CLONE_NEWIPC))),
    DENY(NAMES("clone"), ARGS(MASKED(0, CLONE_NEWUSER, CLONE_NEWUSER))),
    DENY(NAMES("clone"), ARGS(MASKED(0, CLONE_NEWPID, CLONE_NEWPID))),
    DENY(NAMES("clone"), ARGS(MASKED(0, CLONE_NEWNET, CLONE_NEWNET))),
    /* typing into the terminal of whoever reads it next (the host's shell, with a shared tty) */
    DENY(NAMES("ioctl"), ARGS(MASKED(1, LOW32, TIOCSTI))),
    DENY(NAMES("ioctl"), ARGS(MASKED(1, LOW32, TIOCLINUX))),
    /* families other than 1, 2, 10 and 16, as aligned blocks: 0, 3, 4-7, 8-9, 11, 12-15, > 16.
     * socketpair creates sockets of any family too (and so autoloads their modules). */
    DENY(NAMES("socket", "socketpair"), ARGS(MASKED(0, LOW32, 0))),
    DENY(NAMES("socket", "socketpair"), ARGS(MASKED(0, LOW32, 3))),
    DENY(NAMES("socket", "socketpair"), ARGS(MASKED(0, LOW32 & ~3ULL, 4))),
    DENY(NAMES("socket", "socketpair"), ARGS(MASKED(0, LOW32 & ~1ULL, 8))),
    DENY(NAMES("socket", "socketpair"), ARGS(MASKED(0, LOW32, 11))),
    DENY(NAMES("socket", "socketpair"), ARGS(MASKED(0, LOW32 & ~3ULL, 12))),
    DENY(NAMES("socket", "socketpair"), ARGS({.index = 0, .value = AF_NETLINK, .op = AR_OP_GT})),
    /* raw IP sockets; netlink sockets are SOCK_RAW too and stay open (`ip link` needs them) */
    DENY(NAMES("socket", "socketpair"),
         ARGS(MASKED(0, LOW32, AF_INET), MASKED(1, SOCK_TYPE_MASK, SOCK_RAW))),
    DENY(NAMES("socket", "socketpair"),
         ARGS(MASKED(0, LOW32, AF_INET6), MASKED(1, SOCK_TYPE_MASK, SOCK_RAW))),
    /* SOCK_PACKET makes a packet socket whatever the family, AF_INET included */
    DENY(NAMES("socket", "socketpair"), ARGS(MASKED(1, SOCK_TYPE_MASK, SOCK_PACKET))),
    /* block devices; character devices are the devices cgroup's business */
    DENY(NAMES("mknod"), ARGS(MASKED(1, S_IFMT, S_IFBLK))),
    DENY(NAMES("mknodat"), ARGS(MASKED(2, S_IFMT, S_IFBLK))),
    /* ENOSYS, not EPERM: libc then falls back to clone, whose flags the rules above can see */
    {NAMES("clone3"), .action = AR_SECCOMP_ERRNO, .has_errno_ret = true, .errno_ret = ENOSYS},
};

static struct ar_syscall_rule audit_rule = {NAMES("execve", "execveat"),
                                            .action = AR_SECCOMP_NOTIFY};

#if defined(__x86_64__)
/* every ABI an x86_64 kernel accepts: int 0x80 (i386) and syscall numbers with the X32 bit */
static char *agent_arches[] = {"SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32"};
#define N_AGENT_ARCHES (sizeof(agent_arches) / sizeof(agent_arches[0]))
#else
static char **agent_arches = NULL;
#define N_AGENT_ARCHES 0
#endif

int ar_agent_filter_build(bool audit_exec, struct ar_bpf *ret, ar_err *err)
{
  struct ar_syscall_rule rules[ARRAY_SIZE(deny_rules) + 1];
  struct ar_seccomp sc = {
      .default_action = AR_SECCOMP_ALLOW,
      .architectures = agent_arches,
      .n_architectures = N_AGENT_ARCHES,
      .syscalls = rules,
      .n_syscalls = ARRAY_SIZE(deny_rules),
  };

  memcpy(rules, deny_rules, sizeof(deny_rules));
  if (audit_exec)
    rules[sc.n_syscalls++] = audit_rule;
  if (ar_seccomp_compile(&sc, ret, err) < 0)
    return ar_error_wrap(err, "agent filter");
  return 0;
}

#ifdef HAVE_PREBUILT
bool ar_agent_filter_prebuilt(void)
{
  return true;
}

/* libseccomp takes ~0.8 ms for this filter (three ABIs, binary tree): too slow for every
 * create, and the result is the same each time.  The copy takes a microsecond. */
int ar_agent_filter_compile(bool audit_exec, struct ar_bpf *ret, ar_err *err)
{
  const struct sock_filter *src = audit_exec ? agent_bpf_audit : agent_bpf_plain;
  size_t n = audit_exec ? ARRAY_SIZE(agent_bpf_audit) : ARRAY_SIZE(agent_bpf_plain);

  *ret = (struct ar_bpf){.n_insns = n, .wants_listener = audit_exec};
  ret->insns = xmalloc(n * sizeof(*src));
  memcpy(ret->insns, src, n * sizeof(*src));
  return 0;
}
#else
bool ar_agent_filter_prebuilt(void)
{
  return false;
}

int ar_agent_filter_compile(bool audit_exec, struct ar_bpf *ret, ar_err *err)
{
  return ar_agent_filter_build(audit_exec, ret, err);
}
#endif
