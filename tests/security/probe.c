/* probe: proves the hardening of an agent container from the inside.  Static, so it runs in a
 * busybox rootfs:
 *   gcc -static -O2 -Wall -Wextra -Wno-unused-parameter -o tests/security/probe
 * tests/security/probe.c
 *
 *   probe CHECK [ARGS]   prints "# detail" lines, then "ok CHECK" or "FAIL CHECK: reason";
 *                        exit 0 if ok, 1 if not, 2 on bad usage.
 *   probe all            every check but forkbomb.
 *
 * No check sends a packet: network isolation is read from interfaces, routes and the netns
 * inode.  Every call that must fail is made with arguments that do no harm if it succeeds, and
 * whatever it made is undone. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/magic.h>
#include <linux/perf_event.h>

/* CHOWN DAC_OVERRIDE FOWNER FSETID KILL SETGID SETUID NET_BIND_SERVICE */
#define ALLOWED_CAPS 0x4fbULL

static char reason[1024];

/* Record why a check failed (the first reason wins, later ones are appended). */
static bool __attribute__((format(printf, 1, 2))) bad(const char *fmt, ...)
{
  size_t len = strlen(reason);
  va_list ap;

  if (len > 0 && len < sizeof(reason) - 2) {
    strcat(reason, "; ");
    len += 2;
  }
  va_start(ap, fmt);
  vsnprintf(reason + len, sizeof(reason) - len, fmt, ap);
  va_end(ap);
  return false;
}

static const char *err_name(int e)
{
  const char *n = e ? strerrorname_np(e) : "success";
  return n ? n : "unknown errno";
}

/* ---- rootfs-ro ---------------------------------------------------------------------------- */

static bool check_rootfs_ro(int argc, char **argv)
{
  char tmpl[] = "/tmp/agentrun-probe.XXXXXX", back[8] = {0};
  bool good = true;
  struct statfs sf;
  int fd;

  fd = open("/.agentrun-probe", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd >= 0) {
    close(fd);
    unlink("/.agentrun-probe");
    good = bad("created /.agentrun-probe: the root is writable");
  } else if (errno != EROFS) {
    good = bad("create /.agentrun-probe: %s, expected EROFS", err_name(errno));
  } else {
    printf("# create /.agentrun-probe: EROFS\n");
  }
  if (mkdir("/.agentrun-probe-dir", 0700) == 0) {
    rmdir("/.agentrun-probe-dir");
    good = bad("mkdir /.agentrun-probe-dir worked");
  } else if (errno != EROFS) {
    good = bad("mkdir /.agentrun-probe-dir: %s, expected EROFS", err_name(errno));
  }

  fd = mkstemp(tmpl);
  if (fd < 0)
    return bad("create a file in /tmp: %s", err_name(errno));
  if (write(fd, "probe", 5) != 5 || pread(fd, back, 5, 0) != 5 || strcmp(back, "probe") != 0)
    good = bad("write and read back %s: %s", tmpl, err_name(errno));
  close(fd);
  unlink(tmpl);
  printf("# /tmp: write and read back work\n");
  if (statfs("/tmp", &sf) == 0 && sf.f_type == TMPFS_MAGIC) {
    printf("# /tmp: tmpfs of %llu MiB, flags %#lx\n",
           (unsigned long long)sf.f_blocks * sf.f_bsize >> 20, (unsigned long)sf.f_flags);
    if (!(sf.f_flags & ST_NOSUID) || !(sf.f_flags & ST_NODEV))
      good = bad("/tmp is a tmpfs without nosuid and nodev");
  }
  return good;
}

/* ---- net ---------------------------------------------------------------------------------- */

/* 1 up, 0 down, -1 unknown (no socket: the caller's filter may refuse it) */
static int lo_is_up(void)
{
  struct ifreq ifr = {0};
  int s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0), up;

  if (s < 0) {
    printf("# state of lo unknown: socket: %s\n", err_name(errno));
    return -1;
  }
  strcpy(ifr.ifr_name, "lo");
  up = ioctl(s, SIOCGIFFLAGS, &ifr) == 0 ? (ifr.ifr_flags & IFF_UP) != 0 : -1;
  close(s);
  return up;
}

