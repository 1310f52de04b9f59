/* The structs back to JSON, keys in the runtime-spec's (and so runc's) order; absent optionals
 * are left out, so that parsing the output gives the same struct back. */
#include <config.h>
#include "spec/parse.h"

#include <stdlib.h>
#include <string.h>

#include "runtime/utils.h"
#include "spec/jsonw.h"

static void kstr_opt(struct ar_jw *w, const char *key, const char *s)
{
  if (s != NULL)
    ar_jw_kstr(w, key, s);
}

static void kstrv(struct ar_jw *w, const char *key, char *const *v, size_t n)
{
  if (n == 0)
    return;
  ar_jw_key(w, key);
  ar_jw_array_open(w);
  for (size_t i = 0; i < n; i++)
    ar_jw_str(w, v[i]);
  ar_jw_array_close(w);
}

void ar_emit_kv_map(struct ar_jw *w, const char *key, const struct ar_kv *kv, size_t n)
{
  if (n == 0)
    return;
  ar_jw_key(w, key);
  ar_jw_map_open(w);
  for (size_t i = 0; i < n; i++)
    ar_jw_kstr(w, kv[i].key, kv[i].value);
  ar_jw_map_close(w);
}

static void emit_user(struct ar_jw *w, const struct ar_user *u)
{
  ar_jw_key(w, "user");
  ar_jw_map_open(w);
  ar_jw_kuint(w, "uid", u->uid);
  ar_jw_kuint(w, "gid", u->gid);
  if (u->has_umask)
    ar_jw_kuint(w, "umask", u->umask);
  if (u->n_additional_gids > 0) {
    ar_jw_key(w, "additionalGids");
    ar_jw_array_open(w);
    for (size_t i = 0; i < u->n_additional_gids; i++)
      ar_jw_uint(w, u->additional_gids[i]);
    ar_jw_array_close(w);
  }
  ar_jw_map_close(w);
}

static void emit_capabilities(struct ar_jw *w, const struct ar_capabilities *caps)
{
  ar_jw_key(w, "capabilities");
  ar_jw_map_open(w);
  for (int s = 0; s < AR_CAP_NSETS; s++)
    kstrv(w, ar_cap_set_key(s), caps->names[s], caps->n_names[s]);
  ar_jw_map_close(w);
}

static void emit_rlimits(struct ar_jw *w, const struct ar_rlimit *r, size_t n)
{
  if (n == 0)
    return;
  ar_jw_key(w, "rlimits");
  ar_jw_array_open(w);
  for (size_t i = 0; i < n; i++) {
    ar_jw_map_open(w);
    ar_jw_kstr(w, "type", r[i].type ? r[i].type : ar_rlimit_name(r[i].resource));
    ar_jw_kuint(w, "hard", r[i].hard);
    ar_jw_kuint(w, "soft", r[i].soft);
    ar_jw_map_close(w);
  }
  ar_jw_array_close(w);
}

static void emit_process_body(struct ar_jw *w, const struct ar_process *p)
{
  ar_jw_map_open(w);
  if (p->terminal)
    ar_jw_kbool(w, "terminal", true);
  if (p->has_console_size) {
    ar_jw_key(w, "consoleSize");
    ar_jw_map_open(w);
    ar_jw_kuint(w, "height", p->console_height);
    ar_jw_kuint(w, "width", p->console_width);
    ar_jw_map_close(w);
  }
  emit_user(w, &p->user);
  kstrv(w, "args", p->args, p->n_args);
  kstrv(w, "env", p->env, p->n_env);
  kstr_opt(w, "cwd", p->cwd);
  if (p->has_capabilities)
    emit_capabilities(w, &p->capabilities);
  emit_rlimits(w, p->rlimits, p->n_rlimits);
  if (p->no_new_privileges)
    ar_jw_kbool(w, "noNewPrivileges", true);
  kstr_opt(w, "apparmorProfile", p->apparmor_profile);
  if (p->has_oom_score_adj)
    ar_jw_kint(w, "oomScoreAdj", p->oom_score_adj);
  kstr_opt(w, "selinuxLabel", p->selinux_label);
  if (p->has_io_priority) {
    ar_jw_key(w, "ioPriority");
    ar_jw_map_open(w);
    kstr_opt(w, "class", p->io_priority.class_name);
    ar_jw_kint(w, "priority", p->io_priority.priority);
    ar_jw_map_close(w);
  }
  ar_jw_map_close(w);
}

