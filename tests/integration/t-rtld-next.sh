#!/bin/sh
# dlsym(RTLD_NEXT) answers relative to the object that called dlsym, even
# though our dlsym override stands in between: a second interposer
# (libnexttest.so, preloaded after us) wrapping getpid gets libc's getpid,
# not its own, and a driver function it looks up this way is still capped.
. "$srcdir/tests/integration/defs.sh"
NEXT=$SIM/.libs/libnexttest.so

LD_PRELOAD=$NEXT "$SIM/app_next" >"$tmp/bare" 2>&1
LD_PRELOAD="$CUMEMGUARD_LIBRARY $NEXT" "$SIM/app_next" >"$tmp/out" 2>"$tmp/err"
is "$(val 1 lib)/$(val 1 works)" "libc.so.6/1" \
  "a later interposer's RTLD_NEXT finds libc's getpid"
is "$(sed -n 1p "$tmp/out")" "$(sed -n 1p "$tmp/bare")" "same answer as without us"
is "$(sed -n 3p "$tmp/out")" "$(sed -n 3p "$tmp/bare")" \
  "the program's own RTLD_NEXT lookup: same answer as without us"
is "$(sed -n 2p "$tmp/bare" | sed 's/.*lib=//')" libcuda.so.1 \
  "without us, RTLD_NEXT finds the driver's cuMemAlloc_v2"
is "$(val 2 lib)" libcumemguard.so "with us, RTLD_NEXT gets the capped wrapper"

done_testing
