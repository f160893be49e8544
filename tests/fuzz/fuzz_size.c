/*
 * libFuzzer target: cmg__size_parse(), which reads exactly `len` bytes
 * (the buffer libFuzzer hands over has no terminator, so ASan catches a
 * read past it), then cmg__format_size() of the result into buffers of
 * every small size.  Checked beyond ASan/UBSan: success gives bytes or a
 * percentage in (0, 100]; the printed size is always terminated.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/size.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  for (int allow = 0; allow < 2; allow++) {
    struct cmg__limit l;
    memset(&l, 0xa5, sizeof(l));
    int rc = cmg__size_parse((const char *)data, size, allow != 0, &l);
    if (rc == 0) {
      if (l.kind == CMG__LIMIT_PERCENT) {
        if (!allow || l.ppm == 0 || l.ppm > 1000000)
          abort();
      } else if (l.kind != CMG__LIMIT_BYTES) {
        abort();
      }
    } else if (rc != -EINVAL && rc != -ERANGE) {
      abort();
    }
    uint64_t v = rc == 0 && l.kind == CMG__LIMIT_BYTES ? l.bytes : size;
    char buf[40];
    for (size_t len = 1; len <= sizeof(buf); len++) {
      memset(buf, 'x', sizeof(buf));
      const char *s = cmg__format_size(v, buf, len);
      if (s != NULL && memchr(s, '\0', len) == NULL)
        abort();
    }
  }
  return 0;
}
