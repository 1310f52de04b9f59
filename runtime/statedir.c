#include <config.h>
#include "statedir.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>

#include "cgroup.h"
#include "utils.h"

int ar_validate_id(const char *id, ar_err *err)
{
  size_t n = strlen(id);
  if (n == 0 || n > 1024)
    return ar_error(err, 0, "invalid container ID \"%s\": must be 1 to 1024 characters", id);
  if (!isalnum((unsigned char)id[0]))
    return ar_error(err, 0, "invalid container ID \"%s\": must start with a letter or digit", id);
  for (size_t i = 0; i < n; i++) {
    unsigned char c = id[i];
    if (!isalnum(c) && c != '_' && c != '.' && c != '+' && c != '-')
      return ar_error(err, 0, "invalid container ID \"%s\": character '%c' is not allowed", id,
                      isprint(c) ? c : '?');
  }
  if (strstr(id, "..") != NULL)
    return ar_error(err, 0, "invalid container ID \"%s\": \"..\" is not allowed", id);
  return 0;
}

char *ar_statedir_path(const char *root, const char *id, const char *file)
{
  return file ? xasprintf("%s/%s/%s", root, id, file) : xasprintf("%s/%s", root, id);
}

static int lock_dir(const char *dir, int *ret_lock, ar_err *err)
{
  int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0)
    return ar_error(err, errno, "open '%s'", dir);
  if (flock(fd, LOCK_EX) < 0) {
    int e = errno;
    close(fd);
    return ar_error(err, e, "lock '%s'", dir);
  }
  *ret_lock = fd;
  return 0;
}

int ar_statedir_create(const char *root, const char *id, int *ret_lock, ar_err *err)
{
  cleanup_free char *dir = ar_statedir_path(root, id, NULL);
  if (ar_mkdir_p(root, 0711, err) < 0)
    return ar_error_wrap(err, "state root");
  if (mkdir(dir, 0711) < 0) {
    if (errno == EEXIST)
      return ar_error(err, 0, "container \"%s\" already exists", id);
    return ar_error(err, errno, "mkdir '%s'", dir);
  }
  return lock_dir(dir, ret_lock, err);
}

int ar_statedir_lock(const char *root, const char *id, int *ret_lock, ar_err *err)
{
  cleanup_free char *dir = ar_statedir_path(root, id, NULL);
  cleanup_free char *st = ar_statedir_path(root, id, "state.json");
  int fd;
  if (ar_validate_id(id, err) < 0)
    return -1;
  if (lock_dir(dir, &fd, err) < 0) {
    if ((*err)->status == ENOENT || (*err)->status == ENOTDIR) {
      ar_error_free(err);
      return ar_error(err, 0, "container \"%s\" does not exist", id);
    }
    return -1;
  }
  /* A racing delete may have removed it while we waited for the lock. */
  if (access(st, F_OK) < 0) {
    close(fd);
    return ar_error(err, 0, "container \"%s\" does not exist", id);
  }
  *ret_lock = fd;
  return 0;
}

int ar_statedir_remove(const char *root, const char *id, ar_err *err)
{
  cleanup_free char *dir = ar_statedir_path(root, id, NULL);
  return ar_rm_rf(dir, err);
}

int ar_state_load(const char *root, const char *id, struct ar_state **ret, ar_err *err)
{
  cleanup_free char *path = ar_statedir_path(root, id, "state.json");
  cleanup_free char *buf = NULL;
  size_t len;
  if (ar_validate_id(id, err) < 0)
    return -1;
  if (ar_read_file(path, &buf, &len, err) < 0) {
    if ((*err)->status == ENOENT) {
      ar_error_free(err);
      return ar_error(err, 0, "container \"%s\" does not exist", id);
    }
    return -1;
  }
  if (ar_state_parse(buf, len, ret, err) < 0)
    return ar_error_wrap(err, "state of \"%s\"", id);
  return 0;
}

int ar_state_save(const char *root, const struct ar_state *st, ar_err *err)
{
  cleanup_free char *path = ar_statedir_path(root, st->id, "state.json");
  cleanup_free char *json = NULL;
  if (ar_state_to_json(st, &json, err) < 0)
    return -1;
  return ar_write_file_atomic(path, json, strlen(json), 0600, err);
}

uint64_t ar_proc_starttime(pid_t pid, bool *zombie)
{
  char path[64], buf[1024], *p;
  unsigned long long start = 0;
  int fd;
  ssize_t n;

  snprintf(path, sizeof(path), "/proc/%d/stat", pid);
  fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return 0;
  n = read(fd, buf, sizeof(buf) - 1);
  close(fd);
  if (n <= 0)
    return 0;
  buf[n] = '\0';
  /* comm may hold spaces and parens: the fields start after the last ')' */
  p = strrchr(buf, ')');
  if (p == NULL || p[1] == '\0')
    return 0;
  if (zombie)
    *zombie = p[2] == 'Z' || p[2] == 'X';
  /* fields 3..21 skipped, 22 is starttime */
  p += 2;
  for (int field = 3; field < 22 && p; field++) {
    p = strchr(p, ' ');
    if (p)
      p++;
  }
  if (p == NULL || sscanf(p, "%llu", &start) != 1)
    return 0;
  return start;
}

bool ar_state_init_alive(const struct ar_state *st)
{
  bool zombie = false;
  uint64_t start;
  if (st->pid <= 0)
    return false;
  start = ar_proc_starttime(st->pid, &zombie);
  return start != 0 && start == st->pid_start && !zombie;
}

const char *ar_state_status(const struct ar_state *st)
{
  struct ar_cgroup *cg = NULL;
  bool frozen = false;
  ar_err err = NULL;

  if (!ar_state_init_alive(st))
    return "stopped";
  if (st->cgroup && ar_cgroup_deserialize(st->cgroup, &cg, &err) == 0) {
    if (ar_cgroup_is_frozen(cg, &frozen, &err) < 0)
      frozen = false;
    ar_cgroup_free(cg);
  }
  ar_error_free(&err);
  if (frozen)
    return "paused";
  return st->started ? "running" : "created";
}
