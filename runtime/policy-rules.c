/* The policy's edits to the spec, one function per control.  Each makes the spec stricter, never
 * looser, unless the host policy allowed a relaxation. */
#include <config.h>
#include "policy.h"

#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "log.h"
#include "utils.h"

static const char *const allowed_caps[] = {
    "CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FOWNER", "CAP_FSETID",
    "CAP_KILL",  "CAP_SETGID",       "CAP_SETUID", "CAP_NET_BIND_SERVICE"};

static struct ar_mount *find_mount(struct ar_spec *s, const char *dest)
{
  for (size_t i = s->n_mounts; i-- > 0;)
    if (strcmp(s->mounts[i].destination, dest) == 0)
      return &s->mounts[i];
  return NULL;
}

/* The size= option of a tmpfs, capped at max (added when absent). */
static void cap_tmpfs_size(struct ar_mount *m, uint64_t max)
{
  for (size_t i = 0; i < m->n_options; i++) {
    uint64_t cur;
    if (strncmp(m->options[i], "size=", 5) != 0)
      continue;
    if (ar_parse_size(m->options[i] + 5, &cur) == 0 && cur > 0 && cur <= max)
      return;
    free(m->options[i]);
    m->options[i] = xasprintf("size=%llu", (unsigned long long)max);
    return;
  }
  m->options = xrealloc(m->options, (m->n_options + 2) * sizeof(char *));
  m->options[m->n_options++] = xasprintf("size=%llu", (unsigned long long)max);
  m->options[m->n_options] = NULL;
}

/* nosuid and nodev on a tmpfs the config brought (suid and dev dropped): a job's /tmp is
 * no place for set-id binaries or device nodes. */
static void tmpfs_nosuid_nodev(struct ar_mount *m)
{
  static const char *const need[] = {"nosuid", "nodev"};
  size_t keep = 0;
  bool have[2] = {false, false};
  for (size_t i = 0; i < m->n_options; i++) {
    if (strcmp(m->options[i], "suid") == 0 || strcmp(m->options[i], "dev") == 0) {
      free(m->options[i]);
      continue;
    }
    for (size_t j = 0; j < ARRAY_SIZE(need); j++)
      have[j] |= strcmp(m->options[i], need[j]) == 0;
    m->options[keep++] = m->options[i];
  }
  m->n_options = keep;
  for (size_t j = 0; j < ARRAY_SIZE(need); j++) {
    if (have[j])
      continue;
    m->options = xrealloc(m->options, (m->n_options + 2) * sizeof(char *));
    m->options[m->n_options++] = xstrdup(need[j]);
  }
  if (m->options)
    m->options[m->n_options] = NULL;
}

/* "No limit" (0) is above any maximum too. */
static uint64_t limit_value(const struct ar_limit *l, bool has_req, uint64_t req)
{
  uint64_t v = has_req ? req : l->def;
  return (l->max && (v == 0 || v > l->max)) ? l->max : v;
}

static int over_max(struct ar_policy_run *r, const char *ann, const char *key, uint64_t v,
                    uint64_t max)
{
  return ar_error(r->err, 0,
                  "annotation " AR_ANNOTATION_PREFIX "%s: %llu is above the host maximum "
                  "(maxima.%s = %llu in %s)",
                  ann, (unsigned long long)v, key, (unsigned long long)max, r->hp->source);
}

int ar_policy_rootfs(struct ar_policy_run *r)
{
  struct ar_spec *s = r->s;
  struct ar_mount *m;
  uint64_t tmp;
  if (!r->hp->control[AR_CTL_ROOTFS])
    return ar_policy_note(r, "rootfs", "off", "host policy: the config's rootfs"), 0;
  if (r->req->has_tmp_size && r->hp->tmp_size.max && r->req->tmp_size > r->hp->tmp_size.max)
    return over_max(r, "tmp-size", "tmp_size", r->req->tmp_size, r->hp->tmp_size.max);
  tmp = limit_value(&r->hp->tmp_size, r->req->has_tmp_size, r->req->tmp_size);
  if (r->req->rootfs == 1) {
    if (ar_policy_relax_check(r, "rootfs", "writable", AR_RELAX_ROOTFS) < 0)
      return -1;
    ar_policy_note(r, "rootfs", "relaxed", "annotation asked for a writable rootfs");
  } else {
    ar_policy_note(r, "rootfs", s->root_readonly ? "kept" : "tightened",
                   s->root_readonly ? "read-only" : "read-only (the config asked for read-write)");
    s->root_readonly = true;
  }
  if ((m = find_mount(s, "/tmp")) == NULL) {
    cleanup_free char *o = xasprintf("nosuid,nodev,mode=1777,size=%llu", (unsigned long long)tmp);
    ar_spec_add_mount(s, "/tmp", "tmpfs", "tmpfs", o);
    ar_policy_note(r, "tmp", "set", "tmpfs /tmp of %llu bytes", (unsigned long long)tmp);
  } else if (m->type && strcmp(m->type, "tmpfs") == 0) {
    cap_tmpfs_size(m, tmp);
    tmpfs_nosuid_nodev(m);
  }
  if ((m = find_mount(s, "/dev/shm")) == NULL) {
    cleanup_free char *o =
        xasprintf("nosuid,nodev,noexec,mode=1777,size=%llu", (unsigned long long)r->hp->shm_size);
    ar_spec_add_mount(s, "/dev/shm", "tmpfs", "tmpfs", o);
  } else if (m->type && strcmp(m->type, "tmpfs") == 0) {
    cap_tmpfs_size(m, r->hp->shm_size);
    tmpfs_nosuid_nodev(m);
  }
  return 0;
}

