#!/usr/bin/python3
"""Writes the fixed reports of tests/reader/data/ and the broken-input corpus
of tests/reader/broken/.  The outputs are committed; run this only to change
them:  python3 tests/reader/make-fixtures.py  (from the top of the tree).

data/job-a.json and data/job-b.json are two processes of one job, written
as libcumemguard.so would write them (version 1, every key the schema
requires), with every case the tool prints differently: two devices, CUDA
runtime frames to hide, C start-up frames to hide, a frame without a module
(JIT code), a truncated stack, a leak without a stack, pinned host memory,
a denial with and one without a composition, a host denial, teardown
releases, limit events.  job-b is the same program run again: other
addresses (ASLR), other stack and frame numbering, and CUDA_VISIBLE_DEVICES
reversed, so its device 0 is job-a's device 1 (same UUID).  data/graph.json
is a program whose CUDA graph memory pools grew (job_graph says how), and
data/context.json one whose CUDA contexts were measured on one device and
not on the other (job_context).

broken/*.json are reports that must each be refused with one line and exit
status 2; broken/expected.txt pairs each with a piece of that line."""
import copy
import json
import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))
GiB, MiB = 1 << 30, 1 << 20

MODULES = [
    ("/opt/trainer/bin/trainer", "5d1e0c7a9b8f6e5d4c3b2a1908f7e6d5c4b3a291"),
    ("/usr/lib/x86_64-linux-gnu/libcudart.so.12", "aa11bb22cc33dd44ee55ff6677889900aabbccdd"),
    ("/lib/x86_64-linux-gnu/libc.so.6", "93ac61ec5a8eb1396f9fbd350e3169a5c0ffee00"),
    ("/opt/trainer/lib/libmodel.so", "0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c"),
]
# name: (module, offset, function, function_offset)
FRAMES = {
    "rt_inner": (1, 0x4a2f1, None, 0),
    "cudaMalloc": (1, 0x5b0c3, "cudaMalloc", 0x93),
    "alloc_weights": (0, 0x1a2b, "alloc_weights", 0x12),
    "load_model": (0, 0x1c40, "load_model", 0x30),
    "main": (0, 0x2100, "main", 0x5c),
    "static_helper": (0, 0x2380, None, 0),
    "libc_call_main": (2, 0x2724a, None, 0),
    "libc_start_main": (2, 0x27305, "__libc_start_main", 0x85),
    "_start": (0, 0x10c1, "_start", 0x21),
    "grow": (3, 0x8d10, "_ZN5model6Buffer4growEm", 0x44),
    "train_step": (0, 0x1f00, "train_step", 0x7e),
    "workspace": (3, 0x9e20, "model_workspace_alloc", 0x1b),
    "pin_buffer": (0, 0x2210, "pin_buffer", 0x0d),
    "recurse": (3, 0xa000, "model_recurse", 0x20),
    "jit": (None, None, None, None),
    "run_layer": (0, 0x2460, "run_layer", 0x3a),
}
START = ["main", "libc_call_main", "libc_start_main", "_start"]
STACKS = {
    "weights": (["rt_inner", "cudaMalloc", "alloc_weights", "load_model"] + START, False),
    "grow": (["rt_inner", "cudaMalloc", "grow", "train_step"] + START, False),
    "workspace": (["workspace", "train_step"] + START, False),
    "pinned": (["pin_buffer", "static_helper"] + START, False),
    "deep": (["rt_inner", "cudaMalloc"] + ["recurse"] * 8, True),
    "jit": (["rt_inner", "cudaMalloc", "jit", "run_layer", "train_step"] + START, False),
    "denied": (["rt_inner", "cudaMalloc", "grow", "train_step"] + START, False),
}


