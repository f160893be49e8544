/*
 * GPU UUIDs in the form CUDA, NVML and nvidia-smi print them: the
 * options' GPU keys (limit.GPU-<uuid>) and their lookups, the group
 * segment's names of its devices, and the device plugin's IDs all read
 * and write them here.  MIG instances have
 * UUIDs of another form ("MIG-..."), which no key takes: a cap on one is
 * the cap of its ordinal.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/conf.h"
#include "core/conf_gpu.h"

static int
hex(char c)
{
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

bool
cmg__uuid_is_key(const char *s, size_t len)
{
  return len >= 4 && memcmp(s, "GPU-", 4) == 0;
}

int
cmg__uuid_parse(const char *s, size_t len, unsigned char out[CMG__UUID_BYTES])
{
  size_t at = 4, n = 0;

  if (len != CMG__UUID_TEXT - 1 || !cmg__uuid_is_key(s, len))
    return -EINVAL;
  for (; at < len; at++) {
    /* Dashes after the 8th, 12th, 16th and 20th digit, and only there. */
    bool dash = n == 8 || n == 12 || n == 16 || n == 20;
    if (dash && s[at] == '-' && (at == 12 || at == 17 || at == 22 || at == 27))
      continue;
    int hi = hex(s[at]), lo = at + 1 < len ? hex(s[at + 1]) : -1;
    if (hi < 0 || lo < 0 || n / 2 >= CMG__UUID_BYTES)
      return -EINVAL;
    out[n / 2] = (unsigned char)(hi << 4 | lo);
    n += 2;
    at++;
  }
  return n == 2 * CMG__UUID_BYTES ? 0 : -EINVAL;
}

void
cmg__uuid_format(const unsigned char b[CMG__UUID_BYTES],
                 char out[CMG__UUID_TEXT])
{
  snprintf(out, CMG__UUID_TEXT,
           "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
           "%02x%02x%02x%02x%02x%02x",
           b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10],
           b[11], b[12], b[13], b[14], b[15]);
}

/* The index of the GPU entry for a UUID key ("GPU-..."), made if it is
 * new: false for a malformed UUID or past CMG__GPU_KEYS GPUs. */
bool
cmg__config_gpu_index(struct cmg__config *cfg, const char *s, size_t len,
                      int *index)
{
  unsigned char u[CMG__UUID_BYTES];
  unsigned k = 0;

  if (cmg__uuid_parse(s, len, u) != 0)
    return false;
  while (k < cfg->n_gpu && memcmp(cfg->gpu[k].uuid, u, sizeof(u)) != 0)
    k++;
  if (k == CMG__GPU_KEYS)
    return false;
  if (k == cfg->n_gpu)
    memcpy(cfg->gpu[cfg->n_gpu++].uuid, u, sizeof(u));
  *index = CMG__GPU_INDEX((int)k);
  return true;
}

const struct cmg__gpu_limits *
cmg__config_gpu(const struct cmg__config *cfg, const unsigned char *uuid)
{
  for (unsigned k = 0; uuid != NULL && k < cfg->n_gpu; k++)
    if (memcmp(cfg->gpu[k].uuid, uuid, CMG__UUID_BYTES) == 0)
      return &cfg->gpu[k];
  return NULL;
}

/* The first that is set of a GPU's, an ordinal's and the default. */
static uint64_t
pick(const struct cmg__limit *gpu, const struct cmg__limit *dev,
     const struct cmg__limit *all, uint64_t physical)
{
  if (gpu != NULL && gpu->kind != CMG__LIMIT_NONE)
    return cmg__limit_bytes(gpu, physical);
  if (dev != NULL && dev->kind != CMG__LIMIT_NONE)
    return cmg__limit_bytes(dev, physical);
  return cmg__limit_bytes(all, physical);
}

/*
 * The limit of `device`: its GPU's, else its own limit.N, else limit, else
 * CMG__NO_LIMIT.  An ordinal outside the table gets the global limit, since
 * limit.N could not have named it.
 */
uint64_t
cmg__config_limit(const struct cmg__config *cfg, int device,
                  const unsigned char *uuid, uint64_t physical)
{
  const struct cmg__gpu_limits *g = cmg__config_gpu(cfg, uuid);
  bool ordinal = device >= 0 && device < CMG__MAX_DEVICES;
  return pick(g ? &g->limit : NULL, ordinal ? &cfg->limit_dev[device] : NULL,
              &cfg->limit, physical);
}

uint64_t
cmg__config_soft_limit(const struct cmg__config *cfg, int device,
                       const unsigned char *uuid, uint64_t physical)
{
  const struct cmg__gpu_limits *g = cmg__config_gpu(cfg, uuid);
  bool ordinal = device >= 0 && device < CMG__MAX_DEVICES;
  return pick(g ? &g->soft_limit : NULL,
              ordinal ? &cfg->soft_limit_dev[device] : NULL, &cfg->soft_limit,
              physical);
}
