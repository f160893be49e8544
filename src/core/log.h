/*
 * Messages to people: one line to stderr, never allocating (log.c).
 */
#ifndef CMG_CORE_LOG_H
#define CMG_CORE_LOG_H

#include <stddef.h>
#include <stdint.h>

/* Writes "cumemguard: " + the formatted text + "\n" to stderr with one
 * write(2); errno is preserved. */
void cmg__log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Lines start with "NAME: " from here on (a program's main, before any
 * thread logs). */
void cmg__log_program(const char *name);

#endif /* CMG_CORE_LOG_H */
