# The library's runtime: the ledger, the limits and the group's cap,
# stacks (unwinding, Python frames, symbols), the history and timeline, and
# the report writer.  Linked by the preload library and the unit tests of
# these modules only: the other programs need none of it, nor libunwind.
# Never calls CUDA, never calls into src/preload/.
noinst_LTLIBRARIES += libcmg_runtime.la
libcmg_runtime_la_SOURCES = \
	src/runtime/cap.c src/runtime/cap.h \
	src/runtime/elfsym.c src/runtime/elfsym.h \
	src/runtime/freed.c src/runtime/freed.h \
	src/runtime/group.c src/runtime/group.h \
	src/runtime/group_join.c src/runtime/group_join.h \
	src/runtime/group_names.c src/runtime/group_names.h \
	src/runtime/group_reclaim.c src/runtime/group_reclaim.h \
	src/runtime/group_self.c src/runtime/group_self.h \
	src/runtime/held.c src/runtime/held.h \
	src/runtime/history.c src/runtime/history.h \
	src/runtime/ledger.c src/runtime/ledger.h \
	src/runtime/pages.h \
	src/runtime/policy.c src/runtime/policy.h \
	src/runtime/pyframes.c src/runtime/pyframes.h \
	src/runtime/pylayout.c src/runtime/pylayout.h \
	src/runtime/pyline.c src/runtime/pyline.h \
	src/runtime/pyread.c src/runtime/pyread.h \
	src/runtime/report.c src/runtime/report.h \
	src/runtime/report_devices.c src/runtime/report_devices.h \
	src/runtime/report_file.c src/runtime/report_file.h \
	src/runtime/report_options.c src/runtime/report_options.h \
	src/runtime/report_refs.c src/runtime/report_refs.h \
	src/runtime/report_timeline.c src/runtime/report_timeline.h \
	src/runtime/stackmemo.c src/runtime/stackmemo.h \
	src/runtime/stacks.c src/runtime/stacks.h src/runtime/stackword.h \
	src/runtime/symbols.c src/runtime/symbols.h \
	src/runtime/tally.c src/runtime/tally.h \
	src/runtime/text.c src/runtime/text.h \
	src/runtime/threads.c src/runtime/threads.h \
	src/runtime/timeline.c src/runtime/timeline.h \
	src/runtime/unwind.c src/runtime/unwind.h
# Frame pointers, so that capture's walk steps through our own frames the
# cheap way (runtime/unwind.c).
libcmg_runtime_la_CFLAGS = $(AM_CFLAGS) $(UNWIND_CFLAGS) $(LTO_CFLAGS) \
	-fno-omit-frame-pointer
libcmg_runtime_la_LIBADD = libcmg_core.la $(UNWIND_LIBS) -ldl -lpthread
