/* TAP tests for runtime/cgroup*.c on the machine's real cgroups (v1, hybrid or v2).  Needs root.
 * Every cgroup made here nests under this process's own cgroup (relative paths), and is
 * destroyed at the end; the last tests check that nothing is left. */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <linux/bpf.h>

#include "runtime/cgroup-internal.h"
#include "runtime/cgroup.h"
#include "runtime/log.h"
#include "runtime/utils.h"
#include "tests/unit/tap.h"

static enum ar_cgroup_mode mode;
static char id_base[64];


static void skip(const char *why)
{
  n_tests++;
  printf("ok %d # SKIP %s\n", n_tests, why);
}

static void diag_err(ar_err *e)
{
  if (*e)
    printf("# error: %s\n", (*e)->msg);
  ar_error_free(e);
}

/* The first line of dir/file, or "" (static buffer). */
static const char *rd(const char *dir, const char *file)
{
  static char buf[4096];
  cleanup_free char *s = NULL;
  buf[0] = '\0';
  if (dir && ar_cg_read(dir, file, &s, NULL) == 0)
    snprintf(buf, sizeof(buf), "%.*s", (int)strcspn(s, "\n"), s);
  return buf;
}

static bool file_has(const char *dir, const char *file, const char *needle)
{
  cleanup_free char *s = NULL;
  return dir && ar_cg_read(dir, file, &s, NULL) == 0 && strstr(s, needle) != NULL;
}

static bool ends_with(const char *s, const char *suffix)
{
  size_t a = s ? strlen(s) : 0, b = strlen(suffix);
  return s && a >= b && strcmp(s + a - b, suffix) == 0;
}

static char *id_for(const char *name)
{
  return xasprintf("%s-%s", id_base, name);
}

/* ---- paths, no file system changes ---- */

static const char *any_ctl(void)
{
  return mode == AR_CGROUP_V2 ? "" : "pids";
}

static void test_paths(void)
{
  struct ar_cgroup *cg = NULL;
  cleanup_err ar_err e = NULL;
  static const struct {
    const char *in;
    const char *want; /* suffix of the path */
  } sd[] = {
      {"system.slice:docker:abc", "/system.slice/docker-abc.scope"},
      {"a-b.slice:p:n", "/a.slice/a-b.slice/p-n.scope"},
      {":p:n", "/system.slice/p-n.scope"},
      {"-.slice:p:n", "ROOT/p-n.scope"},
      {"user.slice:x:my.slice", "/user.slice/my.slice"},
  };
  int r;
  static const char *const sd_bad[] = {"bad",        "a:b",           "a--b.slice:p:n", "nope:p:n",
                                       "x.slice:p:", "x.slice:p:a/b", "a:b:c:d"};

  r = ar_cgroup_new("", "t", false, &cg, &e);
  ok(r == 0 && ends_with(ar_cgroup_path(cg, any_ctl()), "/t"),
     "empty cgroupsPath nests <id> under our own cgroup: %s",
     cg ? ar_cgroup_path(cg, any_ctl()) : "");
  diag_err(&e);
  ar_cgroup_free(cg);
  cg = NULL;

  {
    cleanup_free char *want =
        xasprintf("%s/b/c", mode == AR_CGROUP_V2 ? "/sys/fs/cgroup" : "/sys/fs/cgroup/pids");
    r = ar_cgroup_new("/a/../b//c/.", "t", false, &cg, &e);
    ok(r == 0 && strcmp(ar_cgroup_path(cg, any_ctl()), want) == 0,
       "absolute path is cleaned and used from the root: %s",
       cg ? ar_cgroup_path(cg, any_ctl()) : "");
    diag_err(&e);
    ar_cgroup_free(cg);
    cg = NULL;
  }

  r = ar_cgroup_new("../../x/y", "t", false, &cg, &e);
  ok(r == 0 && ends_with(ar_cgroup_path(cg, any_ctl()), "/x/y"),
     "relative path cannot climb out with ..: %s", cg ? ar_cgroup_path(cg, any_ctl()) : "");
  diag_err(&e);
  ar_cgroup_free(cg);
  cg = NULL;

  for (size_t i = 0; i < ARRAY_SIZE(sd); i++) {
    cleanup_free char *want =
        strncmp(sd[i].want, "ROOT", 4) == 0
            ? xasprintf("%s%s", mode == AR_CGROUP_V2 ? "/sys/fs/cgroup" : "/sys/fs/cgroup/pids",
                        sd[i].want + 4)
            : xstrdup(sd[i].want);
    r = ar_cgroup_new(sd[i].in, "t", true, &cg, &e);
    ok(r == 0 && ends_with(ar_cgroup_path(cg, any_ctl()), want), "systemd '%s' -> %s", sd[i].in,
       cg ? ar_cgroup_path(cg, any_ctl()) : "error");
    diag_err(&e);
    ar_cgroup_free(cg);
    cg = NULL;
  }
  ok(ar_cgroup_new(NULL, "idx", true, &cg, &e) == 0 &&
         ends_with(ar_cgroup_path(cg, any_ctl()), "/system.slice/agentrun-idx.scope"),
     "systemd with no cgroupsPath -> system.slice/agentrun-<id>.scope");
  diag_err(&e);
  ar_cgroup_free(cg);
  cg = NULL;
  for (size_t i = 0; i < ARRAY_SIZE(sd_bad); i++) {
    r = ar_cgroup_new(sd_bad[i], "t", true, &cg, &e);
    ok(r < 0 && e != NULL, "systemd '%s' refused: %s", sd_bad[i], e ? e->msg : "");
    ar_error_free(&e);
    ar_cgroup_free(cg);
    cg = NULL;
  }
  ok(ar_cgroup_new("", "../x", false, &cg, &e) < 0, "id '../x' refused");
  ar_error_free(&e);
  ok(ar_cgroup_new("/", "t", false, &cg, &e) < 0, "a path resolving to the root is refused");
  ar_error_free(&e);
  ok(ar_cgroup_new("/..", "t", false, &cg, &e) < 0, "'/..' is the root too: refused");
  ar_error_free(&e);
  {
    /* an absolute path naming our own cgroup (or an ancestor) would let kill hit us */
    cleanup_free char *self = NULL, *own = NULL;
    const char *p = NULL;
    if (ar_read_file("/proc/self/cgroup", &self, NULL, NULL) == 0)
      p = strstr(self, mode == AR_CGROUP_V2 ? "0::" : ":memory:");
    if (p) {
      p = strchr(p + 1, ':') + (mode == AR_CGROUP_V2 ? 1 : 0);
      p = strchr(p, '/');
      own = xstrndup(p, strcspn(p, "\n"));
    }
    if (own && strcmp(own, "/") != 0) {
      r = ar_cgroup_new(own, "t", false, &cg, &e);
      ok(r < 0, "cgroupsPath = our own cgroup %s is refused: %s", own, e ? e->msg : "");
      ar_error_free(&e);
    } else {
      skip("we are in the root cgroup");
    }
  }
}