static void emit_mounts(struct ar_jw *w, const struct ar_mount *m, size_t n)
{
  if (n == 0)
    return;
  ar_jw_key(w, "mounts");
  ar_jw_array_open(w);
  for (size_t i = 0; i < n; i++) {
    ar_jw_map_open(w);
    kstr_opt(w, "destination", m[i].destination);
    kstr_opt(w, "type", m[i].type);
    kstr_opt(w, "source", m[i].source);
    kstrv(w, "options", m[i].options, m[i].n_options);
    ar_jw_map_close(w);
  }
  ar_jw_array_close(w);
}

static void emit_hooks(struct ar_jw *w, const struct ar_hook_list *hooks)
{
  bool any = false;

  for (int p = 0; p < AR_HOOK_NPHASES; p++)
    any |= hooks[p].n_hooks > 0;
  if (!any)
    return;
  ar_jw_key(w, "hooks");
  ar_jw_map_open(w);
  for (int p = 0; p < AR_HOOK_NPHASES; p++) {
    if (hooks[p].n_hooks == 0)
      continue;
    ar_jw_key(w, ar_hook_phase_name(p));
    ar_jw_array_open(w);
    for (size_t i = 0; i < hooks[p].n_hooks; i++) {
      const struct ar_hook *h = &hooks[p].hooks[i];

      ar_jw_map_open(w);
      kstr_opt(w, "path", h->path);
      kstrv(w, "args", h->args, h->n_args);
      kstrv(w, "env", h->env, h->n_env);
      if (h->has_timeout)
        ar_jw_kint(w, "timeout", h->timeout);
      ar_jw_map_close(w);
    }
    ar_jw_array_close(w);
  }
  ar_jw_map_close(w);
}

static void emit_device_rules(struct ar_jw *w, const struct ar_device_rule *d, size_t n)
{
  if (n == 0)
    return;
  ar_jw_key(w, "devices");
  ar_jw_array_open(w);
  for (size_t i = 0; i < n; i++) {
    ar_jw_map_open(w);
    ar_jw_kbool(w, "allow", d[i].allow);
    if (d[i].type != 'a' && d[i].type != '\0')
      ar_jw_kstr(w, "type", (char[]){d[i].type, '\0'});
    if (d[i].has_major)
      ar_jw_kint(w, "major", d[i].major);
    if (d[i].has_minor)
      ar_jw_kint(w, "minor", d[i].minor);
    kstr_opt(w, "access", d[i].access);
    ar_jw_map_close(w);
  }
  ar_jw_array_close(w);
}

static void emit_memory(struct ar_jw *w, const struct ar_memory *m)
{
  ar_jw_key(w, "memory");
  ar_jw_map_open(w);
  if (m->has_limit)
    ar_jw_kint(w, "limit", m->limit);
  if (m->has_reservation)
    ar_jw_kint(w, "reservation", m->reservation);
  if (m->has_swap)
    ar_jw_kint(w, "swap", m->swap);
  if (m->has_kernel)
    ar_jw_kint(w, "kernel", m->kernel);
  if (m->has_kernel_tcp)
    ar_jw_kint(w, "kernelTCP", m->kernel_tcp);
  if (m->has_swappiness)
    ar_jw_kuint(w, "swappiness", m->swappiness);
  if (m->has_disable_oom_killer)
    ar_jw_kbool(w, "disableOOMKiller", m->disable_oom_killer);
  if (m->has_use_hierarchy)
    ar_jw_kbool(w, "useHierarchy", m->use_hierarchy);
  if (m->has_check_before_update)
    ar_jw_kbool(w, "checkBeforeUpdate", m->check_before_update);
  ar_jw_map_close(w);
}

