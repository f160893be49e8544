"""The start-up memory arithmetic of vLLM and SGLang under a group's cap
(CMG_GPU_CAP bytes, --group-limit): the servers' arithmetic, done here on
allocations like theirs, not the servers themselves.

    serve_sizing.py BACKEND [RANK NRANKS]

BACKEND torch: PyTorch, a model made here (a stack of fp16 Linear layers),
its forward pass as the profiling run, a captured CUDA graph, the KV cache
as one tensor.  BACKEND cudart: a stand-in through the CUDA runtime with
ctypes, so that it also runs on the simulated CUDA (the dry run): a caching
allocator's segments with cudaMalloc, a library's workspace through its own
cuGetProcAddress (as cuBLAS makes one), a graph's memory by capturing a
cudaMallocAsync, and the KV cache with cuMemCreate + cuMemMap, as vLLM's
sleep mode allocates it, then a sleep/wake cycle of it.

vLLM (v1 worker): the total and free memory of cudaMemGetInfo at start;
requested = total x gpu_memory_utilization (CMG_GPU_UTIL, default 0.9);
it refuses to start when free < requested; the weights are what the
framework allocated loading them; a profiling run must see free memory
fall; non-torch memory is used memory (total - free) that the framework's
reserved memory does not explain, and its increase since start counts; the
KV cache gets requested - (weights + the profiling run's peak increase +
the non-torch increase) - the CUDA graphs' memory.  SGLang: its KV budget
is the free memory after loading less (1 - mem_fraction_static) of the
free memory before, and its defaults come from `nvidia-smi --query-gpu=
memory.total`, run as a child (CMG_GPU_SMI names the command to run; the
dry run's is tests/gpu/nvsmi.py).

With NRANKS > 1 the processes are ranks of one group on one card, as
tensor-parallel tests run on one GPU: each asks for half the utilization,
they meet at barriers (files in CMG_GPU_BARRIER), profile one after the
other, and take the smallest KV cache of all ranks, as vLLM does.  A
rank's non-torch increase then holds what the ranks before it grew by
while it profiled: vLLM reads free memory card-wide, here group-wide.
"""
import ctypes
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cmgcase as C  # noqa: E402

GRANULE = 2 * C.MiB  # cuMemCreate's granularity, and the KV cache's unit

backend = sys.argv[1] if len(sys.argv) > 1 else "torch"
rank = int(sys.argv[2]) if len(sys.argv) > 2 else 0
nranks = int(sys.argv[3]) if len(sys.argv) > 3 else 1
if backend == "torch":
    C.need("torch")
name = "serve-sizing" if nranks == 1 else "serve-two-ranks"
case = C.Case("%s-%s%s" % (name, backend,
                           "" if nranks == 1 else "-rank%d" % rank))
cap = C.expected_cap()
util = float(os.environ.get("CMG_GPU_UTIL", "0.9")) / nranks
barrier_dir = os.environ.get("CMG_GPU_BARRIER", "")


mine = {}


def put(what, value=""):
    """Publishes this rank's `what` for the others."""
    mine[what] = str(value)
    if barrier_dir:
        path = os.path.join(barrier_dir, "%s.%d" % (what, rank))
        with open(path + ".tmp", "w") as f:
            f.write(str(value))
        os.rename(path + ".tmp", path)


def get_all(what, timeout=120):
    """Every rank's `what`, once all have published it (a rank that never
    does is a hang, and fails the case)."""
    if not barrier_dir:
        return [mine[what]]
    deadline = time.time() + timeout
    paths = [os.path.join(barrier_dir, "%s.%d" % (what, r))
             for r in range(nranks)]
    while not all(os.path.exists(p) for p in paths):
        if time.time() > deadline:
            case.check("rank %d is not left waiting at %s" % (rank, what),
                       False, "%d of %d ranks there after %d s"
                       % (sum(os.path.exists(p) for p in paths), nranks,
                          timeout))
            case.done()
        time.sleep(0.01)
    return [open(p).read() for p in paths]


