/* Cgroup v2 limits, all in one directory.  Follows runc's libcontainer/cgroups/fs2: the same
 * files and value conversions (shares -> weight, OCI memory+swap -> swap.max), and the
 * unified map written last so that it wins. */
#include <config.h>
#include "cgroup-internal.h"

#include <errno.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "utils.h"

/* ---- controllers along the path ---- */

static bool in_list(const char *list, const char *word)
{
  size_t wl = strlen(word);
  for (const char *p = list; (p = strstr(p, word)) != NULL; p += wl)
    if ((p == list || p[-1] == ' ' || p[-1] == '\n') &&
        (p[wl] == '\0' || p[wl] == ' ' || p[wl] == '\n'))
      return true;
  return false;
}

/* Enable in `dir`'s subtree_control what it offers (or just `only`). */
static int enable_in(const char *dir, const char *const *only, ar_err *err)
{
  cleanup_free char *avail = NULL, *on = NULL, *all = NULL;
  char *save = NULL;
  size_t len = 0;

  if (ar_cg_read(dir, "cgroup.controllers", &avail, err) < 0 ||
      ar_cg_read(dir, "cgroup.subtree_control", &on, err) < 0)
    return -1;
  for (size_t i = 0; only && only[i]; i++)
    if (!in_list(avail, only[i]) && !in_list(on, only[i]))
      return ar_error(err, ENOTSUP, "the %s controller is not available in '%s'", only[i], dir);
  all = xcalloc(1, strlen(avail) * 2 + 2);
  for (char *c = strtok_r(avail, " \n", &save); c; c = strtok_r(NULL, " \n", &save)) {
    bool wanted = only == NULL;
    for (size_t i = 0; only && only[i]; i++)
      wanted = wanted || strcmp(only[i], c) == 0;
    if (wanted && !in_list(on, c))
      len += (size_t)sprintf(all + len, "%s+%s", len ? " " : "", c);
  }
  if (len == 0)
    return 0;
  if (ar_cg_write(dir, "cgroup.subtree_control", all, NULL) == 0)
    return 0;
  /* One refused controller fails the whole write: retry one by one.  With `only`, each one is
   * needed; otherwise a missing one shows up later as a missing file. */
  save = NULL;
  for (char *c = strtok_r(all, " ", &save); c; c = strtok_r(NULL, " ", &save)) {
    cleanup_err ar_err e = NULL;
    if (ar_cg_write(dir, "cgroup.subtree_control", c, &e) < 0 && only) {
      ar_error_move(err, &e);
      return -1;
    }
  }
  return 0;
}

int ar_cg_v2_enable(const char *mount, const char *path, const char *const *only, ar_err *err)
{
  size_t ml = strlen(mount);
  cleanup_free char *cur = xstrdup(path);
  char *last = strrchr(cur, '/');

  if (strncmp(path, mount, ml) != 0 || last == NULL || last < cur + ml)
    return 0;
  /* mount, mount/a, ... up to the parent of the leaf: the leaf will hold processes. */
  for (char *s = cur + ml; s <= last; s++) {
    if (*s != '/' && s != last)
      continue;
    char save = *s;
    *s = '\0';
    if (enable_in(*cur ? cur : "/", only, err) < 0)
      return ar_error_wrap(err, "enable controllers");
    *s = save;
  }
  return 0;
}

/* ---- memory ---- */

static bool any_memory(const struct ar_memory *m)
{
  return m->has_limit || m->has_reservation || m->has_swap || m->has_kernel || m->has_kernel_tcp ||
         m->has_swappiness || m->has_disable_oom_killer;
}

/* OCI swap is memory+swap; memory.swap.max is swap alone. */
static int swap_value(const struct ar_memory *m, bool *has, int64_t *ret, ar_err *err)
{
  *has = false;
  if (m->has_limit && m->limit < 0 && !m->has_swap) {
    *has = true; /* memory unlimited and no swap value: both unlimited */
    *ret = -1;
    return 0;
  }
  if (!m->has_swap || m->swap == 0)
    return 0;
  *has = true;
  if (m->swap < 0) {
    *ret = -1;
    return 0;
  }
  if (!m->has_limit || m->limit <= 0)
    return ar_error(err, 0, "cannot set a swap limit without a memory limit");
  if (m->swap < m->limit)
    return ar_error(err, 0, "memory+swap limit %lld is below the memory limit %lld",
                    (long long)m->swap, (long long)m->limit);
  *ret = m->swap - m->limit;
  return 0;
}

static int write_limit(const char *dir, const char *file, int64_t v, ar_err *err)
{
  char buf[32];
  ar_cg_fmt_limit(buf, sizeof(buf), v, true);
  return ar_cg_write(dir, file, buf, err);
}