static bool cap_allowed(const char *name)
{
  for (size_t i = 0; i < ARRAY_SIZE(allowed_caps); i++)
    if (strcmp(name, allowed_caps[i]) == 0)
      return true;
  return false;
}

int ar_policy_caps(struct ar_policy_run *r)
{
  struct ar_capabilities *c = &r->s->process->capabilities;
  size_t dropped = 0;
  if (!r->hp->control[AR_CTL_CAPABILITIES])
    return ar_policy_note(r, "capabilities", "off", "host policy: the config's sets"), 0;
  r->s->process->has_capabilities = true; /* absent sets mean "none" from here on */
  for (int set = 0; set < AR_CAP_NSETS; set++) {
    size_t keep = 0;
    for (size_t i = 0; i < c->n_names[set]; i++) {
      bool ok = set != AR_CAP_AMBIENT && cap_allowed(c->names[set][i]);
      if (ok)
        c->names[set][keep++] = c->names[set][i];
      else {
        free(c->names[set][i]);
        dropped++;
      }
    }
    c->n_names[set] = keep;
    if (c->names[set])
      c->names[set][keep] = NULL;
  }
  ar_policy_note(r, "capabilities", dropped ? "tightened" : "kept",
                 "intersected with CHOWN DAC_OVERRIDE FOWNER FSETID KILL SETGID SETUID "
                 "NET_BIND_SERVICE; ambient cleared (%zu dropped)",
                 dropped);
  return 0;
}

/* One numeric limit: the config's value, else the default; never above the host maximum. */
static int limit_int64(struct ar_policy_run *r, const char *name, const char *unit,
                       const struct ar_limit *l, bool has_req, uint64_t req, bool *has,
                       int64_t *val)
{
  uint64_t want;
  /* 0 and -1 mean "no limit" in the OCI spec */
  bool config = *has && *val > 0;
  if (has_req && l->max && req > l->max)
    return over_max(r, name, name, req, l->max);
  if (has_req) {
    bool tighter = !config || (uint64_t)*val > req;
    if (tighter)
      *val = (int64_t)req;
    *has = true;
    ar_policy_note(r, name, tighter ? "tightened" : "kept",
                   tighter ? "%lld%s: annotation " AR_ANNOTATION_PREFIX "%s"
                           : "%lld%s: the config's, lower than annotation " AR_ANNOTATION_PREFIX
                             "%s",
                   (long long)*val, unit, name);
    return 0;
  }
  if (config && (!l->max || (uint64_t)*val <= l->max))
    return ar_policy_note(r, name, "kept", "%lld%s: the config's", (long long)*val, unit), 0;
  want = config ? l->max : limit_value(l, false, 0);
  if (want == 0)
    return ar_policy_note(r, name, "kept", "no limit: defaults.%s is 0, no maxima.%s", name, name),
           0;
  if (config)
    ar_policy_note(r, name, "tightened", "%llu%s: the config's %lld cut to maxima.%s",
                   (unsigned long long)want, unit, (long long)*val, name);
  else
    ar_policy_note(r, name, *has ? "tightened" : "set", "%llu%s: the host's %s.%s%s",
                   (unsigned long long)want, unit, l->def ? "defaults" : "maxima", name,
                   *has ? ", the config asked for none" : "");
  *has = true;
  *val = (int64_t)want;
  return 0;
}

/* A cgroup v2 file from linux.resources.unified, within the limit the policy set?  The unified
 * map is written last, so "pids.max": "max" there would undo the pids limit. */
