/* bench-loop: time N runs of a command on the host, for contrib/bench/run.sh.
 *
 *   bench-loop [-n N] [-j J] [-d MS] [-O] -- CMD ARGS...
 *       Runs CMD N times, J at a time. In each argument "%i" becomes the run's index and
 *       "%w" the worker slot (0..J-1), so that each run can have its own container id and
 *       each worker its own bundle. With -d, one at a time with MS ms of idle time before
 *       each run, which wall_ns leaves out: what an isolated run costs, after the kernel's
 *       deferred work (RCU grace periods, rcu_sync) from the previous one has settled.
 *   bench-loop -s BUNDLE -P PIDFILE [-p PREFIX] [-n N] -- RUNTIME GLOBAL-ARGS...
 *       Split mode: for each run, times "create --bundle BUNDLE --pid-file PIDFILE ID",
 *       "start ID" and, once the container's init has exited, "delete ID".
 *
 * It prints one line of key=value pairs: n, fail, wall_ns, maxrss_kb (the largest
 * ru_maxrss of a timed command, or of create in split mode), cpu_us (user + system CPU time
 * of every process that ended under it: runtimes, monitors, container inits, reaped here) and,
 * in split mode, create_ns, start_ns and delete_ns (sums over the runs).
 *
 * It makes itself a child subreaper: the container inits that runc, crun and agentrun leave
 * behind are reparented here and reaped at once, instead of piling up as zombies under a
 * pid 1 that may be slow to reap them.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_SLOTS 64
#define MAX_ARGS 256

struct opts {
  long n, jobs, delay_ms;
  bool keep_stdout;
  const char *bundle, *pid_file, *prefix;
  char **cmd;
  int n_cmd;
};

struct totals {
  long fail;
  uint64_t wall_ns, create_ns, start_ns, delete_ns;
  long maxrss_kb;
};

static uint64_t now_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static void die(const char *what)
{
  fprintf(stderr, "bench-loop: %s: %s\n", what, strerror(errno));
  exit(2);
}

/* "%i" -> index, "%w" -> slot; every other character is copied. */
static char *expand(const char *arg, long index, long slot)
{
  size_t cap = strlen(arg) + 64, len = 0;
  char *out = malloc(cap);
  if (out == NULL)
    die("malloc");
  for (const char *p = arg; *p; p++) {
    if (p[0] == '%' && (p[1] == 'i' || p[1] == 'w')) {
      len += snprintf(out + len, cap - len, "%ld", p[1] == 'i' ? index : slot);
      p++;
    } else {
      out[len++] = *p;
    }
    if (len + 24 >= cap && (out = realloc(out, cap *= 2)) == NULL)
      die("realloc");
  }
  out[len] = '\0';
  return out;
}

static pid_t spawn(char **argv, bool keep_stdout)
{
  pid_t pid = fork();
  if (pid < 0)
    die("fork");
  if (pid == 0) {
    int null = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null < 0 || dup2(null, 0) < 0 || (!keep_stdout && dup2(null, 1) < 0))
      _exit(126);
    execvp(argv[0], argv);
    fprintf(stderr, "bench-loop: exec %s: %s\n", argv[0], strerror(errno));
    _exit(127);
  }
  return pid;
}

/* Waits for one given child, reaping any reparented orphan that exits meanwhile. */
static int wait_child(pid_t pid, struct rusage *ru)
{
  for (;;) {
    int status;
    pid_t r = wait4(-1, &status, 0, ru);
    if (r < 0 && errno == EINTR)
      continue;
    if (r < 0)
      die("wait4");
    if (r == pid)
      return status;
  }
}

static void account(struct totals *t, int status, const struct rusage *ru)
{
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    t->fail++;
  if (ru->ru_maxrss > t->maxrss_kb)
    t->maxrss_kb = ru->ru_maxrss;
}

static char **build_argv(const struct opts *o, char **extra, long index, long slot)
{
  static char *argv[MAX_ARGS];
  int n = 0;
  for (int i = 0; i < o->n_cmd && n < MAX_ARGS - 1; i++)
    argv[n++] = expand(o->cmd[i], index, slot);
  for (int i = 0; extra && extra[i] && n < MAX_ARGS - 1; i++)
    argv[n++] = expand(extra[i], index, slot);
  argv[n] = NULL;
  return argv;
}

static void free_argv(char **argv)
{
  for (int i = 0; argv[i]; i++)
    free(argv[i]);
}

/* Timed command; returns its duration, adds its status and RSS to *t when acct. */
static uint64_t timed(const struct opts *o, char **extra, long index, struct totals *t, bool acct)
{
  char **argv = build_argv(o, extra, index, 0);
  struct rusage ru;
  uint64_t t0 = now_ns();
  int status = wait_child(spawn(argv, o->keep_stdout), &ru);
  uint64_t dt = now_ns() - t0;
  if (acct)
    account(t, status, &ru);
  else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    t->fail++;
  free_argv(argv);
  return dt;
}

