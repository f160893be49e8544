#!/bin/sh
# Pool blocks: a leak group whose stack runs through a framework's pool
# code is marked as a pool block, and when such blocks hold most of the
# leaked device memory the summary says so in one line and names
# --no-pools; a program whose allocations do not gets no hint.  The pool is
# recognised by a function name (tests/sim/app_pool's pool-named
# functions) or, as release builds of PyTorch hide those names, by the
# module (libc10_cuda.so), unless the report says the framework's switch
# had turned the pool off.  Stream-ordered allocations are never pool
# blocks.  --json carries the same.
. "$srcdir/tests/reader/defs.sh"
R=$tmp/r.json
HINT="rerun with --no-pools to see the tensors."

# A PyTorch-like pool block of 64 MiB beside a 1 MiB tensor.
guard "--report $R" app_pool torch 64M tensor 1M
validate "$R"
tool "$R"
is "$rc" 0 "summary of a run whose memory is mostly in a pool"
is "$(grep -c '^Leaked 64.0 MiB in 1 allocation (cudaMalloc, device 0), a pool block of the PyTorch caching allocator, from:$' "$tmp/out")" 1 \
  "the pool's group is marked as a pool block of the PyTorch caching allocator"
is "$(grep -c '^Leaked 1.0 MiB in 1 allocation (cudaMalloc, device 0) from:$' "$tmp/out")" 1 \
  "the tensor's group is not"
is "$(grep -F -- "$HINT" "$tmp/out")" \
  "Most of the leaked device memory (64.0 MiB of 65.0 MiB) is in pool blocks of the PyTorch caching allocator, which say where the pool grew, not which tensor leaked: $HINT" \
  "one line says most of it is in pool blocks, and names --no-pools"
tool_json "$tmp/j.json" --json "$R"
is "$(js "$tmp/j.json" '(d["summaries"][0]["pools"], [l["pool"] for l in d["summaries"][0]["leaks"]])')" \
  "({'no_pools': False, 'bytes': 67108864, 'largest': 'PyTorch caching allocator', 'mostly': True}, ['PyTorch caching allocator', None])" \
  "--json: the pool bytes, the pool, the hint, and each group's pool"
tool check "$R"
is "$(grep -c -F -- "$HINT" "$tmp/out")" 1 "check prints the hint with the leaks"

# The BFC allocator of TensorFlow and XLA.
guard "--report $R" app_pool bfc 8M
tool "$R"
is "$(grep -c 'pool blocks of the BFC allocator of TensorFlow or XLA, which' "$tmp/out")" 1 \
  "a BFC allocator's blocks get the hint too"

# No pool: no mark, no hint.
guard "--report $R" app_pool tensor 64M tensor 1M
tool "$R"
is "$(grep -c 'pool block' "$tmp/out")" 0 "a program that allocates its tensors itself: no pool, no hint"
tool_json "$tmp/j.json" --json "$R"
is "$(js "$tmp/j.json" '(d["summaries"][0]["pools"]["bytes"], d["summaries"][0]["pools"]["mostly"])')" \
  "(0, False)" "--json: nothing in pools"

# A pool holding less than half: marked, but no hint.
guard "--report $R" app_pool torch 1M tensor 64M
tool "$R"
is "$(grep -c 'a pool block of the PyTorch' "$tmp/out")/$(grep -c -F -- "$HINT" "$tmp/out")" \
  "1/0" "a pool holding a minority is marked but gets no hint"

# Under --no-pools a pool that stays (a switch kept, or set in code) is
# named as such, without sending the user to --no-pools again.
guard "--no-pools --report $R" app_pool torch 64M
tool "$R"
is "$(grep -c 'is still in pool blocks of the PyTorch caching allocator although pools were asked off (no_pools=1)' "$tmp/out")/$(grep -c -F -- "$HINT" "$tmp/out")" \
  "1/0" "under --no-pools the line says the pool stayed and why it may have"

# By module: what a release PyTorch looks like, its functions unnamed in
# libc10_cuda.so.  The tensor run's frames in app_pool are made those.
guard "--report $R" app_pool tensor 64M
as_torch() {
  "$PYTHON3" - "$R" "$1" "$2" "$3" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
m = [i for i, x in enumerate(r["modules"]) if x["path"].endswith("/app_pool")][0]
r["modules"][m]["path"] = "/opt/venv/lib/python3.11/site-packages/torch/lib/libc10_cuda.so"
for f in r["frames"]:
    if f["module"] == m:
        f["function"] = None
        f["function_offset"] = None
for s in r["options"]["pool_switches"]:
    if s["name"] == "PYTORCH_NO_CUDA_MEMORY_CACHING" and sys.argv[3] != "-":
        s["value"], s["set_by"] = sys.argv[3], "cumemguard"
if sys.argv[4] != "-":
    r["leaks"][0]["api"] = sys.argv[4]
json.dump(r, open(sys.argv[2], "w"))
PY
}
as_torch "$tmp/t.json" - -
validate "$tmp/t.json"
tool "$tmp/t.json"
is "$(grep -c 'a pool block of the PyTorch caching allocator,' "$tmp/out")/$(grep -c -F -- "$HINT" "$tmp/out")" \
  "1/1" "unnamed frames in libc10_cuda.so: a PyTorch pool block"
as_torch "$tmp/t.json" 1 -
tool "$tmp/t.json"
is "$(grep -c 'pool block' "$tmp/out")" 0 \
  "the same with PYTORCH_NO_CUDA_MEMORY_CACHING set: a tensor, no hint"
as_torch "$tmp/t.json" - cudaMallocAsync
tool "$tmp/t.json"
is "$(grep -c 'pool block' "$tmp/out")" 0 \
  "a stream-ordered allocation is never a pool block"

# A report written before these keys existed reads as before (the fixed
# reports have neither); a malformed one is one line and status 2.
tool "$TOOLDIR/data/job-a.json"
is "$rc/$(grep -c 'pool block' "$tmp/out")" 0/0 "an older report: read, no pool"
"$PYTHON3" - "$R" "$tmp/b.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
r["options"]["pool_switches"] = [{"name": "TF_GPU_ALLOCATOR", "value": 3, "set_by": None}]
json.dump(r, open(sys.argv[2], "w"))
PY
tool "$tmp/b.json"
one_line_error "options.pool_switches[].value: expected a string or null, got 3" \
  "a switch's value that is not a string is refused in one line"

done_testing
