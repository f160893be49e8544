#!/bin/sh
# dlsym(RTLD_NEXT) answers relative to the object that called dlsym, even
# though our dlsym override stands in between: a second interposer
# (libnexttest.so, preloaded after us) wrapping getpid gets libc's getpid,
# not its own, and a driver function it looks up this way is still capped.
. "$srcdir/tests/lib/defs.sh"
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

# Names glibc resolves by rules of its own: the same definition as without
# us.  (Checked on the bare run too, so the comparison means something.)
for n in strlen memcpy realpath pthread_cond_wait environ stdout; do
  is "$(grep "^$n " "$tmp/out")" "$(grep "^$n " "$tmp/bare")" \
    "RTLD_NEXT $n: the same definition as without us"
  case $(grep "^$n " "$tmp/bare") in
    "$n libc.so.6+0x"*) tap 0 "without us, $n is libc's" ;;
    *) tap 1 "without us, $n is libc's" ;;
  esac
done
is "$(grep '^no_such_symbol ' "$tmp/out")" "no_such_symbol null" \
  "RTLD_NEXT of a name nobody defines: NULL"
is "$(grep '^errno ' "$tmp/out")/$(grep '^errno ' "$tmp/bare")" \
  "errno this_thread=1/errno this_thread=1" \
  "RTLD_NEXT of a thread-local variable: this thread's, as without us"

done_testing
