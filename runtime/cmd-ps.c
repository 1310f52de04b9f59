/* ps [--format table|json] ID [ps options]: the container's processes, as runc shows them.
 * json is the array of host pids in the container's cgroup (what `docker top` and `ctr task ps`
 * parse); table runs the host's ps (default -ef) and keeps the header and the container's lines. */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "cgroup.h"
#include "cli.h"
#include "spec/jsonw.h"
#include "statedir.h"
#include "utils.h"

extern char **environ;

static int cmp_pid(const void *a, const void *b)
{
  pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;
  return (x > y) - (x < y);
}

/* Every process in the container's cgroup (and its sub-cgroups), sorted, without duplicates. */
static int container_pids(const struct ar_state *st, pid_t **ret, size_t *ret_n, ar_err *err)
{
  struct ar_cgroup *cg = NULL;
  pid_t *v = NULL;
  size_t n = 0, out = 0;
  int r;

  *ret = NULL;
  *ret_n = 0;
  if (st->cgroup == NULL) {
    /* No cgroup recorded: the init is all we know of. */
    if (ar_state_init_alive(st)) {
      *ret = xmalloc(sizeof(pid_t));
      (*ret)[0] = st->pid;
      *ret_n = 1;
    }
    return 0;
  }
  if (ar_cgroup_deserialize(st->cgroup, &cg, err) < 0)
    return -1;
  r = ar_cgroup_pids(cg, &v, &n, err);
  ar_cgroup_free(cg);
  if (r < 0)
    return -1;
  if (n)
    qsort(v, n, sizeof(pid_t), cmp_pid);
  for (size_t i = 0; i < n; i++)
    if (out == 0 || v[out - 1] != v[i])
      v[out++] = v[i];
  *ret = v;
  *ret_n = out;
  return 0;
}

static void print_json(const pid_t *pids, size_t n)
{
  struct ar_jw *w = ar_jw_new(false);
  char *s;

  ar_jw_array_open(w);
  for (size_t i = 0; i < n; i++)
    ar_jw_int(w, pids[i]);
  ar_jw_array_close(w);
  s = ar_jw_finish(w, NULL);
  printf("%s\n", s);
  free(s);
}

/* Run the host's ps with args; its stdout and stderr together, as runc collects them. */
static int run_ps(char **args, size_t n_args, char **ret, ar_err *err)
{
  cleanup_free char **argv = xcalloc(n_args + 2, sizeof(char *));
  cleanup_close int rd = -1, wr = -1;
  posix_spawn_file_actions_t fa;
  int fds[2], status, rc;
  size_t len = 0;
  pid_t pid;

  argv[0] = "ps";
  for (size_t i = 0; i < n_args; i++)
    argv[i + 1] = args[i];
  if (pipe2(fds, O_CLOEXEC) < 0)
    return ar_error(err, errno, "ps: pipe");
  rd = fds[0];
  wr = fds[1];
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, wr, STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&fa, wr, STDERR_FILENO);
  rc = posix_spawnp(&pid, "ps", &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0)
    return ar_error(err, rc, "ps: cannot run the host's ps");
  wr = close_and_reset(wr);
  rc = ar_read_fd(rd, ret, &len, err);
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
    ;
  if (rc < 0)
    return ar_error_wrap(err, "ps: read its output");
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    ar_error(err, 0, "ps: exit status %d: %s", WIFEXITED(status) ? WEXITSTATUS(status) : -1, *ret);
    free(steal_pointer(ret));
    return -1;
  }
  return 0;
}

/* The column of the header that is exactly "PID". */
static int pid_column(const char *header)
{
  cleanup_free char *h = xstrdup(header);
  char *save = NULL;
  int i = 0;

  for (char *t = strtok_r(h, " \t", &save); t; t = strtok_r(NULL, " \t", &save), i++)
    if (strcmp(t, "PID") == 0)
      return i;
  return -1;
}

/* Field `col` of a line as a pid, or -1. */
static long field_pid(const char *line, int col)
{
  cleanup_free char *l = xstrdup(line);
  char *save = NULL, *end;
  char *t = strtok_r(l, " \t", &save);
  long v;

  for (int i = 0; t && i < col; i++)
    t = strtok_r(NULL, " \t", &save);
  if (t == NULL)
    return -1;
  v = strtol(t, &end, 10);
  return *end == '\0' ? v : -1;
}

static int print_table(const pid_t *pids, size_t n, char **args, size_t n_args, ar_err *err)
{
  static char *default_args[] = {"-ef"};
  cleanup_free char *out = NULL;
  char *save = NULL, *line;
  int col;

  if (n_args == 0) {
    args = default_args;
    n_args = 1;
  }
  if (run_ps(args, n_args, &out, err) < 0)
    return -1;
  line = strtok_r(out, "\n", &save);
  if (line == NULL || (col = pid_column(line)) < 0)
    return ar_error(err, 0, "ps: couldn't find PID field in ps output");
  printf("%s\n", line);
  while ((line = strtok_r(NULL, "\n", &save)) != NULL) {
    pid_t p;
    long v = field_pid(line, col);
    if (v <= 0)
      return ar_error(err, 0, "ps: unable to parse pid in \"%s\"", line);
    p = (pid_t)v;
    if (bsearch(&p, pids, n, sizeof(pid_t), cmp_pid))
      printf("%s\n", line);
  }
  return 0;
}

int ar_cmd_ps(struct ar_ctx *ctx, int argc, char **argv)
{
  const char *format = "table";
  const struct ar_opt opts[] = {{"format", 'f', AR_OPT_STRING, &format}};
  struct ar_state *st = NULL;
  cleanup_free pid_t *pids = NULL;
  size_t n = 0;
  ar_err err = NULL;
  int first = ar_parse_opts("ps", argc, argv, opts, ARRAY_SIZE(opts)), r;

  if (first < 0)
    return 1;
  if (first >= argc)
    return ar_usage_error("ps", "ps needs a container ID");
  if (strcmp(format, "table") != 0 && strcmp(format, "json") != 0)
    return ar_usage_error("ps", "--format: expected table or json, got \"%s\"", format);
  if (ar_state_load(ctx->root, argv[first], &st, &err) < 0)
    return ar_fail(&err);
  r = container_pids(st, &pids, &n, &err);
  ar_state_free(st);
  if (r < 0)
    return ar_fail(&err);
  if (strcmp(format, "json") == 0)
    print_json(pids, n);
  else if (print_table(pids, n, argv + first + 1, (size_t)(argc - first - 1), &err) < 0)
    return ar_fail(&err);
  return 0;
}
