/*
 * What the option-reader tests share: a string that must parse.
 */
#ifndef CMG_TEST_CONF_PARSES_H
#define CMG_TEST_CONF_PARSES_H

#include <stdbool.h>
#include <stdio.h>

#include "core/conf.h"

/* Parses s, which must be accepted; false (with the error shown) if not. */
static inline bool
parses(const char *s, struct cmg__config *cfg)
{
  char err[256];
  int rc = cmg__config_parse(s, cfg, err, sizeof(err));

  if (rc != 0)
    printf("#   '%s': %s\n", s, err);
  return rc == 0;
}

#endif /* CMG_TEST_CONF_PARSES_H */
