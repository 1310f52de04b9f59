/* update [--resources FILE|-] [runc's flags] ID: change a live container's cgroup limits.
 *
 * As runc does, only memory, cpu, pids, the blkio weight and unified keys are updated (devices,
 * hugepages and blkio device lists keep what create set).  Two things runc does not do:
 *  - the host policy's maxima bind updates too: with the "limits" control on, a memory, pids or
 *    cpu value above the maximum (or unlimited where there is one) is refused, and swap never
 *    exceeds the memory limit, exactly as at create.  Otherwise an agent allowed to call update
 *    could lift its own ceiling;
 *  - the effective spec saved at create (state dir/config.json) is updated, so that inspect and
 *    the record stay true. */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "audit.h"
#include "cgroup.h"
#include "cli.h"
#include "log.h"
#include "policy.h"
#include "statedir.h"
#include "utils.h"

struct update_flags {
  const char *resources;
  const char *memory, *memory_reservation, *memory_swap, *kernel_memory, *kernel_memory_tcp;
  const char *cpu_shares, *cpu_period, *cpu_quota, *cpu_rt_period, *cpu_rt_runtime;
  const char *cpuset_cpus, *cpuset_mems, *pids_limit, *blkio_weight;
  const char *l3_cache_schema, *mem_bw_schema;
};

/* ---- the update, from flags or JSON ---- */

static int bad_flag(const char *flag, const char *val, const char *expected, ar_err *err)
{
  return ar_error(err, 0, "update: --%s \"%s\": expected %s", flag, val, expected);
}

/* runc's memory flags: a size ("512m", "1g", bytes) or -1 for unlimited. */
static int size_flag(const char *flag, const char *val, bool *has, int64_t *dst, ar_err *err)
{
  uint64_t v;
  if (val == NULL)
    return 0;
  if (strcmp(val, "-1") == 0)
    v = (uint64_t)-1;
  else if (ar_parse_size(val, &v) < 0 || v > INT64_MAX)
    return bad_flag(flag, val, "a size such as 512m, 1g or a number of bytes, or -1", err);
  *has = true;
  *dst = (int64_t)v;
  return 0;
}

static int u64_flag(const char *flag, const char *val, bool *has, uint64_t *dst, ar_err *err)
{
  if (val == NULL)
    return 0;
  if (ar_parse_uint64(val, dst) < 0)
    return bad_flag(flag, val, "a non-negative integer", err);
  *has = true;
  return 0;
}

static int i64_flag(const char *flag, const char *val, bool *has, int64_t *dst, ar_err *err)
{
  if (val == NULL)
    return 0;
  if (ar_parse_int64(val, dst) < 0)
    return bad_flag(flag, val, "an integer", err);
  *has = true;
  return 0;
}

static int memory_flags(const struct update_flags *f, struct ar_memory *m, ar_err *err)
{
  if (size_flag("memory", f->memory, &m->has_limit, &m->limit, err) < 0 ||
      size_flag("memory-reservation", f->memory_reservation, &m->has_reservation, &m->reservation,
                err) < 0 ||
      size_flag("memory-swap", f->memory_swap, &m->has_swap, &m->swap, err) < 0 ||
      size_flag("kernel-memory", f->kernel_memory, &m->has_kernel, &m->kernel, err) < 0)
    return -1;
  return size_flag("kernel-memory-tcp", f->kernel_memory_tcp, &m->has_kernel_tcp, &m->kernel_tcp,
                   err);
}

static int cpu_flags(const struct update_flags *f, struct ar_cpu *c, ar_err *err)
{
  if (u64_flag("cpu-share", f->cpu_shares, &c->has_shares, &c->shares, err) < 0 ||
      u64_flag("cpu-period", f->cpu_period, &c->has_period, &c->period, err) < 0 ||
      i64_flag("cpu-quota", f->cpu_quota, &c->has_quota, &c->quota, err) < 0 ||
      u64_flag("cpu-rt-period", f->cpu_rt_period, &c->has_realtime_period, &c->realtime_period,
               err) < 0 ||
      i64_flag("cpu-rt-runtime", f->cpu_rt_runtime, &c->has_realtime_runtime, &c->realtime_runtime,
               err) < 0)
    return -1;
  if (f->cpuset_cpus)
    c->cpus = xstrdup(f->cpuset_cpus);
  if (f->cpuset_mems)
    c->mems = xstrdup(f->cpuset_mems);
  return 0;
}