/* /proc/net/dev lists the reader's netns without a socket: a fallback for strict filters. */
static bool interfaces_from_proc(bool *have_lo)
{
  char line[512], name[64];
  bool good = true;
  FILE *f = fopen("/proc/net/dev", "re");

  if (f == NULL)
    return bad("if_nameindex failed and /proc/net/dev: %s", err_name(errno));
  while (fgets(line, sizeof(line), f) != NULL) {
    if (strchr(line, '|') != NULL || sscanf(line, " %63[^:]:", name) != 1)
      continue;
    printf("# interface %s (/proc/net/dev)\n", name);
    if (strcmp(name, "lo") == 0)
      *have_lo = true;
    else
      good = bad("interface %s in the job's netns", name);
  }
  fclose(f);
  return good;
}

static bool check_interfaces(void)
{
  struct if_nameindex *ifs = if_nameindex(), *i;
  bool good = true, have_lo = false;
  DIR *d;

  if (ifs == NULL) {
    printf("# if_nameindex: %s\n", err_name(errno));
    good = interfaces_from_proc(&have_lo);
  } else {
    for (i = ifs; i->if_index != 0; i++) {
      printf("# interface %u: %s\n", i->if_index, i->if_name);
      if (strcmp(i->if_name, "lo") == 0)
        have_lo = true;
      else
        good = bad("interface %s in the job's netns", i->if_name);
    }
    if_freenameindex(ifs);
  }
  if (!have_lo)
    good = bad("no lo");
  else if (lo_is_up() == 0)
    good = bad("lo is down");

  /* sysfs shows the netns it was mounted in, which may not be the job's */
  d = opendir("/sys/class/net");
  if (d != NULL) {
    struct dirent *e;

    while ((e = readdir(d)) != NULL) {
      if (e->d_name[0] == '.' || strcmp(e->d_name, "lo") == 0)
        continue;
      good = bad("/sys/class/net shows %s (sysfs from another netns)", e->d_name);
    }
    closedir(d);
  }
  return good;
}

/* A default route through anything but lo (the IPv6 table keeps a reject entry on lo). */
static bool check_routes(void)
{
  char line[512], iface[64], dst[64];
  unsigned len, flags;
  bool good = true;
  int n = 0;
  FILE *f;

  f = fopen("/proc/net/route", "re");
  if (f != NULL) {
    while (fgets(line, sizeof(line), f) != NULL) {
      if (sscanf(line, "%63s %63s", iface, dst) != 2 || strcmp(iface, "Iface") == 0)
        continue;
      n++;
      if (strcmp(dst, "00000000") == 0)
        good = bad("IPv4 default route via %s", iface);
    }
    fclose(f);
  }
  f = fopen("/proc/net/ipv6_route", "re");
  if (f != NULL) {
    while (fgets(line, sizeof(line), f) != NULL) {
      if (sscanf(line, "%63s %x %*s %*s %*s %*s %*s %*s %x %63s", dst, &len, &flags, iface) != 4)
        continue;
      n++;
      if (len == 0 && strcmp(iface, "lo") != 0 && strspn(dst, "0") == 32)
        good = bad("IPv6 default route via %s", iface);
    }
    fclose(f);
  }
  printf("# %d routes, no default route%s\n", n, good ? "" : " expected");
  return good;
}

static bool check_net(int argc, char **argv)
{
  char ns[64] = {0};
  bool good = check_interfaces();

  good &= check_routes();
  if (readlink("/proc/self/ns/net", ns, sizeof(ns) - 1) < 0)
    return bad("readlink /proc/self/ns/net: %s", err_name(errno));
  printf("# netns %s\n", ns);
  /* probe net HOST: HOST is the host's "net:[N]" (or N); the job's must differ */
  for (int i = 0; i < argc; i++) {
    const char *want = argv[i];
    char digits[32];

    snprintf(digits, sizeof(digits), "%s", strchr(ns, '[') ? strchr(ns, '[') + 1 : ns);
    digits[strcspn(digits, "]")] = '\0';
    if (strcmp(want, ns) == 0 || strcmp(want, digits) == 0)
      good = bad("the job shares the netns %s", want);
  }
  return good;
}

/* ---- denied ------------------------------------------------------------------------------- */

static int try_mount(void)
{
  if (mount("none", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "size=1m") == 0) {
    umount2("/tmp", MNT_DETACH);
    return 0;
  }
  return errno;
}

