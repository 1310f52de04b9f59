/* Seccomp.  The parent turns linux.seccomp into classic BPF with libseccomp (ar_seccomp_compile);
 * the child only hands the instructions to the kernel (ar_seccomp_load), so the child needs no
 * libseccomp state, no allocation and no /proc access at the moment it loads the filter.
 *
 * Semantics follow runc where the runtime-spec leaves room:
 * - a syscall name libseccomp does not know is skipped (profiles list syscalls of newer kernels);
 * - a rule whose action equals the default action is skipped (libseccomp refuses it);
 * - when a rule compares the same argument twice, each comparison becomes its own rule (so they
 *   are ORed): one libseccomp rule cannot AND two comparisons of one argument;
 * - errnoRet is only valid with SCMP_ACT_ERRNO and SCMP_ACT_TRACE, and defaults to EPERM.
 * The filter is compiled as a binary tree: the per-syscall cost grows with log(rules). */
#include <config.h>
#include "seccomp.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <linux/seccomp.h>
#include <seccomp.h>

#include "log.h"
#include "utils.h"

#ifndef SECCOMP_FILTER_FLAG_TSYNC_ESRCH
#define SECCOMP_FILTER_FLAG_TSYNC_ESRCH (1UL << 4)
#endif
#ifndef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
#define SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (1UL << 5)
#endif

#define MAX_SYSCALL_ARGS 6

static void cleanup_scmpp(scmp_filter_ctx *ctx)
{
  if (*ctx)
    seccomp_release(*ctx);
}
#define cleanup_scmp __attribute__((cleanup(cleanup_scmpp)))

static const struct {
  const char *name;
  uint32_t token;
} arches[] = {
    {"SCMP_ARCH_X86", SCMP_ARCH_X86},
    {"SCMP_ARCH_X86_64", SCMP_ARCH_X86_64},
    {"SCMP_ARCH_X32", SCMP_ARCH_X32},
    {"SCMP_ARCH_ARM", SCMP_ARCH_ARM},
    {"SCMP_ARCH_AARCH64", SCMP_ARCH_AARCH64},
    {"SCMP_ARCH_MIPS", SCMP_ARCH_MIPS},
    {"SCMP_ARCH_MIPS64", SCMP_ARCH_MIPS64},
    {"SCMP_ARCH_MIPS64N32", SCMP_ARCH_MIPS64N32},
    {"SCMP_ARCH_MIPSEL", SCMP_ARCH_MIPSEL},
    {"SCMP_ARCH_MIPSEL64", SCMP_ARCH_MIPSEL64},
    {"SCMP_ARCH_MIPSEL64N32", SCMP_ARCH_MIPSEL64N32},
    {"SCMP_ARCH_PPC", SCMP_ARCH_PPC},
    {"SCMP_ARCH_PPC64", SCMP_ARCH_PPC64},
    {"SCMP_ARCH_PPC64LE", SCMP_ARCH_PPC64LE},
    {"SCMP_ARCH_S390", SCMP_ARCH_S390},
    {"SCMP_ARCH_S390X", SCMP_ARCH_S390X},
    {"SCMP_ARCH_PARISC", SCMP_ARCH_PARISC},
    {"SCMP_ARCH_PARISC64", SCMP_ARCH_PARISC64},
    {"SCMP_ARCH_RISCV64", SCMP_ARCH_RISCV64},
#ifdef SCMP_ARCH_LOONGARCH64
    {"SCMP_ARCH_LOONGARCH64", SCMP_ARCH_LOONGARCH64},
#endif
#ifdef SCMP_ARCH_M68K
    {"SCMP_ARCH_M68K", SCMP_ARCH_M68K},
#endif
#ifdef SCMP_ARCH_SH
    {"SCMP_ARCH_SH", SCMP_ARCH_SH},
    {"SCMP_ARCH_SHEB", SCMP_ARCH_SHEB},
#endif
};

static const struct {
  const char *name;
  unsigned int flag;
} filter_flags[] = {
    {"SECCOMP_FILTER_FLAG_TSYNC", SECCOMP_FILTER_FLAG_TSYNC},
    {"SECCOMP_FILTER_FLAG_LOG", SECCOMP_FILTER_FLAG_LOG},
    {"SECCOMP_FILTER_FLAG_SPEC_ALLOW", SECCOMP_FILTER_FLAG_SPEC_ALLOW},
    {"SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV", SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV},
};

