#!/bin/sh
# A bad option string in the environment (the library loaded without the
# launcher, which would have refused it): one line naming the bad item, and
# the process fails closed: it runs, but no device allocation succeeds.
. "$srcdir/tests/integration/defs.sh"
LIB=$CUMEMGUARD_LIBRARY
# A bad string leaves the report at its default place: the current
# directory, which must be ours.
cd "$tmp" || exit 99

fail_closed() {
  opts=$1 want=$2
  CUMEMGUARD_OPTIONS=$opts LD_PRELOAD=$LIB "$SIM/app_rt_static" \
    alloc 1 info exit 3 >"$tmp/out" 2>"$tmp/err"
  rc=$?
  is "$rc" 3 "'$opts': the program runs to its own exit"
  is "$(val 1 rc)" 2 "'$opts': no allocation succeeds"
  is "$(grep -c "CUMEMGUARD_OPTIONS: .*$want" "$tmp/err")" 1 \
    "'$opts': one line names '$want'"
  is "$(grep -c 'denied cuMemAlloc_v2 of 1 B' "$tmp/err")" 1 \
    "'$opts': the denial says why"
}

fail_closed "limit=4XB" "limit=4XB"
fail_closed "limt=4GiB" "limt=4GiB"
fail_closed "limit.99=1G" "limit.99=1G"
fail_closed "limit=1G,limit=2G" "limit=2G"
fail_closed "limit" "'limit'"

CUMEMGUARD_OPTIONS="limit=1G" LD_PRELOAD=$LIB "$SIM/app_rt_static" \
  alloc 1 >"$tmp/out" 2>"$tmp/err"
is "$(val 1 rc)/$(noise)" 0/0 "a good string: silent, allocations work"

# The launcher refuses the same strings before starting anything.
CUMEMGUARD_OPTIONS="limit=4XB" "$LAUNCHER" -- "$SIM/app_rt_static" alloc 1 \
  >"$tmp/out" 2>"$tmp/err"
is "$?/$(wc -c <"$tmp/out")" 2/0 "the launcher exits 2 and runs nothing"

done_testing
