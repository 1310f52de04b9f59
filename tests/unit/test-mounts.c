/* Unit tests of runtime/mounts.c, devices.c, inroot.c, mount-opts.c and terminal.c (TAP).
 *
 * Needs root.  Builds a busybox rootfs in a temporary directory, then sets it up, pivots into it
 * and finalizes it in a child in fresh namespaces (once as real root, once in a user namespace),
 * and checks the result from inside.  Children report each check through a pipe; the parent
 * numbers them and prints TAP. */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/magic.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef MQUEUE_MAGIC
#define MQUEUE_MAGIC 0x19800202
#endif

#include "runtime/devices.h"
#include "runtime/mount-opts.h"
#include "runtime/mounts.h"
#include "runtime/terminal.h"
#include "runtime/utils.h"

static int report_fd = -1;
static char tmpdir[] = "/tmp/ar-test-mounts-XXXXXX";
static char rootfs[128];

/* ---- reporting: "1 name" / "0 name" / "# diag" lines to the parent ---- */

static void report(bool ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void report(bool ok, const char *fmt, ...)
{
  char msg[512];
  va_list ap;

  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  dprintf(report_fd, "%d %s\n", ok ? 1 : 0, msg);
}

static void diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void diag(const char *fmt, ...)
{
  char msg[1024];
  va_list ap;

  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  for (char *p = msg; (p = strchr(p, '\n'));)
    *p = ' ';
  dprintf(report_fd, "# %s\n", msg);
}

static bool ok_err(int r, ar_err *err, const char *what)
{
  if (r < 0) {
    diag("%s: %s", what, *err ? (*err)->msg : "(no message)");
    ar_error_free(err);
  }
  report(r >= 0, "%s", what);
  return r >= 0;
}

static int tests_run, tests_failed;

/* Run fn in a child and turn its report lines into TAP. */
static void run_child(const char *name, int (*fn)(void *), void *arg)
{
  int p[2];
  pid_t pid;
  FILE *f;
  char *line = NULL;
  size_t len = 0;
  int status, before = tests_run;

  if (pipe2(p, O_CLOEXEC) < 0)
    abort();
  fflush(stdout);
  pid = fork();
  if (pid == 0) {
    close(p[0]);
    report_fd = p[1];
    _exit(fn(arg));
  }
  close(p[1]);
  f = fdopen(p[0], "r");
  while (getline(&line, &len, f) > 0) {
    if (line[0] == '#') {
      printf("%s", line);
      continue;
    }
    tests_run++;
    if (line[0] != '1')
      tests_failed++;
    printf("%sok %d - %s: %s", line[0] == '1' ? "" : "not ", tests_run, name, line + 2);
  }
  fclose(f);
  free(line);
  waitpid(pid, &status, 0);
  tests_run++;
  if (!(WIFEXITED(status) && WEXITSTATUS(status) == 0))
    tests_failed++;
  printf("%sok %d - %s: finished cleanly (%d checks, status 0x%x)\n",
         WIFEXITED(status) && WEXITSTATUS(status) == 0 ? "" : "not ", tests_run, name,
         tests_run - before - 1, status);
  fflush(stdout);
}

/* ---- building the rootfs ---- */

static void must(bool cond, const char *what)
{
  if (!cond) {
    fprintf(stderr, "setup: %s: %s\n", what, strerror(errno));
    exit(99);
  }
}

static void write_file(const char *path, const char *content)
{
  ar_err err = NULL;
  must(ar_write_file(path, content, strlen(content), 0644, &err) == 0, path);
}

static void copy_file(const char *src, const char *dst, int mode)
{
  char *data;
  size_t len;
  ar_err err = NULL;

  must(ar_read_file(src, &data, &len, &err) == 0, src);
  must(ar_write_file(dst, data, len, mode, &err) == 0, dst);
  free(data);
}

static char *at(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *at(const char *fmt, ...)
{
  static char bufs[8][512];
  static int i;
  char *b = bufs[i++ % 8];
  char rel[400];
  va_list ap;

  va_start(ap, fmt);
  vsnprintf(rel, sizeof(rel), fmt, ap);
  va_end(ap);
  snprintf(b, 512, "%s/%s", tmpdir, rel);
  return b;
}

static void build_tree(void)
{
  static const char *const dirs[] = {
      "rootfs",     "rootfs/bin", "rootfs/proc", "rootfs/sys", "rootfs/dev", "rootfs/etc",
      "rootfs/tmp", "vol",        "volr",        "volr/sub",   "fakedev",    "rootfs/tmp/seeddir"};

  must(mkdtemp(tmpdir) != NULL, "mkdtemp");
  snprintf(rootfs, sizeof(rootfs), "%s/rootfs", tmpdir);
  for (size_t i = 0; i < ARRAY_SIZE(dirs); i++)
    must(mkdir(at("%s", dirs[i]), 0755) == 0, dirs[i]);
  copy_file("/bin/busybox", at("rootfs/bin/busybox"), 0755);
  must(symlink("busybox", at("rootfs/bin/sh")) == 0, "symlink sh");
  must(symlink("busybox", at("rootfs/bin/cat")) == 0, "symlink cat");
  write_file(at("vol/hello"), "hello from the host\n");
  write_file(at("file.txt"), "a bound file\n");
  write_file(at("rootfs/tmp/seed"), "seed\n");
  write_file(at("rootfs/tmp/seeddir/inner"), "inner\n");
  must(chmod(at("rootfs/tmp"), 01777) == 0, "chmod tmp");
  write_file(at("rootfs/etc/marker"), "inside\n");
  write_file(at("rootfs/etc/passwd"), "root:x:0:0::/:/bin/sh\n");
  /* Symlinks that try to leave the rootfs: they must resolve inside it. */
  must(symlink("/../../../../ar-escape-target", at("rootfs/evil")) == 0, "symlink evil");
  must(symlink("../../../../../../etc/marker", at("rootfs/link")) == 0, "symlink link");
  must(symlink("/made/by/walk", at("rootfs/dangling")) == 0, "symlink dangling");
  must(symlink("/proc", at("rootfs/proc2")) == 0, "symlink proc2");
  must(symlink("loop2", at("rootfs/loop1")) == 0 && symlink("/loop1", at("rootfs/loop2")) == 0,
       "symlink loop");
  /* A /dev whose null is not the null device (CVE-2025-31133). */
  must(symlink("/etc/passwd", at("fakedev/null")) == 0, "symlink fakedev/null");
}

/* ---- the spec ---- */

#define OPTS(...) (char *[]){__VA_ARGS__}, ARRAY_SIZE(((char *[]){__VA_ARGS__}))

static struct ar_mount std_mounts[] = {
    {"/proc", "proc", "proc", OPTS("nosuid", "noexec", "nodev")},
    {"/dev", "tmpfs", "tmpfs", OPTS("nosuid", "strictatime", "mode=755", "size=65536k", "ro")},
    {"/dev/pts", "devpts", "devpts",
     OPTS("nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620", "gid=5")},
    {"/dev/shm", "tmpfs", "shm", OPTS("nosuid", "noexec", "nodev", "mode=1777", "size=65536k")},
    {"/dev/mqueue", "mqueue", "mqueue", OPTS("nosuid", "noexec", "nodev")},
    {"/sys", "sysfs", "sysfs", OPTS("nosuid", "noexec", "nodev", "ro")},
    {"/sys/fs/cgroup", "cgroup", "cgroup", OPTS("nosuid", "noexec", "nodev", "relatime", "ro")},
    {"/tmp", "tmpfs", "tmpfs", OPTS("nosuid", "nodev", "tmpcopyup", "rprivate")},
    {"/evil", "tmpfs", "tmpfs", OPTS("nosuid")},
    {"/dangling", "tmpfs", "tmpfs", OPTS("nosuid")},
};

static char *masked[] = {"/proc/kcore",   "/proc/keys",    "/proc/timer_list", "/proc/acpi",
                         "/proc/missing", "/sys/firmware", "/proc/scsi"};
static char *readonly[] = {"/proc/sys", "/proc/sysrq-trigger", "/proc/bus", "/proc/irq"};

static struct ar_spec *make_spec(bool userns)
{
  struct ar_spec *s = xcalloc(1, sizeof(*s));
  size_t n = ARRAY_SIZE(std_mounts), k = 0;
  struct ar_mount *m = xcalloc(n + 4, sizeof(*m));
  struct ar_device *d = xcalloc(1, sizeof(*d));

  /* static: compound literals in a function die with it */
  static char *o_vol[] = {"rbind", "ro", "nosuid"}, *o_file[] = {"bind"};
  static char *o_ro1[] = {"rbind", "ro"}, *o_ro2[] = {"rbind", "rro"};

  memcpy(m, std_mounts, sizeof(std_mounts));
  k = n;
  m[k++] = (struct ar_mount){"/vol", "bind", xstrdup(at("vol")), o_vol, 3};
  m[k++] = (struct ar_mount){"/etc/file.txt", "none", xstrdup(at("file.txt")), o_file, 1};
  m[k++] = (struct ar_mount){"/ro1", "bind", xstrdup(at("volr")), o_ro1, 2};
  m[k++] = (struct ar_mount){"/ro2", "bind", xstrdup(at("volr")), o_ro2, 2};
  s->mounts = m;
  s->n_mounts = k;
  s->root_readonly = true;
  s->has_linux = true;
  /* Replaces the default /dev/full; in a user namespace it is the host's node, bound. */
  *d = (struct ar_device){.path = "/dev/full",
                          .type = 'c',
                          .major = 1,
                          .minor = 7,
                          .has_file_mode = true,
                          .file_mode = 0600,
                          .has_uid = true,
                          .uid = 1000,
                          .has_gid = true,
                          .gid = 1000};
  s->linux_.devices = d;
  s->linux_.n_devices = 1;
  s->linux_.masked_paths = masked;
  s->linux_.n_masked_paths = ARRAY_SIZE(masked);
  s->linux_.readonly_paths = readonly;
  s->linux_.n_readonly_paths = ARRAY_SIZE(readonly);
  (void)userns;
  return s;
}

/* ---- checks from inside ---- */

static bool fs_is(const char *path, long type)
{
  struct statfs sfs;
  return statfs(path, &sfs) == 0 && sfs.f_type == type;
}

static unsigned long vflags(const char *path)
{
  struct statvfs sv;
  return statvfs(path, &sv) == 0 ? sv.f_flag : 0;
}

static bool is_chr(const char *path, unsigned maj, unsigned min, mode_t mode)
{
  struct stat st;
  return stat(path, &st) == 0 && S_ISCHR(st.st_mode) && major(st.st_rdev) == maj &&
         minor(st.st_rdev) == min && (mode == 0 || (st.st_mode & 07777) == mode);
}

static bool link_is(const char *path, const char *target)
{
  char buf[256];
  ssize_t n = readlink(path, buf, sizeof(buf) - 1);
  if (n < 0)
    return false;
  buf[n] = '\0';
  return strcmp(buf, target) == 0;
}

static bool content_is(const char *path, const char *want)
{
  char buf[256];
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
  if (fd >= 0)
    close(fd);
  if (n < 0)
    return false;
  buf[n] = '\0';
  return strcmp(buf, want) == 0;
}

static bool open_fails(const char *path, int flags, int want_errno)
{
  int fd = open(path, flags | O_CLOEXEC);
  if (fd >= 0) {
    close(fd);
    diag("%s: opened, expected %s", path, strerror(want_errno));
    return false;
  }
  if (errno != want_errno)
    diag("%s: %s, expected %s", path, strerror(errno), strerror(want_errno));
  return errno == want_errno;
}

static void check_proc_and_masks(void)
{
  char buf[16];
  int fd;

  report(getpid() == 1 && link_is("/proc/self", "1"), "proc is the container's (pid 1)");
  report(fs_is("/proc", PROC_SUPER_MAGIC) &&
             (vflags("/proc") & (ST_NOSUID | ST_NOEXEC | ST_NODEV)) ==
                 (ST_NOSUID | ST_NOEXEC | ST_NODEV),
         "proc mounted nosuid,noexec,nodev");
  /* Not every kernel has kcore (CONFIG_PROC_KCORE): check the masked files that exist. */
  static const char *const files[] = {"/proc/kcore", "/proc/keys", "/proc/timer_list"};
  int seen = 0, empty = 0;
  for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
    if (access(files[i], F_OK) < 0)
      continue;
    seen++;
    fd = open(files[i], O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf)) : -1;
    if (n != 0)
      diag("%s: fd %d, read %zd: %s", files[i], fd, n, strerror(errno));
    empty += n == 0;
    if (fd >= 0)
      close(fd);
  }
  report(seen > 0 && seen == empty, "masked files (%d of kcore keys timer_list) read empty", seen);
  report(is_chr("/proc/keys", 1, 3, 0), "masked /proc/keys is /dev/null");
  report(!fs_is("/proc/acpi", PROC_SUPER_MAGIC) || access("/proc/acpi", F_OK) < 0 ||
             (fs_is("/proc/acpi", TMPFS_MAGIC) && (vflags("/proc/acpi") & ST_RDONLY)),
         "masked directory /proc/acpi is a read-only tmpfs (or absent)");
  report(fs_is("/sys/firmware", TMPFS_MAGIC) && (vflags("/sys/firmware") & ST_RDONLY) &&
             access("/sys/firmware/efi", F_OK) < 0,
         "masked /sys/firmware is an empty read-only tmpfs");
  report(open_fails("/proc/sys/kernel/hostname", O_WRONLY, EROFS),
         "/proc/sys is read-only (EROFS)");
  report(access("/proc/sysrq-trigger", F_OK) < 0 ||
             open_fails("/proc/sysrq-trigger", O_WRONLY, EROFS),
         "/proc/sysrq-trigger read-only (or absent)");
  report(access("/proc/irq", F_OK) < 0 || (vflags("/proc/irq") & ST_RDONLY),
         "/proc/irq read-only (or absent)");
}

