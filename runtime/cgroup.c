/* Cgroups: where the container's cgroup lives in each hierarchy, and its life cycle (create,
 * enter, freeze, kill, destroy).  The limits themselves are written by cgroup-v1.c, cgroup-v2.c
 * and cgroup-devices.c.
 *
 * Placement (runc's cgroupfs rules):
 *  - an absolute cgroupsPath is used as is under every hierarchy's root;
 *  - a relative one nests under the caller's own cgroup in each hierarchy (/proc/self/cgroup);
 *  - an empty one is the relative path "<id>".  runc does the same (its cgroup Name with no
 *    Parent is relative), and it matters here: the caller may sit in a memory cgroup that is
 *    its only budget (as on the machines agentrun is built on), and containers must stay in it;
 *  - on pure v2 a relative path nests under the PARENT of the caller's cgroup, as runc does: the
 *    caller's own cgroup holds the caller, so the kernel's no-internal-process rule forbids
 *    enabling controllers in its subtree_control.  The caller's own cgroup "/" is used as is;
 *  - systemd ("slice:prefix:name") maps to the cgroupfs path systemd would use; we never talk to
 *    systemd, we only make the same directories.
 * In hybrid mode the v1 controllers do the work; the container's processes are placed at the
 * same (relative) path of the unified hierarchy too, which also carries controllers that exist
 * only there (hugetlb on some kernels). */
#include <config.h>
#include "cgroup-internal.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <linux/magic.h>

#include "log.h"
#include "utils.h"

#define CGROUP_ROOT "/sys/fs/cgroup"
#define SYSTEMD_DEFAULT_SLICE "system.slice"
#define SYSTEMD_DEFAULT_PREFIX "agentrun"

/* ---- small file helpers ---- */

int ar_cg_write(const char *dir, const char *file, const char *value, ar_err *err)
{
  cleanup_free char *p = xasprintf("%s/%s", dir, file);
  cleanup_close int fd = open(p, O_WRONLY | O_CLOEXEC);
  size_t len = strlen(value);
  ssize_t n;

  if (fd < 0)
    return ar_error(err, errno, "open '%s'", p);
  do
    n = write(fd, value, len);
  while (n < 0 && errno == EINTR);
  if (n < 0)
    return ar_error(err, errno, "write '%s' to '%s'", value, p);
  if ((size_t)n != len)
    return ar_error(err, EIO, "short write to '%s'", p);
  return 0;
}

int ar_cg_writef(const char *dir, const char *file, ar_err *err, const char *fmt, ...)
{
  cleanup_free char *v = NULL;
  va_list ap;

  va_start(ap, fmt);
  if (vasprintf(&v, fmt, ap) < 0)
    abort();
  va_end(ap);
  return ar_cg_write(dir, file, v, err);
}

int ar_cg_read(const char *dir, const char *file, char **ret, ar_err *err)
{
  cleanup_free char *p = xasprintf("%s/%s", dir, file);
  return ar_read_file(p, ret, NULL, err);
}

bool ar_cg_exists(const char *dir, const char *file)
{
  cleanup_free char *p = xasprintf("%s/%s", dir, file);
  return access(p, F_OK) == 0;
}

static int read_quiet(const char *dir, const char *file, char **ret)
{
  cleanup_err ar_err e = NULL;
  if (ar_cg_read(dir, file, ret, &e) < 0)
    return -(e->status ? e->status : EIO);
  return 0;
}

static int parse_u64(const char *s, uint64_t max_value, uint64_t *ret)
{
  char *end;
  unsigned long long v;

  while (isspace((unsigned char)*s))
    s++;
  if (strncmp(s, "max", 3) == 0) {
    *ret = max_value;
    return 0;
  }
  errno = 0;
  v = strtoull(s, &end, 10);
  if (errno || end == s)
    return -EINVAL;
  *ret = v;
  return 0;
}

int ar_cg_read_u64(const char *dir, const char *file, uint64_t max_value, uint64_t *ret)
{
  cleanup_free char *s = NULL;
  int r = read_quiet(dir, file, &s);
  return r < 0 ? r : parse_u64(s, max_value, ret);
}

int ar_cg_read_key(const char *dir, const char *file, const char *key, uint64_t *ret)
{
  cleanup_free char *s = NULL;
  size_t klen = strlen(key);
  int r = read_quiet(dir, file, &s);

  if (r < 0)
    return r;
  for (char *line = s; *line;) {
    char *nl = strchr(line, '\n');
    if (strncmp(line, key, klen) == 0 && line[klen] == ' ')
      return parse_u64(line + klen + 1, UINT64_MAX, ret);
    if (nl == NULL)
      break;
    line = nl + 1;
  }
  return -ENOENT;
}

void ar_cg_fmt_limit(char *buf, size_t len, int64_t v, bool v2)
{
  if (v < 0)
    snprintf(buf, len, "%s", v2 ? "max" : "-1");
  else
    snprintf(buf, len, "%lld", (long long)v);
}

