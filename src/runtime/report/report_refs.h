/*
 * The stacks a report refers to, and its tables of stacks, frames and
 * modules (report_refs.c).
 */
#ifndef CMG_RUNTIME_REPORT_REPORT_REFS_H
#define CMG_RUNTIME_REPORT_REPORT_REFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cmg__jsonw;

/* Stack ids the report refers to, and their distinct frames. */
struct cmg__refs {
  uint8_t *used; /* by stack id */
  uint32_t n_stacks;
  uintptr_t *ips; /* distinct, sorted */
  size_t n_ips;
};

/* Sized for every stack interned so far; 0 or -ENOMEM. */
int cmg__refs_init(struct cmg__refs *r);
void cmg__refs_free(struct cmg__refs *r);

/* Whether id names a stack the report can refer to. */
bool cmg__refs_is_stack(const struct cmg__refs *r, uint32_t id);

/* Marks stack id as referred to, if it can be. */
void cmg__refs_mark(struct cmg__refs *r, uint32_t id);

/* Writes the reference to stack id, marking it: its number, or null. */
void cmg__refs_stack(struct cmg__jsonw *w, struct cmg__refs *r, uint32_t id);

/* Writes the members "stacks", "frames", "modules" and "python" for the
 * marked stacks, symbolizing each distinct frame once; 0 or -ENOMEM. */
int cmg__refs_write_tables(struct cmg__jsonw *w, struct cmg__refs *r);

#endif /* CMG_RUNTIME_REPORT_REPORT_REFS_H */
