/* Shared between cgroup.c (paths, lifecycle), cgroup-v1.c, cgroup-v2.c and cgroup-devices.c.
 * Not for the rest of the runtime: use runtime/cgroup.h. */
#ifndef AR_CGROUP_INTERNAL_H
#define AR_CGROUP_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cgroup.h"

/* One mounted hierarchy and the container's directory in it. */
struct ar_cg_hier {
  char *controllers; /* as in /proc/self/cgroup: "memory", "cpu,cpuacct", "name=systemd"; "" = v2 */
  char *rel;         /* the cgroup's path from the hierarchy root: "/process_api/x/ctr" */
  char *mount;       /* mount point: "/sys/fs/cgroup/memory" */
  char *path;        /* the directory: mount + rel (minus the mount's own root) */
  bool created;      /* we made the leaf (so a failed create removes it) */
};

struct ar_cgroup {
  enum ar_cgroup_mode mode;
  struct ar_cg_hier *h;
  size_t n_h;
  int v2_fd; /* lazily opened for CLONE_INTO_CGROUP */
};

/* The hierarchy holding controller `name`, or NULL.  "" (or, on pure v2, any name) means the
 * unified hierarchy. */
struct ar_cg_hier *ar_cg_find(struct ar_cgroup *cg, const char *name);
struct ar_cg_hier *ar_cg_unified(struct ar_cgroup *cg);

/* Files in a cgroup directory.  Values go in one write(2), as cgroupfs requires. */
int ar_cg_write(const char *dir, const char *file, const char *value, ar_err *err);
int ar_cg_writef(const char *dir, const char *file, ar_err *err, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
int ar_cg_read(const char *dir, const char *file, char **ret, ar_err *err);
bool ar_cg_exists(const char *dir, const char *file);
/* First line of the file as a number; "max" gives `max_value`.  -ENOENT if there is no file. */
int ar_cg_read_u64(const char *dir, const char *file, uint64_t max_value, uint64_t *ret);
/* "key value" lines (memory.stat, cpu.stat, memory.events ...). -ENOENT if absent. */
int ar_cg_read_key(const char *dir, const char *file, const char *key, uint64_t *ret);

/* A limit as the kernel writes it: -1 (or any negative) is unlimited. */
void ar_cg_fmt_limit(char *buf, size_t len, int64_t v, bool v2);

/* cgroup-v1.c */
int ar_cg_v1_apply(struct ar_cgroup *cg, const struct ar_resources *res, bool update, ar_err *err);
int ar_cg_v1_prepare_cpuset(const char *mount, const char *path, ar_err *err);
int ar_cg_v1_freeze(const char *dir, bool frozen, ar_err *err);
int ar_cg_v1_stats(struct ar_cgroup *cg, struct ar_cgroup_stats *st, ar_err *err);

/* cgroup-v2.c */
/* Turn on in every ancestor's cgroup.subtree_control what the parent offers (`only`: just these,
 * NULL: all of them), down to the parent of `path`. */
int ar_cg_v2_enable(const char *mount, const char *path, const char *const *only, ar_err *err);
int ar_cg_v2_apply(const char *dir, const struct ar_resources *res, bool update, ar_err *err);
int ar_cg_v2_hugetlb(const char *dir, const struct ar_resources *res, ar_err *err);
int ar_cg_v2_unified(const char *dir, const struct ar_resources *res, ar_err *err);
int ar_cg_v2_freeze(const char *dir, bool frozen, ar_err *err);
int ar_cg_v2_stats(const char *dir, struct ar_cgroup_stats *st, ar_err *err);

/* cgroup-devices.c */
int ar_cg_devices_v1(const char *dir, const struct ar_device_rule *r, size_t n, ar_err *err);
int ar_cg_devices_v2(const char *dir, const struct ar_device_rule *r, size_t n, ar_err *err);

/* The eBPF program (struct bpf_insn[], 8 bytes each) for a rule list: last match wins, per
 * access bit; what no rule decides is denied.  Exposed for the unit test. */
int ar_cg_devices_bpf(const struct ar_device_rule *r, size_t n, void **ret_insns, size_t *ret_count,
                      ar_err *err);

#endif
