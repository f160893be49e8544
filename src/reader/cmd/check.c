/*
 * check FILE...: the reports of one job as one view, its leaks printed as
 * summary prints them, then one line saying whether the leaked device
 * memory is within --max-leak, for CI.  The exit status carries the answer:
 * 0 when it is, CMG__TOOL_EXIT_LEAK when more leaked.  Suppressed groups,
 * pinned host memory, imports, what CUDA graph memory pools hold (the
 * driver's cache, freed with the context) and what contexts and their
 * modules took never count against the allowance.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>

#include "core/size.h"

#include "reader/cmd/check.h"
#include "reader/model/index.h"
#include "reader/model/leak_class.h"
#include "reader/model/view.h"
#include "reader/run/run.h"
#include "reader/show/summary_text.h"
#include "reader/tool.h"

int
cmg__check_main(char *const *files, int n_files, struct cmg__supp *supp,
                const struct cmg__tool_opts *o, uint64_t max_leak)
{
  struct cmg__index ix;
  struct cmg__view v;
  int rc = 0;

  cmg__index_init(&ix);
  cmg__view_init(&v, &ix, true);
  if (cmg__run_load_all(&v, files, n_files, supp) != 0)
    rc = CMG__TOOL_EXIT_ERROR;
  if (rc == 0) {
    uint64_t bytes, count;
    char s1[32], s2[32];

    cmg__summary_text_print(stdout, &v, o, true);
    cmg__leak_class_total(&v, CMG__LEAK_CLASS_LEAKED, &bytes, &count);
    cmg__format_size(bytes, s1, sizeof(s1));
    cmg__format_size(max_leak, s2, sizeof(s2));
    if (bytes > max_leak) {
      printf("check: FAILED: %s (%" PRIu64 " bytes) leaked, more than the "
             "%s allowed\n",
             s1, bytes, s2);
      rc = CMG__TOOL_EXIT_LEAK;
    } else {
      printf("check: passed: %s (%" PRIu64 " bytes) leaked, %s allowed\n", s1,
             bytes, s2);
    }
  }
  cmg__view_free(&v);
  cmg__index_free(&ix);
  return rc;
}
