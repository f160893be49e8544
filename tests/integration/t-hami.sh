#!/bin/sh
# HAMi's variables, where CUMEMGUARD_OPTIONS is absent: HAMi's device
# plugin sets CUDA_DEVICE_MEMORY_LIMIT_<i> (and CUDA_DEVICE_MEMORY_LIMIT) in
# every process of a container, and the library, preloaded in place of
# HAMi-core's, makes them one cap that the container's processes share, as
# HAMi's own shared cache does: two processes of one container share it,
# another container (another cache file) has its own, CUDA_DISABLE_CONTROL
# turns it off, and a value it cannot read fails closed with one line.
. "$srcdir/tests/lib/defs.sh"
M=1048576
trap 'rm -rf "$tmp"; rm -f /dev/shm/cumemguard.$(id -u).hami*' EXIT
export CMG_SIM_DEVICES=8G,8G
mkdir -p "$tmp/vgpu"
# Without CUMEMGUARD_OPTIONS the reports go to the working directory's
# cumemguard.PID.json: the temporary one.
cd "$tmp" || exit 99

unset CUMEMGUARD_OPTIONS

# One container's first process holds 600 MiB of its 1024m on device 0.
: >"$tmp/a.out"
env -u CUMEMGUARD_OPTIONS CUDA_DEVICE_MEMORY_SHARED_CACHE="$tmp/vgpu/c1.cache" \
  CUDA_DEVICE_MEMORY_LIMIT_0=1024m CUDA_DEVICE_MEMORY_LIMIT_1=2g \
  LD_PRELOAD="$CUMEMGUARD_LIBRARY" "$SIM/app_driver" alloc 600M await \
  "$tmp/a.go" >"$tmp/a.out" 2>&1 &
apid=$!
until_line "$tmp/a.out" '^alloc i=0 .*rc=0'
env -u CUMEMGUARD_OPTIONS CUDA_DEVICE_MEMORY_SHARED_CACHE="$tmp/vgpu/c1.cache" \
  CUDA_DEVICE_MEMORY_LIMIT_0=1024m CUDA_DEVICE_MEMORY_LIMIT_1=2g \
  LD_PRELOAD="$CUMEMGUARD_LIBRARY" "$SIM/app_driver" info alloc 600M \
  alloc 400M device 1 info alloc 2G >"$tmp/out" 2>"$tmp/err"
is "$(at info total 1)/$(at info free 1)/$(at alloc rc 1)/$(at alloc rc 2)" \
  "$((1024 * M))/$((424 * M))/2/0" \
  "two processes of one container share CUDA_DEVICE_MEMORY_LIMIT_0=1024m"
is "$(at info total 2)/$(at alloc rc 3)" "$((2048 * M))/0" \
  "CUDA_DEVICE_MEMORY_LIMIT_1=2g caps device 1"
is "$(grep -c "group 'hami-[0-9a-f]*' has 600.0 MiB in use, group limit 1.0 GiB" "$tmp/err")" 1 \
  "the denial names the container's group"
: >"$tmp/a.go"
wait $apid

# Another container (its own cache file) has a cap of its own.
env -u CUMEMGUARD_OPTIONS CUDA_DEVICE_MEMORY_SHARED_CACHE="$tmp/vgpu/c2.cache" \
  CUDA_DEVICE_MEMORY_LIMIT=1g LD_PRELOAD="$CUMEMGUARD_LIBRARY" \
  "$SIM/app_driver" device 1 info alloc 1G alloc 1M >"$tmp/out" 2>"$tmp/err"
is "$(at info total)/$(at alloc rc 1)/$(at alloc rc 2)" "$((1024 * M))/0/2" \
  "CUDA_DEVICE_MEMORY_LIMIT caps every device"

env -u CUMEMGUARD_OPTIONS CUDA_DEVICE_MEMORY_LIMIT_0=1g CUDA_DISABLE_CONTROL=true \
  LD_PRELOAD="$CUMEMGUARD_LIBRARY" "$SIM/app_driver" info alloc 2G \
  >"$tmp/out" 2>"$tmp/err"
is "$(at info total)/$(at alloc rc)" "$((8192 * M))/0" \
  "CUDA_DISABLE_CONTROL=true: no cap, as HAMi-core has none then"

env -u CUMEMGUARD_OPTIONS CUDA_DEVICE_MEMORY_LIMIT_0=lots \
  LD_PRELOAD="$CUMEMGUARD_LIBRARY" "$SIM/app_driver" alloc 1M \
  >"$tmp/out" 2>"$tmp/err"
is "$(at alloc rc)/$(count "HAMi's CUDA_DEVICE_MEMORY_LIMIT variables: bad value 'group_limit.0=lots'" "$tmp/err")" \
  2/1 "a value it cannot read fails closed, with one line naming HAMi's variables"

CUMEMGUARD_OPTIONS=limit=3GiB
export CUMEMGUARD_OPTIONS
env CUDA_DEVICE_MEMORY_LIMIT_0=1g LD_PRELOAD="$CUMEMGUARD_LIBRARY" \
  "$SIM/app_driver" info >"$tmp/out" 2>"$tmp/err"
is "$(at info total)" "$((3072 * M))" \
  "CUMEMGUARD_OPTIONS, where set, is read instead"
unset CUMEMGUARD_OPTIONS

done_testing
