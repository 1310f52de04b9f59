/* The command line: the verb table, option parsing shared by the verbs, and exit handling. */
#ifndef AR_CLI_H
#define AR_CLI_H

#include <getopt.h>
#include <stdbool.h>

#include "container.h"

/* One verb: argv[0] is the verb's name.  Returns the process exit code. */
typedef int (*ar_cmd_fn)(struct ar_ctx *ctx, int argc, char **argv);

/* A repeatable option's values (pointers into argv). */
struct ar_strlist {
  char **v;
  size_t n;
};

struct ar_opt {
  const char *name; /* long name; single-dash long names work too, as with runc */
  char short_name;  /* 0 if none */
  enum { AR_OPT_FLAG, AR_OPT_STRING, AR_OPT_INT, AR_OPT_LIST } kind;
  void *target; /* bool *, const char **, int *, struct ar_strlist * */
};

/* Parse options up to the first non-option; returns the index of the first positional
 * argument, or -1 after printing a usage error. */
int ar_parse_opts(const char *verb, int argc, char **argv, const struct ar_opt *opts, size_t n);
/* Report err (to the log and stderr) and return 1, or `code` when given one. */
int ar_fail(ar_err *err);
int ar_usage_error(const char *verb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "KILL", "SIGKILL", "9" -> 9; -1 if unknown. */
int ar_parse_signal(const char *s);
/* Pass the signals a user sends us (INT TERM HUP QUIT USR1 USR2 WINCH) on to pid. */
void ar_forward_signals(pid_t pid);

int ar_cmd_create(struct ar_ctx *, int, char **);
int ar_cmd_run(struct ar_ctx *, int, char **);
int ar_cmd_start(struct ar_ctx *, int, char **);
int ar_cmd_state(struct ar_ctx *, int, char **);
int ar_cmd_list(struct ar_ctx *, int, char **);
int ar_cmd_kill(struct ar_ctx *, int, char **);
int ar_cmd_delete(struct ar_ctx *, int, char **);
int ar_cmd_spec(struct ar_ctx *, int, char **);
int ar_cmd_exec(struct ar_ctx *, int, char **);
int ar_cmd_inspect(struct ar_ctx *, int, char **);
int ar_cmd_policy(struct ar_ctx *, int, char **);
int ar_cmd_sandbox(struct ar_ctx *, int, char **);
int ar_cmd_ps(struct ar_ctx *, int, char **);
int ar_cmd_pause(struct ar_ctx *, int, char **);
int ar_cmd_resume(struct ar_ctx *, int, char **);
int ar_cmd_update(struct ar_ctx *, int, char **);
int ar_cmd_events(struct ar_ctx *, int, char **);
int ar_cmd_features(struct ar_ctx *, int, char **);
int ar_cmd_checkpoint(struct ar_ctx *, int, char **);
int ar_cmd_restore(struct ar_ctx *, int, char **);

#endif
