/* features: the runtime-spec's features document (features.md, features-linux.md) for runtime
 * callers such as containerd 2.x.  And checkpoint/restore, which agentrun does not do.
 *
 * Where a list has an authority elsewhere in the tree, the document is checked against it rather
 * than trusted: mount options must be known to mount-opts.c (not passed on as filesystem data),
 * annotations must be accepted by policy.c, archs known to libseccomp, and the supported seccomp
 * flags are probed in this kernel. */
#include <config.h>

#include <errno.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <linux/seccomp.h>

#include "cli.h"
#include "mount-opts.h"
#include "policy.h"
#include "spec/jsonw.h"
#include "utils.h"

#ifndef SECCOMP_FILTER_FLAG_NEW_LISTENER
#define SECCOMP_FILTER_FLAG_NEW_LISTENER (1UL << 3)
#endif
#ifndef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
#define SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (1UL << 5)
#endif

#define OCI_VERSION_MIN "1.0.0"

/* Candidates, in runc's order; mount_option_known() keeps those mount-opts.c knows. */
static const char mount_options[] =
    "async atime bind defaults dev diratime dirsync exec iversion lazytime loud mand noatime "
    "nodev nodiratime noexec noiversion nolazytime nomand norelatime nostrictatime nosuid "
    "nosymfollow private ratime rbind rdev rdiratime relatime remount rexec rnoatime rnodev "
    "rnodiratime rnoexec rnorelatime rnostrictatime rnosuid rnosymfollow ro rprivate rrelatime "
    "rro rrw rshared rslave rstrictatime rsuid rsymfollow runbindable rw shared silent slave "
    "strictatime suid symfollow sync tmpcopyup unbindable";

/* libseccomp's names; those this libseccomp resolves are listed as SCMP_ARCH_<NAME>. */
static const char seccomp_archs[] =
    "aarch64 arm loongarch64 m68k mips mips64 mips64n32 mipsel mipsel64 mipsel64n32 parisc "
    "parisc64 ppc ppc64 ppc64le riscv64 s390 s390x sh sheb x32 x86 x86_64";

/* The flags runtime/seccomp.c accepts in linux.seccomp.flags. */
static const struct {
  const char *name;
  unsigned long probe; /* what to ask the kernel: some flags are only valid with others */
} seccomp_flags[] = {
    {"SECCOMP_FILTER_FLAG_TSYNC", SECCOMP_FILTER_FLAG_TSYNC},
    {"SECCOMP_FILTER_FLAG_LOG", SECCOMP_FILTER_FLAG_LOG},
    {"SECCOMP_FILTER_FLAG_SPEC_ALLOW", SECCOMP_FILTER_FLAG_SPEC_ALLOW},
    {"SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV",
     SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV | SECCOMP_FILTER_FLAG_NEW_LISTENER},
};

/* run.agentrun.<key>: a value policy.c must accept, and what the key does. */
static const struct {
  const char *key, *sample, *description;
} annotations[] = {
    {"network", "none", "none|inherit: inherit keeps the config's network (if the host allows)"},
    {"rootfs", "readonly",
     "readonly|writable: writable keeps a writable rootfs (if the host "
     "allows)"},
    {"seccomp", "on", "on|off: off drops the agent seccomp filter (if the host allows)"},
    {"audit", "on", "on|off: off turns the audit log off (if the host allows)"},
    {"timeout", "30s", "wall-clock limit such as 30s, 2m or 1h, at most the host maximum"},
    {"memory", "512m", "memory limit such as 512m or 1g, at most the host maximum"},
    {"pids", "64", "process limit, at most the host maximum"},
    {"cpus", "0.5", "CPU limit in CPUs such as 0.5 or 2, at most the host maximum"},
    {"tmp-size", "64m", "size of the /tmp tmpfs of a read-only rootfs, such as 256m"},
};

