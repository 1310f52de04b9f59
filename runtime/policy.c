/* The policy layer's orchestration: load the host policy, read the annotations, run each control,
 * and keep a record of what was set, tightened or relaxed, for `inspect` and the audit log. */
#include <config.h>
#include "policy.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>

#include "spec/jsonw.h"
#include "utils.h"

#define DEFAULT_POLICY_PATH "/etc/agentrun/policy.json"

int ar_policy_load(const char *path, struct ar_host_policy **ret, ar_err *err)
{
  cleanup_free char *buf = NULL;
  size_t len;
  bool explicit = path != NULL;
  if (path == NULL && (path = getenv("AGENTRUN_POLICY")) != NULL && *path)
    explicit = true;
  if (!explicit)
    path = DEFAULT_POLICY_PATH;
  if (ar_read_file(path, &buf, &len, err) < 0) {
    /* Only the default location may be absent; a named file must exist. */
    if (!explicit && (*err)->status == ENOENT) {
      ar_error_free(err);
      *ret = ar_host_policy_default();
      return 0;
    }
    return ar_error_wrap(err, "host policy");
  }
  return ar_host_policy_parse(buf, len, path, ret, err);
}

static int bad_annotation(ar_err *err, const char *key, const char *val, const char *expected)
{
  return ar_error(err, 0, "annotation %s=\"%s\": expected %s", key, val, expected);
}

/* A two-word switch such as none|inherit -> 0|1. */
static int parse_switch(const char *key, const char *val, const char *off, const char *on, int *ret,
                        ar_err *err)
{
  if (strcmp(val, off) == 0)
    *ret = 0;
  else if (strcmp(val, on) == 0)
    *ret = 1;
  else {
    cleanup_free char *exp = xasprintf("\"%s\" or \"%s\"", off, on);
    return bad_annotation(err, key, val, exp);
  }
  return 0;
}

static int parse_cpus(const char *val, uint64_t *ret)
{
  char *end;
  double d = strtod(val, &end);
  if (end == val || *end || !(d > 0) || d > 1e6)
    return -1;
  *ret = (uint64_t)(d * 1000 + 0.5);
  return *ret ? 0 : -1;
}

static int parse_one(const char *key, const char *val, struct ar_agent_request *r, ar_err *err)
{
  const char *k = key + strlen(AR_ANNOTATION_PREFIX);
  if (strcmp(k, "network") == 0)
    return parse_switch(key, val, "none", "inherit", &r->network, err);
  if (strcmp(k, "rootfs") == 0)
    return parse_switch(key, val, "readonly", "writable", &r->rootfs, err);
  if (strcmp(k, "seccomp") == 0)
    return parse_switch(key, val, "off", "on", &r->seccomp, err);
  if (strcmp(k, "audit") == 0)
    return parse_switch(key, val, "off", "on", &r->audit, err);
  if (strcmp(k, "timeout") == 0) {
    if (ar_parse_duration_ms(val, &r->timeout_ms) < 0 || r->timeout_ms == 0)
      return bad_annotation(err, key, val, "a duration such as 30s, 2m or 1h");
    return r->has_timeout = true, 0;
  }
  if (strcmp(k, "memory") == 0 || strcmp(k, "tmp-size") == 0) {
    bool mem = k[0] == 'm';
    uint64_t *dst = mem ? &r->memory : &r->tmp_size;
    /* above INT64_MAX the limit would wrap to -1, "unlimited", in the spec */
    if (ar_parse_size(val, dst) < 0 || *dst == 0 || *dst > INT64_MAX)
      return bad_annotation(err, key, val, "a size such as 512m or 1g");
    return (mem ? (r->has_memory = true) : (r->has_tmp_size = true)), 0;
  }
  if (strcmp(k, "pids") == 0) {
    if (ar_parse_uint64(val, &r->pids) < 0 || r->pids == 0 || r->pids > INT64_MAX)
      return bad_annotation(err, key, val, "a positive integer");
    return r->has_pids = true, 0;
  }
  if (strcmp(k, "cpus") == 0) {
    if (parse_cpus(val, &r->cpus_milli) < 0)
      return bad_annotation(err, key, val, "a number of CPUs such as 0.5 or 2");
    return r->has_cpus = true, 0;
  }
  return ar_error(err, 0, "annotation %s: unknown agentrun annotation", key);
}

int ar_agent_request_parse(const struct ar_spec *s, struct ar_agent_request *r, ar_err *err)
{
  memset(r, 0, sizeof(*r));
  r->network = r->rootfs = r->seccomp = r->audit = -1;
  for (size_t i = 0; i < s->n_annotations; i++) {
    const struct ar_kv *kv = &s->annotations[i];
    if (strncmp(kv->key, AR_ANNOTATION_PREFIX, strlen(AR_ANNOTATION_PREFIX)) == 0 &&
        parse_one(kv->key, kv->value, r, err) < 0)
      return -1;
  }
  return 0;
}

