/* The host policy: the ceiling every container lives under (/etc/agentrun/policy.json). */
#ifndef AR_SPEC_POLICY_H
#define AR_SPEC_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime/error.h"

/* The switches a host can turn off; passthrough.json turns them all off. */
enum ar_control {
  AR_CTL_NETWORK,      /* a fresh netns with only lo */
  AR_CTL_ROOTFS,       /* read-only rootfs, tmpfs /tmp, capped /dev/shm */
  AR_CTL_SECCOMP,      /* the agent filter stacked on the caller's */
  AR_CTL_CAPABILITIES, /* intersect with the allowed set */
  AR_CTL_NO_NEW_PRIVS, /* forced on */
  AR_CTL_LIMITS,       /* default and maximum pids, memory, cpu */
  AR_CTL_RLIMITS,      /* core 0, nofile within the hard limit */
  AR_CTL_DEVICES,      /* only the default device set */
  AR_CTL_MASKED_PATHS, /* the OCI default masked and readonly paths */
  AR_CTL_SYSCTL,       /* only namespaced sysctls */
  AR_CTL_TIMEOUT,      /* wall-clock deadline */
  AR_CTL_NAMESPACES,   /* private pid, ipc, uts and mount namespaces */
  AR_CTL_COUNT
};

/* What an annotation may relax, and only if the host says so. */
enum ar_relax {
  AR_RELAX_NETWORK, /* run.agentrun.network=inherit */
  AR_RELAX_ROOTFS,  /* run.agentrun.rootfs=writable */
  AR_RELAX_SECCOMP, /* run.agentrun.seccomp=off */
  AR_RELAX_AUDIT,   /* run.agentrun.audit=off */
  AR_RELAX_COUNT
};

/* A limit: the default applied when nothing sets one, and the host's maximum. 0 = none. */
struct ar_limit {
  uint64_t def;
  uint64_t max;
};

struct ar_host_policy {
  bool control[AR_CTL_COUNT];
  bool allow[AR_RELAX_COUNT];
  struct ar_limit timeout_ms;
  struct ar_limit memory; /* bytes */
  struct ar_limit pids;
  struct ar_limit cpus_milli; /* 2000 = 2 CPUs */
  struct ar_limit tmp_size;   /* bytes */
  uint64_t shm_size;          /* bytes */
  char **devices;             /* extra device paths allowed (GPUs) */
  size_t n_devices;
  bool audit;
  char *audit_dir;
  uint64_t audit_max_bytes;
  bool audit_syslog;
  char *source; /* the file it came from, or "compiled-in defaults" */
};

const char *ar_control_key(enum ar_control c); /* "network" ... as in the file */
const char *ar_relax_key(enum ar_relax r);     /* "network_inherit" ... */

/* The compiled-in defaults. */
struct ar_host_policy *ar_host_policy_default(void);
/* Parse a policy file over the defaults: unknown keys and bad values are errors naming them. */
int ar_host_policy_parse(const char *json, size_t len, const char *what,
                         struct ar_host_policy **ret, ar_err *err);
int ar_host_policy_to_json(const struct ar_host_policy *p, char **ret, ar_err *err);
void ar_host_policy_free(struct ar_host_policy *p);

#endif