def report(pid, base, order_seed, uuids, leaks, peaks, denials, released,
           events, host, devices, frame_defs=FRAMES, stack_defs=STACKS):
    """A report whose tables are numbered in an order made from order_seed;
    addresses are module bases + offsets, the bases from base."""
    rnd = random.Random(order_seed)
    mod_order = list(range(len(MODULES)))
    rnd.shuffle(mod_order)
    mod_index = {m: i for i, m in enumerate(mod_order)}
    bases = {m: base + m * 0x1000000 for m in range(len(MODULES))}
    names = list(frame_defs)
    rnd.shuffle(names)
    frames, frame_index = [], {}
    for n in names:
        m, off, fn, foff = frame_defs[n]
        if m is None:
            addr = base + 0x7000000 + 0xdead
            frames.append({"address": hex(addr), "module": None, "offset": None,
                           "function": None, "function_offset": None})
        else:
            frames.append({"address": hex(bases[m] + off), "module": mod_index[m],
                           "offset": hex(off), "function": fn, "function_offset": foff})
        frame_index[n] = len(frames) - 1
    snames = list(stack_defs)
    rnd.shuffle(snames)
    ids = {n: 10 + 3 * i for i, n in enumerate(snames)}
    stacks = [{"id": ids[n], "truncated": stack_defs[n][1],
               "frames": [frame_index[f] for f in stack_defs[n][0]]} for n in snames]
    seq = [0]

    def allocs(n, size, dev):
        out = []
        for _ in range(n):
            seq[0] += 1
            out.append({"address": hex(0x7f0000000000 + (dev or 0) * (1 << 40) + seq[0] * (1 << 24)),
                        "bytes": size, "thread": pid, "seq": seq[0], "time": seq[0] / 1000.0})
        return out

    def sid(n):
        return ids[n] if n is not None else None

    r = {
        "format": "cumemguard-report", "version": 1,
        "tool": {"name": "cumemguard", "version": "0.1.0"},
        "process": {"pid": pid, "ppid": 1, "exe": "/opt/trainer/bin/trainer",
                    "argv": ["/opt/trainer/bin/trainer", "--epochs", "3"],
                    "hostname": "node17", "start_time": 1700000000.25,
                    "end_time": 1700000042.75, "reason": "exit"},
        "options": {"string": "limit=16GiB", "limit": {"bytes": 16 * GiB}, "limits": {},
                    "report": "cumemguard.%p.json", "stack_depth": 32, "dump_signal": None,
                    "leak_exitcode": None, "failed_closed": False, "on_exceed": "fail",
                    "wait_timeout": 30, "soft_limit": None, "soft_limits": {},
                    "max_alloc": None, "host_limit": 128 * MiB},
        "devices": [], "summary": {}, "leaks": [], "peaks": [], "denials": [],
        "stacks": stacks, "frames": frames,
        "modules": [{"path": MODULES[m][0], "build_id": MODULES[m][1],
                     "base": hex(bases[m])} for m in mod_order],
        "host": host, "released": [], "events": [],
    }
    for ordinal, (uuid, name) in enumerate(uuids):
        d = devices[uuid]
        r["devices"].append({"ordinal": ordinal, "name": name, "uuid": uuid,
                             "physical_bytes": 80 * GiB, "limit_bytes": 16 * GiB,
                             "live_bytes": d[0], "peak_bytes": d[1], "allocations": d[2],
                             "frees": d[3], "released": d[4], "denied": d[5]})
    for stack, api, kind, dev, n, size in leaks:
        r["leaks"].append({"stack": sid(stack), "api": api, "kind": kind, "device": dev,
                           "count": n, "bytes": n * size, "allocations": allocs(n, size, dev)})
    r["leaks"].sort(key=lambda l: -l["bytes"])
    for dev, total, t, items in peaks:
        r["peaks"].append({"device": dev, "bytes": total, "time": t,
                           "by_stack": [{"stack": sid(s), "bytes": b, "count": c}
                                        for s, b, c in items]})
    for t, api, dev, req, live, limit, stack, items in denials:
        d = {"time": t, "api": api, "device": dev, "requested_bytes": req,
             "live_bytes": live, "limit_bytes": limit, "stack": sid(stack)}
        if items is not None:
            d["by_stack"] = [{"stack": sid(s), "bytes": b, "count": c} for s, b, c in items]
        r["denials"].append(d)
    for stack, api, kind, dev, n, size in released:
        r["released"].append({"stack": sid(stack), "api": api, "kind": kind, "device": dev,
                              "count": n, "bytes": n * size, "time": 40.5})
    device_kinds = ("device", "array", "vmm", "graph", "context")
    live = [l for l in r["leaks"] if l["kind"] in device_kinds]
    r["summary"] = {"live_allocations": sum(l["count"] for l in live),
                    "live_bytes": sum(l["bytes"] for l in live),
                    "untracked_frees": 0, "denials": len(denials),
                    "host_live_bytes": sum(l["bytes"] for l in r["leaks"] if l["kind"] == "host"),
                    "events": events}
    return r


GPU_A = ("GPU-0a0a0a0a-1111-2222-3333-444444444444", "NVIDIA H100 80GB HBM3")
GPU_B = ("GPU-0b0b0b0b-5555-6666-7777-888888888888", "NVIDIA H100 80GB HBM3")
HOST = {"limit_bytes": None, "live_bytes": 64 * MiB, "peak_bytes": 96 * MiB,
        "allocations": 2, "frees": 1, "denied": 1}