static void test_serialize(void)
{
  struct ar_cgroup *cg = NULL, *back = NULL;
  cleanup_err ar_err e = NULL;
  cleanup_free char *s = NULL, *s2 = NULL;
  static const char *const ctls[] = {"", "memory", "pids", "cpu", "cpuset", "freezer", "devices"};
  bool same = true;

  if (ar_cgroup_new("odd;name%x/sub", "t", false, &cg, &e) < 0) {
    ok(false, "new for serialize");
    diag_err(&e);
    return;
  }
  s = ar_cgroup_serialize(cg);
  ok(ar_cgroup_deserialize(s, &back, &e) == 0, "deserialize '%s'", s);
  diag_err(&e);
  if (back == NULL)
    return;
  for (size_t i = 0; i < ARRAY_SIZE(ctls); i++) {
    const char *a = ar_cgroup_path(cg, ctls[i]), *b = ar_cgroup_path(back, ctls[i]);
    if ((a == NULL) != (b == NULL) || (a && strcmp(a, b) != 0))
      same = false;
  }
  s2 = ar_cgroup_serialize(back);
  ok(same && strcmp(s, s2) == 0, "round trip gives the same paths");
  ar_cgroup_free(cg);
  ar_cgroup_free(back);
  back = NULL;
  ok(ar_cgroup_deserialize("v3;x:/y", &back, &e) < 0 && back == NULL, "a bad state is refused");
  ar_error_free(&e);
}

/* ---- a real cgroup with a child in it ---- */

struct child {
  pid_t pid;
  int go;     /* parent -> child */
  int result; /* child -> parent */
};

enum { DEV_NULL_RW = 1, DEV_ZERO_R = 2, DEV_ZERO_W_DENIED = 4, DEV_FULL_DENIED = 8 };

static int open_errno(const char *p, int flags)
{
  int fd = open(p, flags | O_CLOEXEC);
  if (fd < 0)
    return errno;
  close(fd);
  return 0;
}

