# The library's runtime, one folder a family: ledger/ (live allocations and
# what the report tells beyond them), limits/ (the process's limits and the
# cap decision), group/ (one cap shared by a group of processes), stacks/
# (capture, unwinding, symbols), python/ (Python frames), report/ (the JSON
# report) and linker/ (what the dynamic linker gives without us).  Linked
# by the preload library and the unit tests of these modules only: the
# other programs need none of it, nor libunwind.  Never calls CUDA, never
# calls into src/preload/.
noinst_LTLIBRARIES += libcmg_runtime.la
libcmg_runtime_la_SOURCES = \
	src/runtime/table_memory.h \
	src/runtime/ledger/driver_held.c src/runtime/ledger/driver_held.h \
	src/runtime/ledger/freed_largest.c src/runtime/ledger/freed_largest.h \
	src/runtime/ledger/history.c src/runtime/ledger/history.h \
	src/runtime/ledger/ledger.c src/runtime/ledger/ledger.h \
	src/runtime/ledger/thread_names.c src/runtime/ledger/thread_names.h \
	src/runtime/ledger/thread_tally.c src/runtime/ledger/thread_tally.h \
	src/runtime/ledger/timeline.c src/runtime/ledger/timeline.h \
	src/runtime/limits/cap.c src/runtime/limits/cap.h \
	src/runtime/limits/policy.c src/runtime/limits/policy.h \
	src/runtime/group/group.c src/runtime/group/group.h \
	src/runtime/group/group_gpus.c src/runtime/group/group_gpus.h \
	src/runtime/group/group_join.c src/runtime/group/group_join.h \
	src/runtime/group/group_member.c src/runtime/group/group_member.h \
	src/runtime/group/group_reclaim.c src/runtime/group/group_reclaim.h \
	src/runtime/group/group_segment.c src/runtime/group/group_segment.h \
	src/runtime/stacks/stackmemo.c src/runtime/stacks/stackmemo.h \
	src/runtime/stacks/stacks.c src/runtime/stacks/stacks.h \
	src/runtime/stacks/symbols.c src/runtime/stacks/symbols.h \
	src/runtime/stacks/unwind.c src/runtime/stacks/unwind.h \
	src/runtime/stacks/unwind_pipe.c src/runtime/stacks/unwind_pipe.h \
	src/runtime/stacks/stack_words.h \
	src/runtime/python/pyframes.c src/runtime/python/pyframes.h \
	src/runtime/python/pylayout.c src/runtime/python/pylayout.h \
	src/runtime/python/pyline.c src/runtime/python/pyline.h \
	src/runtime/python/pyread.c src/runtime/python/pyread.h \
	src/runtime/report/report.c src/runtime/report/report.h \
	src/runtime/report/report_devices.c src/runtime/report/report_devices.h \
	src/runtime/report/report_file.c src/runtime/report/report_file.h \
	src/runtime/report/report_options.c src/runtime/report/report_options.h \
	src/runtime/report/report_refs.c src/runtime/report/report_refs.h \
	src/runtime/report/report_text.c src/runtime/report/report_text.h \
	src/runtime/report/report_timeline.c src/runtime/report/report_timeline.h \
	src/runtime/linker/dynlink.c src/runtime/linker/dynlink.h
# Frame pointers, so that capture's walk steps through our own frames the
# cheap way (runtime/stacks/unwind.c).
libcmg_runtime_la_CFLAGS = $(AM_CFLAGS) $(UNWIND_CFLAGS) $(LTO_CFLAGS) \
	-fno-omit-frame-pointer
libcmg_runtime_la_LIBADD = libcmg_core.la $(UNWIND_LIBS) -ldl -lpthread