static int set_memory(const char *dir, const struct ar_memory *m, bool update, ar_err *err)
{
  bool has_swap;
  int64_t swap = 0;
  uint64_t usage;

  if (swap_value(m, &has_swap, &swap, err) < 0)
    return -1;
  if (update && m->has_check_before_update && m->check_before_update && m->has_limit &&
      m->limit > 0 && ar_cg_read_u64(dir, "memory.current", 0, &usage) == 0 &&
      (uint64_t)m->limit < usage)
    return ar_error(err, 0, "rejecting memory limit %lld below the current usage %llu",
                    (long long)m->limit, (unsigned long long)usage);
  if (has_swap) {
    if (ar_cg_exists(dir, "memory.swap.max")) {
      if (write_limit(dir, "memory.swap.max", swap, err) < 0)
        return -1;
    } else if (m->has_swap) {
      ar_warn("swap accounting is off in this kernel: linux.resources.memory.swap ignored");
    }
  }
  if (m->has_limit && write_limit(dir, "memory.max", m->limit, err) < 0)
    return -1;
  if (m->has_reservation && write_limit(dir, "memory.low", m->reservation, err) < 0)
    return -1;
  if (m->has_kernel && m->kernel != 0)
    ar_warn("kernel memory limits do not exist on cgroup v2: ignored");
  if (m->has_kernel_tcp && m->kernel_tcp != 0)
    ar_warn("kernelTCP does not exist on cgroup v2: ignored");
  if (m->has_swappiness)
    ar_warn("per-cgroup swappiness does not exist on cgroup v2: ignored");
  if (m->has_disable_oom_killer && m->disable_oom_killer)
    ar_warn("disableOOMKiller does not exist on cgroup v2: ignored");
  return 0;
}

/* ---- cpu, cpuset, pids ---- */

/* runc's and crun's mapping of cpu.shares [2, 262144] onto cpu.weight [1, 10000]. */
static uint64_t shares_to_weight(uint64_t shares)
{
  if (shares < 2)
    shares = 2;
  if (shares > 262144)
    shares = 262144;
  return 1 + ((shares - 2) * 9999) / 262142;
}

static int set_cpu_max(const char *dir, const struct ar_cpu *c, ar_err *err)
{
  bool quota = c->has_quota && c->quota != 0, period = c->has_period && c->period;
  cleanup_free char *cur = NULL;
  char q[32];

  if (!quota && !period)
    return 0;
  if (quota) {
    ar_cg_fmt_limit(q, sizeof(q), c->quota, true);
  } else {
    /* Only the period changes: keep the quota that is there. */
    snprintf(q, sizeof(q), "max");
    if (ar_cg_read(dir, "cpu.max", &cur, NULL) == 0)
      snprintf(q, sizeof(q), "%.*s", (int)strcspn(cur, " \n"), cur);
  }
  if (period)
    return ar_cg_writef(dir, "cpu.max", err, "%s %llu", q, (unsigned long long)c->period);
  return ar_cg_write(dir, "cpu.max", q, err);
}

static int set_optional(const char *dir, const char *file, long long v, ar_err *err)
{
  if (!ar_cg_exists(dir, file)) {
    ar_warn("%s is not supported by this kernel: ignored", file);
    return 0;
  }
  return ar_cg_writef(dir, file, err, "%lld", v);
}

static int set_cpu(const char *dir, const struct ar_cpu *c, ar_err *err)
{
  if (c->has_shares && c->shares &&
      ar_cg_writef(dir, "cpu.weight", err, "%llu",
                   (unsigned long long)shares_to_weight(c->shares)) < 0)
    return -1;
  if (set_cpu_max(dir, c, err) < 0)
    return -1;
  if (c->has_burst && set_optional(dir, "cpu.max.burst", (long long)c->burst, err) < 0)
    return -1;
  if (c->has_idle && set_optional(dir, "cpu.idle", (long long)c->idle, err) < 0)
    return -1;
  if ((c->has_realtime_runtime && c->realtime_runtime) ||
      (c->has_realtime_period && c->realtime_period))
    ar_warn("realtime scheduling limits do not exist on cgroup v2: ignored");
  if (c->cpus && *c->cpus && ar_cg_write(dir, "cpuset.cpus", c->cpus, err) < 0)
    return -1;
  if (c->mems && *c->mems && ar_cg_write(dir, "cpuset.mems", c->mems, err) < 0)
    return -1;
  return 0;
}

/* ---- io ---- */

/* blkio.weight [10, 1000] onto io.weight [1, 10000] (runc). */
static unsigned io_weight(unsigned w)
{
  if (w < 10)
    w = 10;
  if (w > 1000)
    w = 1000;
  return 1 + (w - 10) * 9999 / 990;
}

