/* Name tables shared by the parser, the emitter and the runtime, and small spec helpers. */
#include <config.h>
#include "spec/parse.h"

#include <sched.h>
#include <string.h>
#include <sys/resource.h>

#include "runtime/utils.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

static const struct {
  const char *name;
  const char *proc_name;
  int clone_flag;
} namespaces[AR_NS_COUNT] = {
    [AR_NS_PID] = {"pid", "pid", CLONE_NEWPID},
    [AR_NS_NETWORK] = {"network", "net", CLONE_NEWNET},
    [AR_NS_MOUNT] = {"mount", "mnt", CLONE_NEWNS},
    [AR_NS_IPC] = {"ipc", "ipc", CLONE_NEWIPC},
    [AR_NS_UTS] = {"uts", "uts", CLONE_NEWUTS},
    [AR_NS_USER] = {"user", "user", CLONE_NEWUSER},
    [AR_NS_CGROUP] = {"cgroup", "cgroup", CLONE_NEWCGROUP},
    [AR_NS_TIME] = {"time", "time", CLONE_NEWTIME},
};

const char *ar_ns_name(enum ar_ns_type t)
{
  return (unsigned)t < AR_NS_COUNT ? namespaces[t].name : NULL;
}

int ar_ns_from_name(const char *name)
{
  for (int i = 0; i < AR_NS_COUNT; i++)
    if (strcmp(namespaces[i].name, name) == 0)
      return i;
  return -1;
}

int ar_ns_clone_flag(enum ar_ns_type t)
{
  return (unsigned)t < AR_NS_COUNT ? namespaces[t].clone_flag : 0;
}

const char *ar_ns_proc_name(enum ar_ns_type t)
{
  return (unsigned)t < AR_NS_COUNT ? namespaces[t].proc_name : NULL;
}

static const char *const hook_phases[AR_HOOK_NPHASES] = {
    [AR_HOOK_PRESTART] = "prestart",
    [AR_HOOK_CREATE_RUNTIME] = "createRuntime",
    [AR_HOOK_CREATE_CONTAINER] = "createContainer",
    [AR_HOOK_START_CONTAINER] = "startContainer",
    [AR_HOOK_POSTSTART] = "poststart",
    [AR_HOOK_POSTSTOP] = "poststop",
};

const char *ar_hook_phase_name(enum ar_hook_phase p)
{
  return (unsigned)p < AR_HOOK_NPHASES ? hook_phases[p] : NULL;
}

static const char *const seccomp_actions[] = {
    [AR_SECCOMP_KILL] = "SCMP_ACT_KILL",
    [AR_SECCOMP_KILL_PROCESS] = "SCMP_ACT_KILL_PROCESS",
    [AR_SECCOMP_KILL_THREAD] = "SCMP_ACT_KILL_THREAD",
    [AR_SECCOMP_TRAP] = "SCMP_ACT_TRAP",
    [AR_SECCOMP_ERRNO] = "SCMP_ACT_ERRNO",
    [AR_SECCOMP_TRACE] = "SCMP_ACT_TRACE",
    [AR_SECCOMP_ALLOW] = "SCMP_ACT_ALLOW",
    [AR_SECCOMP_LOG] = "SCMP_ACT_LOG",
    [AR_SECCOMP_NOTIFY] = "SCMP_ACT_NOTIFY",
};

const char *ar_seccomp_action_name(enum ar_seccomp_action a)
{
  return (unsigned)a < ARRAY_SIZE(seccomp_actions) ? seccomp_actions[a] : NULL;
}

int ar_seccomp_action_from_name(const char *name)
{
  for (size_t i = 0; i < ARRAY_SIZE(seccomp_actions); i++)
    if (strcmp(seccomp_actions[i], name) == 0)
      return i;
  return -1;
}

static const char *const seccomp_ops[] = {
    [AR_OP_NE] = "SCMP_CMP_NE",
    [AR_OP_LT] = "SCMP_CMP_LT",
    [AR_OP_LE] = "SCMP_CMP_LE",
    [AR_OP_EQ] = "SCMP_CMP_EQ",
    [AR_OP_GE] = "SCMP_CMP_GE",
    [AR_OP_GT] = "SCMP_CMP_GT",
    [AR_OP_MASKED_EQ] = "SCMP_CMP_MASKED_EQ",
};

