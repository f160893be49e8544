#!/bin/sh
# Device memory allocated by another library's constructor, before the
# interposer's own constructor has run: by a library the program links
# (its dependencies are initialized before any preloaded library), and by
# one preloaded after libcumemguard.  The wrapper must initialize the
# interposer on the spot: the allocation is capped, recorded with its
# stack, and in the report.
. "$srcdir/tests/hardening/defs.sh"
CTOR=$HARD/.libs/libhardctor.so

# order: "ctor first" when the dynamic linker ran libhardctor's constructor
# before libcumemguard's (LD_DEBUG=libs says "calling init: PATH").
order() {
  awk '/calling init:/ { n++ }
       /calling init:.*libhardctor\.so/ { c = n }
       /calling init:.*libcumemguard\.so/ { g = n }
       END { print (c && g && c < g) ? "ctor first" : "ctor " c ", cumemguard " g }' \
    "$tmp/err"
}

"$HARD/app_ctor" >"$tmp/out" 2>"$tmp/err"
is "$(sed -n 1p "$tmp/out")" "ctor rc0=0 ptr0=0x7f0000000000 rc1=0" \
  "without the interposer the constructor gets both allocations"

# A linked library.
LD_DEBUG=libs
export LD_DEBUG
hguard "--limit 1M" "$HARD/app_ctor"
unset LD_DEBUG
is "$(order)" "ctor first" "linked: the library's constructor runs before the interposer's"
rm -f "$tmp"/report.*.json
hguard "--limit 1M" "$HARD/app_ctor"
is "$rc" 0 "linked: exit status unchanged"
is "$(sed -n 1p "$tmp/out")" "ctor rc0=0 ptr0=0x7f0000000000 rc1=2" \
  "linked: the constructor's second allocation is refused by the limit"
is "$(sed -n 2p "$tmp/out")" "cmg live=524288 allocs=1 denials=1" \
  "linked: the ledger holds the first and counts the denial"
is "$(lines 'cumemguard: denied cuMemAlloc_v2 of 1.0 MiB')/$(noise)" 1/1 \
  "linked: one line for the denial, nothing else"
r=$(report)
validate "$r"
is "$(q "$r" '(fn(r["leaks"][0]["stack"])[0], fn(r["denials"][0]["stack"])[0])')" \
  "('hardctor_alloc', 'hardctor_alloc')" \
  "linked: the report has the allocation and the denial, from the constructor"

# A library preloaded after the interposer (the launcher puts itself first).
LD_PRELOAD=$CTOR LD_DEBUG=libs
export LD_PRELOAD LD_DEBUG
hguard "--limit 1M" "$SIM/app_driver" cmg 0
unset LD_DEBUG
is "$(order)" "ctor first" "preloaded after: the library's constructor runs before the interposer's"
rm -f "$tmp"/report.*.json
hguard "--limit 1M" "$SIM/app_driver" cmg 0
unset LD_PRELOAD
is "$rc" 0 "preloaded after: exit status unchanged"
is "$(val 1 live)/$(val 1 allocs)/$(val 1 denials)" 524288/1/1 \
  "preloaded after: the first allocation is recorded and the second refused"
# valgrind's launcher, run natively for the exec, has the same LD_PRELOAD:
# the constructor runs there too and its denial is said once more.
if [ -z "$SLOW" ]; then
  is "$(noise)" 1 "preloaded after: one line for the denial, nothing else"
else
  is "$(lines 'cumemguard: report ')" 1 "preloaded after: one report line"
fi
r=$(report)
validate "$r"
is "$(q "$r" '(fn(r["leaks"][0]["stack"])[0], len(r["denials"]))')" \
  "('hardctor_alloc', 1)" "preloaded after: the report has both"

done_testing
