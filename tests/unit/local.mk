# Unit tests: call cmg__ functions directly, no preload; each links the core
# and the runtime, but the reader's (at the end), which link its modules.
UNIT_TESTS = \
	tests/unit/test_args \
	tests/unit/test_cap \
	tests/unit/test_cdi_spec \
	tests/unit/test_code \
	tests/unit/test_conf \
	tests/unit/test_conf_gpu \
	tests/unit/test_conf_merge \
	tests/unit/test_conf_report \
	tests/unit/test_conf_table \
	tests/unit/test_debuginfo \
	tests/unit/test_delta \
	tests/unit/test_diff_json \
	tests/unit/test_diff_text \
	tests/unit/test_driver_held \
	tests/unit/test_dynlink \
	tests/unit/test_fields \
	tests/unit/test_files \
	tests/unit/test_frame_class \
	tests/unit/test_frame_name \
	tests/unit/test_freed_largest \
	tests/unit/test_group \
	tests/unit/test_group_gpus \
	tests/unit/test_group_join \
	tests/unit/test_group_member \
	tests/unit/test_group_reclaim \
	tests/unit/test_group_segment \
	tests/unit/test_group_status \
	tests/unit/test_group_status_json \
	tests/unit/test_group_status_text \
	tests/unit/test_group_text \
	tests/unit/test_history \
	tests/unit/test_index \
	tests/unit/test_intern \
	tests/unit/test_json_once \
	tests/unit/test_jsonfile \
	tests/unit/test_jsonw \
	tests/unit/test_leak_class \
	tests/unit/test_ledger \
	tests/unit/test_log \
	tests/unit/test_metrics \
	tests/unit/test_names \
	tests/unit/test_one_line \
	tests/unit/test_output \
	tests/unit/test_policy \
	tests/unit/test_pool_blocks \
	tests/unit/test_pools \
	tests/unit/test_preload_env \
	tests/unit/test_pyframes \
	tests/unit/test_pylayout \
	tests/unit/test_pyline \
	tests/unit/test_pyread \
	tests/unit/test_read \
	tests/unit/test_read_devices \
	tests/unit/test_read_series \
	tests/unit/test_read_stacks \
	tests/unit/test_report \
	tests/unit/test_report_devices \
	tests/unit/test_report_file \
	tests/unit/test_report_options \
	tests/unit/test_report_refs \
	tests/unit/test_report_text \
	tests/unit/test_report_timeline \
	tests/unit/test_run \
	tests/unit/test_seg_find \
	tests/unit/test_segment \
	tests/unit/test_signals \
	tests/unit/test_size \
	tests/unit/test_stackmemo \
	tests/unit/test_stacks \
	tests/unit/test_summary_devices \
	tests/unit/test_summary_held \
	tests/unit/test_summary_json \
	tests/unit/test_summary_text \
	tests/unit/test_supp \
	tests/unit/test_symbolize \
	tests/unit/test_symbols \
	tests/unit/test_thread_names \
	tests/unit/test_thread_tally \
	tests/unit/test_timeline \
	tests/unit/test_unwind \
	tests/unit/test_unwind_pipe \
	tests/unit/test_user_first \
	tests/unit/test_utf8 \
	tests/unit/test_utf8_text \
	tests/unit/test_view \
	tests/unit/test_xml
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
tests_unit_test_group_member_LDADD = $(UNIT_LDADD)
tests_unit_test_group_segment_LDADD = $(UNIT_LDADD)
tests_unit_test_freed_largest_LDADD = $(UNIT_LDADD)
tests_unit_test_unwind_pipe_LDADD = $(UNIT_LDADD)
tests_unit_test_pyread_LDADD = $(UNIT_LDADD) -ldl
tests_unit_test_pylayout_LDADD = $(UNIT_LDADD) -ldl
tests_unit_test_report_refs_CFLAGS = $(AM_CFLAGS) $(CJSON_CFLAGS)
tests_unit_test_report_refs_LDADD = $(UNIT_LDADD) $(CJSON_LIBS) -lm
tests_unit_test_report_devices_CFLAGS = $(AM_CFLAGS) $(CJSON_CFLAGS)
tests_unit_test_report_devices_LDADD = $(UNIT_LDADD) $(CJSON_LIBS) -lm
tests_unit_test_report_options_CFLAGS = $(AM_CFLAGS) $(CJSON_CFLAGS)
tests_unit_test_report_options_LDADD = $(UNIT_LDADD) $(CJSON_LIBS) -lm
tests_unit_test_report_timeline_CFLAGS = $(AM_CFLAGS) $(CJSON_CFLAGS)
tests_unit_test_report_timeline_LDADD = $(UNIT_LDADD) $(CJSON_LIBS) -lm
tests_unit_test_cdi_spec_LDADD = libcmg_ops.la $(UNIT_LDADD)
tests_unit_test_files_LDADD = libcmg_ops.la $(UNIT_LDADD)
tests_unit_test_group_status_json_LDADD = libcmg_ops.la $(UNIT_LDADD)
tests_unit_test_group_status_text_LDADD = libcmg_ops.la $(UNIT_LDADD)
tests_unit_test_metrics_LDADD = libcmg_ops.la $(UNIT_LDADD)
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
EXTRA_DIST += tests/unit/group_harness.h tests/unit/conf_parses.h \
	tests/unit/py_harness.h tests/unit/report_member.h \
	tests/unit/reader_harness.h tests/unit/report_harness.h \
	tests/unit/report_builder.h tests/unit/symprog_files.h \
	tests/unit/seg_copy.h
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

