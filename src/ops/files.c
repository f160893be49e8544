/*
 * Files the launcher and the device plugin write for other programs:
 * whole or not at all.
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/log.h"
#include "ops/files.h"

int
cmg__write_all(int fd, const char *text, size_t len)
{
  while (len > 0) {
    ssize_t w = write(fd, text, len);
    if (w < 0 && errno == EINTR)
      continue;
    if (w < 0)
      return -errno;
    text += w;
    len -= (size_t)w;
  }
  return 0;
}

int
cmg__write_atomic(const char *path, const char *text, size_t len)
{
  const char *slash = strrchr(path, '/');
  size_t dir_len = slash != NULL ? (size_t)(slash - path) + 1 : 0;
  char *tmp = malloc(strlen(path) + 16);
  int rc;

  if (tmp == NULL) {
    cmg__log("out of memory");
    return -ENOMEM;
  }
  /* CDI runtimes skip names without .json, node_exporter those without
   * .prom, and both skip hidden files. */
  sprintf(tmp, "%.*s.%s.XXXXXX", (int)dir_len, path, path + dir_len);
  int fd = mkstemp(tmp);
  if (fd < 0) {
    rc = -errno;
    cmg__log("cannot create a temporary file beside '%s': %s", path,
             strerror(-rc));
    free(tmp);
    return rc;
  }
  rc = fchmod(fd, 0644) != 0 ? -errno : 0;
  if (rc == 0)
    rc = cmg__write_all(fd, text, len);
  if (rc == 0)
    rc = fsync(fd) != 0 ? -errno : 0;
  if (close(fd) != 0 && rc == 0)
    rc = -errno;
  if (rc == 0 && rename(tmp, path) != 0)
    rc = -errno;
  if (rc != 0) {
    cmg__log("cannot write '%s': %s", path, strerror(-rc));
    unlink(tmp);
  }
  free(tmp);
  return rc;
}

bool
cmg__file_has_ext(const char *path, const char *ext)
{
  size_t len = strlen(path), n = strlen(ext);
  return len > n && strcmp(path + len - n, ext) == 0 &&
         path[len - n - 1] != '/';
}
