/* Cgroup v1 limits: one writer per controller, each in its own hierarchy.  Also used in hybrid
 * mode, where controllers that are only on the unified hierarchy (hugetlb, on some kernels) go
 * through cgroup-v2.c.  Mirrors runc's libcontainer/cgroups/fs: the same files, the same
 * write order where the kernel cares. */
#include <config.h>
#include "cgroup-internal.h"

#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "utils.h"

static int write_i64(const char *dir, const char *file, int64_t v, ar_err *err)
{
  char buf[32];
  ar_cg_fmt_limit(buf, sizeof(buf), v, false);
  return ar_cg_write(dir, file, buf, err);
}

/* ---- memory ---- */

static bool want_memory(const struct ar_resources *r)
{
  const struct ar_memory *m = &r->memory;
  return r->has_memory &&
         (m->has_limit || m->has_reservation || m->has_swap || m->has_kernel || m->has_kernel_tcp ||
          m->has_swappiness || m->has_disable_oom_killer || m->has_use_hierarchy);
}

static int check_usage(const char *dir, const char *file, int64_t limit, ar_err *err)
{
  uint64_t usage;
  if (limit > 0 && ar_cg_read_u64(dir, file, UINT64_MAX, &usage) == 0 && (uint64_t)limit < usage)
    return ar_error(err, 0, "rejecting memory limit %lld below the current usage %llu",
                    (long long)limit, (unsigned long long)usage);
  return 0;
}

/* memsw must stay >= limit at every step: raise memsw first when growing, lower limit first
 * when shrinking (runc's order). */
static int set_limit_and_swap(const char *dir, const struct ar_memory *m, bool has_swap,
                              int64_t swap, ar_err *err)
{
  uint64_t cur = 0;
  bool swap_first;

  if (!m->has_limit)
    return has_swap ? write_i64(dir, "memory.memsw.limit_in_bytes", swap, err) : 0;
  if (!has_swap)
    return write_i64(dir, "memory.limit_in_bytes", m->limit, err);
  ar_cg_read_u64(dir, "memory.limit_in_bytes", UINT64_MAX, &cur);
  swap_first = swap < 0 || cur < (uint64_t)swap;
  if (swap_first && write_i64(dir, "memory.memsw.limit_in_bytes", swap, err) < 0)
    return -1;
  if (write_i64(dir, "memory.limit_in_bytes", m->limit, err) < 0)
    return -1;
  if (!swap_first && write_i64(dir, "memory.memsw.limit_in_bytes", swap, err) < 0)
    return -1;
  return 0;
}

static int set_memory(const char *dir, const struct ar_resources *r, bool update, ar_err *err)
{
  const struct ar_memory *m = &r->memory;
  bool has_swap = m->has_swap;
  int64_t swap = m->swap;

  /* "memory unlimited" without a swap value means both unlimited (runc). */
  if (m->has_limit && m->limit < 0 && !has_swap) {
    has_swap = true;
    swap = -1;
  }
  if (has_swap && !ar_cg_exists(dir, "memory.memsw.limit_in_bytes")) {
    if (m->has_swap)
      ar_warn("swap accounting is off in this kernel: linux.resources.memory.swap ignored");
    has_swap = false;
  }
  if (update && m->has_check_before_update && m->check_before_update && m->has_limit &&
      check_usage(dir, "memory.usage_in_bytes", m->limit, err) < 0)
    return -1;
  if (set_limit_and_swap(dir, m, has_swap, swap, err) < 0)
    return -1;
  if (m->has_reservation && write_i64(dir, "memory.soft_limit_in_bytes", m->reservation, err) < 0)
    return -1;
  if (m->has_kernel && m->kernel != 0)
    ar_warn("kernel memory limits are deprecated: linux.resources.memory.kernel ignored");
  if (m->has_kernel_tcp && write_i64(dir, "memory.kmem.tcp.limit_in_bytes", m->kernel_tcp, err) < 0)
    return -1;
  if (m->has_swappiness) {
    if (m->swappiness > 100)
      return ar_error(err, 0, "invalid memory swappiness %llu (0-100)",
                      (unsigned long long)m->swappiness);
    if (ar_cg_writef(dir, "memory.swappiness", err, "%llu", (unsigned long long)m->swappiness) < 0)
      return -1;
  }
  if (m->has_disable_oom_killer &&
      ar_cg_write(dir, "memory.oom_control", m->disable_oom_killer ? "1" : "0", err) < 0)
    return -1;
  if (m->has_use_hierarchy && !m->use_hierarchy)
    ar_warn("memory.use_hierarchy is always on in this kernel: useHierarchy=false ignored");
  return 0;
}

