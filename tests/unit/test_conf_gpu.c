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

/* ---- cmg__config_limit -------------------------------------------------- */

static void
test_config_limit(void)
{
  struct cmg__config cfg;
  char err[256];

  cmg__config_parse("", &cfg, err, sizeof(err));
  is_u64(cmg__config_limit(&cfg, 0, NULL, 80 * GiB), CMG__NO_LIMIT,
         "no limit: device 0");
  is_u64(cmg__config_limit(&cfg, 63, NULL, 80 * GiB), CMG__NO_LIMIT,
         "no limit: device 63");

  cmg__config_parse("limit=4GiB", &cfg, err, sizeof(err));
  is_u64(cmg__config_limit(&cfg, 0, NULL, 80 * GiB), 4 * GiB, "global: device 0");
  is_u64(cmg__config_limit(&cfg, 63, NULL, 80 * GiB), 4 * GiB, "global: device 63");
  is_u64(cmg__config_limit(&cfg, 64, NULL, 80 * GiB), 4 * GiB,
         "global: device 64, past the table");
  is_u64(cmg__config_limit(&cfg, -1, NULL, 80 * GiB), 4 * GiB, "global: device -1");
  is_u64(cmg__config_limit(&cfg, 0, NULL, GiB), 4 * GiB,
         "bytes do not depend on the device size");

  cmg__config_parse("limit=4GiB,limit.1=2GiB", &cfg, err, sizeof(err));
  is_u64(cmg__config_limit(&cfg, 1, NULL, 80 * GiB), 2 * GiB, "limit.1 wins");
  is_u64(cmg__config_limit(&cfg, 0, NULL, 80 * GiB), 4 * GiB, "others: limit");
  is_u64(cmg__config_limit(&cfg, 2, NULL, 80 * GiB), 4 * GiB, "device 2: limit");

  cmg__config_parse("limit.1=2GiB", &cfg, err, sizeof(err));
  is_u64(cmg__config_limit(&cfg, 1, NULL, 80 * GiB), 2 * GiB, "only limit.1");
  is_u64(cmg__config_limit(&cfg, 0, NULL, 80 * GiB), CMG__NO_LIMIT,
         "only limit.1: device 0 unlimited");
  is_u64(cmg__config_limit(&cfg, 100, NULL, 80 * GiB), CMG__NO_LIMIT,
         "only limit.1: device 100 unlimited");

  cmg__config_parse("limit=0,limit.3=1", &cfg, err, sizeof(err));
  is_u64(cmg__config_limit(&cfg, 0, NULL, 80 * GiB), 0, "limit=0 denies all");
  is_u64(cmg__config_limit(&cfg, 3, NULL, 80 * GiB), 1, "limit.3=1");

  cmg__config_parse("limit=50%", &cfg, err, sizeof(err));
  is_u64(cmg__config_limit(&cfg, 0, NULL, 80 * GiB), 40 * GiB, "50%% of 80 GiB");
  is_u64(cmg__config_limit(&cfg, 0, NULL, 3), 1, "50%% of 3 bytes rounds down");
  is_u64(cmg__config_limit(&cfg, 0, NULL, 0), 0, "50%% of nothing");
  is_u64(cmg__config_limit(&cfg, 0, NULL, UINT64_MAX), UINT64_MAX / 2,
         "50%% of 2^64-1: no overflow");

  cmg__config_parse("limit=100%", &cfg, err, sizeof(err));
  is_u64(cmg__config_limit(&cfg, 5, NULL, UINT64_MAX), UINT64_MAX, "100%% of 2^64-1");
  is_u64(cmg__config_limit(&cfg, 5, NULL, 80 * GiB), 80 * GiB, "100%% of 80 GiB");

  cmg__config_parse("limit=12.5%,limit.2=25%,limit.4=1G", &cfg, err,
                    sizeof(err));
  is_u64(cmg__config_limit(&cfg, 0, NULL, 1000), 125, "12.5%% of 1000");
  is_u64(cmg__config_limit(&cfg, 2, NULL, 16 * GiB), 4 * GiB, "limit.2=25%%");
  is_u64(cmg__config_limit(&cfg, 4, NULL, 16 * GiB), GiB, "limit.4=1G");

  cmg__config_parse("limit=33.3333%", &cfg, err, sizeof(err));
  is_u64(cmg__config_limit(&cfg, 0, NULL, 3000000), 999999,
         "33.3333%% of 3000000 bytes");
  is_u64(cmg__config_limit(&cfg, 0, NULL, 3), 0, "33.3333%% of 3 rounds down");
}

int
main(void)
{
  uuids();
  keys();
  test_config_limit();
  return done_testing();
}
