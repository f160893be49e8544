#!/bin/sh
# cuGetProcAddress answers: the wrapper of exactly the variant asked for (by
# base name, version and per-thread-stream flag), the driver's own pointer
# for variants we do not wrap, and the driver's verdict for everything else.
. "$srcdir/tests/lib/defs.sh"

# lookup NAME VERSION FLAGS WANT-FN WANT-LIB DESCRIPTION
lookup() {
  guard "" app_getproc getproc "$1" "$2" "$3"
  is "$(val 1 fn)/$(val 1 lib)" "$4/$5" "$6"
}

G=libcumemguard.so D=libcuda.so.1
lookup cuMemAlloc 3020 0 cuMemAlloc_v2 $G "cuMemAlloc at 3020: the _v2 wrapper"
lookup cuMemAlloc 13000 0 cuMemAlloc_v2 $G "cuMemAlloc at 13000: still _v2"
lookup cuMemAlloc 2000 0 cuMemAlloc $D "cuMemAlloc at 2000: the driver's 32-bit ABI, not a wrapper"
lookup cuMemFree 2000 0 cuMemFree $D "cuMemFree at 2000: the driver's own"
lookup cuMemAllocAsync 11020 0 cuMemAllocAsync $G "cuMemAllocAsync, legacy stream"
lookup cuMemAllocAsync 11020 2 cuMemAllocAsync_ptsz $G "cuMemAllocAsync, per-thread stream"
lookup cuMemAllocAsync 11020 1 cuMemAllocAsync $G "cuMemAllocAsync, legacy flag"
lookup cuMemFreeAsync 11020 2 cuMemFreeAsync_ptsz $G "cuMemFreeAsync, per-thread stream"
lookup cuMemFree 3020 2 cuMemFree_v2 $G "per-thread flag without a _ptsz variant falls back"
lookup cuGetProcAddress 11030 0 cuGetProcAddress $G "cuGetProcAddress before 12.0: the 4-argument resolver"
lookup cuGetProcAddress 12000 0 cuGetProcAddress_v2 $G "cuGetProcAddress from 12.0: the 5-argument resolver"
lookup cuCtxGetDevice 2000 0 cuCtxGetDevice $D "an unwrapped function: the driver's own"
lookup cuNoSuchFunction 12000 0 null - "an unknown name stays unknown"
is "$(val 1 status)" 1 "an unknown name keeps the driver's status"
lookup cuMemAllocAsync 11000 0 null - "a version too old stays too old"
is "$(val 1 status)" 2 "version-not-sufficient status kept"
lookup cuMemAlloc 14000 0 null - "a version newer than the driver is the driver's error"
is "$(val 1 rc)" 1 "the driver's error code is kept"

# With 4-argument lookups too.
CMG_APP_GETPROC=v1 guard "" app_getproc getproc cuMemAllocAsync 11020 2 \
  getproc cuMemAlloc 2000 0
is "$(val 1 fn)" cuMemAllocAsync_ptsz "4-argument resolver: per-thread variant"
is "$(val 2 lib)" $D "4-argument resolver: legacy variant left alone"

# Per-thread-stream allocations are capped and labeled with their variant.
guard "--limit 1GiB" app_getproc async_ptsz 600M async_ptsz 600M async 100M \
  whatis 0 whatis 2 free_async_ptsz 0 cmg 0
is "$(val 1 rc)/$(val 2 rc)/$(val 3 rc)" 0/2/0 "async allocations capped"
is "$(val 4 api)" cuMemAllocAsync_ptsz "labeled cuMemAllocAsync_ptsz"
is "$(val 5 api)" cuMemAllocAsync "labeled cuMemAllocAsync"
is "$(val 7 live)/$(val 7 frees)" $((100 * 1048576))/1 "per-thread async free counted"

# The runtime's async entry points label theirs.
guard "--limit 1GiB" app_rt_shared async 1M async_ptsz 1M whatis 0 whatis 1
is "$(val 3 api)" cudaMallocAsync "shared runtime: labeled cudaMallocAsync"
is "$(val 4 api)" cudaMallocAsync_ptsz "shared runtime: labeled cudaMallocAsync_ptsz"

done_testing
