/*
 * fields.c: checked access to the members of a cJSON tree, each problem
 * one line in a struct cmg__fields_reader, with the strings copied out
 * of it cleaned (utf8.c), and the tables the readers copy arrays into.
 */
#ifndef CMG_READER_LOAD_FIELDS_H
#define CMG_READER_LOAD_FIELDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cJSON;

/* The largest integer every double holds exactly; counts stop there. */
#define CMG__FIELDS_EXACT_MAX 9007199254740992.0

/* Returns expr's error from the function it is in: a report is refused at
 * its first problem, so nothing after it is read. */
#define CHECK(expr)                                                            \
  do {                                                                         \
    int rc_ = (expr);                                                          \
    if (rc_ != 0)                                                              \
      return rc_;                                                              \
  } while (0)

/* Where the getters write their one line about a problem. */
struct cmg__fields_reader {
  char *err;
  size_t errlen;
};

/* Writes the line into rd; returns -EINVAL. */
int cmg__fields_fail(struct cmg__fields_reader *rd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* "a string", "null", "nothing" (for NULL): what a member turned out to be. */
const char *cmg__fields_kind(const struct cJSON *item);

/* "AT: expected WANT, got ..." for an array element; returns -EINVAL. */
int cmg__fields_fail_item(struct cmg__fields_reader *rd, const char *at,
                          const char *want, const struct cJSON *got);

/* "AT.KEY: expected WANT, got ..."; returns -EINVAL. */
int cmg__fields_wrong(struct cmg__fields_reader *rd, const char *at,
                      const char *key, const char *want,
                      const struct cJSON *got);

/* The member key of o, or -EINVAL naming it as missing. */
int cmg__fields_member(struct cmg__fields_reader *rd, const struct cJSON *o,
                       const char *at, const char *key,
                       const struct cJSON **out);

/* An integer in [min, max]; when has is not NULL a null is allowed too and
 * clears *has. */
int cmg__fields_int(struct cmg__fields_reader *rd, const struct cJSON *o,
                    const char *at, const char *key, double min, double max,
                    bool *has, double *out);

/* Member key as a device (the writer's cmg__report_device): an ordinal
 * from 0 to CMG__MAX_DEVICES - 1, or, where host memory may be meant
 * (host_ok), null, which reads as -1. */
int cmg__fields_device(struct cmg__fields_reader *rd, const struct cJSON *o,
                       const char *at, const char *key, bool host_ok, int *out);

/* An integer from 0 to 2^53 (sizes, counts); null as for cmg__fields_int. */
int cmg__fields_count(struct cmg__fields_reader *rd, const struct cJSON *o,
                      const char *at, const char *key, bool *has,
                      uint64_t *out);

/* Any finite number. */
int cmg__fields_number(struct cmg__fields_reader *rd, const struct cJSON *o,
                       const char *at, const char *key, double *out);

/* A string, cleaned and copied into *out; a null gives NULL if nullable.
 * -ENOMEM when the copy fails. */
int cmg__fields_string(struct cmg__fields_reader *rd, const struct cJSON *o,
                       const char *at, const char *key, bool nullable,
                       char **out);

/* cmg__fields_string for a name that stacks repeat (a frame's function or
 * file, a module's path): one past CMG__TOOL_NAME_MAX bytes is refused. */
int cmg__fields_name(struct cmg__fields_reader *rd, const struct cJSON *o,
                     const char *at, const char *key, bool nullable,
                     char **out);

/* "0x..." with at most 16 lower-case hex digits; null as for
 * cmg__fields_int. */
int cmg__fields_hex(struct cmg__fields_reader *rd, const struct cJSON *o,
                    const char *at, const char *key, bool *has, uint64_t *out);

/* An array member and its length. */
int cmg__fields_array(struct cmg__fields_reader *rd, const struct cJSON *o,
                      const char *at, const char *key, const struct cJSON **out,
                      size_t *n);

/* An object member. */
int cmg__fields_object(struct cmg__fields_reader *rd, const struct cJSON *o,
                       const char *at, const char *key,
                       const struct cJSON **out);

/* An object member that may be null or absent (one added to the format
 * later): *out is then NULL. */
int cmg__fields_optional_object(struct cmg__fields_reader *rd,
                                const struct cJSON *o, const char *at,
                                const char *key, const struct cJSON **out);

/* Checks that element i of array is an object and writes its path
 * ("leaks[3]") into at. */
int cmg__fields_element(struct cmg__fields_reader *rd, const struct cJSON *item,
                        const char *array, size_t i, char *at, size_t atlen);

/* n zeroed elements of size bytes, for an array of n members; NULL only
 * when out of memory, also for n == 0, where calloc may return NULL. */
void *cmg__fields_table(size_t n, size_t size);

#endif /* CMG_READER_FIELDS_H */
