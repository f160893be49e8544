#!/bin/sh
# The preload library must export exactly the CUDA entry points it wraps,
# dlsym and its public API: anything more could interpose on the program's
# own symbols.  The expected list is the version script, which the build
# makes from hooks.def.
set -u
lib="$top_builddir/.libs/libcumemguard.so"
map="$top_builddir/src/preload/export.map"
echo "1..3"
if [ ! -f "$lib" ]; then
  echo "not ok 1 - $lib exists"; echo "not ok 2 # SKIP"; echo "not ok 3 # SKIP"
  exit 0
fi
echo "ok 1 - $lib exists"
tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT
nm -D --defined-only "$lib" | awk '{print $NF}' | sed 's/@.*//' | sort -u >"$tmp/got"
sed -n 's/^[[:space:]]*\([A-Za-z_][A-Za-z0-9_]*\);.*/\1/p' "$map" | sort -u >"$tmp/want"
extra=$(comm -23 "$tmp/got" "$tmp/want" | tr '\n' ' ')
missing=$(comm -13 "$tmp/got" "$tmp/want" | tr '\n' ' ')
if [ -z "$extra" ]; then echo "ok 2 - no unintended exports"
else echo "not ok 2 - no unintended exports"; echo "# extra: $extra"; fi
if [ -s "$tmp/want" ] && [ -z "$missing" ] && grep -q '^cuMemAlloc_v2$' "$tmp/got" && grep -q '^dlsym$' "$tmp/got"; then
  echo "ok 3 - every wrapped entry point is exported ($(wc -l <"$tmp/want") symbols)"
else echo "not ok 3 - every wrapped entry point is exported"; echo "# missing: $missing"; fi