/* ---- cpu, cpuset ---- */

static bool want_cpu(const struct ar_resources *r)
{
  const struct ar_cpu *c = &r->cpu;
  return r->has_cpu && ((c->has_shares && c->shares) || (c->has_quota && c->quota) ||
                        (c->has_period && c->period) || c->has_burst || c->has_realtime_runtime ||
                        c->has_realtime_period || c->has_idle);
}

static int set_shares(const char *dir, uint64_t shares, ar_err *err)
{
  uint64_t got = 0;
  if (ar_cg_writef(dir, "cpu.shares", err, "%llu", (unsigned long long)shares) < 0)
    return -1;
  /* The kernel clamps silently; say so instead of running with a different weight. */
  if (ar_cg_read_u64(dir, "cpu.shares", 0, &got) == 0 && got != shares)
    return ar_error(err, 0, "cpu shares %llu out of range: the kernel set %llu",
                    (unsigned long long)shares, (unsigned long long)got);
  return 0;
}

static int set_quota_period(const char *dir, const struct ar_cpu *c, ar_err *err)
{
  bool quota = c->has_quota && c->quota != 0, period_pending = false;

  if (c->has_period && c->period) {
    cleanup_err ar_err e = NULL;
    if (ar_cg_writef(dir, "cpu.cfs_period_us", &e, "%llu", (unsigned long long)c->period) < 0) {
      /* A smaller period can push old_quota/new_period over the parent's limit (EINVAL):
       * set the quota first and try again. */
      if (e->status != EINVAL || !quota) {
        ar_error_move(err, &e);
        return -1;
      }
      period_pending = true;
    }
  }
  if (quota && write_i64(dir, "cpu.cfs_quota_us", c->quota, err) < 0)
    return -1;
  if (period_pending &&
      ar_cg_writef(dir, "cpu.cfs_period_us", err, "%llu", (unsigned long long)c->period) < 0)
    return -1;
  return 0;
}

static int set_optional(const char *dir, const char *file, const char *what, long long v,
                        ar_err *err)
{
  if (!ar_cg_exists(dir, file)) {
    ar_warn("%s is not supported by this kernel (no %s): ignored", what, file);
    return 0;
  }
  return ar_cg_writef(dir, file, err, "%lld", v);
}

static int set_cpu(const char *dir, const struct ar_resources *r, bool update, ar_err *err)
{
  const struct ar_cpu *c = &r->cpu;

  if (c->has_shares && c->shares && set_shares(dir, c->shares, err) < 0)
    return -1;
  if (set_quota_period(dir, c, err) < 0)
    return -1;
  if (c->has_burst && set_optional(dir, "cpu.cfs_burst_us", "linux.resources.cpu.burst",
                                   (long long)c->burst, err) < 0)
    return -1;
  /* The period first: the runtime is checked against it. */
  if (c->has_realtime_period && ar_cg_writef(dir, "cpu.rt_period_us", err, "%llu",
                                             (unsigned long long)c->realtime_period) < 0)
    return -1;
  if (c->has_realtime_runtime &&
      ar_cg_writef(dir, "cpu.rt_runtime_us", err, "%lld", (long long)c->realtime_runtime) < 0)
    return -1;
  if (c->has_idle &&
      set_optional(dir, "cpu.idle", "linux.resources.cpu.idle", (long long)c->idle, err) < 0)
    return -1;
  return 0;
}

