# The cases of the real-GPU suite, sourced by scripts/gpu-suite, whose
# harness (begin, want, is, skip, end, guard, run, report, rq, pycase and
# the rest) they call.  One function a case; scripts/gpu-suite's `one`
# lines give each its name.
# shellcheck shell=bash

# nvcc programs: past --limit an allocation fails with out-of-memory,
# cudaMemGetInfo and the device's total show the limit, the report names the
# leaking functions, and granted memory works (a kernel writes it).
case_nvcc() {
  local kind=$1 prog api
  eval "prog=\${PROG_$kind:-}"
  if [ "$kind" = static ]; then api=cuMemAlloc_v2; else api=cudaMalloc; fi
  if [ -z "$prog" ] || [ ! -x "$prog" ]; then
    fail "cmg_alloc_$kind not built and no nvcc to build it (see $W/build.log)"
    return
  fi
  [ -z "$dry" ] ||
    say "nvcc-$kind: simulated: $prog, cmg_alloc built against the simulated runtime"
  # Allocations 0-3: 4 x 256 MiB (two from named sites) fill the 1 GiB;
  # 4: 1 MiB from site 3 is refused; 0 is freed; 5: 128 MiB fits.
  local script="info total 0 alloc 256M site 1 256M site 2 256M alloc 256M site 3 1M free 0 alloc 128M cmg 0 info"
  [ -n "$dry" ] || script="$script kernel 5"
  # count_context=0: allocations only, so that the counts below are exact
  # whatever the card's contexts take (the footprint case tests the default).
  # shellcheck disable=SC2086
  guard app "--limit 1GiB --stack-depth 32" CUMEMGUARD_OPTIONS=count_context=0 \
    -- "$prog" $script
  local o=$W/$cur/app.out e=$W/$cur/app.err
  if [ "$(field "$o" info 1 rc)" != 0 ]; then
    fail "the program could not use CUDA (status $rc): $(head -n 1 "$o") $(grep -v '^cumemguard: report' "$e" | tail -n 1)"
    return
  fi
  is "$rc" 0 "exit status is the program's"
  is "$(field "$o" info 1 total)/$(field "$o" info 1 free)" "$GiB/$GiB" "cudaMemGetInfo shows the 1 GiB limit"
  is "$(field "$o" total 1 bytes)" "$GiB" "the device's totalGlobalMem shows the limit"
  is "$(field "$o" alloc 1 rc)/$(field "$o" site 1 rc)/$(field "$o" site 2 rc)/$(field "$o" alloc 2 rc)" 0/0/0/0 \
    "4 x 256 MiB fit in 1 GiB"
  is "$(field "$o" site 3 rc)" 2 "1 MiB past the limit fails with cudaErrorMemoryAllocation"
  is "$(field "$o" free 1 rc)/$(field "$o" alloc 3 rc)" 0/0 "after a free, 128 MiB fits"
  is "$(field "$o" cmg 1 limit)/$(field "$o" cmg 1 live)/$(field "$o" cmg 1 denials)" \
    "$GiB/$((896 * MiB))/1" "the interposer's counters: limit, 896 MiB live, 1 denial"
  is "$(field "$o" info 2 free)/$(field "$o" info 2 total)" "$((128 * MiB))/$GiB" \
    "cudaMemGetInfo shows what is left"
  [ -n "$dry" ] || is "$(field "$o" kernel 1 rc)/$(field "$o" kernel 1 ok)" 0/1 \
    "a kernel writes the granted memory"
  is "$(lines "$e" 'denied .*\(1048576 bytes\) on device 0')" 1 "one denial line on stderr"
  report app || return
  local v
  v=$(rq 'dev0["limit_bytes"], dev0["peak_bytes"], dev0["denied"]' \
         'r["summary"]["live_bytes"]' \
         '[(g["api"], g["bytes"], g["count"]) for g in leaks_with("cmgtest_site_1")]' \
         '[(g["api"], g["bytes"], g["count"]) for g in leaks_with("cmgtest_site_2")]' \
         'total([g for g in r["leaks"] if not any(has_fn(g["stack"], "cmgtest_site_%d" % n) for n in (1, 2, 3))])' \
         '[(d["api"], d["requested_bytes"], d["limit_bytes"], d["live_bytes"], has_fn(d["stack"], "cmgtest_site_3")) for d in r["denials"]]')
  local a; mapfile -t a <<<"$v"
  is "${a[0]}" "($GiB, $GiB, 1)" "report: limit 1 GiB, peak 1 GiB, 1 denied"
  is "${a[1]}" $((896 * MiB)) "report: 896 MiB live at exit"
  is "${a[2]}" "[('$api', $((256 * MiB)), 1)]" "report: cmgtest_site_1 leaked 256 MiB through $api"
  is "${a[3]}" "[('$api', $((256 * MiB)), 1)]" "report: cmgtest_site_2 leaked 256 MiB through $api"
  is "${a[4]}" $((384 * MiB)) "report: the other allocations leak 384 MiB (the freed one is gone)"
  is "${a[5]}" "[('$api', $MiB, $GiB, $GiB, True)]" "report: the denial, with the stack of cmgtest_site_3"
}

