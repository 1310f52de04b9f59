/* The audit log: JSON lines, one file per container, size-capped. */
#ifndef AR_AUDIT_H
#define AR_AUDIT_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"
#include "spec/jsonw.h"

struct ar_audit {
  int fd;
  const char *id;
  uint64_t written;   /* bytes in the file */
  uint64_t max_bytes; /* 0: no cap */
  uint64_t dropped;   /* lines not written because of the cap */
  bool syslog;
};

/* Open (create) path for appending; its directory is made if missing. */
int ar_audit_open(struct ar_audit *a, const char *path, const char *id, uint64_t max_bytes,
                  bool syslog, ar_err *err);
/* A line starts with ts (RFC 3339, microseconds), event and id; add fields, then end it. */
struct ar_jw *ar_audit_begin(const char *event, const char *id);
/* Write the line.  Past the cap lines are counted, not written; `final` lines (exit, dropped)
 * use a reserve kept below the cap so the report is never lost. */
int ar_audit_end(struct ar_audit *a, struct ar_jw *w, bool final);
/* Write the `dropped` line if anything was dropped, and close. */
void ar_audit_close(struct ar_audit *a);
/* One line from a short-lived command (create, start, delete): open, write, close. */
int ar_audit_event(const char *path, const char *id, const char *event, const char *raw_key,
                   const char *raw_json, ar_err *err);

#endif
