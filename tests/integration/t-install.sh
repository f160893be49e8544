#!/bin/sh
# `make install` puts the library in $libdir and the launcher in $bindir,
# and the installed launcher finds the installed library by itself, as
# does a moved installation and a launcher run where it was built; a
# launcher that finds none runs nothing.
. "$srcdir/tests/lib/defs.sh"

prefix=$tmp/prefix
# A make of its own: not the outer make check's job slots or variables.
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL \
  make -s -C "$top_builddir" install prefix="$prefix" >"$tmp/install.log" 2>&1
st=$?
[ "$st" -eq 0 ] || sed 's/^/#   install: /' "$tmp/install.log" | tail -n 20
is "$st" 0 "make install into a fresh prefix"
tap "$([ -f "$prefix/lib/libcumemguard.so" ]; echo $?)" "library in \$libdir"
tap "$([ -x "$prefix/bin/cumemguard" ]; echo $?)" "launcher in \$bindir"
tap "$([ -f "$prefix/include/cumemguard.h" ]; echo $?)" "header in \$includedir"

unset CUMEMGUARD_LIBRARY
"$prefix/bin/cumemguard" --limit 1MiB --report "$tmp/r.json" -- \
  "$SIM/app_rt_static" alloc 2M \
  >"$tmp/out" 2>"$tmp/err"
is "$(val 1 rc)" 2 "the installed launcher caps with the installed library"

# The library and the launcher write JSON with the core's writer: neither
# needs cJSON where it is installed (the reader does, to read reports).
if command -v readelf >/dev/null 2>&1; then
  for f in lib/libcumemguard.so bin/cumemguard; do
    readelf -d "$prefix/$f" >"$tmp/dyn" 2>&1
    st=$?
    if [ $st -eq 0 ] && grep -q libcjson "$tmp/dyn"; then st=1; fi
    tap $st "$f needs no libcjson"
  done
else
  echo "ok $((tap_n += 1)) # SKIP no readelf"
  echo "ok $((tap_n += 1)) # SKIP no readelf"
fi

# Moved after it was configured: ../lib beside the launcher.
mv "$prefix" "$tmp/moved"
"$tmp/moved/bin/cumemguard" -- sh -c 'printf "%s\n" "$LD_PRELOAD"' \
  >"$tmp/out" 2>"$tmp/err"
is "$(cat "$tmp/out")" "$tmp/moved/lib/libcumemguard.so" \
  "a moved installation preloads its own library"

# Where it was built: the library built with it, in .libs beside it.
"$top_builddir/cumemguard" --limit 1MiB --report "$tmp/tree.%p.json" -- sh -c \
  'printf "%s\n" "$LD_PRELOAD"; exec "$0" alloc 2M' "$SIM/app_rt_static" \
  >"$tmp/out" 2>"$tmp/err"
is "$(sed -n 1p "$tmp/out")" \
  "$(cd "$top_builddir" && pwd -P)/.libs/libcumemguard.so" \
  "the launcher in the build tree preloads the library built with it"
is "$(val 2 rc)" 2 "and that library caps"

# Neither: exit 2, one line, the program not run.
mkdir "$tmp/alone"
cp "$top_builddir/cumemguard" "$tmp/alone/"
default=$("$tmp/alone/cumemguard" --help | sed -n '/library to preload/{n;p;}')
if [ -e $default ]; then
  for n in 1 2 3 4; do
    tap_n=$((tap_n + 1))
    echo "ok $tap_n # SKIP a library is installed in the default libdir"
  done
else
  "$tmp/alone/cumemguard" --limit 1MiB -- touch "$tmp/ran" \
    >"$tmp/out" 2>"$tmp/err"
  is "$?" 2 "a launcher that finds no library exits 2"
  tap "$([ ! -e "$tmp/ran" ]; echo $?)" "and runs nothing"
  is "$(wc -l <"$tmp/err")" 1 "in one line"
  tap "$(grep -q "cannot find libcumemguard.so" "$tmp/err"; echo $?)" \
    "that says which library it looked for"
fi

done_testing
