# Sourced by tests/containers/t-*.sh: the integration tests' helpers, and
# the portable folder (make portable, with the simulated CUDA built in the
# same Debian 11 root), which the tests build under one lock because make
# check runs them at once.
. "$srcdir/tests/integration/defs.sh"
PORTABLE=$top_builddir/portable
PORTABLE_SIM=$top_builddir/portable-sim

# skip_all REASON: the whole test is skipped, in one line.
skip_all() {
  echo "1..0 # SKIP $*"
  exit 0
}

# need_portable: skips unless the portable folder can be built here.
need_portable() {
  [ "$(id -u)" -eq 0 ] ||
    skip_all "needs root: debootstrap and chroot build the portable folder"
  command -v debootstrap >/dev/null 2>&1 ||
    skip_all "debootstrap is not installed (scripts/install-deps.sh installs it)"
}

# build_portable: make portable with the simulated CUDA, one TAP line, and
# how long it took as a comment.  The first run on a machine bootstraps
# Debian 11 (the archive must be reachable); later ones only build.
build_portable() {
  _start=$(date +%s)
  env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL \
    flock "$top_builddir/portable.lock" make -s -C "$top_builddir" portable \
    PORTABLE_SIM="$PORTABLE_SIM" >"$tmp/out" 2>"$tmp/err"
  tap $? "make portable writes the folder, built in Debian 11"
  echo "# make portable: $(($(date +%s) - _start)) s, $(tail -n 1 "$tmp/out")"
}