def meet(what):
    put(what)
    get_all(what)


# ---- the backends --------------------------------------------------------


class Torch:
    """PyTorch as vLLM drives it."""

    def __init__(self):
        import torch
        self.t = torch
        if not case.check("CUDA available", torch.cuda.is_available(), ""):
            case.done()
        torch.cuda.set_device(0)
        torch.cuda.init()
        torch.empty(1, device="cuda")  # the context, as vLLM's init makes it
        self.model = None
        case.info(torch=torch.__version__, gpu=torch.cuda.get_device_name(0))

    def uuid(self):
        return "GPU-" + str(self.t.cuda.get_device_properties(0).uuid)

    def mem_get_info(self):
        return self.t.cuda.mem_get_info(0)

    def reserved(self):
        return self.t.cuda.memory_reserved(0)

    def peak(self):
        return self.t.cuda.memory_stats(0).get("allocated_bytes.all.peak", 0)

    def reset_peak(self):
        self.t.cuda.reset_peak_memory_stats(0)

    def load_weights(self, budget):
        nn, t = self.t.nn, self.t
        layer = 4096 * 4096 * 2
        n = max(1, budget // layer)
        before = t.cuda.memory_allocated(0)
        self.model = nn.Sequential(*[
            nn.Linear(4096, 4096, dtype=t.float16, device="cuda")
            for _ in range(n)]).eval()
        t.cuda.synchronize()
        return t.cuda.memory_allocated(0) - before

    def profile_run(self, budget):
        t = self.t
        tokens = max(256, budget // (4096 * 2 * 2))
        with t.no_grad():
            x = t.randn(tokens, 4096, dtype=t.float16, device="cuda")
            self.model(x)[0, 0].item()
        del x
        t.cuda.synchronize()

    def after_profile(self):
        """vLLM empties the allocator's cache once it has measured."""
        self.t.cuda.empty_cache()

    def capture_graph(self):
        t = self.t
        static = t.randn(256, 4096, dtype=t.float16, device="cuda")
        s = t.cuda.Stream()
        s.wait_stream(t.cuda.current_stream())
        with t.no_grad(), t.cuda.stream(s):
            for _ in range(2):
                self.model(static)
        t.cuda.current_stream().wait_stream(s)
        self.graph = t.cuda.CUDAGraph()
        with t.no_grad(), t.cuda.graph(self.graph):
            self.graph_out = self.model(static)
        self.graph.replay()
        t.cuda.synchronize()

    def alloc_kv(self, size):
        try:
            self.kv = self.t.empty(size, dtype=self.t.uint8, device="cuda")
            return True, ""
        except Exception as e:  # noqa: BLE001 - the type is reported
            return False, "%s: %s" % (type(e).__name__,
                                      str(e).splitlines()[0][:200])

    def oom_probe(self, free):
        """An allocation past the cap: larger than free memory and all the
        cache the allocator could give back.  (True, what) for an ordinary
        torch.OutOfMemoryError."""
        t = self.t
        size = free + self.reserved() - t.cuda.memory_allocated(0) + 256 * C.MiB
        try:
            x = t.empty(size, dtype=t.uint8, device="cuda")
            del x
            return False, "no error for %s" % C.human(size)
        except Exception as e:  # noqa: BLE001
            return (type(e) is t.OutOfMemoryError,
                    "%s for %s" % (type(e).__name__, C.human(size)))

    def compute(self):
        with self.t.no_grad():
            self.graph.replay()
            self.t.cuda.synchronize()
            return bool(self.t.isfinite(self.graph_out).all().item())


class Cudart:
    """A stand-in through the CUDA runtime, with the allocations a server
    makes, so that the arithmetic runs on the simulated CUDA too."""

    def __init__(self):
        name = os.environ.get("CMG_CUDART") or "libcudart.so.13"
        try:
            self.rt = ctypes.CDLL(name)
        except OSError as e:
            print("SKIP %s not loadable: %s" % (name, e), flush=True)
            sys.exit(C.EXIT_SKIP)
        rt, sz, vp = self.rt, ctypes.c_size_t, ctypes.c_void_p
        rt.cudaMalloc.argtypes = [ctypes.POINTER(vp), sz]
        rt.cudaFree.argtypes = [vp]
        rt.cudaMemGetInfo.argtypes = [ctypes.POINTER(sz), ctypes.POINTER(sz)]
        rt.cudaMallocAsync.argtypes = [ctypes.POINTER(vp), sz, vp]
        rt.cudaFreeAsync.argtypes = [vp, vp]
        rt.cudaStreamCreate.argtypes = [ctypes.POINTER(vp)]
        rt.cudaStreamBeginCapture.argtypes = [vp, ctypes.c_int]
        rt.cudaStreamEndCapture.argtypes = [vp, ctypes.POINTER(vp)]
        rt.cudaGraphInstantiate.argtypes = [ctypes.POINTER(vp), vp,
                                            ctypes.c_ulonglong]
        rt.cudaGraphUpload.argtypes = [vp, vp]
        rt.cudaGraphLaunch.argtypes = [vp, vp]
        rt.cudaStreamSynchronize.argtypes = [vp]
        rt.cudaGetDriverEntryPointByVersion.argtypes = [
            ctypes.c_char_p, ctypes.POINTER(vp), ctypes.c_uint,
            ctypes.c_ulonglong, ctypes.POINTER(ctypes.c_int)]
        case.check("cudaSetDevice(0) and the context",
                   rt.cudaSetDevice(0) == 0 and rt.cudaFree(None) == 0, "")
        self.segments = []   # the "framework's" segments: reserved memory
        self.allocated = 0   # what of them is in use
        self.top = 0         # allocated's peak since reset_peak
        self.kv = []         # (handle, address, size) of the KV cache
        self.workspace = None
        self._driver()

    def _entry(self, symbol, version, restype, *argtypes):
        fn, st = ctypes.c_void_p(), ctypes.c_int(-1)
        rc = self.rt.cudaGetDriverEntryPointByVersion(
            symbol.encode(), ctypes.byref(fn), version, 0, ctypes.byref(st))
        if rc != 0 or not fn.value:
            case.check("the driver's %s" % symbol, False, "rc=%d" % rc)
            case.done()
        return ctypes.CFUNCTYPE(restype, *argtypes)(fn.value)

    def _driver(self):
        u64, sz, i = ctypes.c_ulonglong, ctypes.c_size_t, ctypes.c_int
        p = ctypes.POINTER
        self.cuMemCreate = self._entry("cuMemCreate", 10020, i, p(u64), sz,
                                       ctypes.c_void_p, u64)
        self.cuMemAddressReserve = self._entry("cuMemAddressReserve", 10020,
                                               i, p(u64), sz, sz, u64, u64)
        self.cuMemMap = self._entry("cuMemMap", 10020, i, u64, sz, sz, u64,
                                    u64)
        self.cuMemSetAccess = self._entry("cuMemSetAccess", 10020, i, u64,
                                          sz, ctypes.c_void_p, sz)
        self.cuMemUnmap = self._entry("cuMemUnmap", 10020, i, u64, sz)
        self.cuMemRelease = self._entry("cuMemRelease", 10020, i, u64)
        self.cuMemAddressFree = self._entry("cuMemAddressFree", 10020, i,
                                            u64, sz)
        self.cuDeviceGetUuid = self._entry("cuDeviceGetUuid", 11040, i,
                                           ctypes.c_char_p, i)

    def uuid(self):
        b = ctypes.create_string_buffer(16)
        if self.cuDeviceGetUuid(b, 0) != 0:
            return None
        h = b.raw.hex()
        return "GPU-%s-%s-%s-%s-%s" % (h[:8], h[8:12], h[12:16], h[16:20],
                                       h[20:])

    def mem_get_info(self):
        free, total = ctypes.c_size_t(), ctypes.c_size_t()
        rc = self.rt.cudaMemGetInfo(ctypes.byref(free), ctypes.byref(total))
        if rc != 0:
            case.check("cudaMemGetInfo", False, "rc=%d" % rc)
            case.done()
        return free.value, total.value

    def reserved(self):
        return sum(s for _, s in self.segments)

    def peak(self):
        return self.top

    def reset_peak(self):
        self.top = self.allocated

    def _segment(self, size):
        ptr = ctypes.c_void_p()
        rc = self.rt.cudaMalloc(ctypes.byref(ptr), size)
        if rc != 0:
            return rc
        self.segments.append((ptr.value, size))
        self.allocated += size
        self.top = max(self.top, self.allocated)
        return 0

    def load_weights(self, budget):
        size = budget // C.MiB * C.MiB
        rc = self._segment(size)
        case.check("the weights are allocated", rc == 0, "rc=%d" % rc)
        return size

    def library_workspace(self, size):
        """What cuBLAS does at its first GEMM: its own runtime finds the
        driver through cuGetProcAddress and allocates a workspace."""
        lib = ctypes.CDLL("libcuda.so.1")
        proto = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_char_p,
                                 ctypes.POINTER(ctypes.c_void_p), ctypes.c_int,
                                 ctypes.c_ulonglong,
                                 ctypes.POINTER(ctypes.c_int))
        getproc = proto(ctypes.cast(lib.cuGetProcAddress_v2,
                                    ctypes.c_void_p).value)
        me, fn, st = ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_int()
        rc = getproc(b"cuGetProcAddress", ctypes.byref(me), 12000, 0,
                     ctypes.byref(st))
        rc = rc or proto(me.value)(b"cuMemAlloc", ctypes.byref(fn), 3020, 0,
                                   ctypes.byref(st))
        alloc = ctypes.CFUNCTYPE(ctypes.c_int,
                                 ctypes.POINTER(ctypes.c_ulonglong),
                                 ctypes.c_size_t)(fn.value) if fn.value else None
        ptr = ctypes.c_ulonglong()
        rc = rc or (alloc(ctypes.byref(ptr), size) if alloc else 500)
        case.check("a library's workspace through its own cuGetProcAddress",
                   rc == 0, "rc=%d" % rc)
        self.workspace = ptr.value

    def profile_run(self, budget):
        """The activations of the dummy forward pass: segments the caching
        allocator keeps after the pass (allocated falls, reserved stays),
        and the GEMM library's workspace, which is not the framework's."""
        act = budget // C.MiB * C.MiB
        rc = self._segment(act)
        case.check("the profiling run's activations", rc == 0, "rc=%d" % rc)
        self.library_workspace(32 * C.MiB)
        self.allocated -= act

    def after_profile(self):
        """The stand-in keeps its cache: its figures stay exact."""

    def capture_graph(self):
        """A graph whose memory node comes from a cudaMallocAsync captured
        on a stream, freed in the graph; uploaded, it takes its memory from
        the graph memory pool, as a captured decode step's temporaries."""
        rt, s, g, e = self.rt, ctypes.c_void_p(), ctypes.c_void_p(), \
            ctypes.c_void_p()
        p = ctypes.c_void_p()
        rc = rt.cudaStreamCreate(ctypes.byref(s))
        rc = rc or rt.cudaStreamBeginCapture(s, 2)  # relaxed
        rc = rc or rt.cudaMallocAsync(ctypes.byref(p), 64 * C.MiB, s)
        rc = rc or rt.cudaFreeAsync(p, s)
        rc = rc or rt.cudaStreamEndCapture(s, ctypes.byref(g))
        rc = rc or rt.cudaGraphInstantiate(ctypes.byref(e), g, 0)
        rc = rc or rt.cudaGraphUpload(e, s)
        rc = rc or rt.cudaGraphLaunch(e, s)
        rc = rc or rt.cudaStreamSynchronize(s)
        case.check("a CUDA graph captured, uploaded and launched", rc == 0,
                   "rc=%d" % rc)
        self.stream, self.exec = s, e

    def _map(self, size):
        class Prop(ctypes.Structure):
            _fields_ = [("type", ctypes.c_int), ("handleTypes", ctypes.c_int),
                        ("locType", ctypes.c_int), ("locId", ctypes.c_int),
                        ("win32", ctypes.c_void_p),
                        ("flags", ctypes.c_ubyte * 8)]

        class Access(ctypes.Structure):
            _fields_ = [("locType", ctypes.c_int), ("locId", ctypes.c_int),
                        ("flags", ctypes.c_int)]

        prop = Prop(type=1, handleTypes=0, locType=1, locId=0)  # pinned, dev 0
        access = Access(locType=1, locId=0, flags=3)  # read-write
        h, va = ctypes.c_ulonglong(), ctypes.c_ulonglong()
        rc = self.cuMemCreate(ctypes.byref(h), size, ctypes.byref(prop), 0)
        if rc != 0:
            return rc
        rc = self.cuMemAddressReserve(ctypes.byref(va), size, 0, 0, 0)
        rc = rc or self.cuMemMap(va.value, size, 0, h.value, 0)
        rc = rc or self.cuMemSetAccess(va.value, size, ctypes.byref(access), 1)
        if rc != 0:
            self.cuMemRelease(h.value)
            return rc
        self.kv.append((h.value, va.value, size))
        return 0

    def alloc_kv(self, size):
        rc = self._map(size)
        return rc == 0, "cuMemCreate + cuMemMap: rc=%d" % rc

    def sleep(self):
        """vLLM's sleep: each KV chunk unmapped and released."""
        rc = 0
        for h, va, size in self.kv:
            rc = rc or self.cuMemUnmap(va, size) or self.cuMemRelease(h) or \
                self.cuMemAddressFree(va, size)
        sizes = [size for _, _, size in self.kv]
        self.kv = []
        return rc, sizes

    def wake(self, sizes):
        rc = 0
        for size in sizes:
            rc = rc or self._map(size)
        return rc

    def oom_probe(self, free):
        ptr = ctypes.c_void_p()
        rc = self.rt.cudaMalloc(ctypes.byref(ptr), free + GRANULE)
        if rc == 0:
            self.rt.cudaFree(ptr)
        return rc == 2, "cudaMalloc of %s past free: rc=%d" % (
            C.human(free + GRANULE), rc)

    def compute(self):
        rc = self.rt.cudaGraphLaunch(self.exec, self.stream) or \
            self.rt.cudaStreamSynchronize(self.stream)
        return rc == 0


# ---- the arithmetic ------------------------------------------------------


class Snap:
    """vLLM's MemorySnapshot: free and total from cudaMemGetInfo, the
    framework's reserved memory and allocation peak, and what the caps
    count of this process (the interposer's live bytes)."""

    def __init__(self, be):
        self.free, self.total = be.mem_get_info()
        self.reserved = be.reserved()
        self.torch_peak = be.peak()
        s = C.cmg_stats(0)
        self.live = s["live_bytes"] if s else None
        self.used = self.total - self.free
        self.non_torch = self.used - self.reserved


def one_story(snap, what):
    """Total is the cap, free within it, and what total - free says is
    what the caps count: this process's count alone, or, for ranks, at
    least it (the others' is theirs)."""
    ok = snap.total == cap and 0 <= snap.free <= snap.total
    ok = ok and (snap.used == snap.live if nranks == 1
                 else snap.used >= snap.live)
    case.check("%s: total is the cap, and total - free is what the caps "
               "count" % what, ok,
               "total=%d free=%d used=%d counted=%s" % (
                   snap.total, snap.free, snap.used, snap.live))


def smi_view(be):
    """The device as nvidia-smi shows it, run as a child of this process
    (under the same LD_PRELOAD and options): (total, used, free,
    reserved) in MiB, or None."""
    cmd = os.environ.get("CMG_GPU_SMI", "nvidia-smi")
    args = cmd.split() + ["--query-gpu=uuid,memory.total,memory.used,"
                          "memory.free,memory.reserved",
                          "--format=csv,noheader,nounits"]
    try:
        out = subprocess.run(args, capture_output=True, text=True,
                             timeout=60).stdout
    except (OSError, subprocess.SubprocessError) as e:
        case.info(nvidia_smi="failed: %s" % e)
        return None
    want = be.uuid()
    for line in out.splitlines():
        f = [x.strip() for x in line.split(",")]
        if len(f) == 5 and f[0] == want:
            try:
                return tuple(int(x) for x in f[1:])
            except ValueError:
                return None
    case.info(nvidia_smi_output=out.replace("\n", "|")[:300])
    return None


def main():
    be = Torch() if backend == "torch" else Cudart()
    case.info(backend=backend, cap=cap, util=util, rank=rank, nranks=nranks)
    C.check_interposer(case, cap, group=True)
    meet("init")

    # vLLM's start: requested = total x utilization; free must cover it.
    base = Snap(be)
    one_story(base, "at start")
    put("base", "%d %d" % (base.total, base.free))
    peers = get_all("base")
    if nranks > 1:
        case.check("every rank sees the same total and free at start",
                   len(set(peers)) == 1, "ranks saw %s" % peers)
    requested = int(base.total * util)
    case.check("vLLM's start check: free memory covers total x %.2f" % util,
               base.free >= requested,
               "free=%s requested=%s" % (C.human(base.free),
                                         C.human(requested)))
    # Each rank profiles alone, after the ranks before it.
    if rank > 0:
        before_me = [os.path.join(barrier_dir, "profiled.%d" % r)
                     for r in range(rank)]
        deadline = time.time() + 120
        while not all(os.path.exists(p) for p in before_me):
            if time.time() > deadline:
                case.check("rank %d's turn came" % rank, False, "")
                case.done()
            time.sleep(0.01)
    turn = Snap(be)

    # Loading: SGLang's two readings differ by what loading took.
    weights = be.load_weights(cap // 8 // nranks)
    loaded = Snap(be)
    case.check("SGLang's two readings differ by what loading reserved",
               turn.free - loaded.free == loaded.reserved - turn.reserved,
               "free fell by %d, the framework reserved %d (weights %d)" % (
                   turn.free - loaded.free, loaded.reserved - turn.reserved,
                   weights))
    rest = loaded.free - base.free * (1 - util)
    case.check("SGLang's KV budget (free after loading - (1 - %.2f) x free "
               "before) is positive" % util, rest > 0,
               "rest=%s" % C.human(rest))

    # The profiling run, in vLLM's memory_profiling.
    be.reset_peak()
    before = Snap(be)
    be.profile_run(cap // 16 // nranks)
    after = Snap(be)
    one_story(after, "after profiling")
    case.check("the profiling run saw free memory fall (vLLM asserts it)",
               after.free < base.free,
               "free at start %d, after profiling %d" % (base.free,
                                                         after.free))
    peak_increase = after.torch_peak - before.torch_peak
    non_torch_increase = after.non_torch - base.non_torch
    non_kv = weights + peak_increase + non_torch_increase
    others = [int(open(os.path.join(barrier_dir, "profiled.%d" % r)).read())
              for r in range(rank)]
    if backend == "cudart":
        case.check("the non-torch increase is the library's workspace, and "
                   "what the ranks before grew by",
                   non_torch_increase == 32 * C.MiB + sum(others),
                   "non-torch increase %d, workspace %d, other ranks %s" % (
                       non_torch_increase, 32 * C.MiB, others))
    else:
        case.check("the non-torch increase is not negative",
                   non_torch_increase >= sum(others),
                   "non-torch increase %d, other ranks %s" % (
                       non_torch_increase, others))

    be.after_profile()

    # The CUDA graphs: what capturing took is vLLM's estimate.
    g0 = Snap(be)
    be.capture_graph()
    g1 = Snap(be)
    one_story(g1, "after capturing a graph")
    graph = g0.free - g1.free
    case.check("capturing a graph took memory, and the caps counted it",
               graph > 0 and g1.live - g0.live == graph,
               "free fell by %d, counted %d" % (graph, g1.live - g0.live))
    put("profiled", g1.used - turn.used)

    kv = (requested - non_kv - graph) // GRANULE * GRANULE
    case.info(requested=requested, weights=weights,
              peak_increase=peak_increase,
              non_torch_increase=non_torch_increase, graph=graph, kv=kv,
              sglang_rest=int(rest))
    if nranks > 1:
        put("kv", kv)
        kv = min(int(v) for v in get_all("kv"))
        case.info(kv_all_ranks=kv)
    if not case.check("the arithmetic leaves a KV cache", kv > 0,
                      "kv=%s" % C.human(kv)):
        case.done()
    ok, why = be.alloc_kv(kv)
    case.check("the KV cache of the size the arithmetic gives is allocated",
               ok, "%s: %s" % (C.human(kv), why))
    full = Snap(be)
    one_story(full, "with the KV cache")
    if nranks == 1 and backend == "cudart":
        case.check("used memory is what vLLM planned: start + requested, "
                   "less the KV cache's rounding",
                   full.used == base.used + requested -
                   ((requested - non_kv - graph) - kv),
                   "used=%d start=%d requested=%d" % (full.used, base.used,
                                                     requested))
    put("live", full.live)
    lives = [int(v) for v in get_all("live")]
    now = Snap(be)
    case.check("total - free is every rank's count", now.used == sum(lives)
               and now.total == cap,
               "used=%d ranks=%s" % (now.used, lives))

    # A child nvidia-smi (rank 0), while every rank holds its memory.
    if rank == 0:
        smi = smi_view(be)
        if case.check("nvidia-smi run as a child lists this GPU",
                      smi is not None, os.environ.get("CMG_GPU_SMI",
                                                      "nvidia-smi")):
            total, used, free, reserved = smi
            mib = lambda b: b // C.MiB  # noqa: E731
            case.check("nvidia-smi's memory.total is the cap (SGLang's "
                       "defaults)", total == mib(cap),
                       "%d MiB, cap %d MiB" % (total, mib(cap)))
            case.check("nvidia-smi's free and used (with reserved) agree "
                       "with cudaMemGetInfo",
                       abs(free - mib(now.free)) <= 1
                       and abs(used + reserved - mib(now.used)) <= 1,
                       "nvidia-smi used %d + reserved %d, free %d; "
                       "cudaMemGetInfo used %d, free %d (MiB)" % (
                           used, reserved, free, mib(now.used),
                           mib(now.free)))
    meet("looked")

    case.check("the graph runs with the KV cache in place", be.compute(), "")
    ok, why = be.oom_probe(Snap(be).free)
    case.check("the next allocation past the cap is an ordinary "
               "out-of-memory error", ok, why)
    C.check_denied(case)

    # vLLM's sleep mode (the stand-in's KV cache is mapped with cuMemCreate),
    # in one process: another rank's steps would move free memory too.
    if backend == "cudart" and nranks == 1:
        s0 = C.cmg_stats(0)
        rc, sizes = be.sleep()
        asleep = Snap(be)
        rc = rc or be.wake(sizes)
        awake = Snap(be)
        s1 = C.cmg_stats(0)
        case.check("sleep gives the KV cache back to the cap, wake takes it "
                   "again", rc == 0 and asleep.free == full.free + kv
                   and awake.free == full.free,
                   "rc=%d free %d, asleep %d, awake %d" % (
                       rc, full.free, asleep.free, awake.free))
        case.check("counted once: one release, one allocation, the same "
                   "count", s1["allocations"] - s0["allocations"] == 1
                   and s1["frees"] - s0["frees"] == 1
                   and s1["live_bytes"] == s0["live_bytes"],
                   "allocations +%d, frees +%d, live %d then %d" % (
                       s1["allocations"] - s0["allocations"],
                       s1["frees"] - s0["frees"], s0["live_bytes"],
                       s1["live_bytes"]))
    meet("done")
    case.result(kv=kv, requested=requested, graph=graph)
    case.done()



main()
