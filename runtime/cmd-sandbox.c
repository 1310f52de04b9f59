/* agentrun sandbox [options] -- CMD [ARGS...]: one job, no engine, no image. */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>

#include "cli.h"
#include "run.h"
#include "sandbox.h"
#include "spec/jsonw.h"
#include "utils.h"

#define SANDBOX_FAIL 125 /* agentrun's own failure, as Docker and Podman use */

struct sb_args {
  struct ar_sandbox_opts o;
  struct ar_strlist mounts, env;
  const char *user, *json, *audit;
};

static const char usage_text[] =
    "usage: agentrun sandbox [options] -- CMD [ARGS...]\n"
    "\n"
    "Run one command in a disposable hardened box and remove every trace of it.\n"
    "Without --rootfs the box sees the host's /usr, /bin, /sbin and /lib* read-only and a\n"
    "minimal /etc; no network, no host environment, uid 65534.\n"
    "\n"
    "options:\n"
    "  --rootfs DIR            use DIR as the root filesystem (read-only)\n"
    "  --mount SRC:DST[:ro|:rw]  bind a host path (read-only unless :rw); repeatable\n"
    "  --workdir DIR           bind DIR read-write at /workspace and start there\n"
    "  --timeout D             wall-clock limit, e.g. 30s, 5m (exit 137 when it hits)\n"
    "  --memory M              memory limit, e.g. 512m (exit 137 on an OOM kill)\n"
    "  --pids N                process limit\n"
    "  --cpus C                CPU limit, e.g. 0.5\n"
    "  --tmp-size M            size of the tmpfs /tmp\n"
    "  --net none|inherit      network (inherit only if the host policy allows it)\n"
    "  -e, --env K=V           set a variable; the host environment is not passed on\n"
    "  -u, --user UID[:GID]    run as UID (default 65534)\n"
    "  --json FILE             write the result as JSON to FILE (- for stderr)\n"
    "  --audit FILE            write the audit log to FILE\n"
    "\n"
    "exit status: the command's; 128+N if it was killed by signal N; 137 on timeout or OOM;\n"
    "125 if agentrun itself failed.\n";

/* --help anywhere among the options (every sandbox option takes a value). */
static bool wants_help(int argc, char **argv)
{
  for (int i = 1; i < argc && argv[i][0] == '-' && strcmp(argv[i], "--") != 0; i++) {
    const char *o = argv[i] + (argv[i][1] == '-' ? 2 : 1);
    if (strcmp(o, "help") == 0 || strcmp(o, "h") == 0)
      return true;
    if (strchr(o, '=') == NULL)
      i++; /* skip the option's value */
  }
  return false;
}

static int parse(int argc, char **argv, struct sb_args *a)
{
  const struct ar_opt opts[] = {
      {"rootfs", 0, AR_OPT_STRING, &a->o.rootfs},   {"mount", 0, AR_OPT_LIST, &a->mounts},
      {"workdir", 0, AR_OPT_STRING, &a->o.workdir}, {"timeout", 0, AR_OPT_STRING, &a->o.timeout},
      {"memory", 0, AR_OPT_STRING, &a->o.memory},   {"pids", 0, AR_OPT_STRING, &a->o.pids},
      {"cpus", 0, AR_OPT_STRING, &a->o.cpus},       {"tmp-size", 0, AR_OPT_STRING, &a->o.tmp_size},
      {"net", 0, AR_OPT_STRING, &a->o.net},         {"env", 'e', AR_OPT_LIST, &a->env},
      {"user", 'u', AR_OPT_STRING, &a->user},       {"json", 0, AR_OPT_STRING, &a->json},
      {"audit", 0, AR_OPT_STRING, &a->audit},
  };
  int first = ar_parse_opts("sandbox", argc, argv, opts, ARRAY_SIZE(opts));
  if (first < 0)
    return -1;
  if (first >= argc)
    return ar_usage_error("sandbox", "sandbox needs a command: agentrun sandbox [options] -- CMD"),
           -1;
  a->o.argv = argv + first;
  a->o.n_argv = argc - first;
  a->o.mounts = a->mounts.v;
  a->o.n_mounts = a->mounts.n;
  a->o.env = a->env.v;
  a->o.n_env = a->env.n;
  a->o.uid = a->o.gid = 65534;
  a->o.tty = isatty(0) && isatty(1);
  if (a->o.net && strcmp(a->o.net, "none") != 0 && strcmp(a->o.net, "inherit") != 0)
    return ar_usage_error("sandbox", "--net: expected none or inherit, got \"%s\"", a->o.net), -1;
  if (a->user) {
    char *end;
    unsigned long u = strtoul(a->user, &end, 10), g = u;
    if (end != a->user && *end == ':')
      g = strtoul(end + 1, &end, 10);
    if (end == a->user || *end || u > UINT32_MAX - 1 || g > UINT32_MAX - 1)
      return ar_usage_error("sandbox", "--user \"%s\": expected UID[:GID]", a->user), -1;
    a->o.uid = u;
    a->o.gid = g;
  }
  return 0;
}

