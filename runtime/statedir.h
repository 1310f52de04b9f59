/* The state root (--root): one directory per container, locked while a command works on it. */
#ifndef AR_STATEDIR_H
#define AR_STATEDIR_H

#include <stdbool.h>

#include "spec/state.h"

#define AR_DEFAULT_ROOT "/run/agentrun"

/* [A-Za-z0-9][A-Za-z0-9_.+-]{0,1023}, never "." or "..". */
int ar_validate_id(const char *id, ar_err *err);
/* mkdir the container's dir exclusively and lock it: a second create of the ID fails here. */
int ar_statedir_create(const char *root, const char *id, int *ret_lock, ar_err *err);
/* Lock an existing container's dir; "container "ID" does not exist" when absent. */
int ar_statedir_lock(const char *root, const char *id, int *ret_lock, ar_err *err);
int ar_statedir_remove(const char *root, const char *id, ar_err *err);
char *ar_statedir_path(const char *root, const char *id, const char *file);

int ar_state_load(const char *root, const char *id, struct ar_state **ret, ar_err *err);
int ar_state_save(const char *root, const struct ar_state *st, ar_err *err);

/* created, running, paused or stopped: from the init's liveness, the fifo and the freezer. */
const char *ar_state_status(const struct ar_state *st);
bool ar_state_init_alive(const struct ar_state *st);
/* Field 22 of /proc/PID/stat, 0 when the process is gone; *zombie when it is a zombie. */
uint64_t ar_proc_starttime(pid_t pid, bool *zombie);

#endif