static int from_flags(const struct update_flags *f, struct ar_resources *r, ar_err *err)
{
  const struct ar_cpu *c = &r->cpu;
  const struct ar_memory *m = &r->memory;
  uint64_t weight;
  bool has_weight = false;

  if (f->l3_cache_schema || f->mem_bw_schema)
    return ar_error(err, 0, "update: --%s: Intel RDT is not supported",
                    f->l3_cache_schema ? "l3-cache-schema" : "mem-bw-schema");
  if (memory_flags(f, &r->memory, err) < 0 || cpu_flags(f, &r->cpu, err) < 0 ||
      i64_flag("pids-limit", f->pids_limit, &r->has_pids, &r->pids_limit, err) < 0 ||
      u64_flag("blkio-weight", f->blkio_weight, &has_weight, &weight, err) < 0)
    return -1;
  if (has_weight) {
    if (weight > 1000)
      return bad_flag("blkio-weight", f->blkio_weight, "a weight from 10 to 1000", err);
    r->has_blkio = r->blkio.has_weight = true;
    r->blkio.weight = (uint16_t)weight;
  }
  r->has_memory =
      m->has_limit || m->has_reservation || m->has_swap || m->has_kernel || m->has_kernel_tcp;
  r->has_cpu = c->has_shares || c->has_period || c->has_quota || c->has_realtime_period ||
               c->has_realtime_runtime || c->cpus || c->mems;
  return 0;
}

/* What runc's update leaves alone: moved out of r and freed. */
static void drop_unupdatable(struct ar_resources *r)
{
  struct ar_resources drop = {0};

  if (r->n_devices || r->n_hugepage_limits || r->blkio.n_weight_devices)
    ar_debug("update: devices, hugepage limits and blkio device lists are not updated");
  drop.devices = steal_pointer(&r->devices);
  drop.n_devices = r->n_devices;
  drop.hugepage_limits = steal_pointer(&r->hugepage_limits);
  drop.n_hugepage_limits = r->n_hugepage_limits;
  drop.blkio.weight_devices = steal_pointer(&r->blkio.weight_devices);
  drop.blkio.n_weight_devices = r->blkio.n_weight_devices;
  for (int k = 0; k < AR_THROTTLE_NKINDS; k++) {
    drop.blkio.throttle[k] = steal_pointer(&r->blkio.throttle[k]);
    drop.blkio.n_throttle[k] = r->blkio.n_throttle[k];
    r->blkio.n_throttle[k] = 0;
  }
  r->n_devices = r->n_hugepage_limits = r->blkio.n_weight_devices = 0;
  r->blkio.has_leaf_weight = false;
  ar_resources_clear(&drop);
}

static void drop_empty(char **s)
{
  if (*s && **s == '\0') {
    free(*s);
    *s = NULL;
  }
}

/* runc, and the engines written against it, send 0 for "leave as is" (Docker's whole resources
 * object comes through -r): a 0 must never become a limit of 0. */
static void drop_zeros(struct ar_resources *r)
{
  struct ar_memory *m = &r->memory;
  struct ar_cpu *c = &r->cpu;

  m->has_limit &= m->limit != 0;
  m->has_reservation &= m->reservation != 0;
  m->has_swap &= m->swap != 0;
  m->has_kernel &= m->kernel != 0;
  m->has_kernel_tcp &= m->kernel_tcp != 0;
  c->has_shares &= c->shares != 0;
  c->has_quota &= c->quota != 0;
  c->has_period &= c->period != 0;
  c->has_realtime_period &= c->realtime_period != 0;
  c->has_realtime_runtime &= c->realtime_runtime != 0;
  drop_empty(&c->cpus);
  drop_empty(&c->mems);
  r->has_pids &= r->pids_limit != 0;
  r->blkio.has_weight &= r->blkio.weight != 0;
}