static const enum scmp_compare ops[] = {
    [AR_OP_NE] = SCMP_CMP_NE,
    [AR_OP_LT] = SCMP_CMP_LT,
    [AR_OP_LE] = SCMP_CMP_LE,
    [AR_OP_EQ] = SCMP_CMP_EQ,
    [AR_OP_GE] = SCMP_CMP_GE,
    [AR_OP_GT] = SCMP_CMP_GT,
    [AR_OP_MASKED_EQ] = SCMP_CMP_MASKED_EQ,
};

static const char *action_name(enum ar_seccomp_action a)
{
  const char *name = ar_seccomp_action_name(a);
  return name ? name : "an unknown action";
}

/* what: `syscall "getcwd"` or `defaultAction`, for the error message. */
static int to_scmp_action(enum ar_seccomp_action a, bool has_errno, uint32_t errno_ret,
                          const char *what, uint32_t *ret, ar_err *err)
{
  uint32_t e = has_errno ? errno_ret : EPERM;

  if (has_errno && a != AR_SECCOMP_ERRNO && a != AR_SECCOMP_TRACE)
    return ar_error(err, 0,
                    "seccomp: %s: errnoRet is only valid with SCMP_ACT_ERRNO and "
                    "SCMP_ACT_TRACE, not %s",
                    what, action_name(a));
  if (e > SECCOMP_RET_DATA)
    return ar_error(err, 0, "seccomp: %s: errnoRet %u is out of range (0-65535)", what, e);
  switch (a) {
  case AR_SECCOMP_KILL:
  case AR_SECCOMP_KILL_THREAD:
    *ret = SCMP_ACT_KILL_THREAD;
    return 0;
  case AR_SECCOMP_KILL_PROCESS:
    *ret = SCMP_ACT_KILL_PROCESS;
    return 0;
  case AR_SECCOMP_TRAP:
    *ret = SCMP_ACT_TRAP;
    return 0;
  case AR_SECCOMP_ERRNO:
    *ret = SCMP_ACT_ERRNO(e);
    return 0;
  case AR_SECCOMP_TRACE:
    *ret = SCMP_ACT_TRACE(e);
    return 0;
  case AR_SECCOMP_ALLOW:
    *ret = SCMP_ACT_ALLOW;
    return 0;
  case AR_SECCOMP_LOG:
    *ret = SCMP_ACT_LOG;
    return 0;
  case AR_SECCOMP_NOTIFY:
    *ret = SCMP_ACT_NOTIFY;
    return 0;
  }
  return ar_error(err, 0, "seccomp: %s: unknown action %d", what, (int)a);
}

static int add_arches(scmp_filter_ctx ctx, const struct ar_seccomp *sc, ar_err *err)
{
  for (size_t i = 0; i < sc->n_architectures; i++) {
    const char *name = sc->architectures[i];
    size_t j;
    int rc;

    for (j = 0; j < ARRAY_SIZE(arches); j++)
      if (strcmp(arches[j].name, name) == 0)
        break;
    if (j == ARRAY_SIZE(arches))
      return ar_error(err, 0, "seccomp: unknown architecture \"%s\"", name);
    rc = seccomp_arch_add(ctx, arches[j].token);
    if (rc < 0 && rc != -EEXIST) /* the native one is already there */
      return ar_error(err, -rc, "seccomp: add architecture \"%s\"", name);
  }
  return 0;
}

static int parse_flags(const struct ar_seccomp *sc, unsigned int *ret, ar_err *err)
{
  *ret = 0;
  for (size_t i = 0; i < sc->n_flags; i++) {
    size_t j;

    for (j = 0; j < ARRAY_SIZE(filter_flags); j++)
      if (strcmp(filter_flags[j].name, sc->flags[i]) == 0)
        break;
    if (j == ARRAY_SIZE(filter_flags))
      return ar_error(err, 0, "seccomp: unknown flag \"%s\"", sc->flags[i]);
    *ret |= filter_flags[j].flag;
  }
  return 0;
}

static int add_one(scmp_filter_ctx ctx, uint32_t action, int nr, const char *name,
                   const struct scmp_arg_cmp *cmps, unsigned int n_cmps, ar_err *err)
{
  int rc = seccomp_rule_add_array(ctx, action, nr, n_cmps, cmps);

  if (rc < 0)
    return ar_error(err, -rc, "seccomp: syscall \"%s\": add rule", name);
  return 0;
}

