/* sandbox: write a bundle for one job and run it through the same pipeline as `run`.
 * The isolation is entirely the policy's and the runtime's; this file only builds a spec. */
#include <config.h>
#include "sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

#include "policy.h"
#include "utils.h"

#define SAFE_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

/* The host's system dirs, read-only; a merged-/usr symlink is copied as a symlink. */
static const char *const system_dirs[] = {"/usr",   "/bin",   "/sbin",  "/lib",
                                          "/lib32", "/lib64", "/libx32"};
/* The minimal /etc: never shadow, never anything of root's or the users'. */
static const char *const etc_files[] = {
    "/etc/passwd",       "/etc/group",      "/etc/hosts",        "/etc/nsswitch.conf",
    "/etc/ld.so.cache",  "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/ssl/certs",
    "/etc/alternatives", "/etc/localtime",  "/etc/python3",      "/etc/python3.11",
    "/etc/python3.12",   "/etc/python3.13", "/etc/resolv.conf",  "/etc/mime.types"};

static void add_strv(char ***v, size_t *n, char *s)
{
  *v = xrealloc(*v, (*n + 2) * sizeof(char *));
  (*v)[(*n)++] = s;
  (*v)[*n] = NULL;
}

/* The embedded rootfs: an empty dir whose mount points the runtime fills. */
static int embedded_rootfs(struct ar_spec *s, const char *rootfs, ar_err *err)
{
  struct stat st;
  for (size_t i = 0; i < ARRAY_SIZE(system_dirs); i++) {
    char target[4096];
    ssize_t n;
    if (lstat(system_dirs[i], &st) < 0)
      continue;
    if (S_ISLNK(st.st_mode) && (n = readlink(system_dirs[i], target, sizeof(target) - 1)) > 0) {
      cleanup_free char *link = xasprintf("%s%s", rootfs, system_dirs[i]);
      target[n] = '\0';
      if (symlink(target, link) < 0)
        return ar_error(err, errno, "sandbox rootfs: symlink '%s'", link);
      continue;
    }
    ar_spec_add_mount(s, system_dirs[i], "bind", system_dirs[i], "rbind,ro,nosuid,nodev");
  }
  for (size_t i = 0; i < ARRAY_SIZE(etc_files); i++)
    if (stat(etc_files[i], &st) == 0)
      ar_spec_add_mount(s, etc_files[i], "bind", etc_files[i], "bind,ro,nosuid,nodev,noexec");
  return 0;
}

static void base_mounts(struct ar_spec *s)
{
  ar_spec_add_mount(s, "/proc", "proc", "proc", "nosuid,noexec,nodev");
  ar_spec_add_mount(s, "/dev", "tmpfs", "tmpfs", "nosuid,strictatime,mode=755,size=65536k");
  ar_spec_add_mount(s, "/dev/pts", "devpts", "devpts",
                    "nosuid,noexec,newinstance,ptmxmode=0666,mode=0620");
  ar_spec_add_mount(s, "/dev/mqueue", "mqueue", "mqueue", "nosuid,noexec,nodev");
}

/* --mount SRC:DST[:ro|:rw] */
static int user_mount(struct ar_spec *s, const char *arg, ar_err *err)
{
  cleanup_free char *copy = xstrdup(arg);
  char *src = copy, *dst = strchr(copy, ':'), *mode;
  char real[4096];
  if (dst == NULL)
    return ar_error(err, 0, "--mount \"%s\": expected SRC:DST[:ro|:rw]", arg);
  *dst++ = '\0';
  mode = strchr(dst, ':');
  if (mode)
    *mode++ = '\0';
  if (mode && strcmp(mode, "ro") != 0 && strcmp(mode, "rw") != 0)
    return ar_error(err, 0, "--mount \"%s\": mode must be ro or rw", arg);
  if (dst[0] != '/' || realpath(src, real) == NULL)
    return ar_error(err, dst[0] != '/' ? 0 : errno, "--mount \"%s\": %s", arg,
                    dst[0] != '/' ? "DST must be absolute" : "SRC");
  ar_spec_add_mount(s, dst, "bind", real,
                    mode && strcmp(mode, "rw") == 0 ? "rbind,rw,nosuid,nodev"
                                                    : "rbind,ro,nosuid,nodev");
  return 0;
}