static char *new_id(void)
{
  uint64_t r = 0;
  if (getrandom(&r, sizeof(r), 0) != sizeof(r))
    r = ar_now_ns(CLOCK_REALTIME) ^ ((uint64_t)getpid() << 32);
  return xasprintf("sb-%016llx", (unsigned long long)r);
}

static int write_result(const char *path, const char *id, const char *audit,
                        const struct ar_run_result *r)
{
  struct ar_jw *w = ar_jw_new(false);
  cleanup_free char *out = NULL;
  FILE *f;
  ar_jw_map_open(w);
  ar_jw_kstr(w, "id", id);
  ar_jw_kint(w, "exit_code", r->exit_code);
  ar_jw_key(w, "signal");
  r->signal ? ar_jw_int(w, r->signal) : ar_jw_null(w);
  ar_jw_kbool(w, "timed_out", r->timed_out);
  ar_jw_kbool(w, "oom_killed", r->oom_killed);
  ar_jw_kdouble(w, "wall_s", r->wall_s);
  ar_jw_kdouble(w, "cpu_s", r->cpu_s);
  ar_jw_key(w, "mem_peak_bytes");
  r->has_mem_peak ? ar_jw_uint(w, r->mem_peak) : ar_jw_null(w);
  ar_jw_key(w, "pids_peak");
  r->has_pids_peak ? ar_jw_uint(w, r->pids_peak) : ar_jw_null(w);
  ar_jw_kstr(w, "audit_log", audit);
  ar_jw_map_close(w);
  out = ar_jw_finish(w, NULL);
  if (strcmp(path, "-") == 0) {
    fprintf(stderr, "%s\n", out);
    return 0;
  }
  if ((f = fopen(path, "we")) == NULL)
    return -1;
  fprintf(f, "%s\n", out);
  return fclose(f);
}

/* The bundle lives under the state root's .sandbox dir, and goes with the job. */
static int make_bundle(const struct ar_ctx *ctx, struct sb_args *a, const char *id, char **ret_dir,
                       ar_err *err)
{
  cleanup_free char *dir = xasprintf("%s/.sandbox/%s", ctx->root, id);
  cleanup_free char *rootfs = xasprintf("%s/rootfs", dir);
  cleanup_free char *cfg = xasprintf("%s/config.json", dir);
  cleanup_free char *json = NULL;
  struct ar_spec *s = NULL;
  int r;
  /* Another sandbox may rmdir an empty .sandbox between our two mkdirs: try again. */
  for (int tries = 0; (r = ar_mkdir_p(rootfs, 0755, err)) < 0 && tries < 20; tries++) {
    if ((*err)->status != ENOENT)
      break;
    ar_error_free(err);
  }
  if (r < 0)
    return -1;
  *ret_dir = xstrdup(dir);
  if (ar_sandbox_spec(&a->o, rootfs, &s, err) < 0)
    return -1;
  if (ar_spec_to_json(s, false, &json, err) < 0) {
    ar_spec_free(s);
    return -1;
  }
  ar_spec_free(s);
  return ar_write_file(cfg, json, strlen(json), 0600, err);
}

static void remove_bundle(const struct ar_ctx *ctx, const char *dir)
{
  cleanup_free char *parent = xasprintf("%s/.sandbox", ctx->root);
  ar_err err = NULL;
  if (dir && ar_rm_rf(dir, &err) < 0)
    ar_fail(&err);
  rmdir(parent); /* only when no other sandbox is using it */
}

int ar_cmd_sandbox(struct ar_ctx *ctx, int argc, char **argv)
{
  struct sb_args a = {0};
  struct ar_create_opts co = {0};
  struct ar_run_opts ro = {.kill_on_interrupt = true, .figures = true};
  struct ar_run_result res = {0};
  cleanup_free char *id = new_id(), *dir = NULL;
  ar_err err = NULL;
  int code = SANDBOX_FAIL;

  if (wants_help(argc, argv)) {
    fputs(usage_text, stdout);
    return 0;
  }
  if (parse(argc, argv, &a) < 0)
    goto out;
  if (make_bundle(ctx, &a, id, &dir, &err) < 0) {
    ar_fail(&err);
    goto out;
  }
  co.id = id;
  co.bundle = dir;
  co.foreground = true;
  co.audit_path = a.audit;
  if (ar_container_run(ctx, &co, &ro, &res, &err) < 0) {
    ar_fail(&err);
    if (res.interrupted)
      code = 128 + res.interrupted;
    goto out;
  }
  code = res.interrupted ? 128 + res.interrupted : res.exit_code;
  if (a.json && write_result(a.json, id, res.audit_log, &res) < 0)
    fprintf(stderr, "agentrun: --json '%s': %s\n", a.json, strerror(errno));
out:
  remove_bundle(ctx, dir);
  free(res.audit_log);
  free(a.mounts.v);
  free(a.env.v);
  return code;
}
