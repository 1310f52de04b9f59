#include <config.h>

#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/prctl.h>

#include "cli.h"
#include "selfexe.h"
#include "log.h"
#include "statedir.h"
#include "utils.h"

static const struct {
  const char *name;
  ar_cmd_fn fn;
  const char *help;
} verbs[] = {
    {"sandbox", ar_cmd_sandbox, "run one command in a disposable hardened box: sandbox -- CMD"},
    {"create", ar_cmd_create, "create a container"},
    {"start", ar_cmd_start, "start a created container"},
    {"run", ar_cmd_run, "create and start a container, wait for it and delete it"},
    {"state", ar_cmd_state, "print the state of a container"},
    {"kill", ar_cmd_kill, "send a signal to the container's init (or all with --all)"},
    {"delete", ar_cmd_delete, "delete a container and everything it made"},
    {"list", ar_cmd_list, "list containers"},
    {"spec", ar_cmd_spec, "write a default config.json"},
    {"exec", ar_cmd_exec, "run a new process inside a running container"},
    {"inspect", ar_cmd_inspect, "show the effective spec and what the policy did"},
    {"policy", ar_cmd_policy, "policy show: print the host policy in force"},
    {"ps", ar_cmd_ps, "list the processes of a container (--format table|json)"},
    {"pause", ar_cmd_pause, "freeze every process of a container"},
    {"resume", ar_cmd_resume, "thaw a paused container"},
    {"update", ar_cmd_update, "change a container's resource limits (within the host policy)"},
    {"events", ar_cmd_events, "stream a container's stats and OOM events as JSON"},
    {"features", ar_cmd_features, "print the features document of the runtime-spec"},
    {"checkpoint", ar_cmd_checkpoint, "not supported"},
    {"restore", ar_cmd_restore, "not supported"},
};

static void usage(FILE *f)
{
  fprintf(f, "usage: agentrun [global options] COMMAND [options] [args]\n\n"
             "global options:\n"
             "  --root DIR          state root (default " AR_DEFAULT_ROOT ")\n"
             "  --log FILE          log file (default stderr)\n"
             "  --log-format FMT    text or json\n"
             "  --debug             debug logging\n"
             "  --systemd-cgroup    cgroupsPath is slice:prefix:name\n"
             "  --policy FILE       host policy (else $AGENTRUN_POLICY, else "
             "/etc/agentrun/policy.json)\n"
             "  --rootless VALUE    accepted for runc compatibility, ignored\n"
             "  --criu PATH         accepted for runc compatibility, ignored\n"
             "  --version, -v       print the version\n\ncommands:\n");
  for (size_t i = 0; i < ARRAY_SIZE(verbs); i++)
    fprintf(f, "  %-10s %s\n", verbs[i].name, verbs[i].help);
}

static void version(void)
{
  const struct scmp_version *v = seccomp_version();
  printf("agentrun version %s\nspec: %s\nlibseccomp: %u.%u.%u\n", PACKAGE_VERSION, AR_OCI_VERSION,
         v->major, v->minor, v->micro);
}

int main(int argc, char **argv)
{
  struct ar_ctx ctx = {.root = AR_DEFAULT_ROOT};
  const char *log_path = NULL, *log_format = "text", *rootless = NULL, *criu = NULL;
  bool show_version = false;
  const struct ar_opt opts[] = {
      {"root", 0, AR_OPT_STRING, &ctx.root},
      {"log", 0, AR_OPT_STRING, &log_path},
      {"log-format", 0, AR_OPT_STRING, &log_format},
      {"debug", 0, AR_OPT_FLAG, &ctx.debug},
      {"systemd-cgroup", 0, AR_OPT_FLAG, &ctx.systemd_cgroup},
      {"policy", 0, AR_OPT_STRING, &ctx.policy_path},
      {"rootless", 0, AR_OPT_STRING, &rootless},
      {"criu", 0, AR_OPT_STRING, &criu},
      {"version", 'v', AR_OPT_FLAG, &show_version},
  };
  int first;

  /* Our children inherit this: until they execve, no container process may open
   * /proc/<pid>/exe or ptrace them. */
  prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  ar_selfexe_init(argc, argv);
  if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
    usage(stdout);
    return 0;
  }
  first = ar_parse_opts("", argc, argv, opts, ARRAY_SIZE(opts));
  if (first < 0)
    return 1;
  if (show_version) {
    version();
    return 0;
  }
  if (strcmp(log_format, "text") != 0 && strcmp(log_format, "json") != 0) {
    fprintf(stderr, "agentrun: --log-format: expected text or json, got \"%s\"\n", log_format);
    return 1;
  }
  if (ar_log_init(log_path, strcmp(log_format, "json") == 0, ctx.debug) < 0) {
    fprintf(stderr, "agentrun: --log '%s': cannot open\n", log_path);
    return 1;
  }
  if (first >= argc) {
    usage(stderr);
    return 1;
  }
  for (size_t i = 0; i < ARRAY_SIZE(verbs); i++)
    if (strcmp(argv[first], verbs[i].name) == 0)
      return verbs[i].fn(&ctx, argc - first, argv + first);
  return ar_usage_error("", "unknown command \"%s\"", argv[first]);
}
