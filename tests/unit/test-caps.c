/* TAP tests for runtime/caps.c and runtime/rlimits.c.  Everything that changes credentials runs
 * in a forked child, which prints what the kernel reports (/proc/self/status, getrlimit, ...) to
 * its stdout; its stderr (where ar_warn goes) is captured too. */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/personality.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sched.h>
#include <linux/ioprio.h>

#include "runtime/caps.h"
#include "runtime/log.h"
#include "runtime/utils.h"
#include "tests/unit/tap.h"



static void skip(const char *why, const char *what)
{
  printf("ok %d - %s # SKIP %s\n", ++n_tests, what, why);
  fflush(stdout);
}

#define STRV(...) ((char *[]){__VA_ARGS__})
#define NSTRV(...) (sizeof((char *[]){__VA_ARGS__}) / sizeof(char *))
#define BIT(c) (UINT64_C(1) << (c))

struct child_out {
  int status;
  char out[8192];
  char err[4096];
};

static void read_pipe(int fd, char *buf, size_t len)
{
  ssize_t n = ar_read_all(fd, buf, len - 1);
  buf[n < 0 ? 0 : n] = '\0';
  close(fd);
}

/* Run fn in a child with stdout and stderr captured; fn's return value is the exit code. */
static void run_child(int (*fn)(void *), void *arg, struct child_out *o)
{
  int out[2], errp[2];
  pid_t pid;

  memset(o, 0, sizeof(*o));
  o->status = -1;
  if (pipe(out) < 0 || pipe(errp) < 0)
    return;
  fflush(stdout);
  pid = fork();
  if (pid == 0) {
    dup2(out[1], 1);
    dup2(errp[1], 2);
    close(out[0]);
    close(errp[0]);
    int rc = fn(arg);
    fflush(stdout); /* _exit does not flush, and stdout is a pipe now */
    _exit(rc);
  }
  close(out[1]);
  close(errp[1]);
  /* the children print far less than a pipe holds: read after they exit */
  waitpid(pid, &o->status, 0);
  read_pipe(out[0], o->out, sizeof(o->out));
  read_pipe(errp[0], o->err, sizeof(o->err));
}

static bool exited0(const struct child_out *o)
{
  if (o->status >= 0 && WIFEXITED(o->status) && WEXITSTATUS(o->status) == 0)
    return true;
  printf("# child status %#x, stdout:\n# %s\n# stderr: %s\n", o->status, o->out, o->err);
  return false;
}

/* The value after "key:" in /proc/self/status text, whitespace squeezed to single spaces. */
static const char *field(const char *status, const char *key, char *buf, size_t len)
{
  size_t klen = strlen(key), n = 0;
  const char *p = status;

  buf[0] = '\0';
  while (p && *p) {
    if (strncmp(p, key, klen) == 0 && p[klen] == ':') {
      bool space = false;
      for (p += klen + 1; *p && *p != '\n' && n + 2 < len; p++) {
        if (*p == ' ' || *p == '\t') {
          space = n > 0;
          continue;
        }
        if (space)
          buf[n++] = ' ';
        space = false;
        buf[n++] = *p;
      }
      buf[n] = '\0';
      return buf;
    }
    p = strchr(p, '\n');
    if (p)
      p++;
  }
  return buf;
}

static uint64_t hexfield(const char *status, const char *key)
{
  char buf[64];
  return strtoull(field(status, key, buf, sizeof(buf)), NULL, 16);
}

static int print_status(void)
{
  char *s = NULL;
  size_t len;
  cleanup_err ar_err err = NULL;

  if (ar_read_file("/proc/self/status", &s, &len, &err) < 0)
    return 2;
  fwrite(s, 1, len, stdout);
  fflush(stdout);
  free(s);
  return 0;
}

static void set_names(struct ar_capabilities *c, enum ar_cap_set s, char **names, size_t n)
{
  c->names[s] = names;
  c->n_names[s] = n;
}