static int cmp_str(const void *a, const void *b)
{
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Write a string list sorted, as runc does, and free it. */
static void sorted_array(struct ar_jw *w, const char *key, char **v, size_t n)
{
  if (n)
    qsort(v, n, sizeof(char *), cmp_str);
  ar_jw_key(w, key);
  ar_jw_array_open(w);
  for (size_t i = 0; i < n; i++)
    ar_jw_str(w, v[i]);
  ar_jw_array_close(w);
  ar_strv_free(v);
}

static char **strv_add(char **v, size_t *n, char *s)
{
  v = xrealloc(v, (*n + 2) * sizeof(char *));
  v[(*n)++] = s;
  v[*n] = NULL;
  return v;
}

static bool mount_option_known(const char *name)
{
  char *opt[] = {(char *)name};
  struct ar_mount_opts o;
  cleanup_err ar_err err = NULL;
  bool known;

  if (ar_mount_opts_parse(opt, 1, &o, &err) < 0)
    return false;
  known = o.data == NULL; /* unknown options go to the filesystem as data */
  ar_mount_opts_clear(&o);
  return known;
}

static void emit_common(struct ar_jw *w)
{
  char **v = NULL;
  size_t n = 0;

  ar_jw_kstr(w, "ociVersionMin", OCI_VERSION_MIN);
  ar_jw_kstr(w, "ociVersionMax", AR_OCI_VERSION);
  ar_jw_key(w, "hooks");
  ar_jw_array_open(w);
  for (int p = 0; p < AR_HOOK_NPHASES; p++)
    ar_jw_str(w, ar_hook_phase_name(p));
  ar_jw_array_close(w);
  for (const char *p = mount_options; *p; p += strspn(p, " ")) {
    char *name = xstrndup(p, strcspn(p, " "));
    p += strlen(name);
    if (mount_option_known(name))
      v = strv_add(v, &n, name);
    else
      free(name);
  }
  sorted_array(w, "mountOptions", v, n);
}

static void emit_namespaces_caps(struct ar_jw *w)
{
  char **v = NULL;
  size_t n = 0;

  for (int t = 0; t < AR_NS_COUNT; t++)
    v = strv_add(v, &n, xstrdup(ar_ns_name(t)));
  sorted_array(w, "namespaces", v, n);
  /* In the kernel's order, as the spec's example and runc list them. */
  ar_jw_key(w, "capabilities");
  ar_jw_array_open(w);
  for (int c = 0; c <= ar_cap_last(); c++)
    if (ar_cap_name(c))
      ar_jw_str(w, ar_cap_name(c));
  ar_jw_array_close(w);
}

static void emit_cgroup(struct ar_jw *w)
{
  ar_jw_key(w, "cgroup");
  ar_jw_map_open(w);
  ar_jw_kbool(w, "v1", true);
  ar_jw_kbool(w, "v2", true);
  ar_jw_kbool(w, "systemd", false);
  ar_jw_kbool(w, "systemdUser", false);
  ar_jw_kbool(w, "rdma", false);
  ar_jw_map_close(w);
}

static char *upper_arch(const char *name)
{
  char *s = xasprintf("SCMP_ARCH_%s", name);
  for (char *p = s; *p; p++)
    if (*p >= 'a' && *p <= 'z')
      *p = (char)(*p - 'a' + 'A');
  return s;
}

/* The kernel checks the flags before it reads the (NULL) program: EFAULT means they passed. */
static bool kernel_has_flag(unsigned long flags)
{
  return syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, NULL) < 0 && errno == EFAULT;
}

static void emit_seccomp(struct ar_jw *w)
{
  char **v = NULL;
  size_t n = 0;

  ar_jw_key(w, "seccomp");
  ar_jw_map_open(w);
  ar_jw_kbool(w, "enabled", true);
  for (int a = 0; a <= AR_SECCOMP_NOTIFY; a++)
    v = strv_add(v, &n, xstrdup(ar_seccomp_action_name(a)));
  sorted_array(w, "actions", v, n);
  v = NULL;
  n = 0;
  for (int op = 0; op <= AR_OP_MASKED_EQ; op++)
    v = strv_add(v, &n, xstrdup(ar_seccomp_op_name(op)));
  sorted_array(w, "operators", v, n);
  v = NULL;
  n = 0;
  for (const char *p = seccomp_archs; *p; p += strspn(p, " ")) {
    cleanup_free char *name = xstrndup(p, strcspn(p, " "));
    p += strlen(name);
    if (seccomp_arch_resolve_name(name) != 0)
      v = strv_add(v, &n, upper_arch(name));
  }
  sorted_array(w, "archs", v, n);
  ar_jw_key(w, "knownFlags");
  ar_jw_array_open(w);
  for (size_t i = 0; i < ARRAY_SIZE(seccomp_flags); i++)
    ar_jw_str(w, seccomp_flags[i].name);
  ar_jw_array_close(w);
  ar_jw_key(w, "supportedFlags");
  ar_jw_array_open(w);
  for (size_t i = 0; i < ARRAY_SIZE(seccomp_flags); i++)
    if (kernel_has_flag(seccomp_flags[i].probe))
      ar_jw_str(w, seccomp_flags[i].name);
  ar_jw_array_close(w);
  ar_jw_map_close(w);
}

