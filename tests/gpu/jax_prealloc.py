"""JAX under the cap with its default preallocation (XLA's BFC allocator takes
75% of the total that cuMemGetInfo reports, at start): the process starts, the
pool is sized from the capped total and lies within the cap, a jitted matmul
runs, and asking for more than the cap gives XLA's RESOURCE_EXHAUSTED error.
With argument "group" the cap is a group's alone (--group-limit, as the CDI
device and the Slurm plugin set it): the same must hold, the pool sized from
the group's cap that cuMemGetInfo shows.

With XLA_PYTHON_CLIENT_ALLOCATOR=platform (argument "platform"), XLA calls the
driver for each buffer instead: filling past the cap must fail with
RESOURCE_EXHAUSTED there too, refused by the interposer, and smaller buffers
still work afterwards."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cmgcase as C  # noqa: E402

C.need("jax")
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

mode = sys.argv[1] if len(sys.argv) > 1 else "prealloc"
platform, group = mode == "platform", mode == "group"
case = C.Case({"platform": "jax-platform", "group": "jax-group"}.get(
    mode, "jax-prealloc"))
cap = C.expected_cap()
case.info(jax=jax.__version__, cap=cap,
          allocator=os.environ.get("XLA_PYTHON_CLIENT_ALLOCATOR", "default"),
          preallocate=os.environ.get("XLA_PYTHON_CLIENT_PREALLOCATE",
                                     "default"))
try:
    dev = jax.devices()[0]
except Exception as e:  # noqa: BLE001
    case.check("JAX starts on the GPU", False,
               "%s: %s" % (type(e).__name__, str(e).splitlines()[0][:300]))
    case.done()
case.check("JAX starts on the GPU", dev.platform == "gpu",
           "device=%s platform=%s" % (dev, dev.platform))
case.info(device_kind=dev.device_kind)


def memory_stats():
    ms = dev.memory_stats() or {}
    case.info(**{k: v for k, v in ms.items() if k in (
        "bytes_limit", "bytes_reserved", "bytes_in_use", "peak_bytes_in_use",
        "largest_free_block_bytes", "pool_bytes")})
    return ms


def matmul_ok(what):
    try:
        a = jnp.ones((4096, 4096), jnp.float32)
        r = jax.jit(lambda u, v: u @ v)(a, a).block_until_ready()
        v = float(r[0, 0])
        return case.check(what, v == 4096.0, "r[0,0]=%s" % v)
    except Exception as e:  # noqa: BLE001
        return case.check(what, False, "%s: %s" % (
            type(e).__name__, str(e).splitlines()[0][:300]))


def is_exhausted(e):
    return e is not None and "RESOURCE_EXHAUSTED" in str(e)


if not platform:
    # The pool is made (and, preallocating, filled) by the first computation.
    matmul_ok("a jitted matmul runs")
    ms = memory_stats()
    limit = ms.get("bytes_limit")
    s = C.check_interposer(case, cap, group=group)
    case.check("the BFC pool is sized from the capped total",
               limit is not None and cap // 2 <= limit <= cap,
               "bytes_limit=%s cap=%s" % (C.human(limit), C.human(cap)))
    if s is not None:
        # The preallocation went through the interposer (it is counted) and
        # stays within the cap.
        case.check("the preallocation is counted by the interposer",
                   limit is not None and s["live_bytes"] >= limit,
                   "live=%s bytes_limit=%s" % (C.human(s["live_bytes"]),
                                               C.human(limit)))
        case.check("the preallocation is within the cap",
                   s["peak_bytes"] <= cap,
                   "peak=%s cap=%s" % (C.human(s["peak_bytes"]),
                                       C.human(cap)))
    err = None
    try:
        big = jnp.zeros((cap // 4 + (64 << 20),), jnp.float32)
        big.block_until_ready()
    except Exception as e:  # noqa: BLE001
        err = e
    case.check("asking for more than the cap gives RESOURCE_EXHAUSTED",
               is_exhausted(err),
               "got %s" % ("%s: %s" % (type(err).__name__,
                                       str(err).splitlines()[0][:300])
                           if err else "no error"))
    matmul_ok("a jitted matmul still runs afterwards")
else:
    chunk = 256 * C.MiB
    held, arrays, err = 0, [], None
    while held <= cap + chunk:
        try:
            a = jnp.zeros((chunk // 4,), jnp.float32)
            a.block_until_ready()
            arrays.append(a)
            held += chunk
        except Exception as e:  # noqa: BLE001
            err = e
            break
    case.info(held=held, error=type(err).__name__ if err else None)
    C.check_interposer(case, cap)
    case.check("filling past the cap gives RESOURCE_EXHAUSTED",
               is_exhausted(err),
               "got %s" % ("%s: %s" % (type(err).__name__,
                                       str(err).splitlines()[0][:300])
                           if err else "no error at %s" % C.human(held)))
    C.check_fill(case, cap, held, chunk, slack=512 * C.MiB)
    C.check_denied(case)
    s = C.cmg_stats(0)
    if s is not None:
        case.check("the interposer's peak is within the cap",
                   s["peak_bytes"] <= cap, "peak=%s" % C.human(s["peak_bytes"]))
    del arrays[len(arrays) // 2:]
    matmul_ok("a jitted matmul runs after the OOM")
C.check_nvml(case, cap)
case.done()