# Python + ctypes + the shared runtime: the cap, exact count, the report.
# The same for a group's cap alone: the group's cap per device, the
# process's own peak within it.
report_within_group() {
  local cap=$1
  report "$2" || return 1
  local a; mapfile -t a < <(rq \
    'r["group"]["devices"][0]["limit_bytes"] if r.get("group") else None' \
    'dev0["peak_bytes"] if dev0 else None')
  is "${a[0]}" "$cap" "report: the group's cap is the cap"
  [ "${a[1]}" != None ] && [ "${a[1]}" -le "$cap" ] 2>/dev/null
  want $? "report: peak ${a[1]} within the group's cap $cap"
}

case_ctypes() {
  need_python || return
  guard py "--limit 1GiB" CMG_GPU_CAP=$GiB CUMEMGUARD_OPTIONS=count_context=0 \
    -- "$PY" "$gpudir/ctypes_cudart.py"
  pycase py || return
  report py || return
  local a; mapfile -t a < <(rq 'dev0["limit_bytes"], dev0["peak_bytes"], dev0["denied"]' \
    'sorted({g["api"] for g in r["leaks"]})' 'r["summary"]["live_bytes"], count(r["leaks"])' \
    '[d["requested_bytes"] for d in r["denials"]]' \
    '[d["api"] for d in r["denials"]] == [r["leaks"][0]["api"]] and len({g["api"] for g in r["leaks"]}) == 1 and r["leaks"][0]["api"] in ("cudaMalloc", "cuMemAlloc_v2")')
  is "${a[0]}" "($GiB, $GiB, 1)" "report: limit 1 GiB, peak 1 GiB, 1 denied"
  is "${a[2]}" "($((896 * MiB)), 4)" "report: 896 MiB in 4 allocations live at exit"
  is "${a[3]}" "[$((256 * MiB))]" "report: the denial of 256 MiB"
  is "${a[4]}" True "report: leaks and denial carry one API label, cudaMalloc or cuMemAlloc_v2"
  # ctypes looks cudaMalloc up in libcudart's own scope (dlsym on its
  # handle), so the interposer's cudaMalloc is not the one called and the
  # allocation is labeled where it is counted, at the driver.
  say "ctypes-cudart: allocations labeled ${a[1]}"
}

# Report checks shared by the framework cases: one report, the cap in
# force, nothing counted past it.
report_within() {
  local cap=$1
  report "$2" || return 1
  local a; mapfile -t a < <(rq 'dev0["limit_bytes"] if dev0 else None' \
                               'dev0["peak_bytes"] if dev0 else None')
  is "${a[0]}" "$cap" "report: the limit is the cap"
  [ "${a[1]}" != None ] && [ "${a[1]}" -le "$cap" ] 2>/dev/null
  want $? "report: peak ${a[1]} within the cap $cap"
}

case_torch_oom() {
  need_python && dry_framework torch || return
  local conf=$1 cap=$((4 * GiB))
  guard py "--limit 4GiB" CMG_GPU_CAP=$cap ${conf:+PYTORCH_CUDA_ALLOC_CONF=$conf} -- \
    "$PY" "$gpudir/torch_oom.py"
  pycase py || return
  report_within $cap py
}

