"""A PyTorch program that leaks one tensor on purpose (the torch-pools case
of scripts/gpu-suite), run twice: under `cumemguard --no-pools` (argument
"nopools") and without it ("pools").  It allocates and frees working
tensors, then keeps one tensor of LEAK_BYTES, an odd size no pool block
has, in a module-level list that is never cleared: the leak.

Under --no-pools the caching allocator must be off (memory_reserved equals
memory_allocated) and the suite then finds the tensor as its own leak group
of exactly LEAK_BYTES; without it the tensor lies inside a caching
allocator's segment, the report has no group of that size, and
cumemguard-report marks the segments as pool blocks and prints the hint.
The report the suite reads is written by cmg_dump into CMG_GPU_DUMP."""
import ctypes
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cmgcase as C  # noqa: E402

C.need("torch")
import torch  # noqa: E402

LEAK_BYTES = 37 * C.MiB + 4 * C.KiB
mode = sys.argv[1] if len(sys.argv) > 1 else "pools"
case = C.Case("torch-pools")
case.info(mode=mode, torch=torch.__version__, leak_bytes=LEAK_BYTES)
want_off = mode == "nopools"
case.check("PYTORCH_NO_CUDA_MEMORY_CACHING is %s" %
           ("set" if want_off else "unset"),
           ("PYTORCH_NO_CUDA_MEMORY_CACHING" in os.environ) == want_off,
           "value=%r" % os.environ.get("PYTORCH_NO_CUDA_MEMORY_CACHING"))

kept = []


def leak_a_tensor():
    """The allocation site the report must show under --no-pools."""
    kept.append(torch.empty(LEAK_BYTES, dtype=torch.uint8, device="cuda"))


def work():
    """Tensors that come and go: a pool caches their blocks."""
    for _ in range(3):
        x = torch.randn(1024, 1024, device="cuda")
        y = x @ x
        del x, y
    torch.cuda.synchronize()


work()
leak_a_tensor()
work()
allocated = torch.cuda.memory_allocated()
reserved = torch.cuda.memory_reserved()
case.info(allocated=allocated, reserved=reserved)
if want_off:
    # The uncached path bypasses the allocator's statistics, so both may
    # be 0; the report is what shows the tensor (the suite checks it).
    case.check("the caching allocator is off: nothing reserved beyond what "
               "tensors hold", reserved == allocated,
               "reserved=%d allocated=%d" % (reserved, allocated))
else:
    case.check("the caching allocator holds more than the tensors",
               reserved > allocated,
               "reserved=%d allocated=%d" % (reserved, allocated))
# The report is written now, with the tensor still held: at exit Python's
# finalization may free module globals first, and the uncached allocator
# would then give the memory back before the report is written.
dump = os.environ.get("CMG_GPU_DUMP")
if dump:
    try:
        rc = ctypes.CDLL(None).cmg_dump(dump.encode())
    except AttributeError:
        rc = "no cmg_dump: the library is not loaded"
    case.check("cmg_dump wrote the report while the tensor is held", rc == 0,
               "rc=%s path=%s" % (rc, dump))
case.result(allocated=allocated, reserved=reserved, leak=LEAK_BYTES)
case.done()
