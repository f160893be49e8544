"""A small PyTorch training loop under the cap.  At exit the caching
allocator still holds its segments, so the interposer's report lists them as
live, with the native call stacks that made them (caching allocator in
libc10_cuda.so, up through libtorch_python.so into the Python interpreter).
This script trains and prints what PyTorch reserved; the suite checks the
report against it (scripts/gpu-suite, case torch-report)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cmgcase as C  # noqa: E402

C.need("torch")
import torch  # noqa: E402

case = C.Case("torch-report")
cap = C.expected_cap()
case.info(torch=torch.__version__, cuda=torch.version.cuda, cap=cap)
if not case.check("CUDA available", torch.cuda.is_available(), ""):
    case.done()

torch.manual_seed(0)
model = torch.nn.Sequential(
    torch.nn.Linear(1024, 2048), torch.nn.ReLU(),
    torch.nn.Linear(2048, 2048), torch.nn.ReLU(),
    torch.nn.Linear(2048, 10)).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.randn(256, 1024, device="cuda")
y = torch.randint(0, 10, (256,), device="cuda")
first = None
for step in range(50):
    opt.zero_grad(set_to_none=True)
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    if first is None:
        first = loss.item()
last = loss.item()
torch.cuda.synchronize()
case.check("the loss went down", last < first, "%.4f -> %.4f" % (first, last))
C.check_interposer(case, cap)  # after CUDA memory was used: the limit is set
reserved = torch.cuda.memory_reserved(0)
case.check("the caching allocator holds segments", reserved > 0,
           "memory_reserved=%d" % reserved)
case.result(reserved=reserved,
            allocated=torch.cuda.memory_allocated(0),
            segments=sum(1 for s in torch.cuda.memory_snapshot()
                         if s.get("device") == 0))
C.check_nvml(case, cap)
case.done()