case_torch_report() {
  need_python && dry_framework torch || return
  local cap=$((4 * GiB))
  guard py "--limit 4GiB --stack-depth 128" CMG_GPU_CAP=$cap -- "$PY" "$gpudir/torch_train.py"
  pycase py || return
  report_within $cap py || return
  local o=$W/$cur/py.out reserved segments
  reserved=$(field "$o" RESULT 1 reserved)
  segments=$(field "$o" RESULT 1 segments)
  local a; mapfile -t a < <(rq \
    'total(leaks_in("libc10_cuda")), count(leaks_in("libc10_cuda"))' \
    'sorted({g["api"] for g in leaks_in("libc10_cuda")})' \
    'all(in_mod(g["stack"], "libtorch_python") for g in leaks_in("libc10_cuda"))' \
    '[(g["bytes"], threads(g)) for g in silent_main(leaks_in("libc10_cuda"))]' \
    '" <- ".join(f for f in fns(leaks_in("libc10_cuda")[0]["stack"])[:12]) if leaks_in("libc10_cuda") else ""' \
    '" <- ".join(mods(leaks_in("libc10_cuda")[0]["stack"])) if leaks_in("libc10_cuda") else ""')
  is "${a[0]}" "($reserved, $segments)" \
    "report: the caching allocator's segments (memory_reserved, segment count) are live at exit from libc10_cuda.so"
  is "${a[1]}" "['cudaMalloc']" "report: the segments are labeled cudaMalloc"
  is "${a[2]}" True "report: their stacks go through libtorch_python.so"
  # PyTorch allocates in backward() on its autograd threads, which run no
  # Python: only the main thread's segments can show the user's frames.
  is "${a[3]}" "[]" "report: the segments made on the main thread show Python frames"
  say "torch-report: segment groups made off the main thread: $(rq 'len([g for g in leaks_in("libc10_cuda") if off_main(g)])')"
  say "torch-report: largest segment group's stack: ${a[4]}"
  say "torch-report: modules: ${a[5]}"
}

case_jax() {
  need_python && dry_framework jax || return
  local variant=$1 cap
  cap=$(pct 25)
  if [ "$variant" = platform ]; then
    guard py "--limit 25%" CMG_GPU_CAP=$cap XLA_PYTHON_CLIENT_ALLOCATOR=platform -- \
      "$PY" "$gpudir/jax_prealloc.py" platform
  else
    guard py "--limit 25%" CMG_GPU_CAP=$cap -- "$PY" "$gpudir/jax_prealloc.py"
  fi
  pycase py || return
  report_within "$cap" py
}

# A group's cap alone, as the CDI device and the Slurm plugin set it: XLA
# sizes its pool from cuMemGetInfo's total, which must be the group's cap,
# not the card.  A stand-in does XLA's arithmetic through the runtime
# (tests/gpu/ctypes_cudart.py xla; the dry run's check), then JAX itself
# starts with its default preallocation where it is installed.
case_jax_group() {
  need_python || return
  local cap g=cmgsuite-$$-jax
  cap=$(pct 25)
  guard xla "--group $g-xla --group-limit 25%" CMG_GPU_CAP=$cap -- \
    "$PY" "$gpudir/ctypes_cudart.py" xla
  pycase xla || return
  report_within_group "$cap" xla || return
  if [ -n "$dry" ]; then
    say "jax-group: JAX itself needs a real GPU; the stand-in passed"
    return
  fi
  guard py "--group $g --group-limit 25%" CMG_GPU_CAP=$cap -- \
    "$PY" "$gpudir/jax_prealloc.py" group
  pycase py || return
  report_within_group "$cap" py
}

case_cupy() {
  need_python && dry_framework cupy || return
  local cap=$((4 * GiB))
  guard py "--limit 4GiB" CMG_GPU_CAP=$cap -- "$PY" "$gpudir/cupy_pool.py"
  pycase py || return
  report_within $cap py
}

