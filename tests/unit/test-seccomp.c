/* TAP tests for runtime/seccomp.c: every filter is compiled here (the parent) and loaded in a
 * forked child, which then makes the system call and reports what the kernel did. */
#include <config.h>

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <linux/seccomp.h>
#include <seccomp.h>

#include "runtime/log.h"
#include "runtime/seccomp.h"
#include "runtime/utils.h"
#include "tests/unit/tap.h"

#ifndef SYS_SECCOMP
#define SYS_SECCOMP 1 /* si_code of a seccomp SIGSYS */
#endif



#define STRV(...) ((char *[]){__VA_ARGS__})
#define NAMES(...) ((char *[]){__VA_ARGS__}), (sizeof((char *[]){__VA_ARGS__}) / sizeof(char *))

static struct ar_syscall_rule rule(char **names, size_t n, enum ar_seccomp_action a)
{
  return (struct ar_syscall_rule){.names = names, .n_names = n, .action = a};
}

static struct ar_syscall_rule errno_rule(char **names, size_t n, uint32_t e)
{
  struct ar_syscall_rule r = rule(names, n, AR_SECCOMP_ERRNO);
  r.has_errno_ret = true;
  r.errno_ret = e;
  return r;
}

static struct ar_seccomp filter(enum ar_seccomp_action def, struct ar_syscall_rule *rules, size_t n)
{
  return (struct ar_seccomp){.default_action = def, .syscalls = rules, .n_syscalls = n};
}

/* The syscall under test: getppid ignores its arguments, but the filter still sees them. */
static long probe(uint64_t a0, uint64_t a1)
{
  long r = syscall(SYS_getppid, a0, a1);
  return r < 0 ? -errno : 0;
}

typedef int (*child_fn)(void *arg, int listener);

/* Fork; the child loads bpf and exits with fn's result.  Returns the wait status. */
static int run_loaded(const struct ar_bpf *bpf, child_fn fn, void *arg)
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
    if (ar_seccomp_load(bpf, &listener, &err) < 0) {
      fprintf(stderr, "# child: %s\n", err->msg);
      _exit(201);
    }
    /* straight to the kernel: a sanitizer's _exit makes calls the deny filters refuse */
    syscall(SYS_exit_group, fn(arg, listener));
    _exit(127);
  }
  if (pid < 0 || waitpid(pid, &status, 0) < 0)
    return -1;
  return status;
}

/* Compile sc; run fn loaded with it; -1 if compiling failed. */
static int run_filter(const struct ar_seccomp *sc, child_fn fn, void *arg)
{
  cleanup_err ar_err err = NULL;
  struct ar_bpf bpf = {0};
  int status;

  if (ar_seccomp_compile(sc, &bpf, &err) < 0) {
    printf("# compile: %s\n", err->msg);
    return -1;
  }
  status = run_loaded(&bpf, fn, arg);
  ar_bpf_clear(&bpf);
  return status;
}

static bool exited(int status, int code)
{
  if (status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == code)
    return true;
  printf("# wait status %#x, expected exit %d\n", status, code);
  return false;
}

static bool killed_by(int status, int sig)
{
  return status >= 0 && WIFSIGNALED(status) && WTERMSIG(status) == sig;
}

/* Exit with the probe's errno (0 when the call went through). */
static int child_probe(void *arg, int listener)
{
  return (int)-probe(arg ? *(uint64_t *)arg : 0, 0);
}

static int child_getcwd(void *arg, int listener)
{
  char buf[256];
  return syscall(SYS_getcwd, buf, sizeof(buf)) < 0 ? errno : 0;
}

static void test_errno(void)
{
  struct ar_syscall_rule r[] = {errno_rule(NAMES("getcwd"), EXDEV)};
  struct ar_seccomp sc = filter(AR_SECCOMP_ALLOW, r, 1);
  int st = run_filter(&sc, child_getcwd, NULL);

  ok(exited(st, EXDEV), "ERRNO with errnoRet: getcwd fails with EXDEV (status %#x)", st);
  ok(exited(run_filter(&sc, child_probe, NULL), 0), "ERRNO rule leaves other syscalls alone");

  r[0] = rule(NAMES("getcwd"), AR_SECCOMP_ERRNO);
  ok(exited(run_filter(&sc, child_getcwd, NULL), EPERM), "ERRNO without errnoRet: EPERM");
}

