/*
 * The option table (conf_table.c): each key of the option string, the
 * handler that stores its value in a struct cmg__config, its default and
 * what a good value looks like.  The parser (conf.c) walks its rows.
 */
#ifndef CMG_CORE_CONF_TABLE_H
#define CMG_CORE_CONF_TABLE_H

#include <stdbool.h>
#include <stddef.h>

#include "core/conf.h"

/*
 * Stores the value of one item.  index is -1 for a plain key, the device
 * ordinal for key.N, CMG__MAX_DEVICES and up for a GPU's key.  Returns 0,
 * or -EINVAL or -ERANGE for a bad value.  A key given twice is refused by
 * the parser before its handler runs, since a handler cannot tell a
 * default from a value given earlier.
 */
typedef int (*cmg__conf_handler)(struct cmg__config *cfg, int index,
                                 const char *value, size_t len);

struct cmg__conf_row {
  const char *key;
  bool indexed; /* written key.N, N a device ordinal or a GPU */
  cmg__conf_handler handle;
  const char *dflt;     /* the value the parser sets unless given, as written */
  const char *expected; /* what a well-formed value looks like */
  const char *range;    /* what an in-range value looks like */
};

/* The rows of the table, so that the parser can size what it keeps per
 * row; conf_table.c asserts it. */
#define CMG__CONF_ROWS 22

/* The i-th row, NULL past the last. */
const struct cmg__conf_row *cmg__conf_table_row(size_t i);

/* The i-th key of the option table, NULL past the last; *indexed (may be
 * NULL) says whether this entry is KEY.N.  A key taken both ways has two
 * entries.  The launcher's help and the documentation's test list them
 * from here. */
const char *cmg__conf_table_key(size_t i, bool *indexed);

/* What the manual says of one entry of the option table. */
struct cmg__option_doc {
  const char *key;
  bool indexed;
  const char *dflt;  /* the value the key has unless given, as written */
  const char *range; /* the values it takes, as a bad value's error says */
};

/* The default of a key that no value gives (no limit, no signal). */
#define CMG__DEFAULT_NONE "none"

/* The i-th entry of the option table into *doc; false past the last.
 * cumemguard --list-options prints them, and the documentation's test
 * holds the manual to them. */
bool cmg__conf_table_doc(size_t i, struct cmg__option_doc *doc);

#endif
