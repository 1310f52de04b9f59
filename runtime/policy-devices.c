/* The policy's device, path and sysctl controls. */
#include <config.h>
#include "policy.h"

#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "utils.h"

struct dev_default {
  const char *path;
  char type;
  int major, minor;
};

/* The only devices an agent job gets, unless the host policy lists more. */
static const struct dev_default default_devices[] = {
    {"/dev/null", 'c', 1, 3},   {"/dev/zero", 'c', 1, 5},    {"/dev/full", 'c', 1, 7},
    {"/dev/random", 'c', 1, 8}, {"/dev/urandom", 'c', 1, 9}, {"/dev/tty", 'c', 5, 0},
    {"/dev/ptmx", 'c', 5, 2}};

static const char *const default_masked[] = {"/proc/acpi",
                                             "/proc/asound",
                                             "/proc/kcore",
                                             "/proc/keys",
                                             "/proc/latency_stats",
                                             "/proc/timer_list",
                                             "/proc/timer_stats",
                                             "/proc/sched_debug",
                                             "/proc/scsi",
                                             "/sys/firmware",
                                             "/sys/devices/virtual/powercap"};
static const char *const default_readonly[] = {"/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys",
                                               "/proc/sysrq-trigger"};

static bool is_char(char type)
{
  return type == 'c' || type == 'u';
}

/* The host lists device paths; the config's entry must be the very node the host has there, or
 * a GPU path could smuggle in the host's disk as "b 8:0". */
static bool host_allows(const struct ar_host_policy *hp, const struct ar_device *d)
{
  struct stat st;
  for (size_t i = 0; i < hp->n_devices; i++) {
    if (strcmp(hp->devices[i], d->path) != 0 || stat(hp->devices[i], &st) < 0)
      continue;
    if ((S_ISCHR(st.st_mode) ? is_char(d->type) : S_ISBLK(st.st_mode) && d->type == 'b') &&
        d->major == (int64_t)major(st.st_rdev) && d->minor == (int64_t)minor(st.st_rdev))
      return true;
  }
  return false;
}

/* A default by path alone is not enough: "/dev/null" as b 8:0 is not /dev/null. */
static bool is_default(const struct ar_device *d)
{
  for (size_t i = 0; i < ARRAY_SIZE(default_devices); i++)
    if (strcmp(default_devices[i].path, d->path) == 0)
      return is_char(d->type) && d->major == default_devices[i].major &&
             d->minor == default_devices[i].minor;
  return false;
}

/* Keep the config's devices that are defaults or allowed by the host; drop the rest. */
static size_t filter_devices(struct ar_policy_run *r)
{
  struct ar_linux *l = &r->s->linux_;
  size_t keep = 0, dropped = 0;
  for (size_t i = 0; i < l->n_devices; i++) {
    struct ar_device *d = &l->devices[i];
    if (is_default(d) || host_allows(r->hp, d)) {
      l->devices[keep++] = *d;
      continue;
    }
    ar_policy_note(r, "devices", "tightened", "dropped %s (%c %lld:%lld)", d->path, d->type,
                   (long long)d->major, (long long)d->minor);
    free(d->path);
    dropped++;
  }
  l->n_devices = keep;
  return dropped;
}

static void clear_rules(struct ar_resources *res)
{
  for (size_t i = 0; i < res->n_devices; i++)
    free(res->devices[i].access);
  free(res->devices);
  res->devices = NULL;
  res->n_devices = 0;
}

/* The cgroup denies everything; the runtime then allows the default devices, /dev/pts and
 * the devices that survived filter_devices() (ar_device_rules_complete). */
static void device_rules(struct ar_policy_run *r)
{
  struct ar_resources *res = &r->s->linux_.resources;
  const struct ar_linux *l = &r->s->linux_;
  clear_rules(res);
  ar_resources_add_device_rule(res, false, 'a', -1, -1, "rwm");
  for (size_t i = 0; i < l->n_devices; i++) /* the host allowed these */
    if (!is_default(&l->devices[i]))
      ar_resources_add_device_rule(res, true, l->devices[i].type == 'b' ? 'b' : 'c',
                                   l->devices[i].major, l->devices[i].minor, "rwm");
  r->s->linux_.has_resources = true;
}

