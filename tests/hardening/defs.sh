# Sourced by every tests/hardening/t-*.sh: the integration tests' helpers
# (tests/lib/defs.sh) plus what the fault-injection tests need: the
# hardening test programs and a private mount namespace for the cases
# that need a file system of their own (read-only, full).
. "$srcdir/tests/lib/defs.sh"

HARD=$top_builddir/tests/hardening
M=1048576
# Under valgrind (a CMG_TEST_PREFIX naming it) every process is some 50 times slower:
# the tests that repeat a race run it fewer times, with fewer threads.
SLOW=
if [ -n "${CMG_TEST_PREFIX:-}" ] && [ -z "${CMG_TEST_PREFIX##*valgrind*}" ]; then
  SLOW=1
  APP_HARD_YIELD=1
  export APP_HARD_YIELD
fi
unset CMG_SIM_FAIL_ALLOC_AFTER CMG_SIM_FAIL_FREE_AFTER CMG_SIM_FORK_POISON

# skip_n N WHY: N skipped test points.
skip_n() {
  i=0
  while [ "$i" -lt "$1" ]; do
    tap_n=$((tap_n + 1))
    echo "ok $tap_n # SKIP $2"
    i=$((i + 1))
  done
}

# lines PATTERN: how many stderr lines contain the fixed string.
lines() {
  grep -cF -- "$1" "$tmp/err"
}

# same_output BARE GUARDED: the two outputs are the same once the lines of
# the interposer's own query (`cmg`, "absent" without it) are left out.
same_output() {
  grep -v '^cmg ' "$1" >"$tmp/same.a"
  grep -v '^cmg ' "$2" >"$tmp/same.b"
  cmp -s "$tmp/same.a" "$tmp/same.b"
}

# Whether this process can make a private mount namespace and mount a
# tmpfs in it: as root (unshare -m), or as a user with user namespaces
# (unshare -rm, where we are root of our own namespace).  Sets NS to the
# unshare command, or leaves it empty with NS_WHY saying why not.
NS= NS_WHY=
if ! command -v unshare >/dev/null 2>&1; then
  NS_WHY="no unshare(1)"
else
  for try in "unshare -m" "unshare -rm"; do
    if $try sh -c 'd=$(mktemp -d) && mount -t tmpfs -o size=64k tmpfs "$d" &&
                   umount "$d" && rmdir "$d"' >/dev/null 2>&1; then
      NS=$try
      break
    fi
  done
  [ -n "$NS" ] || NS_WHY="cannot mount a tmpfs in a private mount namespace here"
fi