/* A default-deny filter that lets the child exit. */
static struct ar_seccomp deny_all_but(enum ar_seccomp_action def, struct ar_syscall_rule *extra)
{
  static char *exits[] = {"exit_group", "exit", "rt_sigreturn"};
  static struct ar_syscall_rule rules[2];

  rules[0] = rule(exits, ARRAY_SIZE(exits), AR_SECCOMP_ALLOW);
  if (extra)
    rules[1] = *extra;
  return filter(def, rules, extra ? 2 : 1);
}

static void test_default_errno(void)
{
  struct ar_seccomp sc = deny_all_but(AR_SECCOMP_ERRNO, NULL);

  sc.has_default_errno_ret = true;
  sc.default_errno_ret = EHOSTDOWN;
  ok(exited(run_filter(&sc, child_probe, NULL), EHOSTDOWN),
     "defaultAction ERRNO with defaultErrnoRet EHOSTDOWN");
  sc.has_default_errno_ret = false;
  ok(exited(run_filter(&sc, child_probe, NULL), EPERM), "defaultAction ERRNO defaults to EPERM");
}

static void test_kill(void)
{
  static const struct {
    enum ar_seccomp_action a;
    const char *name;
  } kills[] = {{AR_SECCOMP_KILL, "KILL"},
               {AR_SECCOMP_KILL_PROCESS, "KILL_PROCESS"},
               {AR_SECCOMP_KILL_THREAD, "KILL_THREAD"}};

  for (size_t i = 0; i < ARRAY_SIZE(kills); i++) {
    struct ar_syscall_rule r[] = {rule(NAMES("getppid"), kills[i].a)};
    struct ar_seccomp sc = filter(AR_SECCOMP_ALLOW, r, 1);
    int st = run_filter(&sc, child_probe, NULL);

    ok(killed_by(st, SIGSYS), "%s: the child dies by SIGSYS (status %#x)", kills[i].name, st);
  }
}

static volatile sig_atomic_t trapped_nr = -1, trapped_code = -1;

static void on_sigsys(int sig, siginfo_t *si, void *uc)
{
  trapped_nr = si->si_syscall;
  trapped_code = si->si_code;
}

static int child_trap(void *arg, int listener)
{
  struct sigaction sa = {.sa_sigaction = on_sigsys, .sa_flags = SA_SIGINFO};

  sigaction(SIGSYS, &sa, NULL);
  probe(0, 0);
  return trapped_nr == SYS_getppid && trapped_code == SYS_SECCOMP ? 0 : 1;
}

static void test_trap_trace_log(void)
{
  struct ar_syscall_rule r[] = {rule(NAMES("getppid"), AR_SECCOMP_TRAP)};
  struct ar_seccomp sc = filter(AR_SECCOMP_ALLOW, r, 1);
  struct ar_syscall_rule allow;

  ok(exited(run_filter(&sc, child_trap, NULL), 0), "TRAP: SIGSYS handler sees getppid");

  r[0] = rule(NAMES("getppid"), AR_SECCOMP_TRACE);
  ok(exited(run_filter(&sc, child_probe, NULL), ENOSYS), "TRACE without a tracer: ENOSYS");
  r[0].has_errno_ret = true;
  r[0].errno_ret = EXDEV;
  ok(exited(run_filter(&sc, child_probe, NULL), ENOSYS), "TRACE with errnoRet compiles and loads");

  allow = rule(NAMES("getppid"), AR_SECCOMP_LOG);
  sc = deny_all_but(AR_SECCOMP_ERRNO, &allow);
  ok(exited(run_filter(&sc, child_probe, NULL), 0), "LOG: getppid goes through a deny filter");
  allow = rule(NAMES("getppid"), AR_SECCOMP_ALLOW);
  sc = deny_all_but(AR_SECCOMP_ERRNO, &allow);
  ok(exited(run_filter(&sc, child_probe, NULL), 0), "ALLOW: getppid goes through a deny filter");
}

