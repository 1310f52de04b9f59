/* Capabilities, user and groups, rlimits and the rest of the process's credentials. */
#ifndef AR_CAPS_H
#define AR_CAPS_H

#include <stdint.h>

#include "spec/spec.h"

struct ar_capmask {
  uint64_t set[AR_CAP_NSETS];
};

/* Names -> masks; an unknown name is an error naming it. */
int ar_caps_resolve(const struct ar_capabilities *c, struct ar_capmask *ret, ar_err *err);
/* Drop the bounding set, then switch to user (keeping caps), then set the final sets. */
int ar_caps_apply_user(const struct ar_process *p, const struct ar_capmask *caps, ar_err *err);
/* Apply rlimits; without CAP_SYS_RESOURCE a value over the hard limit is clamped, with a warning. */
int ar_rlimits_apply(const struct ar_process *p, ar_err *err);
int ar_oom_score_adj_apply(const struct ar_process *p, ar_err *err);
int ar_personality_apply(const struct ar_personality *pers, ar_err *err);
int ar_io_priority_apply(const struct ar_process *p, ar_err *err);

#endif
