/* The container's state file (state dir/state.json) and the OCI state document. */
#ifndef AR_SPEC_STATE_H
#define AR_SPEC_STATE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "spec/spec.h"

struct ar_state {
  char *id;
  pid_t pid;           /* container init, as seen from the runtime's pid namespace */
  uint64_t pid_start;  /* field 22 of /proc/PID/stat: tells a reused pid from ours */
  char *bundle;        /* absolute */
  char *rootfs;        /* absolute */
  char *created;       /* RFC 3339 */
  char *owner;         /* "" for root, as runc */
  bool started;        /* `start` released the init */
  pid_t monitor_pid;   /* 0: no monitor */
  char *cgroup;        /* opaque string from ar_cgroup_serialize(), NULL if none */
  bool agent_seccomp;  /* the policy's filter applies to exec'd processes too */
  bool audit_exec;     /* exec'd processes send their listener fd to the monitor */
  char *audit_log;     /* the audit log's path, NULL when the audit is off */
  struct ar_kv *annotations;
  size_t n_annotations;
};

int ar_state_to_json(const struct ar_state *st, char **ret, ar_err *err);
int ar_state_parse(const char *json, size_t len, struct ar_state **ret, ar_err *err);
void ar_state_free(struct ar_state *st);

/* The document `state` prints and hooks read on stdin:
 * ociVersion id pid status bundle rootfs created annotations owner, in runc's order.  pid is
 * always there (0 once stopped) and annotations only when there are some, as runc prints them. */
int ar_state_oci_json(const struct ar_state *st, const char *status, bool pretty, char **ret,
                      ar_err *err);

#endif
