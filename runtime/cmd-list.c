/* list and spec. */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "spec/jsonw.h"
#include "statedir.h"
#include "utils.h"

static int cmp_str(const void *a, const void *b)
{
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Container IDs under the root, sorted; a missing root is an empty list. */
static char **list_ids(const char *root, size_t *n)
{
  cleanup_dir DIR *d = opendir(root);
  struct dirent *de;
  char **ids = NULL;
  *n = 0;
  while (d && (de = readdir(d)) != NULL) {
    ar_err err = NULL;
    if (de->d_name[0] == '.' || ar_validate_id(de->d_name, &err) < 0) {
      ar_error_free(&err);
      continue;
    }
    ids = xrealloc(ids, (*n + 2) * sizeof(char *));
    ids[(*n)++] = xstrdup(de->d_name);
    ids[*n] = NULL;
  }
  if (*n)
    qsort(ids, *n, sizeof(char *), cmp_str);
  return ids;
}

static void print_table_row(const struct ar_state *st, const char *status)
{
  printf("%-12s %-10d %-10s %-40s %-30s %s\n", st->id, strcmp(status, "stopped") ? st->pid : 0,
         status, st->bundle, st->created, "root");
}

int ar_cmd_list(struct ar_ctx *ctx, int argc, char **argv)
{
  const char *format = "table";
  bool quiet = false;
  const struct ar_opt opts[] = {{"format", 'f', AR_OPT_STRING, &format},
                                {"quiet", 'q', AR_OPT_FLAG, &quiet}};
  size_t n;
  cleanup_strv char **ids = NULL;
  struct ar_jw *w;
  if (ar_parse_opts("list", argc, argv, opts, ARRAY_SIZE(opts)) < 0)
    return 1;
  if (strcmp(format, "table") != 0 && strcmp(format, "json") != 0)
    return ar_usage_error("list", "--format: expected table or json, got \"%s\"", format);
  ids = list_ids(ctx->root, &n);
  w = ar_jw_new(false);
  ar_jw_array_open(w);
  if (!quiet && strcmp(format, "table") == 0)
    printf("%-12s %-10s %-10s %-40s %-30s %s\n", "ID", "PID", "STATUS", "BUNDLE", "CREATED",
           "OWNER");
  for (size_t i = 0; i < n; i++) {
    struct ar_state *st = NULL;
    ar_err err = NULL;
    const char *status;
    if (ar_state_load(ctx->root, ids[i], &st, &err) < 0) {
      ar_error_free(&err);
      continue;
    }
    status = ar_state_status(st);
    if (quiet)
      printf("%s\n", st->id);
    else if (strcmp(format, "table") == 0)
      print_table_row(st, status);
    else {
      cleanup_free char *doc = NULL;
      if (ar_state_oci_json(st, status, false, &doc, &err) == 0)
        ar_jw_raw(w, doc);
      ar_error_free(&err);
    }
    ar_state_free(st);
  }
  ar_jw_array_close(w);
  if (!quiet && strcmp(format, "json") == 0) {
    size_t len;
    cleanup_free char *out = ar_jw_finish(w, &len);
    printf("%s\n", n ? out : "null");
  } else {
    ar_jw_free(w);
  }
  return 0;
}

int ar_cmd_spec(struct ar_ctx *ctx, int argc, char **argv)
{
  const char *bundle = ".";
  bool rootless = false;
  const struct ar_opt opts[] = {{"bundle", 'b', AR_OPT_STRING, &bundle},
                                {"rootless", 0, AR_OPT_FLAG, &rootless}};
  cleanup_free char *path = NULL, *json = NULL;
  struct ar_spec *s;
  ar_err err = NULL;
  int fd;
  if (ar_parse_opts("spec", argc, argv, opts, ARRAY_SIZE(opts)) < 0)
    return 1;
  path = xasprintf("%s/config.json", bundle);
  s = ar_spec_default(rootless);
  if (ar_spec_to_json(s, true, &json, &err) < 0) {
    ar_spec_free(s);
    return ar_fail(&err);
  }
  ar_spec_free(s);
  fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    ar_error(&err, errno, "%s", errno == EEXIST ? "File exists: config.json" : path);
    return ar_fail(&err);
  }
  if (ar_write_all(fd, json, strlen(json)) < 0 || write(fd, "\n", 1) != 1) {
    close(fd);
    ar_error(&err, errno, "write '%s'", path);
    return ar_fail(&err);
  }
  close(fd);
  return 0;
}
