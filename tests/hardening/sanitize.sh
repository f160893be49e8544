#!/bin/sh
# make check-sanitize: the core, both tools and their tests built again with
# sanitizers, in _sanitize/ (a build of its own: the normal build is left
# alone), and run as TAP tests whose .log/.trs files land in _sanitize/log.
#
#   asan/   AddressSanitizer + UBSan (gcc, -fno-sanitize-recover, leak
#           checking on): every unit test, the stress test, the launcher and
#           cumemguard-report.  The launcher is then run by the integration
#           and hardening tests (a tree in _sanitize/tree whose cumemguard is
#           the ASan build and whose preload library is the normal one), and
#           cumemguard-report by the tool tests (CMG_TOOL).
#   tsan/   ThreadSanitizer: the stress test (ledger, stack table, policy,
#           history and report writing from many threads at once), and
#           test_pyline (threads racing on the Python site table).  clang's
#           runtime when there is one (gcc 12's crashes in libunwind's
#           thread-exit destructor; with gcc the stress test then leaves out
#           real stack captures).
#   asanlib/  the preload library built with ASan+UBSan, under every
#           integration and hardening test (libasan preloaded first).
#
# Called by make with the build's flags and file lists in the environment
# (see tests/hardening/local.mk).  Exit status 0 when every test passed.
set -u
: "${top_builddir:?run through make check-sanitize}" "${top_srcdir:?}"
B=$top_builddir/_sanitize
JOBS=${SAN_JOBS:-2}
rm -rf "$B/log"  # the counts at the end are of this run only
mkdir -p "$B/log" "$B/tree/.libs" "$B/tree/tests"

cfiles() {
  for f in "$@"; do
    case $f in *.c) printf '%s ' "$f" ;; esac
  done
}
# An object's name: the source's path under src/, so that files of one
# base name in two folders would not clash.
oname() {
  echo "$1" | sed 's|^.*/src/||; s|^src/||; s|/|_|g; s|\.c$||'
}
objs() {
  dir=$1
  shift
  for f in $(cfiles "$@"); do
    printf '%s/%s.o ' "$dir" "$(oname "$f")"
  done
}

if command -v "${CLANG:-clang}" >/dev/null 2>&1 &&
   echo 'int main(void){return 0;}' |
   "${CLANG:-clang}" -fsanitize=thread -x c - -o "$B/tsan-probe" 2>/dev/null &&
   "$B/tsan-probe" 2>/dev/null; then
  TSAN_CC=${CLANG:-clang} TSAN_CAPTURE=1
else
  TSAN_CC=$CC TSAN_CAPTURE=0
fi

