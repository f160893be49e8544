#!/bin/sh
# A bad option string in the environment (the library loaded without the
# launcher, which would have refused it): one line naming the bad item, and
# the process fails closed: it runs, but no device allocation succeeds.
. "$srcdir/tests/lib/defs.sh"
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
  is "$(grep -c "denied cuMemAlloc_v2 of 1 B.*$want" "$tmp/err")" 1 \
    "'$opts': the denial says why"
  is "$(noise)" 1 "'$opts': and that is the only line"
}

fail_closed "limit=4XB" "limit=4XB"
fail_closed "limt=4GiB" "limt=4GiB"
fail_closed "limit.99=1G" "limit.99=1G"
fail_closed "limit=1G,limit=2G" "limit=2G"
fail_closed "limit" "'limit'"

# Each error is said once, by the process that allocates: not by the shell
# around it, nor by every process that merely loads the library; later
# denials refer to the first.
CUMEMGUARD_OPTIONS="limit=4XB" LD_PRELOAD=$LIB sh -c \
  '"$1" alloc 1 alloc 1 info; sh -c true' sh "$SIM/app_rt_static" \
  >"$tmp/out" 2>"$tmp/err"
is "$(noise)/$(count "limit=4XB" "$tmp/err")" 2/1 \
  "a program under a shell: the bad value is said once"
is "$(grep -c 'denied cuMemAlloc_v2 of 1 B .*as the first denial said' "$tmp/err")" 1 \
  "the second denial refers to the first"
CUMEMGUARD_OPTIONS="limit=4XB" LD_PRELOAD=$LIB sh -c 'sh -c true' \
  >"$tmp/out" 2>"$tmp/err"
is "$(noise)" 0 "processes that allocate nothing say nothing"

CUMEMGUARD_OPTIONS="limit=1G" LD_PRELOAD=$LIB "$SIM/app_rt_static" \
  alloc 1 >"$tmp/out" 2>"$tmp/err"
is "$(val 1 rc)/$(noise)" 0/0 "a good string: silent, allocations work"

# The launcher refuses the same strings before starting anything.
CUMEMGUARD_OPTIONS="limit=4XB" "$LAUNCHER" -- "$SIM/app_rt_static" alloc 1 \
  >"$tmp/out" 2>"$tmp/err"
is "$?/$(wc -c <"$tmp/out")" 2/0 "the launcher exits 2 and runs nothing"

done_testing