/* ---- mode ---- */

enum ar_cgroup_mode ar_cgroup_detect_mode(void)
{
  struct statfs sf;

  if (statfs(CGROUP_ROOT, &sf) == 0 && sf.f_type == CGROUP2_SUPER_MAGIC)
    return AR_CGROUP_V2;
  if (statfs(CGROUP_ROOT "/unified", &sf) == 0 && sf.f_type == CGROUP2_SUPER_MAGIC)
    return AR_CGROUP_HYBRID;
  return AR_CGROUP_V1;
}

static const char *mode_name(enum ar_cgroup_mode m)
{
  return m == AR_CGROUP_V2 ? "v2" : m == AR_CGROUP_HYBRID ? "hybrid" : "v1";
}

/* ---- paths ---- */

/* Lexically clean p as if it were rooted at "/", so ".." can never climb out (runc's
 * CleanPath).  Always returns "/" or "/a/b". */
static char *clean_path(const char *p)
{
  cleanup_free char *copy = xstrdup(p);
  char **parts = xcalloc(strlen(p) / 2 + 2, sizeof(char *));
  size_t n = 0, len = 1;
  char *save = NULL, *out;

  for (char *t = strtok_r(copy, "/", &save); t; t = strtok_r(NULL, "/", &save)) {
    if (strcmp(t, ".") == 0)
      continue;
    if (strcmp(t, "..") == 0) {
      if (n > 0)
        n--;
      continue;
    }
    parts[n++] = t;
  }
  for (size_t i = 0; i < n; i++)
    len += strlen(parts[i]) + 1;
  out = xmalloc(len + 1);
  strcpy(out, n ? "" : "/");
  for (size_t i = 0; i < n; i++) {
    strcat(out, "/");
    strcat(out, parts[i]);
  }
  free(parts);
  return out;
}

static char *join_path(const char *a, const char *b)
{
  cleanup_free char *j = xasprintf("%s/%s", a, b);
  return clean_path(j);
}

/* "a-b.slice" -> "/a.slice/a-b.slice", "-.slice" -> "/" (systemd's unit naming). */
static int expand_slice(const char *slice, char **ret, ar_err *err)
{
  size_t len = strlen(slice), sfx = strlen(".slice");
  cleanup_free char *name = NULL;
  char *path, *prefix;

  if (len <= sfx || strcmp(slice + len - sfx, ".slice") != 0 || strchr(slice, '/'))
    return ar_error(err, 0, "invalid slice name '%s'", slice);
  name = xstrndup(slice, len - sfx);
  if (strcmp(name, "-") == 0) {
    *ret = xstrdup("/");
    return 0;
  }
  if (name[0] == '-' || name[strlen(name) - 1] == '-' || strstr(name, "--"))
    return ar_error(err, 0, "invalid slice name '%s'", slice);
  path = xstrdup("");
  prefix = xstrdup("");
  for (char *s = name, *dash;; s = dash + 1) {
    char *np, *npre;
    dash = strchr(s, '-');
    if (dash)
      *dash = '\0';
    np = xasprintf("%s/%s%s.slice", path, prefix, s);
    npre = xasprintf("%s%s-", prefix, s);
    free(path);
    free(prefix);
    path = np;
    prefix = npre;
    if (dash == NULL)
      break;
  }
  free(prefix);
  *ret = path;
  return 0;
}

static bool bad_component(const char *s)
{
  return *s == '\0' || strchr(s, '/') || strcmp(s, ".") == 0 || strcmp(s, "..") == 0;
}

/* "slice:prefix:name" -> "/<expanded slice>/<prefix>-<name>.scope" (or ".../<name>" when name
 * is itself a slice), as runc's systemd driver names the unit. */
static int systemd_path(const char *cgroups_path, const char *id, char **ret, ar_err *err)
{
  cleanup_free char *copy = NULL, *slice_path = NULL, *unit = NULL;
  const char *slice = SYSTEMD_DEFAULT_SLICE, *prefix = SYSTEMD_DEFAULT_PREFIX, *name = id;

  if (cgroups_path && *cgroups_path) {
    char *c1, *c2;
    copy = xstrdup(cgroups_path);
    c1 = strchr(copy, ':');
    c2 = c1 ? strchr(c1 + 1, ':') : NULL;
    if (c1 == NULL || c2 == NULL || strchr(c2 + 1, ':'))
      return ar_error(err, 0, "cgroupsPath '%s': expected \"slice:prefix:name\" for systemd",
                      cgroups_path);
    *c1 = *c2 = '\0';
    slice = *copy ? copy : SYSTEMD_DEFAULT_SLICE;
    prefix = c1 + 1;
    name = c2 + 1;
  }
  if (bad_component(name) || strchr(prefix, '/'))
    return ar_error(err, 0, "cgroupsPath '%s': invalid unit name", cgroups_path);
  if (expand_slice(slice, &slice_path, err) < 0)
    return ar_error_wrap(err, "cgroupsPath '%s'", cgroups_path ? cgroups_path : "");
  if (strlen(name) > 6 && strcmp(name + strlen(name) - 6, ".slice") == 0)
    unit = xstrdup(name);
  else
    unit = xasprintf("%s-%s.scope", prefix, name);
  *ret = join_path(slice_path, unit);
  return 0;
}

