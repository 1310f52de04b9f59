/* events [--stats] [--interval D] ID: the container's resource usage as runc's JSON events.
 *   {"type":"stats","id":ID,"data":{"cpu":..,"memory":..,"pids":..,"blkio":..,...}}
 *   {"type":"oom","id":ID}
 * --stats prints one stats line; otherwise one every interval (first after one interval, as
 * runc) and an oom line whenever the cgroup's oom_kill count rises, until the init exits.
 * The numbers come from ar_cgroup_stats(); what it does not carry (per-CPU times, the raw
 * memory.stat, kernel memory, block I/O) is read here from the same cgroup's files. */
#include <config.h>

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "cgroup.h"
#include "cli.h"
#include "log.h"
#include "spec/jsonw.h"
#include "statedir.h"
#include "utils.h"

#define MAX_LIST 1024 /* entries taken from one stats file: bounded, whatever the cgroup holds */

/* The cgroup file's content, or NULL. */
static char *read_cg_file(struct ar_cgroup *cg, const char *controller, const char *file)
{
  const char *dir = ar_cgroup_path(cg, controller);
  cleanup_free char *path = NULL;
  char *s = NULL;

  if (dir == NULL)
    return NULL;
  path = xasprintf("%s/%s", dir, file);
  if (ar_read_file(path, &s, NULL, NULL) < 0)
    return NULL;
  return s;
}

static bool read_cg_u64(struct ar_cgroup *cg, const char *controller, const char *file,
                        uint64_t *ret)
{
  cleanup_free char *s = read_cg_file(cg, controller, file);
  char *end;
  if (s == NULL)
    return false;
  errno = 0;
  *ret = strtoull(s, &end, 10);
  return errno == 0 && end != s;
}

/* ---- cpu ---- */

/* "123 456 789\n" (cpuacct.usage_percpu and friends, v1 only) as an array, if non-empty. */
static void emit_u64_list(struct ar_jw *w, struct ar_cgroup *cg, const char *file, const char *key)
{
  cleanup_free char *s = read_cg_file(cg, "cpuacct", file);
  char *p = s, *end;
  size_t n = 0;

  if (s == NULL || s[strspn(s, " \n")] == '\0')
    return;
  ar_jw_key(w, key);
  ar_jw_array_open(w);
  for (unsigned long long v; n < MAX_LIST && (v = strtoull(p, &end, 10), end != p); p = end, n++)
    ar_jw_uint(w, v);
  ar_jw_array_close(w);
}

/* runc's json tags: zero values with omitempty are left out. */
static void kuint_nz(struct ar_jw *w, const char *key, uint64_t v)
{
  if (v)
    ar_jw_kuint(w, key, v);
}

static void emit_cpu(struct ar_jw *w, struct ar_cgroup *cg, const struct ar_cgroup_stats *s)
{
  ar_jw_key(w, "cpu");
  ar_jw_map_open(w);
  ar_jw_key(w, "usage");
  ar_jw_map_open(w);
  kuint_nz(w, "total", s->cpu_usage_ns);
  emit_u64_list(w, cg, "cpuacct.usage_percpu", "percpu");
  emit_u64_list(w, cg, "cpuacct.usage_percpu_sys", "percpu_kernel");
  emit_u64_list(w, cg, "cpuacct.usage_percpu_user", "percpu_user");
  ar_jw_kuint(w, "kernel", s->cpu_system_ns);
  ar_jw_kuint(w, "user", s->cpu_user_ns);
  ar_jw_map_close(w);
  ar_jw_key(w, "throttling");
  ar_jw_map_open(w);
  kuint_nz(w, "periods", s->cpu_periods);
  kuint_nz(w, "throttledPeriods", s->cpu_throttled_periods);
  kuint_nz(w, "throttledTime", s->cpu_throttled_ns);
  ar_jw_map_close(w);
  ar_jw_map_close(w);
}

/* ---- memory ---- */

struct mem_entry {
  uint64_t limit, usage, max, failcnt;
};

static void emit_mem_entry(struct ar_jw *w, const char *key, const struct mem_entry *e)
{
  ar_jw_key(w, key);
  ar_jw_map_open(w);
  ar_jw_kuint(w, "limit", e->limit);
  kuint_nz(w, "usage", e->usage);
  kuint_nz(w, "max", e->max);
  ar_jw_kuint(w, "failcnt", e->failcnt);
  ar_jw_map_close(w);
}

