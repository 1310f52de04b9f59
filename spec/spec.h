/* The OCI runtime-spec (Linux) as typed C structs.  Only spec/ sees JSON: the rest of agentrun
 * works on these structs.  Optional scalars carry a has_x flag; arrays are T *x; size_t n_x.
 * Strings are owned by the struct and freed by the matching *_free(). */
#ifndef AR_SPEC_H
#define AR_SPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime/error.h"

#define AR_OCI_VERSION "1.2.0"

struct ar_kv {
  char *key;
  char *value;
};

struct ar_id_mapping {
  uint32_t container_id;
  uint32_t host_id;
  uint32_t size;
};

struct ar_user {
  uint32_t uid;
  uint32_t gid;
  bool has_umask;
  uint32_t umask;
  uint32_t *additional_gids;
  size_t n_additional_gids;
};

enum ar_cap_set {
  AR_CAP_BOUNDING,
  AR_CAP_EFFECTIVE,
  AR_CAP_INHERITABLE,
  AR_CAP_PERMITTED,
  AR_CAP_AMBIENT,
  AR_CAP_NSETS
};

struct ar_capabilities {
  /* Names as given ("CAP_CHOWN"); the parser has checked each against the kernel's list. */
  char **names[AR_CAP_NSETS];
  size_t n_names[AR_CAP_NSETS];
};

struct ar_rlimit {
  char *type; /* "RLIMIT_NOFILE" */
  int resource; /* resolved RLIMIT_* number */
  uint64_t hard;
  uint64_t soft;
};

struct ar_io_priority {
  char *class_name; /* IOPRIO_CLASS_RT | _BE | _IDLE */
  int priority;
};

struct ar_process {
  bool terminal;
  bool has_console_size;
  uint32_t console_height;
  uint32_t console_width;
  struct ar_user user;
  char **args;
  size_t n_args;
  char **env;
  size_t n_env;
  char *cwd;
  bool has_capabilities;
  struct ar_capabilities capabilities;
  struct ar_rlimit *rlimits;
  size_t n_rlimits;
  bool no_new_privileges;
  bool has_oom_score_adj;
  int oom_score_adj;
  char *apparmor_profile;
  char *selinux_label;
  bool has_io_priority;
  struct ar_io_priority io_priority;
};

struct ar_mount {
  char *destination;
  char *type;
  char *source;
  char **options;
  size_t n_options;
};

struct ar_hook {
  char *path;
  char **args;
  size_t n_args;
  char **env;
  size_t n_env;
  bool has_timeout;
  int timeout; /* seconds, > 0 */
};

enum ar_hook_phase {
  AR_HOOK_PRESTART,
  AR_HOOK_CREATE_RUNTIME,
  AR_HOOK_CREATE_CONTAINER,
  AR_HOOK_START_CONTAINER,
  AR_HOOK_POSTSTART,
  AR_HOOK_POSTSTOP,
  AR_HOOK_NPHASES
};

struct ar_hook_list {
  struct ar_hook *hooks;
  size_t n_hooks;
};

enum ar_ns_type {
  AR_NS_PID,
  AR_NS_NETWORK,
  AR_NS_MOUNT,
  AR_NS_IPC,
  AR_NS_UTS,
  AR_NS_USER,
  AR_NS_CGROUP,
  AR_NS_TIME,
  AR_NS_COUNT
};

struct ar_namespace {
  enum ar_ns_type type;
  char *path; /* NULL: create a new one */
};

struct ar_device {
  char *path;
  char type; /* 'c', 'b', 'u', 'p' */
  int64_t major;
  int64_t minor;
  bool has_file_mode;
  uint32_t file_mode;
  bool has_uid;
  uint32_t uid;
  bool has_gid;
  uint32_t gid;
};

struct ar_device_rule {
  bool allow;
  char type; /* 'a', 'c', 'b'; 'a' when absent */
  bool has_major;
  int64_t major;
  bool has_minor;
  int64_t minor;
  char *access; /* "rwm" subset; NULL means all */
};

struct ar_memory {
  bool has_limit;
  int64_t limit;
  bool has_reservation;
  int64_t reservation;
  bool has_swap;
  int64_t swap;
  bool has_kernel;
  int64_t kernel;
  bool has_kernel_tcp;
  int64_t kernel_tcp;
  bool has_swappiness;
  uint64_t swappiness;
  bool has_disable_oom_killer;
  bool disable_oom_killer;
  bool has_use_hierarchy;
  bool use_hierarchy;
  bool has_check_before_update;
  bool check_before_update;
};