static void check_devices(bool userns)
{
  struct stat st, dev;

  report(is_chr("/dev/null", 1, 3, 0666), "/dev/null 1:3 0666");
  report(is_chr("/dev/zero", 1, 5, 0666) && is_chr("/dev/random", 1, 8, 0666) &&
             is_chr("/dev/urandom", 1, 9, 0666) && is_chr("/dev/tty", 5, 0, 0666),
         "default devices zero random urandom tty");
  if (userns)
    report(is_chr("/dev/full", 1, 7, 0) && stat("/dev/full", &st) == 0 && stat("/dev", &dev) == 0 &&
               st.st_dev != dev.st_dev,
           "configured /dev/full bound from the host (mknod not allowed)");
  else
    report(is_chr("/dev/full", 1, 7, 0600) && stat("/dev/full", &st) == 0 && st.st_uid == 1000 &&
               st.st_gid == 1000,
           "configured /dev/full replaces the default: 1:7 0600 1000:1000");
  report(link_is("/dev/ptmx", "pts/ptmx") && link_is("/dev/fd", "/proc/self/fd") &&
             link_is("/dev/stdin", "/proc/self/fd/0") &&
             link_is("/dev/stdout", "/proc/self/fd/1") && link_is("/dev/stderr", "/proc/self/fd/2"),
         "/dev symlinks ptmx fd stdin stdout stderr");
  report(access("/proc/kcore", F_OK) < 0 || link_is("/dev/core", "/proc/kcore"), "/dev/core");
  report(fs_is("/dev/pts", DEVPTS_SUPER_MAGIC) && stat("/dev/pts/ptmx", &st) == 0 &&
             (st.st_mode & 0777) == 0666,
         "/dev/pts is a new devpts instance with ptmxmode=0666");
  report(fs_is("/dev/shm", TMPFS_MAGIC) && stat("/dev/shm", &st) == 0 &&
             (st.st_mode & 07777) == 01777,
         "/dev/shm tmpfs 1777");
  report(fs_is("/dev/mqueue", MQUEUE_MAGIC), "/dev/mqueue is mqueue");
  report((vflags("/dev") & ST_RDONLY) && mknod("/dev/x", S_IFIFO | 0600, 0) < 0 && errno == EROFS &&
             !(vflags("/dev/shm") & ST_RDONLY),
         "a \"ro\" /dev is read-only once finalized, its submounts are not");
}

