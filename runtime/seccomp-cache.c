/* The caller's seccomp filter, compiled once per distinct filter.  libseccomp 2.5 takes 15-33 ms
 * to compile a Docker-sized profile; a cache hit reads one small file.  The key is a canonical
 * serialization of the filter and of libseccomp's version, stored whole in the file and compared
 * byte for byte: the hash only names the file, so a collision can never load another filter. */
#include <config.h>
#include "seccomp.h"

#include <errno.h>
#include <fcntl.h>
#include <seccomp.h>
#include <string.h>
#include <sys/stat.h>

#include "utils.h"

#define CACHE_DIR "/var/cache/agentrun/seccomp"
#define MAGIC 0x31435341u /* "ASC1" */
#define MAX_INSNS 65536

struct buf {
  char *p;
  size_t len, cap;
};

static void put(struct buf *b, const void *d, size_t n)
{
  if (b->len + n > b->cap)
    b->p = xrealloc(b->p, b->cap = (b->len + n) * 2 + 256);
  memcpy(b->p + b->len, d, n);
  b->len += n;
}

static void put_u64(struct buf *b, uint64_t v)
{
  put(b, &v, sizeof(v));
}

static void put_str(struct buf *b, const char *s)
{
  size_t n = s ? strlen(s) : 0;
  put_u64(b, n);
  put(b, s ? s : "", n);
}

static void put_strv(struct buf *b, char **v, size_t n)
{
  put_u64(b, n);
  for (size_t i = 0; i < n; i++)
    put_str(b, v[i]);
}

static void key_of(const struct ar_seccomp *sc, struct buf *b)
{
  const struct scmp_version *v = seccomp_version();
  put_u64(b, ((uint64_t)v->major << 32) | (v->minor << 16) | v->micro);
  put_u64(b, sc->default_action);
  put_u64(b, sc->has_default_errno_ret ? sc->default_errno_ret + 1ULL : 0);
  put_strv(b, sc->architectures, sc->n_architectures);
  put_strv(b, sc->flags, sc->n_flags);
  put_u64(b, sc->n_syscalls);
  for (size_t i = 0; i < sc->n_syscalls; i++) {
    const struct ar_syscall_rule *r = &sc->syscalls[i];
    put_strv(b, r->names, r->n_names);
    put_u64(b, r->action);
    put_u64(b, r->has_errno_ret ? r->errno_ret + 1ULL : 0);
    put_u64(b, r->n_args);
    for (size_t a = 0; a < r->n_args; a++) {
      put_u64(b, r->args[a].index);
      put_u64(b, r->args[a].value);
      put_u64(b, r->args[a].value_two);
      put_u64(b, r->args[a].op);
    }
  }
}

static uint64_t fnv1a(const char *p, size_t n)
{
  uint64_t h = 0xcbf29ce484222325ULL;
  for (size_t i = 0; i < n; i++)
    h = (h ^ (unsigned char)p[i]) * 0x100000001b3ULL;
  return h;
}

/* Only a directory that nobody else can write to may feed filters into containers. */
static const char *cache_dir(void)
{
  const char *d = getenv("AGENTRUN_SECCOMP_CACHE");
  struct stat st;
  if (d && strcmp(d, "off") == 0)
    return NULL;
  d = d && *d == '/' ? d : CACHE_DIR;
  if (lstat(d, &st) < 0) {
    ar_err err = NULL;
    if (ar_mkdir_p(d, 0700, &err) < 0 || lstat(d, &st) < 0) {
      ar_error_free(&err);
      return NULL;
    }
  }
  if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 022))
    return NULL;
  return d;
}

static bool lookup(const char *path, const struct buf *key, struct ar_bpf *ret)
{
  cleanup_free char *data = NULL;
  size_t len, off = 0;
  uint32_t hdr[5]; /* magic, key length, flags, wants_listener, n_insns */
  ar_err err = NULL;
  if (ar_read_file(path, &data, &len, &err) < 0) {
    ar_error_free(&err);
    return false;
  }
  if (len < sizeof(hdr))
    return false;
  memcpy(hdr, data, sizeof(hdr));
  off = sizeof(hdr);
  if (hdr[0] != MAGIC || hdr[1] != key->len || hdr[4] == 0 || hdr[4] > MAX_INSNS ||
      len != off + key->len + (size_t)hdr[4] * sizeof(struct sock_filter) ||
      memcmp(data + off, key->p, key->len) != 0)
    return false;
  off += key->len;
  ret->flags = hdr[2];
  ret->wants_listener = hdr[3];
  ret->n_insns = hdr[4];
  ret->insns = xmalloc(ret->n_insns * sizeof(struct sock_filter));
  memcpy(ret->insns, data + off, ret->n_insns * sizeof(struct sock_filter));
  return true;
}

static void store(const char *path, const struct buf *key, const struct ar_bpf *bpf)
{
  uint32_t hdr[5] = {MAGIC, (uint32_t)key->len, bpf->flags, bpf->wants_listener,
                     (uint32_t)bpf->n_insns};
  struct buf out = {0};
  ar_err err = NULL;
  if (bpf->n_insns == 0 || bpf->n_insns > MAX_INSNS)
    return;
  put(&out, hdr, sizeof(hdr));
  put(&out, key->p, key->len);
  put(&out, bpf->insns, bpf->n_insns * sizeof(struct sock_filter));
  if (ar_write_file_atomic(path, out.p, out.len, 0600, &err) < 0)
    ar_error_free(&err); /* a cache that cannot be written is only slower */
  free(out.p);
}

int ar_seccomp_compile_cached(const struct ar_seccomp *sc, struct ar_bpf *ret, ar_err *err)
{
  const char *dir = cache_dir();
  struct buf key = {0};
  cleanup_free char *path = NULL;
  int r;
  if (dir == NULL)
    return ar_seccomp_compile(sc, ret, err);
  key_of(sc, &key);
  path = xasprintf("%s/%016llx.bpf", dir, (unsigned long long)fnv1a(key.p, key.len));
  memset(ret, 0, sizeof(*ret));
  if (lookup(path, &key, ret)) {
    free(key.p);
    return 0;
  }
  r = ar_seccomp_compile(sc, ret, err);
  if (r == 0)
    store(path, &key, ret);
  free(key.p);
  return r;
}