static int try_unshare(void)
{
  return unshare(CLONE_NEWUSER) == 0 ? 0 : errno;
}

static int close_result(long fd)
{
  if (fd < 0)
    return errno;
  close((int)fd);
  return 0;
}

static int try_bpf(void)
{
  union bpf_attr a = {
      .map_type = BPF_MAP_TYPE_ARRAY, .key_size = 4, .value_size = 4, .max_entries = 1};
  return close_result(syscall(SYS_bpf, BPF_MAP_CREATE, &a, sizeof(a)));
}

static int try_keyctl(void)
{
  /* KEYCTL_GET_KEYRING_ID of KEY_SPEC_SESSION_KEYRING, without creating it */
  return syscall(SYS_keyctl, 0, -3, 0) < 0 ? errno : 0;
}

static int try_io_uring(void)
{
  uint64_t params[16] = {0}; /* struct io_uring_params is 120 bytes, all zero */
  return close_result(syscall(SYS_io_uring_setup, 1, params));
}

static int try_perf(void)
{
  struct perf_event_attr a = {.type = PERF_TYPE_SOFTWARE,
                              .size = sizeof(a),
                              .config = PERF_COUNT_SW_CPU_CLOCK,
                              .disabled = 1,
                              .exclude_kernel = 1,
                              .exclude_hv = 1};
  return close_result(syscall(SYS_perf_event_open, &a, 0, -1, -1, 0));
}

static int try_userfaultfd(void)
{
  return close_result(syscall(SYS_userfaultfd, O_CLOEXEC));
}

/* PTRACE_ATTACH to our own child: the kernel itself would allow it. */
static int try_ptrace(void)
{
  pid_t pid = fork();
  int e;

  if (pid == 0) {
    pause();
    _exit(0);
  }
  if (pid < 0)
    return -1;
  e = ptrace(PTRACE_ATTACH, pid, 0, 0) == 0 ? 0 : errno;
  kill(pid, SIGKILL);
  waitpid(pid, NULL, 0);
  return e;
}

static int try_open_by_handle(void)
{
  struct {
    struct file_handle fh;
    unsigned char bytes[16];
  } h = {.fh = {.handle_bytes = 8, .handle_type = 1}};
  int root = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  long fd;

  if (root < 0)
    return -1;
  fd = syscall(SYS_open_by_handle_at, root, &h.fh, O_RDONLY);
  close(root);
  return close_result(fd);
}

static int try_mknod_blk(void)
{
  if (mknod("/tmp/agentrun-probe-blk", S_IFBLK | 0600, makedev(7, 0)) == 0) {
    unlink("/tmp/agentrun-probe-blk");
    return 0;
  }
  return errno;
}

static int try_af_packet(void)
{
  return close_result(socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(ETH_P_ALL)));
}

static int try_raw_ip(void)
{
  return close_result(socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_ICMP));
}

static int try_clone_newns(void)
{
  long r = syscall(SYS_clone, CLONE_NEWNS | SIGCHLD, 0, 0, 0, 0);

  if (r == 0)
    _exit(0);
  if (r < 0)
    return errno;
  waitpid((pid_t)r, NULL, 0);
  return 0;
}

static int try_setns(void)
{
  int fd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC), e;

  if (fd < 0)
    return -1;
  e = setns(fd, CLONE_NEWNET) == 0 ? 0 : errno;
  close(fd);
  return e;
}

static const struct {
  const char *name;
  int (*fn)(void);
} denied[] = {
    {"mount", try_mount},
    {"unshare(CLONE_NEWUSER)", try_unshare},
    {"bpf", try_bpf},
    {"keyctl", try_keyctl},
    {"io_uring_setup", try_io_uring},
    {"perf_event_open", try_perf},
    {"userfaultfd", try_userfaultfd},
    {"ptrace(PTRACE_ATTACH)", try_ptrace},
    {"open_by_handle_at", try_open_by_handle},
    {"mknod(S_IFBLK)", try_mknod_blk},
    {"socket(AF_PACKET)", try_af_packet},
    {"socket(AF_INET, SOCK_RAW)", try_raw_ip},
    {"clone(CLONE_NEWNS)", try_clone_newns},
    {"setns", try_setns},
};