static bool want_cpuset(const struct ar_resources *r)
{
  return r->has_cpu && ((r->cpu.cpus && *r->cpu.cpus) || (r->cpu.mems && *r->cpu.mems));
}

static int set_cpuset(const char *dir, const struct ar_resources *r, bool update, ar_err *err)
{
  if (r->cpu.cpus && *r->cpu.cpus && ar_cg_write(dir, "cpuset.cpus", r->cpu.cpus, err) < 0)
    return -1;
  if (r->cpu.mems && *r->cpu.mems && ar_cg_write(dir, "cpuset.mems", r->cpu.mems, err) < 0)
    return -1;
  return 0;
}

static int copy_if_empty(const char *dir, const char *parent, const char *file, ar_err *err)
{
  cleanup_free char *v = NULL, *pv = NULL;
  if (ar_cg_read(dir, file, &v, err) < 0)
    return -1;
  if (v[strspn(v, " \n")] != '\0')
    return 0;
  if (ar_cg_read(parent, file, &pv, err) < 0)
    return -1;
  pv[strcspn(pv, "\n")] = '\0';
  return *pv ? ar_cg_write(dir, file, pv, err) : 0;
}

/* A new v1 cpuset starts with empty cpus and mems, and the kernel refuses tasks until both are
 * set: copy them down from the parent, for every level below the mount (we may have made them). */
int ar_cg_v1_prepare_cpuset(const char *mount, const char *path, ar_err *err)
{
  size_t ml = strlen(mount), len = strlen(path);
  cleanup_free char *cur = xstrdup(path);

  if (strncmp(path, mount, ml) != 0 || len <= ml)
    return 0;
  for (char *s = cur + ml + 1; s <= cur + len; s++) {
    char save = *s, *slash;
    if (save != '/' && save != '\0')
      continue;
    *s = '\0';
    slash = strrchr(cur, '/');
    *slash = '\0'; /* cur is the parent for a moment */
    {
      cleanup_free char *parent = xstrdup(cur);
      *slash = '/';
      if (copy_if_empty(cur, parent, "cpuset.cpus", err) < 0 ||
          copy_if_empty(cur, parent, "cpuset.mems", err) < 0)
        return -1;
    }
    *s = save;
  }
  return 0;
}

/* ---- pids, blkio, hugetlb, devices ---- */

static bool want_pids(const struct ar_resources *r)
{
  return r->has_pids;
}

static int set_pids(const char *dir, const struct ar_resources *r, bool update, ar_err *err)
{
  char buf[32];
  /* runtime-spec: -1 (any negative) is "max"; 0 is a real limit (runc >= 1.4 agrees). */
  ar_cg_fmt_limit(buf, sizeof(buf), r->pids_limit, true);
  return ar_cg_write(dir, "pids.max", buf, err);
}

static bool want_blkio(const struct ar_resources *r)
{
  const struct ar_blkio *b = &r->blkio;
  /* runc treats a weight of 0 as unset, and Docker always sends "blockIO": {"weight": 0}. */
  bool any =
      (b->has_weight && b->weight) || (b->has_leaf_weight && b->leaf_weight) || b->n_weight_devices;
  for (int k = 0; k < AR_THROTTLE_NKINDS; k++)
    any = any || b->n_throttle[k];
  return r->has_blkio && any;
}

/* CFQ had blkio.weight; BFQ has blkio.bfq.weight; with neither, weights are not enforceable. */
static const char *weight_file(const char *dir, const char *cfq, const char *bfq)
{
  if (ar_cg_exists(dir, cfq))
    return cfq;
  if (bfq && ar_cg_exists(dir, bfq))
    return bfq;
  return NULL;
}

static int set_weight(const char *dir, const char *cfq, const char *bfq, const char *value,
                      ar_err *err)
{
  const char *f = weight_file(dir, cfq, bfq);
  if (f == NULL) {
    ar_warn("no I/O scheduler with weights (%s): blkio weight ignored", cfq);
    return 0;
  }
  return ar_cg_write(dir, f, value, err);
}