/* v1's memory.kmem.* and memory.kmem.tcp.*: prefix "memory.kmem" or "memory.kmem.tcp". */
static struct mem_entry kmem_entry(struct ar_cgroup *cg, const char *prefix)
{
  struct mem_entry e = {0};
  cleanup_free char *limit = xasprintf("%s.limit_in_bytes", prefix);
  cleanup_free char *usage = xasprintf("%s.usage_in_bytes", prefix);
  cleanup_free char *max = xasprintf("%s.max_usage_in_bytes", prefix);
  cleanup_free char *failcnt = xasprintf("%s.failcnt", prefix);

  read_cg_u64(cg, "memory", limit, &e.limit);
  read_cg_u64(cg, "memory", usage, &e.usage);
  read_cg_u64(cg, "memory", max, &e.max);
  read_cg_u64(cg, "memory", failcnt, &e.failcnt);
  return e;
}

/* memory.stat's "key value" lines as a map. */
static void emit_raw(struct ar_jw *w, struct ar_cgroup *cg)
{
  cleanup_free char *s = read_cg_file(cg, "memory", "memory.stat");
  char *save = NULL;
  size_t n = 0;

  if (s == NULL)
    return;
  ar_jw_key(w, "raw");
  ar_jw_map_open(w);
  for (char *line = strtok_r(s, "\n", &save); line && n < MAX_LIST;
       line = strtok_r(NULL, "\n", &save)) {
    char *sp = strchr(line, ' '), *end;
    unsigned long long v;
    if (sp == NULL)
      continue;
    *sp = '\0';
    v = strtoull(sp + 1, &end, 10);
    if (end == sp + 1)
      continue;
    ar_jw_kuint(w, line, v);
    n++;
  }
  ar_jw_map_close(w);
}