def job_a():
    # Device A is ordinal 0, B is ordinal 1.
    leaks = [("weights", "cudaMalloc", "device", 0, 2, 1536 * MiB),
             ("grow", "cudaMalloc", "device", 0, 3, 256 * MiB),
             ("workspace", "cuMemAlloc_v2", "device", 1, 1, 512 * MiB),
             ("pinned", "cuMemHostAlloc", "host", None, 1, 64 * MiB),
             ("deep", "cudaMalloc", "device", 0, 1, MiB),
             ("jit", "cudaMalloc", "device", 1, 2, 8 * MiB),
             (None, "cuMemAlloc_v2", "device", 1, 1, 4096)]
    dev_a = 3 * GiB + 768 * MiB + MiB
    dev_b = 512 * MiB + 16 * MiB + 4096
    devices = {GPU_A[0]: (dev_a, 4 * GiB, 9, 3, 0, 2),
               GPU_B[0]: (dev_b, dev_b, 4, 0, 1, 0)}
    peaks = [(0, 4 * GiB, 12.5, [("weights", 3 * GiB, 2), ("grow", 1 * GiB, 4)]),
             (1, dev_b, 30.25, [("workspace", 512 * MiB, 1), ("jit", 16 * MiB, 2),
                                (None, 4096, 1)])]
    denials = [(20.5, "cudaMalloc", 0, 13 * GiB, 3 * GiB + 512 * MiB, 16 * GiB, "denied",
                [("weights", 3 * GiB, 2), ("grow", 512 * MiB, 2)]),
               (21.0, "cudaMalloc", 0, 13 * GiB, 3 * GiB + 512 * MiB, 16 * GiB, "denied", None),
               (22.0, "cuMemHostAlloc", None, 1 * GiB, 96 * MiB, 128 * MiB, "pinned", None)]
    released = [("grow", "cudaMalloc", "device", 1, 1, 32 * MiB)]
    events = {"warn": 0, "wait": 1, "soft_limit": 0}
    return report(4242, 0x555500000000, 1, [GPU_A, GPU_B], leaks, peaks, denials,
                  released, events, HOST, devices)


def job_b():
    # The other rank: device B is its ordinal 0, A its ordinal 1.
    leaks = [("weights", "cudaMalloc", "device", 1, 2, 1536 * MiB),
             ("grow", "cudaMalloc", "device", 1, 1, 256 * MiB),
             ("workspace", "cuMemAlloc_v2", "device", 0, 1, 512 * MiB)]
    devices = {GPU_B[0]: (512 * MiB, 512 * MiB, 1, 0, 0, 0),
               GPU_A[0]: (3 * GiB + 256 * MiB, 3 * GiB + 256 * MiB, 3, 0, 0, 0)}
    peaks = [(1, 3 * GiB + 256 * MiB, 11.0, [("weights", 3 * GiB, 2), ("grow", 256 * MiB, 1)]),
             (0, 512 * MiB, 2.0, [("workspace", 512 * MiB, 1)])]
    host = {"limit_bytes": None, "live_bytes": 0, "peak_bytes": 0,
            "allocations": 0, "frees": 0, "denied": 0}
    return report(4243, 0x563200000000, 7, [GPU_B, GPU_A], leaks, peaks, [], [],
                  {"warn": 0, "wait": 0, "soft_limit": 0}, host, devices)


# CUDA graph memory: the growths of a device's graph memory pool, each with
# the stack of the launch or upload that made the pool grow.
GRAPH_FRAMES = dict(FRAMES, **{
    "rt_graph": (1, 0x6c3a0, None, 0),
    "cudaGraphLaunch": (1, 0x6d1f4, "cudaGraphLaunch", 0x64),
    "launch_step": (0, 0x2520, "launch_step", 0x2a),
    "capture_graph": (0, 0x2590, "capture_graph", 0x11),
})
GRAPH_STACKS = {
    "weights": STACKS["weights"],
    "workspace": STACKS["workspace"],
    "graph_launch": (["rt_graph", "cudaGraphLaunch", "launch_step", "train_step"] + START, False),
    "graph_upload": (["capture_graph"] + START, False),
}


def graph_memory(reserved, reserved_high, used, used_high, source, launches,
                 uploads, trims, denied):
    return {"reserved_bytes": reserved, "reserved_high_bytes": reserved_high,
            "used_bytes": used, "used_high_bytes": used_high, "source": source,
            "launches": launches, "uploads": uploads, "trims": trims,
            "denied": denied}