# ---- the build: a makefile of its own, so -j and rebuilds work ----------
ASAN='-std=gnu11 -g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all'
TSAN='-std=gnu11 -g -O1 -fno-omit-frame-pointer -fsanitize=thread'
{
  echo "CC = $CC"
  echo "TSAN_CC = $TSAN_CC"
  echo "ASAN = $ASAN"
  echo "TSAN = $TSAN"
  echo "CPPF = $SAN_CPPFLAGS $SAN_DEPS_CFLAGS -MMD -MP"
  echo "LIBS = $SAN_DEPS_LIBS"
  echo "EXPORTS = $top_builddir/src/preload/export.map"
  echo "CORE_A = $(objs asan/core $CORE_SRC)"
  echo "CORE_T = $(objs tsan/core $CORE_SRC)"
  echo "LIB_O = $(objs asan/lib $LIB_SRC)"
  echo "TOOL_O = $(objs asan/tool $TOOL_SRC)"
  echo "LAUNCHER_O = $(objs asan/launcher $LAUNCHER_SRC)"
  # The launcher's modules apart from its main, for the unit tests of them
  # (test_args), as an archive: a test takes only the members it calls.
  echo "LAUNCHER_A = $(objs asan/launcher $(echo "$LAUNCHER_SRC" | tr ' ' '\n' | grep -v '/main\.c$'))"
  # The report reader's likewise, for the unit tests of its rules
  # (test_supp, test_user_first...).
  echo "READER_A = $(objs asan/tool $(echo "$TOOL_SRC" | tr ' ' '\n' | grep -v '/reader/main\.c$'))"
  printf 'all: asan/libcore.a tsan/libcore.a'
  for t in $UNIT_TESTS; do printf ' asan/%s' "$(basename "$t")"; done
  printf ' asan/stress tsan/stress tsan/test_pyline'
  printf ' tree/cumemguard tree/cumemguard-report'
  printf ' asan/libcumemguard.so\n'
  for f in $(cfiles $CORE_SRC); do
    n=$(oname "$f")
    printf 'asan/core/%s.o: %s\n\t@mkdir -p asan/core\n' "$n" "$top_srcdir/$f"
    printf '\t$(CC) $(ASAN) -fPIC -fvisibility=hidden $(CPPF) -c -o $@ $<\n'
    printf 'tsan/core/%s.o: %s\n\t@mkdir -p tsan/core\n' "$n" "$top_srcdir/$f"
    printf '\t$(TSAN_CC) $(TSAN) $(CPPF) -c -o $@ $<\n'
  done
  for f in $(cfiles $LIB_SRC); do
    n=$(oname "$f")
    printf 'asan/lib/%s.o: %s\n\t@mkdir -p asan/lib\n' "$n" "$top_srcdir/$f"
    printf '\t$(CC) $(ASAN) -fPIC -fvisibility=hidden $(CPPF) -c -o $@ $<\n'
  done
  for f in $(cfiles $TOOL_SRC); do
    n=$(oname "$f")
    # A generated source (the pprof protobuf code) is in the build tree.
    case $f in /*) src=$f ;; *) src=$top_srcdir/$f ;; esac
    printf 'asan/tool/%s.o: %s\n\t@mkdir -p asan/tool\n' "$n" "$src"
    printf '\t$(CC) $(ASAN) $(CPPF) -c -o $@ $<\n'
  done
  printf 'asan/libcore.a: $(CORE_A)\n\trm -f $@ && ar rcs $@ $(CORE_A)\n'
  printf 'tsan/libcore.a: $(CORE_T)\n\trm -f $@ && ar rcs $@ $(CORE_T)\n'
  printf 'asan/liblauncher.a: $(LAUNCHER_A)\n\trm -f $@ && ar rcs $@ $(LAUNCHER_A)\n'
  printf 'asan/libreader.a: $(READER_A)\n\trm -f $@ && ar rcs $@ $(READER_A)\n'
  for t in $UNIT_TESTS; do
    n=$(basename "$t")
    printf 'asan/%s: %s asan/liblauncher.a asan/libreader.a asan/libcore.a\n' "$n" "$top_srcdir/$t.c"
    printf '\t$(CC) $(ASAN) -rdynamic $(CPPF) -o $@ $< asan/liblauncher.a asan/libreader.a asan/libcore.a $(LIBS)\n'
  done
  printf 'asan/stress: %s asan/libcore.a\n' "$top_srcdir/tests/hardening/stress.c"
  printf '\t$(CC) $(ASAN) $(CPPF) -o $@ $< asan/libcore.a $(LIBS)\n'
  printf 'tsan/stress: %s tsan/libcore.a\n' "$top_srcdir/tests/hardening/stress.c"
  printf '\t$(TSAN_CC) $(TSAN) $(CPPF) -o $@ $< tsan/libcore.a $(LIBS)\n'
  printf 'tsan/test_pyline: %s tsan/libcore.a\n' "$top_srcdir/tests/unit/test_pyline.c"
  printf '\t$(TSAN_CC) $(TSAN) $(CPPF) -o $@ $< tsan/libcore.a $(LIBS)\n'
  for f in $(cfiles $LAUNCHER_SRC); do
    n=$(oname "$f")
    printf 'asan/launcher/%s.o: %s\n\t@mkdir -p asan/launcher\n' "$n" "$top_srcdir/$f"
    printf '\t$(CC) $(ASAN) $(CPPF) -DCMG_LIBDIR=\\"/nonexistent\\" -c -o $@ $<\n'
  done
  printf 'tree/cumemguard: $(LAUNCHER_O) asan/libcore.a\n'
  printf '\t$(CC) $(ASAN) -o $@ $(LAUNCHER_O) asan/libcore.a $(LIBS)\n'
  printf 'tree/cumemguard-report: $(TOOL_O) asan/libcore.a\n'
  printf '\t$(CC) $(ASAN) -o $@ $(TOOL_O) asan/libcore.a $(LIBS)\n'
  printf 'asan/libcumemguard.so: $(LIB_O) asan/libcore.a $(EXPORTS)\n'
  printf '\t$(CC) $(ASAN) -shared -Wl,--version-script=$(EXPORTS) -Wl,-Bsymbolic-functions -Wl,-z,nodelete -o $@ $(LIB_O) asan/libcore.a $(LIBS)\n'
  echo '-include asan/*/*.d tsan/*/*.d asan/*.d tsan/*.d tree/*.d'
} >"$B/Makefile.san"

echo "check-sanitize: building in $B (ThreadSanitizer with $TSAN_CC)"
(cd "$B" && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL \
   "${MAKE:-make}" -s -j"$JOBS" -f Makefile.san all) || exit 1

# The tree the integration tests see as top_builddir.
ln -sfn "$top_builddir/tests/sim" "$B/tree/tests/sim"
ln -sfn "$top_builddir/tests/hardening" "$B/tree/tests/hardening"
ln -sfn "$top_builddir/tests/integration" "$B/tree/tests/integration"
ln -sfn "$top_builddir/.libs/libcumemguard.so" "$B/tree/.libs/libcumemguard.so"

# ---- running: each test through the TAP driver, logs in $B/log --------
failed=0
# tap NAME PROGRAM...: one test, its log and trs in $B/log/NAME.*.
tap() {
  name=$1
  shift
  mkdir -p "$(dirname "$B/log/$name")"
  env AM_TAP_AWK="${AWK:-awk}" "${SHELL:-/bin/sh}" \
    "$top_srcdir/build-aux/tap-driver.sh" --test-name "$name" \
    --log-file "$B/log/$name.log" --trs-file "$B/log/$name.trs" \
    --color-tests no --enable-hard-errors yes --expect-failure no -- "$@"
  if grep -q '^:global-test-result: \(FAIL\|ERROR\|XPASS\)' "$B/log/$name.trs"; then
    failed=$((failed + 1))
    sed -n '/not ok\|ERROR\|runtime error\|Sanitizer/p' "$B/log/$name.log" | head -n 20
  fi
}

ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:strict_string_checks=1
UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1
export ASAN_OPTIONS UBSAN_OPTIONS TSAN_OPTIONS

# The unit tests find the source tree's fixtures through srcdir, as make
# check gives it them.
for t in $UNIT_TESTS; do
  tap "asan/$t" env srcdir="$top_srcdir" "$B/asan/$(basename "$t")"
done
tap asan/tests/hardening/stress "$B/asan/stress"

# The TSan stress: more threads than cores, fewer operations (TSan is ~10x
# slower).  A kernel whose address-space randomization is wider than the
# runtime expects makes it fail at start; then run it without ASLR.
STRESS_ITERS=${SAN_TSAN_ITERS:-20000}
STRESS_THREADS=8
STRESS_CAPTURE=$TSAN_CAPTURE
export STRESS_ITERS STRESS_THREADS STRESS_CAPTURE
tsan_run="$B/tsan/stress"
if ! "$B/tsan/stress" >/dev/null 2>"$B/tsan/probe.err" &&
   grep -q 'unexpected memory mapping\|FATAL: ThreadSanitizer' "$B/tsan/probe.err" &&
   command -v setarch >/dev/null 2>&1; then
  tsan_run="setarch $(uname -m) -R $B/tsan/stress"
fi
# shellcheck disable=SC2086
tap tsan/tests/hardening/stress $tsan_run
unset STRESS_ITERS STRESS_THREADS STRESS_CAPTURE
# shellcheck disable=SC2086
tap tsan/tests/unit/test_pyline ${tsan_run%/stress}/test_pyline

# cumemguard-report under ASan: every tool test (as check-tool-asan).
for t in $TOOL_TESTS; do
  tap "asan/$t" env top_builddir="$top_builddir" srcdir="$top_srcdir" \
    CMG_TOOL="$B/tree/cumemguard-report" "${SHELL:-/bin/sh}" "$top_srcdir/$t"
done

# The launcher under ASan: every integration and hardening test that runs
# it (t-install installs the normal build, so it is left out).  Some tests
# start the launcher with libraries already in LD_PRELOAD, ahead of the ASan
# runtime: verify_asan_link_order=0 lets it start.
for t in $INTEGRATION_TESTS $HARDENING_TESTS; do
  case $t in */t-install.sh) continue ;; esac
  tap "asan/$t" env top_builddir="$B/tree" srcdir="$top_srcdir" \
    CMG_TEST_PREFIX= ASAN_OPTIONS="$ASAN_OPTIONS:verify_asan_link_order=0" \
    "${SHELL:-/bin/sh}" "$top_srcdir/$t"
