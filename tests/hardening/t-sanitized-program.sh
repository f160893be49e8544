#!/bin/sh
# A program built with AddressSanitizer, under the launcher.  The sanitizer
# runtime looks its real functions up with dlsym(RTLD_NEXT) while it starts,
# before any constructor, and the interposer's dlsym answers them: it must
# do so without dlopen (whose interceptor is not ready) and without libc's
# string functions (intercepted, with nothing behind them yet).  Then the
# program runs as without us, capped, with LeakSanitizer's exit check clean.
. "$srcdir/tests/hardening/defs.sh"
APP=$SIM/app_driver_asan
if [ ! -x "$APP" ]; then
  echo "1..0 # SKIP the compiler cannot build with -fsanitize=address"
  exit 0
fi
if [ -n "$SLOW" ]; then
  echo "1..0 # SKIP valgrind cannot run a program built with AddressSanitizer"
  exit 0
fi
LIBASAN=$(ldd "$APP" | awk '/libasan/ { print $3 }')
SCRIPT="alloc 512K alloc 1M alloc 4K free 2 cmg 0"

# shellcheck disable=SC2086
"$APP" $SCRIPT >"$tmp/bare" 2>&1
is "$(sed -n 2p "$tmp/bare")" "alloc i=1 size=1048576 rc=0 ptr=0x7f0000080000" \
  "without the interposer the program gets every allocation"

# ASan's runtime first, as ASan asks of anything preloaded: the launcher
# keeps it first and puts the library right after it.
LD_PRELOAD=$LIBASAN
export LD_PRELOAD
# shellcheck disable=SC2086
hguard "--limit 1M" "$APP" $SCRIPT
unset LD_PRELOAD
is "$rc" 0 "libasan preloaded: exit status unchanged (LeakSanitizer found nothing)"
is "$(sed -n 2p "$tmp/out")/$(val 5 live)/$(val 5 denials)" \
  "alloc i=1 size=1048576 rc=2/524288/1" \
  "libasan preloaded: the limit holds (the 1 MiB is refused)"
is "$(lines 'cumemguard: denied cuMemAlloc_v2 of 1.0 MiB')/$(noise)" 1/1 \
  "libasan preloaded: one line for the denial, nothing else"
r=$(report)
validate "$r"
is "$(q "$r" '"app_main" in fn(r["leaks"][0]["stack"])')" True \
  "libasan preloaded: the leak's stack reaches the program's app_main"

# The runtime linked only (after the library, so ASan's order check is
# turned off): it starts with the interposer's dlsym already in place.
rm -f "$tmp"/report.*.json
ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0
export ASAN_OPTIONS
# shellcheck disable=SC2086
hguard "--limit 1M" "$APP" $SCRIPT
is "$rc/$(val 5 live)/$(val 5 denials)/$(noise)" 0/524288/1/1 \
  "libasan linked after the library: runs, capped, one line for the denial"
validate "$(report)"

done_testing
