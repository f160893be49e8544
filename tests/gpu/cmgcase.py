"""Shared helpers of the real-GPU suite's Python cases (scripts/gpu-suite).

A case script prints, one per line:

    CHECK ok NAME: DETAIL       a check that held
    CHECK FAIL NAME: DETAIL     a check that did not
    INFO key=value ...          facts for the record (versions, sizes)
    RESULT key=value ...        numbers the suite reads (overhead cases)
    SKIP REASON                 then exits 77: the framework is missing
    DONE checks=N failed=F      last line; exit status 1 when F > 0

The suite counts a case as passed only when the script exited 0, printed
DONE and no CHECK FAIL, and the suite's own checks (the report) held too.

Environment set by the suite:
    CMG_GPU_CAP       the limit the case runs under, in bytes (expected)
    CMG_GPU_PHYSICAL  the card's memory in bytes, measured without the
                      interposer
"""
import ctypes
import importlib.util
import os
import sys

KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30
EXIT_SKIP = 77

# Memory a process uses outside any allocation the cap can see: the CUDA
# context, loaded modules and kernels.  Only used to bound what NVML says
# the process holds; an allocation path that bypasses the interposer shows
# up as tens of GiB, far past this.
CONTEXT_SLACK = 2 * GiB


def need(*modules):
    """Exit 77 (SKIP) unless every module can be imported."""
    for m in modules:
        if importlib.util.find_spec(m) is None:
            print("SKIP %s not installed" % m, flush=True)
            sys.exit(EXIT_SKIP)


def human(n):
    if n is None:
        return "None"
    for unit, size in (("GiB", GiB), ("MiB", MiB), ("KiB", KiB)):
        if abs(n) >= size:
            return "%.2f %s" % (n / size, unit)
    return "%d B" % n


class Case:
    def __init__(self, name):
        self.name = name
        self.n = 0
        self.failed = 0

    def check(self, name, ok, detail=""):
        self.n += 1
        if not ok:
            self.failed += 1
        print("CHECK %s %s: %s" % ("ok" if ok else "FAIL", name, detail),
              flush=True)
        return ok

    def info(self, **kw):
        print("INFO " + " ".join("%s=%s" % (k, str(v).replace(" ", "_"))
                                 for k, v in kw.items()), flush=True)

    def result(self, **kw):
        print("RESULT " + " ".join("%s=%s" % kv for kv in kw.items()),
              flush=True)

    def done(self):
        print("DONE checks=%d failed=%d" % (self.n, self.failed), flush=True)
        sys.stdout.flush()
        # os._exit would skip the interposer's report at exit: exit normally.
        sys.exit(1 if self.failed else 0)


def env_bytes(name):
    v = os.environ.get(name)
    return int(v) if v else None


def expected_cap():
    return env_bytes("CMG_GPU_CAP")


_STATS_FIELDS = ("limit_bytes", "physical_bytes", "live_bytes", "peak_bytes",
                 "live_allocations", "allocations", "frees", "denials")


class _Stats(ctypes.Structure):
    # The leading fields of struct cmg_device_stats; the size passed with it
    # tells the library how much it may write.
    _fields_ = [(f, ctypes.c_uint64) for f in _STATS_FIELDS]


def cmg_stats(device=0):
    """The interposer's counters for a device (include/cumemguard.h), or
    None when no interposer is loaded.  limit_bytes is None for no limit."""
    try:
        fn = ctypes.CDLL(None).cmg_device_stats
    except AttributeError:
        return None
    fn.argtypes = [ctypes.c_int, ctypes.POINTER(_Stats), ctypes.c_size_t]
    fn.restype = ctypes.c_int
    s = _Stats()
    if fn(device, ctypes.byref(s), ctypes.sizeof(s)) != 0:
        return None
    d = {f: getattr(s, f) for f in _STATS_FIELDS}
    if d["limit_bytes"] == (1 << 64) - 1:
        d["limit_bytes"] = None
    return d


def nvml_process_used():
    """Device memory NVML says this process holds on any GPU, in bytes, or
    None when NVML cannot tell (no pynvml, no per-process accounting)."""
    try:
        import pynvml
        pynvml.nvmlInit()
    except Exception:
        return None
    try:
        me = os.getpid()
        total = None
        for i in range(pynvml.nvmlDeviceGetCount()):
            h = pynvml.nvmlDeviceGetHandleByIndex(i)
            for p in pynvml.nvmlDeviceGetComputeRunningProcesses(h):
                if p.pid == me and p.usedGpuMemory is not None:
                    total = (total or 0) + p.usedGpuMemory
        return total
    except Exception:
        return None
    finally:
        try:
            pynvml.nvmlShutdown()
        except Exception:
            pass


def check_cap_info(case, cap, total, free, what):
    """The memory info a framework reports shows the cap."""
    case.check("%s total is the cap" % what, total == cap,
               "total=%d (%s), cap=%d (%s)" % (total, human(total), cap,
                                               human(cap)))
    case.check("%s free is within the cap" % what, 0 <= free <= cap,
               "free=%d (%s)" % (free, human(free)))


def check_interposer(case, cap, group=False):
    """The interposer is loaded and enforces the cap the suite asked for:
    as the process's limit, or with group=True as its group's cap alone
    (the process then has no limit of its own)."""
    s = cmg_stats(0)
    if not case.check("interposer loaded", s is not None,
                      "cmg_device_stats %s" % ("found" if s else "absent")):
        return None
    if group:
        case.check("the process has no limit of its own, only the group's",
                   s["limit_bytes"] is None,
                   "limit_bytes=%s" % s["limit_bytes"])
    else:
        case.check("interposer limit is the cap", s["limit_bytes"] == cap,
                   "limit_bytes=%s cap=%s" % (s["limit_bytes"], cap))
    return s


def check_nvml(case, cap):
    used = nvml_process_used()
    if used is None:
        case.info(nvml_process_used="unavailable")
        return
    case.info(nvml_process_used=used)
    case.check("NVML: the process holds at most cap + %s" % human(CONTEXT_SLACK),
               used <= cap + CONTEXT_SLACK,
               "used=%s cap=%s (context and modules are outside the cap)"
               % (human(used), human(cap)))


def check_fill(case, cap, held, chunk, slack=256 * MiB):
    """After filling with `chunk`-sized allocations until out of memory, the
    program held no more than the cap, and nearly all of it.  Nearly all is
    as the interposer counts it: with count_context=1 (the default) the cap
    also holds the process's contexts, which the program did not allocate."""
    case.check("filled no more than the cap", held <= cap,
               "held=%s cap=%s" % (human(held), human(cap)))
    s = cmg_stats(0)
    counted = max(held, s["live_bytes"]) if s else held
    case.check("filled the cap to within one allocation",
               counted + chunk + slack > cap,
               "counted=%s (held %s) + chunk %s + slack %s vs cap %s"
               % (human(counted), human(held), human(chunk), human(slack),
                  human(cap)))


def check_denied(case):
    s = cmg_stats(0)
    d = s["denials"] if s else None
    case.check("the interposer refused the allocation", bool(d),
               "denials=%s" % d)