static int add_rule_for(scmp_filter_ctx ctx, const struct ar_syscall_rule *r, uint32_t action,
                        int nr, const char *name, ar_err *err)
{
  struct scmp_arg_cmp cmps[MAX_SYSCALL_ARGS];
  unsigned int seen = 0;
  bool repeated = false;

  for (size_t i = 0; i < r->n_args; i++) {
    const struct ar_seccomp_arg *a = &r->args[i];

    if (a->index >= MAX_SYSCALL_ARGS)
      return ar_error(err, 0, "seccomp: syscall \"%s\": argument index %u is out of range (0-5)",
                      name, a->index);
    if ((size_t)a->op >= ARRAY_SIZE(ops))
      return ar_error(err, 0, "seccomp: syscall \"%s\": unknown operator %d", name, (int)a->op);
    repeated |= (seen & (1u << a->index)) != 0;
    seen |= 1u << a->index;
  }

  if (r->n_args == 0)
    return add_one(ctx, action, nr, name, NULL, 0, err);
  if (repeated) { /* as runc: one rule per comparison */
    for (size_t i = 0; i < r->n_args; i++) {
      const struct ar_seccomp_arg *a = &r->args[i];
      struct scmp_arg_cmp c = {a->index, ops[a->op], a->value, a->value_two};

      if (add_one(ctx, action, nr, name, &c, 1, err) < 0)
        return -1;
    }
    return 0;
  }
  for (size_t i = 0; i < r->n_args; i++) {
    const struct ar_seccomp_arg *a = &r->args[i];

    cmps[i] = (struct scmp_arg_cmp){a->index, ops[a->op], a->value, a->value_two};
  }
  return add_one(ctx, action, nr, name, cmps, r->n_args, err);
}

static int add_rules(scmp_filter_ctx ctx, const struct ar_seccomp *sc, uint32_t default_action,
                     bool *ret_notify, ar_err *err)
{
  for (size_t i = 0; i < sc->n_syscalls; i++) {
    const struct ar_syscall_rule *r = &sc->syscalls[i];
    const char *first = r->n_names ? r->names[0] : "(none)";
    cleanup_free char *what = xasprintf("syscall \"%s\"", first);
    uint32_t action;

    if (to_scmp_action(r->action, r->has_errno_ret, r->errno_ret, what, &action, err) < 0)
      return -1;
    if (action == default_action) {
      ar_debug("seccomp: syscall \"%s\": the rule's action is the default action: skipped", first);
      continue;
    }
    for (size_t j = 0; j < r->n_names; j++) {
      const char *name = r->names[j];
      int nr = seccomp_syscall_resolve_name(name);

      if (nr == __NR_SCMP_ERROR) {
        ar_debug("seccomp: syscall \"%s\" is unknown to libseccomp: skipped", name);
        continue;
      }
      if (add_rule_for(ctx, r, action, nr, name, err) < 0)
        return -1;
      if (r->action == AR_SECCOMP_NOTIFY)
        *ret_notify = true;
    }
  }
  return 0;
}

/* No seccomp_export_bpf_mem in libseccomp 2.5: export to a memfd and read it back. */
static int export_bpf(scmp_filter_ctx ctx, struct ar_bpf *ret, ar_err *err)
{
  cleanup_close int fd = memfd_create("agentrun-seccomp", MFD_CLOEXEC);
  cleanup_free struct sock_filter *insns = NULL;
  struct stat st;
  ssize_t n;
  int rc;

  if (fd < 0)
    return ar_error(err, errno, "seccomp: memfd_create");
  rc = seccomp_export_bpf(ctx, fd);
  if (rc < 0)
    return ar_error(err, -rc, "seccomp: export the filter");
  if (fstat(fd, &st) < 0)
    return ar_error(err, errno, "seccomp: fstat the exported filter");
  if (st.st_size <= 0 || st.st_size % sizeof(struct sock_filter) != 0)
    return ar_error(err, 0, "seccomp: the exported filter has a bad size (%lld bytes)",
                    (long long)st.st_size);
  if ((size_t)st.st_size / sizeof(struct sock_filter) > BPF_MAXINSNS)
    return ar_error(err, 0,
                    "seccomp: the filter has %lld instructions, more than the kernel's "
                    "limit of %d",
                    (long long)(st.st_size / sizeof(struct sock_filter)), BPF_MAXINSNS);
  insns = xmalloc(st.st_size);
  for (off_t off = 0; off < st.st_size; off += n) {
    n = pread(fd, (char *)insns + off, st.st_size - off, off);
    if (n < 0 && errno == EINTR) {
      n = 0;
      continue;
    }
    if (n <= 0)
      return ar_error(err, n < 0 ? errno : EIO, "seccomp: read the exported filter");
  }
  ret->n_insns = st.st_size / sizeof(struct sock_filter);
  ret->insns = steal_pointer(&insns);
  return 0;
}

