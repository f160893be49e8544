/*
 * stacks.c: a report's modules[], frames[] and stacks[], each index into
 * them checked, and the stack ids by which the rest of the report names a
 * stack.
 */
#ifndef CMG_READER_STACKS_H
#define CMG_READER_STACKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cJSON;
struct cmg__tool_reader;

struct cmg__tool_rmodule {
  char *path;
  char *build_id;
  const char *note; /* why its frames were not named here; NULL */
};

struct cmg__tool_rframe {
  uint64_t address;
  uint32_t module; /* index into modules, or CMG__TOOL_NONE */
  bool has_offset;
  uint64_t offset;
  char *function; /* NULL when unknown; demangled, parameters included */
  char *name;     /* without parameters; NULL when the same as function */
  bool has_function_offset;
  uint64_t function_offset;
  bool python;   /* "lang": "python": function, file and line */
  bool inlined;  /* a call inlined at the next frame's address */
  char *file;    /* the source file (Python's, or DWARF's), else NULL */
  uint64_t line; /* its line; 0 when none is known */
  /* Not 0: not a frame but the place of a stack's "cuts" entry, and how
   * many frames the capture left out there (CMG__TOOL_CUT_UNKNOWN when it
   * did not say).  function says so, and of which language, so that every
   * output shows it as it shows a frame. */
  uint32_t cut;
};

#define CMG__TOOL_CUT_UNKNOWN UINT32_MAX

struct cmg__tool_rstack {
  bool truncated;
  uint32_t n;
  uint32_t *frames; /* indexes into frames, innermost first */
};

/* A stack's id in the report, and its index in stacks[]. */
struct cmg__tool_id {
  uint64_t id;
  uint32_t index;
};

/*
 * Each reader fills *out and *n as far as it got, also when it fails, and
 * returns 0, -EINVAL after writing the problem into rd, or -ENOMEM; what it
 * filled is the caller's to free (cmg__tool_report_free).
 */

/* modules[]. */
int cmg__tool_read_modules(struct cmg__tool_reader *rd,
                           const struct cJSON *root,
                           struct cmg__tool_rmodule **out, size_t *n);

/* frames[], whose modules index the n_modules modules already read. */
int cmg__tool_read_frames(struct cmg__tool_reader *rd, const struct cJSON *root,
                          size_t n_modules, struct cmg__tool_rframe **out,
                          size_t *n);

/* stacks[], whose frames index the *n_frames frames already read, and into
 * *ids, sorted by id, each stack's id for cmg__tool_stack_ref; the caller
 * frees *ids, also when this fails.  Each stack's cuts become frames of
 * their own (cut), added to *frames, at their places in the stack. */
int cmg__tool_read_stacks(struct cmg__tool_reader *rd, const struct cJSON *root,
                          struct cmg__tool_rframe **frames, size_t *n_frames,
                          struct cmg__tool_rstack **out, size_t *n,
                          struct cmg__tool_id **ids);

/* The stack index of o's "stack" member (an id among ids[n], sorted by id,
 * or null) into *out: CMG__TOOL_NONE for null.  Returns 0, or -EINVAL
 * after writing the problem into rd. */
int cmg__tool_stack_ref(struct cmg__tool_reader *rd, const struct cJSON *o,
                        const char *at, const struct cmg__tool_id *ids,
                        size_t n, uint32_t *out);

#endif /* CMG_READER_STACKS_H */
