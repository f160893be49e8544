/*
 * timeline_trace.c: the timeline command, memory over time as a trace that
 * Perfetto and chrome://tracing open.
 */
#ifndef CMG_READER_CMD_TIMELINE_TRACE_H
#define CMG_READER_CMD_TIMELINE_TRACE_H

/* Writes the trace of all files, side by side as processes, into output
 * (NULL or "-": stdout), created only after every file was read.  Returns
 * the exit status: 0, or CMG__TOOL_EXIT_ERROR after saying why. */
int cmg__timeline_trace_main(char *const *files, int n_files,
                             const char *output);

#endif /* CMG_READER_CMD_TIMELINE_TRACE_H */
