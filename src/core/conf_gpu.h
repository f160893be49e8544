/*
 * A GPU named by its UUID, as options and the group segment key a cap to
 * it (conf_gpu.c): limit.GPU-<uuid>=SIZE holds on that GPU whatever ordinal
 * CUDA_VISIBLE_DEVICES gives it in a process.
 */
#ifndef CMG_CORE_CONF_GPU_H
#define CMG_CORE_CONF_GPU_H

#include <stdbool.h>
#include <stddef.h>

#define CMG__UUID_BYTES 16
/* "GPU-" and 8-4-4-4-12 hex digits, as nvidia-smi -L and NVML write it. */
#define CMG__UUID_TEXT 41

/* Parses "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" (len bytes, hex in
 * either case) into out: 0, or -EINVAL for anything else. */
int cmg__uuid_parse(const char *s, size_t len,
                    unsigned char out[CMG__UUID_BYTES]);

/* The UUID as "GPU-..." in lower case; out holds CMG__UUID_TEXT bytes. */
void cmg__uuid_format(const unsigned char u[CMG__UUID_BYTES],
                      char out[CMG__UUID_TEXT]);

/* Whether s starts a GPU key ("GPU-"). */
bool cmg__uuid_is_key(const char *s, size_t len);

struct cmg__config;

/* The index a handler gets for the GPU key s (len bytes, "GPU-..."), its
 * entry in cfg->gpu made if it is new: false for a malformed UUID or past
 * CMG__GPU_KEYS GPUs. */
bool cmg__config_gpu_index(struct cmg__config *cfg, const char *s, size_t len,
                           int *index);

#endif /* CMG_CORE_CONF_GPU_H */
