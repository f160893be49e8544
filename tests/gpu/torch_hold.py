"""One of two PyTorch processes sharing a GPU, each capped at 40% (the
two-procs-torch case).  Each fills its share until torch.OutOfMemoryError,
then waits until its sibling has filled too (files in CMG_GPU_BARRIER), so
both hold their memory at the same time, then trains a step and exits.
Without the cap the first would take the card and the second would fail."""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cmgcase as C  # noqa: E402

C.need("torch")
import torch  # noqa: E402

case = C.Case("two-procs-torch")
cap = C.expected_cap()
barrier = os.environ["CMG_GPU_BARRIER"]
me, peers = sys.argv[1], int(os.environ.get("CMG_GPU_PEERS", "2"))
case.info(proc=me, cap=cap)
free, total = torch.cuda.mem_get_info(0)
case.check("mem_get_info() total is the cap", total == cap, "total=%d" % total)
chunk = 512 * C.MiB
held, tensors, err = 0, [], None
while held <= cap + chunk:
    try:
        tensors.append(torch.empty(chunk, dtype=torch.uint8, device="cuda"))
        held += chunk
    except Exception as e:  # noqa: BLE001
        err = e
        break
case.check("filling stopped with torch.OutOfMemoryError",
           type(err) is torch.OutOfMemoryError,
           "got %s at %s" % (type(err).__name__ if err else "no error",
                             C.human(held)))
C.check_fill(case, cap, held, chunk)
open(os.path.join(barrier, me), "w").close()
deadline = time.time() + 120
while len(os.listdir(barrier)) < peers and time.time() < deadline:
    time.sleep(0.05)
case.check("both processes held their share at the same time",
           len(os.listdir(barrier)) >= peers,
           "%d of %d ready" % (len(os.listdir(barrier)), peers))
C.check_nvml(case, cap)
tensors.pop()
x = torch.randn(4096, 4096, device="cuda")
z = float((x @ x.T).trace().item())
torch.cuda.synchronize()
case.check("a matmul runs while the sibling holds its share", z > 0,
           "trace=%.1f" % z)
time.sleep(1.0)  # still holding while the sibling computes
del tensors
case.done()