static int from_json(const char *path, struct ar_resources **ret, ar_err *err)
{
  cleanup_free char *buf = NULL;
  size_t len = 0;
  int r = strcmp(path, "-") == 0 ? ar_read_fd(STDIN_FILENO, &buf, &len, err)
                                 : ar_read_file(path, &buf, &len, err);
  if (r < 0)
    return ar_error_wrap(err, "update: --resources '%s'", path);
  if (ar_resources_parse(buf, len, strcmp(path, "-") == 0 ? "resources (stdin)" : path, ret, err) <
      0)
    return -1;
  drop_unupdatable(*ret);
  return 0;
}

/* ---- the host policy ---- */

static int over_max(const struct ar_host_policy *hp, const char *key, const char *max_key,
                    int64_t v, uint64_t max, ar_err *err)
{
  if (v < 0)
    return ar_error(err, 0,
                    "update: %s: unlimited is refused, the host policy's maxima.%s is %llu (%s)",
                    key, max_key, (unsigned long long)max, hp->source);
  return ar_error(err, 0, "update: %s: %lld is above the host policy's maxima.%s %llu (%s)", key,
                  (long long)v, max_key, (unsigned long long)max, hp->source);
}

/* memory: limit and swap within the maximum; swap (memory + swap) never above the limit. */
static int check_memory(const struct ar_host_policy *hp, struct ar_memory *m,
                        const struct ar_resources *saved, ar_err *err)
{
  uint64_t max = hp->memory.max;
  int64_t limit = -1;

  if (m->has_limit && max && (m->limit < 0 || (uint64_t)m->limit > max))
    return over_max(hp, "memory.limit", "memory", m->limit, max, err);
  if (m->has_limit)
    limit = m->limit;
  else if (saved && saved->has_memory && saved->memory.has_limit)
    limit = saved->memory.limit;
  if (m->has_swap && limit <= 0 && max && (m->swap < 0 || (uint64_t)m->swap > max))
    return over_max(hp, "memory.swap", "memory", m->swap, max, err);
  if (limit > 0 && (m->has_limit || m->has_swap) &&
      (!m->has_swap || m->swap < 0 || m->swap > limit)) {
    m->has_swap = true;
    m->swap = limit;
  }
  return 0;
}

static int check_cpu(const struct ar_host_policy *hp, const struct ar_cpu *c,
                     const struct ar_resources *saved, ar_err *err)
{
  const struct ar_cpu *old = saved && saved->has_cpu ? &saved->cpu : NULL;
  int64_t quota = -1;
  uint64_t period = 100000, max = hp->cpus_milli.max;

  if (max == 0 || !((c->has_quota && c->quota != 0) || (c->has_period && c->period)))
    return 0;
  if (c->has_quota && c->quota != 0)
    quota = c->quota;
  else if (old && old->has_quota && old->quota != 0)
    quota = old->quota;
  if (c->has_period && c->period)
    period = c->period;
  else if (old && old->has_period && old->period)
    period = old->period;
  if (quota < 0)
    return ar_error(err, 0,
                    "update: cpu.quota: unlimited is refused, the host policy's maxima.cpus is "
                    "%.3f (%s)",
                    (double)max / 1000, hp->source);
  if ((uint64_t)quota * 1000 / period > max)
    return ar_error(err, 0,
                    "update: cpu.quota: %lld per %llu us is %.3f CPUs, above the host policy's "
                    "maxima.cpus %.3f (%s)",
                    (long long)quota, (unsigned long long)period, (double)quota / (double)period,
                    (double)max / 1000, hp->source);
  return 0;
}

/* cgroup v2 keys that would go around the limits above. */
static int check_unified(const struct ar_host_policy *hp, const struct ar_resources *r, ar_err *err)
{
  static const char *const capped[] = {"memory.max", "memory.swap.max", "pids.max", "cpu.max"};
  for (size_t i = 0; i < r->n_unified; i++)
    for (size_t j = 0; j < ARRAY_SIZE(capped); j++)
      if (strcmp(r->unified[i].key, capped[j]) == 0)
        return ar_error(err, 0,
                        "update: unified.%s: refused while the host policy's limits control is on "
                        "(%s); use memory, pids or cpu",
                        capped[j], hp->source);
  return 0;
}