# A PyTorch tensor leaked on purpose (tests/gpu/torch_pools.py): under
# --no-pools it is its own leak group, of exactly its size, not a pool
# block; without, no group has its size (it lies in a caching allocator's
# segment) and cumemguard-report marks the segments as pool blocks and
# names --no-pools.
case_torch_pools() {
  need_python && dry_framework torch || return
  local cap=$((4 * GiB)) leak tool a d=$W/$cur
  tool=$(dirname "$LAUNCHER")/cumemguard-report
  guard np "--limit 4GiB --no-pools" CMG_GPU_CAP=$cap \
    CMG_GPU_DUMP="$d/dump-np.json" -- "$PY" "$gpudir/torch_pools.py" nopools
  pycase np || return
  leak=$(field "$d/np.out" RESULT 1 leak)
  rep=$d/dump-np.json
  validate "$rep"
  mapfile -t a < <(rq \
    "[(g['api'], g['count']) for g in r['leaks'] if g['bytes'] == $leak]" \
    "r['options']['no_pools'], [s['set_by'] for s in r['options']['pool_switches']]")
  is "${a[0]}" "[('cudaMalloc', 1)]" \
    "--no-pools: the leaked tensor is its own leak group of exactly its size"
  is "${a[1]}" "(True, ['cumemguard', 'cumemguard', 'cumemguard', 'cumemguard'])" \
    "--no-pools: the report records the four switches as set by cumemguard"
  if [ -x "$tool" ]; then
    "$tool" --json --top 0 "$rep" >"$d/np.summary.json" 2>>"$d/np.err"
    is "$("$PY" -c "import json,sys; s=json.load(open(sys.argv[1]))['summaries'][0]; print([l['pool'] for l in s['leaks'] if l['bytes'] == $leak], s['pools']['mostly'])" "$d/np.summary.json" 2>&1)" \
      "[None] False" "--no-pools: the reader marks the tensor as no pool block, and gives no hint"
  fi

  guard p "--limit 4GiB" CMG_GPU_CAP=$cap CMG_GPU_DUMP="$d/dump-p.json" -- \
    "$PY" "$gpudir/torch_pools.py" pools
  pycase p || return
  rep=$d/dump-p.json
  validate "$rep"
  mapfile -t a < <(rq \
    "[g['bytes'] for g in r['leaks'] if g['bytes'] == $leak]" \
    "total(leaks_in('libc10_cuda')) >= $leak" "len(leaks_in('libc10_cuda'))")
  is "${a[0]}" "[]" "pools on: no leak group has the tensor's size"
  is "${a[1]}" True "pools on: the caching allocator's segments, which hold it, are live"
  if [ -x "$tool" ]; then
    "$tool" --json --top 0 "$rep" >"$d/p.summary.json" 2>>"$d/p.err"
    is "$("$PY" -c "import json,sys; s=json.load(open(sys.argv[1]))['summaries'][0]; print(sum(l['pool'] == 'PyTorch caching allocator' for l in s['leaks']), s['pools']['mostly'])" "$d/p.summary.json" 2>&1)" \
      "${a[2]} True" "pools on: the reader marks every caching-allocator group as a pool block, and hints"
    "$tool" "$rep" >"$d/p.summary" 2>>"$d/p.err"
    is "$(grep -c 'rerun with --no-pools to see the tensors' "$d/p.summary")" 1 \
      "pools on: the summary names --no-pools"
  else
    say "torch-pools: no cumemguard-report beside $LAUNCHER: the reader's checks were not run"
  fi
}

