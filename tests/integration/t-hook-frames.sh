#!/bin/sh
# Every function the library exports keeps a frame that stack capture steps
# through by its frame pointer: none realigns its stack.  A realigned frame
# (GCC's "and $-N, %rsp", made when a 64-byte-aligned object is inlined
# onto it) has an unwind rule that no frame-pointer step can follow, so in
# the default mode each capture from it would be walked again by libunwind
# (unwind.c), several times the cost.
. "$srcdir/tests/lib/defs.sh"
if ! command -v objdump >/dev/null 2>&1 || ! command -v nm >/dev/null 2>&1; then
  echo "1..0 # SKIP objdump and nm (binutils) are not installed"
  exit 0
fi
lib=$CUMEMGUARD_LIBRARY
nm -D --defined-only "$lib" | awk '$2 == "T" { print $3 }' | sort -u \
  >"$tmp/exported"
n=$(wc -l <"$tmp/exported")
# The functions whose first 16 instructions realign rsp.
objdump -d --no-show-raw-insn "$lib" | awk '
  /^[0-9a-f]+ <[^>]+>:$/ { f = $2; gsub(/[<>:]/, "", f); k = 0; next }
  f != "" && k < 16 && /^ +[0-9a-f]+:/ {
    k++
    if ($0 ~ /and +\$0x[0-9a-f]+,%rsp/) print f
  }' | sort -u >"$tmp/realigned"
bad=$(comm -12 "$tmp/exported" "$tmp/realigned" | tr '\n' ' ')
is "$([ "$n" -gt 100 ] && echo many)" many \
  "the library exports its hooks ($n functions)"
is "$bad" "" "no exported function realigns its stack"
done_testing