static void set_annotation(struct ar_spec *s, const char *key, const char *value)
{
  cleanup_free char *k = xasprintf(AR_ANNOTATION_PREFIX "%s", key);
  if (value)
    ar_kv_set(&s->annotations, &s->n_annotations, k, value);
}

static bool plain_word(const char *s)
{
  return s && *s && strlen(s) < 64 &&
         strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789-") == strlen(s);
}

/* The host's environment is not inherited: only safe PATH, LANG, TERM, and what --env sets. */
static void process_env(struct ar_process *p, const struct ar_sandbox_opts *o)
{
  const char *term = getenv("TERM");
  add_strv(&p->env, &p->n_env, xstrdup("PATH=" SAFE_PATH));
  add_strv(&p->env, &p->n_env, xstrdup("LANG=C.UTF-8"));
  add_strv(&p->env, &p->n_env, xstrdup("HOME=/tmp"));
  if (o->tty)
    add_strv(&p->env, &p->n_env, xasprintf("TERM=%s", plain_word(term) ? term : "xterm"));
  for (size_t i = 0; i < o->n_env; i++)
    add_strv(&p->env, &p->n_env, xstrdup(o->env[i]));
}

static int build_process(struct ar_spec *s, const struct ar_sandbox_opts *o, ar_err *err)
{
  struct ar_process *p = s->process = xcalloc(1, sizeof(*p));
  for (size_t i = 0; i < o->n_env; i++)
    if (strchr(o->env[i], '=') == NULL || o->env[i][0] == '=')
      return ar_error(err, 0, "--env \"%s\": expected K=V", o->env[i]);
  p->args = ar_strv_dup(o->argv, o->n_argv);
  p->n_args = o->n_argv;
  p->terminal = o->tty;
  p->user.uid = o->uid;
  p->user.gid = o->gid;
  p->cwd = xstrdup(o->workdir ? "/workspace" : "/tmp");
  p->no_new_privileges = true;
  process_env(p, o);
  return 0;
}

static void build_linux(struct ar_spec *s)
{
  static const enum ar_ns_type ns[] = {AR_NS_PID, AR_NS_NETWORK, AR_NS_IPC,
                                       AR_NS_UTS, AR_NS_MOUNT,   AR_NS_CGROUP};
  s->has_linux = true;
  s->linux_.namespaces = xcalloc(ARRAY_SIZE(ns), sizeof(struct ar_namespace));
  for (size_t i = 0; i < ARRAY_SIZE(ns); i++)
    s->linux_.namespaces[i].type = ns[i];
  s->linux_.n_namespaces = ARRAY_SIZE(ns);
  s->hostname = xstrdup("sandbox");
}

int ar_sandbox_spec(const struct ar_sandbox_opts *o, const char *rootfs_dir, struct ar_spec **ret,
                    ar_err *err)
{
  struct ar_spec *s = xcalloc(1, sizeof(*s));
  char real[4096];
  s->oci_version = xstrdup(AR_OCI_VERSION);
  s->root_readonly = true;
  build_linux(s);
  base_mounts(s);
  if (o->rootfs) {
    if (realpath(o->rootfs, real) == NULL) {
      ar_spec_free(s);
      return ar_error(err, errno, "--rootfs '%s'", o->rootfs);
    }
    s->root_path = xstrdup(real);
  } else {
    s->root_path = xstrdup(rootfs_dir);
    if (embedded_rootfs(s, rootfs_dir, err) < 0)
      goto fail;
  }
  if (o->workdir) {
    if (realpath(o->workdir, real) == NULL) {
      ar_error(err, errno, "--workdir '%s'", o->workdir);
      goto fail;
    }
    ar_spec_add_mount(s, "/workspace", "bind", real, "rbind,rw,nosuid,nodev");
  }
  for (size_t i = 0; i < o->n_mounts; i++)
    if (user_mount(s, o->mounts[i], err) < 0)
      goto fail;
  if (build_process(s, o, err) < 0)
    goto fail;
  set_annotation(s, "timeout", o->timeout);
  set_annotation(s, "memory", o->memory);
  set_annotation(s, "pids", o->pids);
  set_annotation(s, "cpus", o->cpus);
  set_annotation(s, "tmp-size", o->tmp_size);
  set_annotation(s, "network", o->net);
  *ret = s;
  return 0;
fail:
  ar_spec_free(s);
  return -1;
}
