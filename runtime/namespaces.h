/* Namespaces: which to create with clone3, which to join by path, and the id maps. */
#ifndef AR_NAMESPACES_H
#define AR_NAMESPACES_H

#include <stdbool.h>
#include <sys/types.h>

#include "spec/spec.h"

struct ar_ns_plan {
  int clone_flags;           /* CLONE_NEW* to pass to clone3 */
  int unshare_flags;         /* CLONE_NEW* the child unshares after joining and sync 1 */
  int join_fd[AR_NS_COUNT];  /* opened namespace paths, -1 when not joined */
  bool new_user;
  bool fork_after_join;      /* a pid namespace owned by a joined userns: the init forks */
  bool time_offsets;         /* the parent unshares CLONE_NEWTIME and writes the offsets */
};

/* Parent: open the paths (resolved in the runtime's mount namespace) and work out the flags. */
int ar_ns_plan(const struct ar_spec *s, struct ar_ns_plan *plan, ar_err *err);
void ar_ns_plan_clear(struct ar_ns_plan *plan);
/* Parent, before clone3: namespaces that only apply to children (pid joined by path, time).
 * *ret_restore_* hold our own namespaces, so that ar_ns_parent_restore() can switch back. */
int ar_ns_parent_enter(const struct ar_spec *s, struct ar_ns_plan *plan, int restore[2],
                       ar_err *err);
int ar_ns_parent_restore(int restore[2], ar_err *err);
/* Parent, after clone3: write uid_map/gid_map of the new user namespace. */
int ar_ns_write_maps(const struct ar_spec *s, pid_t pid, ar_err *err);
/* Child: join the namespaces given by path (user first), except pid and time, then unshare
 * the ones that must be created after that (owned by a joined user namespace, or a cgroup
 * namespace rooted at the container's cgroup). */
int ar_ns_join(struct ar_ns_plan *plan, ar_err *err);

/* clone3 as a fork: the child returns 0.  cgroup_fd >= 0 adds CLONE_INTO_CGROUP. */
pid_t ar_clone3(int flags, int cgroup_fd);

/* Bring lo up in the current network namespace. */
int ar_net_lo_up(ar_err *err);

#endif