static int set_blkio(const char *dir, const struct ar_resources *r, bool update, ar_err *err)
{
  static const char *const throttle_files[AR_THROTTLE_NKINDS] = {
      "blkio.throttle.read_bps_device", "blkio.throttle.write_bps_device",
      "blkio.throttle.read_iops_device", "blkio.throttle.write_iops_device"};
  const struct ar_blkio *b = &r->blkio;
  char buf[64];

  if (b->has_weight && b->weight) {
    snprintf(buf, sizeof(buf), "%u", b->weight);
    if (set_weight(dir, "blkio.weight", "blkio.bfq.weight", buf, err) < 0)
      return -1;
  }
  if (b->has_leaf_weight && b->leaf_weight) {
    snprintf(buf, sizeof(buf), "%u", b->leaf_weight);
    if (set_weight(dir, "blkio.leaf_weight", NULL, buf, err) < 0)
      return -1;
  }
  for (size_t i = 0; i < b->n_weight_devices; i++) {
    const struct ar_weight_device *w = &b->weight_devices[i];
    if (w->has_weight) {
      snprintf(buf, sizeof(buf), "%lld:%lld %u", (long long)w->major, (long long)w->minor,
               w->weight);
      if (set_weight(dir, "blkio.weight_device", "blkio.bfq.weight_device", buf, err) < 0)
        return -1;
    }
    if (w->has_leaf_weight) {
      snprintf(buf, sizeof(buf), "%lld:%lld %u", (long long)w->major, (long long)w->minor,
               w->leaf_weight);
      if (set_weight(dir, "blkio.leaf_weight_device", NULL, buf, err) < 0)
        return -1;
    }
  }
  for (int k = 0; k < AR_THROTTLE_NKINDS; k++)
    for (size_t i = 0; i < b->n_throttle[k]; i++) {
      const struct ar_throttle_device *t = &b->throttle[k][i];
      if (ar_cg_writef(dir, throttle_files[k], err, "%lld:%lld %llu", (long long)t->major,
                       (long long)t->minor, (unsigned long long)t->rate) < 0)
        return -1;
    }
  return 0;
}

static bool want_hugetlb(const struct ar_resources *r)
{
  return r->n_hugepage_limits > 0;
}

/* "2MB", "1GB", "64KB": the only shape the kernel uses, and safe inside a file name. */
static bool valid_page_size(const char *s)
{
  size_t d = strspn(s, "0123456789");
  return d > 0 && (s[d] == 'K' || s[d] == 'M' || s[d] == 'G') && s[d + 1] == 'B' &&
         s[d + 2] == '\0';
}

static int set_hugetlb(const char *dir, const struct ar_resources *r, bool update, ar_err *err)
{
  for (size_t i = 0; i < r->n_hugepage_limits; i++) {
    const struct ar_hugepage_limit *l = &r->hugepage_limits[i];
    cleanup_free char *f = NULL, *rsvd = NULL;
    if (!valid_page_size(l->page_size))
      return ar_error(err, 0, "invalid hugepage size '%s'", l->page_size);
    f = xasprintf("hugetlb.%s.limit_in_bytes", l->page_size);
    if (ar_cg_writef(dir, f, err, "%llu", (unsigned long long)l->limit) < 0)
      return -1;
    /* Reservations must not be a way around the limit. */
    rsvd = xasprintf("hugetlb.%s.rsvd.limit_in_bytes", l->page_size);
    if (ar_cg_exists(dir, rsvd) &&
        ar_cg_writef(dir, rsvd, err, "%llu", (unsigned long long)l->limit) < 0)
      return -1;
  }
  return 0;
}

static bool want_devices(const struct ar_resources *r)
{
  return r->n_devices > 0;
}

static int set_devices(const char *dir, const struct ar_resources *r, bool update, ar_err *err)
{
  return ar_cg_devices_v1(dir, r->devices, r->n_devices, err);
}

static const struct v1_controller {
  const char *name;
  bool (*wanted)(const struct ar_resources *r);
  int (*set)(const char *dir, const struct ar_resources *r, bool update, ar_err *err);
} controllers[] = {
    {"cpuset", want_cpuset, set_cpuset},
    {"memory", want_memory, set_memory},
    {"cpu", want_cpu, set_cpu},
    {"pids", want_pids, set_pids},
    {"blkio", want_blkio, set_blkio},
    {"hugetlb", want_hugetlb, set_hugetlb},
    {"devices", want_devices, set_devices},
};

