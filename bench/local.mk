# make bench: the overhead benchmark (bench/cmgbench, docs/PERFORMANCE.md).
# It runs the simulated CUDA programs' driver and runtime (tests/sim) with
# and without the interposer and prints a table; the same figures go to
# bench/results.json.  make bench-smoke runs the same harness with tiny
# counts for CI: it fails only when the harness breaks, never on a missed
# target.  The program is a check program so that make check at least
# compiles it.

check_PROGRAMS += bench/cmgbench
bench_cmgbench_SOURCES = \
	bench/cmgbench.h \
	bench/compare.c \
	bench/deep.c \
	bench/emit.c \
	bench/framework.c \
	bench/frames.c \
	bench/frames_nofp.c \
	bench/main.c \
	bench/modes.c \
	bench/page.c \
	bench/paths.c \
	bench/python.c \
	bench/snapshot.c \
	bench/results.c \
	bench/sample.c \
	bench/table.c \
	bench/util.c \
	bench/vmm.c \
	bench/work.c
# Frame pointers in the call chain, as a program built for profilers has
# them; frames_nofp.c drops them for the rows that measure a program
# without.
bench_cmgbench_CFLAGS = $(AM_CFLAGS) -fno-omit-frame-pointer
bench_cmgbench_LDFLAGS = -no-install -rdynamic
bench_cmgbench_LDADD = tests/sim/libcuda.la tests/sim/libcudart.la \
	-ldl -lpthread -lm

# The framework-shaped row's native frames: a shared object that
# framework.c's Python driver loads with ctypes, like a framework's wheel.
check_LTLIBRARIES += bench/libcmgbchain.la
bench_libcmgbchain_la_SOURCES = bench/chain.c bench/chain_nofp.c
bench_libcmgbchain_la_CFLAGS = $(AM_CFLAGS) -fno-omit-frame-pointer
bench_libcmgbchain_la_LDFLAGS = -module -avoid-version -rpath /nowhere

BENCH_RUN = bench/cmgbench$(EXEEXT) \
	--lib "$(abs_builddir)/.libs/libcumemguard.so" \
	--sim "$(abs_builddir)/tests/sim/.libs" \
	--tool "$(abs_builddir)/cumemguard-report$(EXEEXT)" \
	--page-load "$(abs_srcdir)/bench/page-load.js" \
	--chain "$(abs_builddir)/bench/.libs/libcmgbchain.so"

bench: all bench/cmgbench$(EXEEXT) bench/libcmgbchain.la
	$(BENCH_RUN) --json bench/results.json

bench-smoke: all bench/cmgbench$(EXEEXT) bench/libcmgbchain.la
	$(BENCH_RUN) --smoke --json bench/results-smoke.json

# make bench-compare BASE=main: BASE's library and this tree's, per pair,
# in one run (scripts/bench-compare); OPTIONS=stack_mode=dwarf runs both
# with those options too.
bench-compare: all bench/cmgbench$(EXEEXT) bench/cmgpairs$(EXEEXT)
	@test -n '$(BASE)' || { echo "make bench-compare: BASE is not set: expected a commit to compare with, such as BASE=main" >&2; exit 2; }
	@MAKE='$(MAKE)' CMG_BENCH_OPTIONS='$(OPTIONS)' $(SHELL) $(srcdir)/scripts/bench-compare '$(BASE)' \
	  '$(abs_srcdir)' '$(abs_builddir)' '$(CUDA_CPPFLAGS)'

clean-local: clean-bench-base
clean-bench-base:
	rm -rf bench/base-*

.PHONY: bench bench-smoke bench-compare clean-bench-base
EXTRA_DIST += docs/PERFORMANCE.md bench/page-load.js scripts/bench-compare \
	scripts/bench-instructions
CLEANFILES += bench/results.json bench/results-smoke.json

# make check runs the harness in smoke mode (bench/t-smoke.sh).
TESTS += bench/t-smoke.sh
EXTRA_DIST += bench/t-smoke.sh

# What a build adds to a pair in instructions, counted by valgrind: the
# figure that a shared machine's noise does not move (bench-compare, and
# bench/t-instructions.sh).
check_PROGRAMS += bench/cmgpairs
bench_cmgpairs_SOURCES = bench/pairs.c
bench_cmgpairs_CFLAGS = $(AM_CFLAGS) -fno-omit-frame-pointer
bench_cmgpairs_LDFLAGS = -no-install
bench_cmgpairs_LDADD = tests/sim/libcuda.la
TESTS += bench/t-instructions.sh
EXTRA_DIST += bench/t-instructions.sh
