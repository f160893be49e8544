#!/bin/sh
# Installs what building and testing cumemguard needs on Debian 12 or newer:
# the one place that does, so a fresh machine passes the tests.
#
# Installing packages needs root.  Run as root (a container, CI) it installs
# directly; run as a user with sudo it asks sudo for the install only;
# otherwise it says what to do and exits 1 before changing anything.
# NVIDIA's CUDA toolkit headers are expected in /usr/local/cuda; without
# them Debian's nvidia-cuda-dev (component non-free) is tried, which
# configure finds in /usr/include by itself, and without its nvcc, which
# make check needs, Debian's nvidia-cuda-toolkit.  Slurm's packages build the
# SPANK plugin and let tests/slurm/t-slurm.sh start a one-node Slurm of its
# own; no daemon is configured here.  Go and the Container Device
# Interface's reference library check `cumemguard cdi`'s specs, and
# prometheus's promtool the metrics of `cumemguard status --prometheus`
# (Debian ships promtool only in that package, whose server systemd starts
# where systemd runs: `systemctl disable --now prometheus` stops it).
# debootstrap makes the Debian 11 root that `make portable` builds in (the
# archive must be reachable the first time); Podman, with runc and
# catatonit (the pause process of Podman's pods), runs the container tests
# (tests/containers), which configure it in a temporary directory.
# gRPC's C++ library and its code generators build the Kubernetes device
# plugin; Debian's python3-grpcio runs the kubelet stand-in that tests it,
# and python3-kubernetes and python3-yaml parse its deployment files.
# libdebuginfod1 is the client the reader loads only when DEBUGINFOD_URLS
# is set (tests/reader/t-symbols.sh); strace counts the system calls a
# capture makes (tests/hardening/t-hostile.sh); libpython3.11, the shared
# interpreter, runs Python inside the unit test of the Python frames'
# splice (tests/unit/test_pyframes.c).
# Chromium and Node.js run the html pages' tests (tests/html): npm installs
# puppeteer-core, at the versions tests/html/package-lock.json pins, into
# /usr/local/lib/cumemguard-tests; it drives Debian's chromium and
# downloads no browser.
set -eu

pkgs="autoconf automake libtool make gcc pkg-config libunwind-dev libcjson-dev
python3 python3-jsonschema libxml2-utils clang clang-format libclang-rt-14-dev valgrind
mandoc slurmctld slurmd slurm-client munge libslurm-dev golang-go
golang-github-container-orchestrated-devices-container-device-interface-dev
prometheus protobuf-c-compiler libprotobuf-c-dev zlib1g-dev
libdw-dev libiberty-dev g++ patchelf chromium debootstrap podman runc
catatonit libgrpc++-dev protobuf-compiler-grpc protobuf-compiler
libprotobuf-dev python3-grpcio python3-protobuf python3-kubernetes
python3-yaml libdebuginfod1 strace libpython3.11"

# Node.js 18 or newer with npm: Debian's, unless one is installed already.
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  pkgs="$pkgs nodejs npm"
fi

# CMG_APT names the package tool, for tests that must not install anything.
apt=${CMG_APT:-apt-get}

if [ "$(id -u)" -eq 0 ]; then
  as_root=
elif command -v sudo >/dev/null 2>&1; then
  as_root=sudo
  echo "install-deps: not root: asking sudo to run $apt" >&2
else
  echo "install-deps: installing packages needs root, and sudo is not" \
    "installed: run this script as root (su -c $0)" >&2
  exit 1
fi

export DEBIAN_FRONTEND=noninteractive
$as_root env DEBIAN_FRONTEND=noninteractive $apt update -qq
# shellcheck disable=SC2086  # one word per package
$as_root env DEBIAN_FRONTEND=noninteractive \
  $apt install -y -qq --no-install-recommends $pkgs >/dev/null
if [ ! -f /usr/local/cuda/include/cuda.h ] && [ ! -f /usr/include/cuda.h ]; then
  if ! $as_root env DEBIAN_FRONTEND=noninteractive \
      $apt install -y -qq --no-install-recommends nvidia-cuda-dev >/dev/null 2>&1; then
    echo "install-deps: NVIDIA's CUDA headers (cuda.h) are not installed and no Debian" >&2
    echo "install-deps: package provides them here; install the CUDA toolkit into /usr/local/cuda" >&2
    exit 1
  fi
fi
# nvcc builds the real-GPU suite's program for the simulated CUDA in make
# check; Debian's toolkit (non-free) is the fallback for NVIDIA's.
if [ ! -x /usr/local/cuda/bin/nvcc ] && ! command -v nvcc >/dev/null 2>&1; then
  if ! $as_root env DEBIAN_FRONTEND=noninteractive \
      $apt install -y -qq --no-install-recommends nvidia-cuda-toolkit >/dev/null 2>&1; then
    echo "install-deps: nvcc is not installed and no Debian package" >&2
    echo "install-deps: provides it here; install the CUDA toolkit into" >&2
    echo "install-deps: /usr/local/cuda" >&2
    exit 1
  fi
fi

tests=/usr/local/lib/cumemguard-tests
here=$(cd "$(dirname "$0")/.." && pwd)
if ! cmp -s "$here/tests/html/package-lock.json" "$tests/package-lock.json" ||
   [ ! -d "$tests/node_modules/puppeteer-core" ]; then
  $as_root mkdir -p "$tests"
  $as_root cp "$here/tests/html/package.json" "$here/tests/html/package-lock.json" "$tests/"
  (cd "$tests" && $as_root npm ci --silent --no-audit --no-fund) || {
    echo "install-deps: npm could not install puppeteer-core into $tests" >&2
    exit 1
  }
fi
echo "install-deps: done"