static void check_terminal(void)
{
  int master = -1, slave = -1;
  char path[64];
  struct stat a, b;
  ar_err err = NULL;

  if (!ok_err(ar_pty_open(&master, &slave, path, sizeof(path), &err), &err, "ar_pty_open"))
    return;
  report(strcmp(path, "/dev/pts/0") == 0, "first pty of the new devpts is %s", path);
  ok_err(ar_mounts_console("/", path, &err), &err, "ar_mounts_console");
  report(stat("/dev/console", &a) == 0 && fstat(slave, &b) == 0 && S_ISCHR(a.st_mode) &&
             a.st_rdev == b.st_rdev,
         "/dev/console is the pty slave");
  close(master);
  close(slave);
}

static void check_binds_and_root(void)
{
  struct stat st;

  report(content_is("/vol/hello", "hello from the host\n"), "bind /vol readable");
  report((vflags("/vol") & (ST_RDONLY | ST_NOSUID)) == (ST_RDONLY | ST_NOSUID) &&
             open_fails("/vol/new", O_WRONLY | O_CREAT, EROFS),
         "bind /vol is ro,nosuid");
  report(content_is("/etc/file.txt", "a bound file\n"), "file bind onto a created file");
  report((vflags("/ro1") & ST_RDONLY) && !(vflags("/ro1/sub") & ST_RDONLY),
         "\"ro\" leaves submounts writable");
  report((vflags("/ro2") & ST_RDONLY) && (vflags("/ro2/sub") & ST_RDONLY),
         "\"rro\" makes submounts read-only too");
  report(mkdir("/newdir", 0755) < 0 && errno == EROFS, "root.readonly: / is read-only");
  report(fs_is("/tmp", TMPFS_MAGIC) && content_is("/tmp/seed", "seed\n") &&
             content_is("/tmp/seeddir/inner", "inner\n") && stat("/tmp", &st) == 0 &&
             (st.st_mode & 07777) == 01777,
         "tmpcopyup copied the image's /tmp and kept its mode");
  report(mkdir("/tmp/x", 0755) == 0, "/tmp writable under a read-only root");
  report(fs_is("/ar-escape-target", TMPFS_MAGIC), "symlink to /../../x mounted inside the rootfs");
  report(fs_is("/made/by/walk", TMPFS_MAGIC), "dangling symlink destination created inside");
  report(fs_is("/sys", SYSFS_MAGIC) && (vflags("/sys") & ST_RDONLY), "/sys is sysfs, read-only");
}

