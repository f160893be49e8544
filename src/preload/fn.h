/*
 * Every entry point the library wraps or calls, numbered from hooks.def: the
 * index of its real function and the API label an allocation carries.
 */
#ifndef CMG_PRELOAD_FN_H
#define CMG_PRELOAD_FN_H

enum cmg__fn {
  CMG__FN_NONE,
#define DRV(elf, base, version, suffix) CMG__FN_##elf,
#define DRVAS(elf, base, version, pfn) CMG__FN_##elf,
#define RT(name) CMG__FN_##name,
#define AUX(name, base, version) CMG__FN_##name,
#define RTAUX(name) CMG__FN_##name,
#define NVML(name) CMG__FN_##name,
#define NVMLAUX(name) CMG__FN_##name,
#include "preload/hooks/hooks.def"
  CMG__FN_COUNT
};

/* The name of fn as the program knows it ("cuMemAlloc_v2"). */
const char *cmg__fn_name(enum cmg__fn fn);

/* Every name, by fn, for the report writer. */
extern const char *const cmg__fn_names[CMG__FN_COUNT];

#endif /* CMG_PRELOAD_FN_H */