static int check_policy(const struct ar_ctx *ctx, struct ar_resources *upd,
                        const struct ar_resources *saved, ar_err *err)
{
  struct ar_host_policy *hp = NULL;
  int ret = -1;

  if (ar_policy_load(ctx->policy_path, &hp, err) < 0)
    return -1;
  if (!hp->control[AR_CTL_LIMITS])
    ret = 0;
  else if (upd->has_memory && check_memory(hp, &upd->memory, saved, err) < 0)
    ret = -1;
  else if (upd->has_pids && hp->pids.max &&
           (upd->pids_limit < 0 || (uint64_t)upd->pids_limit > hp->pids.max))
    ret = over_max(hp, "pids.limit", "pids", upd->pids_limit, hp->pids.max, err);
  else if (upd->has_cpu && check_cpu(hp, &upd->cpu, saved, err) < 0)
    ret = -1;
  else
    ret = check_unified(hp, upd, err);
  ar_host_policy_free(hp);
  return ret;
}

/* ---- the saved spec ---- */

#define MERGE(dst, src, field)                                                                     \
  do {                                                                                             \
    if ((src)->has_##field) {                                                                      \
      (dst)->has_##field = true;                                                                   \
      (dst)->field = (src)->field;                                                                 \
    }                                                                                              \
  } while (0)

static void merge_string(char **dst, char **src)
{
  if (*src) {
    free(*dst);
    *dst = steal_pointer(src);
  }
}

/* Fold what the update set into the saved resources (strings move out of upd). */
static void merge(struct ar_resources *dst, struct ar_resources *upd)
{
  struct ar_memory *m = &dst->memory, *um = &upd->memory;
  struct ar_cpu *c = &dst->cpu, *uc = &upd->cpu;

  if (upd->has_memory) {
    dst->has_memory = true;
    MERGE(m, um, limit);
    MERGE(m, um, reservation);
    MERGE(m, um, swap);
    MERGE(m, um, kernel);
    MERGE(m, um, kernel_tcp);
    MERGE(m, um, swappiness);
    MERGE(m, um, disable_oom_killer);
    MERGE(m, um, use_hierarchy);
  }
  if (upd->has_cpu) {
    dst->has_cpu = true;
    MERGE(c, uc, shares);
    MERGE(c, uc, quota);
    MERGE(c, uc, burst);
    MERGE(c, uc, period);
    MERGE(c, uc, realtime_runtime);
    MERGE(c, uc, realtime_period);
    MERGE(c, uc, idle);
    merge_string(&c->cpus, &uc->cpus);
    merge_string(&c->mems, &uc->mems);
  }
  if (upd->has_pids) {
    dst->has_pids = true;
    dst->pids_limit = upd->pids_limit;
  }
  if (upd->has_blkio && upd->blkio.has_weight) {
    dst->has_blkio = true;
    MERGE(&dst->blkio, &upd->blkio, weight);
  }
  for (size_t i = 0; i < upd->n_unified; i++)
    ar_kv_set(&dst->unified, &dst->n_unified, upd->unified[i].key, upd->unified[i].value);
}

static int save_spec(const struct ar_ctx *ctx, const char *id, const struct ar_spec *spec,
                     ar_err *err)
{
  cleanup_free char *json = NULL, *path = ar_statedir_path(ctx->root, id, "config.json");
  if (ar_spec_to_json(spec, false, &json, err) < 0 ||
      ar_write_file_atomic(path, json, strlen(json), 0600, err) < 0)
    return ar_error_wrap(err, "update: save the effective spec");
  return 0;
}

static void audit_update(const struct ar_state *st, const struct ar_resources *upd)
{
  cleanup_free char *json = NULL;
  cleanup_err ar_err err = NULL;
  if (st->audit_log == NULL)
    return;
  if (ar_resources_to_json(upd, false, &json, &err) < 0 ||
      ar_audit_event(st->audit_log, st->id, "update", "resources", json, &err) < 0)
    ar_warn("audit: %s", err->msg);
}