static void child_main(int go, int result)
{
  char c;
  unsigned char res = 0;
  struct timespec t0, t1;
  char *mem;

  if (read(go, &c, 1) != 1)
    _exit(1);
  /* some cpu and memory, so that the stats have something to show */
  clock_gettime(CLOCK_MONOTONIC, &t0);
  do
    clock_gettime(CLOCK_MONOTONIC, &t1);
  while ((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000 < 60);
  mem = mmap(NULL, 8 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mem != MAP_FAILED)
    memset(mem, 1, 8 << 20);
  if (open_errno("/dev/null", O_RDWR) == 0)
    res |= DEV_NULL_RW;
  if (open_errno("/dev/zero", O_RDONLY) == 0)
    res |= DEV_ZERO_R;
  if (open_errno("/dev/zero", O_WRONLY) == EPERM)
    res |= DEV_ZERO_W_DENIED;
  if (open_errno("/dev/full", O_RDONLY) == EPERM)
    res |= DEV_FULL_DENIED;
  if (write(result, &res, 1) != 1)
    _exit(1);
  for (;;)
    pause();
}

static struct child spawn(void)
{
  int go[2], res[2];
  struct child ch;

  if (pipe2(go, O_CLOEXEC) < 0 || pipe2(res, O_CLOEXEC) < 0)
    abort();
  ch.pid = fork();
  if (ch.pid == 0) {
    close(go[1]);
    close(res[0]);
    child_main(go[0], res[1]);
  }
  close(go[0]);
  close(res[1]);
  ch.go = go[1];
  ch.result = res[0];
  return ch;
}

static int run_child(struct child *ch)
{
  unsigned char r = 0;
  if (write(ch->go, "g", 1) != 1 || read(ch->result, &r, 1) != 1)
    return -1;
  return r;
}

static void reap(struct child *ch, int *ret_sig)
{
  int st = 0;
  close(ch->go);
  close(ch->result);
  waitpid(ch->pid, &st, 0);
  *ret_sig = WIFSIGNALED(st) ? WTERMSIG(st) : -1;
}

static bool in_cgroup(pid_t pid, const char *path)
{
  char p[64];
  cleanup_free char *s = NULL;
  const char *tail = strrchr(path, '/');
  snprintf(p, sizeof(p), "/proc/%d/cgroup", (int)pid);
  return ar_read_file(p, &s, NULL, NULL) == 0 && tail && strstr(s, tail) != NULL;
}

static struct ar_device_rule dev_rules[] = {
    {.allow = false, .type = 'a', .access = "rwm"},
    {.allow = true, .type = 'c', .has_major = true, .major = 1, .has_minor = true, .minor = 3},
    {.allow = true,
     .type = 'c',
     .has_major = true,
     .major = 1,
     .has_minor = true,
     .minor = 5,
     .access = "rwm"},
    /* later rule wins: take write and mknod away from /dev/zero again */
    {.allow = false,
     .type = 'c',
     .has_major = true,
     .major = 1,
     .has_minor = true,
     .minor = 5,
     .access = "wm"},
};

static void base_resources(struct ar_resources *r, bool swap_ok)
{
  memset(r, 0, sizeof(*r));
  r->has_memory = true;
  r->memory.has_limit = true;
  r->memory.limit = 64 << 20;
  r->memory.has_reservation = true;
  r->memory.reservation = 32 << 20;
  if (swap_ok) {
    r->memory.has_swap = true;
    r->memory.swap = 128 << 20;
  }
  r->has_pids = true;
  r->pids_limit = 32;
  r->has_cpu = true;
  r->cpu.has_shares = true;
  r->cpu.shares = 512;
  r->cpu.has_quota = true;
  r->cpu.quota = 50000;
  r->cpu.has_period = true;
  r->cpu.period = 100000;
  r->cpu.cpus = "0";
  r->cpu.mems = "0";
  r->devices = dev_rules;
  r->n_devices = ARRAY_SIZE(dev_rules);
}

static void check_limits(struct ar_cgroup *cg, bool swap_ok)
{
  const char *mem = ar_cgroup_path(cg, "memory"), *pids = ar_cgroup_path(cg, "pids");
  const char *cpu = ar_cgroup_path(cg, "cpu"), *cpuset = ar_cgroup_path(cg, "cpuset");

  if (mode == AR_CGROUP_V2) {
    ok(strcmp(rd(mem, "memory.max"), "67108864") == 0, "memory.max = %s", rd(mem, "memory.max"));
    ok(strcmp(rd(mem, "memory.low"), "33554432") == 0, "memory.low = %s", rd(mem, "memory.low"));
    if (swap_ok)
      ok(strcmp(rd(mem, "memory.swap.max"), "67108864") == 0, "memory.swap.max = swap - limit = %s",
         rd(mem, "memory.swap.max"));
    ok(strcmp(rd(cpu, "cpu.weight"), "20") == 0, "cpu.weight from shares 512 = %s",
       rd(cpu, "cpu.weight"));
    ok(strcmp(rd(cpu, "cpu.max"), "50000 100000") == 0, "cpu.max = %s", rd(cpu, "cpu.max"));
  } else {
    ok(strcmp(rd(mem, "memory.limit_in_bytes"), "67108864") == 0, "memory.limit_in_bytes = %s",
       rd(mem, "memory.limit_in_bytes"));
    ok(strcmp(rd(mem, "memory.soft_limit_in_bytes"), "33554432") == 0,
       "memory.soft_limit_in_bytes = %s", rd(mem, "memory.soft_limit_in_bytes"));
    if (swap_ok)
      ok(strcmp(rd(mem, "memory.memsw.limit_in_bytes"), "134217728") == 0,
         "memory.memsw.limit_in_bytes = %s", rd(mem, "memory.memsw.limit_in_bytes"));
    ok(strcmp(rd(cpu, "cpu.shares"), "512") == 0, "cpu.shares = %s", rd(cpu, "cpu.shares"));
    ok(strcmp(rd(cpu, "cpu.cfs_quota_us"), "50000") == 0, "cpu.cfs_quota_us = %s",
       rd(cpu, "cpu.cfs_quota_us"));
    ok(file_has(ar_cgroup_path(cg, "devices"), "devices.list", "c 1:3 rwm") &&
           file_has(ar_cgroup_path(cg, "devices"), "devices.list", "c 1:5 r\n") &&
           !file_has(ar_cgroup_path(cg, "devices"), "devices.list", "a *:*"),
       "devices.list holds exactly the allowed devices");
  }
  ok(strcmp(rd(pids, "pids.max"), "32") == 0, "pids.max = %s", rd(pids, "pids.max"));
  if (cpuset && ar_cg_exists(cpuset, "cpuset.cpus"))
    ok(strcmp(rd(cpuset, "cpuset.cpus"), "0") == 0, "cpuset.cpus = %s", rd(cpuset, "cpuset.cpus"));
  else
    skip("no cpuset controller");
}

static void test_update(struct ar_cgroup *cg)
{
  struct ar_resources r;
  cleanup_err ar_err e = NULL;
  const char *mem = ar_cgroup_path(cg, "memory"), *pids = ar_cgroup_path(cg, "pids");
  const char *cpu = ar_cgroup_path(cg, "cpu");

  memset(&r, 0, sizeof(r));
  r.has_pids = true;
  r.pids_limit = -1;
  r.has_cpu = true;
  r.cpu.has_period = true;
  r.cpu.period = 200000;
  ok(ar_cgroup_update(cg, &r, &e) == 0, "update pids to unlimited and cpu period only");
  diag_err(&e);
  ok(strcmp(rd(pids, "pids.max"), "max") == 0, "pids.max = max");
  if (mode == AR_CGROUP_V2)
    ok(strcmp(rd(cpu, "cpu.max"), "50000 200000") == 0, "period changed, quota kept: %s",
       rd(cpu, "cpu.max"));
  else
    ok(strcmp(rd(cpu, "cpu.cfs_period_us"), "200000") == 0 &&
           strcmp(rd(cpu, "cpu.cfs_quota_us"), "50000") == 0,
       "period changed, quota kept");
  ok(strcmp(rd(mem, mode == AR_CGROUP_V2 ? "memory.max" : "memory.limit_in_bytes"), "67108864") ==
         0,
     "memory untouched by an update without memory");

  memset(&r, 0, sizeof(r));
  r.has_memory = true;
  r.memory.has_limit = true;
  r.memory.limit = 4096;
  r.memory.has_check_before_update = true;
  r.memory.check_before_update = true;
  ok(ar_cgroup_update(cg, &r, &e) < 0, "checkBeforeUpdate refuses a limit below usage");
  if (e)
    printf("# %s\n", e->msg);
  ar_error_free(&e);

  memset(&r, 0, sizeof(r));
  r.has_memory = true;
  r.memory.has_limit = true;
  r.memory.limit = 96 << 20;
  r.memory.has_swap = true;
  r.memory.swap = -1;
  ok(ar_cgroup_update(cg, &r, &e) == 0 &&
         strcmp(rd(mem, mode == AR_CGROUP_V2 ? "memory.max" : "memory.limit_in_bytes"),
                "100663296") == 0,
     "memory raised to 96M with unlimited swap");
  diag_err(&e);
}

static void test_stats(struct ar_cgroup *cg)
{
  struct ar_cgroup_stats st;
  cleanup_err ar_err e = NULL;

  memset(&st, 0, sizeof(st));
  ok(ar_cgroup_stats(cg, &st, &e) == 0, "stats");
  diag_err(&e);
  ok(st.cpu_usage_ns > 10 * 1000 * 1000, "cpu usage %llu ns", (unsigned long long)st.cpu_usage_ns);
  ok(st.mem_usage >= (8 << 20), "memory usage %llu", (unsigned long long)st.mem_usage);
  ok(!st.has_mem_max_usage || st.mem_max_usage >= st.mem_usage, "max usage %llu",
     (unsigned long long)st.mem_max_usage);
  ok(st.mem_limit == 64 << 20, "memory limit %llu", (unsigned long long)st.mem_limit);
  ok(st.pids_current >= 1 && st.pids_limit == 32, "pids %llu / %llu",
     (unsigned long long)st.pids_current, (unsigned long long)st.pids_limit);
  printf("# cpu user %llu sys %llu periods %llu throttled %llu; pids peak %s%llu\n",
         (unsigned long long)st.cpu_user_ns, (unsigned long long)st.cpu_system_ns,
         (unsigned long long)st.cpu_periods, (unsigned long long)st.cpu_throttled_periods,
         st.has_pids_peak ? "" : "(none) ", (unsigned long long)st.pids_peak);
}

static void test_freeze(struct ar_cgroup *cg)
{
  cleanup_err ar_err e = NULL;
  bool frozen = false;

  ok(ar_cgroup_freeze(cg, true, &e) == 0 && ar_cgroup_is_frozen(cg, &frozen, &e) == 0 && frozen,
     "freeze");
  diag_err(&e);
  ok(ar_cgroup_freeze(cg, false, &e) == 0 && ar_cgroup_is_frozen(cg, &frozen, &e) == 0 && !frozen,
     "thaw");
  diag_err(&e);
}

/* A process that touches far more than the limit must be OOM-killed, and counted. */
static void test_oom(struct ar_cgroup *cg)
{
  cleanup_err ar_err e = NULL;
  struct ar_cgroup_stats st;
  int go[2], status = 0;
  pid_t pid;
  char c;

  if (pipe2(go, O_CLOEXEC) < 0)
    abort();
  pid = fork();
  if (pid == 0) {
    char *m;
    close(go[1]);
    if (read(go[0], &c, 1) != 1)
      _exit(1);
    m = mmap(NULL, 256 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m != MAP_FAILED)
      memset(m, 1, 256 << 20);
    _exit(0);
  }
  close(go[0]);
  if (ar_cgroup_enter(cg, pid, &e) < 0)
    diag_err(&e);
  if (write(go[1], "g", 1) != 1)
    abort();
  close(go[1]);
  waitpid(pid, &status, 0);
  ok(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "a 256M hog in a 64M cgroup is killed");
  memset(&st, 0, sizeof(st));
  status = ar_cgroup_stats(cg, &st, &e);
  ok(status == 0 && st.oom_kills >= 1, "oom_kill counted: %llu", (unsigned long long)st.oom_kills);
  diag_err(&e);
}

/* A sub-cgroup, as a container may make: its processes are listed, killed, and it is removed. */
static pid_t spawn_in_sub(struct ar_cgroup *cg, char **ret_sub)
{
  const char *dir = mode == AR_CGROUP_V2 ? ar_cgroup_path(cg, "") : ar_cgroup_path(cg, "freezer");
  pid_t pid;

  *ret_sub = NULL;
  if (dir == NULL)
    return -1;
  *ret_sub = xasprintf("%s/sub", dir);
  if (mkdir(*ret_sub, 0755) < 0)
    return -1;
  pid = fork();
  if (pid == 0) {
    for (;;)
      pause();
  }
  if (ar_cgroup_enter(cg, pid, NULL) < 0 ||
      ar_cg_writef(*ret_sub, "cgroup.procs", NULL, "%d", pid) < 0)
    printf("# could not move %d into %s\n", pid, *ret_sub);
  return pid;
}

static bool gone(struct ar_cgroup *cg)
{
  static const char *const ctls[] = {"",       "memory",  "pids",    "cpu",   "cpuacct",
                                     "cpuset", "freezer", "devices", "blkio", "name=systemd"};
  for (size_t i = 0; i < ARRAY_SIZE(ctls); i++) {
    const char *p = ar_cgroup_path(cg, ctls[i]);
    struct stat st;
    if (p && stat(p, &st) == 0) {
      printf("# still there: %s\n", p);
      return false;
    }
  }
  return true;
}

static void test_lifecycle(void)
{
  cleanup_free char *id = id_for("main"), *sub = NULL;
  cleanup_err ar_err e = NULL;
  struct ar_cgroup *cg = NULL, *dup = NULL;
  struct ar_resources res;
  struct child ch;
  bool swap_ok;
  pid_t sub_pid, *pids = NULL;
  size_t n_pids = 0;
  int devs, sig = 0, sub_status = 0;

  if (ar_cgroup_new("", id, false, &cg, &e) < 0) {
    ok(false, "new");
    diag_err(&e);
    return;
  }
  /* swap: v1 needs memsw files, v2 needs memory.swap.max; find out after create. */
  base_resources(&res, false);
  ok(ar_cgroup_create(cg, &res, &e) == 0, "create with limits at %s",
     ar_cgroup_path(cg, any_ctl()));
  diag_err(&e);
  swap_ok = mode == AR_CGROUP_V2
                ? ar_cg_exists(ar_cgroup_path(cg, "memory"), "memory.swap.max")
                : ar_cg_exists(ar_cgroup_path(cg, "memory"), "memory.memsw.limit_in_bytes");
  if (swap_ok) {
    base_resources(&res, true);
    ok(ar_cgroup_update(cg, &res, &e) == 0, "swap limit applied");
    diag_err(&e);
  }
  check_limits(cg, swap_ok);

  ch = spawn();
  ok(ar_cgroup_enter(cg, ch.pid, &e) == 0, "enter child %d", (int)ch.pid);
  diag_err(&e);
  ok(in_cgroup(ch.pid, ar_cgroup_path(cg, any_ctl())), "/proc/%d/cgroup shows the new cgroup",
     (int)ch.pid);
  devs = run_child(&ch);
  ok(devs >= 0 && (devs & DEV_NULL_RW), "/dev/null allowed rw");
  ok(devs >= 0 && (devs & DEV_ZERO_R), "/dev/zero allowed r");
  ok(devs >= 0 && (devs & DEV_ZERO_W_DENIED), "/dev/zero w denied by the later rule");
  ok(devs >= 0 && (devs & DEV_FULL_DENIED), "/dev/full denied by deny-all");

  ok(ar_cgroup_new("", id, false, &dup, &e) == 0 && ar_cgroup_create(dup, NULL, &e) < 0,
     "creating over a busy cgroup is refused");
  if (e)
    printf("# %s\n", e->msg);
  ar_error_free(&e);
  ar_cgroup_free(dup);

  ok(ar_cgroup_pids(cg, &pids, &n_pids, &e) == 0 && n_pids == 1 && pids[0] == ch.pid,
     "pids lists the child");
  diag_err(&e);
  free(pids);
  test_stats(cg);
  test_freeze(cg);
  test_update(cg);
  {
    struct ar_resources back;
    base_resources(&back, false);
    back.n_devices = 0;
    back.has_cpu = back.has_pids = false;
    ar_cgroup_update(cg, &back, NULL);
  }
  test_oom(cg);

  sub_pid = spawn_in_sub(cg, &sub);
  devs = ar_cgroup_pids(cg, &pids, &n_pids, &e);
  ok(devs == 0 && n_pids == 2, "pids include a sub-cgroup (%zu)", n_pids);
  diag_err(&e);
  free(pids);

  ok(ar_cgroup_kill(cg, SIGKILL, &e) == 0, "kill SIGKILL");
  diag_err(&e);
  reap(&ch, &sig);
  waitpid(sub_pid, &sub_status, 0);
  ok(sig == SIGKILL && WIFSIGNALED(sub_status) && WTERMSIG(sub_status) == SIGKILL,
     "child and sub-cgroup child died of SIGKILL");
  ok(ar_cgroup_kill(cg, SIGTERM, &e) == 0, "kill on an empty cgroup is fine");
  diag_err(&e);

  {
    cleanup_free char *s = ar_cgroup_serialize(cg);
    struct ar_cgroup *again = NULL;
    ok(ar_cgroup_deserialize(s, &again, &e) == 0 && ar_cgroup_destroy(again, &e) == 0,
       "destroy through the state string");
    diag_err(&e);
    ar_cgroup_free(again);
  }
  ok(gone(cg), "every directory is gone, the sub-cgroup too");
  ok(ar_cgroup_destroy(cg, &e) == 0, "destroy again: missing directories are fine");
  diag_err(&e);
  ar_cgroup_free(cg);
}

/* destroy must kill what is still running, and wait for it to leave. */
static void test_destroy_busy(void)
{
  cleanup_free char *id = id_for("busy");
  cleanup_err ar_err e = NULL;
  struct ar_cgroup *cg = NULL;
  struct child ch;
  int sig = 0;

  if (ar_cgroup_new("", id, false, &cg, &e) < 0 || ar_cgroup_create(cg, NULL, &e) < 0) {
    ok(false, "create (no resources)");
    diag_err(&e);
    ar_cgroup_free(cg);
    return;
  }
  ch = spawn();
  ar_cgroup_enter(cg, ch.pid, NULL);
  run_child(&ch);
  ar_cgroup_freeze(cg, true, NULL); /* a paused container must die too */
  ok(ar_cgroup_destroy(cg, &e) == 0, "destroy a frozen cgroup with a live process");
  diag_err(&e);
  reap(&ch, &sig);
  ok(sig == SIGKILL, "its process was killed");
  ok(gone(cg), "and the directories are gone");
  ar_cgroup_free(cg);
}

static bool hugetlb_available(struct ar_cgroup *cg)
{
  const char *u = ar_cgroup_path(cg, "");
  cleanup_free char *parent = u ? xstrndup(u, (size_t)(strrchr(u, '/') - u)) : NULL;
  if (mode != AR_CGROUP_V1 && parent && file_has(parent, "cgroup.controllers", "hugetlb"))
    return access("/sys/kernel/mm/hugepages/hugepages-2048kB", F_OK) == 0;
  return ar_cgroup_path(cg, "hugetlb") != NULL;
}

static void test_hugetlb_unified(void)
{
  cleanup_free char *id = id_for("huge");
  cleanup_err ar_err e = NULL;
  struct ar_cgroup *cg = NULL;
  struct ar_resources r;
  struct ar_hugepage_limit hl = {.page_size = "2MB", .limit = 4 << 20};
  struct ar_kv kv[] = {{"cgroup.max.depth", "3"}};
  struct ar_kv bad[] = {{"cgroup.procs", "1"}};
  struct ar_kv bad2[] = {{"../cgroup.max.depth", "1"}};
  const char *dir;

  if (ar_cgroup_new("", id, false, &cg, &e) < 0) {
    diag_err(&e);
    return;
  }
  memset(&r, 0, sizeof(r));
  if (hugetlb_available(cg)) {
    r.hugepage_limits = &hl;
    r.n_hugepage_limits = 1;
  }
  if (mode != AR_CGROUP_V1) {
    r.unified = kv;
    r.n_unified = 1;
  }
  ok(ar_cgroup_create(cg, &r, &e) == 0, "create with hugetlb and unified");
  diag_err(&e);
  if (r.n_hugepage_limits) {
    dir = ar_cgroup_path(cg, "hugetlb") ? ar_cgroup_path(cg, "hugetlb") : ar_cgroup_path(cg, "");
    ok(strcmp(rd(dir, ar_cgroup_path(cg, "hugetlb") && mode != AR_CGROUP_V2
                          ? "hugetlb.2MB.limit_in_bytes"
                          : "hugetlb.2MB.max"),
              "4194304") == 0,
       "hugetlb 2MB limit in %s", dir);
  } else {
    skip("no hugetlb controller");
  }
  if (mode != AR_CGROUP_V1) {
    ok(strcmp(rd(ar_cgroup_path(cg, ""), "cgroup.max.depth"), "3") == 0,
       "unified key written verbatim");
    r.n_hugepage_limits = 0;
    r.unified = bad;
    ok(ar_cgroup_update(cg, &r, &e) < 0, "unified cgroup.procs refused");
    ar_error_free(&e);
    r.unified = bad2;
    ok(ar_cgroup_update(cg, &r, &e) < 0, "unified key with '/' refused");
    ar_error_free(&e);
  } else {
    r.unified = kv;
    r.n_unified = 1;
    ok(ar_cgroup_update(cg, &r, &e) < 0, "unified refused on v1");
    ar_error_free(&e);
  }
  ok(ar_cgroup_destroy(cg, &e) == 0 && gone(cg), "destroyed");
  diag_err(&e);
  ar_cgroup_free(cg);
}

/* The eBPF device filter, on the unified hierarchy (in hybrid mode it applies there too). */
static int attached_progs(const char *dir)
{
  cleanup_close int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  uint32_t ids[16];
  union bpf_attr a;
  memset(&a, 0, sizeof(a));
  a.query.target_fd = (uint32_t)fd;
  a.query.attach_type = BPF_CGROUP_DEVICE;
  a.query.prog_ids = (uint64_t)(uintptr_t)ids;
  a.query.prog_cnt = 16;
  if (syscall(__NR_bpf, BPF_PROG_QUERY, &a, sizeof(a)) < 0)
    return -1;
  return (int)a.query.prog_cnt;
}

static void test_ebpf(void)
{
  cleanup_free char *id = id_for("bpf");
  cleanup_err ar_err e = NULL;
  struct ar_cgroup *cg = NULL;
  struct child ch;
  const char *u;
  int devs, sig;
  void *insns = NULL;
  size_t count = 0;

  devs = ar_cg_devices_bpf(dev_rules, ARRAY_SIZE(dev_rules), &insns, &count, &e);
  ok(devs == 0 && count > 10, "device program built (%zu instructions)", count);
  diag_err(&e);
  free(insns);
  if (mode == AR_CGROUP_V1) {
    skip("no unified hierarchy for the eBPF device filter");
    return;
  }
  if (ar_cgroup_new("", id, false, &cg, &e) < 0 || ar_cgroup_create(cg, NULL, &e) < 0) {
    ok(false, "create");
    diag_err(&e);
    ar_cgroup_free(cg);
    return;
  }
  u = ar_cgroup_path(cg, "");
  ok(ar_cg_devices_v2(u, dev_rules, ARRAY_SIZE(dev_rules), &e) == 0, "attach device program");
  diag_err(&e);
  devs = ar_cg_devices_v2(u, dev_rules, ARRAY_SIZE(dev_rules), &e);
  ok(devs == 0 && attached_progs(u) == 1, "replacing it leaves one program attached (%d)",
     attached_progs(u));
  diag_err(&e);
  ch = spawn();
  ar_cgroup_enter(cg, ch.pid, NULL);
  devs = run_child(&ch);
  ok(devs == (DEV_NULL_RW | DEV_ZERO_R | DEV_ZERO_W_DENIED | DEV_FULL_DENIED),
     "eBPF filter: null rw, zero r only, full denied (%d)", devs);
  ar_cgroup_destroy(cg, NULL);
  reap(&ch, &sig);
  ok(gone(cg), "destroyed");
  ar_cgroup_free(cg);
}

/* A nested relative path: the levels above the leaf are made too, and they must be usable
 * (v1 cpuset needs cpus/mems copied down; v2 needs the controllers enabled at each level). */
static void test_nested(void)
{
  cleanup_free char *top = id_for("nest"), *path = xasprintf("%s/mid/leaf", top);
  cleanup_err ar_err e = NULL;
  struct ar_cgroup *cg = NULL, *topcg = NULL;
  struct ar_resources r;
  struct child ch;
  int sig = 0;

  memset(&r, 0, sizeof(r));
  r.has_pids = true;
  r.pids_limit = 7;
  r.has_cpu = true;
  r.cpu.cpus = "0";
  if (ar_cgroup_new(path, "t", false, &cg, &e) < 0 || ar_cgroup_create(cg, &r, &e) < 0) {
    ok(false, "create %s", path);
    diag_err(&e);
    ar_cgroup_free(cg);
    return;
  }
  ok(strcmp(rd(ar_cgroup_path(cg, "pids"), "pids.max"), "7") == 0, "nested leaf has its limit");
  ch = spawn();
  ok(ar_cgroup_enter(cg, ch.pid, &e) == 0, "a process can join the nested leaf");
  diag_err(&e);
  ok(ar_cgroup_destroy(cg, &e) == 0, "destroy the nested leaf");
  diag_err(&e);
  reap(&ch, &sig);
  /* As runc, the levels above the leaf stay: remove them the same way. */
  if (ar_cgroup_new(top, "t", false, &topcg, &e) == 0)
    ar_cgroup_destroy(topcg, &e);
  diag_err(&e);
  ok(topcg && gone(topcg), "and its parents removed");
  ar_cgroup_free(cg);
  ar_cgroup_free(topcg);
}

static void test_leftovers(void)
{
  /* Nothing named after this run may be left in any hierarchy. */
  struct ar_cgroup *cg = NULL;
  bool clean = true;
  static const char *const names[] = {"main", "busy", "huge", "bpf", "nest"};

  for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
    cleanup_free char *id = id_for(names[i]);
    if (ar_cgroup_new("", id, false, &cg, NULL) == 0 && !gone(cg))
      clean = false;
    ar_cgroup_free(cg);
    cg = NULL;
  }
  ok(clean, "no cgroup of this run is left behind");
}

int main(void)
{
  static const char *const names[] = {"v1", "hybrid", "v2"};

  ar_log_init(NULL, false, false);
  if (geteuid() != 0) {
    printf("1..0 # SKIP needs root\n");
    return 0;
  }
  mode = ar_cgroup_detect_mode();
  snprintf(id_base, sizeof(id_base), "ar-test-%d", (int)getpid());
  printf("# cgroup mode: %s\n", names[mode]);
  ok(true, "mode detected: %s", names[mode]);
  test_paths();
  test_serialize();
  test_lifecycle();
  test_destroy_busy();
  test_hugetlb_unified();
  test_ebpf();
  test_nested();
  test_leftovers();
  printf("1..%d\n", n_tests);
  return n_failed ? 1 : 0;
}
