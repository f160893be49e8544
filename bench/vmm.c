/*
 * The two other ways frameworks get device memory, bare and through the
 * interposer in one process, as the direct path is (paths.c):
 *
 *   vmm:          what PyTorch's expandable_segments does per 2 MiB page:
 *                 cuMemCreate, cuMemMap into a range reserved once,
 *                 cuMemSetAccess, then cuMemUnmap and cuMemRelease;
 *   pool driver:  cuMemAllocAsync + cuMemFreeAsync on the NULL stream;
 *   pool runtime: cudaMallocAsync + cudaFreeAsync, the runtime's
 *                 (PyTorch's backend:cudaMallocAsync).
 *
 * The bare functions are the driver's own and those of the runtime's bare
 * copy (cmgb_bare_sym); the interposed ones are the names this program
 * links, which the preloaded interposer takes over where it hooks them
 * (of the VMM calls, cuMemCreate and cuMemRelease; the others are the
 * driver's either way).  The child (`cmgbench --child vmm`) runs at the
 * default options and with stacks off, a process each; every round times
 * a block of each path bare and interposed, back to back.
 */
#include "config.h"

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cmgbench.h"

#define PAGE (2u << 20) /* the simulated driver's granularity */
#define POOL_BYTES (1u << 20)
#define NVPATHS 3

const int cmgb_vmm_depths[2] = { 32, 0 };

static const char *const names[NVPATHS] = { "vmm", "pool_driver",
                                            "pool_runtime" };
static const char *const labels[NVPATHS] = { "vmm (2 MiB page)", "pool driver",
                                             "pool runtime" };

struct fns {
  __typeof__(cuMemCreate) *create;
  __typeof__(cuMemMap) *map;
  __typeof__(cuMemSetAccess) *set_access;
  __typeof__(cuMemUnmap) *unmap;
  __typeof__(cuMemRelease) *release;
  __typeof__(cuMemAllocAsync) *alloc_async;
  __typeof__(cuMemFreeAsync) *free_async;
  __typeof__(cudaMallocAsync) *rt_alloc_async;
  __typeof__(cudaFreeAsync) *rt_free_async;
};

/* [0] bare, [1] with the interposer. */
static struct fns fns[2];
static CUdeviceptr va;
static CUmemAllocationProp prop;
static CUmemAccessDesc access_desc;

/* ---- the child ---------------------------------------------------------- */

static int
failed(const char *path, int rc)
{
  fprintf(stderr, "cmgbench: a call through path %s failed: %d\n", path, rc);
  return -1;
}

static int
vmm_loop(void *arg, bool with, long n)
{
  const struct fns *f = &fns[with];
  for (long i = 0; i < n; i++) {
    CUmemGenericAllocationHandle h = 0;
    CUresult rc = f->create(&h, PAGE, &prop, 0);
    if (rc == CUDA_SUCCESS)
      rc = f->map(va, PAGE, 0, h, 0);
    if (rc == CUDA_SUCCESS)
      rc = f->set_access(va, PAGE, &access_desc, 1);
    if (rc == CUDA_SUCCESS)
      rc = f->unmap(va, PAGE);
    if (rc == CUDA_SUCCESS)
      rc = f->release(h);
    if (rc != CUDA_SUCCESS)
      return failed("vmm", rc);
  }
  return 0;
}

static int
pool_driver_loop(void *arg, bool with, long n)
{
  const struct fns *f = &fns[with];
  for (long i = 0; i < n; i++) {
    CUdeviceptr p = 0;
    CUresult rc = f->alloc_async(&p, POOL_BYTES, NULL);
    if (rc == CUDA_SUCCESS)
      rc = f->free_async(p, NULL);
    if (rc != CUDA_SUCCESS)
      return failed("pool driver", rc);
  }
  return 0;
}