static void check_cgroup(void)
{
  struct statfs sfs;

  if (statfs("/sys/fs/cgroup", &sfs) < 0) {
    report(false, "statfs /sys/fs/cgroup");
    return;
  }
  if (sfs.f_type == CGROUP2_SUPER_MAGIC) {
    report(access("/sys/fs/cgroup/cgroup.procs", F_OK) == 0, "cgroup2 mounted");
    return;
  }
  report(sfs.f_type == TMPFS_MAGIC && (vflags("/sys/fs/cgroup") & ST_RDONLY),
         "cgroup v1: read-only tmpfs");
  report(access("/sys/fs/cgroup/memory/memory.limit_in_bytes", F_OK) == 0 &&
             (vflags("/sys/fs/cgroup/memory") & ST_RDONLY),
         "cgroup v1: our memory cgroup bound read-only");
}

static void check_busybox(void)
{
  int p[2];
  char buf[128] = {0};
  pid_t pid;
  int st;

  if (pipe(p) < 0)
    return;
  pid = fork();
  if (pid == 0) {
    dup2(p[1], 1);
    execl("/bin/sh", "sh", "-c", "cat /etc/marker", (char *)NULL);
    _exit(127);
  }
  close(p[1]);
  ar_read_all(p[0], buf, sizeof(buf) - 1);
  close(p[0]);
  waitpid(pid, &st, 0);
  report(strcmp(buf, "inside\n") == 0, "busybox runs in the rootfs");
}

