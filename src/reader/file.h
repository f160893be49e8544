/*
 * file.c: a report file read whole and parsed into a cJSON tree.
 */
#ifndef CMG_READER_FILE_H
#define CMG_READER_FILE_H

struct cJSON;
struct cmg__tool_reader;

/* Reads file ("-": standard input) and parses it.  Returns 0 with *root
 * set, to be released with cmg__tool_drop_json(), or an error with a line
 * in rd (missing, empty, not text, not JSON, truncated). */
int cmg__tool_load_json(const char *file, struct cJSON **root,
                        struct cmg__tool_reader *rd);
void cmg__tool_drop_json(struct cJSON *root);

#endif /* CMG_READER_FILE_H */
