/*
 * output.c: where the commands write, and the one line that says what
 * went wrong.
 */
#ifndef CMG_READER_SHOW_OUTPUT_H
#define CMG_READER_SHOW_OUTPUT_H

#include <stdio.h>

/* One line on stderr, "cumemguard-report: " and the text, after whatever
 * stdout holds so far. */
void cmg__output_say(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

/* output, or stdout for NULL and "-"; NULL after saying why. */
FILE *cmg__output_create(const char *output);

/* Closes what cmg__output_create gave; the exit status from rc (0 or
 * not) and whether everything was written, said when not. */
int cmg__output_close(FILE *f, const char *output, int rc);

#endif /* CMG_READER_SHOW_OUTPUT_H */
