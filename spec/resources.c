/* linux.resources, also the whole document of `update --resources`. */
#include <config.h>
#include "spec/parse.h"

#include <stdlib.h>
#include <string.h>

#include "runtime/utils.h"

static const char *const throttle_keys[AR_THROTTLE_NKINDS] = {
    [AR_THROTTLE_READ_BPS] = "throttleReadBpsDevice",
    [AR_THROTTLE_WRITE_BPS] = "throttleWriteBpsDevice",
    [AR_THROTTLE_READ_IOPS] = "throttleReadIOPSDevice",
    [AR_THROTTLE_WRITE_IOPS] = "throttleWriteIOPSDevice",
};

const char *ar_throttle_key(enum ar_throttle_kind k)
{
  return (unsigned)k < AR_THROTTLE_NKINDS ? throttle_keys[k] : NULL;
}

static int parse_device_rule(struct jp *c, yajl_val v, void *out)
{
  struct ar_device_rule *r = out;
  cleanup_free char *type = NULL;
  bool has;

  if (jp_bool(c, v, "allow", &r->allow, NULL) < 0 || jp_str(c, v, "type", &type, &has) < 0)
    return -1;
  r->type = 'a';
  if (type != NULL) {
    if (strlen(type) != 1 || strchr("acb", type[0]) == NULL)
      return jp_key_error(c, "type", "expected one of a, c, b");
    r->type = type[0];
  }
  if (jp_i64(c, v, "major", &r->major, &r->has_major) < 0 ||
      jp_i64(c, v, "minor", &r->minor, &r->has_minor) < 0 ||
      jp_str(c, v, "access", &r->access, &has) < 0)
    return -1;
  if (r->access != NULL && strspn(r->access, "rwm") != strlen(r->access))
    return jp_key_error(c, "access", "expected a combination of r, w, m");
  return 0;
}

/* Memory amounts: bytes, or -1 for unlimited. */
static int mem_value(struct jp *c, yajl_val v, const char *key, int64_t *ret, bool *has)
{
  return jp_int(c, v, key, -1, INT64_MAX, ret, has);
}

static int parse_memory(struct jp *c, yajl_val v, void *out)
{
  struct ar_memory *m = out;

  if (mem_value(c, v, "limit", &m->limit, &m->has_limit) < 0 ||
      mem_value(c, v, "reservation", &m->reservation, &m->has_reservation) < 0 ||
      mem_value(c, v, "swap", &m->swap, &m->has_swap) < 0 ||
      mem_value(c, v, "kernel", &m->kernel, &m->has_kernel) < 0 ||
      mem_value(c, v, "kernelTCP", &m->kernel_tcp, &m->has_kernel_tcp) < 0 ||
      jp_u64(c, v, "swappiness", &m->swappiness, &m->has_swappiness) < 0 ||
      jp_bool(c, v, "disableOOMKiller", &m->disable_oom_killer, &m->has_disable_oom_killer) < 0 ||
      jp_bool(c, v, "useHierarchy", &m->use_hierarchy, &m->has_use_hierarchy) < 0 ||
      jp_bool(c, v, "checkBeforeUpdate", &m->check_before_update, &m->has_check_before_update) < 0)
    return -1;
  return 0;
}

static int parse_cpu(struct jp *c, yajl_val v, void *out)
{
  struct ar_cpu *cpu = out;
  bool has;

  if (jp_u64(c, v, "shares", &cpu->shares, &cpu->has_shares) < 0 ||
      jp_i64(c, v, "quota", &cpu->quota, &cpu->has_quota) < 0 ||
      jp_u64(c, v, "burst", &cpu->burst, &cpu->has_burst) < 0 ||
      jp_u64(c, v, "period", &cpu->period, &cpu->has_period) < 0 ||
      jp_i64(c, v, "realtimeRuntime", &cpu->realtime_runtime, &cpu->has_realtime_runtime) < 0 ||
      jp_u64(c, v, "realtimePeriod", &cpu->realtime_period, &cpu->has_realtime_period) < 0 ||
      jp_str(c, v, "cpus", &cpu->cpus, &has) < 0 || jp_str(c, v, "mems", &cpu->mems, &has) < 0 ||
      jp_i64(c, v, "idle", &cpu->idle, &cpu->has_idle) < 0)
    return -1;
  return 0;
}

static int parse_pids(struct jp *c, yajl_val v, void *out)
{
  struct ar_resources *r = out;

  /* runtime-spec 1.3 made limit optional: an empty "pids" object sets nothing */
  return jp_int(c, v, "limit", -1, INT64_MAX, &r->pids_limit, &r->has_pids);
}

