/* pause and resume: freeze and thaw every process of the container through its cgroup (the v1
 * freezer, or cgroup.freeze on v2).  `state` then reports "paused", read from the freezer. */
#include <config.h>

#include <stdbool.h>
#include <string.h>

#include "audit.h"
#include "cgroup.h"
#include "cli.h"
#include "log.h"
#include "statedir.h"
#include "utils.h"

/* The freezer decides, not ar_state_status(): a created container can be frozen too. */
static int check_and_freeze(struct ar_state *st, struct ar_cgroup *cg, bool frozen, ar_err *err)
{
  bool is_frozen = false;

  if (!ar_state_init_alive(st))
    return ar_error(err, 0, "container \"%s\" is stopped: %s", st->id,
                    frozen ? "container not running" : "container not paused");
  if (ar_cgroup_is_frozen(cg, &is_frozen, err) < 0)
    return -1;
  /* runc: pausing a paused container is "not running"; resuming a running one "not paused". */
  if (frozen && is_frozen)
    return ar_error(err, 0, "container \"%s\" is paused: container not running", st->id);
  if (!frozen && !is_frozen)
    return ar_error(err, 0, "container \"%s\" is %s: container not paused", st->id,
                    ar_state_status(st));
  return ar_cgroup_freeze(cg, frozen, err);
}

static int set_frozen(const struct ar_ctx *ctx, const char *id, bool frozen, ar_err *err)
{
  cleanup_close int lock = -1;
  struct ar_state *st = NULL;
  struct ar_cgroup *cg = NULL;
  cleanup_err ar_err audit_err = NULL;
  int ret = -1;

  if (ar_statedir_lock(ctx->root, id, &lock, err) < 0 || ar_state_load(ctx->root, id, &st, err) < 0)
    return -1;
  if (st->cgroup == NULL)
    ar_error(err, 0, "container \"%s\" has no cgroup to %s", id, frozen ? "freeze" : "thaw");
  else if (ar_cgroup_deserialize(st->cgroup, &cg, err) == 0)
    ret = check_and_freeze(st, cg, frozen, err);
  if (ret == 0 && st->audit_log &&
      ar_audit_event(st->audit_log, id, frozen ? "pause" : "resume", NULL, NULL, &audit_err) < 0)
    ar_warn("audit: %s", audit_err->msg);
  ar_cgroup_free(cg);
  ar_state_free(st);
  return ret;
}

static int pause_or_resume(struct ar_ctx *ctx, int argc, char **argv, bool frozen)
{
  const char *verb = frozen ? "pause" : "resume";
  ar_err err = NULL;
  int first = ar_parse_opts(verb, argc, argv, NULL, 0);

  if (first < 0)
    return 1;
  if (first != argc - 1)
    return ar_usage_error(verb, "%s needs exactly one container ID", verb);
  if (set_frozen(ctx, argv[first], frozen, &err) < 0)
    return ar_fail(&err);
  return 0;
}

int ar_cmd_pause(struct ar_ctx *ctx, int argc, char **argv)
{
  return pause_or_resume(ctx, argc, argv, true);
}

int ar_cmd_resume(struct ar_ctx *ctx, int argc, char **argv)
{
  return pause_or_resume(ctx, argc, argv, false);
}
