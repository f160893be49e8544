#!/bin/sh
# Builds the nvcc test programs of the real-GPU suite:
#   OUTDIR/cmg_alloc_static   (-cudart static, nvcc's default)
#   OUTDIR/cmg_alloc_shared   (-cudart shared: libcudart.so.13)
# or, with --sim SIMDIR (the build folder of tests/sim), the same program
# against the project's simulated runtime, for the suite's dry run:
#   OUTDIR/cmg_alloc_sim_static   (SIMDIR/libcudart_static.a)
#   OUTDIR/cmg_alloc_sim_shared   (libcudart.so.13 of SIMDIR/.libs, found
#                                  on LD_LIBRARY_PATH when it runs)
# usage: build.sh [--copy-cudart | --sim SIMDIR] SRCDIR OUTDIR
# The public header cumemguard.h comes from SRCDIR/../../include (the
# source tree, and a bundle, which keeps that layout), else SRCDIR.
# nvcc: $NVCC, else $CUDA_HOME/bin/nvcc, else nvcc on PATH, else
# /usr/local/cuda/bin/nvcc.  No GPU is needed to build.  --copy-cudart also
# copies the toolkit's libcudart.so.13 into OUTDIR, where the shared program
# looks first (RUNPATH $ORIGIN), so that a bundle runs on a machine whose
# libcudart.so.13 is not on the loader's path.
# Used by tests/gpu/local.mk (--enable-gpu-tests), scripts/gpu-bundle and,
# as a fallback on the GPU machine, scripts/gpu-suite.
set -eu
copy=no sim=
case ${1:-} in
  --copy-cudart) copy=yes; shift ;;
  --sim) sim=${2:?--sim needs the build folder of tests/sim}; shift 2 ;;
esac
[ $# -eq 2 ] ||
  { echo "usage: $0 [--copy-cudart | --sim SIMDIR] SRCDIR OUTDIR" >&2; exit 2; }
src=$1 out=$2
inc=$src/../../include
[ -f "$inc/cumemguard.h" ] || inc=$src
if [ ! -f "$inc/cumemguard.h" ]; then
  echo "build.sh: cumemguard.h is in neither $src/../../include nor $src" >&2
  exit 1
fi

nvcc=${NVCC:-}
if [ -z "$nvcc" ] && [ -n "${CUDA_HOME:-}" ] && [ -x "$CUDA_HOME/bin/nvcc" ]; then
  nvcc=$CUDA_HOME/bin/nvcc
fi
[ -n "$nvcc" ] || nvcc=$(command -v nvcc 2>/dev/null || true)
[ -n "$nvcc" ] || { [ -x /usr/local/cuda/bin/nvcc ] && nvcc=/usr/local/cuda/bin/nvcc; } || true
if [ -z "$nvcc" ]; then
  echo "build.sh: nvcc not found: set NVCC or CUDA_HOME, or install the" \
    "CUDA toolkit (scripts/install-deps.sh)" >&2
  exit 1
fi
cuda=$(cd "$(dirname "$(readlink -f "$nvcc")")/.." && pwd)
cudalib=$cuda/lib64
[ -d "$cudalib" ] || cudalib=$cuda/lib

mkdir -p "$out"
# Host code at -O1 with frame pointers and no sibling calls, so the
# cmgtest_* frames stay frames; --export-dynamic so dladdr names them.
host="-std=c++17 -O1 -Xcompiler -fno-omit-frame-pointer
  -Xcompiler -fno-optimize-sibling-calls -Xlinker --export-dynamic -ldl"

if [ -n "$sim" ]; then
  # One compile, two links.  The simulated device runs no code, so one
  # architecture will do.  The simulated runtime's declarations of nvcc's
  # registration and launch entry points are forced into the compile,
  # where the C++ compiler holds them to NVIDIA's own.  No run path: the
  # suite's dry run puts SIMDIR/.libs on LD_LIBRARY_PATH.
  t=$out/cmg_alloc_sim
  trap 'rm -f "$t.o" "$t.static.tmp" "$t.shared.tmp"' EXIT
  # shellcheck disable=SC2086
  "$nvcc" $host -arch="${CMG_GPU_ARCH:-sm_90}" -I"$inc" \
    -include "$src/../sim/cudart.h" -c -o "$t.o" "$src/cmg_alloc.cu"
  # shellcheck disable=SC2086
  "$nvcc" $host -cudart none -o "$t.static.tmp" "$t.o" \
    "$sim/libcudart_static.a" -lpthread
  # shellcheck disable=SC2086
  "$nvcc" $host -cudart none -o "$t.shared.tmp" "$t.o" \
    -Xlinker "$sim/.libs/libcudart.so.13"
  mv "$t.static.tmp" "${t}_static"
  mv "$t.shared.tmp" "${t}_shared"
  exit 0
fi

# all-major: machine code for every major architecture CUDA 13 supports
# (sm_75 to sm_120) plus PTX, so one build runs on any current card;
# CMG_GPU_ARCH=sm_90 (say) builds for one only, faster.
flags="$host -arch=${CMG_GPU_ARCH:-all-major}"
# shellcheck disable=SC2086
"$nvcc" $flags -I"$inc" -cudart static -o "$out/cmg_alloc_static" \
  "$src/cmg_alloc.cu"
# shellcheck disable=SC2086
# DT_RPATH (--disable-new-dtags), which LD_LIBRARY_PATH does not override:
# the libcudart.so.13 beside the program, if any, is the one it runs with.
"$nvcc" $flags -I"$inc" -cudart shared -Xlinker --disable-new-dtags \
  -Xlinker -rpath -Xlinker '$ORIGIN' \
  -Xlinker -rpath -Xlinker "$cudalib" \
  -o "$out/cmg_alloc_shared" "$src/cmg_alloc.cu"
if [ $copy = yes ]; then
  cp -L "$cudalib/libcudart.so.13" "$out/libcudart.so.13"
fi
