/*
 * pprof.c: the pprof command, a report's live memory as a gzipped pprof
 * profile that `go tool pprof` reads.
 */
#ifndef CMG_READER_CMD_PPROF_H
#define CMG_READER_CMD_PPROF_H

/* Which live memory the profile holds. */
enum cmg__pprof_at {
  CMG__PPROF_AT_EXIT,   /* what was live when the report was written */
  CMG__PPROF_AT_PEAK,   /* what was live at each device's peak */
  CMG__PPROF_AT_DENIAL, /* what was live at each device's first denial */
};

/* Writes the profile of the one file into output (NULL or "-": stdout),
 * created only after the file was read.  Returns the exit status: 0, or
 * CMG__TOOL_EXIT_ERROR after saying why. */
int cmg__pprof_main(char *const *files, int n_files, enum cmg__pprof_at at,
                    const char *output);

#endif /* CMG_READER_CMD_PPROF_H */
