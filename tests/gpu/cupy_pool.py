"""CuPy under the cap.  CuPy links the CUDA runtime statically, so it reaches
the driver only through cuGetProcAddress.  Its memory info shows the cap, its
default memory pool fills up to the cap and no further, out-of-memory is
cupy.cuda.memory.OutOfMemoryError, and smaller allocations (and a matmul
through cuBLAS) work afterwards."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cmgcase as C  # noqa: E402

C.need("cupy")
import cupy  # noqa: E402

case = C.Case("cupy-pool")
cap = C.expected_cap()
case.info(cupy=cupy.__version__, cuda_runtime=cupy.cuda.runtime.runtimeGetVersion(),
          cap=cap)
free, total = cupy.cuda.runtime.memGetInfo()
C.check_cap_info(case, cap, total, free, "cupy.cuda.runtime.memGetInfo()")
C.check_interposer(case, cap)

pool = cupy.get_default_memory_pool()
chunk = 300 * C.MiB
held, arrays, err = 0, [], None
while held <= cap + chunk:
    try:
        arrays.append(cupy.empty(chunk, dtype=cupy.uint8))
        held += chunk
    except Exception as e:  # noqa: BLE001 - the type is what is checked
        err = e
        break
case.info(held=held, pool_total=pool.total_bytes(), pool_used=pool.used_bytes(),
          error=type(err).__name__ if err else None)
if err is not None:
    print("INFO error_message=%r" % str(err).splitlines()[0][:300], flush=True)
case.check("out of memory is cupy.cuda.memory.OutOfMemoryError",
           type(err) is cupy.cuda.memory.OutOfMemoryError,
           "got %s" % (type(err).__module__ + "." + type(err).__name__
                       if err else "no error at %s" % C.human(held)))
C.check_fill(case, cap, held, chunk)
case.check("the memory pool stays within the cap", pool.total_bytes() <= cap,
           "pool.total_bytes()=%s" % C.human(pool.total_bytes()))
C.check_denied(case)
C.check_nvml(case, cap)

try:
    x = cupy.ones((2048, 2048), dtype=cupy.float32)
    z = float((x @ x)[0, 0])
    cupy.cuda.runtime.deviceSynchronize()
    case.check("a smaller allocation and a matmul work after the OOM",
               z == 2048.0, "z[0,0]=%s" % z)
except Exception as e:  # noqa: BLE001
    case.check("a smaller allocation and a matmul work after the OOM", False,
               "%s: %s" % (type(e).__name__, str(e).splitlines()[0][:200]))
del arrays
case.done()
