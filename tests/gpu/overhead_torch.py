"""The overhead cases' PyTorch side: a small training loop (MLP, SGD, batch
1024) timed step by step after a warm-up.  Prints RESULT step_ms=MEDIAN,
and under the interposer the allocations and frees each timed step made
through it (allocs_per_step, frees_per_step).  The suite runs it without
and with the interposer, alternating, and compares the medians
(scripts/gpu-suite, cases overhead-torch, and with
PYTORCH_CUDA_ALLOC_CONF backend:cudaMallocAsync or expandable_segments:True
overhead-torch-async and overhead-torch-expandable, where every tensor's
memory, or every 2 MiB page, goes through the hooks)."""
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cmgcase as C  # noqa: E402

C.need("torch")
import torch  # noqa: E402

case = C.Case(os.environ.get("CMG_CASE", "overhead-torch"))
if not case.check("CUDA available", torch.cuda.is_available(), ""):
    case.done()
torch.manual_seed(0)
model = torch.nn.Sequential(
    torch.nn.Linear(2048, 4096), torch.nn.ReLU(),
    torch.nn.Linear(4096, 4096), torch.nn.ReLU(),
    torch.nn.Linear(4096, 4096), torch.nn.ReLU(),
    torch.nn.Linear(4096, 10)).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.randn(1024, 2048, device="cuda")
y = torch.randint(0, 10, (1024,), device="cuda")


def step():
    opt.zero_grad(set_to_none=True)
    torch.nn.functional.cross_entropy(model(x), y).backward()
    opt.step()


warmup, steps = int(os.environ.get("CMG_WARMUP", "50")), \
    int(os.environ.get("CMG_STEPS", "400"))
for _ in range(warmup):
    step()
torch.cuda.synchronize()
before = C.cmg_stats(0)
times = []
for _ in range(steps):
    t0 = time.perf_counter()
    step()
    torch.cuda.synchronize()
    times.append((time.perf_counter() - t0) * 1e3)
after = C.cmg_stats(0)
counts = {}
if before is not None and after is not None:
    counts = {"allocs_per_step": "%.2f" % (
                  (after["allocations"] - before["allocations"]) / steps),
              "frees_per_step": "%.2f" % (
                  (after["frees"] - before["frees"]) / steps)}
case.result(step_ms="%.6f" % statistics.median(times),
            mean_ms="%.6f" % statistics.fmean(times), steps=steps,
            guarded=int(after is not None), **counts)
case.done()