# The reader's modules (test_intern, test_leak_class, test_supp,
# test_user_first and the rest of the reader's): the reader is a program,
# not a library, so its modules below the commands are built once more for
# the tests, as an archive from which each test takes what it calls.
check_LTLIBRARIES += tests/unit/libcmg_reader.la
tests_unit_libcmg_reader_la_SOURCES = $(TOOL_MODULES_C)
tests_unit_libcmg_reader_la_CPPFLAGS = $(cumemguard_report_CPPFLAGS)
tests_unit_libcmg_reader_la_CFLAGS = $(cumemguard_report_CFLAGS)
READER_UNIT_LDADD = tests/unit/libcmg_reader.la $(cumemguard_report_LDADD)
READER_UNIT_CFLAGS = $(AM_CFLAGS) $(CJSON_CFLAGS) $(DW_CFLAGS)
READER_UNIT_CPPFLAGS = $(cumemguard_report_CPPFLAGS)
tests_unit_test_intern_LDADD = $(READER_UNIT_LDADD)
tests_unit_test_intern_CFLAGS = $(READER_UNIT_CFLAGS)
tests_unit_test_leak_class_LDADD = $(READER_UNIT_LDADD)
tests_unit_test_leak_class_CFLAGS = $(READER_UNIT_CFLAGS)
tests_unit_test_supp_LDADD = $(READER_UNIT_LDADD)
tests_unit_test_supp_CFLAGS = $(READER_UNIT_CFLAGS)
tests_unit_test_user_first_LDADD = $(READER_UNIT_LDADD)
tests_unit_test_user_first_CFLAGS = $(READER_UNIT_CFLAGS)
tests_unit_test_intern_CPPFLAGS = $(READER_UNIT_CPPFLAGS)
tests_unit_test_leak_class_CPPFLAGS = $(READER_UNIT_CPPFLAGS)
tests_unit_test_supp_CPPFLAGS = $(READER_UNIT_CPPFLAGS)
tests_unit_test_user_first_CPPFLAGS = $(READER_UNIT_CPPFLAGS)
tests_unit_test_fields_LDADD = $(READER_UNIT_LDADD)
tests_unit_test_fields_CFLAGS = $(READER_UNIT_CFLAGS)
tests_unit_test_fields_CPPFLAGS = $(READER_UNIT_CPPFLAGS)
tests_unit_test_jsonfile_LDADD = $(READER_UNIT_LDADD)
tests_unit_test_jsonfile_CFLAGS = $(READER_UNIT_CFLAGS)
tests_unit_test_jsonfile_CPPFLAGS = $(READER_UNIT_CPPFLAGS)
tests_unit_test_read_LDADD = $(READER_UNIT_LDADD)
tests_unit_test_read_CFLAGS = $(READER_UNIT_CFLAGS)
tests_unit_test_read_CPPFLAGS = $(READER_UNIT_CPPFLAGS)
tests_unit_test_read_devices_LDADD = $(READER_UNIT_LDADD)
tests_unit_test_read_devices_CFLAGS = $(READER_UNIT_CFLAGS)
tests_unit_test_read_devices_CPPFLAGS = $(READER_UNIT_CPPFLAGS)
tests_unit_test_read_series_LDADD = $(READER_UNIT_LDADD)
tests_unit_test_read_series_CFLAGS = $(READER_UNIT_CFLAGS)
tests_unit_test_read_series_CPPFLAGS = $(READER_UNIT_CPPFLAGS)
tests_unit_test_read_stacks_LDADD = $(READER_UNIT_LDADD)
tests_unit_test_read_stacks_CFLAGS = $(READER_UNIT_CFLAGS)
tests_unit_test_read_stacks_CPPFLAGS = $(READER_UNIT_CPPFLAGS)
tests_unit_test_utf8_text_LDADD = $(READER_UNIT_LDADD)
tests_unit_test_utf8_text_CFLAGS = $(READER_UNIT_CFLAGS)
tests_unit_test_utf8_text_CPPFLAGS = $(READER_UNIT_CPPFLAGS)
tests_unit_test_run_LDADD = $(READER_UNIT_LDADD)
tests_unit_test_run_CFLAGS = $(READER_UNIT_CFLAGS)
tests_unit_test_run_CPPFLAGS = $(READER_UNIT_CPPFLAGS)
tests_unit_test_code_LDADD = $(READER_UNIT_LDADD)
tests_unit_test_code_CFLAGS = $(READER_UNIT_CFLAGS)
tests_unit_test_code_CPPFLAGS = $(READER_UNIT_CPPFLAGS)
tests_unit_test_debuginfo_LDADD = $(READER_UNIT_LDADD)
tests_unit_test_debuginfo_CFLAGS = $(READER_UNIT_CFLAGS)
tests_unit_test_debuginfo_CPPFLAGS = $(READER_UNIT_CPPFLAGS)
tests_unit_test_delta_LDADD = $(READER_UNIT_LDADD)
tests_unit_test_delta_CFLAGS = $(READER_UNIT_CFLAGS)
tests_unit_test_delta_CPPFLAGS = $(READER_UNIT_CPPFLAGS)
tests_unit_test_frame_class_LDADD = $(READER_UNIT_LDADD)
tests_unit_test_frame_class_CFLAGS = $(READER_UNIT_CFLAGS)
tests_unit_test_frame_class_CPPFLAGS = $(READER_UNIT_CPPFLAGS)
tests_unit_test_index_LDADD = $(READER_UNIT_LDADD)
tests_unit_test_index_CFLAGS = $(READER_UNIT_CFLAGS)
tests_unit_test_index_CPPFLAGS = $(READER_UNIT_CPPFLAGS)
tests_unit_test_names_LDADD = $(READER_UNIT_LDADD)
tests_unit_test_names_CFLAGS = $(READER_UNIT_CFLAGS)
tests_unit_test_names_CPPFLAGS = $(READER_UNIT_CPPFLAGS)
tests_unit_test_pool_blocks_LDADD = $(READER_UNIT_LDADD)
tests_unit_test_pool_blocks_CFLAGS = $(READER_UNIT_CFLAGS)
tests_unit_test_pool_blocks_CPPFLAGS = $(READER_UNIT_CPPFLAGS)
tests_unit_test_symbolize_LDADD = $(READER_UNIT_LDADD)
tests_unit_test_symbolize_CFLAGS = $(READER_UNIT_CFLAGS)
tests_unit_test_symbolize_CPPFLAGS = $(READER_UNIT_CPPFLAGS)
tests_unit_test_view_LDADD = $(READER_UNIT_LDADD)
tests_unit_test_view_CFLAGS = $(READER_UNIT_CFLAGS)
tests_unit_test_view_CPPFLAGS = $(READER_UNIT_CPPFLAGS)
tests_unit_test_diff_json_LDADD = $(READER_UNIT_LDADD)
tests_unit_test_diff_json_CFLAGS = $(READER_UNIT_CFLAGS)
tests_unit_test_diff_json_CPPFLAGS = $(READER_UNIT_CPPFLAGS)
tests_unit_test_diff_text_LDADD = $(READER_UNIT_LDADD)
tests_unit_test_diff_text_CFLAGS = $(READER_UNIT_CFLAGS)
tests_unit_test_diff_text_CPPFLAGS = $(READER_UNIT_CPPFLAGS)
tests_unit_test_frame_name_LDADD = $(READER_UNIT_LDADD)
tests_unit_test_frame_name_CFLAGS = $(READER_UNIT_CFLAGS)
tests_unit_test_frame_name_CPPFLAGS = $(READER_UNIT_CPPFLAGS)
tests_unit_test_group_text_LDADD = $(READER_UNIT_LDADD)
tests_unit_test_group_text_CFLAGS = $(READER_UNIT_CFLAGS)
tests_unit_test_group_text_CPPFLAGS = $(READER_UNIT_CPPFLAGS)
tests_unit_test_json_once_LDADD = $(READER_UNIT_LDADD)
tests_unit_test_json_once_CFLAGS = $(READER_UNIT_CFLAGS)
tests_unit_test_json_once_CPPFLAGS = $(READER_UNIT_CPPFLAGS)
tests_unit_test_one_line_LDADD = $(READER_UNIT_LDADD)
tests_unit_test_one_line_CFLAGS = $(READER_UNIT_CFLAGS)
tests_unit_test_one_line_CPPFLAGS = $(READER_UNIT_CPPFLAGS)
tests_unit_test_output_LDADD = $(READER_UNIT_LDADD)
tests_unit_test_output_CFLAGS = $(READER_UNIT_CFLAGS)
tests_unit_test_output_CPPFLAGS = $(READER_UNIT_CPPFLAGS)
tests_unit_test_summary_devices_LDADD = $(READER_UNIT_LDADD)
tests_unit_test_summary_devices_CFLAGS = $(READER_UNIT_CFLAGS)
tests_unit_test_summary_devices_CPPFLAGS = $(READER_UNIT_CPPFLAGS)
tests_unit_test_summary_held_LDADD = $(READER_UNIT_LDADD)
tests_unit_test_summary_held_CFLAGS = $(READER_UNIT_CFLAGS)
tests_unit_test_summary_held_CPPFLAGS = $(READER_UNIT_CPPFLAGS)
tests_unit_test_summary_json_LDADD = $(READER_UNIT_LDADD)
tests_unit_test_summary_json_CFLAGS = $(READER_UNIT_CFLAGS)
tests_unit_test_summary_json_CPPFLAGS = $(READER_UNIT_CPPFLAGS)
tests_unit_test_summary_text_LDADD = $(READER_UNIT_LDADD)
tests_unit_test_summary_text_CFLAGS = $(READER_UNIT_CFLAGS)
tests_unit_test_summary_text_CPPFLAGS = $(READER_UNIT_CPPFLAGS)
tests_unit_test_xml_LDADD = $(READER_UNIT_LDADD)
tests_unit_test_xml_CFLAGS = $(READER_UNIT_CFLAGS)
tests_unit_test_xml_CPPFLAGS = $(READER_UNIT_CPPFLAGS)