static int parse_weight_device(struct jp *c, yajl_val v, void *out)
{
  struct ar_weight_device *d = out;

  if (jp_i64(c, v, "major", &d->major, NULL) < 0 || jp_i64(c, v, "minor", &d->minor, NULL) < 0 ||
      jp_u16(c, v, "weight", &d->weight, &d->has_weight) < 0 ||
      jp_u16(c, v, "leafWeight", &d->leaf_weight, &d->has_leaf_weight) < 0)
    return -1;
  return 0;
}

static int parse_throttle_device(struct jp *c, yajl_val v, void *out)
{
  struct ar_throttle_device *d = out;

  if (jp_i64(c, v, "major", &d->major, NULL) < 0 || jp_i64(c, v, "minor", &d->minor, NULL) < 0 ||
      jp_u64(c, v, "rate", &d->rate, NULL) < 0)
    return -1;
  return 0;
}

static int parse_blkio(struct jp *c, yajl_val v, void *out)
{
  struct ar_blkio *b = out;

  if (jp_u16(c, v, "weight", &b->weight, &b->has_weight) < 0 ||
      jp_u16(c, v, "leafWeight", &b->leaf_weight, &b->has_leaf_weight) < 0 ||
      jp_object_array(c, v, "weightDevice", sizeof(struct ar_weight_device), parse_weight_device,
                      (void **)&b->weight_devices, &b->n_weight_devices) < 0)
    return -1;
  for (int k = 0; k < AR_THROTTLE_NKINDS; k++)
    if (jp_object_array(c, v, throttle_keys[k], sizeof(struct ar_throttle_device),
                        parse_throttle_device, (void **)&b->throttle[k], &b->n_throttle[k]) < 0)
      return -1;
  return 0;
}

static int parse_hugepage_limit(struct jp *c, yajl_val v, void *out)
{
  struct ar_hugepage_limit *h = out;

  if (jp_str(c, v, "pageSize", &h->page_size, NULL) < 0 ||
      jp_u64(c, v, "limit", &h->limit, NULL) < 0)
    return -1;
  return 0;
}

int ar_parse_resources(struct jp *c, yajl_val v, void *out)
{
  struct ar_resources *r = out;
  bool has;

  if (jp_object_array(c, v, "devices", sizeof(struct ar_device_rule), parse_device_rule,
                      (void **)&r->devices, &r->n_devices) < 0 ||
      jp_object(c, v, "memory", parse_memory, &r->memory, &r->has_memory) < 0 ||
      jp_object(c, v, "cpu", parse_cpu, &r->cpu, &r->has_cpu) < 0 ||
      jp_object(c, v, "pids", parse_pids, r, &has) < 0 ||
      jp_object(c, v, "blockIO", parse_blkio, &r->blkio, &r->has_blkio) < 0 ||
      jp_object_array(c, v, "hugepageLimits", sizeof(struct ar_hugepage_limit),
                      parse_hugepage_limit, (void **)&r->hugepage_limits,
                      &r->n_hugepage_limits) < 0 ||
      jp_kvmap(c, v, "unified", &r->unified, &r->n_unified) < 0)
    return -1;
  return 0;
}

void ar_resources_clear(struct ar_resources *r)
{
  if (r == NULL)
    return;
  for (size_t i = 0; i < r->n_devices; i++)
    free(r->devices[i].access);
  free(r->devices);
  free(r->cpu.cpus);
  free(r->cpu.mems);
  free(r->blkio.weight_devices);
  for (int k = 0; k < AR_THROTTLE_NKINDS; k++)
    free(r->blkio.throttle[k]);
  for (size_t i = 0; i < r->n_hugepage_limits; i++)
    free(r->hugepage_limits[i].page_size);
  free(r->hugepage_limits);
  ar_kv_free(r->unified, r->n_unified);
  memset(r, 0, sizeof(*r));
}

void ar_resources_free(struct ar_resources *r)
{
  if (r == NULL)
    return;
  ar_resources_clear(r);
  free(r);
}

int ar_resources_parse(const char *json, size_t len, const char *what, struct ar_resources **ret,
                       ar_err *err)
{
  struct ar_resources *r = xcalloc(1, sizeof(*r));
  struct jp c;
  yajl_val v;
  int rc = -1;

  jp_init(&c, what, err);
  v = jp_parse(&c, json, len);
  if (v != NULL && jp_expect_object(&c, v) == 0 && ar_parse_resources(&c, v, r) == 0)
    rc = 0;
  yajl_tree_free(v);
  jp_fini(&c);
  if (rc < 0) {
    ar_resources_free(r);
    return -1;
  }
  *ret = r;
  return 0;
}