static void emit_cpu(struct ar_jw *w, const struct ar_cpu *c)
{
  ar_jw_key(w, "cpu");
  ar_jw_map_open(w);
  if (c->has_shares)
    ar_jw_kuint(w, "shares", c->shares);
  if (c->has_quota)
    ar_jw_kint(w, "quota", c->quota);
  if (c->has_burst)
    ar_jw_kuint(w, "burst", c->burst);
  if (c->has_period)
    ar_jw_kuint(w, "period", c->period);
  if (c->has_realtime_runtime)
    ar_jw_kint(w, "realtimeRuntime", c->realtime_runtime);
  if (c->has_realtime_period)
    ar_jw_kuint(w, "realtimePeriod", c->realtime_period);
  kstr_opt(w, "cpus", c->cpus);
  kstr_opt(w, "mems", c->mems);
  if (c->has_idle)
    ar_jw_kint(w, "idle", c->idle);
  ar_jw_map_close(w);
}

static void emit_blkio(struct ar_jw *w, const struct ar_blkio *b)
{
  ar_jw_key(w, "blockIO");
  ar_jw_map_open(w);
  if (b->has_weight)
    ar_jw_kuint(w, "weight", b->weight);
  if (b->has_leaf_weight)
    ar_jw_kuint(w, "leafWeight", b->leaf_weight);
  if (b->n_weight_devices > 0) {
    ar_jw_key(w, "weightDevice");
    ar_jw_array_open(w);
    for (size_t i = 0; i < b->n_weight_devices; i++) {
      const struct ar_weight_device *d = &b->weight_devices[i];

      ar_jw_map_open(w);
      ar_jw_kint(w, "major", d->major);
      ar_jw_kint(w, "minor", d->minor);
      if (d->has_weight)
        ar_jw_kuint(w, "weight", d->weight);
      if (d->has_leaf_weight)
        ar_jw_kuint(w, "leafWeight", d->leaf_weight);
      ar_jw_map_close(w);
    }
    ar_jw_array_close(w);
  }
  for (int k = 0; k < AR_THROTTLE_NKINDS; k++) {
    if (b->n_throttle[k] == 0)
      continue;
    ar_jw_key(w, ar_throttle_key(k));
    ar_jw_array_open(w);
    for (size_t i = 0; i < b->n_throttle[k]; i++) {
      ar_jw_map_open(w);
      ar_jw_kint(w, "major", b->throttle[k][i].major);
      ar_jw_kint(w, "minor", b->throttle[k][i].minor);
      ar_jw_kuint(w, "rate", b->throttle[k][i].rate);
      ar_jw_map_close(w);
    }
    ar_jw_array_close(w);
  }
  ar_jw_map_close(w);
}

static void emit_resources_body(struct ar_jw *w, const struct ar_resources *r)
{
  ar_jw_map_open(w);
  emit_device_rules(w, r->devices, r->n_devices);
  if (r->has_memory)
    emit_memory(w, &r->memory);
  if (r->has_cpu)
    emit_cpu(w, &r->cpu);
  if (r->has_pids) {
    ar_jw_key(w, "pids");
    ar_jw_map_open(w);
    ar_jw_kint(w, "limit", r->pids_limit);
    ar_jw_map_close(w);
  }
  if (r->has_blkio)
    emit_blkio(w, &r->blkio);
  if (r->n_hugepage_limits > 0) {
    ar_jw_key(w, "hugepageLimits");
    ar_jw_array_open(w);
    for (size_t i = 0; i < r->n_hugepage_limits; i++) {
      ar_jw_map_open(w);
      kstr_opt(w, "pageSize", r->hugepage_limits[i].page_size);
      ar_jw_kuint(w, "limit", r->hugepage_limits[i].limit);
      ar_jw_map_close(w);
    }
    ar_jw_array_close(w);
  }
  ar_emit_kv_map(w, "unified", r->unified, r->n_unified);
  ar_jw_map_close(w);
}