static int
pool_runtime_loop(void *arg, bool with, long n)
{
  const struct fns *f = &fns[with];
  for (long i = 0; i < n; i++) {
    void *p = NULL;
    cudaError_t rc = f->rt_alloc_async(&p, POOL_BYTES, NULL);
    if (rc == cudaSuccess)
      rc = f->rt_free_async(p, NULL);
    if (rc != cudaSuccess)
      return failed("pool runtime", rc);
  }
  return 0;
}

static const cmgb_loop loops[NVPATHS] = { vmm_loop, pool_driver_loop,
                                          pool_runtime_loop };

#define BARE(field, runtime, name)                                             \
  fns[0].field = (__typeof__(fns[0].field))cmgb_bare_sym(runtime, name)

/* Both sets of functions; the hooked ones must be the interposer's with it
 * and not without, or the rows would measure nothing. */
static int
find_fns(void)
{
  BARE(create, false, "cuMemCreate");
  BARE(map, false, "cuMemMap");
  BARE(set_access, false, "cuMemSetAccess");
  BARE(unmap, false, "cuMemUnmap");
  BARE(release, false, "cuMemRelease");
  BARE(alloc_async, false, "cuMemAllocAsync");
  BARE(free_async, false, "cuMemFreeAsync");
  BARE(rt_alloc_async, true, "cudaMallocAsync");
  BARE(rt_free_async, true, "cudaFreeAsync");
  fns[1] = (struct fns){ cuMemCreate,    cuMemMap,        cuMemSetAccess,
                         cuMemUnmap,     cuMemRelease,    cuMemAllocAsync,
                         cuMemFreeAsync, cudaMallocAsync, cudaFreeAsync };
  for (int w = 0; w < 2; w++) {
    const void *hooked[] = { fns[w].create,         fns[w].release,
                             fns[w].alloc_async,    fns[w].free_async,
                             fns[w].rt_alloc_async, fns[w].rt_free_async };
    for (size_t i = 0; i < sizeof(hooked) / sizeof(*hooked); i++)
      if (hooked[i] == NULL || cmgb_is_interposer(hooked[i]) != w) {
        fprintf(stderr,
                "cmgbench: vmm: the %s function %zu is %s the "
                "interposer's\n",
                w ? "interposed" : "bare", i, w ? "not" : "");
        return -1;
      }
  }
  if (!fns[0].map || !fns[0].set_access || !fns[0].unmap) {
    fprintf(stderr, "cmgbench: vmm: the driver lacks cuMemMap, "
                    "cuMemSetAccess or cuMemUnmap\n");
    return -1;
  }
  return 0;
}

/* One 2 MiB range, reserved once, as an expandable segment's is; pinned
 * device memory on device 0, shareable as a file descriptor, as PyTorch
 * asks on Linux. */
static int
vmm_setup(void)
{
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = 0;
  access_desc.location = prop.location;
  access_desc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  CUresult rc = cuMemAddressReserve(&va, PAGE, 0, 0, 0);
  return rc == CUDA_SUCCESS ? 0 : failed("vmm (reserve)", rc);
}

struct run {
  int rounds;
  double block_ms;
  long n[NVPATHS];
  double s[NVPATHS][2][CMGB_MAX_ROUNDS];
  bool failed;
};

static void
run_body(void *arg)
{
  struct run *r = arg;
  for (int p = 0; p < NVPATHS && !r->failed; p++) {
    r->n[p] = cmgb_calibrate(loops[p], NULL, r->block_ms);
    r->failed |=
        r->n[p] < 0 || isnan(cmgb_time(loops[p], NULL, true, r->n[p] / 4 + 1));
  }
  for (int i = 0; i < r->rounds && !r->failed; i++)
    for (int p = 0; p < NVPATHS; p++)
      for (int k = 0; k < 2; k++) {
        bool with = k ^ ((i + p) & 1);
        r->s[p][with][i] = cmgb_time(loops[p], NULL, with, r->n[p]);
        r->failed |= isnan(r->s[p][with][i]);
      }
}