static int set_attrs(scmp_filter_ctx ctx, ar_err *err)
{
  int rc;

  /* no_new_privs is the caller's decision, made explicitly before the load */
  rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0);
  if (rc < 0)
    return ar_error(err, -rc, "seccomp: clear the no_new_privs attribute");
  /* a binary tree of syscall numbers instead of a linear list: O(log n) per syscall */
  rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
  if (rc < 0)
    ar_debug("seccomp: binary tree optimisation unavailable: %s", strerror(-rc));
  return 0;
}

int ar_seccomp_compile(const struct ar_seccomp *sc, struct ar_bpf *ret, ar_err *err)
{
  cleanup_scmp scmp_filter_ctx ctx = NULL;
  struct ar_bpf bpf = {0};
  uint32_t def;

  if (sc->default_action == AR_SECCOMP_NOTIFY)
    return ar_error(err, 0, "seccomp: SCMP_ACT_NOTIFY cannot be the default action");
  if (to_scmp_action(sc->default_action, sc->has_default_errno_ret, sc->default_errno_ret,
                     "defaultAction", &def, err) < 0)
    return -1;
  if (parse_flags(sc, &bpf.flags, err) < 0)
    return -1;
  ctx = seccomp_init(def);
  if (ctx == NULL)
    return ar_error(err, EINVAL, "seccomp: init with default action %s",
                    action_name(sc->default_action));
  if (set_attrs(ctx, err) < 0 || add_arches(ctx, sc, err) < 0 ||
      add_rules(ctx, sc, def, &bpf.wants_listener, err) < 0)
    return -1;
  if ((bpf.flags & SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV) && !bpf.wants_listener) {
    /* the kernel refuses this flag without a listener; it has no meaning then */
    ar_debug("seccomp: SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV without SCMP_ACT_NOTIFY: ignored");
    bpf.flags &= ~SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV;
  }
  if (export_bpf(ctx, &bpf, err) < 0)
    return -1;
  *ret = bpf;
  return 0;
}

int ar_seccomp_load(const struct ar_bpf *bpf, int *ret_listener, ar_err *err)
{
  struct sock_fprog prog = {.len = (unsigned short)bpf->n_insns, .filter = bpf->insns};
  unsigned int flags = bpf->flags;
  long rc;

  if (ret_listener)
    *ret_listener = -1;
  if (bpf->insns == NULL || bpf->n_insns == 0)
    return 0;
  if (bpf->n_insns > BPF_MAXINSNS)
    return ar_error(err, 0, "seccomp: the filter has %zu instructions, more than %d", bpf->n_insns,
                    BPF_MAXINSNS);
  if (bpf->wants_listener) {
    flags |= SECCOMP_FILTER_FLAG_NEW_LISTENER;
    /* with TSYNC the return value would be ambiguous (tid or fd) without TSYNC_ESRCH */
    if (flags & SECCOMP_FILTER_FLAG_TSYNC)
      flags |= SECCOMP_FILTER_FLAG_TSYNC_ESRCH;
  }
  rc = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &prog);
  if (rc < 0 && errno == ENOSYS) {
    if (flags != 0)
      return ar_error(err, ENOSYS, "seccomp: flags %#x need the seccomp(2) system call", flags);
    rc = prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0);
  }
  if (rc < 0) {
    if (errno == EACCES)
      return ar_error(err, errno,
                      "seccomp: load the filter (no_new_privs is off and "
                      "CAP_SYS_ADMIN is missing)");
    return ar_error(err, errno, "seccomp: load the filter (%zu instructions, flags %#x)",
                    bpf->n_insns, flags);
  }
  if (flags & SECCOMP_FILTER_FLAG_TSYNC && !bpf->wants_listener && rc > 0)
    return ar_error(err, 0, "seccomp: thread %ld could not be synchronised", rc);
  if (bpf->wants_listener) {
    if (ret_listener)
      *ret_listener = (int)rc;
    else
      close((int)rc);
  }
  return 0;
}

void ar_bpf_clear(struct ar_bpf *bpf)
{
  if (bpf == NULL)
    return;
  free(bpf->insns);
  *bpf = (struct ar_bpf){0};
}