# Two processes side by side, each capped at 40%: each fills its share with
# 1 GiB allocations until refused, holds it while the other does, and exits
# 0.  Without the cap the first would take the card and the second would be
# refused early.
case_two_procs() {
  local prog=${PROG_static:-} cap n k script
  if [ -z "$prog" ] || [ ! -x "$prog" ]; then
    fail "cmg_alloc_static not built"
    return
  fi
  [ -z "$dry" ] ||
    say "two-procs: simulated: $(basename "$prog") (each process has its own simulated GPU)"
  cap=$(pct 40)
  n=$((cap / GiB)) k=$((PHYS / GiB + 2))
  script="info"
  for _ in $(seq "$k"); do script="$script alloc 1G"; done
  # Each holds its share for HOLD ms: overlapping, since they start together.
  local hold=4000
  [ -z "$dry" ] || hold=1000
  script="$script sleep $hold info"
  local t0 t1
  t0=$(date +%s%N)
  # shellcheck disable=SC2086
  ( guard a "--limit 40%" CUMEMGUARD_OPTIONS=count_context=0 -- "$prog" $script
    echo "$rc $(date +%s%N)" >"$W/$cur/a.end" ) &
  # shellcheck disable=SC2086
  ( guard b "--limit 40%" CUMEMGUARD_OPTIONS=count_context=0 -- "$prog" $script
    echo "$rc $(date +%s%N)" >"$W/$cur/b.end" ) &
  wait
  local p o rcp endp
  for p in a b; do
    o=$W/$cur/$p.out
    read -r rcp endp <"$W/$cur/$p.end" || rcp=x
    if [ "$(field "$o" info 1 rc)" != 0 ]; then
      fail "process $p could not use CUDA (status $rcp): $(head -n 1 "$o") $(grep -v '^cumemguard: report' "$W/$cur/$p.err" | tail -n 1)"
      continue
    fi
    is "$rcp" 0 "process $p ran to completion"
    is "$(field "$o" info 1 total)" "$cap" "process $p sees 40% of the card"
    is "$(grep -c '^alloc .* rc=0' "$o")" "$n" "process $p got its 40% in 1 GiB allocations"
    is "$(grep -c '^alloc .* rc=2' "$o")" $((k - n)) "process $p was refused the rest"
    [ -n "$endp" ] && [ $((endp - t0)) -ge $((hold * 1000000)) ] 2>/dev/null
    want $? "process $p held its memory for $hold ms after starting with the other"
  done
  t1=$(date +%s%N)
  say "two-procs: $n GiB each of ${PHYS} bytes, both done in $(( (t1 - t0) / 1000000 )) ms"
}

case_two_procs_torch() {
  need_python && dry_framework torch || return
  local cap
  cap=$(pct 40)
  mkdir -p "$W/$cur/barrier"
  ( guard a "--limit 40%" CMG_GPU_CAP="$cap" CMG_GPU_BARRIER="$W/$cur/barrier" -- \
      "$PY" "$gpudir/torch_hold.py" a; echo "$rc" >"$W/$cur/a.rc" ) &
  ( guard b "--limit 40%" CMG_GPU_CAP="$cap" CMG_GPU_BARRIER="$W/$cur/barrier" -- \
      "$PY" "$gpudir/torch_hold.py" b; echo "$rc" >"$W/$cur/b.rc" ) &
  wait
  local p
  for p in a b; do
    rc=$(cat "$W/$cur/$p.rc" 2>/dev/null || echo 1)
    pycase "$p" || return
  done
}

# The cap of the inference-server cases: 20 GiB, or half the card where
# that is less (the dry run's simulated card).
serve_cap() {
  local c=$((20 * GiB))
  [ "$c" -le "$(pct 50)" ] || c=$(pct 50)
  echo "$c"
}

# nvidia-smi as the inference-server cases run it, as a child: on the
# simulated CUDA, tests/gpu/nvsmi.py reads the simulated NVML as nvidia-smi
# reads NVML.
serve_smi() {
  if [ -n "$dry" ]; then echo "$PY $gpudir/nvsmi.py"; else echo nvidia-smi; fi
}

# vLLM's and SGLang's start-up memory arithmetic (tests/gpu/serve_sizing.py:
# the servers' arithmetic on allocations like theirs, not the servers)
# under a group's cap, as CDI and Slurm set one: the start check at
# gpu_memory_utilization 0.9, a profiling run that must see free memory
# fall, the non-torch figure, a captured CUDA graph, the KV cache of the
# size the arithmetic gives, a child nvidia-smi that agrees, and an
# ordinary out-of-memory error past the cap.  First a stand-in through the
# CUDA runtime (no framework, so the dry run runs it; it also takes its KV
# cache with cuMemCreate and sleeps and wakes it), then PyTorch.
case_serve_sizing() {
  need_python || return
  local cap g=cmgsuite-$$-serve smi
  cap=$(serve_cap) smi=$(serve_smi)
  guard cudart "--group $g-c --group-limit $cap" CMG_GPU_CAP="$cap" \
    CMG_GPU_SMI="$smi" -- "$PY" "$gpudir/serve_sizing.py" cudart
  pycase cudart || return
  report_within_group "$cap" cudart || return
  if [ -n "$dry" ]; then
    say "serve-sizing: PyTorch needs a real GPU; the stand-in passed"
    return
  fi
  guard torch "--group $g-t --group-limit $cap" CMG_GPU_CAP="$cap" \
    CMG_GPU_SMI="$smi" -- "$PY" "$gpudir/serve_sizing.py" torch
  pycase torch || return
  report_within_group "$cap" torch
}

