/*
 * index.c: modules, frames and stacks interned by identity (with
 * intern.c's hash table), and how a frame is named when printed.
 */
#ifndef CMG_READER_INDEX_H
#define CMG_READER_INDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "reader/intern.h"

struct cmg__model_report;

/* Frame classes, for hiding frames that say nothing about the program. */
#define CMG__TOOL_FRAME_CUDA 1u    /* inside the CUDA runtime or driver */
#define CMG__TOOL_FRAME_STARTUP 2u /* C start-up and thread start */

struct cmg__tool_module {
  char *path;       /* of the first report that named it */
  const char *name; /* its base name, inside path */
  char *build_id;
  const char *note; /* why its frames keep the report's names; NULL */
};

struct cmg__tool_frame {
  uint32_t module;
  bool has_offset;
  uint64_t offset;
  uint64_t address; /* of the first report; meaningless elsewhere */
  char *function;   /* demangled, parameters included */
  char *name;       /* without parameters; NULL when the same as function */
  bool has_function_offset;
  uint64_t function_offset;
  unsigned class;
  unsigned code; /* enum cmg__tool_code: the user's, a library's */
  bool python;   /* a Python frame: function, file and line */
  bool inlined;  /* a call inlined at the next frame's address */
  char *file;    /* its source file (Python's, or DWARF's), else NULL */
  uint64_t line; /* its line, 0 when none */
  uint32_t cut;  /* frames left out by the capture (cmg__model_frame) */
};

struct cmg__tool_stack {
  bool truncated;
  uint32_t n;
  uint32_t *frames; /* interned frame ids, innermost first */
  uint32_t lo, hi;  /* the frames shown by default: [lo, hi) */
};

struct cmg__tool_index {
  size_t n_modules, n_frames, n_stacks;
  size_t cap_modules, cap_frames, cap_stacks;
  struct cmg__tool_module *modules;
  struct cmg__tool_frame *frames;
  struct cmg__tool_stack *stacks;
  struct cmg__tool_map module_map, frame_map, stack_map;
};

/* Grows *array (of *cap elements of size) to hold n + 1; -ENOMEM. */
int cmg__tool_grow(void **array, size_t *cap, size_t n, size_t size);
#define CMG__TOOL_GROW(arr, cap, n)                                            \
  cmg__tool_grow((void **)&(arr), &(cap), (n), sizeof(*(arr)))

/* Interns every stack of r (and their frames and modules); ids[i] becomes
 * the id of r's stack i.  Returns 0 or -ENOMEM. */
int cmg__tool_index_add(struct cmg__tool_index *ix,
                        const struct cmg__model_report *r, uint32_t *ids);

/* An empty index; freeing it frees every module, frame and stack. */
void cmg__tool_index_init(struct cmg__tool_index *ix);
void cmg__tool_index_free(struct cmg__tool_index *ix);

/* The shown range of a stack: [lo, hi), or everything with all_frames. */
void cmg__tool_stack_range(const struct cmg__tool_index *ix, uint32_t stack,
                           bool all_frames, uint32_t *lo, uint32_t *hi);

/* Whether the stack was truncated without saying where: a report from
 * before stacks' cuts were recorded. */
bool cmg__tool_is_cut_unplaced(const struct cmg__tool_index *ix,
                               uint32_t stack);

/* Prints a frame's short name: its function, else "module+0xOFFSET", else
 * its address; a Python frame's is "function (file.py:LINE)", with the
 * file's base name. */
void cmg__tool_put_label(FILE *f, const struct cmg__tool_index *ix,
                         uint32_t frame);

/* The API a group's stack says the program called: the runtime entry
 * (cudaMalloc) of a statically linked runtime, whose driver call (api,
 * cuMemAlloc_v2) is what the library saw, or api itself. */
const char *cmg__tool_runtime_entry(const struct cmg__tool_index *ix,
                                    uint32_t stack, const char *api);

/* The same in a malloc'd string; NULL when out of memory. */
char *cmg__tool_label(const struct cmg__tool_index *ix, uint32_t frame);

/* Prints a frame as the numbered frames show it: "function+0x12
 * (module+0x1a2b)"; with a source line "function (file.cc:LINE)", and with
 * all (--all-frames) the full name, path and place, "function(int)+0x12
 * (/path/file.cc:LINE, module+0x1a2b)"; ", inlined" when the call was
 * inlined; for a Python frame "function (/path/file.py:LINE)". */
void cmg__tool_put_frame(FILE *f, const struct cmg__tool_index *ix,
                         uint32_t frame, bool all);

#endif /* CMG_READER_INDEX_H */
