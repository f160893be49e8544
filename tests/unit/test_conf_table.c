/*
 * Unit tests of the option table (conf_table.c) as the manual reads it
 * (cmg__conf_table_doc): each row's default text is the default the parser
 * sets, so that the man page, which t-options-doc.sh holds to these texts,
 * says what a run without the key gets.  A default written as a value must
 * parse into exactly the options of an empty string; a default of "none"
 * must be what the key's users take for no limit, no signal, no group, and
 * a value of the key must change it.
 */
#include "config.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "core/conf.h"
#include "core/conf_table.h"
#include "core/size.h"
#include "../tap.h"
#include "conf_parses.h"

/* A value of each key whose default is "none", as an option string that
 * parses; KEY.N entries are tried as KEY.0. */
static const struct {
  const char *key;
  bool indexed;
  const char *given;
} none_keys[] = {
  { "limit", false, "limit=1G" },
  { "limit", true, "limit.0=1G" },
  { "dump_signal", false, "dump_signal=USR1" },
  { "leak_exitcode", false, "leak_exitcode=3" },
  { "soft_limit", false, "soft_limit=1G" },
  { "soft_limit", true, "soft_limit.0=1G" },
  { "max_alloc", false, "max_alloc=1G" },
  { "host_limit", false, "host_limit=1G" },
  { "group", false, "group=g" },
  { "group_limit", false, "group=g,group_limit=1G" },
  { "group_limit", true, "group=g,group_limit.0=1G" },
};

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* The limit a size key sets: the plain one, or device 0's; NULL for a key
 * that is not a size. */
static const struct cmg__limit *
limit_of(const struct cmg__config *c, const char *key, bool indexed)
{
  if (strcmp(key, "limit") == 0)
    return indexed ? &c->limit_dev[0] : &c->limit;
  if (strcmp(key, "soft_limit") == 0)
    return indexed ? &c->soft_limit_dev[0] : &c->soft_limit;
  if (strcmp(key, "group_limit") == 0)
    return indexed ? &c->group_limit_dev[0] : &c->group_limit;
  return NULL;
}

/* Whether *c leaves the key at what its users take for none. */
static bool
is_none(const struct cmg__config *c, const char *key, bool indexed)
{
  const struct cmg__limit *l = limit_of(c, key, indexed);

  if (l != NULL)
    return l->kind == CMG__LIMIT_NONE;
  if (strcmp(key, "max_alloc") == 0)
    return c->max_alloc == CMG__NO_LIMIT;
  if (strcmp(key, "host_limit") == 0)
    return c->host_limit == CMG__NO_LIMIT;
  if (strcmp(key, "group") == 0)
    return c->group[0] == '\0';
  if (strcmp(key, "dump_signal") == 0)
    return c->dump_signal == 0;
  if (strcmp(key, "leak_exitcode") == 0)
    return c->leak_exitcode == 0;
  return false;
}

/* The option string that sets the key to value: KEY=VALUE, or KEY.0=VALUE. */
static void
item(char *buf, size_t size, const struct cmg__option_doc *d, const char *value)
{
  snprintf(buf, size, "%s%s=%s", d->key, d->indexed ? ".0" : "", value);
}

static void
test_default_values(const struct cmg__config *defaults)
{
  struct cmg__option_doc d;
  struct cmg__config cfg;
  char s[256];

  for (size_t i = 0; cmg__conf_table_doc(i, &d); i++) {
    if (strcmp(d.dflt, CMG__DEFAULT_NONE) == 0)
      continue;
    item(s, sizeof(s), &d, d.dflt);
    /* Both start from set_defaults' memset, so padding compares equal. */
    ok(parses(s, &cfg) && memcmp(&cfg, defaults, sizeof(cfg)) == 0,
       "'%s' gives the options of an empty string", s);
  }
}

static void
test_default_none(const struct cmg__config *defaults)
{
  struct cmg__option_doc d;
  struct cmg__config cfg;
  size_t n_none = 0;

  for (size_t i = 0; cmg__conf_table_doc(i, &d); i++) {
    if (strcmp(d.dflt, CMG__DEFAULT_NONE) != 0)
      continue;
    size_t k = 0;
    while (k < N(none_keys) && (strcmp(none_keys[k].key, d.key) != 0 ||
                                none_keys[k].indexed != d.indexed))
      k++;
    n_none++;
    if (k == N(none_keys)) {
      ok(false, "%s%s: a default of none this test knows", d.key,
         d.indexed ? ".N" : "");
      continue;
    }
    ok(is_none(defaults, d.key, d.indexed), "%s%s is none by default", d.key,
       d.indexed ? ".N" : "");
    ok(parses(none_keys[k].given, &cfg) && !is_none(&cfg, d.key, d.indexed),
       "'%s' sets it", none_keys[k].given);
  }
  is_int(n_none, N(none_keys), "every key this test knows is none by default");
}

/* The manual says a key's default and range once, for KEY and KEY.N. */
static void
test_indexed_same(void)
{
  struct cmg__option_doc d, p;

  for (size_t i = 0; cmg__conf_table_doc(i, &d); i++) {
    if (!d.indexed)
      continue;
    size_t j = 0;
    while (cmg__conf_table_doc(j, &p) &&
           (p.indexed || strcmp(p.key, d.key) != 0))
      j++;
    ok(cmg__conf_table_doc(j, &p) && strcmp(p.dflt, d.dflt) == 0 &&
           strcmp(p.range, d.range) == 0,
       "%s.N has the default and range of %s", d.key, d.key);
  }
}

static void
test_texts(void)
{
  struct cmg__option_doc d;
  size_t i = 0;
  bool all = true;

  while (cmg__conf_table_doc(i, &d)) {
    all = all && d.key && d.dflt && d.range && d.dflt[0] && d.range[0] &&
          !strchr(d.dflt, '\t') && !strchr(d.range, '\t');
    i++;
  }
  ok(i > 0 && all, "each of the %zu entries has a default and a range", i);
  ok(cmg__conf_table_key(i - 1, NULL) != NULL &&
         cmg__conf_table_key(i, NULL) == NULL,
     "cmg__conf_table_doc and cmg__conf_table_key end together");
}

int
main(void)
{
  struct cmg__config defaults;

  if (!parses("", &defaults))
    return 1;
  test_default_values(&defaults);
  test_default_none(&defaults);
  test_indexed_same();
  test_texts();
  return done_testing();
}