struct ar_cpu {
  bool has_shares;
  uint64_t shares;
  bool has_quota;
  int64_t quota;
  bool has_burst;
  uint64_t burst;
  bool has_period;
  uint64_t period;
  bool has_realtime_runtime;
  int64_t realtime_runtime;
  bool has_realtime_period;
  uint64_t realtime_period;
  char *cpus;
  char *mems;
  bool has_idle;
  int64_t idle;
};

struct ar_weight_device {
  int64_t major;
  int64_t minor;
  bool has_weight;
  uint16_t weight;
  bool has_leaf_weight;
  uint16_t leaf_weight;
};

struct ar_throttle_device {
  int64_t major;
  int64_t minor;
  uint64_t rate;
};

enum ar_throttle_kind {
  AR_THROTTLE_READ_BPS,
  AR_THROTTLE_WRITE_BPS,
  AR_THROTTLE_READ_IOPS,
  AR_THROTTLE_WRITE_IOPS,
  AR_THROTTLE_NKINDS
};

struct ar_blkio {
  bool has_weight;
  uint16_t weight;
  bool has_leaf_weight;
  uint16_t leaf_weight;
  struct ar_weight_device *weight_devices;
  size_t n_weight_devices;
  struct ar_throttle_device *throttle[AR_THROTTLE_NKINDS];
  size_t n_throttle[AR_THROTTLE_NKINDS];
};

struct ar_hugepage_limit {
  char *page_size; /* "2MB" */
  uint64_t limit;
};

struct ar_resources {
  struct ar_device_rule *devices;
  size_t n_devices;
  bool has_memory;
  struct ar_memory memory;
  bool has_cpu;
  struct ar_cpu cpu;
  bool has_pids;
  int64_t pids_limit;
  bool has_blkio;
  struct ar_blkio blkio;
  struct ar_hugepage_limit *hugepage_limits;
  size_t n_hugepage_limits;
  struct ar_kv *unified;
  size_t n_unified;
};

enum ar_seccomp_action {
  AR_SECCOMP_KILL, /* SCMP_ACT_KILL == KILL_THREAD */
  AR_SECCOMP_KILL_PROCESS,
  AR_SECCOMP_KILL_THREAD,
  AR_SECCOMP_TRAP,
  AR_SECCOMP_ERRNO,
  AR_SECCOMP_TRACE,
  AR_SECCOMP_ALLOW,
  AR_SECCOMP_LOG,
  AR_SECCOMP_NOTIFY,
};

enum ar_seccomp_op {
  AR_OP_NE,
  AR_OP_LT,
  AR_OP_LE,
  AR_OP_EQ,
  AR_OP_GE,
  AR_OP_GT,
  AR_OP_MASKED_EQ,
};

struct ar_seccomp_arg {
  uint32_t index;
  uint64_t value;
  uint64_t value_two;
  enum ar_seccomp_op op;
};

struct ar_syscall_rule {
  char **names;
  size_t n_names;
  enum ar_seccomp_action action;
  bool has_errno_ret;
  uint32_t errno_ret;
  struct ar_seccomp_arg *args;
  size_t n_args;
};

struct ar_seccomp {
  enum ar_seccomp_action default_action;
  bool has_default_errno_ret;
  uint32_t default_errno_ret;
  char **architectures; /* "SCMP_ARCH_X86_64" */
  size_t n_architectures;
  char **flags; /* "SECCOMP_FILTER_FLAG_LOG" ... */
  size_t n_flags;
  char *listener_path;
  char *listener_metadata;
  struct ar_syscall_rule *syscalls;
  size_t n_syscalls;
};

struct ar_time_offset {
  bool present;
  int64_t secs;
  uint32_t nanosecs;
};

struct ar_personality {
  char *domain; /* "LINUX" | "LINUX32" */
  char **flags;
  size_t n_flags;
};

