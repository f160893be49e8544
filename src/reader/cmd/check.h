/*
 * check.c: the check command, for CI.
 */
#ifndef CMG_READER_CMD_CHECK_H
#define CMG_READER_CMD_CHECK_H

#include <stdint.h>

struct cmg__tool_opts;
struct cmg__supp;

/* The check command: the leaks of all files as one view, then whether more
 * than max_leak bytes of device memory leaked.  Returns the exit status:
 * 0, CMG__TOOL_EXIT_LEAK, or CMG__TOOL_EXIT_ERROR after saying why. */
int cmg__check_main(char *const *files, int n_files, struct cmg__supp *supp,
                    const struct cmg__tool_opts *o, uint64_t max_leak);

#endif /* CMG_READER_CMD_CHECK_H */
