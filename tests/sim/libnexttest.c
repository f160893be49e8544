/*
 * A second interposer, preloaded after libcumemguard.so: it wraps getpid and
 * finds the real one with dlsym(RTLD_NEXT), as interposers do.  RTLD_NEXT is
 * relative to the caller's object, so the answer must be libc's getpid, not
 * this library's own (which a dlsym override forwarding RTLD_NEXT from its
 * own object would return).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <unistd.h>

__attribute__((visibility("default"))) pid_t
getpid(void)
{
  pid_t (*next)(void) = (pid_t(*)(void))dlsym(RTLD_NEXT, "getpid");
  return next != NULL && next != getpid ? next() : -1;
}

/* What RTLD_NEXT gives this library for `name`.  The volatile store keeps
 * the compiler from making the dlsym call a tail call, which would make
 * this library's caller the one glibc searches after. */
__attribute__((visibility("default"))) void *
nexttest_lookup(const char *name)
{
  void *volatile p = dlsym(RTLD_NEXT, name);
  return p;
}