struct arg_case {
  const char *what;
  struct ar_seccomp_arg args[2];
  size_t n_args;
  uint64_t calls[3][2];
  size_t n_calls;
  unsigned hits; /* bit i: call i must be denied */
};

static int child_args(void *arg, int listener)
{
  const struct arg_case *c = arg;

  for (size_t i = 0; i < c->n_calls; i++) {
    bool hit = probe(c->calls[i][0], c->calls[i][1]) == -EXDEV;
    if (hit != !!(c->hits & (1u << i)))
      return 10 + (int)i;
  }
  return 0;
}

static void test_args(void)
{
  static const struct arg_case cases[] = {
      {"EQ", {{0, 5, 0, AR_OP_EQ}}, 1, {{5}, {6}}, 2, 1},
      {"NE", {{0, 5, 0, AR_OP_NE}}, 1, {{5}, {6}}, 2, 2},
      {"LT", {{0, 5, 0, AR_OP_LT}}, 1, {{4}, {5}}, 2, 1},
      {"LE", {{0, 5, 0, AR_OP_LE}}, 1, {{5}, {6}}, 2, 1},
      {"GT", {{0, 5, 0, AR_OP_GT}}, 1, {{6}, {5}}, 2, 1},
      {"GE", {{0, 5, 0, AR_OP_GE}}, 1, {{5}, {4}}, 2, 1},
      {"MASKED_EQ", {{0, 0xf0, 0x30, AR_OP_MASKED_EQ}}, 1, {{0x35}, {0x45}}, 2, 1},
      {"EQ on 64 bits", {{1, 0x100000005ull, 0, AR_OP_EQ}}, 1, {{0, 0x100000005ull}, {0, 5}}, 2, 1},
      {"two conditions on one arg are ORed",
       {{0, 1, 0, AR_OP_EQ}, {0, 2, 0, AR_OP_EQ}},
       2,
       {{1}, {2}, {3}},
       3,
       3},
      {"conditions on two args are ANDed",
       {{0, 1, 0, AR_OP_EQ}, {1, 2, 0, AR_OP_EQ}},
       2,
       {{1, 2}, {1, 3}, {3, 2}},
       3,
       1},
  };

  for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
    struct ar_syscall_rule r[] = {errno_rule(NAMES("getppid"), EXDEV)};
    struct ar_seccomp sc = filter(AR_SECCOMP_ALLOW, r, 1);
    int st;

    r[0].args = (struct ar_seccomp_arg *)cases[i].args;
    r[0].n_args = cases[i].n_args;
    st = run_filter(&sc, child_args, (void *)&cases[i]);
    ok(exited(st, 0), "args: %s (status %#x)", cases[i].what, st);
  }
}

static int send_fd(int sock, int fd)
{
  char data = 'x';
  struct iovec iov = {&data, 1};
  union {
    char buf[CMSG_SPACE(sizeof(int))];
    struct cmsghdr align;
  } u = {0};
  struct msghdr msg = {
      .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof(u.buf)};
  struct cmsghdr *c = CMSG_FIRSTHDR(&msg);

  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  memcpy(CMSG_DATA(c), &fd, sizeof(int));
  return sendmsg(sock, &msg, 0) == 1 ? 0 : -1;
}

static int recv_fd(int sock)
{
  char data;
  struct iovec iov = {&data, 1};
  union {
    char buf[CMSG_SPACE(sizeof(int))];
    struct cmsghdr align;
  } u;
  struct msghdr msg = {
      .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof(u.buf)};
  struct cmsghdr *c;
  int fd;

  if (recvmsg(sock, &msg, MSG_CMSG_CLOEXEC) != 1 || (c = CMSG_FIRSTHDR(&msg)) == NULL ||
      c->cmsg_type != SCM_RIGHTS)
    return -1;
  memcpy(&fd, CMSG_DATA(c), sizeof(int));
  return fd;
}