/* In a child: a call that gets through (unshare into a new user namespace...) must not change
 * what the later checks see.  Returns the errno, 0 on success, -1 if it could not run. */
static int try_in_child(int (*fn)(void))
{
  pid_t pid = fork();
  int st;

  if (pid == 0) {
    int e = fn();
    _exit(e < 0 || e > 254 ? 255 : e);
  }
  if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) == 255)
    return -1;
  return WEXITSTATUS(st);
}

static bool check_denied(int argc, char **argv)
{
  bool good = true;

  for (size_t i = 0; i < sizeof(denied) / sizeof(denied[0]); i++) {
    int e = try_in_child(denied[i].fn);

    printf("# %s: %s\n", denied[i].name, e < 0 ? "could not set up" : err_name(e));
    if (e != EPERM)
      good =
          bad("%s: %s, expected EPERM", denied[i].name, e < 0 ? "could not set up" : err_name(e));
  }
  return good;
}

/* ---- masked ------------------------------------------------------------------------------- */

static bool check_masked(int argc, char **argv)
{
  static const char *files[] = {"/proc/kcore",       "/proc/keys",          "/proc/timer_list",
                                "/proc/sched_debug", "/proc/latency_stats", "/proc/timer_stats"};
  static const char *dirs[] = {"/proc/acpi", "/proc/scsi", "/sys/firmware"};
  bool good = true;

  for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
    int fd = open(files[i], O_RDONLY | O_CLOEXEC);
    struct statfs sf;
    struct stat st;
    bool proc;
    char buf[64];
    ssize_t n;

    if (fd < 0) {
      printf("# %s: %s\n", files[i], err_name(errno));
      continue;
    }
    n = read(fd, buf, sizeof(buf));
    fstat(fd, &st);
    /* empty is not enough: /proc/keys of a process without keys reads empty too */
    proc = fstatfs(fd, &sf) == 0 && sf.f_type == PROC_SUPER_MAGIC;
    close(fd);
    printf("# %s: reads %zd bytes%s\n", files[i], n,
           S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3) ? " (masked with /dev/null)"
           : proc                                             ? " (procfs itself)"
                                                              : "");
    if (n != 0)
      good = bad("%s reads %zd bytes", files[i], n);
    else if (proc)
      good = bad("%s is procfs itself, not masked", files[i]);
  }
  for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
    DIR *d = opendir(dirs[i]);
    struct dirent *e;
    int n = 0;

    if (d == NULL) {
      printf("# %s: %s\n", dirs[i], err_name(errno));
      continue;
    }
    while ((e = readdir(d)) != NULL)
      n += e->d_name[0] != '.';
    closedir(d);
    printf("# %s: %d entries\n", dirs[i], n);
    if (n != 0)
      good = bad("%s lists %d entries", dirs[i], n);
  }
  return good;
}

/* ---- procsys ------------------------------------------------------------------------------ */

/* Open for writing and close again: nothing is ever written. */
static bool check_procsys(int argc, char **argv)
{
  static const char *paths[] = {"/proc/sys/kernel/hostname",     "/proc/sys/kernel/core_pattern",
                                "/proc/sys/kernel/modprobe",     "/proc/sys/vm/drop_caches",
                                "/proc/sys/net/ipv4/ip_forward", "/proc/sysrq-trigger"};
  bool good = true;

  for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
    int fd = open(paths[i], O_WRONLY | O_CLOEXEC);

    if (fd >= 0) {
      close(fd);
      good = bad("%s opens for writing", paths[i]);
      continue;
    }
    printf("# open %s for writing: %s\n", paths[i], err_name(errno));
    if (errno == ENOENT && strcmp(paths[i], "/proc/sys/kernel/hostname") == 0)
      good = bad("%s is missing: is /proc mounted?", paths[i]);
  }
  return good;
}

/* ---- release-agent ------------------------------------------------------------------------ */