void ar_policy_note(struct ar_policy_run *r, const char *control, const char *verdict,
                    const char *fmt, ...)
{
  struct ar_effective *e = r->e;
  va_list ap;
  char *detail;
  va_start(ap, fmt);
  if (vasprintf(&detail, fmt, ap) < 0)
    abort();
  va_end(ap);
  e->entries = xrealloc(e->entries, (e->n_entries + 1) * sizeof(*e->entries));
  e->entries[e->n_entries++] = (struct ar_policy_entry){control, verdict, detail};
}

/* A relaxation is honoured only where the host allows it; otherwise create fails, naming both. */
int ar_policy_relax_check(struct ar_policy_run *r, const char *annotation, const char *value,
                          enum ar_relax what)
{
  if (r->hp->allow[what])
    return 1;
  return ar_error(r->err, 0,
                  "annotation " AR_ANNOTATION_PREFIX "%s=%s: forbidden by the host policy "
                  "(allow.%s is false in %s)",
                  annotation, value, ar_relax_key(what), r->hp->source);
}

/* A namespace of type t, made fresh, unless the config already has one (fresh or joined). */
static bool add_namespace(struct ar_spec *s, enum ar_ns_type t)
{
  struct ar_linux *l = &s->linux_;
  if (ar_spec_namespace(s, t) != NULL)
    return false;
  l->namespaces = xrealloc(l->namespaces, (l->n_namespaces + 1) * sizeof(*l->namespaces));
  l->namespaces[l->n_namespaces++] = (struct ar_namespace){t, NULL};
  s->has_linux = true;
  return true;
}

/* Without its own pid, ipc, uts and mount namespaces the job would see, signal (CAP_KILL is in
 * the allowed set) and share memory with every process of the host.  A joined namespace (a
 * pod's, a path) is the engine's choice and stays. */
static int policy_namespaces(struct ar_policy_run *r)
{
  static const enum ar_ns_type need[] = {AR_NS_PID, AR_NS_IPC, AR_NS_UTS, AR_NS_MOUNT};
  char added[64] = "";
  if (!r->hp->control[AR_CTL_NAMESPACES])
    return ar_policy_note(r, "namespaces", "off", "host policy: the config's namespaces"), 0;
  for (size_t i = 0; i < ARRAY_SIZE(need); i++)
    if (add_namespace(r->s, need[i])) {
      strcat(added, " ");
      strcat(added, ar_ns_name(need[i]));
    }
  if (added[0])
    ar_policy_note(r, "namespaces", "tightened", "private namespaces added:%s", added);
  else
    ar_policy_note(r, "namespaces", "kept", "pid ipc uts mount are the container's own");
  return 0;
}

static int policy_network(struct ar_policy_run *r)
{
  if (!r->hp->control[AR_CTL_NETWORK])
    return ar_policy_note(r, "network", "off", "host policy: the config's network is used"), 0;
  if (r->req->network == 1) {
    if (ar_policy_relax_check(r, "network", "inherit", AR_RELAX_NETWORK) < 0)
      return -1;
    ar_policy_note(r, "network", "relaxed", "annotation asked for the config's network");
    return 0;
  }
  r->e->isolate_net = true;
  /* Named in the effective spec too, so that `exec` joins the job's netns, not the host's. */
  if (add_namespace(r->s, AR_NS_NETWORK))
    ar_policy_note(r, "network", "tightened",
                   "the config asked for the host's network: a fresh network namespace with "
                   "only lo instead");
  else
    ar_policy_note(r, "network", "set", "a fresh network namespace with only lo, after the hooks");
  return 0;
}

static int policy_seccomp(struct ar_policy_run *r)
{
  if (!r->hp->control[AR_CTL_SECCOMP])
    return ar_policy_note(r, "seccomp", "off", "host policy: only the config's filter"), 0;
  if (r->req->seccomp == 0) {
    if (ar_policy_relax_check(r, "seccomp", "off", AR_RELAX_SECCOMP) < 0)
      return -1;
    ar_policy_note(r, "seccomp", "relaxed", "annotation turned the agent filter off");
    return 0;
  }
  r->e->agent_seccomp = true;
  ar_policy_note(r, "seccomp", "set", "agent filter stacked on %s",
                 r->s->linux_.seccomp ? "the config's filter" : "no config filter");
  return 0;
}

static int policy_nnp(struct ar_policy_run *r)
{
  if (!r->hp->control[AR_CTL_NO_NEW_PRIVS])
    return ar_policy_note(r, "no_new_privileges", "off", "host policy"), 0;
  ar_policy_note(r, "no_new_privileges", r->s->process->no_new_privileges ? "kept" : "tightened",
                 "always on");
  r->s->process->no_new_privileges = true;
  return 0;
}

