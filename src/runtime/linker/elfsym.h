/*
 * A symbol's definition in one loaded object, read from its dynamic symbol
 * table, for dlsym(RTLD_NEXT) without dlopen (elfsym.c).
 */
#ifndef CMG_RUNTIME_LINKER_ELFSYM_H
#define CMG_RUNTIME_LINKER_ELFSYM_H

#include <stdbool.h>

/* What dlsym would find for name in the object l alone, from its dynamic
 * symbol table, without dlopen; NULL if l does not define it, and then
 * *tls is set when the definition is a thread-local variable, whose
 * address only glibc can give. */
struct link_map;
void *cmg__object_symbol(const struct link_map *l, const char *name, bool *tls);

#endif /* CMG_RUNTIME_LINKER_ELFSYM_H */