done

# The preload library itself under ASan: every integration and hardening
# test again, against a tree whose libcumemguard.so is the ASan build and
# whose launcher is the normal one.  The tests start the launcher through
# CMG_TEST_PREFIX, here a script that puts libasan first in LD_PRELOAD
# (the launcher keeps it first): the launcher and the program it runs get
# it, the shell, awk and python of the test do not.  Leak checking is off:
# it would judge the test programs' memory, not ours (our leaks are
# check-valgrind's business).  t-fork-threads is left out: a child forked
# while another thread is inside ASan's malloc waits forever on that
# allocator's lock (gcc 12's and clang 14's runtimes take no fork handler
# for it; LLVM 18 added one), whether or not the interposer is loaded.
LIBASAN=$($CC -print-file-name=libasan.so)
mkdir -p "$B/tree-lib/.libs" "$B/tree-lib/tests"
ln -sfn "$top_builddir/cumemguard" "$B/tree-lib/cumemguard"
ln -sfn "$top_builddir/cumemguard-report" "$B/tree-lib/cumemguard-report"
ln -sfn "$top_builddir/tests/sim" "$B/tree-lib/tests/sim"
ln -sfn "$top_builddir/tests/hardening" "$B/tree-lib/tests/hardening"
ln -sfn "$top_builddir/tests/integration" "$B/tree-lib/tests/integration"
ln -sfn "$B/asan/libcumemguard.so" "$B/tree-lib/.libs/libcumemguard.so"
cat >"$B/with-libasan" <<EOF
#!/bin/sh
LD_PRELOAD="$LIBASAN\${LD_PRELOAD:+:\$LD_PRELOAD}" exec "\$@"
EOF
chmod +x "$B/with-libasan"
for t in $INTEGRATION_TESTS $HARDENING_TESTS; do
  case $t in */t-install.sh|*/t-fork-threads.sh) continue ;; esac
  tap "asanlib/$t" env top_builddir="$B/tree-lib" srcdir="$top_srcdir" \
    CMG_TEST_PREFIX="$B/with-libasan" \
    ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0:verify_asan_link_order=0" \
    "${SHELL:-/bin/sh}" "$top_srcdir/$t"
done

pass=$(cat "$B"/log/*/*.trs "$B"/log/*/*/*/*.trs 2>/dev/null | grep -c '^:test-result: PASS')
bad=$(cat "$B"/log/*/*.trs "$B"/log/*/*/*/*.trs 2>/dev/null | grep -c '^:test-result: \(FAIL\|ERROR\|XPASS\)')
xfail=$(cat "$B"/log/*/*.trs "$B"/log/*/*/*/*.trs 2>/dev/null | grep -c '^:test-result: XFAIL')
echo "check-sanitize: $pass passed, $bad failed, $xfail expected failures (logs in $B/log)"
[ "$failed" -eq 0 ]