int ar_policy_devices(struct ar_policy_run *r)
{
  size_t dropped;
  if (!r->hp->control[AR_CTL_DEVICES])
    return ar_policy_note(r, "devices", "off", "host policy: the config's devices"), 0;
  dropped = filter_devices(r);
  device_rules(r);
  ar_policy_note(r, "devices", dropped ? "tightened" : "set",
                 "null zero full random urandom tty ptmx%s",
                 r->hp->n_devices ? " + host list" : "");
  return 0;
}

static bool has_path(char **v, size_t n, const char *p)
{
  for (size_t i = 0; i < n; i++)
    if (strcmp(v[i], p) == 0)
      return true;
  return false;
}

static size_t add_paths(char ***v, size_t *n, const char *const *add, size_t n_add)
{
  size_t added = 0;
  for (size_t i = 0; i < n_add; i++) {
    if (has_path(*v, *n, add[i]))
      continue;
    *v = xrealloc(*v, (*n + 2) * sizeof(char *));
    (*v)[(*n)++] = xstrdup(add[i]);
    (*v)[*n] = NULL;
    added++;
  }
  return added;
}

/* Filesystems that are windows onto the kernel: written to, they set host-wide knobs
 * (/sys/power/state, core_pattern through a second procfs) or lift the job's own limits (a
 * writable cgroup mount holds its pids.max and memory.limit_in_bytes). */
static const char *const kernel_fs[] = {"sysfs",      "cgroup",     "cgroup2",     "debugfs",
                                        "tracefs",    "securityfs", "configfs",    "efivarfs",
                                        "pstore",     "bpf",        "binfmt_misc", "fusectl",
                                        "rpc_pipefs", "nfsd",       "selinuxfs"};

/* path names dir, give or take repeated slashes, "." parts and a trailing slash. */
static bool path_is(const char *path, const char *dir)
{
  cleanup_free char *copy = xstrdup(path);
  char *save = NULL;
  size_t len = 0, cap = strlen(path) + 2;
  cleanup_free char *norm = xmalloc(cap);
  norm[0] = '\0';
  for (char *t = strtok_r(copy, "/", &save); t; t = strtok_r(NULL, "/", &save)) {
    if (strcmp(t, ".") == 0)
      continue;
    len += snprintf(norm + len, cap - len, "/%s", t);
  }
  return strcmp(len ? norm : "/", dir) == 0;
}