static uint64_t add_sat(uint64_t a, uint64_t b)
{
  return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static void emit_memory(struct ar_jw *w, struct ar_cgroup *cg, const struct ar_cgroup_stats *s)
{
  bool v2 = ar_cgroup_detect_mode() == AR_CGROUP_V2;
  struct mem_entry usage = {s->mem_limit, s->mem_usage, s->mem_max_usage, s->mem_failcnt};
  /* runc reports swap as memory + swap on both versions (v1's memsw). */
  struct mem_entry swap = {v2 ? add_sat(s->mem_swap_limit, s->mem_limit) : s->mem_swap_limit,
                           add_sat(s->mem_usage, s->mem_swap_usage), 0, 0};
  struct mem_entry kernel = {0}, kernel_tcp = {0};

  if (!v2) {
    read_cg_u64(cg, "memory", "memory.memsw.max_usage_in_bytes", &swap.max);
    read_cg_u64(cg, "memory", "memory.memsw.failcnt", &swap.failcnt);
    kernel = kmem_entry(cg, "memory.kmem");
    kernel_tcp = kmem_entry(cg, "memory.kmem.tcp");
  }
  ar_jw_key(w, "memory");
  ar_jw_map_open(w);
  kuint_nz(w, "cache", s->mem_cache);
  emit_mem_entry(w, "usage", &usage);
  emit_mem_entry(w, "swap", &swap);
  emit_mem_entry(w, "kernel", &kernel);
  emit_mem_entry(w, "kernelTCP", &kernel_tcp);
  emit_raw(w, cg);
  ar_jw_map_close(w);
}

static void emit_pids(struct ar_jw *w, const struct ar_cgroup_stats *s)
{
  ar_jw_key(w, "pids");
  ar_jw_map_open(w);
  kuint_nz(w, "current", s->pids_current);
  kuint_nz(w, "limit", s->pids_limit);
  ar_jw_map_close(w);
}

/* ---- block I/O ---- */

static void blkio_entry(struct ar_jw *w, unsigned major, unsigned minor, const char *op,
                        uint64_t value)
{
  ar_jw_map_open(w);
  ar_jw_kuint(w, "major", major);
  ar_jw_kuint(w, "minor", minor);
  ar_jw_kstr(w, "op", op);
  ar_jw_kuint(w, "value", value);
  ar_jw_map_close(w);
}

/* v1: "8:0 Read 4096" lines (the "Total" line has no device and is skipped, as in runc). */
static void emit_v1_blkio_list(struct ar_jw *w, struct ar_cgroup *cg, const char *file,
                               const char *key)
{
  cleanup_free char *cfq = xasprintf("blkio.%s", file), *thr = xasprintf("blkio.throttle.%s", file);
  cleanup_free char *s = read_cg_file(cg, "blkio", cfq);
  char *save = NULL;
  size_t n = 0;

  /* CFQ's files are absent or empty with other schedulers; the throttle ones always count. */
  if (s == NULL || s[strspn(s, " \n")] == '\0' || strncmp(s, "Total", 5) == 0) {
    free(s);
    s = read_cg_file(cg, "blkio", thr);
  }
  if (s == NULL || s[strspn(s, " \n")] == '\0' || strncmp(s, "Total", 5) == 0)
    return;
  ar_jw_key(w, key);
  ar_jw_array_open(w);
  for (char *line = strtok_r(s, "\n", &save); line && n < MAX_LIST;
       line = strtok_r(NULL, "\n", &save)) {
    unsigned major, minor;
    unsigned long long v;
    char op[32];
    if (sscanf(line, "%u:%u %31s %llu", &major, &minor, op, &v) == 4) {
      blkio_entry(w, major, minor, op, v);
      n++;
    }
  }
  ar_jw_array_close(w);
}

/* v2: "8:0 rbytes=1 wbytes=2 rios=3 wios=4 ..." -> runc's Read/Write entries. */
static void emit_v2_io(struct ar_jw *w, const char *s, const char *rkey, const char *wkey,
                       const char *key)
{
  cleanup_free char *copy = xstrdup(s);
  char *save = NULL;
  size_t n = 0;

  ar_jw_key(w, key);
  ar_jw_array_open(w);
  for (char *line = strtok_r(copy, "\n", &save); line && n < MAX_LIST;
       line = strtok_r(NULL, "\n", &save), n++) {
    unsigned major, minor;
    char *r, *wr;
    if (sscanf(line, "%u:%u", &major, &minor) != 2)
      continue;
    r = strstr(line, rkey);
    wr = strstr(line, wkey);
    if (r)
      blkio_entry(w, major, minor, "Read", strtoull(r + strlen(rkey), NULL, 10));
    if (wr)
      blkio_entry(w, major, minor, "Write", strtoull(wr + strlen(wkey), NULL, 10));
  }
  ar_jw_array_close(w);
}

static void emit_blkio(struct ar_jw *w, struct ar_cgroup *cg)
{
  ar_jw_key(w, "blkio");
  ar_jw_map_open(w);
  if (ar_cgroup_detect_mode() == AR_CGROUP_V2) {
    cleanup_free char *s = read_cg_file(cg, "io", "io.stat");
    if (s && s[strspn(s, " \n")] != '\0') {
      emit_v2_io(w, s, " rbytes=", " wbytes=", "ioServiceBytesRecursive");
      emit_v2_io(w, s, " rios=", " wios=", "ioServicedRecursive");
    }
  } else {
    emit_v1_blkio_list(w, cg, "io_service_bytes_recursive", "ioServiceBytesRecursive");
    emit_v1_blkio_list(w, cg, "io_serviced_recursive", "ioServicedRecursive");
  }
  ar_jw_map_close(w);
}

/* ---- events ---- */

static void print_line(struct ar_jw *w)
{
  char *s = ar_jw_finish(w, NULL);
  printf("%s\n", s);
  fflush(stdout);
  free(s);
}

static int print_stats(const char *id, struct ar_cgroup *cg, ar_err *err)
{
  struct ar_cgroup_stats s;
  struct ar_jw *w;

  if (ar_cgroup_stats(cg, &s, err) < 0)
    return -1;
  w = ar_jw_new(false);
  ar_jw_map_open(w);
  ar_jw_kstr(w, "type", "stats");
  ar_jw_kstr(w, "id", id);
  ar_jw_key(w, "data");
  ar_jw_map_open(w);
  emit_cpu(w, cg, &s);
  emit_memory(w, cg, &s);
  emit_pids(w, &s);
  emit_blkio(w, cg);
  ar_jw_key(w, "hugetlb");
  ar_jw_map_open(w);
  ar_jw_map_close(w);
  ar_jw_key(w, "intel_rdt");
  ar_jw_map_open(w);
  ar_jw_map_close(w);
  ar_jw_key(w, "network_interfaces");
  ar_jw_null(w);
  ar_jw_map_close(w);
  ar_jw_map_close(w);
  print_line(w);
  return 0;
}

static void print_oom(const char *id)
{
  struct ar_jw *w = ar_jw_new(false);
  ar_jw_map_open(w);
  ar_jw_kstr(w, "type", "oom");
  ar_jw_kstr(w, "id", id);
  ar_jw_map_close(w);
  print_line(w);
}

static uint64_t oom_kills(struct ar_cgroup *cg)
{
  struct ar_cgroup_stats s;
  cleanup_err ar_err err = NULL;
  return ar_cgroup_stats(cg, &s, &err) < 0 ? 0 : s.oom_kills;
}

/* Poll the init's pidfd in short slices: it ends the stream, and between stats lines we look
 * for new OOM kills.  The init is not our child, so a pidfd is how we see it exit. */
#define OOM_POLL_MS 250

static int follow(const struct ar_state *st, struct ar_cgroup *cg, uint64_t interval_ms)
{
  cleanup_close int pidfd = (int)syscall(SYS_pidfd_open, st->pid, 0);
  uint64_t last_oom = oom_kills(cg), next = ar_now_ns(CLOCK_MONOTONIC) / 1000000 + interval_ms;

  if (pidfd < 0 || !ar_state_init_alive(st))
    return 0;
  for (;;) {
    struct pollfd pfd = {.fd = pidfd, .events = POLLIN};
    uint64_t now = ar_now_ns(CLOCK_MONOTONIC) / 1000000, oom;
    int timeout = (int)(next > now ? (next - now < OOM_POLL_MS ? next - now : OOM_POLL_MS) : 0);
    int r = poll(&pfd, 1, timeout);

    if (r < 0 && errno != EINTR)
      return -1;
    if ((oom = oom_kills(cg)) > last_oom) {
      print_oom(st->id);
      last_oom = oom;
    }
    if (r > 0)
      return 0; /* the init exited */
    if (ar_now_ns(CLOCK_MONOTONIC) / 1000000 >= next) {
      cleanup_err ar_err err = NULL;
      if (print_stats(st->id, cg, &err) < 0)
        ar_log(AR_LOG_ERROR, "%s", err->msg); /* runc logs and keeps going */
      next += interval_ms;
    }
  }
}

int ar_cmd_events(struct ar_ctx *ctx, int argc, char **argv)
{
  bool stats = false;
  const char *interval = "5s";
  const struct ar_opt opts[] = {{"stats", 0, AR_OPT_FLAG, &stats},
                                {"interval", 0, AR_OPT_STRING, &interval}};
  struct ar_state *st = NULL;
  struct ar_cgroup *cg = NULL;
  uint64_t interval_ms;
  ar_err err = NULL;
  int first = ar_parse_opts("events", argc, argv, opts, ARRAY_SIZE(opts)), ret = -1;

  if (first < 0)
    return 1;
  if (first != argc - 1)
    return ar_usage_error("events", "events needs exactly one container ID");
  if (ar_parse_duration_ms(interval, &interval_ms) < 0 || interval_ms == 0)
    return ar_usage_error("events",
                          "--interval: expected a duration above 0 such as 5s or "
                          "500ms, got \"%s\"",
                          interval);
  if (ar_state_load(ctx->root, argv[first], &st, &err) < 0)
    return ar_fail(&err);
  if (!ar_state_init_alive(st))
    ar_error(&err, 0, "container \"%s\" is stopped: container not running", st->id);
  else if (st->cgroup == NULL)
    ar_error(&err, 0, "container \"%s\" has no cgroup", st->id);
  else if (ar_cgroup_deserialize(st->cgroup, &cg, &err) == 0)
    ret = stats ? print_stats(st->id, cg, &err) : follow(st, cg, interval_ms);
  if (ret < 0 && err == NULL)
    ar_error(&err, errno, "events");
  ar_cgroup_free(cg);
  ar_state_free(st);
  return ret < 0 ? ar_fail(&err) : 0;
}
