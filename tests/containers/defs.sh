# Sourced by tests/containers/t-*.sh: the integration tests' helpers, and
# the portable folder (make portable, with the simulated CUDA built in the
# same Debian 11 root), which the tests build under one lock because make
# check runs them at once.
. "$srcdir/tests/lib/defs.sh"
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

# podman_setup: Podman configured in the temporary directory $P (runc,
# cgroupfs under $CG, vfs storage, state and events there), a trap that
# removes what the test made (and runs cleanup_more first, if the test
# defines it), and pm, podman with runc's state there too.  Needs P, CG and
# CDI set.
podman_setup() {
  # What exists on the host before, so that only what the test made goes.
  made=
  for d in /var/lib/containers /run/libpod /run/runc /run/containers "$CDI"; do
    [ -e "$d" ] || made="$made $d"
  done
  cleanup() {
    if command -v cleanup_more >/dev/null 2>&1; then cleanup_more; fi
    pm pod rm -a -f -t 0 >/dev/null 2>&1
    pm rm -a -f -t 0 >/dev/null 2>&1
    rm -f "$CDI/cmgtest-$$-"*.json
    for d in /sys/fs/cgroup/*"$CG"; do
      [ -d "$d" ] && find "$d" -depth -type d -exec rmdir {} + 2>/dev/null
    done
    # shellcheck disable=SC2086
    for d in $made; do rm -rf "$d"; done
    chmod -R u+w "$tmp" 2>/dev/null
    rm -rf "$tmp"
  }
  trap cleanup EXIT

  cat >"$P/containers.conf" <<EOF
[containers]
default_ulimits = []
[engine]
cgroup_manager = "cgroupfs"
runtime = "runc"
events_logger = "file"
events_logfile_path = "$P/events.log"
tmp_dir = "$P/libpod"
EOF
  cat >"$P/storage.conf" <<EOF
[storage]
driver = "vfs"
graphroot = "$P/storage"
runroot = "$P/run"
EOF
  CONTAINERS_CONF=$P/containers.conf CONTAINERS_STORAGE_CONF=$P/storage.conf
  export CONTAINERS_CONF CONTAINERS_STORAGE_CONF
  echo "# Podman $(podman --version | sed 's/.* //'), runc $(runc --version | sed -n '1s/.* //p'), configured in $P:" \
    "runtime runc, cgroup_manager cgroupfs, default_ulimits [], storage, state and events there"
  if [ "$(stat -fc %T /sys/fs/cgroup)" = tmpfs ] &&
    [ "$(stat -fc %T /sys/fs/cgroup/unified 2>/dev/null)" = cgroup2fs ]; then
    echo "# runc, not crun: crun refuses this machine's hybrid cgroup tree" \
      "(cgroup v1 controllers, cgroup2 at /sys/fs/cgroup/unified)"
  fi
  [ -d /run/systemd/system ] ||
    echo "# cgroup_manager cgroupfs: no systemd runs here; each container's cgroup is under $CG, removed at the end"
  # shellcheck disable=SC3045  # dash and bash have ulimit -H
  if [ "$(ulimit -Hn)" != unlimited ] && [ "$(ulimit -Hn)" -lt 1048576 ]; then
    echo "# default_ulimits []: Podman's default raises a container's open files" \
      "to 1048576, above this machine's hard limit ($(ulimit -Hn)), which runc" \
      "may not do here (setrlimit: operation not permitted)"
  fi

  # pm ARGS...: podman, with runc's state in the temporary directory too.
  pm() {
    podman --runtime-flag "root=$P/runc" "$@"
  }
}