static void enabled(struct ar_jw *w, const char *key, bool on)
{
  ar_jw_key(w, key);
  ar_jw_map_open(w);
  ar_jw_kbool(w, "enabled", on);
  ar_jw_map_close(w);
}

static void emit_linux(struct ar_jw *w)
{
  ar_jw_key(w, "linux");
  ar_jw_map_open(w);
  emit_namespaces_caps(w);
  emit_cgroup(w);
  emit_seccomp(w);
  enabled(w, "apparmor", false);
  enabled(w, "selinux", false);
  enabled(w, "intelRdt", false);
  ar_jw_key(w, "mountExtensions");
  ar_jw_map_open(w);
  enabled(w, "idmap", false);
  ar_jw_map_close(w);
  ar_jw_map_close(w);
}

/* True if policy.c takes run.agentrun.<key>=<sample>. */
static bool annotation_known(const char *key, const char *sample)
{
  cleanup_free char *full = xasprintf(AR_ANNOTATION_PREFIX "%s", key);
  struct ar_kv kv = {full, (char *)sample};
  struct ar_spec s = {.annotations = &kv, .n_annotations = 1};
  struct ar_agent_request req;
  cleanup_err ar_err err = NULL;
  return ar_agent_request_parse(&s, &req, &err) == 0;
}

static void emit_annotations(struct ar_jw *w)
{
  const struct scmp_version *v = seccomp_version();
  cleanup_free char *libseccomp = xasprintf("%u.%u.%u", v->major, v->minor, v->micro);

  ar_jw_key(w, "annotations");
  ar_jw_map_open(w);
  ar_jw_kstr(w, "io.github.seccomp.libseccomp.version", libseccomp);
  for (size_t i = 0; i < ARRAY_SIZE(annotations); i++)
    if (annotation_known(annotations[i].key, annotations[i].sample)) {
      cleanup_free char *key = xasprintf(AR_ANNOTATION_PREFIX "%s", annotations[i].key);
      ar_jw_kstr(w, key, annotations[i].description);
    }
  ar_jw_map_close(w);
  /* They relax the hardening where the host allows it: callers should not pass them through
   * from untrusted users (runtime-spec: a trailing "." is a prefix). */
  ar_jw_key(w, "potentiallyUnsafeConfigAnnotations");
  ar_jw_array_open(w);
  ar_jw_str(w, AR_ANNOTATION_PREFIX);
  ar_jw_array_close(w);
}

int ar_cmd_features(struct ar_ctx *ctx, int argc, char **argv)
{
  struct ar_jw *w;
  char *json;
  int first = ar_parse_opts("features", argc, argv, NULL, 0);

  if (first < 0)
    return 1;
  if (first != argc)
    return ar_usage_error("features", "features takes no arguments");
  w = ar_jw_new(true);
  ar_jw_map_open(w);
  emit_common(w);
  emit_linux(w);
  emit_annotations(w);
  ar_jw_map_close(w);
  json = ar_jw_finish(w, NULL);
  printf("%s\n", json);
  free(json);
  return 0;
}

/* CRIU is not wired in: say so plainly, whatever the flags (engines show this text). */
static int not_supported(const char *verb)
{
  ar_err err = NULL;
  ar_error(&err, 0, "%s is not supported", verb);
  return ar_fail(&err);
}

int ar_cmd_checkpoint(struct ar_ctx *ctx, int argc, char **argv)
{
  return not_supported("checkpoint");
}

int ar_cmd_restore(struct ar_ctx *ctx, int argc, char **argv)
{
  return not_supported("restore");
}