const char *ar_seccomp_op_name(enum ar_seccomp_op op)
{
  return (unsigned)op < ARRAY_SIZE(seccomp_ops) ? seccomp_ops[op] : NULL;
}

int ar_seccomp_op_from_name(const char *name)
{
  for (size_t i = 0; i < ARRAY_SIZE(seccomp_ops); i++)
    if (strcmp(seccomp_ops[i], name) == 0)
      return i;
  return -1;
}

/* The runtime-spec's list, plus the architectures libseccomp 2.5/2.6 added since. */
static const char *const seccomp_arches[] = {
    "SCMP_ARCH_X86",     "SCMP_ARCH_X86_64",   "SCMP_ARCH_X32",         "SCMP_ARCH_ARM",
    "SCMP_ARCH_AARCH64", "SCMP_ARCH_MIPS",     "SCMP_ARCH_MIPS64",      "SCMP_ARCH_MIPS64N32",
    "SCMP_ARCH_MIPSEL",  "SCMP_ARCH_MIPSEL64", "SCMP_ARCH_MIPSEL64N32", "SCMP_ARCH_PPC",
    "SCMP_ARCH_PPC64",   "SCMP_ARCH_PPC64LE",  "SCMP_ARCH_S390",        "SCMP_ARCH_S390X",
    "SCMP_ARCH_PARISC",  "SCMP_ARCH_PARISC64", "SCMP_ARCH_RISCV64",     "SCMP_ARCH_LOONGARCH64",
    "SCMP_ARCH_M68K",    "SCMP_ARCH_SH",       "SCMP_ARCH_SHEB",
};

bool ar_seccomp_arch_known(const char *name)
{
  for (size_t i = 0; i < ARRAY_SIZE(seccomp_arches); i++)
    if (strcmp(seccomp_arches[i], name) == 0)
      return true;
  return false;
}

static const char *const seccomp_flags[] = {
    "SECCOMP_FILTER_FLAG_TSYNC",
    "SECCOMP_FILTER_FLAG_LOG",
    "SECCOMP_FILTER_FLAG_SPEC_ALLOW",
    "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV",
};

bool ar_seccomp_flag_known(const char *name)
{
  for (size_t i = 0; i < ARRAY_SIZE(seccomp_flags); i++)
    if (strcmp(seccomp_flags[i], name) == 0)
      return true;
  return false;
}

/* Indexed by capability number, as in linux/capability.h. */
static const char *const caps[] = {
    "CAP_CHOWN",
    "CAP_DAC_OVERRIDE",
    "CAP_DAC_READ_SEARCH",
    "CAP_FOWNER",
    "CAP_FSETID",
    "CAP_KILL",
    "CAP_SETGID",
    "CAP_SETUID",
    "CAP_SETPCAP",
    "CAP_LINUX_IMMUTABLE",
    "CAP_NET_BIND_SERVICE",
    "CAP_NET_BROADCAST",
    "CAP_NET_ADMIN",
    "CAP_NET_RAW",
    "CAP_IPC_LOCK",
    "CAP_IPC_OWNER",
    "CAP_SYS_MODULE",
    "CAP_SYS_RAWIO",
    "CAP_SYS_CHROOT",
    "CAP_SYS_PTRACE",
    "CAP_SYS_PACCT",
    "CAP_SYS_ADMIN",
    "CAP_SYS_BOOT",
    "CAP_SYS_NICE",
    "CAP_SYS_RESOURCE",
    "CAP_SYS_TIME",
    "CAP_SYS_TTY_CONFIG",
    "CAP_MKNOD",
    "CAP_LEASE",
    "CAP_AUDIT_WRITE",
    "CAP_AUDIT_CONTROL",
    "CAP_SETFCAP",
    "CAP_MAC_OVERRIDE",
    "CAP_MAC_ADMIN",
    "CAP_SYSLOG",
    "CAP_WAKE_ALARM",
    "CAP_BLOCK_SUSPEND",
    "CAP_AUDIT_READ",
    "CAP_PERFMON",
    "CAP_BPF",
    "CAP_CHECKPOINT_RESTORE",
};

