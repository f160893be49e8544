"""A one-rank torch.distributed NCCL group (world size 1) under the cap
(CMG_GPU_CAP bytes, --limit), as a tensor-parallel server starts its
communicator: the all-reduce works, and the memory NCCL allocates for
itself (outside PyTorch's caching allocator, through cuMemCreate or
cudaMalloc in its own embedded runtime) is counted, so that cudaMemGetInfo
goes on telling what the cap counts."""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cmgcase as C  # noqa: E402

C.need("torch")
import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

case = C.Case("nccl-one-rank")
cap = C.expected_cap()
if not case.check("CUDA available", torch.cuda.is_available(), ""):
    case.done()
if not dist.is_available() or not dist.is_nccl_available():
    print("SKIP this torch has no NCCL", flush=True)
    sys.exit(C.EXIT_SKIP)
case.info(torch=torch.__version__, nccl=str(torch.cuda.nccl.version()))
torch.cuda.set_device(0)
torch.empty(1, device="cuda")
C.check_interposer(case, cap)


def outside_torch():
    """What the caps count that PyTorch's allocator did not reserve."""
    s = C.cmg_stats(0)
    return s["live_bytes"] - torch.cuda.memory_reserved(0), s["live_bytes"]


before, _ = outside_torch()
init = tempfile.NamedTemporaryFile(prefix="cmg-nccl-", delete=False).name
dist.init_process_group("nccl", init_method="file://" + init, world_size=1,
                        rank=0)
x = torch.full((1 << 20,), 3.0, device="cuda")
dist.all_reduce(x)
torch.cuda.synchronize()
case.check("the all-reduce of one rank works", bool((x == 3.0).all().item()),
           "x[0]=%s" % x[0].item())
after, live = outside_torch()
case.info(nccl_bytes=after - before)
case.check("NCCL's own buffers are counted", after > before,
           "outside PyTorch's allocator: %s before, %s after" % (
               C.human(before), C.human(after)))
free, total = torch.cuda.mem_get_info(0)
case.check("cudaMemGetInfo: the cap, and used is what the cap counts",
           total == cap and total - free == live,
           "total=%d free=%d counted=%d" % (total, free, live))
C.check_nvml(case, cap)
dist.destroy_process_group()
os.unlink(init)
case.done()