def job_graph():
    """data/graph.json: a program that launches CUDA graphs on two devices.
    Device 0's pool grew twice, by a launch and by an upload, and holds
    both growths at exit, as the driver's attributes say; a launch that
    would have grown it past the limit was refused.  Device 1's pool grew
    once and was trimmed back to nothing, as the library estimates (the
    driver could not be asked).  Beside them, ordinary leaks."""
    leaks = [("weights", "cudaMalloc", "device", 0, 2, 1536 * MiB),
             ("graph_launch", "cudaGraphLaunch", "graph", 0, 1, 1 * GiB),
             ("graph_upload", "cuGraphUpload", "graph", 0, 1, 512 * MiB),
             ("workspace", "cuMemAlloc_v2", "device", 1, 1, 512 * MiB)]
    dev_a = 4 * GiB + 512 * MiB
    devices = {GPU_A[0]: (dev_a, dev_a, 4, 0, 0, 1),
               GPU_B[0]: (512 * MiB, 768 * MiB, 2, 1, 0, 0)}
    peaks = [(0, dev_a, 12.5, [("weights", 3 * GiB, 2), ("graph_launch", 1 * GiB, 1),
                               ("graph_upload", 512 * MiB, 1)]),
             (1, 768 * MiB, 8.0, [("workspace", 512 * MiB, 1), ("graph_launch", 256 * MiB, 1)])]
    denials = [(20.5, "cudaGraphLaunch", 0, 12 * GiB, dev_a, 16 * GiB, "graph_launch",
                [("weights", 3 * GiB, 2), ("graph_launch", 1 * GiB, 1),
                 ("graph_upload", 512 * MiB, 1)])]
    host = {"limit_bytes": None, "live_bytes": 0, "peak_bytes": 0,
            "allocations": 0, "frees": 0, "denied": 0}
    r = report(4244, 0x561100000000, 11, [GPU_A, GPU_B], leaks, peaks, denials, [],
               {"warn": 0, "wait": 0, "soft_limit": 0}, host, devices,
               GRAPH_FRAMES, GRAPH_STACKS)
    r["group"] = None  # as a writer of graph_memory writes it: schema-valid
    r["devices"][0]["graph_memory"] = graph_memory(
        1536 * MiB, 1536 * MiB, 1 * GiB, 1536 * MiB, "driver", 4, 1, 0, 1)
    r["devices"][1]["graph_memory"] = graph_memory(
        0, 256 * MiB, 0, 256 * MiB, "estimate", 2, 0, 1, 0)
    return r


def mutator(base, out):
    """mutate(name, fn, expect): appends (name, a copy of base changed by
    fn, expect) to out."""
    def mutate(name, fn, expect):
        r = copy.deepcopy(base)
        fn(r)
        out.append((name, r, expect))
    return mutate


def broken_graph(base):
    """Malformed devices[].graph_memory, from data/graph.json."""
    out = []
    mutate = mutator(base, out)

    mutate("graph-memory-number.json", lambda r: r["devices"][0].update(graph_memory=1610612736),
           "devices[0].graph_memory: expected an object or null, got 1610612736")
    mutate("graph-memory-array.json", lambda r: r["devices"][1].update(graph_memory=[]),
           "devices[1].graph_memory: expected an object or null, got an array")
    mutate("graph-reserved-negative.json", lambda r: r["devices"][0]["graph_memory"].update(reserved_bytes=-1),
           "devices[0].graph_memory.reserved_bytes: expected an integer from 0 to 2^53, got -1")
    mutate("graph-reserved-string.json", lambda r: r["devices"][0]["graph_memory"].update(reserved_bytes="1.5 GiB"),
           "devices[0].graph_memory.reserved_bytes: expected an integer from 0 to 2^53, got \"1.5 GiB\"")
    mutate("graph-source-unknown.json", lambda r: r["devices"][1]["graph_memory"].update(source="nvml"),
           "devices[1].graph_memory.source: expected \"driver\" or \"estimate\", got \"nvml\"")
    mutate("graph-source-missing.json", lambda r: r["devices"][0]["graph_memory"].pop("source"),
           "devices[0].graph_memory.source: missing")
    mutate("graph-launches-fraction.json", lambda r: r["devices"][0]["graph_memory"].update(launches=2.5),
           "devices[0].graph_memory.launches: expected an integer from 0 to 2^53, got 2.5")
    return out