/* ---- scenarios ---- */

static int enter_ns(int flags)
{
  pid_t pid;
  int st;

  if (unshare(flags) < 0) {
    diag("unshare: %s", strerror(errno));
    return -1;
  }
  if (!(flags & CLONE_NEWPID))
    return 0;
  pid = fork(); /* the first child in the new pid namespace is its pid 1 */
  if (pid < 0)
    return -1;
  if (pid > 0) {
    waitpid(pid, &st, 0);
    _exit(WIFEXITED(st) ? WEXITSTATUS(st) : 1);
  }
  return 0;
}

static int full_container(bool userns)
{
  struct ar_spec *s = make_spec(userns);
  ar_err err = NULL;
  char *sub = at("volr/sub");

  if (enter_ns(CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC) < 0)
    return 1;
  mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL);
  if (mount("tmpfs", sub, "tmpfs", 0, NULL) < 0) /* a submount for "ro" vs "rro" */
    diag("tmpfs on volr/sub: %s", strerror(errno));
  if (!ok_err(ar_mounts_setup(s, rootfs, &err), &err, "ar_mounts_setup"))
    return 1;
  if (!ok_err(ar_mounts_pivot(rootfs, false, &err), &err, "ar_mounts_pivot"))
    return 1;
  report(access(at("vol"), F_OK) < 0, "the host's tree is gone after pivot_root");
  check_terminal(); /* before finalize: the console goes in while / is writable */
  if (!ok_err(ar_mounts_finalize(s, &err), &err, "ar_mounts_finalize"))
    return 1;
  check_proc_and_masks();
  check_devices(userns);
  check_binds_and_root();
  check_cgroup();
  check_busybox();
  return 0;
}

static int scenario_root(void *arg)
{
  return full_container(false);
}

/* In a user namespace: mknod is EPERM (devices are bound from the host), sysfs without a
 * network namespace is EPERM (the host's /sys is bound).  A helper left in our user namespace
 * writes the maps. */
static void write_maps(pid_t target)
{
  char path[64];

  snprintf(path, sizeof(path), "/proc/%d/uid_map", target);
  write_file(path, "0 0 65536\n");
  snprintf(path, sizeof(path), "/proc/%d/gid_map", target);
  write_file(path, "0 0 65536\n");
}

static int scenario_userns(void *arg)
{
  int go[2], done[2], st;
  pid_t self = getpid(), helper;
  char c;

  if (pipe(go) < 0 || pipe(done) < 0)
    return 1;
  helper = fork();
  if (helper == 0) {
    if (read(go[0], &c, 1) != 1)
      _exit(1);
    write_maps(self);
    _exit(write(done[1], "y", 1) == 1 ? 0 : 1);
  }
  if (unshare(CLONE_NEWUSER) < 0) {
    diag("unshare(CLONE_NEWUSER): %s", strerror(errno));
    return 1;
  }
  if (write(go[1], "x", 1) != 1 || read(done[0], &c, 1) != 1)
    return 1;
  waitpid(helper, &st, 0);
  if (setresgid(0, 0, 0) < 0 || setresuid(0, 0, 0) < 0)
    return 1;
  return full_container(true);
}

