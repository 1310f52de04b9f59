/* The monitor's view of the container's cgroup: the exit figures, and the kill at the deadline.
 * Plain file reads, so the monitor needs none of cgroup.c. */
#include <config.h>
#include "monitor.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <time.h>

#include "utils.h"

/* dir/file into buf (NUL-terminated); false when there is no such file or it is empty. */
static bool read_small(const char *dir, const char *file, char *buf, size_t len)
{
  char path[4096];
  int fd;
  ssize_t n;
  if (dir == NULL)
    return false;
  snprintf(path, sizeof(path), "%s/%s", dir, file);
  if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
    return false;
  n = read(fd, buf, len - 1);
  close(fd);
  if (n <= 0)
    return false;
  buf[n] = '\0';
  return true;
}

static bool read_u64(const char *dir, const char *file, uint64_t *ret)
{
  char buf[64];
  return read_small(dir, file, buf, sizeof(buf)) && ar_parse_uint64(strtok(buf, "\n"), ret) == 0;
}

/* "key value" lines (memory.events, cpu.stat, memory.oom_control). */
static bool read_keyed(const char *dir, const char *file, const char *key, uint64_t *ret)
{
  char buf[4096];
  size_t klen = strlen(key);
  if (!read_small(dir, file, buf, sizeof(buf)))
    return false;
  for (char *line = buf; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL)
    if (strncmp(line, key, klen) == 0 && line[klen] == ' ')
      return (*ret = strtoull(line + klen + 1, NULL, 10)), true;
  return false;
}

void ar_mon_read_figures(const struct ar_mon_cgroup *cg, struct ar_mon_figures *f)
{
  uint64_t v;
  memset(f, 0, sizeof(*f));
  if (cg->v2_dir) {
    if (read_keyed(cg->v2_dir, "cpu.stat", "usage_usec", &v))
      f->cpu_s = v / 1e6;
    f->has_mem_peak = read_u64(cg->v2_dir, "memory.peak", &f->mem_peak);
    f->has_pids_peak = read_u64(cg->v2_dir, "pids.peak", &f->pids_peak);
    read_keyed(cg->v2_dir, "memory.events", "oom_kill", &f->oom_kills);
    return;
  }
  if (read_u64(cg->cpu_dir, "cpuacct.usage", &v))
    f->cpu_s = v / 1e9;
  f->has_mem_peak = read_u64(cg->mem_dir, "memory.max_usage_in_bytes", &f->mem_peak);
  f->has_pids_peak = read_u64(cg->pids_dir, "pids.peak", &f->pids_peak);
  read_keyed(cg->mem_dir, "memory.oom_control", "oom_kill", &f->oom_kills);
}

static int write_str(const char *dir, const char *file, const char *s)
{
  char path[4096];
  int fd, r;
  snprintf(path, sizeof(path), "%s/%s", dir, file);
  if ((fd = open(path, O_WRONLY | O_CLOEXEC)) < 0)
    return -1;
  r = ar_write_all(fd, s, strlen(s)) < 0 ? -1 : 0;
  close(fd);
  return r;
}

static void kill_procs(const char *dir)
{
  char path[4096];
  FILE *f;
  int pid;
  snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
  if ((f = fopen(path, "re")) == NULL)
    return;
  while (fscanf(f, "%d", &pid) == 1)
    kill(pid, SIGKILL);
  fclose(f);
}

int ar_mon_kill_cgroup(const struct ar_mon_cgroup *cg)
{
  const struct timespec tick = {0, 1000000};
  if (cg->v2_dir) {
    if (write_str(cg->v2_dir, "cgroup.kill", "1") == 0)
      return 0;
    write_str(cg->v2_dir, "cgroup.freeze", "1");
    kill_procs(cg->v2_dir);
    return write_str(cg->v2_dir, "cgroup.freeze", "0");
  }
  /* v1: freeze first so nothing forks between reading the list and the kill. */
  if (cg->freezer_dir && write_str(cg->freezer_dir, "freezer.state", "FROZEN") == 0) {
    for (int i = 0; i < 100; i++) {
      char path[4096], st[32] = "";
      int fd;
      ssize_t n;
      snprintf(path, sizeof(path), "%s/freezer.state", cg->freezer_dir);
      if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
        break;
      n = read(fd, st, sizeof(st) - 1);
      close(fd);
      if (n > 0 && strncmp(st, "FROZEN", 6) == 0)
        break;
      nanosleep(&tick, NULL);
    }
  }
  kill_procs(cg->freezer_dir ? cg->freezer_dir : cg->pids_dir);
  if (cg->pids_dir)
    kill_procs(cg->pids_dir);
  return cg->freezer_dir ? write_str(cg->freezer_dir, "freezer.state", "THAWED") : 0;
}