static int child_notify(void *arg, int listener)
{
  int sock = *(int *)arg;

  if (listener < 0)
    return 30;
  if (send_fd(sock, listener) < 0)
    return 31;
  close(listener);
  return syscall(SYS_getppid) == 4242 ? 0 : 32;
}

static void test_notify(bool tsync)
{
  struct ar_syscall_rule r[] = {rule(NAMES("getppid"), AR_SECCOMP_NOTIFY)};
  struct ar_seccomp sc = filter(AR_SECCOMP_ALLOW, r, 1);
  const char *how = tsync ? " (with TSYNC)" : "";
  char *flags[] = {"SECCOMP_FILTER_FLAG_TSYNC", "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV"};
  cleanup_err ar_err err = NULL;
  struct ar_bpf bpf = {0};
  struct seccomp_notif *req = NULL;
  struct seccomp_notif_resp *resp = NULL;
  int sv[2], status, listener;
  bool got = false;
  pid_t pid;

  if (tsync) {
    sc.flags = flags;
    sc.n_flags = 2;
  }
  if (ar_seccomp_compile(&sc, &bpf, &err) < 0 || socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0) {
    ok(false, "NOTIFY: compile (%s)", err ? err->msg : strerror(errno));
    return;
  }
  ok(bpf.wants_listener, "NOTIFY: the filter wants a listener%s", how);
  fflush(stdout);
  pid = fork();
  if (pid == 0) {
    close(sv[0]);
    struct rlimit no_core = {0, 0};
    int l = -1;
    setrlimit(RLIMIT_CORE, &no_core);
    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
    if (ar_seccomp_load(&bpf, &l, &err) < 0)
      _exit(201);
    _exit(child_notify(&sv[1], l));
  }
  close(sv[1]);
  listener = recv_fd(sv[0]);
  if (listener >= 0 && seccomp_notify_alloc(&req, &resp) == 0 &&
      seccomp_notify_receive(listener, req) == 0) {
    got = req->data.nr == SYS_getppid && (pid_t)req->pid == pid;
    resp->id = req->id;
    resp->val = 4242;
    resp->error = 0;
    resp->flags = 0;
    seccomp_notify_respond(listener, resp);
  }
  ok(got, "NOTIFY: the listener receives getppid from the child%s", how);
  waitpid(pid, &status, 0);
  ok(exited(status, 0), "NOTIFY: the child sees our answer 4242%s (status %#x)", how, status);
  seccomp_notify_free(req, resp);
  if (listener >= 0)
    close(listener);
  close(sv[0]);
  ar_bpf_clear(&bpf);
}

static bool compile_fails(const struct ar_seccomp *sc, const char *want)
{
  cleanup_err ar_err err = NULL;
  struct ar_bpf bpf = {0};

  if (ar_seccomp_compile(sc, &bpf, &err) == 0) {
    ar_bpf_clear(&bpf);
    printf("# compiled, expected \"%s\"\n", want);
    return false;
  }
  if (strstr(err->msg, want) == NULL) {
    printf("# got \"%s\", expected \"%s\"\n", err->msg, want);
    return false;
  }
  return true;
}

static void test_names_and_arches(void)
{
  struct ar_syscall_rule r[] = {errno_rule(NAMES("no_such_syscall_ever", "getppid"), EXDEV)};
  struct ar_seccomp sc = filter(AR_SECCOMP_ALLOW, r, 1);

  ok(exited(run_filter(&sc, child_probe, NULL), EXDEV), "an unknown syscall name is skipped");

  sc.architectures = STRV("SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32");
  sc.n_architectures = 3;
  ok(exited(run_filter(&sc, child_probe, NULL), EXDEV), "architectures x86_64 x86 x32");

  sc.architectures = STRV("SCMP_ARCH_BAR");
  sc.n_architectures = 1;
  ok(compile_fails(&sc, "seccomp: unknown architecture \"SCMP_ARCH_BAR\""),
     "an unknown architecture is an error naming it");
  sc.n_architectures = 0;

  r[0] = rule(NAMES("getppid"), AR_SECCOMP_ALLOW);
  r[0].has_errno_ret = true;
  r[0].errno_ret = 1;
  ok(compile_fails(&sc, "seccomp: syscall \"getppid\": errnoRet is only valid"),
     "errnoRet on SCMP_ACT_ALLOW is an error naming the syscall");

  r[0].has_errno_ret = false;
  ok(exited(run_filter(&sc, child_probe, NULL), 0), "a rule with the default action is skipped");

  r[0] = errno_rule(NAMES("getppid"), EXDEV);
  r[0].args = &(struct ar_seccomp_arg){6, 0, 0, AR_OP_EQ};
  r[0].n_args = 1;
  ok(compile_fails(&sc, "seccomp: syscall \"getppid\": argument index 6"),
     "an argument index above 5 is an error");

  sc = filter(AR_SECCOMP_NOTIFY, NULL, 0);
  ok(compile_fails(&sc, "cannot be the default action"), "NOTIFY as default action is an error");
}