/* Refusals: mounts over /proc, proc through a symlink, idmap, and a fake /dev/null. */
static int scenario_refusals(void *arg)
{
  struct ar_spec s = {0};
  struct ar_mount m;
  ar_err err = NULL;
  int r;

  if (enter_ns(CLONE_NEWNS) < 0)
    return 1;
  mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL);
  s.mounts = &m;
  s.n_mounts = 1;

  m = (struct ar_mount){"/proc/self/attr", "bind", "/tmp", OPTS("rbind")};
  r = ar_mounts_setup(&s, rootfs, &err);
  report(r < 0 && err && strstr(err->msg, "inside /proc") &&
             access(at("rootfs/proc/self"), F_OK) < 0,
         "bind over /proc/self/attr refused, nothing created");
  ar_error_free(&err);

  m = (struct ar_mount){"/proc2/self/attr", "bind", "/tmp", OPTS("rbind")};
  r = ar_mounts_setup(&s, rootfs, &err);
  report(r < 0 && err && strstr(err->msg, "inside /proc"),
         "bind over /proc/self/attr through a symlink refused");
  ar_error_free(&err);

  m = (struct ar_mount){"/proc2", "proc", "proc", OPTS("nosuid")};
  r = ar_mounts_setup(&s, rootfs, &err);
  report(r < 0 && err && strstr(err->msg, "real directory"), "proc through a symlink refused");
  if (err)
    diag("%s", err->msg);
  ar_error_free(&err);

  m = (struct ar_mount){"/x", "tmpfs", "tmpfs", OPTS("idmap")};
  r = ar_mounts_setup(&s, rootfs, &err);
  report(r < 0 && err && strstr(err->msg, "not supported"), "idmap refused clearly");
  ar_error_free(&err);
  return 0;
}

/* no_pivot (MS_MOVE + chroot) into a rootfs whose /dev is a bind of a directory where "null" is a
 * symlink to /etc/passwd: masking must refuse to use it. */
static int scenario_fake_null(void *arg)
{
  struct ar_spec s = {0};
  struct ar_mount m[2] = {
      {"/proc", "proc", "proc", OPTS("nosuid")},
      {"/dev", "bind", at("fakedev"), OPTS("rbind")},
  };
  char *mask[] = {"/etc/passwd"};
  ar_err err = NULL;
  int r;

  if (enter_ns(CLONE_NEWNS | CLONE_NEWPID) < 0)
    return 1;
  mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL);
  s.mounts = m;
  s.n_mounts = 2;
  s.linux_.masked_paths = mask;
  s.linux_.n_masked_paths = 1;
  if (!ok_err(ar_mounts_setup(&s, rootfs, &err), &err, "setup with /dev bound"))
    return 1;
  report(access(at("fakedev/zero"), F_OK) < 0, "no devices created in a bound /dev");
  if (!ok_err(ar_mounts_pivot(rootfs, true, &err), &err, "ar_mounts_pivot(no_pivot)"))
    return 1;
  report(content_is("/etc/marker", "inside\n"), "chrooted into the rootfs");
  r = ar_mounts_finalize(&s, &err);
  report(r < 0 && err && strstr(err->msg, "not the null device"),
         "masking refuses a /dev/null that is a symlink");
  if (err)
    diag("%s", err->msg);
  ar_error_free(&err);
  report(content_is("/etc/passwd", "root:x:0:0::/:/bin/sh\n"), "the masked file was left alone");
  return 0;
}

/* ---- tests that need no namespaces ---- */

static void resolve_checks(int rootfd)
{
  struct ar_in_root r = {.fd = -1, .parent = -1};
  ar_err err = NULL;

  report(ar_resolve_in_root(rootfd, "/", 0, &r, &err) == 0 && r.parent < 0 &&
             strcmp(r.path, "/") == 0,
         "resolve: / is the root itself");
  ar_in_root_clear(&r);
  report(ar_resolve_in_root(rootfd, "../../etc//./marker", 0, &r, &err) == 0 &&
             strcmp(r.path, "/etc/marker") == 0 && strcmp(r.name, "marker") == 0 && !r.created,
         "resolve: .. at the root stays there, path cleaned");
  ar_in_root_clear(&r);
  report(ar_resolve_in_root(rootfd, "/newdir/./", S_IFDIR, &r, &err) == 0 && r.created &&
             strcmp(r.path, "/newdir") == 0,
         "resolve: a created directory is reported created");
  ar_in_root_clear(&r);
  rmdir(at("rootfs/newdir"));
  report(ar_resolve_in_root(rootfd, "/loop1/x", S_IFDIR, &r, &err) < 0 && err->status == ELOOP,
         "resolve: a symlink loop is ELOOP");
  ar_error_free(&err);
  report(ar_resolve_in_root(rootfd, "/etc/marker/x", S_IFDIR, &r, &err) < 0 &&
             err->status == ENOTDIR,
         "resolve: a file in the middle is ENOTDIR");
  ar_error_free(&err);
  report(ar_resolve_in_root(rootfd, "/nope/x", 0, &r, &err) < 0 && err->status == ENOENT &&
             access(at("rootfs/nope"), F_OK) < 0,
         "resolve: without create, missing is ENOENT and nothing is made");
  ar_error_free(&err);
}

