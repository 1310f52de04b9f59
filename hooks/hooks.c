#include <config.h>
#include "hooks/hooks.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

#include "runtime/utils.h"

#define HOOK_OUTPUT_MAX 4096

/* Child side: stdin is a pipe holding the state; stdout/stderr go to the capture pipe. */
static void __attribute__((noreturn))
exec_hook(const struct ar_hook *h, int in_fd, int out_fd, const char *cwd)
{
  cleanup_strv char **argv = NULL;
  cleanup_strv char **envp = NULL;
  sigset_t all;

  sigemptyset(&all);
  sigprocmask(SIG_SETMASK, &all, NULL);
  if (dup2(in_fd, 0) < 0 || dup2(out_fd, 1) < 0 || dup2(out_fd, 2) < 0)
    _exit(127);
  ar_close_fds_from(3);
  if (cwd && chdir(cwd) < 0)
    _exit(127);
  if (h->n_args > 0) {
    argv = ar_strv_dup(h->args, h->n_args);
  } else {
    argv = xcalloc(2, sizeof(char *));
    argv[0] = xstrdup(h->path);
  }
  envp = ar_strv_dup(h->env, h->n_env);
  execve(h->path, argv, envp);
  dprintf(2, "exec %s: %s", h->path, strerror(errno));
  _exit(127);
}

/* Collect output until the hook exits or its deadline passes. */
static int wait_hook(pid_t pid, int pidfd, int out_fd, int timeout_s, char *out, size_t *out_len,
                     int *ret_status, bool *timed_out)
{
  uint64_t deadline = timeout_s > 0 ? ar_now_ns(CLOCK_MONOTONIC) + timeout_s * 1000000000ULL : 0;
  struct pollfd pfd[2] = {{.fd = out_fd, .events = POLLIN}, {.fd = pidfd, .events = POLLIN}};
  bool exited = pidfd < 0; /* without a pidfd, the closing output pipe ends the wait */

  while (!exited || pfd[0].fd >= 0) {
    int wait_ms = -1;
    if (deadline) {
      uint64_t now = ar_now_ns(CLOCK_MONOTONIC);
      if (now >= deadline) {
        *timed_out = true;
        kill(pid, SIGKILL);
        break;
      }
      wait_ms = (deadline - now) / 1000000 + 1;
    }
    pfd[1].fd = exited ? -1 : pidfd;
    if (poll(pfd, 2, wait_ms) < 0 && errno != EINTR)
      return -1;
    if (pfd[0].revents) {
      char buf[512];
      ssize_t n = read(out_fd, buf, sizeof(buf));
      if (n <= 0) {
        pfd[0].fd = -1;
      } else if (*out_len < HOOK_OUTPUT_MAX) {
        size_t take = n < (ssize_t)(HOOK_OUTPUT_MAX - *out_len) ? (size_t)n : HOOK_OUTPUT_MAX - *out_len;
        memcpy(out + *out_len, buf, take);
        *out_len += take;
      }
    }
    if (pfd[1].fd >= 0 && pfd[1].revents)
      exited = true;
  }
  while (waitpid(pid, ret_status, 0) < 0 && errno == EINTR)
    ;
  return 0;
}

static int run_one(const struct ar_hook *h, const char *phase, const char *state_json,
                   const char *cwd, ar_err *err)
{
  int in[2], outp[2], status = 0, pidfd;
  bool timed_out = false;
  char out[HOOK_OUTPUT_MAX + 1];
  size_t out_len = 0;
  pid_t pid;

  if (pipe2(in, O_CLOEXEC) < 0)
    return ar_error(err, errno, "%s hook: pipe", phase);
  if (pipe2(outp, O_CLOEXEC) < 0) {
    close(in[0]);
    close(in[1]);
    return ar_error(err, errno, "%s hook: pipe", phase);
  }
  pid = fork();
  if (pid < 0) {
    int e = errno;
    close(in[0]), close(in[1]), close(outp[0]), close(outp[1]);
    return ar_error(err, e, "%s hook: fork", phase);
  }
  if (pid == 0)
    exec_hook(h, in[0], outp[1], cwd);
  close(in[0]);
  close(outp[1]);
  /* A hook that never reads stdin must not block us: the state fits in the pipe buffer. */
  signal(SIGPIPE, SIG_IGN);
  ar_write_all(in[1], state_json, strlen(state_json));
  close(in[1]);
  pidfd = syscall(SYS_pidfd_open, pid, 0);
  wait_hook(pid, pidfd, outp[0], h->has_timeout ? h->timeout : 0, out, &out_len, &status,
            &timed_out);
  if (pidfd >= 0)
    close(pidfd);
  close(outp[0]);
  out[out_len] = '\0';
  while (out_len > 0 && (out[out_len - 1] == '\n' || out[out_len - 1] == ' '))
    out[--out_len] = '\0';
  if (timed_out)
    return ar_error(err, 0, "%s hook %s: timed out after %d s%s%s", phase, h->path, h->timeout,
                    out_len ? ": " : "", out);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
    return 0;
  if (WIFSIGNALED(status))
    return ar_error(err, 0, "%s hook %s: killed by signal %d%s%s", phase, h->path,
                    WTERMSIG(status), out_len ? ": " : "", out);
  return ar_error(err, 0, "%s hook %s: exit status %d%s%s", phase, h->path, WEXITSTATUS(status),
                  out_len ? ": " : "", out);
}

int ar_hooks_run(const struct ar_hook_list *list, enum ar_hook_phase phase, const char *state_json,
                 const char *cwd, ar_err *err)
{
  for (size_t i = 0; i < list->n_hooks; i++)
    if (run_one(&list->hooks[i], ar_hook_phase_name(phase), state_json, cwd, err) < 0)
      return -1;
  return 0;
}
