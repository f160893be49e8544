/*
 * read.c: one report file, checked, into the data model (model.h): the
 * loader's entry.
 */
#ifndef CMG_READER_LOAD_READ_H
#define CMG_READER_LOAD_READ_H

#include <stddef.h>

struct cmg__model_report;
struct cmg__model_threads;

/* What cmg__read_report_with() reads beyond what every command uses. */
#define CMG__READ_LARGEST 1u /* the largest live allocations */

/* Reads and checks the report at `file` ("-" is standard input).  Returns 0,
 * or -EINVAL / -ENOMEM with one line (no file name, no newline) in err
 * saying what is wrong.  Frames keep the names the report gives them:
 * naming them from this machine's files is the model's (symbolize.h). */
int cmg__read_report(const char *file, struct cmg__model_report *out, char *err,
                     size_t errlen);

/* cmg__read_report() that also reads what `what` asks for. */
int cmg__read_report_with(const char *file, unsigned what,
                          struct cmg__model_report *out, char *err,
                          size_t errlen);

/* Frees a group's threads and leaves them empty. */
void cmg__read_threads_free(struct cmg__model_threads *t);

/* Frees what cmg__read_report() filled, also after it failed. */
void cmg__read_report_free(struct cmg__model_report *r);

#endif /* CMG_READER_LOAD_READ_H */
