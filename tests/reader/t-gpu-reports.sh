#!/bin/sh
# Reports written on a real GPU (tests/reader/data/gpu: PyTorch with and
# without its caching allocator, torch.compile, two dumps around releasing
# a model, JAX, a captured CUDA graph): every reader command takes each.
# The JAX report is one of cumemguard 0.1.0, which named page-locked host
# memory freed during the run by CMG_HOST_MEMORY (64) where every other
# member says null: it still reads, as host memory, though the schema of
# what is written now refuses it.  The real-GPU suite's check of PyTorch's
# segments holds on the PyTorch report.
. "$srcdir/tests/reader/defs.sh"
D=$TOOLDIR/data/gpu

for f in "$D"/*.json; do
  b=$(basename "$f" .json)
  tool "$f"
  is "$rc" 0 "summary of $b"
  tool_json "$tmp/$b.summary.json" --json --top 0 "$f"
  is "$rc" 0 "summary --json of $b"
  tool folded "$f"
  is "$rc" 0 "folded of $b"
  for cmd in flame timeline pprof plot; do
    tool "$cmd" -o "$tmp/$b.$cmd" "$f"
    is "$rc/$([ -s "$tmp/$b.$cmd" ]; echo $?)" 0/0 "$cmd of $b"
  done
  tool check "$f"
  leaked=$("$PYTHON3" -c 'import json,sys; print(int(json.load(open(sys.argv[1]))["summary"]["live_bytes"] > 0))' "$f")
  is "$rc" "$leaked" "check of $b: status 1 exactly when device memory leaked"
done
tool diff "$D/torch-release-before.json" "$D/torch-release-after.json"
is "$rc" 0 "diff of the two dumps around a release"
held=$(grep -n '^Still held' "$tmp/out" | head -n 1 | cut -d: -f1)
shrank=$(grep -n '^Shrank' "$tmp/out" | head -n 1 | cut -d: -f1)
is "$([ -n "$held" ] && [ -n "$shrank" ] && [ "$held" -lt "$shrank" ]; echo $?)" 0 \
  "the release: what is still held is listed before what shrank"
is "$(sed -n '/^Still held/,/^$/p' "$tmp/out" | grep -c '^  train (s1_release.py:11) > ')" 6 \
  "and names the user's line that made each of the six held groups it can"
tool merge "$D"/*.json
is "$rc" 0 "merge of them all"

j=$D/jax-three-functions.json
is "$("$PYTHON3" "$srcdir/scripts/validate-report" "$srcdir/docs/report-schema.json" "$j" 2>&1 | grep -c '64 is greater than the maximum of 63')" 1 \
  "the schema refuses the 0.1.0 JAX report's device 64"
tool timeline -o "$tmp/jax.trace" "$j"
is "$("$PYTHON3" -c 'import json,sys
t = json.load(open(sys.argv[1]))["traceEvents"]
print(sorted({(e["args"]["kind"], e["args"]["device"]) for e in t
              if e.get("cat") == "freed allocation" and e["ph"] == "b"}))' "$tmp/jax.trace")" \
  "[('device', 0), ('host', 'host')]" \
  "its freed allocations read as device 0 and host memory"

# cuBLAS's workspace, kept by PyTorch's handle for the life of the
# process: marked as such, not left to read as the program's leak.
tool "$D/torch-release-after.json"
is "$(grep -c '^Leaked 64.1 MiB in 3 allocations, 3 stacks (cuMemAlloc_v2, device 0), kept by a cuBLAS handle (cublasCreate_v2) for the life of the process, from:$' "$tmp/out")/$(grep -c 'kept by a cuBLAS handle' "$tmp/out")" 1/4 \
  "the cuBLAS handle's workspace is marked kept for the life of the process (the stacks that read the same, one group)"
tool_json "$tmp/held.json" --json --top 0 "$D/torch-release-after.json"
is "$("$PYTHON3" -c 'import json,sys; s=json.load(open(sys.argv[1]))["summaries"][0]; print(sorted({l["held_by"] for l in s["leaks"]}, key=str))' "$tmp/held.json")" \
  "[None, 'cuBLAS handle (cublasCreate_v2)']" "--json: held_by"

# The real-GPU suite's torch-report check, on a real PyTorch report: the
# caching allocator's segments made on the main thread show Python frames;
# those of the autograd thread cannot, and are not asked to.
rq() {
  "$PYTHON3" "$srcdir/tests/gpu/report_query.py" "$D/torch-gpt2-compile.json" "$@"
}
is "$(rq 'silent_main(leaks_in("libc10_cuda"))')" "[]" \
  "PyTorch: every segment group of the main thread shows Python frames"
is "$(rq 'sorted({off_main(g) for g in r["leaks"] if not has_python(g["stack"])})')" \
  "[True]" "PyTorch: the groups without Python were made off the main thread"

done_testing
