/*
 * index.c: modules, frames and stacks interned by identity (with
 * intern.c's hash table), and the range of a stack shown by default.
 */
#ifndef CMG_READER_MODEL_INDEX_H
#define CMG_READER_MODEL_INDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "reader/model/intern.h"

struct cmg__model_report;

struct cmg__index_module {
  char *path;       /* of the first report that named it */
  const char *name; /* its base name, inside path */
  char *build_id;
  const char *note; /* why its frames keep the report's names; NULL */
};

struct cmg__index_frame {
  uint32_t module;
  bool has_offset;
  uint64_t offset;
  uint64_t address; /* of the first report; meaningless elsewhere */
  char *function;   /* demangled, parameters included */
  char *name;       /* without parameters; NULL when the same as function */
  bool has_function_offset;
  uint64_t function_offset;
  unsigned class;
  unsigned code; /* enum cmg__code: the user's, a library's */
  bool python;   /* a Python frame: function, file and line */
  bool inlined;  /* a call inlined at the next frame's address */
  char *file;    /* its source file (Python's, or DWARF's), else NULL */
  uint64_t line; /* its line, 0 when none */
  uint32_t cut;  /* frames left out by the capture (cmg__model_frame) */
};

struct cmg__index_stack {
  bool truncated;
  uint32_t n;
  uint32_t *frames; /* interned frame ids, innermost first */
  uint32_t lo, hi;  /* the frames shown by default: [lo, hi) */
};

struct cmg__index {
  size_t n_modules, n_frames, n_stacks;
  size_t cap_modules, cap_frames, cap_stacks;
  struct cmg__index_module *modules;
  struct cmg__index_frame *frames;
  struct cmg__index_stack *stacks;
  struct cmg__intern_map module_map, frame_map, stack_map;
};

/* Interns every stack of r (and their frames and modules); ids[i] becomes
 * the id of r's stack i.  Returns 0 or -ENOMEM. */
int cmg__index_add(struct cmg__index *ix, const struct cmg__model_report *r,
                   uint32_t *ids);

/* An empty index; freeing it frees every module, frame and stack. */
void cmg__index_init(struct cmg__index *ix);
void cmg__index_free(struct cmg__index *ix);

/* The shown range of a stack: [lo, hi), or everything with all_frames. */
void cmg__index_stack_range(const struct cmg__index *ix, uint32_t stack,
                            bool all_frames, uint32_t *lo, uint32_t *hi);

/* Whether the stack was truncated without saying where: a report from
 * before stacks' cuts were recorded. */
bool cmg__index_is_cut_unplaced(const struct cmg__index *ix, uint32_t stack);

#endif /* CMG_READER_MODEL_INDEX_H */
