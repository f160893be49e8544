#!/bin/sh
# Installs what building and testing cumemguard needs on Debian 12 or newer.
# Run as root (or with sudo).  NVIDIA's CUDA toolkit headers are expected in
# /usr/local/cuda; without them Debian's nvidia-cuda-dev (component non-free)
# is tried, and configure is then pointed at it with --with-cuda=/usr.
set -eu
export DEBIAN_FRONTEND=noninteractive
pkgs="autoconf automake libtool make gcc pkg-config libunwind-dev libcjson-dev python3 python3-jsonschema libxml2-utils clang libclang-rt-14-dev valgrind"
apt-get update -qq
apt-get install -y -qq --no-install-recommends $pkgs >/dev/null
if [ ! -f /usr/local/cuda/include/cuda.h ] && [ ! -f /usr/include/cuda.h ]; then
  if ! apt-get install -y -qq --no-install-recommends nvidia-cuda-dev >/dev/null 2>&1; then
    echo "install-deps: NVIDIA's CUDA headers (cuda.h) are not installed and no Debian" >&2
    echo "install-deps: package provides them here; install the CUDA toolkit into /usr/local/cuda" >&2
    exit 1
  fi
fi
echo "install-deps: done"