static bool unified_has(struct ar_cg_hier *u, const char *ctl)
{
  cleanup_free char *s = NULL, *tok = xasprintf(" %s ", ctl);
  cleanup_free char *padded = NULL;
  cleanup_free char *parent = NULL;

  if (u == NULL)
    return false;
  parent = xstrndup(u->path, (size_t)(strrchr(u->path, '/') - u->path));
  if (ar_cg_read(parent, "cgroup.controllers", &s, NULL) < 0)
    return false;
  s[strcspn(s, "\n")] = '\0';
  padded = xasprintf(" %s ", s);
  return strstr(padded, tok) != NULL;
}

/* Hybrid: a controller that only the unified hierarchy has (hugetlb, on some kernels). */
static int v2_fallback(struct ar_cgroup *cg, const struct v1_controller *c,
                       const struct ar_resources *r, ar_err *err)
{
  struct ar_cg_hier *u = ar_cg_unified(cg);
  const char *only[] = {c->name, NULL};

  if (cg->mode != AR_CGROUP_HYBRID || strcmp(c->name, "hugetlb") != 0 || !unified_has(u, c->name))
    return ar_error(err, ENOTSUP, "the %s cgroup controller is not available", c->name);
  if (ar_cg_v2_enable(u->mount, u->path, only, err) < 0)
    return -1;
  return ar_cg_v2_hugetlb(u->path, r, err);
}

int ar_cg_v1_apply(struct ar_cgroup *cg, const struct ar_resources *r, bool update, ar_err *err)
{
  for (size_t i = 0; i < ARRAY_SIZE(controllers); i++) {
    const struct v1_controller *c = &controllers[i];
    struct ar_cg_hier *h;
    if (!c->wanted(r))
      continue;
    h = ar_cg_find(cg, c->name);
    if (h == NULL ? v2_fallback(cg, c, r, err) < 0 : c->set(h->path, r, update, err) < 0)
      return ar_error_wrap(err, "%s", c->name);
  }
  if (r->n_unified > 0) {
    struct ar_cg_hier *u = ar_cg_unified(cg);
    if (cg->mode == AR_CGROUP_V1 || u == NULL)
      return ar_error(err, ENOTSUP, "linux.resources.unified needs cgroup v2");
    return ar_cg_v2_unified(u->path, r, err);
  }
  return 0;
}

/* ---- freezer ---- */

static void sleep_us(long us)
{
  struct timespec ts = {us / 1000000, (us % 1000000) * 1000L};
  while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
    ;
}

static bool state_is(const char *dir, const char *want)
{
  cleanup_free char *s = NULL;
  if (ar_cg_read(dir, "freezer.state", &s, NULL) < 0)
    return false;
  return strncmp(s, want, strlen(want)) == 0;
}

/* Freezing can stall in FREEZING (a task in vfork, or in an uninterruptible sleep).  Keep
 * asking, and thaw briefly now and then so the stuck task can move on (runc does the same). */
int ar_cg_v1_freeze(const char *dir, bool frozen, ar_err *err)
{
  if (!frozen)
    return ar_cg_write(dir, "freezer.state", "THAWED", err);
  for (int i = 0; i < 1000; i++) {
    if (i % 50 == 49) {
      ar_cg_write(dir, "freezer.state", "THAWED", NULL);
      sleep_us(10000);
    }
    if (ar_cg_write(dir, "freezer.state", "FROZEN", err) < 0)
      return -1;
    if (i % 25 == 24)
      sleep_us(10);
    if (state_is(dir, "FROZEN"))
      return 0;
  }
  ar_cg_write(dir, "freezer.state", "THAWED", NULL);
  return ar_error(err, EBUSY, "cannot freeze '%s'", dir);
}

/* ---- stats ---- */