static void run_loop(const struct opts *o, struct totals *t)
{
  pid_t slot_pid[MAX_SLOTS] = {0};
  long next = 0, running = 0;
  uint64_t t0 = now_ns();
  for (;;) {
    for (long s = 0; s < o->jobs && next < o->n; s++) {
      if (slot_pid[s] != 0)
        continue;
      char **argv = build_argv(o, NULL, next++, s);
      slot_pid[s] = spawn(argv, o->keep_stdout);
      free_argv(argv);
      running++;
    }
    if (running == 0)
      break;
    int status;
    struct rusage ru;
    pid_t r = wait4(-1, &status, 0, &ru);
    if (r < 0 && errno == EINTR)
      continue;
    if (r < 0)
      die("wait4");
    for (long s = 0; s < o->jobs; s++)
      if (slot_pid[s] == r) {
        slot_pid[s] = 0;
        running--;
        account(t, status, &ru);
      }
  }
  t->wall_ns = now_ns() - t0;
}

static void run_spaced(const struct opts *o, struct totals *t)
{
  const struct timespec idle = {o->delay_ms / 1000, (o->delay_ms % 1000) * 1000000};
  for (long i = 0; i < o->n; i++) {
    nanosleep(&idle, NULL);
    while (waitpid(-1, NULL, WNOHANG) > 0)
      ;
    t->wall_ns += timed(o, NULL, i, t, true);
  }
}

static pid_t read_pid(const char *path)
{
  char buf[32] = "";
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -1;
  ssize_t r = read(fd, buf, sizeof(buf) - 1);
  close(fd);
  return r > 0 ? (pid_t)atol(buf) : -1;
}

/* The init is reparented here once the runtime exits, so it is reaped as soon as it ends. */
static bool wait_exit(pid_t pid, uint64_t timeout_ns)
{
  uint64_t deadline = now_ns() + timeout_ns;
  const struct timespec nap = {0, 20000};
  while (now_ns() < deadline) {
    while (waitpid(-1, NULL, WNOHANG) > 0)
      ;
    if (kill(pid, 0) < 0 && errno == ESRCH)
      return true;
    nanosleep(&nap, NULL);
  }
  return false;
}

static void run_split(const struct opts *o, struct totals *t)
{
  char *create[] = {"create", "--bundle", (char *)o->bundle, "--pid-file", (char *)o->pid_file,
                    NULL,     NULL};
  char *start[] = {"start", NULL, NULL}, *del[] = {"delete", NULL, NULL};
  char *force[] = {"delete", "--force", NULL, NULL};
  char id[256];
  uint64_t t0 = now_ns();
  for (long i = 0; i < o->n; i++) {
    snprintf(id, sizeof(id), "%s-%ld", o->prefix, i);
    create[5] = start[1] = del[1] = force[2] = id;
    unlink(o->pid_file);
    t->create_ns += timed(o, create, i, t, true);
    pid_t pid = read_pid(o->pid_file);
    t->start_ns += timed(o, start, i, t, false);
    if (pid <= 0 || !wait_exit(pid, 10000000000ull)) {
      fprintf(stderr, "bench-loop: %s did not exit, forcing delete\n", id);
      t->fail++;
      timed(o, force, i, t, false);
      continue;
    }
    t->delete_ns += timed(o, del, i, t, false);
  }
  t->wall_ns = now_ns() - t0;
}

static void usage(void)
{
  fprintf(stderr, "usage: bench-loop [-n N] [-j J] [-d MS] [-O] -- CMD ARGS...\n"
                  "       bench-loop -s BUNDLE -P PIDFILE [-p PREFIX] [-n N] -- RUNTIME ARGS...\n");
  exit(2);
}

static void parse(int argc, char **argv, struct opts *o)
{
  int c;
  *o = (struct opts){.n = 1, .jobs = 1, .prefix = "bench"};
  while ((c = getopt(argc, argv, "+n:j:d:Os:P:p:")) != -1) {
    switch (c) {
    case 'n':
      o->n = atol(optarg);
      break;
    case 'j':
      o->jobs = atol(optarg);
      break;
    case 'd':
      o->delay_ms = atol(optarg);
      break;
    case 'O':
      o->keep_stdout = true;
      break;
    case 's':
      o->bundle = optarg;
      break;
    case 'P':
      o->pid_file = optarg;
      break;
    case 'p':
      o->prefix = optarg;
      break;
    default:
      usage();
    }
  }
  if (optind >= argc || o->n < 1 || o->jobs < 1 || o->jobs > MAX_SLOTS ||
      (o->bundle && !o->pid_file) || o->delay_ms < 0 || (o->delay_ms && o->jobs != 1))
    usage();
  o->cmd = argv + optind;
  o->n_cmd = argc - optind;
}

int main(int argc, char **argv)
{
  struct opts o;
  struct totals t = {0};
  parse(argc, argv, &o);
  if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0)
    die("PR_SET_CHILD_SUBREAPER");
  if (o.bundle)
    run_split(&o, &t);
  else
    o.delay_ms ? run_spaced(&o, &t) : run_loop(&o, &t);
  while (waitpid(-1, NULL, WNOHANG) > 0)
    ;
  struct rusage ru;
  getrusage(RUSAGE_CHILDREN, &ru);
  unsigned long long cpu_us = (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000ull +
                              ru.ru_utime.tv_usec + ru.ru_stime.tv_usec;
  printf("n=%ld fail=%ld wall_ns=%llu maxrss_kb=%ld cpu_us=%llu", o.n, t.fail,
         (unsigned long long)t.wall_ns, t.maxrss_kb, cpu_us);
  if (o.bundle)
    printf(" create_ns=%llu start_ns=%llu delete_ns=%llu", (unsigned long long)t.create_ns,
           (unsigned long long)t.start_ns, (unsigned long long)t.delete_ns);
  printf("\n");
  return 0;
}