static void emit_syscall(struct ar_jw *w, const struct ar_syscall_rule *r)
{
  ar_jw_map_open(w);
  ar_jw_key(w, "names");
  ar_jw_array_open(w); /* required, even when empty */
  for (size_t i = 0; i < r->n_names; i++)
    ar_jw_str(w, r->names[i]);
  ar_jw_array_close(w);
  ar_jw_kstr(w, "action", ar_seccomp_action_name(r->action));
  if (r->has_errno_ret)
    ar_jw_kuint(w, "errnoRet", r->errno_ret);
  if (r->n_args > 0) {
    ar_jw_key(w, "args");
    ar_jw_array_open(w);
    for (size_t i = 0; i < r->n_args; i++) {
      ar_jw_map_open(w);
      ar_jw_kuint(w, "index", r->args[i].index);
      ar_jw_kuint(w, "value", r->args[i].value);
      if (r->args[i].value_two != 0)
        ar_jw_kuint(w, "valueTwo", r->args[i].value_two);
      ar_jw_kstr(w, "op", ar_seccomp_op_name(r->args[i].op));
      ar_jw_map_close(w);
    }
    ar_jw_array_close(w);
  }
  ar_jw_map_close(w);
}

static void emit_seccomp(struct ar_jw *w, const struct ar_seccomp *s)
{
  ar_jw_key(w, "seccomp");
  ar_jw_map_open(w);
  ar_jw_kstr(w, "defaultAction", ar_seccomp_action_name(s->default_action));
  if (s->has_default_errno_ret)
    ar_jw_kuint(w, "defaultErrnoRet", s->default_errno_ret);
  kstrv(w, "architectures", s->architectures, s->n_architectures);
  kstrv(w, "flags", s->flags, s->n_flags);
  kstr_opt(w, "listenerPath", s->listener_path);
  kstr_opt(w, "listenerMetadata", s->listener_metadata);
  if (s->n_syscalls > 0) {
    ar_jw_key(w, "syscalls");
    ar_jw_array_open(w);
    for (size_t i = 0; i < s->n_syscalls; i++)
      emit_syscall(w, &s->syscalls[i]);
    ar_jw_array_close(w);
  }
  ar_jw_map_close(w);
}

static void emit_id_mappings(struct ar_jw *w, const char *key, const struct ar_id_mapping *m,
                             size_t n)
{
  if (n == 0)
    return;
  ar_jw_key(w, key);
  ar_jw_array_open(w);
  for (size_t i = 0; i < n; i++) {
    ar_jw_map_open(w);
    ar_jw_kuint(w, "containerID", m[i].container_id);
    ar_jw_kuint(w, "hostID", m[i].host_id);
    ar_jw_kuint(w, "size", m[i].size);
    ar_jw_map_close(w);
  }
  ar_jw_array_close(w);
}

static void emit_namespaces(struct ar_jw *w, const struct ar_namespace *ns, size_t n)
{
  if (n == 0)
    return;
  ar_jw_key(w, "namespaces");
  ar_jw_array_open(w);
  for (size_t i = 0; i < n; i++) {
    ar_jw_map_open(w);
    ar_jw_kstr(w, "type", ar_ns_name(ns[i].type));
    kstr_opt(w, "path", ns[i].path);
    ar_jw_map_close(w);
  }
  ar_jw_array_close(w);
}

static void emit_devices(struct ar_jw *w, const struct ar_device *d, size_t n)
{
  if (n == 0)
    return;
  ar_jw_key(w, "devices");
  ar_jw_array_open(w);
  for (size_t i = 0; i < n; i++) {
    ar_jw_map_open(w);
    kstr_opt(w, "path", d[i].path);
    ar_jw_kstr(w, "type", (char[]){d[i].type, '\0'});
    if (d[i].type != 'p' || d[i].major != 0 || d[i].minor != 0) {
      ar_jw_kint(w, "major", d[i].major);
      ar_jw_kint(w, "minor", d[i].minor);
    }
    if (d[i].has_file_mode)
      ar_jw_kuint(w, "fileMode", d[i].file_mode);
    if (d[i].has_uid)
      ar_jw_kuint(w, "uid", d[i].uid);
    if (d[i].has_gid)
      ar_jw_kuint(w, "gid", d[i].gid);
    ar_jw_map_close(w);
  }
  ar_jw_array_close(w);
}

