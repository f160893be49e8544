/*
 * supp.c: suppressions in LeakSanitizer's format, and the leak groups of a
 * view that they hide.
 */
#ifndef CMG_READER_MODEL_SUPP_H
#define CMG_READER_MODEL_SUPP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cmg__view;

struct cmg__supp_rule {
  char *pattern;
  char *file;
  unsigned line;
  uint64_t count, bytes; /* what it hid */
};

struct cmg__supp {
  size_t n, cap;
  struct cmg__supp_rule *rules;
};

/* Appends the rules of a suppressions file.  Returns 0, or a negative errno
 * with one line in err ("FILE:LINE: ..." for a bad line). */
int cmg__supp_load(struct cmg__supp *s, const char *file, char *err,
                   size_t errlen);

/* Frees the rules; an empty set is all zeroes. */
void cmg__supp_free(struct cmg__supp *s);

/* True if pattern (with '*', '^', '$') matches text, as LeakSanitizer's
 * TemplateMatch does. */
bool cmg__supp_is_match(const char *pattern, const char *text);

/* Marks each leak group of v that a rule matches with the first such rule,
 * and adds the group's count and bytes to the rule.  Returns 0 or -ENOMEM. */
int cmg__supp_apply(struct cmg__supp *s, struct cmg__view *v);

#endif /* CMG_READER_MODEL_SUPP_H */
