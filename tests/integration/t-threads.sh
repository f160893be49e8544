#!/bin/sh
# Two threads x 100k alloc/free pairs racing for a cap that holds one
# allocation: the driver's own accounting never passes the cap, and every
# attempt is counted exactly once as an allocation or a denial.
. "$srcdir/tests/lib/defs.sh"

for app in app_rt_static app_dlsym; do
  guard "--limit 4KiB" $app threads 2 100000 4096 stats 0 cmg 0
  ok=$(val 1 ok) failed=$(val 1 failed)
  is "$((ok + failed))" 200000 "$app: every pair attempted"
  tap "$([ "$failed" -gt 0 ]; echo $?)" "$app: the threads contended for the cap ($failed denials)"
  is "$(val 2 peak)" 4096 "$app: the driver never held more than the cap"
  is "$(val 2 allocs)" "$ok" "$app: the driver saw only granted allocations"
  is "$(val 3 allocs)" "$ok" "$app: allocations counted exactly"
  is "$(val 3 frees)" "$ok" "$app: frees counted exactly"
  is "$(val 3 denials)" "$failed" "$app: denials counted exactly"
  is "$(val 3 live)/$(val 3 live_allocs)" 0/0 "$app: nothing left live"
  is "$(val 3 peak)" 4096 "$app: peak is the cap"
done

# Without contention for a cap, nothing is refused.
guard "--limit 1GiB" app_rt_shared threads 2 100000 4096 cmg 0
is "$(val 1 failed)/$(val 2 allocs)/$(val 2 frees)" 0/200000/200000 \
  "no cap pressure: 200k allocations and frees"

done_testing