static void emit_time_offset(struct ar_jw *w, const char *key, const struct ar_time_offset *t)
{
  if (!t->present)
    return;
  ar_jw_key(w, key);
  ar_jw_map_open(w);
  ar_jw_kint(w, "secs", t->secs);
  ar_jw_kuint(w, "nanosecs", t->nanosecs);
  ar_jw_map_close(w);
}

static void emit_linux_tail(struct ar_jw *w, const struct ar_linux *l)
{
  kstr_opt(w, "rootfsPropagation", l->rootfs_propagation);
  kstrv(w, "maskedPaths", l->masked_paths, l->n_masked_paths);
  kstrv(w, "readonlyPaths", l->readonly_paths, l->n_readonly_paths);
  kstr_opt(w, "mountLabel", l->mount_label);
  if (l->personality) {
    ar_jw_key(w, "personality");
    ar_jw_map_open(w);
    kstr_opt(w, "domain", l->personality->domain);
    kstrv(w, "flags", l->personality->flags, l->personality->n_flags);
    ar_jw_map_close(w);
  }
  if (l->time_monotonic.present || l->time_boottime.present) {
    ar_jw_key(w, "timeOffsets");
    ar_jw_map_open(w);
    emit_time_offset(w, "monotonic", &l->time_monotonic);
    emit_time_offset(w, "boottime", &l->time_boottime);
    ar_jw_map_close(w);
  }
}

static void emit_linux(struct ar_jw *w, const struct ar_linux *l)
{
  ar_jw_key(w, "linux");
  ar_jw_map_open(w);
  emit_id_mappings(w, "uidMappings", l->uid_mappings, l->n_uid_mappings);
  emit_id_mappings(w, "gidMappings", l->gid_mappings, l->n_gid_mappings);
  ar_emit_kv_map(w, "sysctl", l->sysctl, l->n_sysctl);
  if (l->has_resources) {
    ar_jw_key(w, "resources");
    emit_resources_body(w, &l->resources);
  }
  kstr_opt(w, "cgroupsPath", l->cgroups_path);
  emit_namespaces(w, l->namespaces, l->n_namespaces);
  emit_devices(w, l->devices, l->n_devices);
  if (l->seccomp)
    emit_seccomp(w, l->seccomp);
  emit_linux_tail(w, l);
  ar_jw_map_close(w);
}

int ar_spec_to_json(const struct ar_spec *s, bool pretty, char **ret, ar_err *err)
{
  struct ar_jw *w = ar_jw_new(pretty);

  ar_jw_map_open(w);
  kstr_opt(w, "ociVersion", s->oci_version);
  if (s->process) {
    ar_jw_key(w, "process");
    emit_process_body(w, s->process);
  }
  if (s->root_path) {
    ar_jw_key(w, "root");
    ar_jw_map_open(w);
    ar_jw_kstr(w, "path", s->root_path);
    if (s->root_readonly)
      ar_jw_kbool(w, "readonly", true);
    ar_jw_map_close(w);
  }
  kstr_opt(w, "hostname", s->hostname);
  kstr_opt(w, "domainname", s->domainname);
  emit_mounts(w, s->mounts, s->n_mounts);
  emit_hooks(w, s->hooks);
  ar_emit_kv_map(w, "annotations", s->annotations, s->n_annotations);
  if (s->has_linux)
    emit_linux(w, &s->linux_);
  ar_jw_map_close(w);
  *ret = ar_jw_finish(w, NULL);
  return 0;
}

int ar_process_to_json(const struct ar_process *p, bool pretty, char **ret, ar_err *err)
{
  struct ar_jw *w = ar_jw_new(pretty);

  emit_process_body(w, p);
  *ret = ar_jw_finish(w, NULL);
  return 0;
}

int ar_resources_to_json(const struct ar_resources *r, bool pretty, char **ret, ar_err *err)
{
  struct ar_jw *w = ar_jw_new(pretty);

  emit_resources_body(w, r);
  *ret = ar_jw_finish(w, NULL);
  return 0;
}
