/*
 * jsonfile.c: a report file read whole and parsed into a cJSON tree.
 */
#ifndef CMG_READER_LOAD_JSONFILE_H
#define CMG_READER_LOAD_JSONFILE_H

struct cJSON;
struct cmg__fields_reader;

/* Reads file ("-": standard input) and parses it.  Returns 0 with *root
 * set, to be released with cmg__jsonfile_drop(), or an error with a line
 * in rd (missing, empty, not text, not JSON, truncated). */
int cmg__jsonfile_load(const char *file, struct cJSON **root,
                       struct cmg__fields_reader *rd);
void cmg__jsonfile_drop(struct cJSON *root);

#endif /* CMG_READER_FILE_H */
