/* CVE-2019-5736: a container process must never reach the runtime binary through
 * /proc/<pid>/exe of an agentrun process that joins the container. */
#ifndef AR_SELFEXE_H
#define AR_SELFEXE_H

#include <stdbool.h>

#include "spec/spec.h"

/* True when a process of this container could open /proc/<our pid>/exe while we set it up:
 * it shares our pid namespace view and may hold CAP_SYS_PTRACE outside a user namespace. */
bool ar_selfexe_exposed(const struct ar_spec *s, const struct ar_process *p, bool joining_pidns);
/* Re-execute from a sealed memfd copy of the binary (argv and environ kept).  Returns only
 * on failure; a second call after the re-exec is a no-op returning 0. */
int ar_selfexe_protect(int argc, char **argv, ar_err *err);
/* main() records argv once so that deep code can re-exec. */
void ar_selfexe_init(int argc, char **argv);
int ar_selfexe_reexec(ar_err *err);

#endif