# CUDA contexts: what each context's creation took, with the stack that
# made it; the primary context retained by the program through the driver
# (as JAX does), another made by a library.
CONTEXT_FRAMES = dict(FRAMES, **{
    "init_devices": (0, 0x2640, "init_devices", 0x1d),
    "model_ctx": (3, 0xb140, "_ZN5model7Context6createEv", 0x2c),
})
CONTEXT_STACKS = {
    "weights": STACKS["weights"],
    "workspace": STACKS["workspace"],
    "ctx_primary": (["init_devices"] + START, False),
    "ctx_create": (["model_ctx", "load_model"] + START, False),
}


def footprint(contexts, context_bytes, source, why, allocated, process,
              counted, cross_check=None):
    unexplained = None
    if process is not None and context_bytes is not None:
        unexplained = max(0, process - allocated - context_bytes)
    return {"contexts": contexts, "context_bytes": context_bytes,
            "source": source, "why": why, "allocated_bytes": allocated,
            "process_bytes": process, "unexplained_bytes": unexplained,
            "counted": counted, "cross_check": cross_check}


def job_context():
    """data/context.json: a program with contexts on two devices, written
    under count_context=1.  On device 0 NVML measured the primary context
    the program retained (518 MiB) and one that libmodel made
    (cuCtxCreate_v4, 262 MiB); both count against the caps, as entries of
    kind context, and a third libmodel context, destroyed before exit, is
    in released[].  NVML says the process holds 36 MiB more on the card
    than its allocations and contexts: modules loaded later.  The
    driver's free memory, read around libmodel's cuCtxCreate_v4 (the
    primary context was current), fell by 6 MiB more than NVML's count:
    the cross-check.  On device 1
    NVML did not know the GPU, so its context was not measured, not
    counted, and has no entry."""
    ctx_a, ctx_b = 518 * MiB, 262 * MiB
    leaks = [("weights", "cudaMalloc", "device", 0, 2, 512 * MiB),
             ("ctx_primary", "cuDevicePrimaryCtxRetain", "context", 0, 1, ctx_a),
             ("ctx_create", "cuCtxCreate_v4", "context", 0, 1, ctx_b),
             ("workspace", "cuMemAlloc_v2", "device", 1, 1, 512 * MiB)]
    released = [("ctx_create", "cuCtxCreate_v4", "context", 0, 1, ctx_b)]
    dev_a = 1 * GiB + ctx_a + ctx_b
    devices = {GPU_A[0]: (dev_a, dev_a + ctx_b, 5, 0, 1, 0),
               GPU_B[0]: (512 * MiB, 512 * MiB, 1, 0, 0, 0)}
    peaks = [(0, dev_a + ctx_b, 6.5, [("weights", 1 * GiB, 2), ("ctx_create", 2 * ctx_b, 2),
                                      ("ctx_primary", ctx_a, 1)]),
             (1, 512 * MiB, 7.0, [("workspace", 512 * MiB, 1)])]
    host = {"limit_bytes": None, "live_bytes": 0, "peak_bytes": 0,
            "allocations": 0, "frees": 0, "denied": 0}
    r = report(4245, 0x5a7700000000, 13, [GPU_A, GPU_B], leaks, peaks, [], released,
               {"warn": 0, "wait": 0, "soft_limit": 0}, host, devices,
               CONTEXT_FRAMES, CONTEXT_STACKS)
    r["group"] = None  # as a writer of footprint writes it: schema-valid
    r["options"]["count_context"] = True
    r["devices"][0]["footprint"] = footprint(
        2, ctx_a + ctx_b, "nvml", None, 1 * GiB, 1 * GiB + ctx_a + ctx_b + 36 * MiB, True,
        {"contexts": 1, "nvml_bytes": ctx_b, "driver_bytes": ctx_b + 6 * MiB})
    r["devices"][1]["footprint"] = footprint(
        1, None, None, "NVML does not know " + GPU_B[0], 512 * MiB, None, False)
    return r


