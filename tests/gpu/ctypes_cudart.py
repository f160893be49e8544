"""Python calling the shared CUDA runtime (libcudart.so.13) through ctypes,
as frameworks that load it with dlopen do, under a cap of CMG_GPU_CAP bytes
(a multiple of 256 MiB): cudaMemGetInfo shows the cap, exactly cap/256 MiB
allocations of 256 MiB succeed and the next fails with
cudaErrorMemoryAllocation (2), after a free a 128 MiB allocation succeeds.
The allocations are left live for the report (checked by the suite).

With argument "xla", it does instead what XLA's allocator does at start with
JAX's default preallocation, under a group's cap alone (--group-limit, as the
CDI device and the Slurm plugin set it): it takes 75% of the total that
cudaMemGetInfo shows (XLA_PYTHON_CLIENT_MEM_FRACTION) in one allocation,
which fits only if the total is the group's cap, not the card.

Needs no framework, so it also runs on the simulated CUDA (--dry-run), where
libcudart.so.13 is tests/sim's.  CMG_CUDART names the library to load."""
import ctypes
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cmgcase as C  # noqa: E402

xla = len(sys.argv) > 1 and sys.argv[1] == "xla"
case = C.Case("ctypes-xla" if xla else "ctypes-cudart")
cap = C.expected_cap()
name = os.environ.get("CMG_CUDART") or "libcudart.so.13"
try:
    rt = ctypes.CDLL(name)
except OSError as e:
    print("SKIP %s not loadable: %s" % (name, e), flush=True)
    sys.exit(C.EXIT_SKIP)
case.info(cudart=name, cap=cap)

c_size = ctypes.c_size_t
rt.cudaSetDevice.argtypes = [ctypes.c_int]
rt.cudaMalloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), c_size]
rt.cudaFree.argtypes = [ctypes.c_void_p]
rt.cudaMemGetInfo.argtypes = [ctypes.POINTER(c_size), ctypes.POINTER(c_size)]
for f in (rt.cudaSetDevice, rt.cudaMalloc, rt.cudaFree, rt.cudaMemGetInfo):
    f.restype = ctypes.c_int


def meminfo():
    free, total = c_size(), c_size()
    rc = rt.cudaMemGetInfo(ctypes.byref(free), ctypes.byref(total))
    return rc, free.value, total.value


def malloc(size):
    p = ctypes.c_void_p()
    rc = rt.cudaMalloc(ctypes.byref(p), size)
    return rc, p.value


def xla_sizing():
    """XLA's preallocation: 75% of the total, in one allocation."""
    rc, free, total = meminfo()
    case.check("cudaMemGetInfo succeeds", rc == 0, "rc=%d" % rc)
    C.check_cap_info(case, cap, total, free, "cudaMemGetInfo")
    C.check_interposer(case, cap, group=True)
    pool = int(total * 0.75) // C.MiB * C.MiB
    rc, p = malloc(pool)
    case.check("a pool of 75% of the total is allocated", rc == 0,
               "rc=%d pool=%s" % (rc, C.human(pool)))
    rc, after, _ = meminfo()
    case.check("free fell by the pool", rc == 0 and after == free - pool,
               "free=%s, then %s" % (C.human(free), C.human(after)))
    rc, q = malloc(after + 64 * C.MiB)
    case.check("more than is left fails with cudaErrorMemoryAllocation",
               rc == 2, "rc=%d" % rc)
    C.check_denied(case)
    case.result(pool=pool)
    case.done()


case.check("cudaSetDevice(0)", rt.cudaSetDevice(0) == 0, "")
if xla:
    xla_sizing()
rc, free, total = meminfo()
case.check("cudaMemGetInfo succeeds", rc == 0, "rc=%d" % rc)
C.check_cap_info(case, cap, total, free, "cudaMemGetInfo")
C.check_interposer(case, cap)

chunk = 256 * C.MiB
want = cap // chunk
ptrs, rc = [], 0
while len(ptrs) <= want + 1:
    rc, p = malloc(chunk)
    if rc != 0:
        break
    ptrs.append(p)
case.info(allocated=len(ptrs), last_rc=rc)
case.check("exactly cap / 256 MiB allocations fit", len(ptrs) == want,
           "%d allocations of 256 MiB, expected %d" % (len(ptrs), want))
case.check("the next one fails with cudaErrorMemoryAllocation", rc == 2,
           "rc=%d" % rc)
C.check_denied(case)
rc = rt.cudaFree(ptrs.pop(0)) if ptrs else -1
case.check("cudaFree", rc == 0, "rc=%d" % rc)
rc, p = malloc(128 * C.MiB)
case.check("a 128 MiB allocation works after the OOM", rc == 0, "rc=%d" % rc)
rc, free, total = meminfo()
case.check("cudaMemGetInfo shows what is left",
           rc == 0 and total == cap and free == cap - (want - 1) * chunk - 128 * C.MiB,
           "free=%d total=%d" % (free, total))
case.result(live=(want - 1) * chunk + 128 * C.MiB)
case.done()
