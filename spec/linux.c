/* The "linux" object of config.json, except resources and seccomp (their own files). */
#include <config.h>
#include "spec/parse.h"

#include <stdlib.h>
#include <string.h>

#include "runtime/utils.h"

static int parse_namespace(struct jp *c, yajl_val v, void *out)
{
  struct ar_namespace *ns = out;
  cleanup_free char *type = NULL;
  bool has;
  int t;

  if (jp_str(c, v, "type", &type, NULL) < 0)
    return -1;
  t = ar_ns_from_name(type);
  if (t < 0)
    return jp_key_error(c, "type", "unknown namespace type \"%s\"", type);
  ns->type = t;
  return jp_str(c, v, "path", &ns->path, &has);
}

static int check_namespaces(struct jp *c, const struct ar_linux *l)
{
  for (size_t i = 0; i < l->n_namespaces; i++) {
    for (size_t j = 0; j < i; j++) {
      size_t mark;

      if (l->namespaces[i].type != l->namespaces[j].type)
        continue;
      mark = jp_push(c, "namespaces");
      jp_push_idx(c, i);
      jp_key_error(c, "type", "duplicate namespace \"%s\"", ar_ns_name(l->namespaces[i].type));
      jp_pop(c, mark);
      return -1;
    }
  }
  return 0;
}

static int parse_id_mapping(struct jp *c, yajl_val v, void *out)
{
  struct ar_id_mapping *m = out;

  if (jp_u32(c, v, "containerID", &m->container_id, NULL) < 0 ||
      jp_u32(c, v, "hostID", &m->host_id, NULL) < 0 || jp_u32(c, v, "size", &m->size, NULL) < 0)
    return -1;
  return 0;
}

static int parse_device(struct jp *c, yajl_val v, void *out)
{
  struct ar_device *d = out;
  cleanup_free char *type = NULL;
  bool has, need_numbers;

  if (jp_str(c, v, "path", &d->path, NULL) < 0 || jp_str(c, v, "type", &type, NULL) < 0)
    return -1;
  if (strlen(type) != 1 || strchr("cbup", type[0]) == NULL)
    return jp_key_error(c, "type", "expected one of c, b, u, p");
  d->type = type[0];
  need_numbers = d->type != 'p'; /* a fifo has no device numbers */
  if (jp_i64(c, v, "major", &d->major, need_numbers ? NULL : &has) < 0 ||
      jp_i64(c, v, "minor", &d->minor, need_numbers ? NULL : &has) < 0 ||
      jp_u32(c, v, "fileMode", &d->file_mode, &d->has_file_mode) < 0 ||
      jp_u32(c, v, "uid", &d->uid, &d->has_uid) < 0 ||
      jp_u32(c, v, "gid", &d->gid, &d->has_gid) < 0)
    return -1;
  return 0;
}

static int parse_personality(struct jp *c, yajl_val v, void *out)
{
  struct ar_personality *p = out;

  if (jp_str(c, v, "domain", &p->domain, NULL) < 0)
    return -1;
  if (strcmp(p->domain, "LINUX") != 0 && strcmp(p->domain, "LINUX32") != 0)
    return jp_key_error(c, "domain", "unknown personality domain \"%s\"", p->domain);
  return jp_strv(c, v, "flags", &p->flags, &p->n_flags);
}

static int parse_time_offset(struct jp *c, yajl_val v, void *out)
{
  struct ar_time_offset *t = out;
  bool has;

  t->present = true;
  if (jp_i64(c, v, "secs", &t->secs, &has) < 0 || jp_u32(c, v, "nanosecs", &t->nanosecs, &has) < 0)
    return -1;
  return 0;
}

static int parse_time_offsets(struct jp *c, yajl_val v, void *out)
{
  struct ar_linux *l = out;
  bool has;

  if (jp_object(c, v, "monotonic", parse_time_offset, &l->time_monotonic, &has) < 0)
    return -1;
  return jp_object(c, v, "boottime", parse_time_offset, &l->time_boottime, &has);
}

static int parse_seccomp_ptr(struct jp *c, yajl_val v, void *out)
{
  struct ar_seccomp **s = out;

  *s = xcalloc(1, sizeof(**s));
  return ar_parse_seccomp(c, v, *s);
}

static int parse_personality_ptr(struct jp *c, yajl_val v, void *out)
{
  struct ar_personality **p = out;

  *p = xcalloc(1, sizeof(**p));
  return parse_personality(c, v, *p);
}

static int parse_linux_paths(struct jp *c, yajl_val v, struct ar_linux *l)
{
  bool has;

  if (jp_str(c, v, "cgroupsPath", &l->cgroups_path, &has) < 0 ||
      jp_kvmap(c, v, "sysctl", &l->sysctl, &l->n_sysctl) < 0 ||
      jp_str(c, v, "rootfsPropagation", &l->rootfs_propagation, &has) < 0 ||
      jp_strv(c, v, "maskedPaths", &l->masked_paths, &l->n_masked_paths) < 0 ||
      jp_strv(c, v, "readonlyPaths", &l->readonly_paths, &l->n_readonly_paths) < 0 ||
      jp_str(c, v, "mountLabel", &l->mount_label, &has) < 0)
    return -1;
  return 0;
}

int ar_parse_linux(struct jp *c, yajl_val v, void *out)
{
  struct ar_linux *l = out;
  bool has;

  if (jp_object_array(c, v, "namespaces", sizeof(struct ar_namespace), parse_namespace,
                      (void **)&l->namespaces, &l->n_namespaces) < 0 ||
      check_namespaces(c, l) < 0 ||
      jp_object_array(c, v, "uidMappings", sizeof(struct ar_id_mapping), parse_id_mapping,
                      (void **)&l->uid_mappings, &l->n_uid_mappings) < 0 ||
      jp_object_array(c, v, "gidMappings", sizeof(struct ar_id_mapping), parse_id_mapping,
                      (void **)&l->gid_mappings, &l->n_gid_mappings) < 0 ||
      jp_object_array(c, v, "devices", sizeof(struct ar_device), parse_device, (void **)&l->devices,
                      &l->n_devices) < 0 ||
      jp_object(c, v, "resources", ar_parse_resources, &l->resources, &l->has_resources) < 0 ||
      parse_linux_paths(c, v, l) < 0 ||
      jp_object(c, v, "seccomp", parse_seccomp_ptr, &l->seccomp, &has) < 0 ||
      jp_object(c, v, "personality", parse_personality_ptr, &l->personality, &has) < 0 ||
      jp_object(c, v, "timeOffsets", parse_time_offsets, l, &has) < 0)
    return -1;
  return 0;
}

void ar_linux_clear(struct ar_linux *l)
{
  for (size_t i = 0; i < l->n_namespaces; i++)
    free(l->namespaces[i].path);
  free(l->namespaces);
  free(l->uid_mappings);
  free(l->gid_mappings);
  for (size_t i = 0; i < l->n_devices; i++)
    free(l->devices[i].path);
  free(l->devices);
  free(l->cgroups_path);
  ar_resources_clear(&l->resources);
  ar_kv_free(l->sysctl, l->n_sysctl);
  ar_seccomp_free(l->seccomp);
  free(l->rootfs_propagation);
  ar_strv_free_n(l->masked_paths, l->n_masked_paths);
  ar_strv_free_n(l->readonly_paths, l->n_readonly_paths);
  free(l->mount_label);
  if (l->personality) {
    free(l->personality->domain);
    ar_strv_free_n(l->personality->flags, l->personality->n_flags);
    free(l->personality);
  }
  memset(l, 0, sizeof(*l));
}
