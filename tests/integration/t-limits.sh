#!/bin/sh
# Limits per device and as percentages, every allocator of this issue,
# frees of memory we never saw, NULL-tolerant memory info, and no change in
# behaviour at all without a limit.
. "$srcdir/tests/lib/defs.sh"
M=1048576 G=1073741824
export CMG_SIM_DEVICES=8G,4G

# limit for all, limit.1 for device 1.
guard "" app_rt_static alloc 1G device 1 alloc 600M alloc 1 info total 0 total 1
CUMEMGUARD_OPTIONS="limit=2G,limit.1=600M" guard "" app_rt_static \
  alloc 2G alloc 1 device 1 alloc 600M alloc 1 info total 0 total 1
is "$(val 1 rc)/$(val 2 rc)" 0/2 "limit applies to device 0"
is "$(val 4 rc)/$(val 5 rc)" 0/2 "limit.1 applies to device 1"
is "$(val 6 total)" $((600 * M)) "device 1 mem info shows its own limit"
is "$(val 6 free)" 0 "device 1 full: free is 0, never negative"
is "$(val 7 bytes)/$(val 8 bytes)" $((2 * G))/$((600 * M)) "device totals per limit"

# A percentage of the physical size, per device.
guard "--limit 25%" app_driver info device 1 info alloc 1G alloc 1
is "$(val 1 total)" $((2 * G)) "25% of an 8 GiB device"
is "$(val 3 total)" $G "25% of a 4 GiB device"
is "$(val 4 rc)/$(val 5 rc)" 0/2 "percentage enforced"

# A limit above the card: the card's size is reported, never more.
guard "--limit 100G" app_driver info total 0
is "$(val 1 total)/$(val 2 bytes)" $((8 * G))/$((8 * G)) \
  "a limit larger than the card reports the card"

# limit=0 refuses everything.
guard "--limit 0" app_driver alloc 512 info
is "$(val 1 rc)/$(val 2 free)/$(val 2 total)" 2/0/0 "limit=0 refuses all"

# Pitch: counted at pitch x height, and the padding is reserved too.
bare app_driver pitch 1000 1000
is "$(val 1 pitch)" 1024 "the driver pads the pitch"
guard "--limit 1000000" app_driver pitch 1000 1000 pitch 100 100 cmg 0
is "$(val 1 rc)" 2 "pitch x height over the limit is refused although width x height fits"
is "$(val 2 rc)" 0 "a small pitched allocation fits"
is "$(val 3 live)" $((512 * 100)) "counted at pitch x height"
is "$(val 3 allocs)/$(val 3 denials)" 1/1 "one allocation, one denial"
guard "--limit 1000000" app_driver stats 0 pitch 1000 1000 stats 0
is "$(val 3 used)/$(val 3 frees)" 0/1 "a refused padded allocation is given back to the driver"
is "$(count 'denied cuMemAllocPitch_v2 of 1000.0 KiB (1024000 bytes) on device 0: 0 B in use, limit 976.6 KiB' "$tmp/err")" 1 \
  "the padded denial names the padded size"

# Managed and stream-ordered allocations count against the device.
guard "--limit 1G" app_rt_shared managed 600M async 600M alloc 400M whatis 0 \
  free_async 2 cmg 0
is "$(val 1 rc)/$(val 2 rc)/$(val 3 rc)" 0/2/0 "managed memory counts"
is "$(val 4 api)" cudaMallocManaged "labeled cudaMallocManaged"
is "$(val 6 live)" $((600 * M)) "stream-ordered free counted"

# Frees are always forwarded: the driver's answer for memory we never saw.
bare app_driver free_raw 0x1234 alloc 1M free 1
want=$(cat "$tmp/out")
guard "--limit 1G" app_driver free_raw 0x1234 alloc 1M free 1
is "$(cat "$tmp/out")" "$want" "an unknown free gets the driver's own answer"
guard "--limit 1G" app_driver alloc 1M free 0 free 0 cmg 0
is "$(val 3 rc)" 1 "a double free is the driver's error"
is "$(val 4 frees)/$(val 4 live)" 1/0 "and is counted once"

# A failing free keeps the allocation tracked.
CMG_SIM_FAIL_FREE_AFTER=0:700 guard "--limit 1G" app_driver alloc 1M free 0 cmg 0
is "$(val 2 rc)" 700 "the driver's free error passes through"
is "$(val 3 live)/$(val 3 frees)" $M/0 "a failed free leaves the allocation live"

# NULL arguments get the driver's verdict, limit or not.
bare app_driver info_null
want=$(cat "$tmp/out")
guard "--limit 1G" app_driver info_null
is "$(cat "$tmp/out")" "$want" "NULL arguments to mem info: the driver's answer"

# Without a limit the program sees exactly what it sees without us.
script="alloc 1G pitch 1000 7 managed 3M async 5M async_ptsz 1 info total 0
  total 1 device 1 alloc 5G alloc 1 info free 0 free_async 3 free 6 info"
for app in app_driver app_dlsym app_getproc app_rt_shared app_rt_static; do
  # shellcheck disable=SC2086
  bare $app $script
  want=$(cat "$tmp/out")
  # shellcheck disable=SC2086
  guard "" $app $script
  is "$(cat "$tmp/out")" "$want" "$app: unchanged without a limit"
  is "$(noise)" 0 "$app: silent without a limit but the report line"
done

done_testing
