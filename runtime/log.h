/* The runtime's own log: text or JSON lines to --log (stderr by default). */
#ifndef AR_LOG_H
#define AR_LOG_H

#include <stdbool.h>

enum ar_log_level { AR_LOG_ERROR, AR_LOG_WARNING, AR_LOG_INFO, AR_LOG_DEBUG };

/* path NULL: stderr.  json: {"level":..,"msg":..,"time":RFC3339} per line. */
int ar_log_init(const char *path, bool json, bool debug);
void ar_log(enum ar_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define ar_warn(...) ar_log(AR_LOG_WARNING, __VA_ARGS__)
#define ar_debug(...) ar_log(AR_LOG_DEBUG, __VA_ARGS__)
/* The log fd, so a forked child can keep it (the json target must see the child's errors). */
int ar_log_fd(void);
bool ar_log_is_json(void);
/* Errors go to the log; when the log is a file they also go to stderr, as runc does. */
void ar_log_error_msg(const char *msg);

#endif
