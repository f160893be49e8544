/*
 * The launcher's status command (status.c).
 */
#ifndef CMG_LAUNCHER_STATUS_H
#define CMG_LAUNCHER_STATUS_H

/* cumemguard status [GROUP] [--json | --prometheus] [--textfile FILE]
 * [--every SECONDS], given argv from the word "status" on:
 * exits 0, or 2 (CMG_EXIT_USAGE) with one line for a bad, unknown or
 * unreadable GROUP. */
int cmg__status_main(int argc, char **argv);

#endif /* CMG_LAUNCHER_STATUS_H */