static bool check_release_agent(int argc, char **argv)
{
  static const char *patterns[] = {"/sys/fs/cgroup/release_agent", "/sys/fs/cgroup/*/release_agent",
                                   "/sys/fs/cgroup/*/*/release_agent"};
  const char *dir = "/tmp/agentrun-probe-cgroup";
  bool good = true;
  int found = 0;

  for (size_t i = 0; i < sizeof(patterns) / sizeof(patterns[0]); i++) {
    glob_t g;

    if (glob(patterns[i], 0, NULL, &g) != 0)
      continue;
    for (size_t j = 0; j < g.gl_pathc; j++) {
      int fd = open(g.gl_pathv[j], O_WRONLY | O_CLOEXEC);

      found++;
      if (fd >= 0) {
        close(fd);
        good = bad("%s opens for writing", g.gl_pathv[j]);
      } else {
        printf("# open %s for writing: %s\n", g.gl_pathv[j], err_name(errno));
      }
    }
    globfree(&g);
  }
  if (found == 0)
    printf("# no release_agent file is visible\n");
  /* CVE-2022-0492: mount a v1 hierarchy of our own to reach its release_agent */
  if (mkdir(dir, 0700) == 0 || errno == EEXIST) {
    /* a named hierarchy without controllers: it has a release_agent, and touches no
     * existing hierarchy if the mount goes through */
    if (mount("cgroup", dir, "cgroup", 0, "none,name=agentrun-probe") == 0) {
      umount2(dir, MNT_DETACH);
      good = bad("mounting a cgroup v1 hierarchy worked");
    } else {
      printf("# mount a cgroup v1 hierarchy: %s\n", err_name(errno));
    }
    rmdir(dir);
  }
  return good;
}

/* ---- status ------------------------------------------------------------------------------- */

static bool check_status(int argc, char **argv)
{
  unsigned long long allowed = argc > 0 ? strtoull(argv[0], NULL, 16) : ALLOWED_CAPS;
  char line[256], key[64], val[128];
  int seen = 0;
  bool good = true;
  FILE *f = fopen("/proc/self/status", "re");

  if (f == NULL)
    return bad("open /proc/self/status: %s", err_name(errno));
  while (fgets(line, sizeof(line), f) != NULL) {
    unsigned long long v;

    if (sscanf(line, "%63[^:]: %127s", key, val) != 2)
      continue;
    if (strcmp(key, "NoNewPrivs") == 0) {
      seen++;
      if (strcmp(val, "1") != 0)
        good = bad("NoNewPrivs is %s", val);
    } else if (strcmp(key, "Seccomp") == 0) {
      seen++;
      if (strcmp(val, "2") != 0)
        good = bad("Seccomp is %s, not 2 (filter)", val);
    } else if (strcmp(key, "Seccomp_filters") == 0) {
      /* informative: the caller's filter and the agent filter */
    } else if (strncmp(key, "Cap", 3) == 0) {
      v = strtoull(val, NULL, 16);
      seen++;
      if (strcmp(key, "CapAmb") == 0 ? v != 0 : (v & ~allowed) != 0)
        good = bad("%s is %016llx, beyond %016llx", key, v,
                   strcmp(key, "CapAmb") == 0 ? 0ULL : allowed);
    } else {
      continue;
    }
    printf("# %s: %s\n", key, val);
  }
  fclose(f);
  if (seen < 7)
    good = bad("/proc/self/status lacks NoNewPrivs, Seccomp or a Cap line");
  return good;
}

/* ---- fds ---------------------------------------------------------------------------------- */

static bool check_fds(int argc, char **argv)
{
  char cwd[4096] = {0}, target[4096];
  bool good = true;
  struct dirent *e;
  DIR *d = opendir("/proc/self/fd");

  if (d == NULL)
    return bad("open /proc/self/fd: %s", err_name(errno));
  while ((e = readdir(d)) != NULL) {
    char link[64];
    int fd;
    ssize_t n;

    if (e->d_name[0] == '.')
      continue;
    fd = atoi(e->d_name);
    if (fd == dirfd(d))
      continue;
    snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
    n = readlink(link, target, sizeof(target) - 1);
    target[n > 0 ? n : 0] = '\0';
    printf("# fd %d -> %s\n", fd, target);
    if (fd > 2)
      good = bad("fd %d is open (%s)", fd, target);
  }
  closedir(d);
  /* the raw syscall: glibc hides an "(unreachable)" cwd behind ENOENT */
  if (syscall(SYS_getcwd, cwd, sizeof(cwd) - 1) < 0)
    return bad("getcwd: %s", err_name(errno));
  printf("# cwd %s\n", cwd);
  if (cwd[0] != '/')
    good = bad("the cwd is outside the rootfs: %s", cwd);
  return good;
}

