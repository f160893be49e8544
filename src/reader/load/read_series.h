/*
 * read_series.c: what a report says of time: the optional "timeline"
 * member (each device's memory over time, the report writes, the largest
 * allocations freed) and, for a command that draws them, the largest live
 * allocations with their times.
 */
#ifndef CMG_READER_LOAD_READ_SERIES_H
#define CMG_READER_LOAD_READ_SERIES_H

#include <stddef.h>

struct cJSON;
struct cmg__fields_reader;
struct cmg__model_alloc;
struct cmg__model_timeline;
struct cmg__read_stacks_id;

/* Reads root's "timeline" into *t, checked as read.c checks the rest.
 * Returns 0, -EINVAL after writing the problem into rd, or -ENOMEM. */
int cmg__read_series(struct cmg__fields_reader *rd, const struct cJSON *root,
                     const struct cmg__read_stacks_id *ids, size_t n_ids,
                     struct cmg__model_timeline *t);

/* The CMG__MODEL_LARGEST largest allocations of the first n_leaks groups
 * of leaks[] (those already read), largest first, into *out and *n.  Same
 * returns; *out is the caller's to free, also when this fails. */
int cmg__read_series_largest(struct cmg__fields_reader *rd,
                             const struct cJSON *root, size_t n_leaks,
                             struct cmg__model_alloc **out, size_t *n);

void cmg__read_series_free(struct cmg__model_timeline *t);

#endif /* CMG_READER_LOAD_READ_SERIES_H */
