# The core: what every program shares.  No CUDA, no preload tricks, and no
# call to anything outside src/core/; linked into the preload library, the
# launcher, the report reader and every unit test.
noinst_LTLIBRARIES += libcmg_core.la
libcmg_core_la_SOURCES = \
	src/core/base.h \
	src/core/conf.c src/core/conf.h \
	src/core/conf_report.c src/core/conf_report.h \
	src/core/elfsym.c src/core/elfsym.h \
	src/core/freed.c src/core/freed.h \
	src/core/held.c src/core/held.h \
	src/core/group.c src/core/group.h \
	src/core/group_join.c src/core/group_join.h \
	src/core/group_reclaim.c src/core/group_reclaim.h \
	src/core/group_self.c src/core/group_self.h \
	src/core/history.c src/core/history.h \
	src/core/jsonw.c src/core/jsonw.h \
	src/core/ledger.c src/core/ledger.h \
	src/core/log.c src/core/log.h \
	src/core/pages.h \
	src/core/policy.c src/core/policy.h \
	src/core/pools.c src/core/pools.h \
	src/core/pyframes.c src/core/pyframes.h \
	src/core/pyline.c src/core/pyline.h \
	src/core/report.c src/core/report.h \
	src/core/report_devices.c src/core/report_devices.h \
	src/core/report_file.c src/core/report_file.h \
	src/core/report_options.c src/core/report_options.h \
	src/core/report_refs.c src/core/report_refs.h \
	src/core/report_timeline.c src/core/report_timeline.h \
	src/core/segment.c src/core/segment.h \
	src/core/signals.c src/core/signals.h \
	src/core/size.c src/core/size.h \
	src/core/stacks.c src/core/stacks.h src/core/stackword.h \
	src/core/symbols.c src/core/symbols.h \
	src/core/tally.c src/core/tally.h \
	src/core/text.c src/core/text.h \
	src/core/threads.c src/core/threads.h \
	src/core/timeline.c src/core/timeline.h \
	src/core/unwind.c src/core/unwind.h
# Frame pointers, so that capture's walk steps through our own frames the
# cheap way (core/unwind.c).
libcmg_core_la_CFLAGS = $(AM_CFLAGS) $(UNWIND_CFLAGS) $(CJSON_CFLAGS) \
	$(LTO_CFLAGS) -fno-omit-frame-pointer
libcmg_core_la_LIBADD = $(UNWIND_LIBS) $(CJSON_LIBS) -ldl -lpthread
