#!/bin/sh
# The real-GPU suite where there is no GPU: it runs nothing and says so; its
# dry run on the simulated CUDA passes (and fails where it must); the bundle
# builds, stays small, and its own copy of the suite runs.
. "$srcdir/tests/lib/defs.sh"
suite=$srcdir/scripts/gpu-suite

# No GPU: one line, status 0, nothing counted as passed.
if [ -e /dev/nvidia0 ]; then
  echo "ok 1 # SKIP this machine has /dev/nvidia0"
  tap_n=1
else
  bash "$suite" --build "$top_builddir" >"$tmp/out" 2>"$tmp/err"
  st=$?
  is "$st/$(wc -l <"$tmp/out")" 0/1 "without a GPU: status 0, one line"
  is "$(grep -c '^no GPU: nothing run' "$tmp/out")" 1 "it says no GPU, nothing run"
  is "$(grep -Ec 'passed|^PASS' "$tmp/out")" 0 "and counts nothing as passed"
fi

# The dry run: the nvcc cases on tests/gpu/cmg_alloc.cu itself, built
# against the simulated runtime; the ctypes case, XLA's sizing under a
# group's cap, graphs, two processes, an inference server's sizing alone
# and as two ranks; the framework cases skip.
bash "$suite" --build "$top_builddir" --dry-run -v --keep "$tmp/dry" \
  >"$tmp/out" 2>"$tmp/err"
is "$?" 0 "the dry run passes"
for c in nvcc-static nvcc-shared ctypes-cudart jax-group graph-nodes \
  graph-capture footprint two-procs serve-sizing serve-two-ranks; do
  is "$(grep -c "^PASS $c\$" "$tmp/out")" 1 "dry run: PASS $c"
done
is "$(grep -c '^SKIP ' "$tmp/out")" 14 "dry run: the 14 framework cases skip"
is "$(grep -Ec '^(PASS|FAIL|SKIP) ' "$tmp/out")" 24 "one line per case"
is "$(tail -n 1 "$tmp/out")" "10 passed, 0 failed, 14 skipped" "the closing line"
for c in overhead-torch overhead-torch-async overhead-torch-expandable; do
  is "$(grep -c "^SKIP $c: torch not installed\$" "$tmp/out")" 1 "dry run: $c is a case, and skips without PyTorch"
done
is "$(grep -c '^CHECK ok a pool of 75% of the total is allocated: rc=0' "$tmp/dry/jax-group/xla.out")" 1 \
  "dry run: jax-group sized XLA's pool from the group's cap"
# The inference-server stand-in did the arithmetic: under the dry run's
# cap (half the 16 GiB card) vLLM's KV cache is allocated, a child reading
# NVML shows the cap (8192 MiB) and the usage, and the two ranks agree.
for want in "the KV cache of the size the arithmetic gives is allocated" \
  "nvidia-smi's memory.total is the cap (SGLang's defaults): 8192 MiB, cap 8192 MiB" \
  "nvidia-smi's free and used (with reserved) agree with cudaMemGetInfo" \
  "sleep gives the KV cache back to the cap, wake takes it again"; do
  is "$(grep -c "^CHECK ok $want" "$tmp/dry/serve-sizing/cudart.out")" 1 \
    "dry run: serve-sizing: $want"
done
is "$(grep -c '^CHECK ok every rank sees the same total and free at start' \
  "$tmp/dry/serve-two-ranks/cudart0.out" "$tmp/dry/serve-two-ranks/cudart1.out" |
  cut -d: -f2 | tr '\n' ' ')" "1 1 " "dry run: serve-two-ranks: both ranks saw one total"
is "$(grep -c '^ok: the ranks agree on one KV cache' "$tmp/dry/serve-two-ranks/checks")" 1 \
  "dry run: serve-two-ranks: the ranks agreed on one KV cache"
tap "$(grep -q 'DRY RUN' "$tmp/out"; echo $?)" "the dry run says it is one"

# It ran the nvcc program: its cmg line, through the public header's
# cmg_device_stats, has the counters the case checks (a call that drifted
# from the header prints rc= or wrong values, and the case fails), and the
# report's stacks name its functions in its own module.
for k in static shared; do
  p=$top_builddir/tests/gpu/cmg_alloc_sim_$k
  is "$(grep -cF "# nvcc-$k: simulated: $p," "$tmp/out")" 1 \
    "dry run: nvcc-$k ran cmg_alloc_sim_$k"
  want='^cmg dev=0 limit=1073741824 physical=[0-9]* live=939524096'
  want="$want peak=1073741824 live_allocs=4 allocs=5 frees=1 denials=1\$"
  is "$(grep -c "$want" "$tmp/dry/nvcc-$k/app.out")" 1 \
    "dry run: nvcc-$k's cmg line"
  want="^ok: the interposer's counters: limit, 896 MiB live, 1 denial\$"
  is "$(grep -c "$want" "$tmp/dry/nvcc-$k/checks")" 1 \
    "dry run: nvcc-$k checked the counters"
  is "$("$PYTHON3" "$srcdir/tests/gpu/report_query.py" \
        "$tmp/dry/nvcc-$k"/app.*.json '[m for g in leaks_with("cmgtest_site_1")
          for f, m in zip(fns(g["stack"]), mods(g["stack"]))
          if f.startswith("cmgtest_")]' 2>&1)" \
    "['cmg_alloc_sim_$k', 'cmg_alloc_sim_$k']" \
    "dry run: nvcc-$k's report: cmgtest_site_1 and its leaf, in its module"