/* ---- forkbomb ----------------------------------------------------------------------------- */

static bool check_forkbomb(int argc, char **argv)
{
  long max = argc > 0 ? strtol(argv[0], NULL, 10) : 4096;
  pid_t *pids;
  long n;
  int e = 0;

  if (max <= 0 || (pids = calloc((size_t)max, sizeof(*pids))) == NULL)
    return bad("bad count");
  for (n = 0; n < max; n++) {
    pid_t p = fork();

    if (p == 0) {
      pause();
      _exit(0);
    }
    if (p < 0) {
      e = errno;
      break;
    }
    pids[n] = p;
  }
  for (long i = 0; i < n; i++)
    kill(pids[i], SIGKILL);
  for (long i = 0; i < n; i++)
    waitpid(pids[i], NULL, 0);
  free(pids);
  printf("# forked %ld processes, then: %s\n", n, n == max ? "stopped trying" : err_name(e));
  if (n == max)
    return bad("forked %ld processes without hitting a limit", max);
  if (e != EAGAIN)
    return bad("fork failed with %s, expected EAGAIN", err_name(e));
  return true;
}

/* ---- hostpaths ---------------------------------------------------------------------------- */

static bool check_hostpaths(int argc, char **argv)
{
  static const char *paths[] = {"/var/run/docker.sock",
                                "/run/docker.sock",
                                "/run/containerd/containerd.sock",
                                "/var/run/containerd/containerd.sock",
                                "/run/crio/crio.sock",
                                "/var/run/crio/crio.sock",
                                "/run/podman/podman.sock",
                                "/var/lib/docker",
                                "/var/lib/containerd",
                                "/var/lib/kubelet",
                                "/run/agentrun",
                                "/run/runc",
                                "/run/crun"};
  bool good = true;
  struct stat st;

  for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]) + (size_t)argc; i++) {
    const char *p = i < sizeof(paths) / sizeof(paths[0])
                        ? paths[i]
                        : argv[i - sizeof(paths) / sizeof(paths[0])];

    if (lstat(p, &st) == 0)
      good = bad("%s is visible", p);
  }
  if (good)
    printf("# none of %zu host paths is visible\n",
           sizeof(paths) / sizeof(paths[0]) + (size_t)argc);
  return good;
}

/* ---- main --------------------------------------------------------------------------------- */

static const struct {
  const char *name;
  bool (*fn)(int argc, char **argv);
  bool in_all;
} checks[] = {
    {"fds", check_fds, true}, /* first: before anything else opens an fd */
    {"rootfs-ro", check_rootfs_ro, true},
    {"net", check_net, true},
    {"denied", check_denied, true},
    {"masked", check_masked, true},
    {"procsys", check_procsys, true},
    {"release-agent", check_release_agent, true},
    {"status", check_status, true},
    {"hostpaths", check_hostpaths, true},
    {"forkbomb", check_forkbomb, false},
};

static bool run(size_t i, int argc, char **argv)
{
  bool good;

  reason[0] = '\0';
  good = checks[i].fn(argc, argv);
  if (good)
    printf("ok %s\n", checks[i].name);
  else
    printf("FAIL %s: %s\n", checks[i].name, reason);
  fflush(stdout);
  return good;
}

int main(int argc, char **argv)
{
  bool all_good = true;

  setvbuf(stdout, NULL, _IOLBF, 0);
  if (argc < 2) {
    fprintf(stderr, "usage: probe CHECK [ARGS] | probe all\nchecks:");
    for (size_t i = 0; i < sizeof(checks) / sizeof(checks[0]); i++)
      fprintf(stderr, " %s", checks[i].name);
    fprintf(stderr, "\n");
    return 2;
  }
  if (strcmp(argv[1], "all") == 0) {
    for (size_t i = 0; i < sizeof(checks) / sizeof(checks[0]); i++)
      if (checks[i].in_all)
        all_good &= run(i, 0, NULL);
    return all_good ? 0 : 1;
  }
  for (size_t i = 0; i < sizeof(checks) / sizeof(checks[0]); i++)
    if (strcmp(argv[1], checks[i].name) == 0)
      return run(i, argc - 2, argv + 2) ? 0 : 1;
  fprintf(stderr, "probe: unknown check \"%s\"\n", argv[1]);
  return 2;
}