/* ---- the verb ---- */

static int update(const struct ar_ctx *ctx, const char *id, struct ar_resources *upd, ar_err *err)
{
  cleanup_close int lock = -1;
  struct ar_state *st = NULL;
  struct ar_spec *spec = NULL;
  struct ar_cgroup *cg = NULL;
  struct ar_resources *saved;
  int ret = -1;

  if (ar_statedir_lock(ctx->root, id, &lock, err) < 0 || ar_state_load(ctx->root, id, &st, err) < 0)
    return -1;
  if (!ar_state_init_alive(st)) {
    ar_error(err, 0, "container \"%s\" is stopped: container not running", id);
    goto out;
  }
  if (st->cgroup == NULL) {
    ar_error(err, 0, "container \"%s\" has no cgroup to update", id);
    goto out;
  }
  if (ar_container_load_spec(ctx, id, &spec, err) < 0)
    goto out;
  saved = spec->linux_.has_resources ? &spec->linux_.resources : NULL;
  if (check_policy(ctx, upd, saved, err) < 0 || ar_cgroup_deserialize(st->cgroup, &cg, err) < 0 ||
      ar_cgroup_update(cg, upd, err) < 0)
    goto out;
  audit_update(st, upd);
  spec->has_linux = spec->linux_.has_resources = true;
  merge(&spec->linux_.resources, upd);
  ret = save_spec(ctx, id, spec, err);
out:
  ar_cgroup_free(cg);
  ar_spec_free(spec);
  ar_state_free(st);
  return ret;
}

int ar_cmd_update(struct ar_ctx *ctx, int argc, char **argv)
{
  struct update_flags f = {0};
  const struct ar_opt opts[] = {
      {"resources", 'r', AR_OPT_STRING, &f.resources},
      {"memory", 0, AR_OPT_STRING, &f.memory},
      {"memory-reservation", 0, AR_OPT_STRING, &f.memory_reservation},
      {"memory-swap", 0, AR_OPT_STRING, &f.memory_swap},
      {"kernel-memory", 0, AR_OPT_STRING, &f.kernel_memory},
      {"kernel-memory-tcp", 0, AR_OPT_STRING, &f.kernel_memory_tcp},
      {"cpu-share", 0, AR_OPT_STRING, &f.cpu_shares},
      {"cpu-shares", 0, AR_OPT_STRING, &f.cpu_shares},
      {"cpu-period", 0, AR_OPT_STRING, &f.cpu_period},
      {"cpu-quota", 0, AR_OPT_STRING, &f.cpu_quota},
      {"cpu-rt-period", 0, AR_OPT_STRING, &f.cpu_rt_period},
      {"cpu-rt-runtime", 0, AR_OPT_STRING, &f.cpu_rt_runtime},
      {"cpuset-cpus", 0, AR_OPT_STRING, &f.cpuset_cpus},
      {"cpuset-mems", 0, AR_OPT_STRING, &f.cpuset_mems},
      {"pids-limit", 0, AR_OPT_STRING, &f.pids_limit},
      {"blkio-weight", 0, AR_OPT_STRING, &f.blkio_weight},
      {"l3-cache-schema", 0, AR_OPT_STRING, &f.l3_cache_schema},
      {"mem-bw-schema", 0, AR_OPT_STRING, &f.mem_bw_schema},
  };
  struct ar_resources *upd = NULL;
  ar_err err = NULL;
  int first = ar_parse_opts("update", argc, argv, opts, ARRAY_SIZE(opts)), r;

  if (first < 0)
    return 1;
  if (first != argc - 1)
    return ar_usage_error("update", "update needs exactly one container ID");
  /* runc: with --resources every other flag is ignored. */
  if (f.resources)
    r = from_json(f.resources, &upd, &err);
  else {
    upd = xcalloc(1, sizeof(*upd));
    r = from_flags(&f, upd, &err);
  }
  if (r == 0) {
    drop_zeros(upd);
    r = update(ctx, argv[first], upd, &err);
  }
  ar_resources_free(upd);
  return r < 0 ? ar_fail(&err) : 0;
}
