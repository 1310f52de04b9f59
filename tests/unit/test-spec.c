/* Unit tests for spec/: the JSON writer, config/process/resources parsing, emitting, the runc
 * default, state documents and the name tables.  Prints TAP. */
#include <config.h>

#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "runtime/utils.h"
#include "spec/jsonw.h"
#include "spec/spec.h"
#include "spec/state.h"

#ifndef AR_TOP_SRCDIR
#define AR_TOP_SRCDIR "."
#endif

static int n_tests, n_failed;

static bool ok(bool cond, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool ok(bool cond, const char *fmt, ...)
{
  va_list ap;

  printf("%sok %d - ", cond ? "" : "not ", ++n_tests);
  va_start(ap, fmt);
  vprintf(fmt, ap);
  va_end(ap);
  printf("\n");
  if (!cond)
    n_failed++;
  return cond;
}

/* Print both sides as TAP comments when they differ. */
static bool is_str(const char *got, const char *want, const char *desc)
{
  bool same = got && want ? strcmp(got, want) == 0 : got == want;

  if (!ok(same, "%s", desc)) {
    printf("# got:  %s\n", got ? got : "(null)");
    printf("# want: %s\n", want ? want : "(null)");
  }
  return same;
}

/* Test documents are written with ' for " to stay readable. */
static char *q(const char *s)
{
  char *r = xstrdup(s);

  for (char *p = r; *p; p++)
    if (*p == '\'')
      *p = '"';
  return r;
}

static char *fixture(const char *name, size_t *len)
{
  const char *top = getenv("AR_TOP_SRCDIR") ? getenv("AR_TOP_SRCDIR") : AR_TOP_SRCDIR;
  cleanup_free char *path = xasprintf("%s/tests/fixtures/%s", top, name);
  cleanup_err ar_err err = NULL;
  char *data = NULL;
  size_t n = 0;

  if (ar_read_file(path, &data, &n, &err) < 0) {
    printf("Bail out! %s\n", err->msg);
    exit(1);
  }
  if (len)
    *len = n;
  return data;
}

/* ---- jsonw ---- */

static char *jw_one_string(const char *s, size_t len)
{
  struct ar_jw *w = ar_jw_new(false);

  ar_jw_strn(w, s, len);
  return ar_jw_finish(w, NULL);
}

static void check_escape(const char *in, size_t len, const char *want, const char *desc)
{
  cleanup_free char *got = jw_one_string(in, len);

  is_str(got, want, desc);
}

static void test_jsonw_escaping(void)
{
  check_escape("plain", 5, "\"plain\"", "jsonw: plain string");
  check_escape("a\nb", 3, "\"a\\nb\"", "jsonw: newline escaped");
  check_escape("say \"hi\"", 8, "\"say \\\"hi\\\"\"", "jsonw: quote escaped");
  check_escape("back\\slash", 10, "\"back\\\\slash\"", "jsonw: backslash escaped");
  check_escape("\t\r\b\f", 4, "\"\\t\\r\\b\\f\"", "jsonw: short escapes");
  check_escape("\x01\x1f\x7f", 3, "\"\\u0001\\u001f\x7f\"", "jsonw: control chars as \\u00XX");
  check_escape("a\0b", 3, "\"a\\u0000b\"", "jsonw: embedded NUL");
  check_escape("\xc3\xa9\xe2\x98\x83\xf0\x9f\x98\x80", 9,
               "\"\xc3\xa9\xe2\x98\x83\xf0\x9f\x98\x80\"", "jsonw: valid UTF-8 kept");
  check_escape("a\xff"
               "b",
               3,
               "\"a\xef\xbf\xbd"
               "b\"",
               "jsonw: invalid byte -> U+FFFD");
  check_escape("\xc0\xaf", 2, "\"\xef\xbf\xbd\xef\xbf\xbd\"", "jsonw: overlong form rejected");
  check_escape("\xed\xa0\x80", 3, "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"",
               "jsonw: surrogate rejected");
  check_escape("x\xe2\x82", 3, "\"x\xef\xbf\xbd\xef\xbf\xbd\"", "jsonw: truncated sequence at end");
  check_escape("\xf4\x90\x80\x80", 4, "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"",
               "jsonw: above U+10FFFF rejected");
}

static void test_jsonw_structure(void)
{
  struct ar_jw *w = ar_jw_new(false);
  cleanup_free char *compact = NULL, *pretty = NULL;

  ar_jw_map_open(w);
  ar_jw_kstr(w, "s", "v");
  ar_jw_kint(w, "i", INT64_MIN);
  ar_jw_kuint(w, "u", UINT64_MAX);
  ar_jw_kbool(w, "b", false);
  ar_jw_kdouble(w, "d", 0.1);
  ar_jw_key(w, "n");
  ar_jw_str(w, NULL);
  ar_jw_key(w, "a");
  ar_jw_array_open(w);
  ar_jw_int(w, 1);
  ar_jw_map_open(w);
  ar_jw_map_close(w);
  ar_jw_array_open(w);
  ar_jw_array_close(w);
  ar_jw_raw(w, "{\"r\":1}");
  ar_jw_null(w);
  ar_jw_array_close(w);
  ar_jw_key(w, "k\"ey");
  ar_jw_double(w, 1.0 / 0.0);
  ar_jw_map_close(w);
  compact = ar_jw_finish(w, NULL);
  is_str(compact,
         "{\"s\":\"v\",\"i\":-9223372036854775808,\"u\":18446744073709551615,\"b\":false,"
         "\"d\":0.1,\"n\":null,\"a\":[1,{},[],{\"r\":1},null],\"k\\\"ey\":null}",
         "jsonw: compact nesting, commas, numbers, raw, infinity as null");

  w = ar_jw_new(true);
  ar_jw_map_open(w);
  ar_jw_kstr(w, "id", "x");
  ar_jw_key(w, "m");
  ar_jw_map_open(w);
  ar_jw_map_close(w);
  ar_jw_key(w, "a");
  ar_jw_array_open(w);
  ar_jw_uint(w, 1);
  ar_jw_map_open(w);
  ar_jw_kbool(w, "t", true);
  ar_jw_map_close(w);
  ar_jw_array_close(w);
  ar_jw_map_close(w);
  pretty = ar_jw_finish(w, NULL);
  is_str(pretty,
         "{\n  \"id\": \"x\",\n  \"m\": {},\n  \"a\": [\n    1,\n    {\n      \"t\": true\n    }\n"
         "  ]\n}",
         "jsonw: pretty mode, 2-space indent, empty map inline");

  w = ar_jw_new(false);
  ar_jw_array_open(w);
  ar_jw_double(w, 1.5);
  ar_jw_double(w, -2);
  ar_jw_double(w, 1e300);
  ar_jw_array_close(w);
  is_str(ar_jw_buf(w, NULL), "[1.5,-2,1e+300]", "jsonw: shortest doubles, ar_jw_buf");
  ar_jw_free(w);
  ar_jw_free(NULL);
}

/* ---- good documents ---- */

static struct ar_spec *parse_ok(const char *json, size_t len, const char *desc)
{
  cleanup_err ar_err err = NULL;
  struct ar_spec *s = NULL;
  int rc = ar_spec_parse(json, len, "config.json", &s, &err);

  if (!ok(rc == 0 && s != NULL, "%s", desc))
    printf("# error: %s\n", err ? err->msg : "(none)");
  return s;
}

static char *emit(const struct ar_spec *s, bool pretty)
{
  cleanup_err ar_err err = NULL;
  char *out = NULL;

  if (ar_spec_to_json(s, pretty, &out, &err) < 0)
    return xstrdup("(emit failed)");
  return out;
}

/* parse(emit(s)) gives s again: checked as emit(parse(emit(s))) == emit(s), which covers every
 * field since the maximal fixture shows emit drops none. */
static void check_round_trip(const struct ar_spec *s, const char *name)
{
  cleanup_free char *once = emit(s, false);
  cleanup_free char *twice = NULL;
  cleanup_err ar_err err = NULL;
  struct ar_spec *again = NULL;

  if (!ok(ar_spec_parse(once, strlen(once), "config.json", &again, &err) == 0,
          "%s: emitted JSON parses", name)) {
    printf("# %s\n", err->msg);
    return;
  }
  twice = emit(again, false);
  is_str(twice, once, "round trip: parse(emit(x)) == x");
  ar_spec_free(again);
}

static void test_runc_default(void)
{
  cleanup_free char *data = fixture("runc-default.json", NULL);
  struct ar_spec *s = parse_ok(data, strlen(data), "runc 1.1 default config parses");
  struct ar_spec *def = ar_spec_default(false);
  cleanup_free char *a = NULL, *b = NULL;
  const struct ar_process *p;

  if (s == NULL)
    return;
  p = s->process;
  ok(p && p->terminal && p->n_args == 1 && strcmp(p->args[0], "sh") == 0 && p->args[1] == NULL,
     "default: args [sh], terminal, args NULL-terminated");
  ok(p && p->n_env == 2 && strcmp(p->cwd, "/") == 0 && p->no_new_privileges, "default: env, cwd");
  ok(p && p->has_capabilities && p->capabilities.n_names[AR_CAP_BOUNDING] == 3 &&
         p->capabilities.n_names[AR_CAP_INHERITABLE] == 0 &&
         strcmp(p->capabilities.names[AR_CAP_AMBIENT][2], "CAP_NET_BIND_SERVICE") == 0,
     "default: capabilities");
  ok(p && p->n_rlimits == 1 && p->rlimits[0].resource == RLIMIT_NOFILE &&
         p->rlimits[0].hard == 1024 && p->rlimits[0].soft == 1024,
     "default: rlimit NOFILE 1024");
  ok(strcmp(s->root_path, "rootfs") == 0 && s->root_readonly && s->n_mounts == 7 &&
         strcmp(s->mounts[6].destination, "/sys/fs/cgroup") == 0 && s->mounts[0].n_options == 0,
     "default: root and mounts");
  ok(s->has_linux && s->linux_.n_namespaces == 5 && ar_spec_namespace(s, AR_NS_NETWORK) &&
         !ar_spec_namespace(s, AR_NS_USER) && s->linux_.n_masked_paths == 10 &&
         s->linux_.n_readonly_paths == 5,
     "default: namespaces, masked and readonly paths");
  ok(s->linux_.has_resources && s->linux_.resources.n_devices == 1 &&
         !s->linux_.resources.devices[0].allow && s->linux_.resources.devices[0].type == 'a' &&
         strcmp(s->linux_.resources.devices[0].access, "rwm") == 0,
     "default: device rule deny all");

  /* ar_spec_default matches runc's document field for field, bar version and hostname */
  free(s->oci_version);
  s->oci_version = xstrdup(def->oci_version);
  free(s->hostname);
  s->hostname = xstrdup(def->hostname);
  a = emit(s, true);
  b = emit(def, true);
  is_str(b, a, "ar_spec_default(false) == runc spec");
  is_str(def->oci_version, AR_OCI_VERSION, "default: ociVersion is ours");
  check_round_trip(def, "default");
  ar_spec_free(s);
  ar_spec_free(def);
}

static void test_runc_rootless(void)
{
  cleanup_free char *data = fixture("runc-rootless.json", NULL);
  struct ar_spec *s = parse_ok(data, strlen(data), "runc 1.1 rootless config parses");
  struct ar_spec *def = ar_spec_default(true);
  cleanup_free char *a = NULL, *b = NULL;

  if (s == NULL)
    return;
  free(s->oci_version);
  s->oci_version = xstrdup(def->oci_version);
  free(s->hostname);
  s->hostname = xstrdup(def->hostname);
  /* runc writes the caller's ids; the fixture was made as root */
  s->linux_.uid_mappings[0].host_id = geteuid();
  s->linux_.gid_mappings[0].host_id = getegid();
  a = emit(s, true);
  b = emit(def, true);
  is_str(b, a, "ar_spec_default(true) == runc spec --rootless");
  ok(ar_spec_namespace(def, AR_NS_USER) && !ar_spec_namespace(def, AR_NS_NETWORK) &&
         !def->linux_.has_resources,
     "rootless: user ns, host network, no device rules");
  check_round_trip(def, "rootless");
  ar_spec_free(s);
  ar_spec_free(def);
}

static void check_maximal_fields(const struct ar_spec *s)
{
  const struct ar_process *p = s->process;
  const struct ar_linux *l = &s->linux_;
  const struct ar_resources *r = &l->resources;
  const struct ar_seccomp *sc = l->seccomp;

  ok(p->has_console_size && p->console_height == 25 && p->console_width == 80 &&
         p->user.uid == 1000 && p->user.has_umask && p->user.umask == 18 &&
         p->user.n_additional_gids == 3 && p->user.additional_gids[2] == UINT32_MAX,
     "maximal: consoleSize, user");
  ok(strcmp(p->args[2], "echo \"hi\"\n\ttab \xc3\xa9 \xe2\x98\x83") == 0,
     "maximal: escapes and UTF-8 decoded");
  ok(p->rlimits[1].resource == RLIMIT_CORE && p->rlimits[1].hard == UINT64_MAX &&
         p->has_oom_score_adj && p->oom_score_adj == -500 && p->has_io_priority &&
         strcmp(p->io_priority.class_name, "IOPRIO_CLASS_BE") == 0 && p->io_priority.priority == 4,
     "maximal: rlimits, oomScoreAdj, ioPriority");
  ok(s->hooks[AR_HOOK_CREATE_RUNTIME].n_hooks == 2 &&
         s->hooks[AR_HOOK_CREATE_RUNTIME].hooks[1].has_timeout &&
         s->hooks[AR_HOOK_PRESTART].hooks[0].timeout == 5 &&
         s->hooks[AR_HOOK_POSTSTOP].n_hooks == 1,
     "maximal: hooks");
  is_str(ar_spec_annotation(s, "run.agentrun.timeout"), "30s", "maximal: annotation lookup");
  ok(r->has_memory && r->memory.limit == 536870912 && r->memory.has_reservation &&
         r->memory.reservation == -1 && r->memory.has_disable_oom_killer &&
         r->memory.has_use_hierarchy && !r->memory.use_hierarchy,
     "maximal: memory");
  ok(r->has_cpu && r->cpu.quota == -1 && r->cpu.has_idle && strcmp(r->cpu.cpus, "0-1") == 0 &&
         r->has_pids && r->pids_limit == 512,
     "maximal: cpu, pids");
  ok(r->has_blkio && r->blkio.weight == 500 && r->blkio.n_weight_devices == 2 &&
         !r->blkio.weight_devices[1].has_weight &&
         r->blkio.throttle[AR_THROTTLE_WRITE_IOPS][0].rate == 200 && r->n_hugepage_limits == 1 &&
         r->n_unified == 2,
     "maximal: blockIO, hugepages, unified");
  ok(r->n_devices == 4 && r->devices[2].type == 'b' && r->devices[2].has_major &&
         r->devices[2].major == -1 && !r->devices[2].has_minor && r->devices[2].access == NULL,
     "maximal: device rules");
  ok(l->n_namespaces == 8 && ar_spec_namespace(s, AR_NS_TIME) &&
         strcmp(ar_spec_namespace(s, AR_NS_NETWORK)->path, "/var/run/netns/box") == 0 &&
         l->n_devices == 4 && l->devices[2].type == 'p' && l->devices[0].file_mode == 0666,
     "maximal: namespaces, devices");
  ok(sc && sc->default_action == AR_SECCOMP_ERRNO && sc->default_errno_ret == 1 &&
         sc->n_syscalls == 10 && sc->syscalls[1].args[1].op == AR_OP_MASKED_EQ &&
         sc->syscalls[1].args[1].value_two == 8 && sc->syscalls[3].action == AR_SECCOMP_NOTIFY &&
         sc->syscalls[2].has_errno_ret && sc->syscalls[2].errno_ret == 38 &&
         strcmp(sc->listener_path, "/run/agentrun/listener.sock") == 0,
     "maximal: seccomp");
  ok(l->personality && strcmp(l->personality->domain, "LINUX32") == 0 &&
         l->time_monotonic.present && l->time_monotonic.secs == -3600 &&
         l->time_monotonic.nanosecs == 500 && l->time_boottime.present,
     "maximal: personality, timeOffsets");
}

static void test_maximal(void)
{
  size_t len;
  cleanup_free char *data = fixture("maximal.json", &len);
  cleanup_free char *pretty = NULL;
  struct ar_spec *s = parse_ok(data, len, "maximal document parses");

  if (s == NULL)
    return;
  check_maximal_fields(s);
  /* the fixture is in emit's own format: emitting gives it back byte for byte */
  while (len > 0 && data[len - 1] == '\n')
    data[--len] = '\0';
  pretty = emit(s, true);
  is_str(pretty, data, "maximal: emit(parse(x)) == x, every field kept");
  check_round_trip(s, "maximal");
  ar_spec_free(s);
}

static void test_lenient(void)
{
  cleanup_free char *doc =
      q("{'ociVersion':'1.0.0','root':{'path':'r'},'hostname':null,'future':{'x':[1.5]},"
        "'linux':{'resources':{'pids':{}},'intelRdt':{}},'annotations':{'a':'1','a':'2'},"
        "'process':{'args':['x'],'cwd':'/','args':['y']}}");
  struct ar_spec *s = parse_ok(doc, strlen(doc), "unknown fields ignored, null is absent");

  if (s == NULL)
    return;
  ok(s->hostname == NULL && s->has_linux && s->linux_.has_resources &&
         !s->linux_.resources.has_pids,
     "null hostname absent; empty pids sets nothing");
  ok(s->n_annotations == 1 && strcmp(s->annotations[0].value, "2") == 0 &&
         strcmp(s->process->args[0], "y") == 0,
     "repeated keys: the last wins");
  ar_spec_free(s);
}

static void test_process_and_resources(void)
{
  size_t len;
  cleanup_free char *pj = fixture("process.json", &len);
  cleanup_free char *rj = NULL, *out = NULL;
  cleanup_err ar_err err = NULL;
  struct ar_process *p = NULL;
  struct ar_resources *r = NULL;

  ok(ar_process_parse(pj, len, "process.json", &p, &err) == 0 && p && p->n_args == 2 &&
         strcmp(p->cwd, "/tmp") == 0 && p->user.n_additional_gids == 1 &&
         p->capabilities.n_names[AR_CAP_PERMITTED] == 1 && p->no_new_privileges,
     "process.json parses");
  if (p && ar_process_to_json(p, false, &out, &err) == 0)
    is_str(out,
           "{\"user\":{\"uid\":0,\"gid\":0,\"additionalGids\":[10]},\"args\":[\"/bin/ls\",\"-l\"],"
           "\"env\":[\"PATH=/bin\",\"HOME=/root\"],\"cwd\":\"/tmp\",\"capabilities\":{\"bounding\":"
           "[\"CAP_KILL\"],\"effective\":[\"CAP_KILL\"],\"permitted\":[\"CAP_KILL\"]},"
           "\"noNewPrivileges\":true}",
           "process.json emitted");
  ar_process_free(p);
  free(out);
  out = NULL;

  rj = fixture("resources.json", &len);
  ok(ar_resources_parse(rj, len, "resources", &r, &err) == 0 && r && r->has_memory &&
         r->memory.limit == 268435456 && r->memory.swap == -1 && r->has_cpu &&
         r->cpu.quota == 50000 && r->has_pids && r->pids_limit == 64 && r->has_blkio &&
         r->blkio.weight == 100 && r->n_unified == 1 && r->n_devices == 0,
     "resources document parses");
  if (r && ar_resources_to_json(r, false, &out, &err) == 0)
    is_str(out,
           "{\"memory\":{\"limit\":268435456,\"swap\":-1},\"cpu\":{\"quota\":50000,\"period\":"
           "100000,\"cpus\":\"0\"},\"pids\":{\"limit\":64},\"blockIO\":{\"weight\":100},"
           "\"unified\":{\"pids.max\":\"64\"}}",
           "resources emitted");
  ar_resources_free(r);
}

/* ---- bad documents ---- */

enum doc_kind { CONFIG, PROCESS, RESOURCES };

struct bad_case {
  enum doc_kind kind;
  const char *json; /* ' stands for " */
  const char *want;
};

#define BASE "'ociVersion':'1.0.0','root':{'path':'rootfs'}"
#define PROC(x) "{" BASE ",'process':{'args':['sh'],'cwd':'/'," x "}}"
#define LINUX(x) "{" BASE ",'linux':{" x "}}"
#define SECCOMP(x) LINUX("'seccomp':{'defaultAction':'SCMP_ACT_ALLOW'," x "}")

static const struct bad_case bad_cases[] = {
    {CONFIG, "{'ociVersion': ", "config.json: invalid JSON: parse error: premature EOF"},
    {CONFIG, "{} {}", "config.json: invalid JSON: parse error: trailing garbage"},
    {CONFIG, "", "config.json: invalid JSON: parse error: premature EOF"},
    {CONFIG, "{'ociVersion':'\xff'}",
     "config.json: invalid JSON: lexical error: invalid bytes in UTF8 string."},
    {CONFIG, "[]", "config.json: expected object"},
    {CONFIG, "{'root':{'path':'r'}}", "config.json: ociVersion: missing"},
    {CONFIG, "{'ociVersion':1}", "config.json: ociVersion: expected string"},
    {CONFIG, "{'ociVersion':'1.0.0'}", "config.json: root: missing"},
    {CONFIG, "{'ociVersion':'1.0.0','root':{}}", "config.json: root.path: missing"},
    {CONFIG, "{'ociVersion':'1.0.0','root':'rootfs'}", "config.json: root: expected object"},
    {CONFIG, "{" BASE ",'root':{'path':'r','readonly':'yes'}}",
     "config.json: root.readonly: expected boolean"},
    {CONFIG, "{" BASE ",'process':{'args':'sh','cwd':'/'}}",
     "config.json: process.args: expected array of strings"},
    {CONFIG, "{" BASE ",'process':{'args':['sh',1],'cwd':'/'}}",
     "config.json: process.args: expected array of strings"},
    {CONFIG, "{" BASE ",'process':{'cwd':'/'}}", "config.json: process.args: missing"},
    {CONFIG, "{" BASE ",'process':{'args':[],'cwd':'/'}}",
     "config.json: process.args: must not be empty"},
    {CONFIG, "{" BASE ",'process':{'args':['sh']}}", "config.json: process.cwd: missing"},
    {CONFIG, "{" BASE ",'process':{'args':['sh'],'cwd':'tmp'}}",
     "config.json: process.cwd: must be an absolute path"},
    {CONFIG, PROC("'terminal':1"), "config.json: process.terminal: expected boolean"},
    {CONFIG, PROC("'user':{'uid':-1}"),
     "config.json: process.user.uid: expected non-negative integer"},
    {CONFIG, PROC("'user':{'uid':1.5}"), "config.json: process.user.uid: expected integer"},
    {CONFIG, PROC("'user':{'gid':'0'}"), "config.json: process.user.gid: expected integer"},
    {CONFIG, PROC("'user':{'uid':4294967296}"),
     "config.json: process.user.uid: integer out of range"},
    {CONFIG, PROC("'user':{'additionalGids':[1,'x']}"),
     "config.json: process.user.additionalGids[1]: expected integer"},
    {CONFIG, PROC("'consoleSize':{'height':1}"), "config.json: process.consoleSize.width: missing"},
    {CONFIG, PROC("'capabilities':{'effective':['CAP_KILL','CAP_FOO']}"),
     "config.json: process.capabilities.effective[1]: unknown capability \"CAP_FOO\""},
    {CONFIG, PROC("'capabilities':{'bounding':'CAP_KILL'}"),
     "config.json: process.capabilities.bounding: expected array of strings"},
    {CONFIG, PROC("'rlimits':[{'type':'RLIMIT_FOO','hard':1,'soft':1}]"),
     "config.json: process.rlimits[0].type: unknown rlimit \"RLIMIT_FOO\""},
    {CONFIG, PROC("'rlimits':[{'type':'RLIMIT_NOFILE','hard':1}]"),
     "config.json: process.rlimits[0].soft: missing"},
    {CONFIG, PROC("'oomScoreAdj':'5'"), "config.json: process.oomScoreAdj: expected integer"},
    {CONFIG, PROC("'ioPriority':{'class':'IOPRIO_CLASS_X'}"),
     "config.json: process.ioPriority.class: unknown I/O priority class \"IOPRIO_CLASS_X\""},
    {CONFIG, "{" BASE ",'mounts':[{'destination':'/a'},{'destination':'/b'},{'destination':3}]}",
     "config.json: mounts[2].destination: expected string"},
    {CONFIG, "{" BASE ",'mounts':[{'destination':'/a'},{'type':'tmpfs'}]}",
     "config.json: mounts[1].destination: missing"},
    {CONFIG, "{" BASE ",'mounts':{}}", "config.json: mounts: expected array"},
    {CONFIG, "{" BASE ",'mounts':['/a']}", "config.json: mounts[0]: expected object"},
    {CONFIG, "{" BASE ",'mounts':[{'destination':'/a','options':[true]}]}",
     "config.json: mounts[0].options: expected array of strings"},
    {CONFIG, "{" BASE ",'hooks':{'prestart':[{'args':['x']}]}}",
     "config.json: hooks.prestart[0].path: missing"},
    {CONFIG, "{" BASE ",'hooks':{'poststop':[{'path':'/a'},{'path':'/b','timeout':0}]}}",
     "config.json: hooks.poststop[1].timeout: must be greater than zero"},
    {CONFIG, "{" BASE ",'annotations':{'foo':1}}", "config.json: annotations.foo: expected string"},
    {CONFIG, LINUX("'resources':{'memory':{'limit':'1g'}}"),
     "config.json: linux.resources.memory.limit: expected integer"},
    {CONFIG, LINUX("'resources':{'memory':{'limit':-2}}"),
     "config.json: linux.resources.memory.limit: integer out of range"},
    {CONFIG, LINUX("'resources':{'cpu':{'shares':-5}}"),
     "config.json: linux.resources.cpu.shares: expected non-negative integer"},
    {CONFIG, LINUX("'resources':{'blockIO':{'weight':70000}}"),
     "config.json: linux.resources.blockIO.weight: integer out of range"},
    {CONFIG, LINUX("'resources':{'blockIO':{'throttleReadBpsDevice':[{'major':8,'minor':0}]}}"),
     "config.json: linux.resources.blockIO.throttleReadBpsDevice[0].rate: missing"},
    {CONFIG, LINUX("'resources':{'devices':[{'access':'rwm'}]}"),
     "config.json: linux.resources.devices[0].allow: missing"},
    {CONFIG, LINUX("'resources':{'devices':[{'allow':true,'access':'rwx'}]}"),
     "config.json: linux.resources.devices[0].access: expected a combination of r, w, m"},
    {CONFIG, LINUX("'resources':{'unified':{'a':1}}"),
     "config.json: linux.resources.unified.a: expected string"},
    {CONFIG, LINUX("'namespaces':[{'type':'pid'},{'type':'foo'}]"),
     "config.json: linux.namespaces[1].type: unknown namespace type \"foo\""},
    {CONFIG, LINUX("'namespaces':[{'type':'pid'},{'type':'pid'}]"),
     "config.json: linux.namespaces[1].type: duplicate namespace \"pid\""},
    {CONFIG, LINUX("'namespaces':[{'path':'/proc/1/ns/net'}]"),
     "config.json: linux.namespaces[0].type: missing"},
    {CONFIG, LINUX("'uidMappings':[{'containerID':0,'hostID':1000}]"),
     "config.json: linux.uidMappings[0].size: missing"},
    {CONFIG, LINUX("'devices':[{'path':'/dev/x','type':'x'}]"),
     "config.json: linux.devices[0].type: expected one of c, b, u, p"},
    {CONFIG, LINUX("'devices':[{'path':'/dev/x','type':'c','minor':1}]"),
     "config.json: linux.devices[0].major: missing"},
    {CONFIG, LINUX("'sysctl':[]"), "config.json: linux.sysctl: expected object"},
    {CONFIG, LINUX("'maskedPaths':'/proc'"),
     "config.json: linux.maskedPaths: expected array of strings"},
    {CONFIG, LINUX("'personality':{'domain':'LINUX64'}"),
     "config.json: linux.personality.domain: unknown personality domain \"LINUX64\""},
    {CONFIG, LINUX("'timeOffsets':{'monotonic':{'nanosecs':-1}}"),
     "config.json: linux.timeOffsets.monotonic.nanosecs: expected non-negative integer"},
    {CONFIG, LINUX("'seccomp':{'defaultAction':'SCMP_ACT_FOO'}"),
     "config.json: linux.seccomp.defaultAction: unknown action \"SCMP_ACT_FOO\""},
    {CONFIG, LINUX("'seccomp':{}"), "config.json: linux.seccomp.defaultAction: missing"},
    {CONFIG, SECCOMP("'syscalls':[{'names':['read'],'action':'SCMP_ACT_NOPE'}]"),
     "config.json: linux.seccomp.syscalls[0].action: unknown action \"SCMP_ACT_NOPE\""},
    {CONFIG, SECCOMP("'syscalls':[{'action':'SCMP_ACT_ALLOW'}]"),
     "config.json: linux.seccomp.syscalls[0].names: missing"},
    {CONFIG,
     SECCOMP("'syscalls':[{'names':['a'],'action':'SCMP_ACT_ALLOW','args':[{'index':0,'value':1,"
             "'op':'SCMP_CMP_XX'}]}]"),
     "config.json: linux.seccomp.syscalls[0].args[0].op: unknown operator \"SCMP_CMP_XX\""},
    {CONFIG,
     SECCOMP("'syscalls':[{'names':['a'],'action':'SCMP_ACT_ALLOW','args':[{'index':0,"
             "'op':'SCMP_CMP_EQ'}]}]"),
     "config.json: linux.seccomp.syscalls[0].args[0].value: missing"},
    {CONFIG, SECCOMP("'architectures':['SCMP_ARCH_X86_64','SCMP_ARCH_Z80']"),
     "config.json: linux.seccomp.architectures[1]: unknown architecture \"SCMP_ARCH_Z80\""},
    {CONFIG, SECCOMP("'flags':['SECCOMP_FILTER_FLAG_NOPE']"),
     "config.json: linux.seccomp.flags[0]: unknown flag \"SECCOMP_FILTER_FLAG_NOPE\""},
    {CONFIG, SECCOMP("'defaultErrnoRet':-1"),
     "config.json: linux.seccomp.defaultErrnoRet: expected non-negative integer"},
    {PROCESS, "{'args':['x']}", "process.json: cwd: missing"},
    {PROCESS, "{'args':['x'],'cwd':'/','user':{'uid':true}}",
     "process.json: user.uid: expected integer"},
    {PROCESS, "'x'", "process.json: expected object"},
    {RESOURCES, "{'memory':{'limit':true}}", "resources: memory.limit: expected integer"},
    {RESOURCES, "{'pids':{'limit':1e3}}", "resources: pids.limit: expected integer"},
    {RESOURCES, "{'hugepageLimits':[{'limit':1}]}",
     "resources: hugepageLimits[0].pageSize: missing"},
};

static int parse_kind(enum doc_kind kind, const char *json, size_t len, ar_err *err)
{
  struct ar_spec *s = NULL;
  struct ar_process *p = NULL;
  struct ar_resources *r = NULL;
  int rc;

  switch (kind) {
  case CONFIG:
    rc = ar_spec_parse(json, len, "config.json", &s, err);
    break;
  case PROCESS:
    rc = ar_process_parse(json, len, "process.json", &p, err);
    break;
  default:
    rc = ar_resources_parse(json, len, "resources", &r, err);
  }
  ar_spec_free(s);
  ar_process_free(p);
  ar_resources_free(r);
  return rc;
}

static void test_bad_docs(void)
{
  for (size_t i = 0; i < ARRAY_SIZE(bad_cases); i++) {
    cleanup_free char *doc = q(bad_cases[i].json);
    cleanup_err ar_err err = NULL;
    int rc = parse_kind(bad_cases[i].kind, doc, strlen(doc), &err);

    if (rc == 0 || err == NULL) {
      ok(false, "rejected: %s", bad_cases[i].want);
      continue;
    }
    is_str(err->msg, bad_cases[i].want, bad_cases[i].want);
  }
}

static void test_hostile_input(void)
{
  size_t depth = 100000;
  cleanup_free char *deep = xmalloc(2 * depth + 1);
  cleanup_err ar_err err = NULL;
  const char nul_doc[] = "{\"ociVersion\":\"1\0\"}";

  memset(deep, '[', depth);
  memset(deep + depth, ']', depth);
  deep[2 * depth] = '\0';
  ok(parse_kind(CONFIG, deep, 2 * depth, &err) < 0 && err &&
         strcmp(err->msg, "config.json: invalid JSON: nested deeper than 200 levels") == 0,
     "deep nesting rejected before yajl");
  ar_error_free(&err);
  ok(parse_kind(CONFIG, nul_doc, sizeof(nul_doc) - 1, &err) < 0 && err &&
         strcmp(err->msg, "config.json: invalid JSON: NUL byte in document") == 0,
     "NUL byte rejected");
  ar_error_free(&err);
  ok(ar_spec_load("/nonexistent/config.json", "config.json", &(struct ar_spec *){NULL}, &err) < 0 &&
         err && err->status != 0,
     "ar_spec_load: missing file is a system error");
}

/* ---- state ---- */

static void test_state(void)
{
  struct ar_kv ann[] = {{"a", "b"}};
  struct ar_state st = {.id = "c1",
                        .pid = 4242,
                        .pid_start = 123456789,
                        .bundle = "/b",
                        .rootfs = "/b/rootfs",
                        .created = "2024-01-02T03:04:05.123456Z",
                        .owner = "",
                        .started = true,
                        .monitor_pid = 4240,
                        .cgroup = "v1:/agentrun/c1",
                        .annotations = ann,
                        .n_annotations = 1};
  cleanup_free char *js = NULL, *oci = NULL, *js2 = NULL, *stopped = NULL;
  cleanup_err ar_err err = NULL;
  struct ar_state *back = NULL;

  ar_state_to_json(&st, &js, &err);
  ok(ar_state_parse(js, strlen(js), &back, &err) == 0 && back && strcmp(back->id, "c1") == 0 &&
         back->pid == 4242 && back->pid_start == 123456789 && back->started &&
         back->monitor_pid == 4240 && strcmp(back->cgroup, "v1:/agentrun/c1") == 0 &&
         back->n_annotations == 1 && strcmp(back->owner, "") == 0,
     "state file round trip");
  if (back) {
    ar_state_to_json(back, &js2, &err);
    is_str(js2, js, "state file: emit(parse(x)) == x");
  }
  ar_state_free(back);
  back = NULL;

  ar_state_oci_json(&st, "running", true, &oci, &err);
  is_str(oci,
         "{\n  \"ociVersion\": \"" AR_OCI_VERSION "\",\n  \"id\": \"c1\",\n  \"pid\": 4242,\n"
         "  \"status\": \"running\",\n  \"bundle\": \"/b\",\n  \"rootfs\": \"/b/rootfs\",\n"
         "  \"created\": \"2024-01-02T03:04:05.123456Z\",\n  \"annotations\": {\n"
         "    \"a\": \"b\"\n  },\n  \"owner\": \"\"\n}",
         "OCI state: runc's fields, order and layout");
  st.pid = 0;
  st.n_annotations = 0;
  ar_state_oci_json(&st, "stopped", false, &stopped, &err);
  is_str(stopped,
         "{\"ociVersion\":\"" AR_OCI_VERSION "\",\"id\":\"c1\",\"pid\":0,\"status\":\"stopped\","
         "\"bundle\":\"/b\",\"rootfs\":\"/b/rootfs\",\"created\":\"2024-01-02T03:04:05.123456Z\","
         "\"owner\":\"\"}",
         "OCI state: stopped shows pid 0, no empty annotations");
  ok(ar_state_parse("{\"id\":\"x\"}", 10, &back, &err) < 0 &&
         strcmp(err->msg, "state.json: pid: missing") == 0,
     "state file: missing field named");
  ar_state_free(NULL);
}

/* ---- names and helpers ---- */

static void test_names(void)
{
  struct ar_kv *kv = NULL;
  size_t n = 0;

  ok(ar_ns_from_name("network") == AR_NS_NETWORK && ar_ns_from_name("net") == -1 &&
         strcmp(ar_ns_proc_name(AR_NS_MOUNT), "mnt") == 0 &&
         ar_ns_clone_flag(AR_NS_USER) == CLONE_NEWUSER &&
         strcmp(ar_ns_name(AR_NS_TIME), "time") == 0 && ar_ns_clone_flag(AR_NS_TIME) == 0x80,
     "namespace tables");
  ok(ar_cap_last() == 40 && ar_cap_from_name("CAP_CHOWN") == 0 &&
         ar_cap_from_name("CAP_SYS_ADMIN") == 21 && ar_cap_from_name("CAP_BPF") == 39 &&
         strcmp(ar_cap_name(40), "CAP_CHECKPOINT_RESTORE") == 0 && ar_cap_name(41) == NULL &&
         ar_cap_from_name("cap_chown") == -1,
     "capability table");
  ok(ar_rlimit_from_name("RLIMIT_NPROC") == RLIMIT_NPROC &&
         strcmp(ar_rlimit_name(RLIMIT_RTTIME), "RLIMIT_RTTIME") == 0 &&
         ar_rlimit_from_name("NOFILE") == -1,
     "rlimit table");
  ok(strcmp(ar_hook_phase_name(AR_HOOK_CREATE_CONTAINER), "createContainer") == 0 &&
         strcmp(ar_seccomp_action_name(AR_SECCOMP_KILL_PROCESS), "SCMP_ACT_KILL_PROCESS") == 0 &&
         strcmp(ar_seccomp_op_name(AR_OP_MASKED_EQ), "SCMP_CMP_MASKED_EQ") == 0,
     "hook, seccomp action and op names");
  ar_kv_set(&kv, &n, "a", "1");
  ar_kv_set(&kv, &n, "b", "2");
  ar_kv_set(&kv, &n, "a", "3");
  ok(n == 2 && strcmp(kv[0].value, "3") == 0, "ar_kv_set replaces");
  ar_kv_set(&kv, &n, "a", NULL);
  ok(n == 1 && strcmp(kv[0].key, "b") == 0, "ar_kv_set with NULL removes");
  free(kv[0].key);
  free(kv[0].value);
  free(kv);
  ok(ar_spec_annotation(NULL, "x") == NULL && ar_spec_namespace(NULL, AR_NS_PID) == NULL,
     "helpers accept NULL");
  ar_spec_free(NULL);
  ar_process_free(NULL);
  ar_resources_free(NULL);
  ar_resources_clear(NULL);
  ar_seccomp_free(NULL);
}

int main(void)
{
  test_jsonw_escaping();
  test_jsonw_structure();
  test_runc_default();
  test_runc_rootless();
  test_maximal();
  test_lenient();
  test_process_and_resources();
  test_bad_docs();
  test_hostile_input();
  test_state();
  test_names();
  printf("1..%d\n", n_tests);
  return n_failed == 0 ? 0 : 1;
}