static void test_resolve(void)
{
  struct ar_capabilities c = {0};
  struct ar_capmask m;
  cleanup_err ar_err err = NULL;
  int rc;

  set_names(&c, AR_CAP_BOUNDING, STRV("CAP_CHOWN", "CAP_KILL", "CAP_NET_BIND_SERVICE"), 3);
  set_names(&c, AR_CAP_AMBIENT, STRV("CAP_NET_BIND_SERVICE"), 1);
  ok(ar_caps_resolve(&c, &m, &err) == 0 &&
         m.set[AR_CAP_BOUNDING] == (BIT(CAP_CHOWN) | BIT(CAP_KILL) | BIT(CAP_NET_BIND_SERVICE)) &&
         m.set[AR_CAP_AMBIENT] == BIT(CAP_NET_BIND_SERVICE) && m.set[AR_CAP_EFFECTIVE] == 0,
     "ar_caps_resolve: names to masks");

  set_names(&c, AR_CAP_EFFECTIVE, STRV("CAP_CHOWN", "CAP_FOO"), 2);
  rc = ar_caps_resolve(&c, &m, &err);
  ok(rc < 0 && strcmp(err->msg, "unknown capability \"CAP_FOO\"") == 0,
     "ar_caps_resolve: an unknown name is an error naming it (%s)", err ? err->msg : "no error");
}

struct creds_case {
  struct ar_process p;
  const struct ar_capmask *caps; /* NULL: leave the sets alone */
  bool preset_groups;            /* give the child supplementary groups first */
};

static int child_creds(void *arg)
{
  struct creds_case *c = arg;
  cleanup_err ar_err err = NULL;
  gid_t pre[] = {0, 4, 27};

  if (c->preset_groups && setgroups(ARRAY_SIZE(pre), pre) < 0)
    return 3;
  if (ar_caps_apply_user(&c->p, c->caps, &err) < 0) {
    fprintf(stderr, "%s\n", err->msg);
    return 1;
  }
  return print_status();
}

static void test_apply_user(void)
{
  const uint64_t eff = BIT(CAP_CHOWN) | BIT(CAP_KILL) | BIT(CAP_NET_BIND_SERVICE);
  const uint64_t bnd = eff | BIT(CAP_SETUID) | BIT(CAP_SETGID);
  struct ar_capmask caps = {{0}};
  uint32_t gids[] = {10, 20};
  struct creds_case c = {0};
  struct child_out o;
  char buf[128];

  caps.set[AR_CAP_BOUNDING] = bnd;
  caps.set[AR_CAP_EFFECTIVE] = caps.set[AR_CAP_PERMITTED] = eff;
  caps.set[AR_CAP_INHERITABLE] = BIT(CAP_NET_BIND_SERVICE);
  caps.set[AR_CAP_AMBIENT] = BIT(CAP_NET_BIND_SERVICE);
  c.p.user = (struct ar_user){.uid = 1000,
                              .gid = 1000,
                              .has_umask = true,
                              .umask = 027,
                              .additional_gids = gids,
                              .n_additional_gids = 2};
  c.caps = &caps;
  run_child(child_creds, &c, &o);
  if (!exited0(&o)) {
    ok(false, "ar_caps_apply_user: uid 1000, gids, caps");
    return;
  }
  ok(hexfield(o.out, "CapEff") == eff, "CapEff is CHOWN KILL NET_BIND_SERVICE (%#llx)",
     (unsigned long long)hexfield(o.out, "CapEff"));
  ok(hexfield(o.out, "CapPrm") == eff, "CapPrm = the permitted set");
  ok(hexfield(o.out, "CapInh") == BIT(CAP_NET_BIND_SERVICE), "CapInh = the inheritable set");
  ok(hexfield(o.out, "CapBnd") == bnd, "CapBnd = the bounding set (%#llx)",
     (unsigned long long)hexfield(o.out, "CapBnd"));
  ok(hexfield(o.out, "CapAmb") == BIT(CAP_NET_BIND_SERVICE), "CapAmb = NET_BIND_SERVICE");
  ok(strcmp(field(o.out, "Uid", buf, sizeof(buf)), "1000 1000 1000 1000") == 0, "Uid: %s", buf);
  ok(strcmp(field(o.out, "Gid", buf, sizeof(buf)), "1000 1000 1000 1000") == 0, "Gid: %s", buf);
  ok(strcmp(field(o.out, "Groups", buf, sizeof(buf)), "10 20") == 0, "Groups: %s", buf);
  ok(strcmp(field(o.out, "Umask", buf, sizeof(buf)), "0027") == 0, "Umask: %s", buf);
  ok(field(o.out, "NoNewPrivs", buf, sizeof(buf)) && strcmp(buf, "0") == 0,
     "no_new_privs is left to the caller");

  /* ambient without inheritable (runc's own default spec): a debug note, nothing raised */
  caps.set[AR_CAP_INHERITABLE] = 0;
  run_child(child_creds, &c, &o);
  ok(exited0(&o) && hexfield(o.out, "CapAmb") == 0 &&
         strstr(o.err, "CAP_NET_BIND_SERVICE is ambient but not both permitted and inheritable"),
     "an ambient cap missing from inheritable is warned about and not raised");

  /* no caps given, no groups: the kernel's uid-change rules drop everything */
  c.caps = NULL;
  c.p.user.n_additional_gids = 0;
  c.p.user.has_umask = false;
  c.preset_groups = true;
  run_child(child_creds, &c, &o);
  ok(exited0(&o) && hexfield(o.out, "CapEff") == 0 && hexfield(o.out, "CapPrm") == 0,
     "without caps, uid 1000 ends with no capabilities");
  ok(strcmp(field(o.out, "Groups", buf, sizeof(buf)), "") == 0,
     "no additionalGids: the runtime's own groups are cleared (Groups: \"%s\")", buf);
  ok(strcmp(field(o.out, "Umask", buf, sizeof(buf)), "0022") == 0, "default umask 0022: %s", buf);
}