/* The path taken on kernels without openat2: make openat2 ENOSYS with a seccomp filter. */
static int openat2_fallback(void *arg)
{
  struct sock_filter f[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat2, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog prog = {.len = ARRAY_SIZE(f), .filter = f};
  int rootfd = open(rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC), fd;
  char buf[64] = {0};
  ar_err err = NULL;

  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
      prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0) {
    diag("seccomp: %s", strerror(errno));
    return 1;
  }
  fd = ar_openat_in_root(rootfd, "/link", O_RDONLY, 0, &err);
  report(fd >= 0 && read(fd, buf, sizeof(buf) - 1) > 0 && strcmp(buf, "inside\n") == 0,
         "no openat2: ../../etc/marker stays inside");
  ar_error_free(&err);
  fd = ar_openat_in_root(rootfd, "/evil/created", O_WRONLY | O_CREAT | O_EXCL, 0600, &err);
  report(fd < 0 && err && err->status == ENOENT && access("/ar-escape-target", F_OK) < 0,
         "no openat2: O_CREAT under a dangling escape symlink creates nothing outside");
  ar_error_free(&err);
  fd = ar_openat_in_root(rootfd, "/tmp/created", O_WRONLY | O_CREAT | O_EXCL, 0600, &err);
  report(fd >= 0 && access(at("rootfs/tmp/created"), F_OK) == 0, "no openat2: O_CREAT");
  unlink(at("rootfs/tmp/created"));
  ar_error_free(&err);
  fd = ar_openat_in_root(rootfd, "/link", O_PATH | O_NOFOLLOW, 0, &err);
  struct stat st;
  report(fd >= 0 && fstat(fd, &st) == 0 && S_ISLNK(st.st_mode),
         "no openat2: O_NOFOLLOW gives the symlink");
  ar_error_free(&err);
  return 0;
}

