# Unit tests: call cmg__ functions directly, no preload; each links the core
# and the runtime, but the reader's (at the end), which link its modules.
UNIT_TESTS = \
	tests/unit/test_args \
	tests/unit/test_cap \
	tests/unit/test_conf \
	tests/unit/test_conf_gpu \
	tests/unit/test_conf_merge \
	tests/unit/test_conf_report \
	tests/unit/test_conf_table \
	tests/unit/test_driver_held \
	tests/unit/test_dynlink \
	tests/unit/test_group \
	tests/unit/test_group_gpus \
	tests/unit/test_group_join \
	tests/unit/test_group_reclaim \
	tests/unit/test_group_status \
	tests/unit/test_history \
	tests/unit/test_intern \
	tests/unit/test_jsonw \
	tests/unit/test_leak_class \
	tests/unit/test_ledger \
	tests/unit/test_log \
	tests/unit/test_policy \
	tests/unit/test_pools \
	tests/unit/test_preload_env \
	tests/unit/test_pyframes \
	tests/unit/test_pyline \
	tests/unit/test_report \
	tests/unit/test_report_file \
	tests/unit/test_report_text \
	tests/unit/test_seg_find \
	tests/unit/test_segment \
	tests/unit/test_signals \
	tests/unit/test_size \
	tests/unit/test_stackmemo \
	tests/unit/test_stacks \
	tests/unit/test_supp \
	tests/unit/test_symbols \
	tests/unit/test_thread_names \
	tests/unit/test_thread_tally \
	tests/unit/test_timeline \
	tests/unit/test_unwind \
	tests/unit/test_user_first \
	tests/unit/test_utf8
check_PROGRAMS += $(UNIT_TESTS)
TESTS += $(UNIT_TESTS)
tests_unit_test_args_LDADD = $(UNIT_LDADD)
tests_unit_test_cap_LDADD = $(UNIT_LDADD) -lpthread
tests_unit_test_conf_LDADD = $(UNIT_LDADD)
tests_unit_test_conf_gpu_LDADD = $(UNIT_LDADD)
tests_unit_test_conf_merge_LDADD = $(UNIT_LDADD)
tests_unit_test_conf_report_LDADD = $(UNIT_LDADD)
tests_unit_test_conf_table_LDADD = $(UNIT_LDADD)
tests_unit_test_group_LDADD = libcmg_ops.la $(UNIT_LDADD)
tests_unit_test_group_join_LDADD = libcmg_ops.la $(UNIT_LDADD)
tests_unit_test_group_reclaim_LDADD = libcmg_ops.la $(UNIT_LDADD)
tests_unit_test_group_status_LDADD = libcmg_ops.la $(UNIT_LDADD)
tests_unit_test_jsonw_CFLAGS = $(AM_CFLAGS) $(CJSON_CFLAGS)
tests_unit_test_jsonw_LDADD = $(UNIT_LDADD) $(CJSON_LIBS) -lm
tests_unit_test_ledger_LDADD = $(UNIT_LDADD)
tests_unit_test_log_LDADD = $(UNIT_LDADD)
tests_unit_test_policy_LDADD = $(UNIT_LDADD)
tests_unit_test_preload_env_LDADD = libcmg_ops.la $(UNIT_LDADD)
tests_unit_test_pyline_LDADD = $(UNIT_LDADD)
tests_unit_test_report_text_LDADD = $(UNIT_LDADD)
tests_unit_test_seg_find_LDADD = libcmg_ops.la $(UNIT_LDADD)
tests_unit_test_segment_LDADD = libcmg_ops.la $(UNIT_LDADD)
tests_unit_test_signals_LDADD = $(UNIT_LDADD)
tests_unit_test_size_LDADD = $(UNIT_LDADD)
tests_unit_test_stacks_LDADD = $(UNIT_LDADD)
tests_unit_test_thread_names_LDADD = $(UNIT_LDADD)
tests_unit_test_thread_tally_LDADD = $(UNIT_LDADD)
tests_unit_test_timeline_LDADD = $(UNIT_LDADD)
tests_unit_test_stacks_LDFLAGS = -rdynamic $(AM_LDFLAGS)
tests_unit_test_driver_held_LDADD = $(UNIT_LDADD)
tests_unit_test_dynlink_LDADD = $(UNIT_LDADD)
tests_unit_test_group_gpus_LDADD = $(UNIT_LDADD)
tests_unit_test_history_LDADD = $(UNIT_LDADD)
tests_unit_test_pools_LDADD = $(UNIT_LDADD)
tests_unit_test_pyframes_LDADD = $(UNIT_LDADD) -ldl
tests_unit_test_pyframes_LDFLAGS = -rdynamic $(AM_LDFLAGS)
tests_unit_test_report_CFLAGS = $(AM_CFLAGS) $(CJSON_CFLAGS)
tests_unit_test_report_LDADD = $(UNIT_LDADD) $(CJSON_LIBS) -lm
tests_unit_test_report_file_LDADD = $(UNIT_LDADD)
tests_unit_test_stackmemo_LDADD = $(UNIT_LDADD)
tests_unit_test_symbols_LDADD = $(UNIT_LDADD)
tests_unit_test_symbols_LDFLAGS = -rdynamic $(AM_LDFLAGS)
tests_unit_test_utf8_LDADD = $(UNIT_LDADD)
# What the tests of the group modules share.
EXTRA_DIST += tests/unit/group_harness.h tests/unit/conf_parses.h
# The LD_PRELOAD cases: test_preload_env runs them, and so do the tests of
# the launcher, the CDI writer and the Slurm plugin.
EXTRA_DIST += tests/preload-cases.txt

