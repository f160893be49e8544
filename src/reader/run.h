/*
 * run.c: what every command does around its own printing: reports read
 * into a view, the view finished, JSON printed, problems said.
 */
#ifndef CMG_READER_RUN_H
#define CMG_READER_RUN_H

struct cJSON;
struct cmg__supp;
struct cmg__view;

/* One line on stderr, "cumemguard-report: " and the text, after whatever
 * stdout holds so far. */
void cmg__tool_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Reads file into view v.  Returns 0, or a negative errno after saying
 * what is wrong with the file. */
int cmg__tool_load(struct cmg__view *v, const char *file);

/* Sorts a loaded view and applies the suppressions afresh (their counts
 * start again from zero).  Returns 0, or -ENOMEM after saying so. */
int cmg__tool_finish(struct cmg__view *v, struct cmg__supp *supp);

/* cmg__tool_load() for each file in turn, stopping at the first problem,
 * then cmg__tool_finish(): the one view of folded, flame and check. */
int cmg__tool_load_all(struct cmg__view *v, char *const *files, int n_files,
                       struct cmg__supp *supp);

/* Prints a JSON document and a newline on stdout, and frees it (NULL is
 * taken as out of memory).  Returns 0, or -ENOMEM after saying so. */
int cmg__tool_print_json(struct cJSON *doc);

#endif /* CMG_READER_RUN_H */
