/*
 * What the dynamic linker gives without us (dynlink.c): libc's own dlsym,
 * never the library's override of it, and a symbol's definition in one
 * loaded object, read from its dynamic symbol table, for dlsym(RTLD_NEXT)
 * without dlopen.  Everything below the preload library that looks a
 * symbol up comes here, so that no lookup of ours goes through the
 * override the library exports.
 */
#ifndef CMG_RUNTIME_LINKER_DYNLINK_H
#define CMG_RUNTIME_LINKER_DYNLINK_H

#include <stdbool.h>

/* libc's dlsym: what dlsym(handle, name) answers without the library's
 * override; NULL when libc's cannot be found or name is not defined. */
void *cmg__dynlink_dlsym(void *handle, const char *name);

/* What dlsym would find for name in the object l alone, from its dynamic
 * symbol table, without dlopen; NULL if l does not define it, and then
 * *tls is set when the definition is a thread-local variable, whose
 * address only glibc can give. */
struct link_map;
void *cmg__dynlink_object_symbol(const struct link_map *l, const char *name,
                                 bool *tls);

#endif /* CMG_RUNTIME_LINKER_DYNLINK_H */
