/*
 * plot.c: the plot command, a report's memory over time as an SVG chart.
 */
#ifndef CMG_READER_CMD_PLOT_H
#define CMG_READER_CMD_PLOT_H

/* Writes the chart of the one file into output (NULL or "-": stdout),
 * created only after the file was read.  Returns the exit status: 0, or
 * CMG__TOOL_EXIT_ERROR after saying why. */
int cmg__plot_main(char *const *files, int n_files, const char *output);

#endif /* CMG_READER_CMD_PLOT_H */