static int policy_timeout(struct ar_policy_run *r)
{
  const struct ar_limit *l = &r->hp->timeout_ms;
  if (!r->hp->control[AR_CTL_TIMEOUT])
    return ar_policy_note(r, "timeout", "off", "host policy: no deadline"), 0;
  r->e->timeout_ms = l->def;
  if (r->req->has_timeout) {
    if (l->max && r->req->timeout_ms > l->max)
      return ar_error(r->err, 0,
                      "annotation " AR_ANNOTATION_PREFIX "timeout: %llu s is above the host "
                      "maximum (maxima.timeout = %llu s in %s)",
                      (unsigned long long)r->req->timeout_ms / 1000,
                      (unsigned long long)l->max / 1000, r->hp->source);
    r->e->timeout_ms = r->req->timeout_ms;
  }
  if (l->max && (r->e->timeout_ms == 0 || r->e->timeout_ms > l->max))
    r->e->timeout_ms = l->max; /* no deadline is above any maximum */
  if (r->e->timeout_ms == 0)
    return ar_policy_note(r, "timeout", "kept", "no deadline: defaults.timeout is 0, no maxima"), 0;
  ar_policy_note(r, "timeout", r->req->has_timeout ? "set" : "kept",
                 "%.3f s wall clock from start: %s", r->e->timeout_ms / 1000.0,
                 r->req->has_timeout ? "annotation " AR_ANNOTATION_PREFIX "timeout"
                                     : "the host's default (defaults.timeout)");
  return 0;
}

static int policy_audit(struct ar_policy_run *r, const char *id)
{
  if (!r->hp->audit)
    return ar_policy_note(r, "audit", "off", "host policy"), 0;
  if (r->req->audit == 0) {
    if (ar_policy_relax_check(r, "audit", "off", AR_RELAX_AUDIT) < 0)
      return -1;
    return ar_policy_note(r, "audit", "relaxed", "annotation turned the audit off"), 0;
  }
  r->e->audit = true;
  r->e->audit_path = xasprintf("%s/%s.jsonl", r->hp->audit_dir, id);
  r->e->audit_max_bytes = r->hp->audit_max_bytes;
  r->e->audit_syslog = r->hp->audit_syslog;
  ar_policy_note(r, "audit", "set", "%s", r->e->audit_path);
  return 0;
}

int ar_policy_apply(const struct ar_host_policy *hp, struct ar_spec *s, const char *id,
                    struct ar_effective **ret, ar_err *err)
{
  struct ar_agent_request req;
  struct ar_effective *e = xcalloc(1, sizeof(*e));
  struct ar_policy_run r = {hp, &req, s, e, err};

  if (ar_agent_request_parse(s, &req, err) < 0 || policy_network(&r) < 0 ||
      policy_namespaces(&r) < 0 || ar_policy_rootfs(&r) < 0 || policy_seccomp(&r) < 0 ||
      ar_policy_caps(&r) < 0 || policy_nnp(&r) < 0 || ar_policy_limits(&r) < 0 ||
      ar_policy_rlimits(&r) < 0 || ar_policy_devices(&r) < 0 || ar_policy_paths(&r) < 0 ||
      ar_policy_sysctl(&r) < 0 || policy_timeout(&r) < 0 || policy_audit(&r, id) < 0) {
    ar_effective_free(e);
    return -1;
  }
  *ret = e;
  return 0;
}

int ar_policy_exec_process(const struct ar_host_policy *hp, struct ar_process *p, ar_err *err)
{
  struct ar_agent_request req = {.network = -1, .rootfs = -1, .seccomp = -1, .audit = -1};
  struct ar_spec s = {.process = p};
  struct ar_effective *e = xcalloc(1, sizeof(*e));
  struct ar_policy_run r = {hp, &req, &s, e, err};
  int ret = ar_policy_caps(&r) < 0 || policy_nnp(&r) < 0 || ar_policy_rlimits(&r) < 0 ? -1 : 0;
  ar_effective_free(e);
  return ret;
}

char *ar_effective_to_json(const struct ar_effective *e, bool pretty)
{
  struct ar_jw *w = ar_jw_new(pretty);
  ar_jw_map_open(w);
  ar_jw_kbool(w, "network_isolated", e->isolate_net);
  ar_jw_kbool(w, "agent_seccomp", e->agent_seccomp);
  ar_jw_kbool(w, "audit", e->audit);
  ar_jw_kdouble(w, "timeout_s", e->timeout_ms / 1000.0);
  ar_jw_kstr(w, "audit_log", e->audit_path);
  ar_jw_key(w, "controls");
  ar_jw_array_open(w);
  for (size_t i = 0; i < e->n_entries; i++) {
    ar_jw_map_open(w);
    ar_jw_kstr(w, "control", e->entries[i].control);
    ar_jw_kstr(w, "verdict", e->entries[i].verdict);
    ar_jw_kstr(w, "why", e->entries[i].detail);
    ar_jw_map_close(w);
  }
  ar_jw_array_close(w);
  ar_jw_map_close(w);
  return ar_jw_finish(w, NULL);
}

void ar_effective_set_audit_path(struct ar_effective *e, const char *path)
{
  free(e->audit_path);
  e->audit_path = xstrdup(path);
  for (size_t i = 0; i < e->n_entries; i++)
    if (strcmp(e->entries[i].control, "audit") == 0) {
      free(e->entries[i].detail);
      e->entries[i].detail = xstrdup(path);
    }
}

void ar_effective_free(struct ar_effective *e)
{
  if (e == NULL)
    return;
  for (size_t i = 0; i < e->n_entries; i++)
    free(e->entries[i].detail);
  free(e->entries);
  free(e->audit_path);
  free(e);
}
