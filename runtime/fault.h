/* Test-only fault injection: AR_FAULT("create:after-cgroup") SIGKILLs the calling process when
 * $AGENTRUN_FAULT names that point, so tests/reliability/fault.bats can prove that a runtime
 * killed at any stage leaves nothing `delete --force` cannot remove.
 *
 * Compiled in only by `configure --enable-fault-injection` (AR_FAULT_INJECTION in config.h);
 * otherwise AR_FAULT() expands to nothing and a release binary never reads the variable.
 * Include config.h first, as every .c file does. */
#ifndef AR_FAULT_H
#define AR_FAULT_H

#ifdef AR_FAULT_INJECTION
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static inline void ar_fault_point(const char *name)
{
  const char *want = getenv("AGENTRUN_FAULT");
  /* SIGKILL, not exit(): no atexit handler, no cleanup attribute, no buffered output runs */
  if (want != NULL && strcmp(want, name) == 0)
    kill(getpid(), SIGKILL);
}
#define AR_FAULT(name) ar_fault_point(name)
#else
#define AR_FAULT(name) ((void)0)
#endif

#endif