static int set_weight(const char *dir, const char *dev, unsigned w, ar_err *err)
{
  /* BFQ takes the blkio range as is; io.weight wants the v2 range. */
  if (ar_cg_exists(dir, "io.bfq.weight"))
    return ar_cg_writef(dir, "io.bfq.weight", err, "%s%s%u", dev, *dev ? " " : "", w);
  if (ar_cg_exists(dir, "io.weight"))
    return ar_cg_writef(dir, "io.weight", err, "%s%s%u", dev, *dev ? " " : "", io_weight(w));
  ar_warn("no I/O scheduler with weights: blkio weight ignored");
  return 0;
}

static int set_io(const char *dir, const struct ar_blkio *b, ar_err *err)
{
  static const char *const keys[AR_THROTTLE_NKINDS] = {"rbps", "wbps", "riops", "wiops"};
  char dev[48];

  /* 0 is unset, as in runc (Docker always sends "weight": 0). */
  if (b->has_weight && b->weight && set_weight(dir, "", b->weight, err) < 0)
    return -1;
  if (b->has_leaf_weight && b->leaf_weight)
    ar_warn("blkio leafWeight does not exist on cgroup v2: ignored");
  for (size_t i = 0; i < b->n_weight_devices; i++) {
    const struct ar_weight_device *w = &b->weight_devices[i];
    snprintf(dev, sizeof(dev), "%lld:%lld", (long long)w->major, (long long)w->minor);
    if (w->has_weight && set_weight(dir, dev, w->weight, err) < 0)
      return -1;
  }
  for (int k = 0; k < AR_THROTTLE_NKINDS; k++)
    for (size_t i = 0; i < b->n_throttle[k]; i++) {
      const struct ar_throttle_device *t = &b->throttle[k][i];
      char rate[32];
      /* 0 lifts the limit, as in v1. */
      if (t->rate == 0)
        snprintf(rate, sizeof(rate), "max");
      else
        snprintf(rate, sizeof(rate), "%llu", (unsigned long long)t->rate);
      if (ar_cg_writef(dir, "io.max", err, "%lld:%lld %s=%s", (long long)t->major,
                       (long long)t->minor, keys[k], rate) < 0)
        return -1;
    }
  return 0;
}

/* ---- hugetlb, unified ---- */

static bool valid_page_size(const char *s)
{
  size_t d = strspn(s, "0123456789");
  return d > 0 && (s[d] == 'K' || s[d] == 'M' || s[d] == 'G') && s[d + 1] == 'B' &&
         s[d + 2] == '\0';
}

int ar_cg_v2_hugetlb(const char *dir, const struct ar_resources *r, ar_err *err)
{
  for (size_t i = 0; i < r->n_hugepage_limits; i++) {
    const struct ar_hugepage_limit *l = &r->hugepage_limits[i];
    cleanup_free char *f = NULL, *rsvd = NULL;
    if (!valid_page_size(l->page_size))
      return ar_error(err, 0, "invalid hugepage size '%s'", l->page_size);
    f = xasprintf("hugetlb.%s.max", l->page_size);
    if (ar_cg_writef(dir, f, err, "%llu", (unsigned long long)l->limit) < 0)
      return -1;
    /* Reservations must not be a way around the limit. */
    rsvd = xasprintf("hugetlb.%s.rsvd.max", l->page_size);
    if (ar_cg_exists(dir, rsvd) &&
        ar_cg_writef(dir, rsvd, err, "%llu", (unsigned long long)l->limit) < 0)
      return -1;
  }
  return 0;
}

/* The map's keys name files in the container's own directory, nothing else: no path tricks,
 * and none of the files that move or kill processes. */
static bool unified_key_ok(const char *k)
{
  static const char *const refused[] = {"cgroup.procs", "cgroup.threads", "cgroup.kill"};
  if (*k == '\0' || strchr(k, '/') || strcmp(k, ".") == 0 || strcmp(k, "..") == 0 ||
      strchr(k, '.') == NULL)
    return false;
  for (size_t i = 0; i < ARRAY_SIZE(refused); i++)
    if (strcmp(k, refused[i]) == 0)
      return false;
  return true;
}

int ar_cg_v2_unified(const char *dir, const struct ar_resources *r, ar_err *err)
{
  for (size_t i = 0; i < r->n_unified; i++) {
    const struct ar_kv *kv = &r->unified[i];
    if (!unified_key_ok(kv->key))
      return ar_error(err, EINVAL, "linux.resources.unified: invalid key '%s'", kv->key);
    if (!ar_cg_exists(dir, kv->key))
      return ar_error(err, ENOENT,
                      "linux.resources.unified: '%s' is not a file of the cgroup (controller "
                      "not enabled?)",
                      kv->key);
    if (ar_cg_write(dir, kv->key, kv->value, err) < 0)
      return ar_error_wrap(err, "linux.resources.unified");
  }
  return 0;
}

