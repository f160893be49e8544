/*
 * Prints what a second preloaded interposer (libnexttest.so) gets from
 * dlsym(RTLD_NEXT) for getpid and for cuMemAlloc_v2, and what the program
 * itself gets, so the test can compare them with libc's and the driver's;
 * then, for names glibc resolves by rules of its own (an IFUNC, a default
 * among several versions, weak data, a thread-local variable, a missing
 * name), where the answer lies, to be compared with a run without us.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
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

/* Library and offset: the same from run to run, unlike the address. */
static void
print_place(const char *name, void *p)
{
  Dl_info info;
  if (p != NULL && dladdr(p, &info))
    printf("%s %s+%#lx\n", name, where(p),
           (unsigned long)((uintptr_t)p - (uintptr_t)info.dli_fbase));
  else
    printf("%s %s\n", name, where(p));
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
  static const char *const names[] = { "strlen", "memcpy", "realpath",
                                       "pthread_cond_wait", "environ",
                                       "stdout", "no_such_symbol" };
  for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++)
    print_place(names[i], lookup(names[i]));
  printf("errno this_thread=%d\n", lookup("errno") == (void *)&errno);
  return 0;
}