done

# Where the cap does not show, the cases fail, and the suite says why.
CMG_GPU_SIM_DEVICES=512M bash "$suite" --build "$top_builddir" --dry-run \
  --only nvcc-static,ctypes-cudart >"$tmp/out" 2>"$tmp/err"
is "$?" 1 "failing cases: status 1"
is "$(grep -c '^FAIL nvcc-static: cudaMemGetInfo shows the 1 GiB limit' "$tmp/out")" 1 \
  "FAIL nvcc-static names the check"
is "$(grep -c '^FAIL ctypes-cudart: cudaMemGetInfo total is the cap' "$tmp/out")" 1 \
  "FAIL ctypes-cudart names the check"
is "$(tail -n 1 "$tmp/out")" "0 passed, 2 failed, 0 skipped" "the closing line counts them"

bash "$suite" --only no-such-case >"$tmp/out" 2>"$tmp/err"
is "$?" 2 "an unknown case is a usage error"

# The bundle, from this build tree.
# One architecture only: nvcc takes seconds per architecture.
CMG_GPU_ARCH=sm_90 bash "$srcdir/scripts/gpu-bundle" --no-build --build "$top_builddir" "$tmp/b" \
  >"$tmp/out" 2>"$tmp/err"
is "$?" 0 "the bundle builds"
b=$tmp/b
for f in run README bin/cumemguard lib/libcumemguard.so scripts/gpu-suite \
         tests/gpu/cmgcase.py tests/gpu/cases.sh tests/gpu/cmg_alloc.cu \
         include/cumemguard.h \
         tests/sim/cmg_alloc_sim_static tests/sim/cmg_alloc_sim_shared; do
  tap "$([ -e "$b/$f" ]; echo $?)" "the bundle has $f"
done
if grep -q 'nvcc programs built' "$tmp/out"; then
  for p in cmg_alloc_static cmg_alloc_shared libcudart.so.13; do
    tap "$([ -s "$b/tests/gpu/bin/$p" ]; echo $?)" "nvcc built $p into the bundle"
  done
else
  echo "# nvcc not found: the bundle has no prebuilt programs"
fi
# build.sh finds the header in the bundle too (a stand-in nvcc that makes
# its output only when an -I folder holds cumemguard.h).
cat >"$tmp/nvcc" <<'EOF'
#!/bin/sh
out= found=
while [ $# -gt 0 ]; do
  case $1 in
    -I*) [ -f "${1#-I}/cumemguard.h" ] && found=1 ;;
    -o) out=$2; shift ;;
  esac
  shift
done
[ -n "$found" ] && : >"$out"
EOF
chmod +x "$tmp/nvcc"
NVCC=$tmp/nvcc sh "$b/tests/gpu/build.sh" "$b/tests/gpu" "$tmp/bb" \
  >"$tmp/out" 2>"$tmp/err"
is "$?/$(ls "$tmp/bb" | tr '\n' ' ')" "0/cmg_alloc_shared cmg_alloc_static " \
  "the bundle's build.sh gives nvcc the bundle's include folder"
for so in $(ldd "$top_builddir/.libs/libcumemguard.so" | awk '$2 == "=>" {print $1}' |
            grep -Ev '^(libc|libm|libdl|libpthread|librt|libgcc_s|libstdc\+\+)\.so'); do
  tap "$([ -e "$b/lib/deps/$so" ]; echo $?)" "the bundle carries $so"
done
kib=$(du -sk "$b" | cut -f1)
tap "$([ "$kib" -lt 16384 ]; echo $?)" "the bundle is small ($kib KiB)"
if [ ! -e /dev/nvidia0 ]; then
  bash "$b/run" >"$tmp/out" 2>&1
  st=$?
  is "$st/$(cut -c1-19 "$tmp/out")" "0/no GPU: nothing run" "the bundle's suite runs nothing without a GPU"
fi
bash "$b/run" --dry-run -v --only nvcc-static,ctypes-cudart \
  >"$tmp/out" 2>"$tmp/err"
st=$?
is "$st/$(tail -n 1 "$tmp/out")" "0/2 passed, 0 failed, 0 skipped" \
  "the bundle's dry run passes"
want="# nvcc-static: simulated: $b/tests/sim/cmg_alloc_sim_static,"
is "$(grep -cF "$want" "$tmp/out")" 1 \
  "the bundle's dry run runs the bundle's cmg_alloc_sim_static"

done_testing
