/*
 * The names of the threads that allocated, read once per thread at its
 * first allocation, for the report to say which thread a group came from
 * when its stack cannot (thread_names.c).
 */
#ifndef CMG_RUNTIME_LEDGER_THREAD_NAMES_H
#define CMG_RUNTIME_LEDGER_THREAD_NAMES_H

#include <stddef.h>
#include <stdint.h>

/* How many threads are named; later ones are not. */
#define CMG__THREADS_MAX 4096

/* A name as the kernel keeps it (comm): at most 15 bytes, any but NUL, and
 * the NUL; the report escapes what is not UTF-8 (report_text.h). */
#define CMG__THREAD_NAME 16

struct cmg__thread_name {
  uint32_t tid;
  char name[CMG__THREAD_NAME];
};

/* Records the calling thread's name as it is now under `tid`, its kernel
 * thread id.  Async-signal-safe and lock-free: no malloc, no lock. */
void cmg__threads_note(uint32_t tid);

/* A malloc'd copy of the names recorded, sorted by tid, one per tid (the
 * latest recorded, should the kernel have given a tid to a later thread);
 * *n their number.  NULL with *n 0 when none, or when out of memory. */
struct cmg__thread_name *cmg__threads_sorted(size_t *n);

/* The name of tid in a cmg__threads_sorted() copy, or NULL. */
const char *cmg__threads_find(const struct cmg__thread_name *t, size_t n,
                              uint32_t tid);

/* Sorts the n tids of t and leaves each once at its start; returns how
 * many are left. */
size_t cmg__threads_distinct(uint32_t *t, size_t n);

/* Forgets them all (a forked child, whose one thread is noted again at its
 * first allocation).  Async-signal-safe. */
void cmg__threads_reset(void);

#endif /* CMG_RUNTIME_LEDGER_THREAD_NAMES_H */
