"""PyTorch under the cap (CMG_GPU_CAP bytes): torch.cuda.mem_get_info() shows
the limit; filling memory past it raises torch.OutOfMemoryError and no other
error; smaller allocations and a matmul work afterwards.  Run as is, and with
PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True (driver VMM: cuMemCreate) and
=backend:cudaMallocAsync (stream-ordered pool): the same checks hold for all
three allocators."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cmgcase as C  # noqa: E402

C.need("torch")
import torch  # noqa: E402

case = C.Case("torch-oom")
cap = C.expected_cap()
conf = os.environ.get("PYTORCH_CUDA_ALLOC_CONF", "")
case.info(torch=torch.__version__, cuda=torch.version.cuda,
          alloc_conf=conf or "default", cap=cap)
if not case.check("CUDA available", torch.cuda.is_available(), ""):
    case.done()
case.info(gpu=torch.cuda.get_device_name(0),
          backend=torch.cuda.get_allocator_backend())

torch.cuda.init()
free, total = torch.cuda.mem_get_info(0)
C.check_cap_info(case, cap, total, free, "torch.cuda.mem_get_info()")
props_total = torch.cuda.get_device_properties(0).total_memory
case.check("get_device_properties().total_memory is the cap",
           props_total == cap, "total_memory=%d" % props_total)
C.check_interposer(case, cap)

chunk = 300 * C.MiB
held, tensors, err = 0, [], None
while held <= cap + chunk:  # past the cap without an error: not enforced
    try:
        tensors.append(torch.empty(chunk, dtype=torch.uint8, device="cuda"))
        held += chunk
    except Exception as e:  # noqa: BLE001 - the type is what is checked
        err = e
        break
case.info(held=held, reserved=torch.cuda.memory_reserved(0),
          error=type(err).__name__ if err else None)
if err is not None:
    print("INFO error_message=%r" % str(err).splitlines()[0][:300], flush=True)
case.check("filling past the cap raised torch.OutOfMemoryError",
           type(err) is torch.OutOfMemoryError,
           "got %s" % (type(err).__module__ + "." + type(err).__name__
                       if err else "no error at %s" % C.human(held)))
C.check_fill(case, cap, held, chunk)
reserved = torch.cuda.memory_reserved(0)
case.check("memory_reserved() within the cap", reserved <= cap,
           "reserved=%s" % C.human(reserved))
C.check_denied(case)
C.check_nvml(case, cap)

# Smaller allocations still work, and the GPU computes with them.
try:
    x = torch.ones(2048, 2048, device="cuda")
    z = (x @ x)[0, 0].item()
    torch.cuda.synchronize()
    case.check("a smaller allocation and a matmul work after the OOM",
               z == 2048.0, "z[0,0]=%s" % z)
except Exception as e:  # noqa: BLE001
    case.check("a smaller allocation and a matmul work after the OOM", False,
               "%s: %s" % (type(e).__name__, str(e).splitlines()[0][:200]))
free, total = torch.cuda.mem_get_info(0)
case.check("mem_get_info() still shows the cap", total == cap,
           "total=%d free=%d" % (total, free))
del tensors
case.done()
