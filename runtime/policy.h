/* Agent hardening: the caller's spec + the host policy + run.agentrun.* annotations -> the
 * effective spec.  Everything after ar_policy_apply() sees only the effective spec. */
#ifndef AR_POLICY_H
#define AR_POLICY_H

#include <stdbool.h>
#include <stdint.h>

#include "spec/policy.h"
#include "spec/spec.h"

#define AR_ANNOTATION_PREFIX "run.agentrun."

/* What a container asked for through its annotations. */
struct ar_agent_request {
  int network; /* -1 unset, 0 none, 1 inherit */
  int rootfs;  /* -1 unset, 0 readonly, 1 writable */
  int seccomp; /* -1 unset, 0 off, 1 on */
  int audit;   /* -1 unset, 0 off, 1 on */
  bool has_timeout, has_memory, has_pids, has_cpus, has_tmp_size;
  uint64_t timeout_ms, memory, pids, cpus_milli, tmp_size;
};

/* One line of `inspect`: what happened to a control, and why. */
struct ar_policy_entry {
  const char *control;
  const char *verdict; /* "set", "tightened", "relaxed", "kept", "off" */
  char *detail;
};

struct ar_effective {
  bool isolate_net;
  bool agent_seccomp;
  bool audit;
  uint64_t timeout_ms; /* 0: none */
  char *audit_path;    /* <audit_dir>/<id>.jsonl, NULL when off */
  uint64_t audit_max_bytes;
  bool audit_syslog;
  struct ar_policy_entry *entries;
  size_t n_entries;
};

/* --policy, else $AGENTRUN_POLICY, else /etc/agentrun/policy.json, else the compiled-in one. */
int ar_policy_load(const char *path, struct ar_host_policy **ret, ar_err *err);
int ar_agent_request_parse(const struct ar_spec *s, struct ar_agent_request *r, ar_err *err);
int ar_policy_apply(const struct ar_host_policy *hp, struct ar_spec *s, const char *id,
                    struct ar_effective **ret, ar_err *err);
/* The process-level controls (capabilities, no_new_privileges, rlimits) for an `exec`: a process
 * given with --process or --cap gets no more than the container's init could have. */
int ar_policy_exec_process(const struct ar_host_policy *hp, struct ar_process *p, ar_err *err);
char *ar_effective_to_json(const struct ar_effective *e, bool pretty);
/* sandbox --audit FILE: the log goes there instead of the policy's audit dir. */
void ar_effective_set_audit_path(struct ar_effective *e, const char *path);
void ar_effective_free(struct ar_effective *e);

/* Internal to policy*.c: the per-control edits. */
struct ar_policy_run {
  const struct ar_host_policy *hp;
  const struct ar_agent_request *req;
  struct ar_spec *s;
  struct ar_effective *e;
  ar_err *err;
};
void ar_policy_note(struct ar_policy_run *r, const char *control, const char *verdict,
                    const char *fmt, ...) __attribute__((format(printf, 4, 5)));
int ar_policy_relax_check(struct ar_policy_run *r, const char *annotation, const char *value,
                          enum ar_relax what);
int ar_policy_rootfs(struct ar_policy_run *r);
int ar_policy_caps(struct ar_policy_run *r);
int ar_policy_limits(struct ar_policy_run *r);
int ar_policy_rlimits(struct ar_policy_run *r);
int ar_policy_devices(struct ar_policy_run *r);
int ar_policy_paths(struct ar_policy_run *r);
int ar_policy_sysctl(struct ar_policy_run *r);

#endif
