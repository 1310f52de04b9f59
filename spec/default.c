/* The config `agentrun spec` writes: the same as runc 1.1's `runc spec` (and `--rootless`), so
 * tools and tests written for runc's default bundle work unchanged.  Only ociVersion (ours) and
 * the hostname differ. */
#include <config.h>
#include "spec/parse.h"

#include <string.h>
#include <unistd.h>

#include "runtime/utils.h"

#define DEFAULT_HOSTNAME "agentrun"

static const char *const default_env[] = {
    "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    "TERM=xterm",
};

static const char *const default_caps[] = {"CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE"};

static const char *const masked_paths[] = {
    "/proc/acpi",          "/proc/asound",     "/proc/kcore",       "/proc/keys",
    "/proc/latency_stats", "/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug",
    "/sys/firmware",       "/proc/scsi",
};

static const char *const readonly_paths[] = {
    "/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger",
};

struct mount_tmpl {
  const char *destination, *type, *source;
  const char *options[8]; /* NULL-terminated */
};

static const struct mount_tmpl default_mounts[] = {
    {"/proc", "proc", "proc", {NULL}},
    {"/dev", "tmpfs", "tmpfs", {"nosuid", "strictatime", "mode=755", "size=65536k", NULL}},
    {"/dev/pts",
     "devpts",
     "devpts",
     {"nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620", "gid=5", NULL}},
    {"/dev/shm", "tmpfs", "shm", {"nosuid", "noexec", "nodev", "mode=1777", "size=65536k", NULL}},
    {"/dev/mqueue", "mqueue", "mqueue", {"nosuid", "noexec", "nodev", NULL}},
    {"/sys", "sysfs", "sysfs", {"nosuid", "noexec", "nodev", "ro", NULL}},
    {"/sys/fs/cgroup", "cgroup", "cgroup", {"nosuid", "noexec", "nodev", "relatime", "ro", NULL}},
};

static char **strv(const char *const *v, size_t n, size_t *ret_n)
{
  *ret_n = n;
  return ar_strv_dup((char *const *)v, n);
}

static size_t strv_count(const char *const *v)
{
  size_t n = 0;

  while (v[n] != NULL)
    n++;
  return n;
}

static struct ar_process *default_process(void)
{
  struct ar_process *p = xcalloc(1, sizeof(*p));
  static const char *const args[] = {"sh"};

  p->terminal = true;
  p->args = strv(args, ARRAY_SIZE(args), &p->n_args);
  p->env = strv(default_env, ARRAY_SIZE(default_env), &p->n_env);
  p->cwd = xstrdup("/");
  p->has_capabilities = true;
  for (int s = 0; s < AR_CAP_NSETS; s++) {
    if (s == AR_CAP_INHERITABLE)
      continue; /* runc leaves inheritable empty */
    p->capabilities.names[s] =
        strv(default_caps, ARRAY_SIZE(default_caps), &p->capabilities.n_names[s]);
  }
  p->rlimits = xcalloc(1, sizeof(*p->rlimits));
  p->n_rlimits = 1;
  p->rlimits[0] = (struct ar_rlimit){.type = xstrdup("RLIMIT_NOFILE"),
                                     .resource = ar_rlimit_from_name("RLIMIT_NOFILE"),
                                     .hard = 1024,
                                     .soft = 1024};
  p->no_new_privileges = true;
  return p;
}

static void default_mounts_into(struct ar_spec *s, bool rootless)
{
  s->n_mounts = ARRAY_SIZE(default_mounts);
  s->mounts = xcalloc(s->n_mounts, sizeof(*s->mounts));
  for (size_t i = 0; i < s->n_mounts; i++) {
    const struct mount_tmpl *t = &default_mounts[i];
    struct ar_mount *m = &s->mounts[i];
    size_t n = strv_count(t->options);

    /* rootless: no gid=5 on devpts (that group is not mapped), /sys bind-mounted from the host
     * since sysfs cannot be mounted without owning the network namespace */
    if (rootless && strcmp(t->destination, "/dev/pts") == 0)
      n--;
    if (rootless && strcmp(t->destination, "/sys") == 0) {
      static const char *const sys_opts[] = {"rbind", "nosuid", "noexec", "nodev", "ro"};

      m->destination = xstrdup("/sys");
      m->type = xstrdup("none");
      m->source = xstrdup("/sys");
      m->options = strv(sys_opts, ARRAY_SIZE(sys_opts), &m->n_options);
      continue;
    }
    m->destination = xstrdup(t->destination);
    m->type = xstrdup(t->type);
    m->source = xstrdup(t->source);
    if (n > 0)
      m->options = strv(t->options, n, &m->n_options);
  }
}

static void add_namespaces(struct ar_linux *l, const enum ar_ns_type *types, size_t n)
{
  l->namespaces = xcalloc(n, sizeof(*l->namespaces));
  l->n_namespaces = n;
  for (size_t i = 0; i < n; i++)
    l->namespaces[i].type = types[i];
}

static void default_linux(struct ar_linux *l, bool rootless)
{
  static const enum ar_ns_type ns[] = {AR_NS_PID, AR_NS_NETWORK, AR_NS_IPC, AR_NS_UTS, AR_NS_MOUNT};
  /* rootless keeps the host network: a new one would have no connectivity at all */
  static const enum ar_ns_type ns_rootless[] = {AR_NS_PID, AR_NS_IPC, AR_NS_UTS, AR_NS_MOUNT,
                                                AR_NS_USER};

  if (rootless) {
    add_namespaces(l, ns_rootless, ARRAY_SIZE(ns_rootless));
    l->uid_mappings = xcalloc(1, sizeof(*l->uid_mappings));
    l->n_uid_mappings = 1;
    l->uid_mappings[0] = (struct ar_id_mapping){.container_id = 0, .host_id = geteuid(), .size = 1};
    l->gid_mappings = xcalloc(1, sizeof(*l->gid_mappings));
    l->n_gid_mappings = 1;
    l->gid_mappings[0] = (struct ar_id_mapping){.container_id = 0, .host_id = getegid(), .size = 1};
  } else {
    add_namespaces(l, ns, ARRAY_SIZE(ns));
    /* deny every device by default; the runtime allows the standard ones itself */
    l->has_resources = true;
    l->resources.devices = xcalloc(1, sizeof(*l->resources.devices));
    l->resources.n_devices = 1;
    l->resources.devices[0] =
        (struct ar_device_rule){.allow = false, .type = 'a', .access = xstrdup("rwm")};
  }
  l->masked_paths = strv(masked_paths, ARRAY_SIZE(masked_paths), &l->n_masked_paths);
  l->readonly_paths = strv(readonly_paths, ARRAY_SIZE(readonly_paths), &l->n_readonly_paths);
}

struct ar_spec *ar_spec_default(bool rootless)
{
  struct ar_spec *s = xcalloc(1, sizeof(*s));

  s->oci_version = xstrdup(AR_OCI_VERSION);
  s->process = default_process();
  s->root_path = xstrdup("rootfs");
  s->root_readonly = true;
  s->hostname = xstrdup(DEFAULT_HOSTNAME);
  default_mounts_into(s, rootless);
  s->has_linux = true;
  default_linux(&s->linux_, rootless);
  return s;
}
