#include <config.h>
#include "cli.h"

#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>

#include "log.h"
#include "utils.h"

int ar_parse_opts(const char *verb, int argc, char **argv, const struct ar_opt *opts, size_t n)
{
  struct option *lo = xcalloc(n + 2, sizeof(*lo));
  char shorts[128] = "+";
  size_t sl = 1;
  int c, idx, ret = -1;

  for (size_t i = 0; i < n; i++) {
    lo[i].name = opts[i].name;
    lo[i].has_arg = opts[i].kind == AR_OPT_FLAG ? no_argument : required_argument;
    lo[i].val = 256 + (int)i;
    if (opts[i].short_name && sl < sizeof(shorts) - 3) {
      shorts[sl++] = opts[i].short_name;
      if (opts[i].kind != AR_OPT_FLAG)
        shorts[sl++] = ':';
    }
  }
  lo[n].name = "help";
  lo[n].val = 'h';
  shorts[sl++] = 'h';
  shorts[sl] = '\0';
  optind = 1;
  opterr = 0;
  while ((c = getopt_long_only(argc, argv, shorts, lo, &idx)) != -1) {
    const struct ar_opt *o = NULL;
    if (c == 'h') {
      printf("usage: agentrun %s [options] ...\n", verb);
      exit(0);
    }
    if (c >= 256)
      o = &opts[c - 256];
    for (size_t i = 0; o == NULL && i < n; i++)
      if (opts[i].short_name == c)
        o = &opts[i];
    if (o == NULL) {
      ar_usage_error(verb, "unknown or incomplete option '%s'", argv[optind - 1]);
      goto out;
    }
    if (o->kind == AR_OPT_FLAG) {
      *(bool *)o->target = true;
    } else if (o->kind == AR_OPT_LIST) {
      struct ar_strlist *l = o->target;
      l->v = xrealloc(l->v, (l->n + 1) * sizeof(char *));
      l->v[l->n++] = optarg;
    } else if (o->kind == AR_OPT_STRING) {
      *(const char **)o->target = optarg;
    } else {
      char *end;
      long v = strtol(optarg, &end, 10);
      if (*optarg == '\0' || *end || v < 0 || v > 1 << 20) {
        ar_usage_error(verb, "--%s: expected a non-negative integer, got \"%s\"", o->name, optarg);
        goto out;
      }
      *(int *)o->target = (int)v;
    }
  }
  ret = optind;
out:
  free(lo);
  return ret;
}

int ar_fail(ar_err *err)
{
  ar_log_error_msg(*err ? (*err)->msg : "unknown error");
  ar_error_free(err);
  return 1;
}

int ar_usage_error(const char *verb, const char *fmt, ...)
{
  va_list ap;
  char *msg;
  va_start(ap, fmt);
  if (vasprintf(&msg, fmt, ap) < 0)
    abort();
  va_end(ap);
  ar_log_error_msg(msg);
  fprintf(stderr, "usage: see 'agentrun %s%s--help'\n", verb, *verb ? " " : "");
  free(msg);
  return 1;
}

int ar_parse_signal(const char *s)
{
  char *end;
  long v;
  if (isdigit((unsigned char)*s)) {
    v = strtol(s, &end, 10);
    return (*end || v <= 0 || v >= NSIG) ? -1 : (int)v;
  }
  if (strncasecmp(s, "SIG", 3) == 0)
    s += 3;
  for (int i = 1; i < NSIG; i++) {
    const char *abbrev = sigabbrev_np(i);
    if (abbrev && strcasecmp(abbrev, s) == 0)
      return i;
  }
  if (strncasecmp(s, "RTMIN+", 6) == 0 || strncasecmp(s, "RTMAX-", 6) == 0) {
    v = strtol(s + 6, &end, 10);
    if (*end == '\0' && v >= 0) {
      v = toupper((unsigned char)s[2]) == 'M' && toupper((unsigned char)s[3]) == 'I'
              ? SIGRTMIN + v
              : SIGRTMAX - v;
      return (v >= SIGRTMIN && v <= SIGRTMAX) ? (int)v : -1;
    }
  }
  return -1;
}

static volatile pid_t forward_pid;

static void forward_signal(int sig)
{
  if (forward_pid > 0)
    kill(forward_pid, sig);
}

void ar_forward_signals(pid_t pid)
{
  static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH};
  struct sigaction sa = {.sa_handler = forward_signal, .sa_flags = SA_RESTART};
  forward_pid = pid;
  sigemptyset(&sa.sa_mask);
  for (size_t i = 0; i < ARRAY_SIZE(sigs); i++)
    sigaction(sigs[i], &sa, NULL);
}