def broken_context(base):
    """Malformed devices[].footprint, from data/context.json."""
    out = []
    mutate = mutator(base, out)

    def fp(r, i):
        return r["devices"][i]["footprint"]

    mutate("footprint-number.json", lambda r: r["devices"][0].update(footprint=1),
           "devices[0].footprint: expected an object or null, got 1")
    mutate("footprint-array.json", lambda r: r["devices"][1].update(footprint=[]),
           "devices[1].footprint: expected an object or null, got an array")
    mutate("footprint-contexts-missing.json", lambda r: fp(r, 0).pop("contexts"),
           "devices[0].footprint.contexts: missing")
    mutate("footprint-context-bytes-negative.json", lambda r: fp(r, 0).update(context_bytes=-1),
           "devices[0].footprint.context_bytes: expected an integer from 0 to 2^53 or null, got -1")
    mutate("footprint-source-unknown.json", lambda r: fp(r, 0).update(source="smi"),
           "devices[0].footprint.source: expected \"nvml\", \"driver\" or null, got \"smi\"")
    mutate("footprint-source-unmeasured.json", lambda r: fp(r, 1).update(source="nvml"),
           "devices[1].footprint.source: expected null where context_bytes is null, got \"nvml\"")
    mutate("footprint-source-null.json", lambda r: fp(r, 0).update(source=None),
           "devices[0].footprint.source: expected \"nvml\" or \"driver\" where context_bytes is a number, got null")
    mutate("footprint-why-number.json", lambda r: fp(r, 1).update(why=3),
           "devices[1].footprint.why: expected a string or null, got 3")
    mutate("footprint-allocated-fraction.json", lambda r: fp(r, 0).update(allocated_bytes=1.5),
           "devices[0].footprint.allocated_bytes: expected an integer from 0 to 2^53, got 1.5")
    mutate("footprint-process-string.json", lambda r: fp(r, 0).update(process_bytes="1.8 GiB"),
           "devices[0].footprint.process_bytes: expected an integer from 0 to 2^53 or null, got \"1.8 GiB\"")
    mutate("footprint-unexplained-alone.json", lambda r: fp(r, 1).update(unexplained_bytes=5),
           "devices[1].footprint.unexplained_bytes: expected null where process_bytes or context_bytes is null, got 5")
    mutate("footprint-counted-string.json", lambda r: fp(r, 0).update(counted="yes"),
           "devices[0].footprint.counted: expected true or false, got \"yes\"")
    mutate("footprint-counted-missing.json", lambda r: fp(r, 1).pop("counted"),
           "devices[1].footprint.counted: missing")
    mutate("footprint-cross-check-number.json", lambda r: fp(r, 0).update(cross_check=1),
           "devices[0].footprint.cross_check: expected an object or null, got 1")
    mutate("footprint-cross-check-driver-missing.json",
           lambda r: fp(r, 0)["cross_check"].pop("driver_bytes"),
           "devices[0].footprint.cross_check.driver_bytes: missing")
    mutate("footprint-cross-check-no-contexts.json",
           lambda r: fp(r, 0)["cross_check"].update(contexts=0),
           "devices[0].footprint.cross_check.contexts: expected 1 to footprint.contexts (2), got 0")
    mutate("footprint-cross-check-too-many.json",
           lambda r: fp(r, 0)["cross_check"].update(contexts=3),
           "devices[0].footprint.cross_check.contexts: expected 1 to footprint.contexts (2), got 3")
    mutate("footprint-cross-check-over.json",
           lambda r: fp(r, 0)["cross_check"].update(nvml_bytes=2 * GiB),
           "devices[0].footprint.cross_check.nvml_bytes: expected at most footprint.context_bytes (817889280), got 2147483648")
    mutate("footprint-cross-check-unmeasured.json",
           lambda r: fp(r, 1).update(cross_check={"contexts": 1, "nvml_bytes": 0, "driver_bytes": 0}),
           "devices[1].footprint.cross_check: expected null where source is not \"nvml\", got an object")
    return out


