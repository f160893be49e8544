/*
 * Finding the installed libcumemguard.so (library.c): the launcher preloads
 * it, and `cumemguard cdi` mounts it into containers.
 */
#ifndef CMG_LAUNCHER_LIBRARY_H
#define CMG_LAUNCHER_LIBRARY_H

#define CMG__LIBRARY_VAR "CUMEMGUARD_LIBRARY"

/* The absolute path of the library: $CUMEMGUARD_LIBRARY, else the libdir
 * it was installed to, else ../lib beside this program.  Returns a malloc'd
 * string, or NULL after printing one line saying why there is none. */
char *cmg__find_library(void);

#endif /* CMG_LAUNCHER_LIBRARY_H */
