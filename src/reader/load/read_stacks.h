/*
 * read_stacks.c: a report's modules[], frames[] and stacks[], each index
 * into them checked, and the stack ids by which the rest of the report
 * names a stack.
 */
#ifndef CMG_READER_LOAD_READ_STACKS_H
#define CMG_READER_LOAD_READ_STACKS_H

#include <stddef.h>
#include <stdint.h>

struct cJSON;
struct cmg__fields_reader;
struct cmg__model_frame;
struct cmg__model_module;
struct cmg__model_stack;

/* A stack's id in the report, and its index in stacks[]. */
struct cmg__read_stacks_id {
  uint64_t id;
  uint32_t index;
};

/*
 * Each reader fills *out and *n as far as it got, also when it fails, and
 * returns 0, -EINVAL after writing the problem into rd, or -ENOMEM; what it
 * filled is the caller's to free (cmg__read_report_free).
 */

/* modules[]. */
int cmg__read_stacks_modules(struct cmg__fields_reader *rd,
                             const struct cJSON *root,
                             struct cmg__model_module **out, size_t *n);

/* frames[], whose modules index the n_modules modules already read. */
int cmg__read_stacks_frames(struct cmg__fields_reader *rd,
                            const struct cJSON *root, size_t n_modules,
                            struct cmg__model_frame **out, size_t *n);

/* stacks[], whose frames index the *n_frames frames already read, and into
 * *ids, sorted by id, each stack's id for cmg__read_stacks_ref; the caller
 * frees *ids, also when this fails.  Each stack's cuts become frames of
 * their own (cut), added to *frames, at their places in the stack. */
int cmg__read_stacks_list(struct cmg__fields_reader *rd,
                          const struct cJSON *root,
                          struct cmg__model_frame **frames, size_t *n_frames,
                          struct cmg__model_stack **out, size_t *n,
                          struct cmg__read_stacks_id **ids);

/* The stack index of o's "stack" member (an id among ids[n], sorted by id,
 * or null) into *out: CMG__TOOL_NONE for null.  Returns 0, or -EINVAL
 * after writing the problem into rd. */
int cmg__read_stacks_ref(struct cmg__fields_reader *rd, const struct cJSON *o,
                         const char *at, const struct cmg__read_stacks_id *ids,
                         size_t n, uint32_t *out);

#endif /* CMG_READER_LOAD_READ_STACKS_H */
