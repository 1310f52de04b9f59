/* Seccomp: compile in the parent with libseccomp, load in the child as late as possible. */
#ifndef AR_SECCOMP_H
#define AR_SECCOMP_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/filter.h>

#include "spec/spec.h"

struct ar_bpf {
  struct sock_filter *insns;
  size_t n_insns;
  unsigned int flags;  /* SECCOMP_FILTER_FLAG_* from linux.seccomp.flags */
  bool wants_listener; /* some rule is SCMP_ACT_NOTIFY */
};

int ar_seccomp_compile(const struct ar_seccomp *sc, struct ar_bpf *ret, ar_err *err);
/* The same through a cache of compiled filters (/var/cache/agentrun/seccomp, or
 * $AGENTRUN_SECCOMP_CACHE; "off" disables it): runtime/seccomp-cache.c. */
int ar_seccomp_compile_cached(const struct ar_seccomp *sc, struct ar_bpf *ret, ar_err *err);
/* Load in the calling process.  If bpf->wants_listener, *ret_listener gets the notify fd. */
int ar_seccomp_load(const struct ar_bpf *bpf, int *ret_listener, ar_err *err);
void ar_bpf_clear(struct ar_bpf *bpf);

#endif