def broken(base):
    """(name, text or object, expected piece of the error line)."""
    out = []
    mutate = mutator(base, out)

    text = json.dumps(base, indent=1)
    out += [
        ("empty.json", "", "empty file"),
        ("blank.json", " \n\t\n", "empty file"),
        ("not-json.json", "cumemguard: report written\n", "not valid JSON (line 1, column 1)"),
        ("truncated.json", text[: len(text) // 2], "truncated JSON"),
        ("truncated-early.json", text[:40], "truncated JSON"),
        ("trailing-garbage.json", text + "\n}\n", "not valid JSON"),
        ("array.json", "[1, 2, 3]\n", "the JSON is an array, not an object"),
        ("string.json", "\"cumemguard-report\"\n", "the JSON is a string"),
        ("no-format.json", "{\"version\": 1}\n", "no \"format\" key"),
        ("deep-nesting.json", "[" * 5000 + "]" * 5000,
         "nested deeper than the 1000 levels this tool reads (line 1, column 1001)"),
        ("deep-member.json", "{\"format\": \"cumemguard-report\", \"a\": " + "[" * 5000 + "]" * 5000 + "}\n",
         "nested deeper than the 1000 levels this tool reads (line 1, column 1037)"),
    ]
    mutate("wrong-format.json", lambda r: r.update(format="heaptrack"), "format is not")
    mutate("format-number.json", lambda r: r.update(format=1), "format is not")
    mutate("version-2.json", lambda r: r.update(version=2), "report version 2 is newer")
    mutate("version-0.json", lambda r: r.update(version=0), "unknown report version 0")
    mutate("version-string.json", lambda r: r.update(version="1"), "version: expected an integer, got \"1\"")
    mutate("version-missing.json", lambda r: r.pop("version"), "version: expected an integer, got nothing")
    mutate("process-missing.json", lambda r: r.pop("process"), "process: missing")
    mutate("pid-string.json", lambda r: r["process"].update(pid="4242"), "process.pid: expected an integer")
    mutate("argv-number.json", lambda r: r["process"]["argv"].append(3), "process.argv[3]: expected a string, got a number")
    mutate("modules-object.json", lambda r: r.update(modules={}), "modules: expected an array, got an object")
    mutate("module-path-null.json", lambda r: r["modules"][0].update(path=None), "modules[0].path: expected a string, got null")
    mutate("frame-module-range.json", lambda r: r["frames"][0].update(module=99), "frames[0].module: 99 is out of range")
    mutate("frame-module-negative.json", lambda r: r["frames"][0].update(module=-1), "frames[0].module: expected an integer")
    mutate("frame-address-bad.json", lambda r: r["frames"][1].update(address="0xZZ"), "frames[1].address")
    mutate("frame-address-long.json", lambda r: r["frames"][1].update(address="0x" + "f" * 17), "frames[1].address")
    mutate("frame-offset-number.json", lambda r: r["frames"][2].update(offset=4096), "frames[2].offset")
    mutate("stack-frame-range.json", lambda r: r["stacks"][0]["frames"].append(len(r["frames"])), "stacks[0].frames[")
    mutate("stack-frame-string.json", lambda r: r["stacks"][1]["frames"].insert(0, "0"), "stacks[1].frames[0]: expected an index")
    mutate("stack-id-duplicate.json", lambda r: r["stacks"][1].update(id=r["stacks"][0]["id"]), "is the id of two stacks")
    mutate("stack-id-zero.json", lambda r: r["stacks"][0].update(id=0), "stacks[0].id")
    mutate("stack-cuts-object.json", lambda r: r["stacks"][0].update(cuts={}), "stacks[0].cuts: expected an array")
    mutate("stack-cut-at-range.json", lambda r: r["stacks"][0].update(cuts=[{"at": len(r["stacks"][0]["frames"]) + 1, "frames": 3, "lang": "native"}]), "stacks[0].cuts[0].at: expected an integer from 0 to")
    mutate("stack-cut-order.json", lambda r: r["stacks"][0].update(cuts=[{"at": 2, "frames": 3, "lang": "native"}, {"at": 1, "frames": None, "lang": "python"}]), "stacks[0].cuts[1].at: 1 comes before the cut listed before")
    mutate("stack-cut-frames-zero.json", lambda r: r["stacks"][0].update(cuts=[{"at": 1, "frames": 0, "lang": "native"}]), "stacks[0].cuts[0].frames: expected an integer from 1")
    mutate("stack-cut-lang.json", lambda r: r["stacks"][0].update(cuts=[{"at": 1, "frames": 2, "lang": "rust"}]), 'stacks[0].cuts[0].lang: expected "native" or "python", got "rust"')
    mutate("stack-truncated-string.json", lambda r: r["stacks"][0].update(truncated="no"), "stacks[0].truncated: expected a boolean")
    mutate("leak-stack-unknown.json", lambda r: r["leaks"][0].update(stack=9999), "leaks[0].stack: 9999 is not the id of a stack")
    mutate("leak-bytes-negative.json", lambda r: r["leaks"][0].update(bytes=-1), "leaks[0].bytes: expected an integer from 0 to 2^53, got -1")
    mutate("leak-bytes-fraction.json", lambda r: r["leaks"][0].update(bytes=1.5), "leaks[0].bytes: expected an integer from 0 to 2^53, got 1.5")
    mutate("leak-bytes-huge.json", lambda r: r["leaks"][0].update(bytes=1e300), "leaks[0].bytes: expected an integer")
    mutate("leak-count-string.json", lambda r: r["leaks"][1].update(count="2"), "leaks[1].count")
    mutate("leak-api-missing.json", lambda r: r["leaks"][0].pop("api"), "leaks[0].api: missing")
    mutate("leak-kind-number.json", lambda r: r["leaks"][0].update(kind=1), "leaks[0].kind: expected a string")
    mutate("leak-not-object.json", lambda r: r["leaks"].append([]), "expected an object, got an array")
    mutate("leak-threads-tid-string.json", lambda r: r["leaks"][0].update(threads=[{"tid": "831", "name": "pt_autograd_0"}]), "leaks[0].threads[0].tid: expected an integer")
    mutate("leak-threads-name-number.json", lambda r: r["leaks"][1].update(threads=[{"tid": 831, "name": "pt_autograd_0"}, {"tid": 832, "name": 0}]), "leaks[1].threads[1].name: expected a string")
    mutate("leak-threads-object.json", lambda r: r["leaks"][0].update(threads={}), "leaks[0].threads: expected an array")
    mutate("leak-device-huge.json", lambda r: r["leaks"][0].update(device=1 << 40), "leaks[0].device")
    mutate("device-ordinal-range.json", lambda r: r["devices"][0].update(ordinal=64), "devices[0].ordinal: expected an integer from 0 to 63")
    mutate("device-duplicate.json", lambda r: r["devices"][1].update(ordinal=r["devices"][0]["ordinal"]), "is listed twice")
    mutate("device-live-string.json", lambda r: r["devices"][0].update(live_bytes="1 GiB"), "devices[0].live_bytes: expected an integer from 0 to 2^53, got \"1 GiB\"")
    mutate("peak-by-stack-null.json", lambda r: r["peaks"][0].update(by_stack=None), "peaks[0].by_stack: expected an array, got null")
    mutate("peak-share-unknown-stack.json", lambda r: r["peaks"][0]["by_stack"][0].update(stack=1), "peaks[0].by_stack[0].stack: 1 is not the id")
    mutate("denial-time-string.json", lambda r: r["denials"][0].update(time="20.5"), "denials[0].time: expected a number")
    mutate("summary-events-array.json", lambda r: r["summary"].update(events=[]), "summary.events: expected an object")
    mutate("host-live-null.json", lambda r: r["host"].update(live_bytes=None), "host.live_bytes")
    mutate("released-stack-unknown.json", lambda r: r["released"][0].update(stack=424242), "released[0].stack: 424242 is not the id")
    return out


def broken_soft(base):
    """Malformed options.soft_limit, soft_limits and gpu_limits, from
    data/job-a.json."""
    out = []
    mutate = mutator(base, out)

    mutate("soft-limit-string.json", lambda r: r["options"].update(soft_limit="700M"),
           "options.soft_limit: expected null or {\"bytes\": N} or {\"percent\": P}, got \"700M\"")
    mutate("soft-limits-key.json", lambda r: r["options"].update(soft_limits={"gpu0": {"bytes": 5}}),
           "options.soft_limits: \"gpu0\" is no device ordinal from 0 to 15")
    mutate("soft-limits-bytes.json", lambda r: r["options"].update(soft_limits={"0": {"bytes": "5"}}),
           "options.soft_limits.0.bytes: expected a number, got \"5\"")
    uuid = "GPU-c36d6751-5e1a-4d0c-9a77-73696d677000"
    mutate("gpu-limits-array.json", lambda r: r["options"].update(gpu_limits=[]),
           "options.gpu_limits: expected an object, got an array")
    mutate("gpu-limits-soft-bytes.json",
           lambda r: r["options"].update(gpu_limits={uuid: {"limit": None, "soft_limit": {"bytes": "5"}, "group_limit": None}}),
           "options.gpu_limits.%s.soft_limit.bytes: expected a number, got \"5\"" % uuid)
    return out


def main():
    a, b, g, c = job_a(), job_b(), job_graph(), job_context()
    for name, r in (("job-a.json", a), ("job-b.json", b), ("graph.json", g),
                    ("context.json", c)):
        with open(os.path.join(HERE, "data", name), "w") as f:
            json.dump(r, f, indent=1)
            f.write("\n")
    cases = broken(a) + broken_graph(g) + broken_context(c) + broken_soft(a)
    with open(os.path.join(HERE, "broken", "expected.txt"), "w") as ex:
        ex.write("# FILE<TAB>a piece of the one line cumemguard-report must print\n")
        for name, content, expect in cases:
            with open(os.path.join(HERE, "broken", name), "w") as f:
                f.write(content if isinstance(content, str) else json.dumps(content, indent=1) + "\n")
            ex.write("%s\t%s\n" % (name, expect))


if __name__ == "__main__":
    main()
