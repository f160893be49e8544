/*
 * app_ctor: linked with libhardctor, whose constructor allocates before
 * main (and before the constructor of any preloaded library).  Prints what
 * the constructor got, then what the interposer counted:
 *   ctor rc0=RC ptr0=0x... rc1=RC
 *   cmg live=N allocs=N denials=N      (cmg absent without the interposer)
 * and exits with status 0, keeping the memory (the report's to show).
 */
#include <dlfcn.h>
#include <stdio.h>

#include "cumemguard.h"

extern int hardctor_rc[2];
extern unsigned long long hardctor_ptr[2];

int
main(void)
{
  printf("ctor rc0=%d ptr0=0x%llx rc1=%d\n", hardctor_rc[0], hardctor_ptr[0],
         hardctor_rc[1]);
  int (*stats)(int, struct cmg_device_stats *, size_t) =
      (int (*)(int, struct cmg_device_stats *, size_t))dlsym(
          RTLD_DEFAULT, "cmg_device_stats");
  struct cmg_device_stats s;
  if (stats == NULL || stats(0, &s, sizeof(s)) != 0) {
    printf("cmg absent\n");
    return 0;
  }
  printf("cmg live=%llu allocs=%llu denials=%llu\n",
         (unsigned long long)s.live_bytes, (unsigned long long)s.allocations,
         (unsigned long long)s.denials);
  return 0;
}