/* ---- /proc/self/cgroup and mountinfo ---- */

struct own_entry {
  char *controllers;
  char *path;
};

static void own_free(struct own_entry *o, size_t n)
{
  for (size_t i = 0; i < n; i++) {
    free(o[i].controllers);
    free(o[i].path);
  }
  free(o);
}

static int read_own(struct own_entry **ret, size_t *ret_n, ar_err *err)
{
  cleanup_free char *s = NULL;
  struct own_entry *o = NULL;
  size_t n = 0;
  char *save = NULL;

  if (ar_read_file("/proc/self/cgroup", &s, NULL, err) < 0)
    return -1;
  for (char *line = strtok_r(s, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
    if (c2 == NULL)
      continue;
    *c2 = '\0';
    o = xrealloc(o, (n + 1) * sizeof(*o));
    o[n].controllers = xstrdup(c1 + 1);
    o[n].path = xstrdup(c2 + 1);
    n++;
  }
  *ret = o;
  *ret_n = n;
  return 0;
}

static const char *own_path(struct own_entry *o, size_t n, const char *controllers)
{
  for (size_t i = 0; i < n; i++)
    if (strcmp(o[i].controllers, controllers) == 0)
      return o[i].path;
  return NULL;
}

struct mnt {
  char *root;
  char *point;
  char *opts; /* super options with a trailing ',' for token search: ",rw,cpu,cpuacct," */
  bool v2;
};

static void mnt_free(struct mnt *m, size_t n)
{
  for (size_t i = 0; i < n; i++) {
    free(m[i].root);
    free(m[i].point);
    free(m[i].opts);
  }
  free(m);
}

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static char *unescape(const char *s)
{
  char *out = xmalloc(strlen(s) + 1), *o = out;
  while (*s) {
    if (s[0] == '\\' && s[1] >= '0' && s[1] <= '7' && s[2] >= '0' && s[2] <= '7' && s[3] >= '0' &&
        s[3] <= '7') {
      *o++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
      s += 4;
    } else {
      *o++ = *s++;
    }
  }
  *o = '\0';
  return out;
}

static int read_mounts(struct mnt **ret, size_t *ret_n, ar_err *err)
{
  cleanup_free char *s = NULL;
  struct mnt *m = NULL;
  size_t n = 0;
  char *save = NULL;

  if (ar_read_file("/proc/self/mountinfo", &s, NULL, err) < 0)
    return -1;
  for (char *line = strtok_r(s, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    char *f[6] = {0}, *sep = strstr(line, " - "), *fs, *src, *sopts, *save2 = NULL;
    if (sep == NULL)
      continue;
    *sep = '\0';
    f[0] = strtok_r(line, " ", &save2);
    for (int i = 1; i < 6 && f[i - 1]; i++)
      f[i] = strtok_r(NULL, " ", &save2);
    save2 = NULL;
    fs = strtok_r(sep + 3, " ", &save2);
    src = fs ? strtok_r(NULL, " ", &save2) : NULL;
    sopts = src ? strtok_r(NULL, " ", &save2) : NULL;
    if (f[4] == NULL || fs == NULL || (strcmp(fs, "cgroup") != 0 && strcmp(fs, "cgroup2") != 0))
      continue;
    m = xrealloc(m, (n + 1) * sizeof(*m));
    m[n].root = unescape(f[3]);
    m[n].point = unescape(f[4]);
    m[n].opts = xasprintf(",%s,", sopts ? sopts : "");
    m[n].v2 = strcmp(fs, "cgroup2") == 0;
    n++;
  }
  *ret = m;
  *ret_n = n;
  return 0;
}

/* The mount of the v1 hierarchy with these controllers, or of cgroup2 ("") at the place the mode
 * puts it. */
static struct mnt *find_mount(struct mnt *m, size_t n, const char *controllers,
                              enum ar_cgroup_mode mode)
{
  if (*controllers == '\0') {
    const char *want = mode == AR_CGROUP_V2 ? CGROUP_ROOT : CGROUP_ROOT "/unified";
    for (size_t i = 0; i < n; i++)
      if (m[i].v2 && strcmp(m[i].point, want) == 0)
        return &m[i];
    for (size_t i = 0; i < n; i++)
      if (m[i].v2)
        return &m[i];
    return NULL;
  }
  {
    cleanup_free char *first = xstrndup(controllers, strcspn(controllers, ","));
    cleanup_free char *tok = xasprintf(",%s,", first);
    /* The same hierarchy can be mounted more than once: prefer the usual place. */
    for (size_t i = 0; i < n; i++)
      if (!m[i].v2 && strstr(m[i].opts, tok) &&
          strncmp(m[i].point, CGROUP_ROOT "/", sizeof(CGROUP_ROOT)) == 0)
        return &m[i];
    for (size_t i = 0; i < n; i++)
      if (!m[i].v2 && strstr(m[i].opts, tok))
        return &m[i];
  }
  return NULL;
}

/* mount point + rel, minus the part of rel the mount's root already covers. */
static char *dir_in_mount(const struct mnt *m, const char *rel)
{
  size_t rl = strlen(m->root);
  if (strcmp(m->root, "/") != 0 && strncmp(rel, m->root, rl) == 0 &&
      (rel[rl] == '/' || rel[rl] == '\0'))
    rel += rl;
  return xasprintf("%s%s", m->point, strcmp(rel, "/") == 0 ? "" : rel);
}

/* outer == inner, or inner is below outer. */
static bool path_contains(const char *outer, const char *inner)
{
  size_t ol = strlen(outer);
  if (strcmp(outer, "/") == 0)
    return true;
  return strncmp(inner, outer, ol) == 0 && (inner[ol] == '\0' || inner[ol] == '/');
}

/* The container's cgroup must never hold the runtime: kill and destroy would hit it, and every
 * other process around it (cgroupsPath "/" or an absolute path naming one of our ancestors). */
static int check_rel(const char *rel, const char *own, const char *cgroups_path, ar_err *err)
{
  if (path_contains(rel, own ? own : "/"))
    return ar_error(err, 0, "cgroup: cgroupsPath '%s' (%s) would contain agentrun's own cgroup %s",
                    cgroups_path ? cgroups_path : "", rel, own ? own : "/");
  return 0;
}

static void add_hier(struct ar_cgroup *cg, const char *controllers, const char *rel,
                     const struct mnt *m)
{
  struct ar_cg_hier *h;
  cg->h = xrealloc(cg->h, (cg->n_h + 1) * sizeof(*cg->h));
  h = &cg->h[cg->n_h++];
  h->controllers = xstrdup(controllers);
  h->rel = xstrdup(rel);
  h->mount = xstrdup(m->point);
  h->path = dir_in_mount(m, rel);
  h->created = false;
}

static struct ar_cgroup *cg_alloc(enum ar_cgroup_mode mode)
{
  struct ar_cgroup *cg = xcalloc(1, sizeof(*cg));
  cg->mode = mode;
  cg->v2_fd = -1;
  return cg;
}

/* Where the cgroup goes in one hierarchy, whose caller's cgroup is `own`. */
static char *rel_for(const char *cgroups_path, const char *id, const char *fixed, const char *own,
                     bool pure_v2)
{
  cleanup_free char *base = NULL;
  if (fixed)
    return xstrdup(fixed);
  base = clean_path(own ? own : "/");
  if (pure_v2 && strcmp(base, "/") != 0) {
    char *slash = strrchr(base, '/');
    slash[slash == base ? 1 : 0] = '\0'; /* the parent: "/a/b" -> "/a", "/a" -> "/" */
  }
  return join_path(base, cgroups_path && *cgroups_path ? cgroups_path : id);
}

int ar_cgroup_new(const char *cgroups_path, const char *id, bool systemd, struct ar_cgroup **ret,
                  ar_err *err)
{
  enum ar_cgroup_mode mode = ar_cgroup_detect_mode();
  struct own_entry *own = NULL;
  struct mnt *m = NULL;
  size_t n_own = 0, n_m = 0;
  cleanup_free char *fixed = NULL;
  struct ar_cgroup *cg = NULL;
  int ret_val = -1;

  if (id == NULL || bad_component(id))
    return ar_error(err, 0, "cgroup: invalid container id '%s'", id ? id : "");
  if (systemd) {
    if (systemd_path(cgroups_path, id, &fixed, err) < 0)
      return -1;
  } else if (cgroups_path && cgroups_path[0] == '/') {
    fixed = clean_path(cgroups_path);
  }
  if (read_own(&own, &n_own, err) < 0 || read_mounts(&m, &n_m, err) < 0)
    goto out;
  cg = cg_alloc(mode);
  if (mode != AR_CGROUP_V2)
    for (size_t i = 0; i < n_own; i++) {
      struct mnt *mm;
      cleanup_free char *rel = NULL;
      if (own[i].controllers[0] == '\0' || !(mm = find_mount(m, n_m, own[i].controllers, mode)))
        continue; /* not mounted here: skip the hierarchy, as runc does */
      rel = rel_for(cgroups_path, id, fixed, own[i].path, false);
      if (check_rel(rel, own[i].path, cgroups_path, err) < 0)
        goto out;
      add_hier(cg, own[i].controllers, rel, mm);
    }
  if (mode != AR_CGROUP_V1) {
    struct mnt *mm = find_mount(m, n_m, "", mode);
    cleanup_free char *rel = NULL;
    if (mm == NULL) {
      ar_error(err, 0, "cgroup: no cgroup2 mount found");
      goto out;
    }
    rel = rel_for(cgroups_path, id, fixed, own_path(own, n_own, ""), mode == AR_CGROUP_V2);
    if (check_rel(rel, own_path(own, n_own, ""), cgroups_path, err) < 0)
      goto out;
    add_hier(cg, "", rel, mm);
  }
  if (cg->n_h == 0) {
    ar_error(err, 0, "cgroup: no cgroup hierarchy is mounted");
    goto out;
  }
  *ret = steal_pointer(&cg);
  ret_val = 0;
out:
  own_free(own, n_own);
  mnt_free(m, n_m);
  ar_cgroup_free(cg);
  return ret_val;
}

void ar_cgroup_free(struct ar_cgroup *cg)
{
  if (cg == NULL)
    return;
  for (size_t i = 0; i < cg->n_h; i++) {
    free(cg->h[i].controllers);
    free(cg->h[i].rel);
    free(cg->h[i].mount);
    free(cg->h[i].path);
  }
  free(cg->h);
  if (cg->v2_fd >= 0)
    close(cg->v2_fd);
  free(cg);
}

static bool has_controller(const char *list, const char *name)
{
  size_t len = strlen(name);
  for (const char *p = list; *p;) {
    size_t l = strcspn(p, ",");
    if (l == len && strncmp(p, name, len) == 0)
      return true;
    p += l;
    if (*p == ',')
      p++;
  }
  return false;
}

struct ar_cg_hier *ar_cg_unified(struct ar_cgroup *cg)
{
  for (size_t i = 0; i < cg->n_h; i++)
    if (cg->h[i].controllers[0] == '\0')
      return &cg->h[i];
  return NULL;
}

struct ar_cg_hier *ar_cg_find(struct ar_cgroup *cg, const char *name)
{
  if (name == NULL || *name == '\0' || cg->mode == AR_CGROUP_V2)
    return ar_cg_unified(cg);
  for (size_t i = 0; i < cg->n_h; i++)
    if (cg->h[i].controllers[0] && has_controller(cg->h[i].controllers, name))
      return &cg->h[i];
  return NULL;
}

const char *ar_cgroup_path(struct ar_cgroup *cg, const char *controller)
{
  struct ar_cg_hier *h = ar_cg_find(cg, controller);
  return h ? h->path : NULL;
}

/* ---- serialization: "<mode>;<controllers>:<rel>;..." with '%' and ';' in rel as %XX ---- */

char *ar_cgroup_serialize(const struct ar_cgroup *cg)
{
  size_t cap = 64, len;
  char *out = xmalloc(cap);

  len = (size_t)snprintf(out, cap, "%s", mode_name(cg->mode));
  for (size_t i = 0; i < cg->n_h; i++) {
    const struct ar_cg_hier *h = &cg->h[i];
    size_t need = len + strlen(h->controllers) + 3 * strlen(h->rel) + 3;
    if (need > cap)
      out = xrealloc(out, cap = need * 2);
    len += (size_t)sprintf(out + len, ";%s:", h->controllers);
    for (const char *p = h->rel; *p; p++)
      len += (size_t)(*p == '%' || *p == ';' || *p == '\n'
                          ? sprintf(out + len, "%%%02X", (unsigned char)*p)
                          : sprintf(out + len, "%c", *p));
  }
  return out;
}

static char *unpercent(const char *s, size_t n)
{
  char *out = xmalloc(n + 1), *o = out;
  for (size_t i = 0; i < n; i++) {
    if (s[i] == '%' && i + 2 < n && isxdigit((unsigned char)s[i + 1]) &&
        isxdigit((unsigned char)s[i + 2])) {
      char hex[3] = {s[i + 1], s[i + 2], '\0'};
      *o++ = (char)strtoul(hex, NULL, 16);
      i += 2;
    } else {
      *o++ = s[i];
    }
  }
  *o = '\0';
  return out;
}

int ar_cgroup_deserialize(const char *s, struct ar_cgroup **ret, ar_err *err)
{
  struct ar_cgroup *cg;
  struct mnt *m = NULL;
  size_t n_m = 0, ml = strcspn(s, ";");
  enum ar_cgroup_mode mode;

  if (ml == 2 && strncmp(s, "v2", 2) == 0)
    mode = AR_CGROUP_V2;
  else if (ml == 6 && strncmp(s, "hybrid", 6) == 0)
    mode = AR_CGROUP_HYBRID;
  else if (ml == 2 && strncmp(s, "v1", 2) == 0)
    mode = AR_CGROUP_V1;
  else
    return ar_error(err, 0, "cgroup: bad state '%s'", s);
  if (read_mounts(&m, &n_m, err) < 0)
    return -1;
  cg = cg_alloc(mode);
  for (const char *p = s + ml; *p == ';';) {
    const char *colon, *end;
    cleanup_free char *ctl = NULL, *rel = NULL;
    struct mnt *mm;
    p++;
    end = p + strcspn(p, ";");
    colon = memchr(p, ':', (size_t)(end - p));
    if (colon == NULL) {
      ar_cgroup_free(cg);
      mnt_free(m, n_m);
      return ar_error(err, 0, "cgroup: bad state '%s'", s);
    }
    ctl = xstrndup(p, (size_t)(colon - p));
    {
      cleanup_free char *raw = unpercent(colon + 1, (size_t)(end - colon - 1));
      rel = raw[0] == '/' ? clean_path(raw) : xstrdup("/"); /* never trust ".." from a file */
    }
    /* A hierarchy unmounted since create has nothing left of ours to manage. */
    if ((mm = find_mount(m, n_m, ctl, mode)) != NULL && strcmp(rel, "/") != 0)
      add_hier(cg, ctl, rel, mm);
    p = end;
  }
  mnt_free(m, n_m);
  *ret = cg;
  return 0;
}

/* ---- create / enter / update ---- */

static bool dir_exists(const char *p)
{
  struct stat st;
  return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool has_procs(const char *dir)
{
  cleanup_free char *s = NULL;
  return read_quiet(dir, "cgroup.procs", &s) == 0 && s[strspn(s, " \n")] != '\0';
}

static bool has_subdirs(const char *dir)
{
  cleanup_dir DIR *d = opendir(dir);
  struct dirent *de;
  while (d && (de = readdir(d)) != NULL)
    if (de->d_type == DT_DIR && strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
      return true;
  return false;
}

static int make_dir(struct ar_cg_hier *h, ar_err *err)
{
  cleanup_free char *parent = xstrdup(h->path);
  char *slash = strrchr(parent, '/');

  if (dir_exists(h->path)) {
    /* Joining a busy cgroup would let kill and destroy hit processes that are not ours. */
    if (has_procs(h->path) || has_subdirs(h->path))
      return ar_error(err, EBUSY, "cgroup '%s' already exists and is in use", h->path);
    return 0;
  }
  if (slash && slash != parent) {
    *slash = '\0';
    if (ar_mkdir_p(parent, 0755, err) < 0)
      return -1;
  }
  if (mkdir(h->path, 0755) < 0) {
    if (errno != EEXIST)
      return ar_error(err, errno, "mkdir '%s'", h->path);
    return 0;
  }
  h->created = true;
  return 0;
}

static int apply(struct ar_cgroup *cg, const struct ar_resources *res, bool update, ar_err *err)
{
  struct ar_cg_hier *u = ar_cg_unified(cg);

  if (res == NULL)
    return 0;
  if (cg->mode != AR_CGROUP_V2)
    return ar_cg_v1_apply(cg, res, update, err);
  if (u == NULL)
    return ar_error(err, ENOENT, "cgroup: the cgroup2 hierarchy is gone");
  if (ar_cg_v2_apply(u->path, res, update, err) == 0)
    return 0;
  /* A missing file almost always means the parent could not delegate the controller. */
  if (*err && (*err)->status == ENOENT)
    ar_error_wrap(err, "controller not enabled for '%s' (see its cgroup.controllers)", u->path);
  return -1;
}

static void remove_created(struct ar_cgroup *cg)
{
  for (size_t i = 0; i < cg->n_h; i++)
    if (cg->h[i].created && rmdir(cg->h[i].path) == 0)
      cg->h[i].created = false;
}

int ar_cgroup_create(struct ar_cgroup *cg, const struct ar_resources *res, ar_err *err)
{
  for (size_t i = 0; i < cg->n_h; i++) {
    struct ar_cg_hier *h = &cg->h[i];
    if (make_dir(h, err) < 0)
      goto fail;
    if (h->controllers[0] && has_controller(h->controllers, "cpuset") &&
        ar_cg_v1_prepare_cpuset(h->mount, h->path, err) < 0)
      goto fail;
    if (cg->mode == AR_CGROUP_V2 && h->controllers[0] == '\0' &&
        ar_cg_v2_enable(h->mount, h->path, NULL, err) < 0)
      goto fail;
  }
  if (apply(cg, res, false, err) < 0)
    goto fail;
  return 0;
fail:
  remove_created(cg);
  return -1;
}

int ar_cgroup_enter(struct ar_cgroup *cg, pid_t pid, ar_err *err)
{
  for (size_t i = 0; i < cg->n_h; i++)
    if (ar_cg_writef(cg->h[i].path, "cgroup.procs", err, "%d", (int)pid) < 0)
      return ar_error_wrap(err, "join cgroup");
  return 0;
}

int ar_cgroup_v2_fd(struct ar_cgroup *cg)
{
  struct ar_cg_hier *u;
  if (cg == NULL || cg->mode != AR_CGROUP_V2 || (u = ar_cg_unified(cg)) == NULL)
    return -1;
  /* O_PATH would not do: clone3 wants a real open file. */
  if (cg->v2_fd < 0)
    cg->v2_fd = open(u->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  return cg->v2_fd;
}

int ar_cgroup_clone_fd(struct ar_cgroup *cg)
{
  struct ar_cg_hier *u;
  if (cg == NULL || cg->mode == AR_CGROUP_V1 || (u = ar_cg_unified(cg)) == NULL)
    return -1;
  if (cg->v2_fd < 0)
    cg->v2_fd = open(u->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  return cg->v2_fd;
}

int ar_cgroup_open_tasks(struct ar_cgroup *cg, int **ret_fds, size_t *ret_n, ar_err *err)
{
  int *fds = xcalloc(cg->n_h + 1, sizeof(*fds));
  size_t n = 0;
  for (size_t i = 0; i < cg->n_h; i++) {
    cleanup_free char *path = NULL;
    if (cg->mode == AR_CGROUP_V2 || cg->h[i].controllers[0] == '\0')
      continue; /* cgroup2: CLONE_INTO_CGROUP */
    path = xasprintf("%s/tasks", cg->h[i].path);
    fds[n] = open(path, O_WRONLY | O_CLOEXEC);
    if (fds[n] < 0) {
      int e = errno;
      while (n > 0)
        close(fds[--n]);
      free(fds);
      return ar_error(err, e, "open '%s'", path);
    }
    n++;
  }
  *ret_fds = fds;
  *ret_n = n;
  return 0;
}

int ar_cgroup_join_self(const int *fds, size_t n, ar_err *err)
{
  for (size_t i = 0; i < n; i++)
    if (write(fds[i], "0", 1) != 1)
      return ar_error(err, errno, "join cgroup");
  return 0;
}

int ar_cgroup_update(struct ar_cgroup *cg, const struct ar_resources *res, ar_err *err)
{
  return apply(cg, res, true, err) < 0 ? ar_error_wrap(err, "cgroup update") : 0;
}

/* ---- freeze / processes / kill / destroy ---- */

static struct ar_cg_hier *freezer(struct ar_cgroup *cg)
{
  return cg->mode == AR_CGROUP_V2 ? ar_cg_unified(cg) : ar_cg_find(cg, "freezer");
}

int ar_cgroup_freeze(struct ar_cgroup *cg, bool frozen, ar_err *err)
{
  struct ar_cg_hier *h = freezer(cg);
  if (h == NULL)
    return ar_error(err, ENOTSUP, "cgroup: no freezer hierarchy is mounted");
  if (cg->mode == AR_CGROUP_V2)
    return ar_cg_v2_freeze(h->path, frozen, err);
  return ar_cg_v1_freeze(h->path, frozen, err);
}

int ar_cgroup_is_frozen(struct ar_cgroup *cg, bool *ret, ar_err *err)
{
  struct ar_cg_hier *h = freezer(cg);
  cleanup_free char *s = NULL;

  *ret = false;
  if (h == NULL)
    return 0;
  if (ar_cg_read(h->path, cg->mode == AR_CGROUP_V2 ? "cgroup.freeze" : "freezer.state", &s, err) <
      0)
    return -1;
  *ret = cg->mode == AR_CGROUP_V2 ? s[0] == '1' : strncmp(s, "FROZEN", 6) == 0;
  return 0;
}

/* The hierarchy whose cgroup.procs we trust to list the container's processes. */
static struct ar_cg_hier *procs_hier(struct ar_cgroup *cg)
{
  static const char *const pref[] = {"freezer", "pids", "memory", "cpu", "devices"};
  if (cg->mode == AR_CGROUP_V2)
    return ar_cg_unified(cg);
  for (size_t i = 0; i < ARRAY_SIZE(pref); i++) {
    struct ar_cg_hier *h = ar_cg_find(cg, pref[i]);
    if (h)
      return h;
  }
  return cg->n_h ? &cg->h[0] : NULL;
}

struct pidv {
  pid_t *v;
  size_t n;
};

/* The container may have made sub-cgroups: walk them all. */
static int collect_pids(const char *dir, struct pidv *pv, int depth, ar_err *err)
{
  cleanup_free char *s = NULL;
  cleanup_dir DIR *d = NULL;
  struct dirent *de;
  int r = read_quiet(dir, "cgroup.procs", &s);

  if (r == -ENOENT || r == -ENODEV)
    return 0;
  if (r < 0)
    return ar_error(err, -r, "read '%s/cgroup.procs'", dir);
  for (char *p = s; *p;) {
    char *end;
    long v = strtol(p, &end, 10);
    if (end == p)
      break;
    if (v > 0) {
      pv->v = xrealloc(pv->v, (pv->n + 1) * sizeof(pid_t));
      pv->v[pv->n++] = (pid_t)v;
    }
    p = end;
  }
  if (depth > 64 || (d = opendir(dir)) == NULL)
    return 0;
  while ((de = readdir(d)) != NULL) {
    cleanup_free char *sub = NULL;
    if (de->d_type != DT_DIR || de->d_name[0] == '.')
      continue;
    sub = xasprintf("%s/%s", dir, de->d_name);
    if (collect_pids(sub, pv, depth + 1, err) < 0)
      return -1;
  }
  return 0;
}

int ar_cgroup_pids(struct ar_cgroup *cg, pid_t **ret, size_t *ret_n, ar_err *err)
{
  struct ar_cg_hier *h = procs_hier(cg);
  struct pidv pv = {NULL, 0};

  *ret = NULL;
  *ret_n = 0;
  if (h == NULL)
    return 0;
  if (collect_pids(h->path, &pv, 0, err) < 0) {
    free(pv.v);
    return -1;
  }
  *ret = pv.v;
  *ret_n = pv.n;
  return 0;
}

static int signal_all(struct ar_cgroup *cg, int sig, ar_err *err)
{
  cleanup_free pid_t *pids = NULL;
  size_t n = 0;

  if (ar_cgroup_pids(cg, &pids, &n, err) < 0)
    return -1;
  for (size_t i = 0; i < n; i++)
    if (kill(pids[i], sig) < 0 && errno != ESRCH)
      return ar_error(err, errno, "kill %d", (int)pids[i]);
  return 0;
}

int ar_cgroup_kill(struct ar_cgroup *cg, int sig, ar_err *err)
{
  struct ar_cg_hier *u = ar_cg_unified(cg), *fz = freezer(cg);
  bool was_frozen = false, froze = false;
  int r;

  /* cgroup.kill is atomic against forks and covers sub-cgroups.  In hybrid mode the processes
   * are in the unified hierarchy too, so it works there as well; the v1 pass below then mops
   * up anything that left it. */
  if (sig == SIGKILL && u && ar_cg_exists(u->path, "cgroup.kill")) {
    if (ar_cg_write(u->path, "cgroup.kill", "1", err) < 0)
      return ar_error_wrap(err, "cgroup kill");
    if (cg->mode == AR_CGROUP_V2)
      return 0;
  }
  if (fz && dir_exists(fz->path)) {
    cleanup_err ar_err e = NULL;
    if (ar_cgroup_is_frozen(cg, &was_frozen, &e) == 0 && !was_frozen)
      froze = ar_cgroup_freeze(cg, true, &e) == 0;
  }
  r = signal_all(cg, sig, err);
  /* A paused container stays paused (the signal waits), unless it is being killed. */
  if (froze || (was_frozen && sig == SIGKILL)) {
    cleanup_err ar_err e = NULL;
    if (ar_cgroup_freeze(cg, false, r < 0 ? &e : err) < 0 && r == 0)
      r = -1;
  }
  return r < 0 ? ar_error_wrap(err, "cgroup kill") : 0;
}

/* rmdir the tree bottom-up.  Returns 0 or -errno of the first failure. */
static int rm_tree(const char *dir, int depth)
{
  cleanup_dir DIR *d = opendir(dir);
  struct dirent *de;

  if (d == NULL)
    return errno == ENOENT ? 0 : -errno;
  while (depth < 64 && (de = readdir(d)) != NULL) {
    cleanup_free char *sub = NULL;
    int r;
    if (de->d_type != DT_DIR || de->d_name[0] == '.')
      continue;
    sub = xasprintf("%s/%s", dir, de->d_name);
    if ((r = rm_tree(sub, depth + 1)) < 0)
      return r;
  }
  if (rmdir(dir) < 0 && errno != ENOENT)
    return -errno;
  return 0;
}

static void sleep_ms(long ms)
{
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
    ;
}

int ar_cgroup_destroy(struct ar_cgroup *cg, ar_err *err)
{
  cleanup_free pid_t *pids = NULL;
  size_t n = 0;
  int ret = 0;

  if (ar_cgroup_pids(cg, &pids, &n, NULL) == 0 && n > 0) {
    cleanup_err ar_err e = NULL;
    if (ar_cgroup_kill(cg, SIGKILL, &e) < 0)
      ar_warn("%s", e->msg);
  }
  for (size_t i = 0; i < cg->n_h; i++) {
    const char *p = cg->h[i].path;
    int r = 0;
    /* Killed processes take a moment to leave; ~5 s in all, re-killing once half way. */
    for (long delay = 1, waited = 0; (r = rm_tree(p, 0)) == -EBUSY && waited < 5000;
         waited += delay, delay = delay < 100 ? delay * 2 : 100) {
      if (waited >= 2500 && waited - delay < 2500)
        ar_cgroup_kill(cg, SIGKILL, NULL);
      sleep_ms(delay);
    }
    if (r < 0 && ret == 0)
      ret = ar_error(err, -r, "remove cgroup '%s'", p);
  }
  return ret;
}

int ar_cgroup_stats(struct ar_cgroup *cg, struct ar_cgroup_stats *st, ar_err *err)
{
  memset(st, 0, sizeof(*st));
  if (cg->mode == AR_CGROUP_V2) {
    struct ar_cg_hier *u = ar_cg_unified(cg);
    if (u == NULL)
      return ar_error(err, ENOENT, "cgroup: the cgroup2 hierarchy is gone");
    return ar_cg_v2_stats(u->path, st, err);
  }
  return ar_cg_v1_stats(cg, st, err);
}
