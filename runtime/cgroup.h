/* Cgroups on v1, hybrid (v1 controllers + a cgroup2 mount at /sys/fs/cgroup/unified) and v2. */
#ifndef AR_CGROUP_H
#define AR_CGROUP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "spec/spec.h"

enum ar_cgroup_mode { AR_CGROUP_V1, AR_CGROUP_HYBRID, AR_CGROUP_V2 };

struct ar_cgroup;

struct ar_cgroup_stats {
  uint64_t cpu_usage_ns, cpu_user_ns, cpu_system_ns;
  uint64_t cpu_periods, cpu_throttled_periods, cpu_throttled_ns;
  uint64_t mem_usage, mem_max_usage, mem_limit, mem_failcnt;
  uint64_t mem_swap_usage, mem_swap_limit, mem_cache;
  uint64_t oom_kills; /* memory.events oom_kill, or memory.oom_control oom_kill */
  uint64_t pids_current, pids_limit, pids_peak;
  bool has_pids_peak, has_mem_max_usage;
};

enum ar_cgroup_mode ar_cgroup_detect_mode(void);

/* Work out where the container's cgroup lives.  cgroups_path is config.json's linux.cgroupsPath:
 * absolute ("/a/b"), relative or empty (nested under the caller's own cgroup in each hierarchy,
 * as runc does), or, with systemd, "slice:prefix:name" mapped to the cgroupfs path systemd uses. */
int ar_cgroup_new(const char *cgroups_path, const char *id, bool systemd, struct ar_cgroup **ret,
                  ar_err *err);
/* Create the directories and apply the limits, before the init exists. */
int ar_cgroup_create(struct ar_cgroup *cg, const struct ar_resources *res, ar_err *err);
/* Move pid into the cgroup in every hierarchy. */
int ar_cgroup_enter(struct ar_cgroup *cg, pid_t pid, ar_err *err);
/* An O_DIRECTORY fd of the v2 cgroup for CLONE_INTO_CGROUP, or -1 (not pure v2). Owned by cg. */
int ar_cgroup_v2_fd(struct ar_cgroup *cg);

/* A new process joins by itself, so that no other process has to move it: a parent that writes
 * a pid to cgroup.procs takes the kernel's global threadgroup rwsem for writing and waits for an
 * RCU grace period (5-13 ms on the bench host, per create and per exec); a single thread that
 * writes "0" to a v1 `tasks` file, or is born in its cgroup2 with CLONE_INTO_CGROUP, does not.
 * ar_cgroup_clone_fd: the cgroup2 directory for CLONE_INTO_CGROUP, on v2 and hybrid hosts (-1:
 * none). ar_cgroup_open_tasks: the v1 hierarchies' `tasks` files, opened by the parent (the
 * kernel checks the opener's credentials), for ar_cgroup_join_self in the child, which must be
 * single-threaded and not yet in its own cgroup namespace. */
int ar_cgroup_clone_fd(struct ar_cgroup *cg);
int ar_cgroup_open_tasks(struct ar_cgroup *cg, int **ret_fds, size_t *ret_n, ar_err *err);
int ar_cgroup_join_self(const int *fds, size_t n, ar_err *err);
int ar_cgroup_update(struct ar_cgroup *cg, const struct ar_resources *res, ar_err *err);
int ar_cgroup_freeze(struct ar_cgroup *cg, bool frozen, ar_err *err);
int ar_cgroup_is_frozen(struct ar_cgroup *cg, bool *ret, ar_err *err);
int ar_cgroup_pids(struct ar_cgroup *cg, pid_t **ret, size_t *ret_n, ar_err *err);
/* Signal every process (cgroup.kill on v2 for SIGKILL; freeze, signal, thaw on v1). */
int ar_cgroup_kill(struct ar_cgroup *cg, int sig, ar_err *err);
/* Kill what is left, and remove the directories everywhere.  Missing dirs are not an error. */
int ar_cgroup_destroy(struct ar_cgroup *cg, ar_err *err);
int ar_cgroup_stats(struct ar_cgroup *cg, struct ar_cgroup_stats *st, ar_err *err);
/* The cgroup's directory in the named controller's hierarchy ("memory", "pids", "" for v2). */
const char *ar_cgroup_path(struct ar_cgroup *cg, const char *controller);
/* Round-trip through the state file. */
char *ar_cgroup_serialize(const struct ar_cgroup *cg);
int ar_cgroup_deserialize(const char *s, struct ar_cgroup **ret, ar_err *err);
void ar_cgroup_free(struct ar_cgroup *cg);

#endif