/* path is dir or below it */
static bool path_under(const char *path, const char *dir)
{
  size_t n = strlen(dir);
  return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

static bool kernel_mount(const struct ar_mount *m, bool *bind)
{
  *bind = false;
  if (m->type && strcmp(m->type, "proc") == 0)
    return !path_is(m->destination, "/proc"); /* the one at /proc gets the readonly paths */
  for (size_t i = 0; m->type && i < ARRAY_SIZE(kernel_fs); i++)
    if (strcmp(m->type, kernel_fs[i]) == 0)
      return true;
  for (size_t i = 0; i < m->n_options; i++)
    if (strcmp(m->options[i], "bind") == 0 || strcmp(m->options[i], "rbind") == 0)
      *bind = true;
  if (*bind && m->source) {
    cleanup_free char *real = realpath(m->source, NULL);
    const char *src = real ? real : m->source;
    return path_under(src, "/proc") || path_under(src, "/sys");
  }
  return false;
}

static bool has_option(const struct ar_mount *m, const char *opt)
{
  for (size_t i = 0; i < m->n_options; i++)
    if (strcmp(m->options[i], opt) == 0)
      return true;
  return false;
}

static void add_option(struct ar_mount *m, const char *opt)
{
  m->options = xrealloc(m->options, (m->n_options + 2) * sizeof(char *));
  m->options[m->n_options++] = xstrdup(opt);
  m->options[m->n_options] = NULL;
}

/* Drop rw and rrw, add ro (and rro on binds, whose submounts a plain ro would miss). */
static bool force_readonly(struct ar_mount *m, bool bind)
{
  size_t keep = 0;
  bool changed = false;
  for (size_t i = 0; i < m->n_options; i++) {
    if (strcmp(m->options[i], "rw") == 0 || strcmp(m->options[i], "rrw") == 0) {
      free(m->options[i]);
      changed = true;
      continue;
    }
    m->options[keep++] = m->options[i];
  }
  m->n_options = keep;
  if (m->options)
    m->options[keep] = NULL;
  if (!has_option(m, "ro"))
    add_option(m, "ro"), changed = true;
  if (bind && !has_option(m, "rro"))
    add_option(m, "rro"), changed = true;
  return changed;
}

static void kernel_mounts_readonly(struct ar_policy_run *r)
{
  for (size_t i = 0; i < r->s->n_mounts; i++) {
    struct ar_mount *m = &r->s->mounts[i];
    bool bind;
    if (m->destination && kernel_mount(m, &bind) && force_readonly(m, bind))
      ar_policy_note(r, "masked_paths", "tightened", "%s (%s) mounted read-only", m->destination,
                     bind ? m->source : m->type);
  }
}

int ar_policy_paths(struct ar_policy_run *r)
{
  struct ar_linux *l = &r->s->linux_;
  size_t added;
  if (!r->hp->control[AR_CTL_MASKED_PATHS])
    return ar_policy_note(r, "masked_paths", "off", "host policy"), 0;
  added =
      add_paths(&l->masked_paths, &l->n_masked_paths, default_masked, ARRAY_SIZE(default_masked));
  added += add_paths(&l->readonly_paths, &l->n_readonly_paths, default_readonly,
                     ARRAY_SIZE(default_readonly));
  r->s->has_linux = true;
  ar_policy_note(r, "masked_paths", added ? "tightened" : "kept",
                 "OCI default masked and readonly paths present (%zu added)", added);
  kernel_mounts_readonly(r);
  return 0;
}

/* Sysctls the container's own namespaces confine (runc's list). */
static bool sysctl_namespaced(const struct ar_spec *s, const char *key)
{
  static const char *const ipc[] = {"kernel.msgmax", "kernel.msgmnb",         "kernel.msgmni",
                                    "kernel.sem",    "kernel.shmall",         "kernel.shmmax",
                                    "kernel.shmmni", "kernel.shm_rmid_forced"};
  for (size_t i = 0; i < ARRAY_SIZE(ipc); i++)
    if (strcmp(key, ipc[i]) == 0)
      return ar_spec_namespace(s, AR_NS_IPC) != NULL;
  if (strncmp(key, "fs.mqueue.", 10) == 0)
    return ar_spec_namespace(s, AR_NS_IPC) != NULL;
  if (strncmp(key, "net.", 4) == 0) /* the host's own after network=inherit on a host-net config */
    return ar_spec_namespace(s, AR_NS_NETWORK) != NULL;
  if (strcmp(key, "kernel.hostname") == 0 || strcmp(key, "kernel.domainname") == 0)
    return ar_spec_namespace(s, AR_NS_UTS) != NULL;
  return false;
}

int ar_policy_sysctl(struct ar_policy_run *r)
{
  struct ar_linux *l = &r->s->linux_;
  size_t keep = 0;
  if (!r->hp->control[AR_CTL_SYSCTL])
    return ar_policy_note(r, "sysctl", "off", "host policy"), 0;
  for (size_t i = 0; i < l->n_sysctl; i++) {
    if (sysctl_namespaced(r->s, l->sysctl[i].key)) {
      l->sysctl[keep++] = l->sysctl[i];
      continue;
    }
    ar_policy_note(r, "sysctl", "tightened", "dropped %s: not confined by the namespaces",
                   l->sysctl[i].key);
    free(l->sysctl[i].key);
    free(l->sysctl[i].value);
  }
  l->n_sysctl = keep;
  return 0;
}
