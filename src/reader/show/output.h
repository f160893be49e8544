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

/* output, or stdout for NULL and "-"; NULL after saying why.  A file is
 * written under a name of its own until cmg__output_close. */
FILE *cmg__output_create(const char *output);

/* Closes what cmg__output_create gave, and puts a file in its place when
 * rc is 0 and all of it was written (else removes it, and the file the
 * user had stays); the exit status from rc and that, said when not. */
int cmg__output_close(FILE *f, const char *output, int rc);

#endif /* CMG_READER_SHOW_OUTPUT_H */