int ar_cg_v2_apply(const char *dir, const struct ar_resources *r, bool update, ar_err *err)
{
  if (r->has_pids) {
    char buf[32];
    ar_cg_fmt_limit(buf, sizeof(buf), r->pids_limit, true); /* -1 "max", 0 is a real limit */
    if (ar_cg_write(dir, "pids.max", buf, err) < 0)
      return ar_error_wrap(err, "pids");
  }
  if (r->has_memory && any_memory(&r->memory) && set_memory(dir, &r->memory, update, err) < 0)
    return ar_error_wrap(err, "memory");
  if (r->has_blkio && set_io(dir, &r->blkio, err) < 0)
    return ar_error_wrap(err, "io");
  if (r->has_cpu && set_cpu(dir, &r->cpu, err) < 0)
    return ar_error_wrap(err, "cpu");
  if (r->n_hugepage_limits && ar_cg_v2_hugetlb(dir, r, err) < 0)
    return ar_error_wrap(err, "hugetlb");
  if (r->n_devices && ar_cg_devices_v2(dir, r->devices, r->n_devices, err) < 0)
    return ar_error_wrap(err, "devices");
  return ar_cg_v2_unified(dir, r, err);
}

/* ---- freezer ---- */

static void sleep_ms(long ms)
{
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
    ;
}

int ar_cg_v2_freeze(const char *dir, bool frozen, ar_err *err)
{
  uint64_t state = 0;

  if (!ar_cg_exists(dir, "cgroup.freeze"))
    return ar_error(err, ENOTSUP, "'%s': no cgroup.freeze (kernel < 5.2)", dir);
  if (ar_cg_write(dir, "cgroup.freeze", frozen ? "1" : "0", err) < 0)
    return -1;
  /* cgroup.events says when every task has actually stopped (10 s, as runc). */
  for (int i = 0; i < 1000; i++) {
    if (ar_cg_read_key(dir, "cgroup.events", "frozen", &state) < 0 || (state != 0) == frozen)
      return 0;
    sleep_ms(10);
  }
  if (frozen)
    ar_cg_write(dir, "cgroup.freeze", "0", NULL);
  return ar_error(err, ETIMEDOUT, "'%s' did not %s", dir, frozen ? "freeze" : "thaw");
}

/* ---- stats ---- */

int ar_cg_v2_stats(const char *dir, struct ar_cgroup_stats *st, ar_err *err)
{
  uint64_t v;

  if (ar_cg_read_key(dir, "cpu.stat", "usage_usec", &v) < 0)
    return ar_error(err, ENOENT, "cgroup stats: cannot read '%s/cpu.stat'", dir);
  st->cpu_usage_ns = v * 1000;
  if (ar_cg_read_key(dir, "cpu.stat", "user_usec", &v) == 0)
    st->cpu_user_ns = v * 1000;
  if (ar_cg_read_key(dir, "cpu.stat", "system_usec", &v) == 0)
    st->cpu_system_ns = v * 1000;
  ar_cg_read_key(dir, "cpu.stat", "nr_periods", &st->cpu_periods);
  ar_cg_read_key(dir, "cpu.stat", "nr_throttled", &st->cpu_throttled_periods);
  if (ar_cg_read_key(dir, "cpu.stat", "throttled_usec", &v) == 0)
    st->cpu_throttled_ns = v * 1000;

  ar_cg_read_u64(dir, "memory.current", 0, &st->mem_usage);
  st->has_mem_max_usage = ar_cg_read_u64(dir, "memory.peak", 0, &st->mem_max_usage) == 0;
  ar_cg_read_u64(dir, "memory.max", UINT64_MAX, &st->mem_limit);
  ar_cg_read_key(dir, "memory.events", "max", &st->mem_failcnt);
  ar_cg_read_key(dir, "memory.events", "oom_kill", &st->oom_kills);
  ar_cg_read_u64(dir, "memory.swap.current", 0, &st->mem_swap_usage);
  ar_cg_read_u64(dir, "memory.swap.max", UINT64_MAX, &st->mem_swap_limit);
  ar_cg_read_key(dir, "memory.stat", "file", &st->mem_cache);

  ar_cg_read_u64(dir, "pids.current", 0, &st->pids_current);
  ar_cg_read_u64(dir, "pids.max", 0, &st->pids_limit); /* "max" -> 0, as runc reports */
  st->has_pids_peak = ar_cg_read_u64(dir, "pids.peak", 0, &st->pids_peak) == 0;
  return 0;
}