# The frame-pointer walk against libunwind, from four builds of one source:
# -O2 with frame pointers (the one check-sanitize and check-valgrind run
# too), -O2 without, -O0 with and without.
UNWIND_VARIANTS = \
	tests/unit/test_unwind_nofp \
	tests/unit/test_unwind_O0 \
	tests/unit/test_unwind_O0_nofp
check_PROGRAMS += $(UNWIND_VARIANTS)
TESTS += $(UNWIND_VARIANTS)
tests_unit_test_unwind_LDADD = $(UNIT_LDADD)
tests_unit_test_unwind_CPPFLAGS = $(AM_CPPFLAGS) -DUNWIND_EXPECT_SKIP
tests_unit_test_unwind_CFLAGS = $(AM_CFLAGS) -fno-omit-frame-pointer
tests_unit_test_unwind_nofp_SOURCES = tests/unit/test_unwind.c
tests_unit_test_unwind_nofp_CPPFLAGS = $(AM_CPPFLAGS) -DUNWIND_NOFP
tests_unit_test_unwind_nofp_CFLAGS = $(AM_CFLAGS) -fomit-frame-pointer
tests_unit_test_unwind_nofp_LDADD = $(UNIT_LDADD)
tests_unit_test_unwind_O0_SOURCES = tests/unit/test_unwind.c
tests_unit_test_unwind_O0_CPPFLAGS = $(AM_CPPFLAGS) -DUNWIND_O0
tests_unit_test_unwind_O0_CFLAGS = $(AM_CFLAGS) -fno-omit-frame-pointer
tests_unit_test_unwind_O0_LDADD = $(UNIT_LDADD)
tests_unit_test_unwind_O0_nofp_SOURCES = tests/unit/test_unwind.c
tests_unit_test_unwind_O0_nofp_CPPFLAGS = $(AM_CPPFLAGS) -DUNWIND_O0 \
	-DUNWIND_NOFP
tests_unit_test_unwind_O0_nofp_CFLAGS = $(AM_CFLAGS) -fomit-frame-pointer
tests_unit_test_unwind_O0_nofp_LDADD = $(UNIT_LDADD)

# The reader's rules (test_intern, test_leak_class, test_supp,
# test_user_first): each test is linked with the reader's modules it calls,
# which src/reader/local.mk builds into cumemguard-report only.
tests_unit_test_intern_SOURCES = tests/unit/test_intern.c \
	src/reader/model/intern.c
tests_unit_test_leak_class_SOURCES = tests/unit/test_leak_class.c \
	src/reader/model/leak_class.c
tests_unit_test_supp_SOURCES = tests/unit/test_supp.c \
	src/reader/model/supp.c src/reader/model/leak_class.c \
	src/reader/model/names.c
# cmg__index_stack_range, and the modules index.c calls.
tests_unit_test_user_first_SOURCES = tests/unit/test_user_first.c \
	src/reader/model/user_first.c src/reader/model/index.c \
	src/reader/model/intern.c src/reader/model/code.c \
	src/reader/model/frame_class.c src/reader/model/names.c
