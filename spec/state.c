/* The runtime's own state file, and the OCI state document `state` prints and hooks read. */
#include <config.h>
#include "spec/state.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/utils.h"
#include "spec/jsonw.h"
#include "spec/parse.h"

#define STATE_DOC "state.json"

int ar_state_to_json(const struct ar_state *st, char **ret, ar_err *err)
{
  struct ar_jw *w = ar_jw_new(false);

  ar_jw_map_open(w);
  ar_jw_kstr(w, "id", st->id);
  ar_jw_kint(w, "pid", st->pid);
  ar_jw_kuint(w, "pidStart", st->pid_start);
  ar_jw_kstr(w, "bundle", st->bundle);
  ar_jw_kstr(w, "rootfs", st->rootfs);
  ar_jw_kstr(w, "created", st->created);
  ar_jw_kstr(w, "owner", st->owner ? st->owner : "");
  ar_jw_kbool(w, "started", st->started);
  ar_jw_kint(w, "monitorPid", st->monitor_pid);
  if (st->cgroup)
    ar_jw_kstr(w, "cgroup", st->cgroup);
  ar_jw_kbool(w, "agentSeccomp", st->agent_seccomp);
  ar_jw_kbool(w, "auditExec", st->audit_exec);
  if (st->audit_log)
    ar_jw_kstr(w, "auditLog", st->audit_log);
  ar_emit_kv_map(w, "annotations", st->annotations, st->n_annotations);
  ar_jw_map_close(w);
  *ret = ar_jw_finish(w, NULL);
  return 0;
}

static int parse_state(struct jp *c, yajl_val v, struct ar_state *st)
{
  int64_t pid = 0, monitor = 0;
  bool has;

  if (jp_expect_object(c, v) < 0 || jp_str(c, v, "id", &st->id, NULL) < 0 ||
      jp_int(c, v, "pid", 0, INT_MAX, &pid, NULL) < 0 ||
      jp_u64(c, v, "pidStart", &st->pid_start, &has) < 0 ||
      jp_str(c, v, "bundle", &st->bundle, NULL) < 0 ||
      jp_str(c, v, "rootfs", &st->rootfs, NULL) < 0 ||
      jp_str(c, v, "created", &st->created, NULL) < 0 ||
      jp_str(c, v, "owner", &st->owner, &has) < 0 ||
      jp_bool(c, v, "started", &st->started, &has) < 0 ||
      jp_int(c, v, "monitorPid", 0, INT_MAX, &monitor, &has) < 0 ||
      jp_str(c, v, "cgroup", &st->cgroup, &has) < 0 ||
      jp_bool(c, v, "agentSeccomp", &st->agent_seccomp, &has) < 0 ||
      jp_bool(c, v, "auditExec", &st->audit_exec, &has) < 0 ||
      jp_str(c, v, "auditLog", &st->audit_log, &has) < 0 ||
      jp_kvmap(c, v, "annotations", &st->annotations, &st->n_annotations) < 0)
    return -1;
  st->pid = pid;
  st->monitor_pid = monitor;
  if (st->owner == NULL)
    st->owner = xstrdup("");
  return 0;
}

int ar_state_parse(const char *json, size_t len, struct ar_state **ret, ar_err *err)
{
  struct ar_state *st = xcalloc(1, sizeof(*st));
  struct jp c;
  yajl_val v;
  int rc = -1;

  jp_init(&c, STATE_DOC, err);
  v = jp_parse(&c, json, len);
  if (v != NULL && parse_state(&c, v, st) == 0)
    rc = 0;
  yajl_tree_free(v);
  jp_fini(&c);
  if (rc < 0) {
    ar_state_free(st);
    return -1;
  }
  *ret = st;
  return 0;
}

void ar_state_free(struct ar_state *st)
{
  if (st == NULL)
    return;
  free(st->id);
  free(st->bundle);
  free(st->rootfs);
  free(st->created);
  free(st->owner);
  free(st->cgroup);
  free(st->audit_log);
  ar_kv_free(st->annotations, st->n_annotations);
  free(st);
}

/* Exactly runc's `state` fields and order.  runc prints "pid": 0 for a stopped container, so
 * pid is always there. */
int ar_state_oci_json(const struct ar_state *st, const char *status, bool pretty, char **ret,
                      ar_err *err)
{
  struct ar_jw *w = ar_jw_new(pretty);

  ar_jw_map_open(w);
  ar_jw_kstr(w, "ociVersion", AR_OCI_VERSION);
  ar_jw_kstr(w, "id", st->id ? st->id : "");
  ar_jw_kint(w, "pid", st->pid);
  ar_jw_kstr(w, "status", status);
  ar_jw_kstr(w, "bundle", st->bundle ? st->bundle : "");
  ar_jw_kstr(w, "rootfs", st->rootfs ? st->rootfs : "");
  ar_jw_kstr(w, "created", st->created ? st->created : "");
  ar_emit_kv_map(w, "annotations", st->annotations, st->n_annotations);
  ar_jw_kstr(w, "owner", st->owner ? st->owner : "");
  ar_jw_map_close(w);
  *ret = ar_jw_finish(w, NULL);
  return 0;
}
