/*
 * The frameworks' switches that turn their memory pools off (pools.c):
 * setting them for no_pools=1, and recording what they were for the
 * report.
 */
#ifndef CMG_CORE_POOLS_H
#define CMG_CORE_POOLS_H

#include <stdbool.h>

/* The variable that names the switches cumemguard set, comma-separated, so
 * that a child process (or the library after the launcher) can tell them
 * from the user's own. */
#define CMG__POOLS_SET_VAR "CUMEMGUARD_POOLS_SET"

#define CMG__POOLS_N 4
#define CMG__POOLS_VALUE_MAX 64

/* One switch: the variable and the value that turns the pool off. */
struct cmg__pools_switch {
  const char *name;
  const char *value;
};

extern const struct cmg__pools_switch cmg__pools_switches[CMG__POOLS_N];

/* What one switch was when the library started. */
struct cmg__pools_seen {
  bool is_set;                      /* the variable existed */
  bool by_us;                       /* named in CUMEMGUARD_POOLS_SET */
  char value[CMG__POOLS_VALUE_MAX]; /* cut to fit; "" when unset */
};

struct cmg__pools {
  bool is_read;
  struct cmg__pools_seen seen[CMG__POOLS_N];
};

/* Sets variable name to value unless the environment sets it already (a
 * user's value stays), and then lists it in CUMEMGUARD_POOLS_SET, so that
 * reports say cumemguard set it.  Returns 0, or a negative errno when
 * setenv fails. */
int cmg__pools_setenv(const char *name, const char *value);

/* Sets every switch that is not set already (a user's value stays) and
 * adds the ones it set to CUMEMGUARD_POOLS_SET.  Returns 0, or a negative
 * errno when setenv fails. */
int cmg__pools_apply(void);

/* Records the switches as the environment has them now into *out. */
void cmg__pools_read(struct cmg__pools *out);

#endif /* CMG_CORE_POOLS_H */