int
cmgb_vmm_child(int rounds, double block_ms)
{
  static struct run r;
  r.rounds = rounds;
  r.block_ms = block_ms;
  if (cmgb_use_device(0) != 0 || find_fns() != 0 || vmm_setup() != 0)
    return 1;
  cmgb_at_depth(CMGB_CALL_DEPTH, run_body, &r);
  if (r.failed)
    return 1;
  for (int p = 0; p < NVPATHS; p++) {
    cmgb_put_pair(names[p], r.s[p][0], r.s[p][1], rounds);
    cmgb_put2(names[p], "iterations", (double)r.n[p]);
  }
  return 0;
}

/* ---- the harness side --------------------------------------------------- */

static double
get(int depth, int p, const char *what)
{
  return cmgb_get("vmm.%d.%s.%s", depth, names[p], what);
}

static double
added_percent(int depth, int p)
{
  return get(depth, p, "added_med") / get(depth, p, "bare_med") * 100;
}

void
cmgb_vmm_require(void)
{
  for (int d = 0; d < 2; d++)
    for (int p = 0; p < NVPATHS; p++)
      if (isnan(get(cmgb_vmm_depths[d], p, "added_med"))) {
        fprintf(stderr, "cmgbench: no figure vmm.%d.%s\n", cmgb_vmm_depths[d],
                names[p]);
        cmgb_broken = 1;
      }
}

void
cmgb_print_vmm(void)
{
  printf("\nVMM and stream-ordered pools: ns per iteration, median of %d "
         "rounds (min),\n%d frames deep.  vmm: cuMemCreate + cuMemMap + "
         "cuMemSetAccess + cuMemUnmap +\ncuMemRelease of one 2 MiB page "
         "(expandable segments); pool: cuMemAllocAsync +\ncuMemFreeAsync "
         "(driver) or cudaMallocAsync + cudaFreeAsync (runtime) of 1 MiB,\n"
         "NULL stream.  added %%: added over without.\n",
         cmgb_plan->rounds, CMGB_CALL_DEPTH);
  printf("   %-17s %-6s %14s %14s %16s %8s\n", "path", "stacks", "without",
         "with", "added", "added %");
  for (int d = 0; d < 2; d++)
    for (int p = 0; p < NVPATHS; p++) {
      int dd = cmgb_vmm_depths[d];
      printf("   %-17s %-6s %6.0f (%5.0f) %6.0f (%5.0f) %+7.0f (%+6.0f) "
             "%+7.0f%%\n",
             labels[p], dd ? "32" : "off", get(dd, p, "bare_med"),
             get(dd, p, "bare_min"), get(dd, p, "with_med"),
             get(dd, p, "with_min"), get(dd, p, "added_med"),
             get(dd, p, "added_min"), added_percent(dd, p));
    }
}

void
cmgb_vmm_json(FILE *f)
{
  fprintf(f,
          ",\n  \"vmm_pool\": {\"vmm_page_bytes\": %u, \"pool_bytes\": "
          "%u, \"rows\": [",
          PAGE, POOL_BYTES);
  for (int d = 0; d < 2; d++)
    for (int p = 0; p < NVPATHS; p++) {
      int dd = cmgb_vmm_depths[d];
      fprintf(f, "%s\n    {\"path\": \"%s\", \"stack_depth\": %d, ",
              d + p ? "," : "", names[p], dd);
      cmgb_jstat(f, "without", get(dd, p, "bare_med"), get(dd, p, "bare_min"));
      fputs(", ", f);
      cmgb_jstat(f, "with", get(dd, p, "with_med"), get(dd, p, "with_min"));
      fputs(", ", f);
      cmgb_jstat(f, "added", get(dd, p, "added_med"), get(dd, p, "added_min"));
      fputs(", \"added_percent\": ", f);
      cmgb_jnum(f, added_percent(dd, p));
      fputs("}", f);
    }
  fputs("\n  ]}", f);
}