struct tsync_state {
  int go[2];
  long result;
};

static void *tsync_thread(void *arg)
{
  struct tsync_state *s = arg;
  char c;

  if (read(s->go[0], &c, 1) == 1)
    s->result = probe(0, 0);
  return NULL;
}

static void test_flags(void)
{
  struct ar_syscall_rule r[] = {errno_rule(NAMES("getppid"), EXDEV)};
  struct ar_seccomp sc = filter(AR_SECCOMP_ALLOW, r, 1);
  cleanup_err ar_err err = NULL;
  struct ar_bpf bpf = {0};
  int st;

  sc.flags = STRV("SECCOMP_FILTER_FLAG_LOG", "SECCOMP_FILTER_FLAG_SPEC_ALLOW");
  sc.n_flags = 2;
  if (ar_seccomp_compile(&sc, &bpf, &err) == 0) {
    ok(bpf.flags == (SECCOMP_FILTER_FLAG_LOG | SECCOMP_FILTER_FLAG_SPEC_ALLOW),
       "flags LOG and SPEC_ALLOW are kept for the load");
    ok(exited(run_loaded(&bpf, child_probe, NULL), EXDEV), "a filter with flags loads");
    ar_bpf_clear(&bpf);
  } else {
    ok(false, "flags: %s", err->msg);
    ok(false, "a filter with flags loads");
  }

  sc.flags = STRV("SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV");
  sc.n_flags = 1;
  if (ar_seccomp_compile(&sc, &bpf, &err) == 0) {
    ok(bpf.flags == 0, "WAIT_KILLABLE_RECV without a NOTIFY rule is dropped");
    ar_bpf_clear(&bpf);
  } else {
    ok(false, "WAIT_KILLABLE_RECV: %s", err->msg);
  }

  sc.flags = STRV("SECCOMP_FILTER_FLAG_BOGUS");
  ok(compile_fails(&sc, "seccomp: unknown flag \"SECCOMP_FILTER_FLAG_BOGUS\""),
     "an unknown flag is an error naming it");

  /* TSYNC: a thread started before the load must be filtered too */
  sc.flags = STRV("SECCOMP_FILTER_FLAG_TSYNC");
  st = -1;
  if (ar_seccomp_compile(&sc, &bpf, &err) == 0) {
    pid_t pid;
    fflush(stdout);
    pid = fork();
    if (pid == 0) {
      struct tsync_state s = {.result = 1};
      pthread_t t;
      cleanup_err ar_err e = NULL;
      if (pipe(s.go) < 0 || pthread_create(&t, NULL, tsync_thread, &s) != 0)
        _exit(41);
      prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
      if (ar_seccomp_load(&bpf, NULL, &e) < 0)
        _exit(42);
      if (write(s.go[1], "x", 1) != 1)
        _exit(43);
      pthread_join(t, NULL);
      _exit(s.result == -EXDEV ? 0 : 44);
    }
    waitpid(pid, &st, 0);
    ar_bpf_clear(&bpf);
  }
  ok(exited(st, 0), "TSYNC: the filter reaches an existing thread (status %#x)", st);
}

