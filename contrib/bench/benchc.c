/* benchc: the in-container half of contrib/bench, linked statically into the busybox rootfs.
 *
 *   benchc now           print CLOCK_MONOTONIC in ns (to time a shell loop from inside)
 *   benchc getppid N     N raw getppid(2) calls; print the mean CPU ns per call
 *   benchc nop           exit 0
 *
 * getppid is the probe because it does no work in the kernel and is not cached by libc, so
 * what the loop measures is the syscall entry and exit plus every seccomp filter in the way.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static uint64_t cpu_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* Timed on the thread's CPU clock: time spent preempted by other load is not counted. */
static int getppid_loop(long n)
{
  volatile long sink = 0;
  /* warm up caches and branch predictors before the timed part */
  for (long i = 0; i < n / 10 + 1; i++)
    sink += syscall(SYS_getppid);
  uint64_t t0 = cpu_ns();
  for (long i = 0; i < n; i++)
    sink += syscall(SYS_getppid);
  uint64_t dt = cpu_ns() - t0;
  printf("%.2f\n", (double)dt / (double)n);
  return sink == -1;
}

int main(int argc, char **argv)
{
  if (argc >= 2 && strcmp(argv[1], "now") == 0) {
    printf("%llu\n", (unsigned long long)now_ns());
    return 0;
  }
  if (argc >= 3 && strcmp(argv[1], "getppid") == 0)
    return getppid_loop(atol(argv[2]) > 0 ? atol(argv[2]) : 1);
  if (argc >= 2 && strcmp(argv[1], "nop") == 0)
    return 0;
  fprintf(stderr, "usage: benchc now | getppid N | nop\n");
  return 2;
}