static int write_proc(const char *path, const char *data)
{
  cleanup_close int fd = open(path, O_WRONLY | O_CLOEXEC);
  return fd >= 0 && ar_write_all(fd, data, strlen(data)) >= 0 ? 0 : -1;
}

/* In a user namespace whose setgroups is "deny", additionalGids are skipped with a warning. */
static int child_userns(void *arg)
{
  if (unshare(CLONE_NEWUSER) < 0 || write_proc("/proc/self/setgroups", "deny") < 0 ||
      write_proc("/proc/self/uid_map", "0 0 1") < 0 ||
      write_proc("/proc/self/gid_map", "0 0 1") < 0)
    return 5;
  return child_creds(arg);
}

static void test_setgroups_denied(void)
{
  uint32_t gids[] = {10};
  struct creds_case c = {.p.user = {.additional_gids = gids, .n_additional_gids = 1}};
  struct child_out o;

  run_child(child_userns, &c, &o);
  if (o.status >= 0 && WIFEXITED(o.status) && WEXITSTATUS(o.status) == 5) {
    skip("cannot make a user namespace", "setgroups denied");
    return;
  }
  ok(exited0(&o) && strstr(o.err, "setgroups is denied in this user namespace"),
     "setgroups denied in a user namespace: additionalGids skipped with a warning");
}

static int child_rlimits(void *arg)
{
  struct ar_process *p = arg;
  cleanup_err ar_err err = NULL;
  struct rlimit rl;

  if (ar_rlimits_apply(p, &err) < 0) {
    printf("error: %s\n", err->msg);
    return 1;
  }
  getrlimit(p->rlimits[0].resource, &rl);
  printf("%llu %llu\n", (unsigned long long)rl.rlim_cur, (unsigned long long)rl.rlim_max);
  return 0;
}

static bool have_cap(cap_value_t cap)
{
  cap_t c = cap_get_proc();
  cap_flag_value_t v = CAP_CLEAR;

  cap_get_flag(c, cap, CAP_EFFECTIVE, &v);
  cap_free(c);
  return v == CAP_SET;
}

static void test_rlimits(void)
{
  struct ar_rlimit rl = {.type = "RLIMIT_NOFILE", .resource = RLIMIT_NOFILE};
  struct ar_process p = {.rlimits = &rl, .n_rlimits = 1};
  struct rlimit cur;
  struct child_out o;
  char want[128], warn[160];

  getrlimit(RLIMIT_NOFILE, &cur);
  rl.soft = rl.hard = 1048576;
  if (have_cap(CAP_SYS_RESOURCE) || cur.rlim_max >= rl.hard) {
    skip("CAP_SYS_RESOURCE held or hard nofile limit already high", "rlimit clamping");
  } else {
    run_child(child_rlimits, &p, &o);
    snprintf(want, sizeof(want), "%llu %llu\n", (unsigned long long)cur.rlim_max,
             (unsigned long long)cur.rlim_max);
    snprintf(warn, sizeof(warn), "rlimit RLIMIT_NOFILE: hard 1048576 is above the limit %llu",
             (unsigned long long)cur.rlim_max);
    ok(exited0(&o) && strcmp(o.out, want) == 0,
       "NOFILE 1048576 without CAP_SYS_RESOURCE: clamped to %llu, not an error",
       (unsigned long long)cur.rlim_max);
    ok(strstr(o.err, warn) != NULL && strstr(o.err, "clamped"), "... with a warning");
    printf("# %s", o.err);
  }

  rl.soft = 100;
  rl.hard = 200;
  run_child(child_rlimits, &p, &o);
  ok(exited0(&o) && strcmp(o.out, "100 200\n") == 0 && o.err[0] == '\0',
     "NOFILE 100/200 is set exactly, silently");

  rl.soft = 300;
  run_child(child_rlimits, &p, &o);
  ok(strstr(o.out, "error: rlimit RLIMIT_NOFILE: soft 300 is above hard 200") != NULL,
     "soft above hard is an error naming the limit");
}