# The same arithmetic in two ranks of one group on one card, each asking
# for half of gpu_memory_utilization 0.9, as tensor-parallel tests run on
# a single GPU: both see one total, neither waits for ever, and the KV
# cache they agree on (the smaller) fits for both.
serve_ranks() {
  local what=$1 cap=$2 g=$3 smi=$4 r
  mkdir -p "$W/$cur/barrier-$what"
  for r in 0 1; do
    ( guard "$what$r" "--group $g --group-limit $cap" CMG_GPU_CAP="$cap" \
        CMG_GPU_BARRIER="$W/$cur/barrier-$what" CMG_GPU_SMI="$smi" -- \
        "$PY" "$gpudir/serve_sizing.py" "$what" "$r" 2
      echo "$rc" >"$W/$cur/$what$r.rc" ) &
  done
  wait
  for r in 0 1; do
    rc=$(cat "$W/$cur/$what$r.rc" 2>/dev/null || echo 1)
    pycase "$what$r" || return 1
    report_within_group "$cap" "$what$r" || return 1
  done
  is "$(field "$W/$cur/${what}0.out" RESULT 1 kv)" \
    "$(field "$W/$cur/${what}1.out" RESULT 1 kv)" "the ranks agree on one KV cache"
}

case_serve_two_ranks() {
  need_python || return
  local cap g=cmgsuite-$$-ranks smi
  cap=$(serve_cap) smi=$(serve_smi)
  serve_ranks cudart "$cap" "$g-c" "$smi" || return
  if [ -n "$dry" ]; then
    say "serve-two-ranks: PyTorch needs a real GPU; the stand-in passed"
    return
  fi
  serve_ranks torch "$cap" "$g-t" "$smi"
}

# One-rank torch.distributed over NCCL under the cap: the all-reduce works
# and NCCL's own buffers are counted (tests/gpu/torch_nccl.py).
case_nccl_one_rank() {
  need_python && dry_framework torch || return
  local cap
  cap=$(serve_cap)
  guard py "--limit $cap" CMG_GPU_CAP="$cap" -- "$PY" "$gpudir/torch_nccl.py"
  pycase py || return
  report_within "$cap" py
}