static double ns_per_call(long nr, uint64_t a0, int n)
{
  struct timespec t0, t1;

  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (int i = 0; i < n; i++)
    syscall(nr, a0);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  return ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / n;
}

static int child_bench(void *arg, int listener)
{
  /* personality(0xffffffff) only queries; its rule has argument checks, so the kernel's
   * per-syscall cache cannot skip the filter: this runs the whole BPF program */
  double p = ns_per_call(SYS_personality, 0xffffffffu, 200000);
  double g = ns_per_call(SYS_getppid, 0, 200000);
  double u = ns_per_call(SYS_uname, 0, 200000);

  printf("# filtered: personality %.0f ns, getppid %.0f ns, uname %.0f ns\n", p, g, u);
  fflush(stdout);
  return 0;
}

/* A profile the size of Docker's: every syscall allowed but a few, some with argument checks. */
static void test_big_profile(void)
{
  static const char *const denied[] = {"mount",  "umount2",     "kexec_load", "bpf",
                                       "ptrace", "personality", "clone",      "uname"};
  cleanup_free char **names = xcalloc(1024, sizeof(char *));
  struct ar_seccomp_arg pers[] = {{0, 0, 0, AR_OP_EQ},
                                  {0, 8, 0, AR_OP_EQ},
                                  {0, 0x20000, 0, AR_OP_EQ},
                                  {0, 0xffffffff, 0, AR_OP_EQ}};
  struct ar_seccomp_arg clone_arg = {0, 2114060288, 0, AR_OP_MASKED_EQ};
  struct ar_syscall_rule r[4];
  struct ar_seccomp sc;
  cleanup_err ar_err err = NULL;
  struct ar_bpf bpf = {0};
  size_t n = 0;

  for (int nr = 0; nr < 1024; nr++) {
    char *name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, nr);
    bool deny = false;

    if (name == NULL)
      continue;
    for (size_t i = 0; i < ARRAY_SIZE(denied); i++)
      deny |= strcmp(denied[i], name) == 0;
    if (deny)
      free(name);
    else
      names[n++] = name;
  }
  names[n++] = xstrdup("socketcall"); /* not an x86_64 syscall: a pseudo number */
  r[0] = rule(names, n, AR_SECCOMP_ALLOW);
  r[1] = rule(NAMES("personality"), AR_SECCOMP_ALLOW);
  r[1].args = pers; /* four comparisons of arg 0: ORed */
  r[1].n_args = ARRAY_SIZE(pers);
  r[2] = rule(NAMES("uname"), AR_SECCOMP_ERRNO); /* the default: skipped */
  r[3] = rule(NAMES("clone"), AR_SECCOMP_ALLOW);
  r[3].args = &clone_arg;
  r[3].n_args = 1;
  sc = filter(AR_SECCOMP_ERRNO, r, 4);
  sc.architectures = STRV("SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32");
  sc.n_architectures = 3;
  if (ar_seccomp_compile(&sc, &bpf, &err) < 0) {
    ok(false, "a Docker-sized profile compiles: %s", err->msg);
  } else {
    printf("# %zu syscalls allowed: %zu BPF instructions\n", n, bpf.n_insns);
    ok(bpf.n_insns < BPF_MAXINSNS, "a Docker-sized profile compiles (%zu instructions)",
       bpf.n_insns);
    printf("# unfiltered: personality %.0f ns, getppid %.0f ns\n",
           ns_per_call(SYS_personality, 0xffffffffu, 200000), ns_per_call(SYS_getppid, 0, 200000));
    ok(exited(run_loaded(&bpf, child_bench, NULL), 0), "the big profile loads and runs");
  }
  ar_bpf_clear(&bpf);
  for (size_t i = 0; i < n; i++)
    free(names[i]);
}

int main(void)
{
  ar_log_init(NULL, false, false);
  test_errno();
  test_default_errno();
  test_kill();
  test_trap_trace_log();
  test_args();
  test_notify(false);
  test_notify(true);
  test_names_and_arches();
  test_flags();
  test_big_profile();
  printf("1..%d\n", n_tests);
  return n_failed ? 1 : 0;
}
