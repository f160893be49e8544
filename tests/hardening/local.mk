# Hardening: fault injection under make check; sanitizer builds,
# valgrind and fuzzing as named targets that CI calls.
#
#   make check            tests/hardening/t-*.sh and the core stress test
#   make check-sanitize   unit tests, stress, launcher and report tool under
#                         ASan+UBSan; the core under TSan (sanitize.sh)
#   make check-valgrind   integration, hardening and tool tests, every
#                         process under memcheck; unit tests and stress too
#                         (valgrind.sh)
#   make fuzz-smoke       each libFuzzer target for FUZZ_TIME s (fuzz.sh)

HARD_CFLAGS = -std=gnu11 -Wall -Wextra -Wno-unused-parameter \
	-fno-strict-aliasing
HARD_LINK = -no-install -rdynamic

# Threads racing fork() and exit() on the simulated driver.
check_PROGRAMS += tests/hardening/app_hard
tests_hardening_app_hard_SOURCES = tests/hardening/app_hard.c
tests_hardening_app_hard_CFLAGS = $(HARD_CFLAGS)
tests_hardening_app_hard_LDFLAGS = $(HARD_LINK)
tests_hardening_app_hard_LDADD = tests/sim/libcuda.la -ldl -lpthread

# The driver dlopen()ed, dlclose()d and dlopen()ed again.
check_PROGRAMS += tests/hardening/app_reload
tests_hardening_app_reload_SOURCES = tests/hardening/app_reload.c
tests_hardening_app_reload_CFLAGS = $(HARD_CFLAGS)
tests_hardening_app_reload_LDFLAGS = $(HARD_LINK)
tests_hardening_app_reload_LDADD = -ldl

# A library allocating from its constructor, and a program linking it.
check_LTLIBRARIES += tests/hardening/libhardctor.la
tests_hardening_libhardctor_la_SOURCES = tests/hardening/libhardctor.c
tests_hardening_libhardctor_la_CFLAGS = $(HARD_CFLAGS)
tests_hardening_libhardctor_la_LDFLAGS = -version-info 0:0:0 -rpath /nowhere \
	-Wl,-Ltests/sim/.libs -Wl,-lcuda
# The simulated driver by name, not as tests/sim/libcuda.la: libtool would
# write that archive's absolute path into this one's dependency_libs, and a
# build directory with a space in its path would then fail to link.
EXTRA_tests_hardening_libhardctor_la_DEPENDENCIES = tests/sim/libcuda.la

check_PROGRAMS += tests/hardening/app_ctor
tests_hardening_app_ctor_SOURCES = tests/hardening/app_ctor.c
tests_hardening_app_ctor_CFLAGS = $(HARD_CFLAGS)
tests_hardening_app_ctor_LDFLAGS = $(HARD_LINK) -Wl,-rpath-link,tests/sim/.libs
tests_hardening_app_ctor_LDADD = tests/hardening/libhardctor.la -ldl

# The core under many threads (check-sanitize builds it again with TSan).
check_PROGRAMS += tests/hardening/stress
tests_hardening_stress_SOURCES = tests/hardening/stress.c
tests_hardening_stress_CFLAGS = $(AM_CFLAGS) $(CJSON_CFLAGS)
tests_hardening_stress_LDADD = $(UNIT_LDADD) $(CJSON_LIBS)

HARDENING_LONG = tests/hardening/t-hostile.sh
HARDENING_SHORT = \
	tests/hardening/t-faults.sh \
	tests/hardening/t-fork-threads.sh \
	tests/hardening/t-fork-start.sh \
	tests/hardening/t-exit-race.sh \
	tests/hardening/t-ctor.sh \
	tests/hardening/t-clone.sh \
	tests/hardening/t-shm.sh \
	tests/hardening/t-lockholder.sh \
	tests/hardening/t-midalloc.sh \
	tests/hardening/t-reload.sh \
	tests/hardening/t-reportdir.sh \
	tests/hardening/t-sanitized-program.sh