static int unit_checks(void *arg)
{
  struct ar_mount_opts o;
  ar_err err = NULL;
  unsigned long prop;
  char *o1[] = {"ro", "rw", "nosuid", "rbind", "mode=755", "size=1k", "rshared", "rro"};
  char *o2[] = {"ridmap"};
  int rootfd, fd;
  char buf[64] = {0};

  report(ar_mount_opts_parse(o1, ARRAY_SIZE(o1), &o, &err) == 0 && !(o.flags & MS_RDONLY) &&
             (o.flags & (MS_NOSUID | MS_BIND | MS_REC)) == (MS_NOSUID | MS_BIND | MS_REC) &&
             o.data && strcmp(o.data, "mode=755,size=1k") == 0 && o.n_propagation == 1 &&
             o.propagation[0] == (MS_SHARED | MS_REC) && o.attr_set == MOUNT_ATTR_RDONLY,
         "option parsing: flags, data, propagation, recursive");
  ar_mount_opts_clear(&o);
  report(ar_mount_opts_parse(o2, 1, &o, &err) < 0 && err->status == ENOTSUP, "ridmap refused");
  ar_error_free(&err);
  report(ar_propagation_from_name("rslave", &prop) == 0 && prop == (MS_SLAVE | MS_REC) &&
             ar_propagation_from_name("bogus", &prop) < 0,
         "rootfsPropagation names");

  rootfd = open(rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
  fd = ar_openat_in_root(rootfd, "/link", O_RDONLY, 0, &err);
  report(fd >= 0 && read(fd, buf, sizeof(buf) - 1) > 0 && strcmp(buf, "inside\n") == 0,
         "openat_in_root: ../../../etc/marker stays inside");
  if (fd >= 0)
    close(fd);
  ar_error_free(&err);
  fd = ar_mkdir_in_root(rootfd, "/evil/deeper", false, &err);
  report(fd >= 0 && access(at("rootfs/ar-escape-target/deeper"), F_OK) == 0 &&
             access("/ar-escape-target", F_OK) < 0,
         "mkdir_in_root through /../../x creates inside only");
  if (fd >= 0)
    close(fd);
  ar_error_free(&err);
  rmdir(at("rootfs/ar-escape-target/deeper"));
  rmdir(at("rootfs/ar-escape-target"));

  resolve_checks(rootfd);
  fd = ar_dev_null_open(rootfd, O_PATH, &err);
  report(fd < 0 && err && err->status == ENOENT, "dev_null_open: missing /dev/null is an error");
  ar_error_free(&err);
  close(rootfd);
  return 0;
}

static int terminal_checks(void *arg)
{
  int sv[2], fd = -1, master, slave, in[2], out[2];
  char name[32] = {0}, path[64], got[256] = {0};
  ar_err err = NULL;
  pid_t pid;
  ssize_t n, total = 0;

  socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv);
  ok_err(ar_send_fd(sv[0], 1, "/dev/ptmx", 9, &err), &err, "ar_send_fd");
  report(ar_recv_fd(sv[1], &fd, name, sizeof(name), &err) == 0 && fd > 2 &&
             strcmp(name, "/dev/ptmx") == 0,
         "ar_recv_fd gets the fd and the name");
  ar_error_free(&err);
  close(sv[0]);
  report(ar_recv_fd(sv[1], &fd, NULL, 0, &err) < 0 && err && err->status == EPIPE,
         "ar_recv_fd: EOF is an error");
  ar_error_free(&err);
  close(sv[1]);

  /* A host pty: the container side upper-cases one line; the proxy feeds it from a pipe. */
  master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
  grantpt(master);
  unlockpt(master);
  snprintf(path, sizeof(path), "%s", ptsname(master));
  pid = fork();
  if (pid == 0) {
    char line[64] = {0};
    slave = open(path, O_RDWR | O_NOCTTY);
    if (ar_pty_become_stdio(slave, 24, 80, true, &err) < 0)
      _exit(2);
    if (fgets(line, sizeof(line), stdin) == NULL)
      _exit(3);
    for (char *p = line; *p; p++)
      *p = (char)(*p >= 'a' && *p <= 'z' ? *p - 32 : *p);
    printf("[%s]", strtok(line, "\n"));
    fflush(stdout);
    _exit(getchar() == EOF ? 0 : 4); /* then the proxy's EOF arrives as VEOF */
  }
  if (pipe(in) < 0 || pipe(out) < 0)
    return 1;
  if (write(in[1], "abc\n", 4) != 4)
    return 1;
  close(in[1]);
  pid_t proxy = fork();
  if (proxy == 0) {
    dup2(in[0], 0);
    dup2(out[1], 1);
    _exit(ar_pty_proxy(master, &err) < 0 ? 1 : 0);
  }
  close(in[0]);
  close(out[1]);
  close(master);
  while ((n = read(out[0], got + total, sizeof(got) - 1 - total)) > 0)
    total += n;
  int st1, st2;
  waitpid(pid, &st1, 0);
  waitpid(proxy, &st2, 0);
  report(strstr(got, "[ABC]") != NULL, "ar_pty_proxy carries stdin and output");
  report(WIFEXITED(st1) && WEXITSTATUS(st1) == 0, "stdin EOF reaches the program as VEOF");
  report(WIFEXITED(st2) && WEXITSTATUS(st2) == 0, "ar_pty_proxy ends when the pty closes");

  /* stdio goes to the process user, /dev/null stays root's. */
  int pp[2];
  if (pipe(pp) == 0 && (pid = fork()) == 0) {
    struct stat s0, s1;
    dup2(open("/dev/null", O_RDONLY), 0);
    dup2(pp[1], 1);
    if (ar_stdio_chown(1000, &err) < 0 || fstat(0, &s0) < 0 || fstat(1, &s1) < 0)
      _exit(2);
    _exit(s0.st_uid == 0 && s1.st_uid == 1000 ? 0 : 3);
  }
  waitpid(pid, &st1, 0);
  report(WIFEXITED(st1) && WEXITSTATUS(st1) == 0, "ar_stdio_chown: pipe to 1000, /dev/null kept");

  /* Console socket: connect by path and send the master. */
  struct sockaddr_un addr = {.sun_family = AF_UNIX};
  int l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), c;
  snprintf(addr.sun_path, sizeof(addr.sun_path), "%s/console.sock", tmpdir);
  bind(l, (struct sockaddr *)&addr, sizeof(addr));
  listen(l, 1);
  ok_err(ar_console_socket_send(addr.sun_path, 0, &err), &err, "ar_console_socket_send");
  c = accept(l, NULL, NULL);
  report(c >= 0 && ar_recv_fd(c, &fd, name, sizeof(name), &err) == 0 &&
             strcmp(name, "/dev/ptmx") == 0,
         "console socket receives the master and its name");
  ar_error_free(&err);
  return 0;
}

int main(void)
{
  setvbuf(stdout, NULL, _IOLBF, 0);
  if (geteuid() != 0) {
    printf("1..0 # SKIP needs root\n");
    return 0;
  }
  if (access("/bin/busybox", X_OK) < 0) {
    printf("1..0 # SKIP needs /bin/busybox (busybox-static)\n");
    return 0;
  }
  build_tree();
  run_child("unit", unit_checks, NULL);
  run_child("no-openat2", openat2_fallback, NULL);
  run_child("terminal", terminal_checks, NULL);
  run_child("root", scenario_root, NULL);
  run_child("refusals", scenario_refusals, NULL);
  run_child("fake-null", scenario_fake_null, NULL);
  run_child("userns", scenario_userns, NULL);
  bool escaped = access("/ar-escape-target", F_OK) == 0;
  tests_run++;
  tests_failed += escaped;
  printf("%sok %d - no mount or directory escaped to the host's /\n", escaped ? "not " : "",
         tests_run);
  printf("1..%d\n", tests_run);
  ar_err err = NULL;
  ar_rm_rf(tmpdir, &err);
  ar_error_free(&err);
  return tests_failed ? 1 : 0;
}