# Overhead: the same loop without and with the interposer, in the order
# bare, guarded, guarded, bare, so that drift (clocks, caches) cancels;
# ratio = sum of guarded medians / sum of bare medians.  FRAMEWORK [OPTIONS
# [ALLOC_CONF]]: the interposer's options (default: stacks on, 32 frames)
# and PYTORCH_CUDA_ALLOC_CONF for both runs.  The guarded runs say how many
# allocations and frees each step made through the hooks, against which the
# ratio is read.
case_overhead() {
  need_python && dry_framework "$1" || return
  local what=$1 opts=${2---stack-depth 32} conf=${3:-}
  local script=$gpudir/overhead_$1.py i v
  local -a b g envs=(CMG_CASE="$cur")
  [ -z "$conf" ] || envs+=(PYTORCH_CUDA_ALLOC_CONF="$conf")
  for i in 1 2 3 4; do
    local name
    case $i in
      1|4) name=bare$i; run "$name" "${envs[@]}" -- "$PY" "$script" ;;
      *) name=guarded$i; guard "$name" "$opts" "${envs[@]}" -- "$PY" "$script" ;;
    esac
    pycase "$name" || return
    v=$(field "$W/$cur/$name.out" RESULT 1 step_ms)
    if [ -z "$v" ]; then fail "$name printed no step time"; return; fi
    case $i in 1|4) b+=("$v") ;; *) g+=("$v") ;; esac
    is "$(field "$W/$cur/$name.out" RESULT 1 guarded)" "$([ "${name#guarded}" != "$name" ] && echo 1 || echo 0)" \
      "$name ran $([ "${name#guarded}" != "$name" ] || echo "without ")under the interposer"
  done
  local ratio verdict
  ratio=$(awk -v b1="${b[0]}" -v b2="${b[1]}" -v g1="${g[0]}" -v g2="${g[1]}" \
    'BEGIN { printf "%.4f", (g1 + g2) / (b1 + b2) }')
  verdict=$(awk -v r="$ratio" 'BEGIN { print (r <= 1.01) ? "within" : "over" }')
  local per=$(field "$W/$cur/guarded2.out" RESULT 1 allocs_per_step)
  say "$cur: step ms bare ${b[0]} ${b[1]}, guarded ${g[0]} ${g[1]}: ratio $ratio ($verdict the 1.01 target); ${per:-?} allocations per step through the hooks"
  [ "$verdict" = within ]
  want $? "step-time ratio $ratio <= 1.01"
}

# CUDA graphs: a graph of two 768 MiB memory nodes (built with
# cudaGraphAddMemAllocNode, or by capturing two cudaMallocAsync) takes its
# memory at launch.  Under a 1 GiB cap the launch fails as out of memory and
# nothing is taken; under 2 GiB it runs, and the interposer counts what the
# driver's graph memory pool reserved, which cudaMemGetInfo then shows.
# Capture itself is never refused, and nothing captured is a leak.
case_graph() {
  local how=$1 prog=${PROG_shared:-} o e
  if [ -z "$prog" ] || [ ! -x "$prog" ]; then
    fail "cmg_alloc_shared not built"
    return
  fi
  # count_context=0: the caps count the graph alone, so that 1.5 GiB fits
  # in 2 GiB whatever the card's context takes.
  guard small "--limit 1GiB" CUMEMGUARD_OPTIONS=count_context=0 -- \
    "$prog" info "$how" 768M info cmg 0
  o=$W/$cur/small.out e=$W/$cur/small.err
  if [ "$(field "$o" info 1 rc)" != 0 ]; then
    fail "the program could not use CUDA (status $rc): $(head -n 1 "$o")"
    return
  fi
  [ "$how" = graph ] ||
    is "$(field "$o" capture 1 a)/$(field "$o" capture 1 b)/$(field "$o" capture 1 end)" \
      0/0/0 "capturing two 768 MiB cudaMallocAsync under 1 GiB is not refused"
  is "$(field "$o" "$how" 1 inst)/$(field "$o" "$how" 1 launch)" 0/2 \
    "instantiation takes nothing; the launch fails as out of memory"
  is "$(lines "$e" 'denied cudaGraphLaunch of 1.5 GiB')" 1 "one denial line"
  is "$(field "$o" info 2 free)/$(field "$o" cmg 1 live)" "$GiB/0" \
    "nothing was taken: the whole 1 GiB is still free"
  report small || return
  is "$(rq 'len(r["leaks"])')" 0 "report: nothing captured or refused is a leak"
  guard big "--limit 2GiB" CUMEMGUARD_OPTIONS=count_context=0 -- \
    "$prog" "$how" 768M cmg 0 info graph_mem
  o=$W/$cur/big.out
  is "$(field "$o" "$how" 1 launch)/$(field "$o" "$how" 1 sync)" 0/0 \
    "under 2 GiB the graph runs"
  local reserved
  reserved=$(field "$o" graph_mem 1 reserved)
  is "$(field "$o" cmg 1 live)" "$reserved" \
    "the interposer counts what the driver's graph pool reserved ($reserved)"
  is "$(field "$o" info 1 free)" $((2 * GiB - reserved)) \
    "cudaMemGetInfo shows the rest of the 2 GiB"
  report big || return
  is "$(rq '[(g["kind"], g["api"]) for g in r["leaks"]]')" \
    "[('graph', 'cudaGraphLaunch')]" \
    "report: the pool's memory is kind graph, from the launch"
  is "$(rq 'r["devices"][0]["graph_memory"]["source"]')" driver \
    "report: the driver's own figures"
}

# A second context made while the runtime's is current is measured both
# by NVML and by the driver's free memory: the two agree within what the
# driver keeps for itself (about 6 MiB per context on an H100).
footprint_cross_check() {
  guard ctx "--limit 4GiB" -- "$1" info ctx_create info
  if [ "$(field "$W/$cur/ctx.out" ctx_create 1 rc)" != 0 ]; then
    fail "cuCtxCreate failed: $(grep '^ctx_create' "$W/$cur/ctx.out")"
    return
  fi
  report ctx || return
  local n nv dr
  n=$(rq '(dev0["footprint"]["cross_check"] or {}).get("contexts")')
  nv=$(rq '(dev0["footprint"]["cross_check"] or {}).get("nvml_bytes") or 0')
  dr=$(rq '(dev0["footprint"]["cross_check"] or {}).get("driver_bytes") or 0')
  is "$n" 1 "the created context was cross-checked against the driver"
  say "cross-check: NVML $((nv / MiB)) MiB, the driver's free memory $((dr / MiB)) MiB"
  [ $((dr - nv)) -le $((32 * MiB)) ] && [ $((nv - dr)) -le $((32 * MiB)) ]
  want $? "NVML and the driver agree within 32 MiB"
}

# Each process's footprint against nvidia-smi: a program holding 1 GiB
# under --limit 4GiB.  The context's cost, measured as it was made, is
# counted by the cap (count_context=1, the default): cudaMemGetInfo's used
# is the allocation plus the context, nvidia-smi shows no more than the cap
# for the process, and the report's NVML figure for the process is
# nvidia-smi's.
case_footprint() {
  local prog=${PROG_shared:-} o pid smi=
  if [ -z "$prog" ] || [ ! -x "$prog" ]; then
    fail "cmg_alloc_shared not built"
    return
  fi
  # It holds its gigabyte while nvidia-smi is asked; a dry run asks nothing.
  local hold=4000
  [ -n "$dry" ] && hold=0
  guard app "--limit 4GiB" -- "$prog" pid info \
    alloc 1G info sleep "$hold" &
  o=$W/$cur/app.out
  local i=0
  # While it sleeps holding its gigabyte: both info lines are out.
  while [ $i -lt 600 ] && [ "$(grep -c '^info' "$o" 2>/dev/null)" != 2 ]; do
    sleep 0.1
    i=$((i + 1))
  done
  pid=$(field "$o" pid 1 pid)
  if [ -z "$dry" ] && command -v nvidia-smi >/dev/null 2>&1; then
    smi=$(nvidia-smi --query-compute-apps=pid,used_memory \
            --format=csv,noheader,nounits 2>/dev/null |
          awk -F', *' -v p="$pid" '$1 == p { print $2 }')
  fi
  wait
  if [ "$(field "$o" info 1 rc)" != 0 ]; then
    fail "the program could not use CUDA: $(head -n 1 "$o")"
    return
  fi
  report app || return
  local ctx proc
  ctx=$(rq 'dev0["footprint"]["context_bytes"] or 0')
  proc=$(rq 'dev0["footprint"]["process_bytes"] or 0')
  is "$(rq 'dev0["footprint"]["source"], dev0["footprint"]["counted"]')" \
    "('nvml', True)" "the context's cost was measured by NVML and is counted"
  [ "$ctx" -gt 0 ] 2>/dev/null
  want $? "the context took memory ($ctx bytes)"
  is "$(( $(field "$o" info 2 total) - $(field "$o" info 2 free) ))" \
    "$((GiB + $ctx))" "cudaMemGetInfo's used is the allocation plus the context"
  say "footprint: context $(($ctx / MiB)) MiB, NVML $(($proc / MiB)) MiB, nvidia-smi ${smi:--} MiB, unexplained $(rq 'dev0["footprint"]["unexplained_bytes"]') bytes"
  footprint_cross_check "$prog"
  [ -n "$dry" ] && return
  if [ -z "$smi" ]; then
    fail "nvidia-smi did not list pid $pid"
    return
  fi
  [ "$smi" -le 4096 ]
  want $? "nvidia-smi shows $smi MiB for the process, within the 4 GiB cap"
  [ $(( $proc / MiB - smi )) -le 2 ] && [ $(( smi - $proc / MiB )) -le 2 ]
  want $? "the report's NVML figure is nvidia-smi's (within 2 MiB)"
}