static bool unified_within(const struct ar_resources *res, const char *key, const char *val)
{
  uint64_t v, period;
  char *end;
  if (strcmp(key, "pids.max") == 0)
    return !res->has_pids || res->pids_limit <= 0 ||
           (ar_parse_uint64(val, &v) == 0 && v <= (uint64_t)res->pids_limit);
  if (strcmp(key, "memory.max") == 0)
    return !res->memory.has_limit || res->memory.limit <= 0 ||
           (ar_parse_uint64(val, &v) == 0 && v <= (uint64_t)res->memory.limit);
  if (strcmp(key, "memory.swap.max") == 0) { /* v2 counts swap alone, v1 memory + swap */
    const struct ar_memory *m = &res->memory;
    if (!m->has_swap || m->swap < 0 || !m->has_limit || m->limit <= 0)
      return true;
    return ar_parse_uint64(val, &v) == 0 &&
           v <= (m->swap > m->limit ? (uint64_t)(m->swap - m->limit) : 0);
  }
  if (strcmp(key, "cpu.max") == 0) {
    if (!res->cpu.has_quota || res->cpu.quota <= 0)
      return true;
    v = strtoull(val, &end, 10);
    if (end == val || *end != ' ')
      return false; /* "max ..." */
    period = strtoull(end + 1, &end, 10);
    return *end == '\0' && period > 0 && v * res->cpu.period <= (uint64_t)res->cpu.quota * period;
  }
  return true;
}

static void limit_unified(struct ar_policy_run *r, struct ar_resources *res)
{
  size_t keep = 0;
  for (size_t i = 0; i < res->n_unified; i++) {
    struct ar_kv *kv = &res->unified[i];
    if (unified_within(res, kv->key, kv->value)) {
      res->unified[keep++] = *kv;
      continue;
    }
    ar_policy_note(r, "limits", "tightened", "dropped unified %s=%s: above the policy's limit",
                   kv->key, kv->value);
    free(kv->key);
    free(kv->value);
  }
  res->n_unified = keep;
}

int ar_policy_limits(struct ar_policy_run *r)
{
  struct ar_resources *res = &r->s->linux_.resources;
  const struct ar_agent_request *q = r->req;
  int64_t cpus = -1;
  bool has_cpus;
  if (!r->hp->control[AR_CTL_LIMITS])
    return ar_policy_note(r, "limits", "off", "host policy: the config's limits"), 0;
  r->s->has_linux = r->s->linux_.has_resources = true;
  if (limit_int64(r, "memory", " bytes", &r->hp->memory, q->has_memory, q->memory,
                  &res->memory.has_limit, &res->memory.limit) < 0 ||
      limit_int64(r, "pids", "", &r->hp->pids, q->has_pids, q->pids, &res->has_pids,
                  &res->pids_limit) < 0)
    return -1;
  res->has_memory = res->memory.has_limit;
  if (res->memory.has_limit && res->memory.limit > 0 &&
      (!res->memory.has_swap || res->memory.swap < 0 || res->memory.swap > res->memory.limit)) {
    res->memory.has_swap = true; /* no swap beyond the memory limit */
    res->memory.swap = res->memory.limit;
  }
  /* CPUs as quota over a 100 ms period. */
  has_cpus = res->cpu.has_quota && res->cpu.quota > 0;
  if (has_cpus)
    cpus = res->cpu.quota * 1000 /
           (int64_t)(res->cpu.has_period && res->cpu.period ? res->cpu.period : 100000);
  if (limit_int64(r, "cpus", " milli-CPUs", &r->hp->cpus_milli, q->has_cpus, q->cpus_milli,
                  &has_cpus, &cpus) < 0)
    return -1;
  if (has_cpus && cpus > 0) {
    res->has_cpu = res->cpu.has_quota = res->cpu.has_period = true;
    res->cpu.period = 100000;
    res->cpu.quota = cpus * 100;
  }
  limit_unified(r, res);
  return 0;
}

static void set_rlimit(struct ar_process *p, int resource, const char *name, uint64_t soft,
                       uint64_t hard, bool only_lower)
{
  for (size_t i = 0; i < p->n_rlimits; i++) {
    struct ar_rlimit *rl = &p->rlimits[i];
    if (rl->resource != resource)
      continue;
    if (!only_lower || rl->hard > hard)
      rl->hard = hard;
    if (!only_lower || rl->soft > soft)
      rl->soft = soft;
    if (rl->soft > rl->hard)
      rl->soft = rl->hard;
    return;
  }
  p->rlimits = xrealloc(p->rlimits, (p->n_rlimits + 1) * sizeof(*p->rlimits));
  p->rlimits[p->n_rlimits++] = (struct ar_rlimit){xstrdup(name), resource, hard, soft};
}

int ar_policy_rlimits(struct ar_policy_run *r)
{
  struct rlimit nofile;
  if (!r->hp->control[AR_CTL_RLIMITS])
    return ar_policy_note(r, "rlimits", "off", "host policy"), 0;
  set_rlimit(r->s->process, RLIMIT_CORE, "RLIMIT_CORE", 0, 0, false);
  if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_max != RLIM_INFINITY)
    set_rlimit(r->s->process, RLIMIT_NOFILE, "RLIMIT_NOFILE", nofile.rlim_max, nofile.rlim_max,
               true);
  ar_policy_note(r, "rlimits", "set", "core 0; nofile within the host's hard limit");
  return 0;
}