static void cpu_stats(struct ar_cgroup *cg, struct ar_cgroup_stats *st, int *found)
{
  struct ar_cg_hier *h = ar_cg_find(cg, "cpuacct");
  uint64_t v;

  if (h && ar_cg_read_u64(h->path, "cpuacct.usage", 0, &st->cpu_usage_ns) == 0) {
    (*found)++;
    if (ar_cg_read_u64(h->path, "cpuacct.usage_user", 0, &st->cpu_user_ns) < 0 ||
        ar_cg_read_u64(h->path, "cpuacct.usage_sys", 0, &st->cpu_system_ns) < 0) {
      /* Older kernels: only clock ticks in cpuacct.stat. */
      long hz = sysconf(_SC_CLK_TCK);
      uint64_t ns_per_tick = hz > 0 ? 1000000000ULL / (uint64_t)hz : 10000000ULL;
      if (ar_cg_read_key(h->path, "cpuacct.stat", "user", &v) == 0)
        st->cpu_user_ns = v * ns_per_tick;
      if (ar_cg_read_key(h->path, "cpuacct.stat", "system", &v) == 0)
        st->cpu_system_ns = v * ns_per_tick;
    }
  }
  h = ar_cg_find(cg, "cpu");
  if (h && ar_cg_read_key(h->path, "cpu.stat", "nr_periods", &st->cpu_periods) == 0) {
    ar_cg_read_key(h->path, "cpu.stat", "nr_throttled", &st->cpu_throttled_periods);
    ar_cg_read_key(h->path, "cpu.stat", "throttled_time", &st->cpu_throttled_ns);
  }
}

static void memory_stats(struct ar_cgroup *cg, struct ar_cgroup_stats *st, int *found)
{
  struct ar_cg_hier *h = ar_cg_find(cg, "memory");
  uint64_t memsw = 0;

  if (h == NULL || ar_cg_read_u64(h->path, "memory.usage_in_bytes", 0, &st->mem_usage) < 0)
    return;
  (*found)++;
  st->has_mem_max_usage =
      ar_cg_read_u64(h->path, "memory.max_usage_in_bytes", 0, &st->mem_max_usage) == 0;
  ar_cg_read_u64(h->path, "memory.limit_in_bytes", UINT64_MAX, &st->mem_limit);
  ar_cg_read_u64(h->path, "memory.failcnt", 0, &st->mem_failcnt);
  if (ar_cg_read_u64(h->path, "memory.memsw.usage_in_bytes", 0, &memsw) == 0)
    st->mem_swap_usage = memsw > st->mem_usage ? memsw - st->mem_usage : 0;
  ar_cg_read_u64(h->path, "memory.memsw.limit_in_bytes", UINT64_MAX, &st->mem_swap_limit);
  if (ar_cg_read_key(h->path, "memory.stat", "total_cache", &st->mem_cache) < 0)
    ar_cg_read_key(h->path, "memory.stat", "cache", &st->mem_cache);
  ar_cg_read_key(h->path, "memory.oom_control", "oom_kill", &st->oom_kills);
}

static void pids_stats(struct ar_cgroup *cg, struct ar_cgroup_stats *st, int *found)
{
  struct ar_cg_hier *h = ar_cg_find(cg, "pids");

  if (h == NULL || ar_cg_read_u64(h->path, "pids.current", 0, &st->pids_current) < 0)
    return;
  (*found)++;
  ar_cg_read_u64(h->path, "pids.max", 0, &st->pids_limit); /* "max" -> 0, as runc reports */
  st->has_pids_peak = ar_cg_read_u64(h->path, "pids.peak", 0, &st->pids_peak) == 0;
}

int ar_cg_v1_stats(struct ar_cgroup *cg, struct ar_cgroup_stats *st, ar_err *err)
{
  int found = 0;

  cpu_stats(cg, st, &found);
  memory_stats(cg, st, &found);
  pids_stats(cg, st, &found);
  if (found == 0 && cg->n_h > 0)
    return ar_error(err, ENOENT, "cgroup stats: nothing readable under '%s'", cg->h[0].path);
  return 0;
}