HARDENING_TESTS = $(HARDENING_LONG) $(HARDENING_SHORT)
TESTS += $(HARDENING_SHORT) tests/hardening/stress
EXTRA_DIST += $(HARDENING_TESTS) tests/hardening/defs.sh \
	tests/hardening/README.md \
	tests/hardening/sanitize.sh tests/hardening/valgrind.sh \
	tests/valgrind.supp tests/fuzz/fuzz.sh tests/fuzz/fuzz_config.c \
	tests/fuzz/fuzz_size.c tests/fuzz/fuzz_report.c tests/fuzz/corpus

# What the sanitizer and fuzzer builds need to know of this one; absolute
# paths, since they build in directories of their own.
HARD_ENV = top_builddir='$(abs_top_builddir)' top_srcdir='$(abs_top_srcdir)' \
	PYTHON3='$(PYTHON3)' \
	$(TEST_DEBUGINFO) \
	CC='$(CC)' MAKE='$(MAKE)' AWK='$(AWK)' SHELL='$(SHELL)' \
	TOOL_SRC='$(TOOL_C) $(abs_top_builddir)/src/reader/profile.pb-c.c'
HARD_CPPFLAGS = $(DEFS) -I$(abs_top_builddir) -I$(abs_top_builddir)/src \
	-I$(abs_top_srcdir)/include \
	-I$(abs_top_srcdir)/src $(CUDA_CPPFLAGS) $(CPPFLAGS)

# The sanitized core archive holds the operator's views too (src/ops): the
# launcher and the unit tests of those link it.
check-sanitize: all $(check_LTLIBRARIES) $(check_LIBRARIES) $(check_PROGRAMS)
	@$(HARD_ENV) SAN_CPPFLAGS='$(HARD_CPPFLAGS)' \
	  SAN_DEPS_CFLAGS='$(UNWIND_CFLAGS) $(CJSON_CFLAGS) $(PROTOBUF_C_CFLAGS) $(ZLIB_CFLAGS) $(DW_CFLAGS)' \
	  SAN_DEPS_LIBS='$(UNWIND_LIBS) $(CJSON_LIBS) $(PROTOBUF_C_LIBS) $(ZLIB_LIBS) $(DW_LIBS) $(IBERTY_LIBS) -ldl -lpthread -lm' \
	  CORE_SRC='$(libcmg_core_la_SOURCES) $(libcmg_runtime_la_SOURCES) $(libcmg_ops_la_SOURCES)' \
	  LIB_SRC='$(libcumemguard_la_SOURCES)' UNIT_TESTS='$(UNIT_TESTS)' \
	  LAUNCHER_SRC='$(cumemguard_SOURCES)' \
	  TOOL_TESTS='$(TOOL_TESTS)' INTEGRATION_TESTS='$(INTEGRATION_TESTS)' \
	  HARDENING_TESTS='$(HARDENING_TESTS)' \
	  $(SHELL) $(srcdir)/tests/hardening/sanitize.sh

check-valgrind: all $(check_LTLIBRARIES) $(check_LIBRARIES) $(check_PROGRAMS)
	@$(HARD_ENV) \
	  TESTS_TO_RUN='$(INTEGRATION_TESTS) $(HARDENING_TESTS) $(TOOL_TESTS)' \
	  PROGRAM_TESTS='$(UNIT_TESTS) tests/hardening/stress' \
	  VALGRIND_SUPP='$(abs_top_srcdir)/tests/valgrind.supp' \
	  $(SHELL) $(srcdir)/tests/hardening/valgrind.sh

fuzz-smoke:
	@$(HARD_ENV) FUZZ_CPPFLAGS='$(HARD_CPPFLAGS)' \
	  FUZZ_DEPS_CFLAGS='$(UNWIND_CFLAGS) $(CJSON_CFLAGS) $(PROTOBUF_C_CFLAGS) $(ZLIB_CFLAGS) $(DW_CFLAGS)' \
	  FUZZ_DEPS_LIBS='$(CJSON_LIBS) $(PROTOBUF_C_LIBS) $(ZLIB_LIBS) $(DW_LIBS) $(IBERTY_LIBS) -lm' \
	  $(SHELL) $(srcdir)/tests/fuzz/fuzz.sh

clean-local: clean-hardening
clean-hardening:
	rm -rf _sanitize _valgrind _fuzz
.PHONY: check-sanitize check-valgrind fuzz-smoke clean-hardening
