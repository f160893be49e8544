#!/bin/sh
# Builds the nvcc test programs of the real-GPU suite:
#   OUTDIR/cmg_alloc_static   (-cudart static, nvcc's default)
#   OUTDIR/cmg_alloc_shared   (-cudart shared: libcudart.so.13)
# usage: build.sh [--copy-cudart] SRCDIR OUTDIR
# nvcc: $NVCC, else $CUDA_HOME/bin/nvcc, else nvcc on PATH, else
# /usr/local/cuda/bin/nvcc.  No GPU is needed to build.  --copy-cudart also
# copies the toolkit's libcudart.so.13 into OUTDIR, where the shared program
# looks first (RUNPATH $ORIGIN), so that a bundle runs on a machine whose
# libcudart.so.13 is not on the loader's path.
# Used by tests/gpu/local.mk (--enable-gpu-tests), scripts/gpu-bundle and,
# as a fallback on the GPU machine, scripts/gpu-suite.
set -eu
copy=no
if [ "${1:-}" = --copy-cudart ]; then copy=yes; shift; fi
[ $# -eq 2 ] || { echo "usage: $0 [--copy-cudart] SRCDIR OUTDIR" >&2; exit 2; }
src=$1 out=$2

nvcc=${NVCC:-}
if [ -z "$nvcc" ] && [ -n "${CUDA_HOME:-}" ] && [ -x "$CUDA_HOME/bin/nvcc" ]; then
  nvcc=$CUDA_HOME/bin/nvcc
fi
[ -n "$nvcc" ] || nvcc=$(command -v nvcc 2>/dev/null || true)
[ -n "$nvcc" ] || { [ -x /usr/local/cuda/bin/nvcc ] && nvcc=/usr/local/cuda/bin/nvcc; } || true
[ -n "$nvcc" ] || { echo "build.sh: nvcc not found (set NVCC or CUDA_HOME)" >&2; exit 1; }
cuda=$(cd "$(dirname "$(readlink -f "$nvcc")")/.." && pwd)
cudalib=$cuda/lib64
[ -d "$cudalib" ] || cudalib=$cuda/lib

mkdir -p "$out"
# Host code at -O1 with frame pointers and no sibling calls, so the
# cmgtest_* frames stay frames; --export-dynamic so dladdr names them.
# all-major: machine code for every major architecture CUDA 13 supports
# (sm_75 to sm_120) plus PTX, so one build runs on any current card;
# CMG_GPU_ARCH=sm_90 (say) builds for one only, faster.
flags="-std=c++17 -O1 -arch=${CMG_GPU_ARCH:-all-major} -Xcompiler -fno-omit-frame-pointer
  -Xcompiler -fno-optimize-sibling-calls -Xlinker --export-dynamic -ldl"
# shellcheck disable=SC2086
"$nvcc" $flags -cudart static -o "$out/cmg_alloc_static" "$src/cmg_alloc.cu"
# shellcheck disable=SC2086
# DT_RPATH (--disable-new-dtags), which LD_LIBRARY_PATH does not override:
# the libcudart.so.13 beside the program, if any, is the one it runs with.
"$nvcc" $flags -cudart shared -Xlinker --disable-new-dtags \
  -Xlinker -rpath -Xlinker '$ORIGIN' \
  -Xlinker -rpath -Xlinker "$cudalib" \
  -o "$out/cmg_alloc_shared" "$src/cmg_alloc.cu"
if [ $copy = yes ]; then
  cp -L "$cudalib/libcudart.so.13" "$out/libcudart.so.13"
fi
