#!/bin/sh
# The real-GPU suite where there is no GPU: it runs nothing and says so; its
# dry run on the simulated CUDA passes (and fails where it must); the bundle
# builds, stays small, and its own copy of the suite runs.
. "$srcdir/tests/integration/defs.sh"
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

# The dry run: the nvcc cases on the simulated stand-ins, the ctypes case,
# two processes; the framework cases skip.
bash "$suite" --build "$top_builddir" --dry-run --keep "$tmp/dry" \
  >"$tmp/out" 2>"$tmp/err"
is "$?" 0 "the dry run passes"
for c in nvcc-static nvcc-shared ctypes-cudart two-procs; do
  is "$(grep -c "^PASS $c\$" "$tmp/out")" 1 "dry run: PASS $c"
done
is "$(grep -c '^SKIP ' "$tmp/out")" 11 "dry run: the 11 framework cases skip"
is "$(grep -Ec '^(PASS|FAIL|SKIP) ' "$tmp/out")" 15 "one line per case"
is "$(tail -n 1 "$tmp/out")" "4 passed, 0 failed, 11 skipped" "the closing line"
tap "$(grep -q 'DRY RUN' "$tmp/out"; echo $?)" "the dry run says it is one"

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
         tests/gpu/cmgcase.py tests/gpu/cmg_alloc.cu tests/sim/app_rt_static; do
  tap "$([ -e "$b/$f" ]; echo $?)" "the bundle has $f"
done
if grep -q 'nvcc programs built' "$tmp/out"; then
  for p in cmg_alloc_static cmg_alloc_shared libcudart.so.13; do
    tap "$([ -s "$b/tests/gpu/bin/$p" ]; echo $?)" "nvcc built $p into the bundle"
  done
else
  echo "# nvcc not found: the bundle has no prebuilt programs"
fi
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
bash "$b/run" --dry-run --only nvcc-static,ctypes-cudart >"$tmp/out" 2>"$tmp/err"
st=$?
is "$st/$(tail -n 1 "$tmp/out")" "0/2 passed, 0 failed, 0 skipped" \
  "the bundle's dry run passes"

done_testing
