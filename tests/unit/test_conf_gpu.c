/*
 * Unit tests of conf_gpu.c: GPU UUIDs read and written as CUDA and NVML
 * print them, the options keyed by GPU (limit.GPU-<uuid>,
 * soft_limit.GPU-..., group_limit.GPU-...) and their lookup before an
 * ordinal's and the default.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "core/conf.h"
#include "core/conf_gpu.h"
#include "../tap.h"

#define GiB (1ull << 30)
#define A "GPU-c36d6751-5e1a-4d0c-9a77-736964677000"
#define B "GPU-c36d6751-5e1a-4d0c-9a77-736964677001"

static void
uuids(void)
{
  unsigned char u[CMG__UUID_BYTES];
  char text[CMG__UUID_TEXT];
  static const char *const bad[] = {
    "GPU-c36d6751-5e1a-4d0c-9a77-73696467700",   /* one digit short */
    "GPU-c36d6751-5e1a-4d0c-9a77-7369646770000", /* one long */
    "GPU-c36d67515e1a-4d0c-9a77-736964677000-",  /* a dash moved */
    "GPU-c36d6751-5e1a-4d0c-9a77-73696467700g",  /* not hex */
    "MIG-c36d6751-5e1a-4d0c-9a77-736964677000",  /* a MIG instance */
    "gpu-c36d6751-5e1a-4d0c-9a77-736964677000",
    "GPU-",
    "",
  };

  is_int(cmg__uuid_parse(A, strlen(A), u), 0, "a GPU's UUID parses");
  is_int(u[0] << 8 | u[15], 0xc300, "into its 16 bytes, in order");
  cmg__uuid_format(u, text);
  is_str(text, A, "and is written back the same");
  is_int(cmg__uuid_parse("GPU-C36D6751-5E1A-4D0C-9A77-736964677000", 40, u), 0,
         "hex in upper case too");
  cmg__uuid_format(u, text);
  is_str(text, A, "written in lower case, as nvidia-smi does");
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
    is_int(cmg__uuid_parse(bad[i], strlen(bad[i]), u), -EINVAL,
           "refused: '%s'", bad[i]);
}

static void
keys(void)
{
  struct cmg__config cfg;
  unsigned char a[CMG__UUID_BYTES], b[CMG__UUID_BYTES];
  char err[512];

  cmg__uuid_parse(A, strlen(A), a);
  cmg__uuid_parse(B, strlen(B), b);
  is_int(cmg__config_parse("limit=8GiB,limit.0=6GiB,limit." A "=3GiB,"
                           "soft_limit." A "=2GiB,group=g,group_limit." B
                           "=5GiB",
                           &cfg, err, sizeof(err)),
         0, "limit, soft_limit and group_limit take GPU keys");
  is_int(cfg.n_gpu, 2, "two GPUs named");
  is_u64(cmg__config_limit(&cfg, 0, a, 80 * GiB), 3 * GiB,
         "the GPU's limit wins over its ordinal's");
  is_u64(cmg__config_limit(&cfg, 1, a, 80 * GiB), 3 * GiB,
         "whatever ordinal the GPU has");
  is_u64(cmg__config_limit(&cfg, 0, b, 80 * GiB), 6 * GiB,
         "a GPU without a limit of its own: its ordinal's");
  is_u64(cmg__config_limit(&cfg, 1, b, 80 * GiB), 8 * GiB, "else the default");
  is_u64(cmg__config_limit(&cfg, 0, NULL, 80 * GiB), 6 * GiB,
         "a GPU whose UUID is unknown: its ordinal's");
  is_u64(cmg__config_soft_limit(&cfg, 3, a, 80 * GiB), 2 * GiB,
         "soft_limit keyed by GPU");
  const struct cmg__gpu_limits *g = cmg__config_gpu(&cfg, b);
  ok(g != NULL && g->group_limit.kind == CMG__LIMIT_BYTES &&
         g->group_limit.bytes == 5 * GiB && g->limit.kind == CMG__LIMIT_NONE,
     "group_limit keyed by GPU, beside nothing else for it");

  is_int(cmg__config_parse("group_limit." A "=1GiB", &cfg, err, sizeof(err)),
         -EINVAL, "a GPU's group_limit without a group is refused");
  is_int(cmg__config_parse("limit." A "=1GiB,limit.GPU-C36D6751-5E1A-4D0C-"
                           "9A77-736964677000=2GiB",
                           &cfg, err, sizeof(err)),
         -EINVAL, "one GPU twice, however it is written");
  is_str(err,
         "duplicate option 'limit.GPU-C36D6751-5E1A-4D0C-9A77-736964677000="
         "2GiB': expected each key at most once",
         "is a duplicate");
  is_int(cmg__config_parse("limit.GPU-1234=1GiB", &cfg, err, sizeof(err)),
         -EINVAL, "a malformed UUID is refused");
  is_str(err,
         "bad device index in 'limit.GPU-1234=1GiB': expected limit.N with N "
         "from 0 to 63, or limit.GPU-<uuid> (GPU-xxxxxxxx-xxxx-xxxx-xxxx-"
         "xxxxxxxxxxxx, at most 16 GPUs)",
         "with one line saying what is expected");

  char many[4096] = "";
  for (int i = 0; i <= CMG__GPU_KEYS; i++) {
    size_t n = strlen(many);
    snprintf(many + n, sizeof(many) - n,
             "%slimit.GPU-c36d6751-5e1a-4d0c-9a77-7369646770%02x=1GiB",
             i ? "," : "", i);
  }
  is_int(cmg__config_parse(many, &cfg, err, sizeof(err)), -EINVAL,
         "more GPUs than %d are refused", CMG__GPU_KEYS);
}

int
main(void)
{
  uuids();
  keys();
  return done_testing();
}
