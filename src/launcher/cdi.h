/*
 * The launcher's cdi command (cdi.c): a Container Device Interface spec
 * that caps containers.
 */
#ifndef CMG_LAUNCHER_CDI_H
#define CMG_LAUNCHER_CDI_H

/* cumemguard cdi --limit SIZE [...] [--report-dir DIR] [--output FILE],
 * given argv from the word "cdi" on: 0, 2 (CMG_EXIT_USAGE) with one line for
 * a bad argument (nothing written), 1 when the spec cannot be written. */
int cmg__cdi_main(int argc, char **argv);

#endif /* CMG_LAUNCHER_CDI_H */