static int child_oom(void *arg)
{
  cleanup_err ar_err err = NULL;
  char *s = NULL;
  size_t len;

  if (ar_oom_score_adj_apply(arg, &err) < 0) {
    printf("error: %s\n", err->msg);
    return 1;
  }
  if (ar_read_file("/proc/self/oom_score_adj", &s, &len, &err) < 0)
    return 2;
  fwrite(s, 1, len, stdout);
  free(s);
  return 0;
}

static int child_personality(void *arg)
{
  cleanup_err ar_err err = NULL;

  if (ar_personality_apply(arg, &err) < 0) {
    printf("error: %s\n", err->msg);
    return 1;
  }
  printf("%#x\n", personality(0xffffffff) & PER_MASK);
  return 0;
}

static int child_ioprio(void *arg)
{
  cleanup_err ar_err err = NULL;

  if (ar_io_priority_apply(arg, &err) < 0) {
    printf("error: %s\n", err->msg);
    return 1;
  }
  printf("%ld\n", syscall(SYS_ioprio_get, IOPRIO_WHO_PROCESS, 0));
  return 0;
}

static void test_misc(void)
{
  struct ar_process p = {.has_oom_score_adj = true, .oom_score_adj = 500};
  struct ar_personality pers = {.domain = "LINUX32"};
  struct child_out o;
  char want[32];

  run_child(child_oom, &p, &o);
  ok(exited0(&o) && strcmp(o.out, "500\n") == 0, "oom_score_adj 500");

  run_child(child_personality, &pers, &o);
  ok(exited0(&o) && strtoul(o.out, NULL, 16) == PER_LINUX32, "personality LINUX32");
  pers.domain = "LINUX";
  run_child(child_personality, &pers, &o);
  ok(exited0(&o) && strtoul(o.out, NULL, 16) == PER_LINUX, "personality LINUX");
  pers.domain = "BSD";
  run_child(child_personality, &pers, &o);
  ok(strstr(o.out, "personality: unknown domain \"BSD\""), "an unknown domain is an error");
  pers.domain = "LINUX";
  pers.flags = STRV("ADDR_NO_RANDOMIZE");
  pers.n_flags = 1;
  run_child(child_personality, &pers, &o);
  ok(strstr(o.out, "unsupported flag \"ADDR_NO_RANDOMIZE\""), "a personality flag is an error");

  p = (struct ar_process){.has_io_priority = true, .io_priority = {"IOPRIO_CLASS_BE", 5}};
  run_child(child_ioprio, &p, &o);
  snprintf(want, sizeof(want), "%d\n", (int)IOPRIO_PRIO_VALUE(IOPRIO_CLASS_BE, 5));
  ok(exited0(&o) && strcmp(o.out, want) == 0, "ioPriority BE 5");
  p.io_priority = (struct ar_io_priority){"IOPRIO_CLASS_IDLE", 0};
  run_child(child_ioprio, &p, &o);
  snprintf(want, sizeof(want), "%d\n", (int)IOPRIO_PRIO_VALUE(IOPRIO_CLASS_IDLE, 0));
  ok(exited0(&o) && strcmp(o.out, want) == 0, "ioPriority IDLE");
  p.io_priority = (struct ar_io_priority){"IOPRIO_CLASS_FAST", 0};
  run_child(child_ioprio, &p, &o);
  ok(strstr(o.out, "unknown class \"IOPRIO_CLASS_FAST\""), "an unknown I/O class is an error");
  p.io_priority = (struct ar_io_priority){"IOPRIO_CLASS_BE", 8};
  run_child(child_ioprio, &p, &o);
  ok(strstr(o.out, "priority 8 is out of range"), "I/O priority 8 is an error");
}

int main(void)
{
  ar_log_init(NULL, false, true); /* debug: the ambient note is a debug line */
  if (geteuid() != 0) {
    printf("1..0 # SKIP needs root\n");
    return 0;
  }
  test_resolve();
  test_apply_user();
  test_setgroups_denied();
  test_rlimits();
  test_misc();
  printf("1..%d\n", n_tests);
  return n_failed ? 1 : 0;
}
