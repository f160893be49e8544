/*
 * cumemguard status [GROUP] [--json]: the operator's view of the groups of
 * this user, read from their shared segments; runs no program.
 */
#include "config.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cumemguard.h"
#include "core/group_status.h"
#include "core/log.h"
#include "launcher/status.h"

/*
 * cumemguard status [GROUP] [--json]: the operator's view of the groups of
 * this user, read from their shared segments; runs no program.  Exits 0,
 * or 2 with one line for a bad, unknown or unreadable GROUP.
 */
int
cmg__status_main(int argc, char **argv)
{
  const char *name = NULL;
  bool json = false;
  char err[512];
  int i;

  for (i = 0; i < argc; i++) {
    if (strcmp(argv[i], "--json") == 0) {
      json = true;
    } else if (strcmp(argv[i], "--help") == 0) {
      printf("usage: cumemguard status [GROUP] [--json]\n\n"
             "Prints each group of this user (or GROUP): its cap and usage "
             "per device,\nand each member process: pid, command, live "
             "bytes and peak per device.\nDead members not yet reclaimed "
             "are marked.\n");
      return fflush(stdout) == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
    } else if (argv[i][0] == '-') {
      cmg__log("unknown option '%s' for status; try 'cumemguard status "
               "--help'", argv[i]);
      return CMG_EXIT_USAGE;
    } else if (name == NULL) {
      name = argv[i];
    } else {
      cmg__log("status takes one GROUP, not also '%s'", argv[i]);
      return CMG_EXIT_USAGE;
    }
  }
  if (cmg__group_status(name, json, STDOUT_FILENO, err, sizeof(err)) != 0) {
    cmg__log("%s", err);
    return CMG_EXIT_USAGE;
  }
  return EXIT_SUCCESS;
}
