#include <config.h>
#include "selfexe.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>

#include "utils.h"

#define CLONED_ENV "_AGENTRUN_SEALED_EXE"

extern char **environ;
static int saved_argc;
static char **saved_argv;

void ar_selfexe_init(int argc, char **argv)
{
  saved_argc = argc;
  saved_argv = argv;
}

static bool has_cap(const struct ar_process *p, const char *name)
{
  const struct ar_capabilities *c = &p->capabilities;
  if (!p->has_capabilities)
    return false;
  for (size_t i = 0; i < c->n_names[AR_CAP_BOUNDING]; i++)
    if (strcmp(c->names[AR_CAP_BOUNDING][i], name) == 0)
      return true;
  return false;
}

bool ar_selfexe_exposed(const struct ar_spec *s, const struct ar_process *p, bool joining_pidns)
{
  const struct ar_namespace *pid = ar_spec_namespace(s, AR_NS_PID);
  const struct ar_namespace *user = ar_spec_namespace(s, AR_NS_USER);
  bool shares_pid = joining_pidns || pid == NULL || (pid->path && *pid->path);
  /* /proc/<pid>/exe of a non-dumpable process needs CAP_SYS_PTRACE over our user namespace:
   * container root has it only without a user namespace of its own. */
  return shares_pid && user == NULL && has_cap(p, "CAP_SYS_PTRACE");
}

static int sealed_copy(ar_err *err)
{
  cleanup_close int src = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
  struct stat st;
  int fd;
  off_t off = 0;
  if (src < 0 || fstat(src, &st) < 0)
    return ar_error(err, errno, "open /proc/self/exe");
  fd = memfd_create("agentrun", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0)
    return ar_error(err, errno, "memfd_create");
  while (off < st.st_size)
    if (sendfile(fd, src, &off, st.st_size - off) <= 0) {
      int e = errno;
      close(fd);
      return ar_error(err, e, "copy the runtime binary");
    }
  if (fcntl(fd, F_ADD_SEALS, F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE) < 0) {
    int e = errno;
    close(fd);
    return ar_error(err, e, "seal the runtime binary copy");
  }
  return fd;
}

int ar_selfexe_reexec(ar_err *err)
{
  int fd;
  if (getenv(CLONED_ENV) != NULL || saved_argv == NULL)
    return 0; /* already running from the sealed copy */
  if ((fd = sealed_copy(err)) < 0)
    return -1;
  setenv(CLONED_ENV, "1", 1);
  {
    /* the copy has no directory: tell it where our monitor binary sits */
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    char *slash;
    if (n > 0 && (self[n] = '\0', slash = strrchr(self, '/')) != NULL) {
      *slash = '\0';
      setenv("_AGENTRUN_SELF_DIR", self, 1);
    }
  }
  fexecve(fd, saved_argv, environ);
  unsetenv(CLONED_ENV);
  close(fd);
  return ar_error(err, errno, "re-exec from a sealed copy");
}

int ar_selfexe_protect(int argc, char **argv, ar_err *err)
{
  ar_selfexe_init(argc, argv);
  return ar_selfexe_reexec(err);
}
