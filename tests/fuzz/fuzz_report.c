/*
 * libFuzzer target: the report reader of cumemguard-report.  The input is
 * a report file (it goes through a memfd, as a file the tool opens would);
 * cmg__read_report() must accept it or explain why in one line, and a report
 * it accepts must go through everything the tool does with one: the view
 * (interning, grouping, sorting), the text and JSON summaries (the JSON
 * also as the html page writes it), the diff against itself as text and
 * JSON, the folded stacks and the SVG flame graph, all written to
 * /dev/null, and every free.  LeakSanitizer checks that nothing leaks,
 * also when the input is rejected half way.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/jsonw.h"

#include "reader/cmd/diff.h"
#include "reader/cmd/flame.h"
#include "reader/load/model.h"
#include "reader/load/read.h"
#include "reader/model/index.h"
#include "reader/model/symbolize.h"
#include "reader/model/view.h"
#include "reader/show/json_once.h"
#include "reader/show/summary_json.h"
#include "reader/show/summary_text.h"
#include "reader/tool.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int fd = -1;
static char path[64];
static FILE *devnull;

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  if (fd < 0) {
    fd = memfd_create("fuzz-report", 0);
    devnull = fopen("/dev/null", "w");
    if (fd < 0 || devnull == NULL)
      abort();
    snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
  }
  if (ftruncate(fd, 0) < 0 || pwrite(fd, data, size, 0) != (ssize_t)size)
    abort();

  struct cmg__model_report r;
  char err[CMG__TOOL_ERR_MAX];
  err[0] = '\0';
  int rc = cmg__read_report(path, &r, err, sizeof(err));
  if (rc == 0 && cmg__symbolize_report(&r) != 0) {
    rc = -ENOMEM;
    snprintf(err, sizeof(err), "out of memory");
  }
  if (rc != 0) {
    if ((rc != -EINVAL && rc != -ENOMEM) || err[0] == '\0' ||
        strchr(err, '\n') != NULL)
      abort();
    cmg__read_report_free(&r);
    return 0;
  }

  struct cmg__index ix;
  struct cmg__view v;
  cmg__index_init(&ix);
  cmg__view_init(&v, &ix, size % 2 == 0);
  if (cmg__view_add(&v, &r) == 0) {
    cmg__view_sort(&v);
    struct cmg__tool_opts o = { .top = size % 4,
                                .min_bytes = 0,
                                .all_frames = size % 3 == 0 };
    cmg__summary_text_print(devnull, &v, &o, false);
    cmg__summary_text_print(devnull, &v, &o, true);
    struct cmg__jsonw w;
    if (cmg__jsonw_open(&w, -1, size % 5 == 0) == 0) {
      cmg__summary_json_write(&w, &v, &o);
      free(cmg__jsonw_take(&w));
    }
    /* As the html page writes it: each stack with its text, its frames
     * and lines once each. */
    struct cmg__json_once once;
    struct cmg__tool_opts po = o;
    po.stack_text = true;
    po.once = &once;
    if (cmg__json_once_init(&once) == 0 &&
        cmg__jsonw_open(&w, -1, false) == 0) {
      cmg__jsonw_object(&w);
      cmg__summary_json_write(cmg__jsonw_key(&w, "summary"), &v, &po);
      cmg__json_once_write(&once, &w);
      cmg__jsonw_object_end(&w);
      free(cmg__jsonw_take(&w));
    }
    cmg__json_once_free(&once);
    cmg__diff_print(devnull, &v, &v, &o);
    o.json = true;
    cmg__diff_print(devnull, &v, &v, &o);
    o.json = false;
    for (int w = CMG__FLAME_WEIGHT_LIVE; w <= CMG__FLAME_WEIGHT_DENIAL; w++) {
      struct cmg__flame_opts fo = { .weight = (enum cmg__flame_weight)w,
                                    .all_frames = o.all_frames,
                                    .title = NULL,
                                    .width = 1200 };
      cmg__flame_folded(devnull, &v, &fo);
      cmg__flame_svg(devnull, &v, &fo);
    }
  }
  cmg__view_free(&v);
  cmg__index_free(&ix);
  cmg__read_report_free(&r);
  return 0;
}