int ar_cap_from_name(const char *name)
{
  for (size_t i = 0; i < ARRAY_SIZE(caps); i++)
    if (strcmp(caps[i], name) == 0)
      return i;
  return -1;
}

const char *ar_cap_name(int cap)
{
  return cap >= 0 && (size_t)cap < ARRAY_SIZE(caps) ? caps[cap] : NULL;
}

int ar_cap_last(void)
{
  return ARRAY_SIZE(caps) - 1;
}

static const struct {
  const char *name;
  int resource;
} rlimits[] = {
    {"RLIMIT_CPU", RLIMIT_CPU},           {"RLIMIT_FSIZE", RLIMIT_FSIZE},
    {"RLIMIT_DATA", RLIMIT_DATA},         {"RLIMIT_STACK", RLIMIT_STACK},
    {"RLIMIT_CORE", RLIMIT_CORE},         {"RLIMIT_RSS", RLIMIT_RSS},
    {"RLIMIT_NPROC", RLIMIT_NPROC},       {"RLIMIT_NOFILE", RLIMIT_NOFILE},
    {"RLIMIT_MEMLOCK", RLIMIT_MEMLOCK},   {"RLIMIT_AS", RLIMIT_AS},
    {"RLIMIT_LOCKS", RLIMIT_LOCKS},       {"RLIMIT_SIGPENDING", RLIMIT_SIGPENDING},
    {"RLIMIT_MSGQUEUE", RLIMIT_MSGQUEUE}, {"RLIMIT_NICE", RLIMIT_NICE},
    {"RLIMIT_RTPRIO", RLIMIT_RTPRIO},     {"RLIMIT_RTTIME", RLIMIT_RTTIME},
};

int ar_rlimit_from_name(const char *name)
{
  for (size_t i = 0; i < ARRAY_SIZE(rlimits); i++)
    if (strcmp(rlimits[i].name, name) == 0)
      return rlimits[i].resource;
  return -1;
}

const char *ar_rlimit_name(int resource)
{
  for (size_t i = 0; i < ARRAY_SIZE(rlimits); i++)
    if (rlimits[i].resource == resource)
      return rlimits[i].name;
  return NULL;
}

const char *ar_spec_annotation(const struct ar_spec *s, const char *key)
{
  if (s == NULL)
    return NULL;
  for (size_t i = 0; i < s->n_annotations; i++)
    if (strcmp(s->annotations[i].key, key) == 0)
      return s->annotations[i].value;
  return NULL;
}

/* Replace the value of key, or append it; a NULL value removes the key. */
void ar_kv_set(struct ar_kv **kv, size_t *n, const char *key, const char *value)
{
  for (size_t i = 0; i < *n; i++) {
    if (strcmp((*kv)[i].key, key) != 0)
      continue;
    if (value == NULL) {
      free((*kv)[i].key);
      free((*kv)[i].value);
      memmove(&(*kv)[i], &(*kv)[i + 1], (*n - i - 1) * sizeof(**kv));
      (*n)--;
      return;
    }
    free((*kv)[i].value);
    (*kv)[i].value = xstrdup(value);
    return;
  }
  if (value == NULL)
    return;
  *kv = xrealloc(*kv, (*n + 1) * sizeof(**kv));
  (*kv)[*n].key = xstrdup(key);
  (*kv)[*n].value = xstrdup(value);
  (*n)++;
}

const struct ar_namespace *ar_spec_namespace(const struct ar_spec *s, enum ar_ns_type t)
{
  if (s == NULL || !s->has_linux)
    return NULL;
  for (size_t i = 0; i < s->linux_.n_namespaces; i++)
    if (s->linux_.namespaces[i].type == t)
      return &s->linux_.namespaces[i];
  return NULL;
}

void ar_kv_free(struct ar_kv *kv, size_t n)
{
  for (size_t i = 0; i < n; i++) {
    free(kv[i].key);
    free(kv[i].value);
  }
  free(kv);
}

void ar_strv_free_n(char **v, size_t n)
{
  if (v == NULL)
    return;
  for (size_t i = 0; i < n; i++)
    free(v[i]);
  free(v);
}
