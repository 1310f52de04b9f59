/* OCI hooks: run one phase's list in order, the state on stdin, each with its env, args and
 * timeout.  A failing hook stops the list; its output is in the error. */
#ifndef AR_HOOKS_H
#define AR_HOOKS_H

#include "spec/spec.h"

/* cwd: the bundle, as runc does (NULL: leave the cwd alone). */
int ar_hooks_run(const struct ar_hook_list *list, enum ar_hook_phase phase, const char *state_json,
                 const char *cwd, ar_err *err);

#endif
