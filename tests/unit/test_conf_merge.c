/*
 * Unit tests of conf_merge.c: options put into a CUMEMGUARD_OPTIONS that a
 * user may have set already, and the lookup of a key in one.
 */
#include "config.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/conf_merge.h"
#include "../tap.h"

/* ---- cmg__conf_merge ---------------------------------------------------- */

static bool
drop_limit(const char *key, size_t len, void *arg)
{
  (void)arg;
  return len == 5 && memcmp(key, "limit", 5) == 0;
}

static void
test_conf_merge(void)
{
  const char *const ours[] = { "limit=1G", "", "report=r.json" };
  char *m = cmg__conf_merge(NULL, drop_limit, NULL, ours, 3);
  is_str(m, "limit=1G,report=r.json",
         "no user items: ours, empty ones left out");
  free(m);
  m = cmg__conf_merge(",limit=8G,,stack_depth=4,limit,report=a", drop_limit,
                      NULL, ours, 3);
  is_str(m, "stack_depth=4,report=a,limit=1G,report=r.json",
         "the user's items but those that give way, then ours");
  free(m);
  m = cmg__conf_merge("limits=2G,limit.1=3G", drop_limit, NULL, ours, 1);
  is_str(m, "limits=2G,limit.1=3G,limit=1G", "a key is matched whole");
  free(m);
  ok(cmg__conf_has_key("a=1,snapshot=30s", "snapshot") &&
         !cmg__conf_has_key("snapshots=1", "snapshot") &&
         !cmg__conf_has_key("snapshot", "snapshot") &&
         !cmg__conf_has_key(NULL, "snapshot"),
     "has_key finds an item with the key and a value");
}

int
main(void)
{
  test_conf_merge();
  return done_testing();
}
