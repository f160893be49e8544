"""The overhead case's JAX side: a jitted training step (MLP, plain SGD,
batch 1024, XLA's autotuning off) timed step by step after a warm-up.  Prints RESULT
step_ms=MEDIAN.  The suite runs it without and with the interposer (stacks
on), alternating, and compares the medians (case overhead-jax)."""
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cmgcase as C  # noqa: E402

# XLA times candidate GEMM kernels when it compiles and keeps the fastest,
# so two processes can run different kernels: steps 20% apart between runs
# of the same program hide a 1% difference.  Without autotuning every
# process compiles the same kernels.
os.environ.setdefault("XLA_FLAGS", "--xla_gpu_autotune_level=0")
C.need("jax")
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

case = C.Case("overhead-jax")
dev = jax.devices()[0]
if not case.check("JAX runs on the GPU", dev.platform == "gpu", str(dev)):
    case.done()
keys = jax.random.split(jax.random.PRNGKey(0), 6)
sizes = [2048, 4096, 4096, 4096, 10]
params = [(jax.random.normal(k, (a, b), jnp.float32) * (1.0 / a) ** 0.5,
           jnp.zeros((b,), jnp.float32))
          for k, a, b in zip(keys, sizes[:-1], sizes[1:])]
x = jax.random.normal(keys[4], (1024, 2048), jnp.float32)
y = jax.random.randint(keys[5], (1024,), 0, 10)


def loss_fn(params, x, y):
    h = x
    for w, b in params[:-1]:
        h = jax.nn.relu(h @ w + b)
    w, b = params[-1]
    logits = h @ w + b
    return -jnp.mean(jax.nn.log_softmax(logits)[jnp.arange(y.shape[0]), y])


@jax.jit
def step(params, x, y):
    grads = jax.grad(loss_fn)(params, x, y)
    return jax.tree_util.tree_map(lambda p, g: p - 0.01 * g, params, grads)


warmup, steps = int(os.environ.get("CMG_WARMUP", "50")), \
    int(os.environ.get("CMG_STEPS", "400"))
for _ in range(warmup):
    params = step(params, x, y)
jax.block_until_ready(params)
times = []
for _ in range(steps):
    t0 = time.perf_counter()
    params = step(params, x, y)
    jax.block_until_ready(params)
    times.append((time.perf_counter() - t0) * 1e3)
case.result(step_ms="%.6f" % statistics.median(times),
            mean_ms="%.6f" % statistics.fmean(times), steps=steps,
            guarded=int(C.cmg_stats(0) is not None))
case.done()