struct ar_linux {
  struct ar_namespace *namespaces;
  size_t n_namespaces;
  struct ar_id_mapping *uid_mappings;
  size_t n_uid_mappings;
  struct ar_id_mapping *gid_mappings;
  size_t n_gid_mappings;
  struct ar_device *devices;
  size_t n_devices;
  char *cgroups_path;
  bool has_resources;
  struct ar_resources resources;
  struct ar_kv *sysctl;
  size_t n_sysctl;
  struct ar_seccomp *seccomp; /* NULL: no filter */
  char *rootfs_propagation;
  char **masked_paths;
  size_t n_masked_paths;
  char **readonly_paths;
  size_t n_readonly_paths;
  char *mount_label;
  struct ar_personality *personality; /* NULL: leave as is */
  struct ar_time_offset time_monotonic;
  struct ar_time_offset time_boottime;
};

struct ar_spec {
  char *oci_version;
  char *root_path;
  bool root_readonly;
  struct ar_mount *mounts;
  size_t n_mounts;
  struct ar_process *process; /* NULL when absent */
  char *hostname;
  char *domainname;
  struct ar_kv *annotations;
  size_t n_annotations;
  struct ar_hook_list hooks[AR_HOOK_NPHASES];
  bool has_linux;
  struct ar_linux linux_;
};

/* ---- parsing (spec/config.c and friends) ----
 * `what` names the document in errors: "config.json: process.args: expected array of strings". */
int ar_spec_parse(const char *json, size_t len, const char *what, struct ar_spec **ret, ar_err *err);
int ar_spec_load(const char *path, const char *what, struct ar_spec **ret, ar_err *err);
int ar_process_parse(const char *json, size_t len, const char *what, struct ar_process **ret,
                     ar_err *err);
int ar_resources_parse(const char *json, size_t len, const char *what, struct ar_resources **ret,
                       ar_err *err);

void ar_spec_free(struct ar_spec *s);
void ar_process_free(struct ar_process *p);
void ar_resources_free(struct ar_resources *r);
void ar_resources_clear(struct ar_resources *r);
void ar_seccomp_free(struct ar_seccomp *s);

/* ---- emitting (spec/emit.c) ---- the full spec back to JSON: `spec`, sandbox bundles, inspect. */
int ar_spec_to_json(const struct ar_spec *s, bool pretty, char **ret, ar_err *err);
/* A bare process object (as process.json) and a bare resources object (as `update --resources`). */
int ar_process_to_json(const struct ar_process *p, bool pretty, char **ret, ar_err *err);
int ar_resources_to_json(const struct ar_resources *r, bool pretty, char **ret, ar_err *err);

/* ---- the default config of `agentrun spec` (spec/default.c) ---- */
struct ar_spec *ar_spec_default(bool rootless);

/* ---- name tables shared with runtime/ ---- */
const char *ar_ns_name(enum ar_ns_type t);       /* "pid", "network", ... */
int ar_ns_from_name(const char *name);           /* -1 if unknown */
int ar_ns_clone_flag(enum ar_ns_type t);         /* CLONE_NEWPID ... */
const char *ar_ns_proc_name(enum ar_ns_type t);  /* "pid", "net", "mnt" ... as in /proc/PID/ns */
const char *ar_hook_phase_name(enum ar_hook_phase p); /* "prestart" ... */
const char *ar_seccomp_action_name(enum ar_seccomp_action a);
const char *ar_seccomp_op_name(enum ar_seccomp_op op);
int ar_cap_from_name(const char *name); /* "CAP_CHOWN" -> 0; -1 if unknown */
const char *ar_cap_name(int cap);       /* 0 -> "CAP_CHOWN"; NULL if unknown */
int ar_cap_last(void);                  /* highest capability number known */
int ar_rlimit_from_name(const char *name);
const char *ar_rlimit_name(int resource);

/* Small helpers the policy layer and the runtime use to edit specs. */
const char *ar_spec_annotation(const struct ar_spec *s, const char *key);
void ar_kv_set(struct ar_kv **kv, size_t *n, const char *key, const char *value);
const struct ar_namespace *ar_spec_namespace(const struct ar_spec *s, enum ar_ns_type t);
/* options: comma-separated ("rbind,ro,nosuid"). */
void ar_spec_add_mount(struct ar_spec *s, const char *dst, const char *type, const char *src,
                       const char *options);
/* major/minor -1: any. */
void ar_resources_add_device_rule(struct ar_resources *res, bool allow, char type, int64_t major,
                                  int64_t minor, const char *access);

#endif
