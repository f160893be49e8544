/*
 * Prints what a second preloaded interposer (libnexttest.so) gets from
 * dlsym(RTLD_NEXT) for getpid and for cuMemAlloc_v2, and what the program
 * itself gets, so the test can compare them with libc's and the driver's.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <unistd.h>

static const char *
where(void *p)
{
  Dl_info info;
  if (p == NULL)
    return "null";
  if (!dladdr(p, &info) || info.dli_fname == NULL)
    return "?";
  const char *slash = info.dli_fname;
  for (const char *s = info.dli_fname; *s; s++)
    if (*s == '/')
      slash = s + 1;
  return slash;
}

int
main(void)
{
  void *(*lookup)(const char *) =
      (void *(*)(const char *))dlsym(RTLD_DEFAULT, "nexttest_lookup");
  void *cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
  if (lookup == NULL || cuda == NULL) {
    fprintf(stderr, "app_next: libnexttest.so or libcuda.so.1 not loaded\n");
    return 64;
  }
  printf("getpid lib=%s works=%d\n", where(lookup("getpid")),
         getpid() == (pid_t)getppid() ? 0 : getpid() > 0);
  printf("cuMemAlloc_v2 lib=%s\n", where(lookup("cuMemAlloc_v2")));
  printf("main_next lib=%s\n", where(dlsym(RTLD_NEXT, "getpid")));
  return 0;
}
