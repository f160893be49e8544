/*
 * libFuzzer target: CUMEMGUARD_OPTIONS as an attacker (or a typo) writes
 * it, through cmg__config_parse(), then the report pattern it gave through
 * cmg__config_expand() into buffers of every small size.  Checked beyond
 * ASan/UBSan: a parse either succeeds with values in their documented
 * ranges or fails with a one-line, terminated message; an expansion either
 * fits (terminated, within the buffer) or says -ENAMETOOLONG.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/conf.h"
#include "core/conf_report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  char *opts = malloc(size + 1);
  if (opts == NULL)
    return 0;
  memcpy(opts, data, size);
  opts[size] = '\0';

  static struct cmg__config cfg;
  char err[256];
  memset(err, 'x', sizeof(err));
  int rc = cmg__config_parse(opts, &cfg, err, sizeof(err));
  if (rc != 0) {
    if (rc != -EINVAL || memchr(err, '\0', sizeof(err)) == NULL ||
        strchr(err, '\n') != NULL)
      abort();
  } else {
    if (cfg.stack_depth > CMG__STACK_DEPTH_MAX ||
        memchr(cfg.report, '\0', sizeof(cfg.report)) == NULL ||
        memchr(cfg.group, '\0', sizeof(cfg.group)) == NULL ||
        (cfg.leak_exitcode != 0 &&
         (cfg.leak_exitcode < 1 || cfg.leak_exitcode > 255)) ||
        (cfg.dump_signal != 0 && cmg__signal_name(cfg.dump_signal) == NULL))
      abort();
    for (int d = 0; d < 3; d++) {
      uint64_t l = cmg__config_limit(&cfg, d, NULL, 16ull << 30);
      uint64_t s = cmg__config_soft_limit(&cfg, d, NULL, 16ull << 30);
      (void)l;
      (void)s;
    }
    char out[64];
    for (size_t len = 1; len <= sizeof(out); len++) {
      int e = cmg__config_expand(cfg.report, 4242, "host/name", 1700000000,
                                 out, len);
      if (e == 0 && strnlen(out, len) == len)
        abort();
      if (e != 0 && e != -ENAMETOOLONG && e != -EINVAL)
        abort();
    }
  }
  /* The parser also accepts no string at all. */
  if (size == 0 && cmg__config_parse(NULL, &cfg, err, sizeof(err)) != 0)
    abort();
  free(opts);
  return 0;
}
