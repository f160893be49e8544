#!/bin/sh
# `make install` puts the library in $libdir and the launcher in $bindir,
# and the installed launcher finds the installed library by itself.
. "$srcdir/tests/integration/defs.sh"

prefix=$tmp/prefix
make -s -C "$top_builddir" install prefix="$prefix" >"$tmp/install.log" 2>&1
is "$?" 0 "make install into a fresh prefix"
tap "$([ -f "$prefix/lib/libcumemguard.so" ]; echo $?)" "library in \$libdir"
tap "$([ -x "$prefix/bin/cumemguard" ]; echo $?)" "launcher in \$bindir"
tap "$([ -f "$prefix/include/cumemguard.h" ]; echo $?)" "header in \$includedir"

unset CUMEMGUARD_LIBRARY
"$prefix/bin/cumemguard" --limit 1MiB --report "$tmp/r.json" -- \
  "$SIM/app_rt_static" alloc 2M \
  >"$tmp/out" 2>"$tmp/err"
is "$(val 1 rc)" 2 "the installed launcher caps with the installed library"

done_testing
