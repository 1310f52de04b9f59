/* The agent seccomp filter: a fixed deny list stacked on top of the caller's filter.  Compiled in
 * the parent, loaded in the child with ar_seccomp_load() like the caller's filter. */
#ifndef AR_AGENT_SECCOMP_H
#define AR_AGENT_SECCOMP_H

#include <stdbool.h>

#include "error.h"
#include "seccomp.h"

/* Default ALLOW; the kernel's big attack surfaces fail with EPERM (clone3 with ENOSYS), for
 * x86_64, i386 and x32.  audit_exec: execve/execveat go to a user-notify listener (the monitor
 * answers CONTINUE) and ret->wants_listener is set.  ret is freed with ar_bpf_clear().
 * Copies the BPF generated at build time when there is one, else compiles it. */
int ar_agent_filter_compile(bool audit_exec, struct ar_bpf *ret, ar_err *err);
/* Always compiles with libseccomp: for the build-time generator and the tests. */
int ar_agent_filter_build(bool audit_exec, struct ar_bpf *ret, ar_err *err);
/* Whether ar_agent_filter_compile() copies a build-time BPF. */
bool ar_agent_filter_prebuilt(void);

#endif
